/*
 * Private state of the S3 backend, shared by objs3.c (open, reads,
 * listing, accounting, delete), objs3_batch.c (batches, commit),
 * objs3_upload.c (pack PUTs) and s3pack.c (packs and their indexes in the
 * bucket).
 */
#ifndef S0_OBJS3_IMPL_H
#define S0_OBJS3_IMPL_H

#include <pthread.h>
#include <stdint.h>

#include "local/objects/pack/catalog.h"
#include "local/objects/s3/objs3.h"
#include "local/objects/s3/s3cache.h"
#include "local/objects/s3/s3conf.h"
#include "local/objects/s3/s3doom.h"
#include "local/objects/s3/s3http.h"

/** A tombstone key applied by this node (s3tomb.h). */
typedef struct s0__s3tomb_seen {
	uint64_t ms;
	uint32_t rnd;
} s0__s3tomb_seen;

typedef struct s0__objs3 {
	char *dir;
	int tmp_fd; /* <dir>/upload */
	int lock_fd;
	s0__s3 *s3;
	s0__s3cache *cache;
	s0__objcat *cat;     /* <dir>/index.db: where each known object lies */
	pthread_mutex_t mu;  /* next_batch, fail_after */
	uint64_t next_batch; /* temp name prefix of the next batch */
	pthread_mutex_t refresh_mu; /* one index refresh at a time */
	uint64_t refreshes;         /* refreshes started (under refresh_mu) */
	uint64_t complete;          /* number of the last refresh that read every index */
	uint64_t *pending;          /* listed, unread index ids, newest first (under refresh_mu) */
	size_t n_pending;
	long fail_after;            /* test hook: pack PUTs left before failing; -1 off */
	uint64_t gc_grace_ms;       /* GC spares packs younger than this (s3tomb.h) */
	s0__s3doom *doom;           /* <dir>/doomed.db (s3doom.h) */
	uint64_t list_ms;           /* when the last listing (GC's) started; under mu */
	uint64_t clock_shift_ms;    /* test hook: added to the GC clock; under mu */
	pthread_mutex_t tomb_mu;    /* one tombstone sync at a time; the fields below */
	uint64_t tomb_marker;       /* ms of the newest tombstone applied */
	s0__s3tomb_seen *tombs;     /* tombstones applied within the listing window */
	size_t n_tombs, cap_tombs;
} s0__objs3;

int s0__objs3_begin(void *ctx, void **batch_out, s0_error **err);
int s0__objs3_put(void *ctx, void *batch, const s0__objid *id, const void *sealed, size_t len,
                  bool *stored_out, s0_error **err);
int s0__objs3_commit(void *ctx, void *batch, s0_error **err);
void s0__objs3_abort(void *ctx, void *batch);
/**
 * Resolve a pack of a commit that did not finish: HEAD its index; when there
 * is none, DELETE the pack (an orphan no listing would show). Returns
 * whether the pack's fate is settled (index present, or pack deleted).
 */
bool s0__objs3_drop_unindexed(s0__objs3 *s, uint64_t pack);
/**
 * Whether has() may answer true for id: the catalog places it (*loc_out)
 * and no tombstone doomed it there (s3doom.h).
 */
int s0__objs3_trusted(s0__objs3 *s, const s0__objid *id, s0__objloc *loc_out, bool *out,
                      s0_error **err);

/**
 * has() of a batch: whether id was put in batch (not yet committed), else
 * whether the catalog holds it, unless the batch's tombstone sync failed
 * (then false). A catalog hit is remembered: the commit checks no
 * tombstone removed it meanwhile (s3tomb.h).
 */
int s0__objs3_batch_has(s0__objs3 *s, void *batch, const s0__objid *id, bool *out,
                        s0_error **err);

#endif
