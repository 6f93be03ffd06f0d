/*
 * The local read cache of the S3 backend: sealed objects kept as files in
 * <store dir>/cache/<64 hex>, bounded in bytes, so attaching a generation
 * lazily reads its chunks from local disk once they were fetched (or
 * written by this node) once.
 *
 * What it may hold: only bytes that are a committed object of the bucket
 * (written through by a commit, or fetched by a get), or of a commit in
 * flight (it writes its entries while its packs go up and drops them when
 * it fails; a crash empties the cache, below); the front verifies
 * every read anyway (a damaged entry reads S0_ECORRUPT, never wrong
 * bytes), and a get that finds a damaged entry cannot tell, so the cache is
 * trusted only after a clean close: open removes the marker <cache>/clean
 * (durably) and empties a cache that has none, close writes it after one
 * syncfs(). A crash therefore costs a refetch, never a torn object.
 *
 * Bound: when the entries exceed the bound, the least recently used ones
 * (by mtime, refreshed on each hit) are removed until 3/4 of it remain.
 *
 * Thread safety: every call is safe from any thread. Failures of the
 * cache (disk full, I/O errors) never fail the store: an entry that cannot
 * be written is skipped, one that cannot be read is a miss.
 */
#ifndef S0_S3CACHE_H
#define S0_S3CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/internal.h"
#include "local/objects/objid.h"

typedef struct s0__s3cache s0__s3cache;

/**
 * Open the cache in dir (created if missing), bounded to cap_bytes.
 * @param[out] out  (transfer full) close with s0__s3cache_close().
 * @retval S0_EIO  dir cannot be made or read.
 */
int s0__s3cache_open(const char *dir, uint64_t cap_bytes, s0__s3cache **out, s0_error **err);

/** Mark the cache clean (see the file comment) and free it; NULL is a no-op. */
void s0__s3cache_close(s0__s3cache *c);

/** Read id's entry into out (replacing it); whether there was one. */
bool s0__s3cache_get(s0__s3cache *c, const s0__objid *id, s0__buf *out);

/** Store len bytes as id's entry (best effort). */
void s0__s3cache_put(s0__s3cache *c, const s0__objid *id, const void *data, size_t len);

/** Remove id's entry if there is one. */
void s0__s3cache_drop(s0__s3cache *c, const s0__objid *id);

/** Bytes held (tests compare them with the bound). */
uint64_t s0__s3cache_bytes(s0__s3cache *c);

/** The path of id's entry. @param[out] out (transfer full) free(). */
char *s0__s3cache_path(s0__s3cache *c, const s0__objid *id);

#endif
