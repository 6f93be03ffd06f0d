/*
 * The files view (layer fsview/, between rootfs/ and runtime/; used by the
 * simulated shell and the files API alike). The files-API router of one
 * sandbox: sends each path to the RootFS or to
 * the runtime tmpfs. Paths at or below a runtime-only mount point (/tmp,
 * /proc, /dev, /sys, the template's ephemeral mounts) go to the tmpfs and
 * never touch the RootFS; everything else (including /var/tmp and
 * /workspace) goes to the RootFS. A symlink that leads from one to the
 * other is followed across (each filesystem reports the crossing and the
 * router re-dispatches the canonical path, at most 16 times); a move whose
 * two ends land on different filesystems fails like rename(2)'s EXDEV with
 * S0_EINTERNAL `operation_failed`.
 *
 * Every operation has the contract of the same operation in
 * local/rootfs/files.h (RootFS) and local/fsview/tmpfs.h (tmpfs), and the
 * locking of whichever filesystem serves it (the process-wide rootfs lock
 * for one RootFS operation; the tmpfs mutex for one tmpfs operation).
 * FileInfo paths are those the caller asked for: stat reports the request
 * verbatim, list entries `<normalised requested dir>/<name>`.
 */
#ifndef S0_FSVIEW_ROUTER_H
#define S0_FSVIEW_ROUTER_H

#include "local/fsview/tmpfs.h"
#include "local/rootfs/files.h"
#include "local/rootfs/path.h"
#include "local/rootfs/rootfs.h"

/**
 * A files view a runtime serves itself (the gvisor runtime: host
 * directories its programs see). Each entry has the contract of the
 * s0__files_* function of the same name below, @p ctx first.
 */
typedef struct s0__files_ops {
	int (*read)(void *ctx, const char *path, size_t path_len, uint64_t offset, int64_t length,
	            void **data_out, size_t *len_out, s0_error **err);
	int (*write)(void *ctx, const char *path, size_t path_len, const void *data, size_t len,
	             s0_error **err);
	int (*mkdir)(void *ctx, const char *path, size_t path_len, bool recursive, s0_error **err);
	int (*del)(void *ctx, const char *path, size_t path_len, s0_error **err);
	int (*stat)(void *ctx, const char *path, size_t path_len, s0__fileinfo **out,
	            s0_error **err);
	int (*list)(void *ctx, const char *path, size_t path_len, s0__filelist **out,
	            s0_error **err);
	int (*move)(void *ctx, const char *src, size_t src_len, const char *dst, size_t dst_len,
	            s0_error **err);
	int (*chmod)(void *ctx, const char *path, size_t path_len, uint32_t mode, s0_error **err);
	int (*symlink)(void *ctx, const char *target, size_t target_len, const char *path,
	               size_t path_len, s0_error **err);
} s0__files_ops;

/** The filesystems of one sandbox runtime. Immutable after init. */
typedef struct s0__files_ns {
	s0__rootfs *rootfs;    /**< borrowed; outlives the namespace */
	s0__tmpfs *tmpfs;      /**< borrowed; outlives the namespace */
	s0__mountset mounts;   /**< owned: the tmpfs's mount points */
	/**
	 * (nullable) Told of every change made through this namespace, after it
	 * succeeded: @p event "create", "write", "remove", "rename" (the source;
	 * the destination comes as "create") or "chmod", @p path canonical. Runs
	 * on the changing thread with no files lock held; it must be quick. Set
	 * after init, before the namespace is shared (file watches, docs/wire.md
	 * §8.2).
	 */
	void (*hook)(void *arg, const char *event, const char *path);
	/** (nullable with hook) Whether anyone listens now: when false, a write
	 * skips the look that tells a create from a write. */
	bool (*hook_wanted)(void *arg);
	void *hook_arg;
	const s0__files_ops *ops; /**< (nullable) when set, every operation goes to it */
	void *ops_ctx;         /**< borrowed: the ops' context */
} s0__files_ns;

/** Redirects followed by one routed operation before giving up. */
#define S0__FILES_MAX_HOPS 16

/**
 * Bind a RootFS and a tmpfs into one namespace. Every built-in runtime
 * mount (/tmp, /proc, /dev, /sys) and every entry of @p ephemeral that the
 * tmpfs lacks is added to it (as s0__tmpfs_new_runtime would), so a tmpfs
 * restored from an image and a fresh one route the same way.
 * @param[in] ephemeral (nullable) the template's ephemeral mount paths.
 * @retval S0_EINVAL `invalid_request`: a bad ephemeral path.
 * @retval S0_ENOMEM
 * @threadsafety the namespace may be used from any thread once made.
 */
int s0__files_ns_init(s0__files_ns *ns, s0__rootfs *rootfs, s0__tmpfs *tmpfs,
                      const char *const *ephemeral, size_t n_ephemeral, s0_error **err);

/**
 * A namespace served by @p ops (borrowed, as @p ctx; both outlive it):
 * every s0__files_* call on it goes to them. s0__files_ns_clear() is
 * still called at the end.
 */
void s0__files_ns_init_ops(s0__files_ns *ns, const s0__files_ops *ops, void *ctx);

/** Release what init allocated (not the filesystems). NULL-safe. */
void s0__files_ns_clear(s0__files_ns *ns);

/** Whether canonical path @p p is served by the tmpfs (lexically). */
bool s0__files_ns_is_runtime_path(const s0__files_ns *ns, const char *p);

/* The routed files operations (see files.h for each contract). */
int s0__files_read(const s0__files_ns *ns, const char *path, size_t path_len, uint64_t offset,
                   int64_t length, void **data_out, size_t *len_out, s0_error **err);
int s0__files_write(const s0__files_ns *ns, const char *path, size_t path_len, const void *data,
                    size_t len, s0_error **err);
int s0__files_mkdir(const s0__files_ns *ns, const char *path, size_t path_len, bool recursive,
                    s0_error **err);
int s0__files_delete(const s0__files_ns *ns, const char *path, size_t path_len, s0_error **err);
int s0__files_stat(const s0__files_ns *ns, const char *path, size_t path_len,
                   s0__fileinfo **out, s0_error **err);
int s0__files_list(const s0__files_ns *ns, const char *path, size_t path_len,
                   s0__filelist **out, s0_error **err);
int s0__files_move(const s0__files_ns *ns, const char *src, size_t src_len, const char *dst,
                   size_t dst_len, s0_error **err);
int s0__files_chmod(const s0__files_ns *ns, const char *path, size_t path_len, uint32_t mode,
                    s0_error **err);
int s0__files_symlink(const s0__files_ns *ns, const char *target, size_t target_len,
                      const char *path, size_t path_len, s0_error **err);

#endif
