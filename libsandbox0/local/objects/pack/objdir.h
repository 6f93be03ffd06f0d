/*
 * The local-directory object store backend.
 *
 *   <dir>/lock            flock'ed by the one process that has it open
 *   <dir>/catalog.db      SQLite catalog (catalog.h)
 *   <dir>/packs/NN.pack   pack files (pack.h)
 *
 * Batches append their objects to the current pack file (a new pack is
 * started, and its name fsynced into the directory, every 64 MiB). Commit =
 * one fdatasync of the pack, then an unsynced catalog transaction: one sync
 * per publication whatever its object count. Objects are never fsynced one
 * by one and no file is created per object, so ext4's slow inode
 * allocation after mass deletions (the baseline measurements) does not apply.
 * Recovery at open re-indexes durable records the catalog lost
 * (objdir_recover.c). Deletion removes catalog rows durably; maintain()
 * deletes packs without live objects and rewrites packs that are mostly
 * dead, or small when there are many, into a new pack (copy, fsync, switch
 * rows in one durable transaction, unlink).
 *
 * Thread safety: every op is safe from any thread.
 */
#ifndef S0_OBJDIR_H
#define S0_OBJDIR_H

#include <stdbool.h>
#include <stdint.h>

#include "common/internal.h"
#include "local/objects/objstore.h"

/** The backend's ops (ctx from s0__objdir_open()). */
extern const s0__objstore_ops s0__objdir_ops;

/**
 * Open (creating if needed) the store directory.
 * @param[out] ctx_out  backend ctx for s0__objstore_new() with s0__objdir_ops.
 * @retval S0_ECONFLICT  another process holds it (reason "store_locked").
 * @retval S0_EIO
 */
int s0__objdir_open(const char *dir, void **ctx_out, s0_error **err);

/** Whether dir holds a pack store (its catalog exists). */
bool s0__objdir_present(const char *dir);

/**
 * Test entry point: where id's sealed bytes lie.
 * @param[out] path_out  (transfer full) the pack file's path; free().
 * @param[out] off_out   byte offset of the sealed bytes in that file.
 * @param[out] len_out   sealed length in bytes.
 * @retval S0_ENOTFOUND
 */
int s0__objdir_locate(void *ctx, const s0__objid *id, char **path_out, uint64_t *off_out,
                      uint64_t *len_out, s0_error **err);

#endif
