/*
 * The files API (docs/wire.md §3.9–3.10) over one filesystem: the RootFS here,
 * the runtime tmpfs in local/fsview/tmpfs.h with the same semantics and
 * the same error codes, and the router (local/fsview/router.h) that sends
 * each path to the right one.
 *
 * Conventions shared by every operation:
 * - Paths are hostile input given as (bytes, length). They are normalised
 *   with s0__path_normalize(): relative paths resolve against /workspace,
 *   a NUL byte, an over-long path (> 4096) or component (> 255), or `..`
 *   above `/` fail with S0_EINVAL reason `invalid_request`.
 * - Symlinks met on the way are followed inside the filesystem only: an
 *   absolute target restarts at the filesystem root and `..` at the root
 *   stays there (what the guest sees in its own root). At most 40 links
 *   per lookup; more is S0_EINVAL `invalid_request`. The final component
 *   is not followed by write, delete, move, stat, mkdir and symlink; it is
 *   followed by read, list and chmod.
 * - Errors carry the wire reason of docs/wire.md §3.10 with its code from
 *   S0_WIRE_ERROR_MAP: `file_not_found` / `directory_not_found`
 *   (S0_ENOTFOUND), `path_exists` / `path_not_directory` / `path_not_file`
 *   (S0_ECONFLICT), `file_too_large` (S0_ETOOLARGE), `invalid_request`
 *   (S0_EINVAL), `permission_denied` (S0_EFORBIDDEN), and
 *   `operation_failed` (S0_EINTERNAL) for everything else (no space,
 *   device errors — the device error is attached as the cause —, corrupt
 *   filesystem structures, a move across filesystems).
 * - A failed operation leaves the filesystem unchanged, except that parent
 *   directories created by write/move before a no-space or device error
 *   remain.
 * - Routing: when a lookup reaches a path owned by another filesystem
 *   (route->foreign for the RootFS; anything outside its mounts for the
 *   tmpfs), nothing is changed and the call returns ::S0__FILES_REDIRECT
 *   with the canonical path(s) in route->redirect (see s0__files_route).
 */
#ifndef S0_ROOTFS_FILES_H
#define S0_ROOTFS_FILES_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"
#include "local/rootfs/path.h"
#include "local/rootfs/rootfs.h"

/** Wire reasons of docs/wire.md §3.10 used by the files operations. */
#define S0__R_INVALID "invalid_request"
#define S0__R_NOT_FOUND "file_not_found"
#define S0__R_DIR_NOT_FOUND "directory_not_found"
#define S0__R_EXISTS "path_exists"
#define S0__R_NOT_DIR "path_not_directory"
#define S0__R_NOT_FILE "path_not_file"
#define S0__R_TOO_LARGE "file_too_large"
#define S0__R_DENIED "permission_denied"
#define S0__R_FAILED "operation_failed"

/** Largest file write accepted (docs/wire.md §3.9), bytes. */
#define S0__FILES_MAX_WRITE (100ull * 1024 * 1024)
/** Largest read returned in one call, bytes (reads of bigger files must use
 *  ranges); beyond it a read fails with S0_ETOOLARGE `file_too_large`. */
#define S0__FILES_MAX_READ (1024ull * 1024 * 1024)
/** Symlinks followed in one lookup before giving up (Linux MAXSYMLINKS). */
#define S0__FILES_MAX_LINKS 40

/**
 * One FileInfo (docs/wire.md §3.9). All strings are owned by the struct.
 */
typedef struct s0__fileinfo {
	char *name;              /**< last component; "/" for the root */
	char *path;              /**< stat: the path as requested; list: `<dir>/<name>` */
	int32_t type;            /**< @type s0_file_type (file, dir, symlink) */
	int64_t size_bytes;      /**< i_size; a symlink's target length */
	uint32_t mode;           /**< permission bits including suid/sgid/sticky (07777) */
	int64_t mod_time_unix_ns;/**< mtime, ns since the epoch */
	bool is_link;            /**< true for symlinks (lstat) */
	char *link_target;       /**< (nullable) target; set only by stat of a symlink */
} s0__fileinfo;

/** A directory listing: entries sorted by name (bytewise). */
typedef struct s0__filelist {
	s0__fileinfo *items;
	size_t len;
	size_t cap;
} s0__filelist;

/** Free the members of @p fi and zero it. NULL-safe. */
void s0__fileinfo_clear(s0__fileinfo *fi);
/** Free a heap FileInfo (members and struct). NULL-safe. */
void s0__fileinfo_free(s0__fileinfo *fi);
/** Free a heap listing and its entries. NULL-safe. */
void s0__filelist_free(s0__filelist *l);
/**
 * Append @p fi to @p l, taking its members (fi is zeroed on success).
 * @retval S0_OK @retval S0_ENOMEM (fi untouched)
 */
int s0__filelist_push(s0__filelist *l, s0__fileinfo *fi, s0_error **err);
/** Sort entries by name, bytewise (os.ReadDir order). */
void s0__filelist_sort(s0__filelist *l);
/** Replace fi->path with a copy of @p path. @retval S0_OK @retval S0_ENOMEM */
int s0__fileinfo_set_path(s0__fileinfo *fi, const char *path, s0_error **err);

/**
 * Render @p fi exactly as docs/wire.md §3.9 FileInfo: name, path, type
 * ("file"|"dir"|"symlink"), size, mode (4-digit octal string), mod_time
 * (RFC 3339, UTC), is_link, and link_target only when set.
 * @return (transfer full) a cJSON object, or NULL when out of memory.
 * @threadsafety safe
 */
cJSON *s0__fileinfo_to_json(const s0__fileinfo *fi);

/**
 * Render a listing as `{"entries":[FileInfo…]}` (`[]` when empty).
 * @return (transfer full) a cJSON object, or NULL when out of memory.
 */
cJSON *s0__filelist_to_json(const s0__filelist *l);

/** Returned (positive) by a files operation whose path left its filesystem. */
#define S0__FILES_REDIRECT 1

/**
 * Routing state of one files operation. Pass NULL when the filesystem
 * owns the whole namespace (no redirects then happen on the RootFS).
 */
typedef struct s0__files_route {
	/** In, nullable: mount points owned by another filesystem (RootFS
	 *  only; the tmpfs knows its own mounts). */
	const s0__mountset *foreign;
	/** Out on ::S0__FILES_REDIRECT: canonical absolute paths (malloc'd,
	 *  caller frees): [0] the path (move: the source), [1] for move the
	 *  destination. The path that did not leave is given canonicalised as
	 *  far as this filesystem resolved it. NULL otherwise. */
	char *redirect[2];
} s0__files_route;

/** Free route->redirect[] and reset them to NULL. NULL-safe. */
void s0__files_route_reset(s0__files_route *route);

/*
 * ---- Operations on the RootFS. Each takes the process-wide lock for its
 * own duration. Writes need a read-write handle (else S0_EFORBIDDEN
 * `permission_denied`). ----
 */

/**
 * Read a file (symlinks followed), whole or a byte range.
 * @param[in] offset  first byte; past the end gives 0 bytes.
 * @param[in] length  bytes wanted, or -1 for "to the end".
 * @param[out] data_out (transfer full) the bytes, NUL-terminated for
 *             convenience (not counted); free with free().
 * @param[out] len_out bytes returned.
 * @retval S0_ENOTFOUND `file_not_found`.
 * @retval S0_ECONFLICT `path_not_file` (a directory), `path_not_directory`
 *         (a parent component is not a directory).
 * @retval S0_ETOOLARGE `file_too_large`: more than ::S0__FILES_MAX_READ.
 */
int s0__rootfs_read(s0__rootfs *fs, const char *path, size_t path_len, uint64_t offset,
                    int64_t length, s0__files_route *route, void **data_out, size_t *len_out,
                    s0_error **err);

/**
 * Write a whole file atomically: the data goes to a new inode, which then
 * replaces the directory entry in one step (a file or symlink there is
 * replaced, never followed). Missing parents are created with mode 0755;
 * the file gets mode 0644.
 * @retval S0_ETOOLARGE `file_too_large`: @p len > ::S0__FILES_MAX_WRITE;
 *         nothing written.
 * @retval S0_ECONFLICT `path_not_file` (a directory is there),
 *         `path_not_directory` (a parent component is a file).
 * @retval S0_EINTERNAL `operation_failed` (no space; device error).
 */
int s0__rootfs_write(s0__rootfs *fs, const char *path, size_t path_len, const void *data,
                     size_t len, s0__files_route *route, s0_error **err);

/**
 * Make a directory (mode 0755). With @p recursive, missing parents are
 * created and an existing directory (or symlink to one) is success.
 * @retval S0_ECONFLICT `path_exists` (not recursive, something exists),
 *         `path_not_directory` (a component, or with recursive the path
 *         itself, exists and is not a directory).
 * @retval S0_ENOTFOUND `directory_not_found`: parent missing, not recursive.
 */
int s0__rootfs_mkdir(s0__rootfs *fs, const char *path, size_t path_len, bool recursive,
                     s0__files_route *route, s0_error **err);

/**
 * Delete a file, symlink (not followed) or whole directory tree. A missing
 * path is success.
 * @retval S0_EFORBIDDEN `permission_denied`: the root "/".
 */
int s0__rootfs_delete(s0__rootfs *fs, const char *path, size_t path_len,
                      s0__files_route *route, s0_error **err);

/**
 * lstat: FileInfo of the path itself (symlinks not followed, with
 * link_target). fi->path is the requested path bytes verbatim.
 * @param[out] out (transfer full) free with s0__fileinfo_free().
 * @retval S0_ENOTFOUND `file_not_found`. @retval S0_ECONFLICT `path_not_directory`.
 */
int s0__rootfs_stat(s0__rootfs *fs, const char *path, size_t path_len,
                    s0__files_route *route, s0__fileinfo **out, s0_error **err);

/**
 * List a directory (symlinks followed to it); entries are lstat'ed, sorted
 * by name, without `.`/`..`, paths `<canonical dir>/<name>`.
 * @param[out] out (transfer full) free with s0__filelist_free().
 * @retval S0_ENOTFOUND `directory_not_found`.
 * @retval S0_ECONFLICT `path_not_directory` (a file).
 */
int s0__rootfs_list(s0__rootfs *fs, const char *path, size_t path_len,
                    s0__files_route *route, s0__filelist **out, s0_error **err);

/**
 * Rename @p src to @p dst (neither final component followed). Parents of
 * @p dst are created (0755). An existing @p dst is replaced when the kinds
 * allow it (file/symlink over file/symlink, directory over an empty
 * directory); moving onto itself is success.
 * @retval S0_ENOTFOUND `file_not_found`: source missing.
 * @retval S0_ECONFLICT `path_not_directory` (directory onto a non-directory,
 *         or a parent component is a file), `path_not_file` (a non-directory
 *         onto a directory), `path_exists` (onto a non-empty directory).
 * @retval S0_EINVAL `invalid_request`: moving "/" or a directory into its
 *         own subtree.
 */
int s0__rootfs_move(s0__rootfs *fs, const char *src, size_t src_len, const char *dst,
                    size_t dst_len, s0__files_route *route, s0_error **err);

/**
 * chmod: set the permission bits (07777) of the path (symlinks followed).
 * @retval S0_EINVAL `invalid_request`: bits outside 07777.
 * @retval S0_ENOTFOUND `file_not_found`.
 */
int s0__rootfs_chmod(s0__rootfs *fs, const char *path, size_t path_len, uint32_t mode,
                     s0__files_route *route, s0_error **err);

/**
 * Create a symlink at @p path whose target is @p target (stored verbatim,
 * not resolved, 1..4095 bytes, no NUL). The parent must exist.
 * @retval S0_ECONFLICT `path_exists`; `path_not_directory`.
 * @retval S0_ENOTFOUND `directory_not_found`: parent missing.
 * @retval S0_EINVAL `invalid_request`: bad target.
 */
int s0__rootfs_symlink(s0__rootfs *fs, const char *target, size_t target_len,
                       const char *path, size_t path_len, s0__files_route *route,
                       s0_error **err);

/**
 * Canonicalise a path: resolve symlinks of intermediate components (and of
 * the final one with @p follow_final). A missing or non-directory
 * component stops resolution; the rest is appended lexically.
 * @param[out] out (transfer full) canonical path (on S0_OK).
 * @return S0_OK, ::S0__FILES_REDIRECT (route->redirect[0] set), or
 *         S0_EINVAL `invalid_request` (bad path, symlink loop).
 */
int s0__rootfs_canon(s0__rootfs *fs, const char *path, size_t path_len, bool follow_final,
                     s0__files_route *route, char **out, s0_error **err);

#endif
