/*
 * Deletions every node sees (tombstones) and the GC grace of the S3 backend.
 *
 * Each node answers has() from its own catalog (s3pack.h), so a deletion
 * made by one node's GC must reach the others before they dedupe a new
 * generation against the deleted object. In the bucket (below the store's
 * prefix):
 *   d/<16 hex ms>-<8 hex random>   a tombstone: "S0TD" | u32 version (1) |
 *                u32 count, then per object its 32-byte id and u64 pack id
 *                (little-endian); written by a GC's delete BEFORE the
 *                catalog rows go and any pack is deleted, never modified
 *
 * Protocol (docs/local-backend.md "Deletion across nodes"):
 *   - delete, step 1: objects in packs younger than the grace (gc_grace_s)
 *     are skipped (another node's commit may not be published yet); the
 *     others not doomed yet go into one tombstone, then are doomed here
 *     (s3doom.h: has() false, reads still work).
 *   - delete, step 2: a doomed object a GC finds unreferenced again, with a
 *     listing that started at least the grace after the doom, leaves the
 *     catalog; packs without live objects or copies then leave the bucket.
 *     A grace of 0 (one node) does both steps at once.
 *   - batch begin: one LIST of d/ after this node's marker; every tombstone
 *     not applied yet is read and applied (its pairs are doomed). A begin
 *     that cannot sync marks the batch untrusting: its has() answers from
 *     the batch only (everything is uploaded again).
 *   - commit of a batch whose has() answered true from the catalog: sync
 *     again after the packs are PUT; a reused object doomed meanwhile fails
 *     the commit (S0_EUNAVAILABLE, retryable: the retry uploads it).
 * The listing starts S0__S3TOMB_SKEW_MS before the newest tombstone applied
 * (clocks of nodes differ; a PUT may finish after a later-named one was
 * listed), and remembers the keys applied in that window. The marker is
 * kept in <store dir>/tombs (losing it costs a re-read, applying is
 * idempotent).
 *
 * Thread safety: every function is safe from any thread.
 */
#ifndef S0_S3TOMB_H
#define S0_S3TOMB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"
#include "local/objects/pack/catalog.h"
#include "local/objects/s3/objs3_impl.h"

/** How far before the newest applied tombstone a sync lists again (10 min). */
#define S0__S3TOMB_SKEW_MS ((uint64_t)600000)

/** Milliseconds since 1970 (CLOCK_REALTIME). */
uint64_t s0__s3tomb_now_ms(void);

/** The store's clock for the GC grace: now plus the test shift
 * (s0__objs3_clock_shift()). */
uint64_t s0__s3tomb_clock(s0__objs3 *s);

/** Whether pack (s3pack.h's time-ordered id) is younger than s's GC grace. */
bool s0__s3tomb_young(s0__objs3 *s, uint64_t pack);

/**
 * PUT one tombstone naming rows[0, n) (id and loc.pack of each); n == 0 is a
 * no-op.
 * @retval S0_EUNAVAILABLE / S0_EAUTH / S0_EIO  the endpoint's answers.
 * @retval S0_ENOMEM
 */
int s0__s3tomb_write(s0__objs3 *s, const s0__objrow *rows, size_t n, s0_error **err);

/**
 * Read and apply the tombstones this node has not applied (one LIST, one
 * GET per new tombstone). Blocks on the endpoint.
 * @retval S0_EUNAVAILABLE / S0_EAUTH / S0_EIO  the endpoint's answers.
 * @retval S0_ECORRUPT reason "object_tombstone_corrupt": a tombstone is damaged.
 * @retval S0_ENOMEM
 */
int s0__s3tomb_sync(s0__objs3 *s, s0_error **err);

/** Read the marker from <dir>/tombs (at open). */
void s0__s3tomb_load(s0__objs3 *s);

#endif
