/*
 * The S3 backend ("s3"): the object store on any S3-compatible endpoint
 * (objstore.h's duties), chosen by giving an S3 URL as the store's name
 * (s3conf.h: s3://BUCKET[/PREFIX]?endpoint=…).
 *
 * In the bucket: packs and their index objects (s3pack.h), many objects
 * per S3 object, never modified once written.
 * In the local store directory (<data dir>/objects):
 *   backend               "s3" (backends.h)
 *   lock                  flock'ed by the one process that has it open
 *   index.db              the catalog of the indexes this node read (s3pack.h)
 *   doomed.db             doomed objects and recorded copies (s3doom.h)
 *   tombs                 the newest tombstone applied (s3tomb.h)
 *   upload/<batch>        a batch's records until its commit (not tmp/: that
 *                         names a files store to backends.h's probe)
 *   upload/<batch>.<pack> marks of packs a commit is uploading
 *   cache/                the bounded read cache (s3cache.h)
 *
 * Batches. A put appends the sealed bytes as a pack record to the batch's
 * temp file (several threads may put into one batch at once). As soon as the records written from the start of
 * the file make a pack of S0__S3PACK_TARGET, a thread of the batch (the
 * streamer) PUTs it while the puts go on, one pack at a time, without its
 * index, so no node can see it: the batch stays invisible. Commit stops the
 * streamer, cuts the remaining records into packs of about
 * S0__S3PACK_TARGET, PUTs those together (all in flight at once on one curl
 * multi handle, rounds of up to 32 MiB), then the indexes of every pack of
 * the batch together, and only when the endpoint answered 200 to every
 * one enters them in the catalog (the one durability barrier of the batch:
 * an S3 PUT is atomic and durable once answered). No manifest or commit
 * marker is needed, because nothing names these objects until the caller
 * publishes a descriptor after the commit returned (the block store's
 * generation row, committed in the metadata store).
 *
 * Crash and outage cases:
 *   - crash before commit: the temp file is removed at the next open, and
 *     the packs the streamer PUT (no index names them) are deleted from
 *     their marks; an abort deletes them at once.
 *   - crash (or endpoint lost) during commit: the packs PUT so far are whole
 *     orphans. One with its index is listed like any object and GC deletes
 *     its objects, then the pack; one without its index is deleted by the
 *     failed commit, or at the next open from its mark (a power loss may
 *     lose the mark: the pack then stays as unlisted space). The commit
 *     returns the error (S0_EUNAVAILABLE when the endpoint stayed down
 *     through the retries) and none of its objects became visible here
 *     (while it runs, a get on this node may find one in the read cache,
 *     which is written while the packs go up; a failing commit or an abort
 *     drops them). A streamed PUT that failed fails the commit the same way.
 *   - crash after commit returned: the batch is durable in the bucket; a
 *     catalog that lost the rows gets them back from the indexes.
 * Deletes (GC) doom the ids first (a tombstone every node reads), and
 * remove them from the catalog durably and from the cache only at a GC the
 * grace later (at once with gc_grace_s=0; s3tomb.h); a pack left without
 * live objects is DELETEd with its index (in del and maintain). A pack
 * partly dead stays whole: there is no compaction.
 *
 * Reads: the cache first, else a ranged GET of the pack (s3pack.h) whose
 * bytes then enter the cache; a commit writes its objects through to the
 * cache, so a resume on the node that paused reads no object over the
 * network. The front verifies every read. has() answers from the batch and
 * the catalog less the doomed ids (no request; a batch begins with one
 * listing of tombstones, s3tomb.h).
 *
 * Crash points: objects.s3_written (a commit's records complete, only
 * streamed packs PUT), objects.s3_put (every pack and index PUT),
 * objects.s3_committed (catalogued), objects.deleted.
 *
 * Thread safety: every op is safe from any thread.
 */
#ifndef S0_OBJS3_H
#define S0_OBJS3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/internal.h"
#include "local/objects/objstore.h"

/** The backend's ops (ctx from s0__objs3_open()). */
extern const s0__objstore_ops s0__objs3_ops;

/**
 * Open the store at url with its local directory dir (created if missing):
 * removes leftover temp files, opens the cache, checks the bucket with the
 * environment's credentials and creates it when it does not exist. An
 * endpoint that cannot be reached does not fail the open (a node restarts
 * during an outage; every op answers S0_EUNAVAILABLE until it is back).
 * @param url  s3conf.h's form.
 * @param[out] ctx_out  backend ctx for s0__objstore_new() with s0__objs3_ops.
 * @retval S0_EINVAL reasons "object_store_url", "object_store_credentials".
 * @retval S0_EAUTH  reason "object_store_auth": the credentials were refused.
 * @retval S0_ECONFLICT reason "store_locked": dir is open in another process.
 * @retval S0_EIO
 */
int s0__objs3_open_url(const char *url, const char *dir, void **ctx_out, s0_error **err);

/** Whether dir holds an S3 store's local directory (its cache/ exists). */
bool s0__objs3_present(const char *dir);

/**
 * Test entry point: one raw request on key (below the store's prefix, e.g.
 * "p/<16 hex>"), bypassing batches, catalog and cache (damage tests).
 * @param method  "GET", "PUT", "HEAD" or "DELETE".
 * @param data    PUT body (len bytes); NULL otherwise.
 * @param out     (nullable) GET answer (replaced).
 * @param[out] status_out  HTTP status.
 * @retval S0_EUNAVAILABLE  the endpoint did not answer.
 */
int s0__objs3_raw(void *ctx, const char *method, const char *key, const void *data,
                  size_t len, s0__buf *out, long *status_out, s0_error **err);

/**
 * Test entry point: where id's sealed bytes lie in the bucket.
 * @param[out] key_out  (transfer full) the pack's key below the prefix; free().
 * @param[out] off_out  byte offset of the sealed bytes in the pack.
 * @param[out] len_out  sealed length in bytes.
 * @retval S0_ENOTFOUND  this node's catalog does not name id.
 */
int s0__objs3_locate(void *ctx, const s0__objid *id, char **key_out, uint64_t *off_out,
                     uint64_t *len_out, s0_error **err);

/**
 * Test entry point: how many keys the bucket holds below the store's
 * prefix + sub (e.g. "p/" packs, "x/" indexes), by listing.
 */
int s0__objs3_count_keys(void *ctx, const char *sub, uint64_t *n_out, s0_error **err);

/**
 * Test entry point: the next packs PUTs (streamed during puts, or of
 * commits) succeed, then one fails as an endpoint outage would
 * (S0_EUNAVAILABLE) before any index of its batch is PUT; -1 turns it off
 * (the default).
 */
void s0__objs3_fail_after(void *ctx, long packs);

/**
 * Test entry point: move the clock of the GC grace (pack age, doom times,
 * listing time; s3tomb.h) ms further ahead of the real one.
 */
void s0__objs3_clock_shift(void *ctx, uint64_t ms);

/** Test entry point: bytes held by the read cache. */
uint64_t s0__objs3_cache_bytes(void *ctx);

/**
 * Test entry point: the path of id's read-cache entry (whether it exists
 * or not).
 * @param[out] path_out  (transfer full) free().
 */
int s0__objs3_cache_path(void *ctx, const s0__objid *id, char **path_out, s0_error **err);

#endif
