/*
 * The runtime's in-memory tmpfs: the runtime-only trees of a sandbox
 * (/tmp, /proc, /dev, /sys and the template's ephemeral mounts), which
 * never touch the RootFS, its snapshots or its forks (docs/wire.md §6.8).
 *
 * One s0__tmpfs is one namespace rooted at "/" holding one or more mount
 * points; only paths at or below a mount point belong to it. Directories
 * between "/" and a mount point are placeholders the tmpfs does not own.
 *
 * The files operations have exactly the semantics and error codes of the
 * RootFS ones (local/rootfs/files.h), with these additions:
 * - a mount point itself (or a tree holding one) cannot be deleted or
 *   moved, and nothing can be moved onto one: S0_EFORBIDDEN
 *   `permission_denied` (a move between two mounts fails as cross-device
 *   first, see below);
 * - writes under a read-only mount (/proc, /dev, /sys until the runtime
 *   populates them): S0_EFORBIDDEN `permission_denied`;
 * - a move between two different mounts: S0_EINTERNAL `operation_failed`
 *   (cross-device, like rename(2)'s EXDEV);
 * - a write past a mount's size limit: S0_EINTERNAL `operation_failed`
 *   ("no space left on device");
 * - when a path (directly or through a symlink) leads outside every mount,
 *   nothing is changed and ::S0__FILES_REDIRECT is returned with the
 *   canonical path in route->redirect[] (with a NULL route: S0_EINVAL
 *   `invalid_request`). route->foreign is ignored.
 *
 * The state is plain memory and serialisable (s0__tmpfs_serialize) so the
 * checkpoint engine can capture and restore it with a memory image; a
 * filesystem-only resume starts from a new, empty tmpfs.
 *
 * @threadsafety every function is safe to call concurrently on one tmpfs
 * (one mutex per tmpfs, held for one operation).
 */
#ifndef S0_FSVIEW_TMPFS_H
#define S0_FSVIEW_TMPFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"
#include "local/rootfs/files.h"
#include "local/rootfs/path.h"
#include "sandbox0/clock.h"

typedef struct s0__tmpfs s0__tmpfs;

/** s0__tmpfs_add_mount() flag: read-only mount. */
#define S0__TMPFS_RDONLY 1u

/**
 * An empty namespace with no mounts.
 * @param[out] out (transfer full) free with s0__tmpfs_free().
 * @retval S0_OK @retval S0_ENOMEM
 */
int s0__tmpfs_new(s0__tmpfs **out, s0_error **err);

/**
 * The tmpfs of a fresh runtime: /tmp (1777, read-write), /proc (0555),
 * /dev (0755) and /sys (0555) read-only and empty, and each ephemeral
 * mount (0777, read-write, no limit).
 * @param[in] ephemeral (nullable) template ephemeral mount paths (NUL-
 *            terminated, borrowed); normalised like files paths.
 * @retval S0_EINVAL `invalid_request`: a bad mount path or "/".
 */
int s0__tmpfs_new_runtime(const char *const *ephemeral, size_t n_ephemeral, s0__tmpfs **out,
                          s0_error **err);

/**
 * s0__tmpfs_new_runtime() with its times read from @p clock from the start
 * (see s0__tmpfs_set_clock()).
 * @param clock (nullable) copied; NULL is the real clock.
 */
int s0__tmpfs_new_runtime_clock(const s0_clock *clock, const char *const *ephemeral,
                                size_t n_ephemeral, s0__tmpfs **out, s0_error **err);

/**
 * Read the time for every modification time this tmpfs stamps (new nodes,
 * writes, directory changes) from @p clock's now_unix_ms, e.g. the
 * engine's (possibly manual) clock. Nodes already present, including those
 * of a deserialised tmpfs, keep their recorded times. A new tmpfs uses the
 * real clock (CLOCK_REALTIME) until this is called.
 * @param clock (nullable) copied; its ctx must outlive the tmpfs. NULL
 *        returns to the real clock.
 */
void s0__tmpfs_set_clock(s0__tmpfs *t, const s0_clock *clock);

/** Free the tmpfs and all its content. NULL-safe. */
void s0__tmpfs_free(s0__tmpfs *t);

/**
 * Add a mount point: an empty directory of permission bits @p mode at
 * @p path (placeholders above it are created). Adding an existing mount
 * point again is S0_ECONFLICT `path_exists`; a path inside an existing
 * mount is allowed only when nothing exists there yet.
 * @param flags 0 or ::S0__TMPFS_RDONLY.
 * @param limit_bytes file bytes allowed below the mount; 0 = no limit.
 * @retval S0_EINVAL `invalid_request` bad path or "/".
 */
int s0__tmpfs_add_mount(s0__tmpfs *t, const char *path, size_t path_len, uint32_t mode,
                        unsigned flags, uint64_t limit_bytes, s0_error **err);

/**
 * Make an existing mount read-only or writable (the runtime populates
 * /proc, then seals it).
 * @retval S0_ENOTFOUND `directory_not_found`: no mount at @p path.
 */
int s0__tmpfs_set_readonly(s0__tmpfs *t, const char *path, size_t path_len, bool ro,
                           s0_error **err);

/**
 * Copy the mount points into @p out (which must be empty or cleared).
 * @retval S0_OK @retval S0_ENOMEM (out cleared)
 */
int s0__tmpfs_mounts(s0__tmpfs *t, s0__mountset *out, s0_error **err);

/** File bytes held (sum of file sizes). */
uint64_t s0__tmpfs_used_bytes(s0__tmpfs *t);

/**
 * Serialise the whole state (mounts, flags, limits, tree, modes, times,
 * contents) into a self-contained buffer (format "S0TMPFS1", little-endian).
 * @param[out] buf_out (transfer full) free with free().
 * @retval S0_OK @retval S0_ENOMEM
 */
int s0__tmpfs_serialize(s0__tmpfs *t, void **buf_out, size_t *len_out, s0_error **err);

/**
 * Rebuild a tmpfs from s0__tmpfs_serialize() output. The buffer is
 * validated completely (bounds, names, kinds, duplicates).
 * @param[out] out (transfer full) the tmpfs.
 * @retval S0_ECORRUPT reason `corrupt`: not a valid image.
 * @retval S0_ENOMEM
 */
int s0__tmpfs_deserialize(const void *buf, size_t len, s0__tmpfs **out, s0_error **err);

/* Files operations: see local/rootfs/files.h for each one's contract. */
int s0__tmpfs_read(s0__tmpfs *t, const char *path, size_t path_len, uint64_t offset,
                   int64_t length, s0__files_route *route, void **data_out, size_t *len_out,
                   s0_error **err);
int s0__tmpfs_write(s0__tmpfs *t, const char *path, size_t path_len, const void *data,
                    size_t len, s0__files_route *route, s0_error **err);
int s0__tmpfs_mkdir(s0__tmpfs *t, const char *path, size_t path_len, bool recursive,
                    s0__files_route *route, s0_error **err);
int s0__tmpfs_delete(s0__tmpfs *t, const char *path, size_t path_len, s0__files_route *route,
                     s0_error **err);
int s0__tmpfs_stat(s0__tmpfs *t, const char *path, size_t path_len, s0__files_route *route,
                   s0__fileinfo **out, s0_error **err);
int s0__tmpfs_list(s0__tmpfs *t, const char *path, size_t path_len, s0__files_route *route,
                   s0__filelist **out, s0_error **err);
int s0__tmpfs_move(s0__tmpfs *t, const char *src, size_t src_len, const char *dst,
                   size_t dst_len, s0__files_route *route, s0_error **err);
int s0__tmpfs_chmod(s0__tmpfs *t, const char *path, size_t path_len, uint32_t mode,
                    s0__files_route *route, s0_error **err);
int s0__tmpfs_symlink(s0__tmpfs *t, const char *target, size_t target_len, const char *path,
                      size_t path_len, s0__files_route *route, s0_error **err);
int s0__tmpfs_canon(s0__tmpfs *t, const char *path, size_t path_len, bool follow_final,
                    s0__files_route *route, char **out, s0_error **err);

#endif
