/*
 * The doomed objects of an S3 store's node (s3tomb.h): (id, pack) pairs a
 * tombstone named — written by this node's GC or read from another's —
 * with the time this node learned of them. has() answers false for an id
 * whose catalogued place is doomed (the object may be deleted soon), reads
 * still find it. An SQLite database, <store dir>/doomed.db:
 *
 *   doomed(id BLOB, pack INTEGER, at INTEGER ms, PRIMARY KEY (id, pack))
 *
 * Thread safety: every function is safe from any thread (one mutex). Errors
 * are S0_EIO (SQLite's message) or S0_ENOMEM.
 */
#ifndef S0_S3DOOM_H
#define S0_S3DOOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"
#include "local/objects/pack/catalog.h"

typedef struct s0__s3doom s0__s3doom;

/**
 * Open or create the database at path.
 * @param[out] out  (transfer full) close with s0__s3doom_close().
 */
int s0__s3doom_open(const char *path, s0__s3doom **out, s0_error **err);

/** Close; NULL is a no-op. */
void s0__s3doom_close(s0__s3doom *d);

/**
 * Record rows[0, n) (id and loc.pack) as doomed at ms, in one durable
 * transaction; a pair already recorded keeps its earlier time.
 */
int s0__s3doom_add(s0__s3doom *d, const s0__objrow *rows, size_t n, uint64_t ms,
                   s0_error **err);

/**
 * When (id, pack) was doomed.
 * @retval S0_ENOTFOUND  it is not (err untouched).
 */
int s0__s3doom_get(s0__s3doom *d, const s0__objid *id, uint64_t pack, uint64_t *ms_out,
                   s0_error **err);

/** Forget the pairs rows[0, n) (their objects left the catalog). */
int s0__s3doom_forget(s0__s3doom *d, const s0__objrow *rows, size_t n, s0_error **err);

/** Record rows[0, n) (id and loc) as copies. */
int s0__s3doom_copy_add(s0__s3doom *d, const s0__objrow *rows, size_t n, s0_error **err);

/** Forget the copies rows[0, n) (id, loc.pack). */
int s0__s3doom_copy_forget(s0__s3doom *d, const s0__objrow *rows, size_t n, s0_error **err);

/**
 * The copies of id.
 * @param[out] rows_out  (transfer full) free() it.
 */
int s0__s3doom_copies(s0__s3doom *d, const s0__objid *id, s0__objrow **rows_out,
                      size_t *n_out, s0_error **err);

/** Whether pack holds a recorded copy (then it is not empty). */
int s0__s3doom_pack_has_copies(s0__s3doom *d, uint64_t pack, bool *out, s0_error **err);

#endif
