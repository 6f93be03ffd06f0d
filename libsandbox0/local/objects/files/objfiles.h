/*
 * The one-file-per-object backend ("files"): no pack code, no catalog.
 *
 *   <dir>/lock           flock'ed by the one process that has it open
 *   <dir>/tmp/           a batch's objects until its commit
 *   <dir>/NN/<id>        the sealed bytes of one committed object; NN is the
 *                        id's first byte in hex, <id> its 64 hex digits
 *
 * A put writes the sealed bytes to a new file in tmp/ (several threads may
 * put into one batch at once) and syncs nothing. A commit then makes the
 * batch durable in one step per phase, never one fsync per object before
 * the next put:
 *   1. data: every temp file reaches the disk — one fdatasync() per file,
 *      all issued after the last write, from up to 8 threads at once so the
 *      filesystem's journal folds them into few commits (the default,
 *      S0__OBJFILES_SYNC_PARALLEL; SYNC_EACH issues them one by one,
 *      SYNC_FS replaces them by one syncfs(), which also flushes every other
 *      writer's data on the filesystem: fast when alone, unbounded when not);
 *   2. visibility: each temp file is renamed to NN/<id> (an id whose file
 *      exists already keeps it: committed meanwhile, or a whole orphan);
 *   3. names: the renames reach the disk — one fsync() per touched NN
 *      directory, in parallel the same way (or one syncfs()).
 * Only complete, synced files are ever renamed into place, so a crash at
 * any point leaves each object either absent or whole; a crash between
 * renames leaves part of a batch visible (orphans until GC, exactly like an
 * unpublished batch). A failure after renames began unlinks the renamed
 * objects again before returning, so a failed commit leaves none visible.
 * Opening removes every leftover temp file. Reads are verified by the front
 * (objstore.c), so a damaged file reads S0_ECORRUPT, never wrong bytes.
 *
 * Deletion unlinks the files, then fsyncs each touched NN directory (durable
 * before return); maintain() has nothing to reclaim. usage(): objects and
 * their bytes are counted at open (one directory scan) and kept in memory;
 * file_bytes equals stored_bytes (an object file holds its sealed bytes and
 * nothing else).
 *
 * Crash points: objects.files_written (temp files written, not yet synced),
 * objects.files_synced (data durable, nothing renamed), objects.files_renamed
 * (after each rename), objects.files_committed (names durable),
 * objects.deleted (after a durable delete).
 *
 * Thread safety: every op is safe from any thread.
 */
#ifndef S0_OBJFILES_H
#define S0_OBJFILES_H

#include <stdbool.h>
#include <stdint.h>

#include "common/internal.h"
#include "local/objects/objstore.h"

/** The backend's ops (ctx from s0__objfiles_open()). */
extern const s0__objstore_ops s0__objfiles_ops;

/**
 * Open (creating if needed) the store directory; removes leftover temp
 * files and counts the committed objects.
 * @param[out] ctx_out  backend ctx for s0__objstore_new() with s0__objfiles_ops.
 * @retval S0_ECONFLICT  another process holds it (reason "store_locked").
 * @retval S0_EIO
 */
int s0__objfiles_open(const char *dir, void **ctx_out, s0_error **err);

/** Whether dir holds a files store (its tmp/ directory exists). */
bool s0__objfiles_present(const char *dir);

/** How commits make their data and names durable (see the file comment). */
typedef enum s0__objfiles_sync {
	S0__OBJFILES_SYNC_PARALLEL = 0, /**< fdatasync each file, then fsync each touched
	                                     directory, on up to 8 threads at once */
	S0__OBJFILES_SYNC_EACH,         /**< the same one after the other */
	S0__OBJFILES_SYNC_FS,           /**< one syncfs() per phase */
} s0__objfiles_sync;

/** The strategy of a newly opened store. */
#define S0__OBJFILES_SYNC_DEFAULT S0__OBJFILES_SYNC_PARALLEL

/**
 * Choose the sync strategy of later commits and deletes (benchmarks compare
 * them; both are crash-safe).
 * @param ctx  the backend ctx (s0__objstore_backend()).
 */
void s0__objfiles_set_sync(void *ctx, s0__objfiles_sync mode);

/**
 * Test entry point: the path of id's file (whether it exists or not).
 * @param[out] path_out  (transfer full) free().
 */
int s0__objfiles_path(void *ctx, const s0__objid *id, char **path_out, s0_error **err);

#endif
