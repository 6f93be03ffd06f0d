/*
 * The S3 backend ("s3"): the object store on any S3-compatible endpoint
 * (objstore.h's duties), chosen by giving an S3 URL as the store's name
 * (s3conf.h: s3://BUCKET[/PREFIX]?endpoint=…).
 *
 * In the bucket:
 *   PREFIX/o/<64 hex>     the sealed bytes of one committed object
 * In the local store directory (<data dir>/objects):
 *   backend               "s3" (backends.h)
 *   lock                  flock'ed by the one process that has it open
 *   upload/<batch>.<hex>  a batch's sealed objects until its commit (not tmp/:
 *                         that names a files store to backends.h's probe)
 *   cache/                the bounded read cache (s3cache.h)
 *
 * Batches. A put writes the sealed bytes to a temp file (several threads
 * may put into one batch at once); nothing reaches the bucket, so the
 * batch is invisible. Commit then PUTs every object, 32 at a time on one
 * curl multi handle (groups of up to 128 objects or 32 MiB read in memory), and returns only when the endpoint has answered 200 to
 * every PUT: an S3 PUT is atomic (an object is absent or whole, never
 * torn) and durable once answered, so the batch is durable then. No
 * manifest or commit marker is needed, because nothing names these objects
 * until the caller publishes a descriptor after the commit returned (the
 * block store's generation row, committed in the metadata store).
 *
 * Crash and outage cases:
 *   - crash before commit: the temp files are removed at the next open;
 *     the bucket never saw the batch.
 *   - crash (or endpoint lost) during commit: the objects PUT so far are
 *     whole orphans in the bucket, the rest absent; nothing references
 *     them, GC deletes them. A commit that fails returns the error
 *     (S0_EUNAVAILABLE when the endpoint stayed down through the retries)
 *     and leaves those orphans rather than deleting them (an id stored by
 *     this batch may also belong to a concurrent batch with the same
 *     content, which a delete would break); has() may dedupe against them,
 *     which is safe: they are whole and verified on every read.
 *   - crash after commit returned: the batch is durable in the bucket.
 * Deletes (GC) HEAD the ids, DELETE the present ones and drop them from
 * the cache; durable when the endpoint answered.
 *
 * Reads: the cache first, else a GET whose bytes then enter the cache; a
 * commit writes its objects through to the cache, so a resume on the node
 * that paused reads no object over the network. The front verifies every
 * read. has() answers from the batch, the cache, then a HEAD.
 *
 * Crash points: objects.s3_written (a commit's temp files complete, nothing
 * PUT), objects.s3_put (after each group of PUTs of a commit),
 * objects.s3_committed (every PUT answered), objects.deleted.
 *
 * Thread safety: every op is safe from any thread.
 */
#ifndef S0_OBJS3_H
#define S0_OBJS3_H

#include <stdbool.h>

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
 * Test entry point: store raw bytes under id in the bucket, bypassing
 * batches and the cache (damage tests).
 */
int s0__objs3_raw_put(void *ctx, const s0__objid *id, const void *data, size_t len,
                      s0_error **err);

/** Test entry point: bytes held by the read cache. */
uint64_t s0__objs3_cache_bytes(void *ctx);

/**
 * Test entry point: the path of id's read-cache entry (whether it exists
 * or not).
 * @param[out] path_out  (transfer full) free().
 */
int s0__objs3_cache_path(void *ctx, const s0__objid *id, char **path_out, s0_error **err);

#endif
