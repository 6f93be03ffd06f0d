/*
 * This node's lease in the metadata store, the claim of each runtime
 * generation before it starts, and the fencing check of the transactions
 * that change a sandbox (meta.h "nodes and fencing", docs/scaling.md
 * "Leases"): two processes acting as nodes of one store never run the same
 * generation of a sandbox, and a node whose sandbox was taken over commits
 * nothing more of it. Lease times are the wall clock (they are compared
 * between nodes), never the engine's manual clock; the threads that renew
 * the lease are in lease.c.
 */
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "local/lifecycle/engine_internal.h"

static int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Acquire a new epoch (caller holds f->mu). */
static int acquire(s0__engine *e, s0_error **err)
{
	int64_t epoch = 0, sent = s0__real_monotonic_ms();
	int rc = s0__meta_node_lease(e->meta, e->ctld.uid, wall_ms(), e->opt.lease_ms, &epoch, err);
	if (rc == S0_OK) {
		e->fence.epoch = epoch;
		e->fence.renewed_mono = e->fence.held_since_mono = s0__real_monotonic_ms();
		e->fence.valid_mono = sent + e->opt.lease_ms;
	} else {
		e->fence.renew_failures++;
	}
	return rc;
}

int s0__engine_fence_open(s0__engine *e, s0_error **err)
{
	pthread_mutex_lock(&e->fence.mu);
	int rc = acquire(e, err);
	pthread_mutex_unlock(&e->fence.mu);
	return rc;
}

/* Renew when due or lost (caller holds f->mu); S0_OK or the store's. */
static int keep(s0__engine *e, bool force, s0_error **err)
{
	s0__fence *f = &e->fence;
	if (!force && s0__real_monotonic_ms() - f->renewed_mono < e->opt.lease_ms / 3)
		return S0_OK;
	int64_t epoch = f->epoch, sent = s0__real_monotonic_ms();
	s0_error *lost = NULL;
	int rc = epoch ? s0__meta_node_lease(e->meta, e->ctld.uid, wall_ms(), e->opt.lease_ms, &epoch,
	                                     &lost)
	               : S0_ECONFLICT;
	if (rc == S0_OK) {
		f->renewed_mono = s0__real_monotonic_ms();
		f->valid_mono = sent + e->opt.lease_ms;
		f->renewals++;
	} else if (rc == S0_ECONFLICT) { /* lapsed while idle, or never taken */
		rc = acquire(e, err);
		if (rc == S0_OK)
			f->reacquisitions++;
	} else {
		f->renew_failures++;
		if (err) {
			*err = lost;
			lost = NULL;
		}
	}
	s0_error_free(lost);
	return rc;
}

int s0__engine_fence_renew(s0__engine *e, bool force, s0_error **err)
{
	pthread_mutex_lock(&e->fence.mu);
	int rc = keep(e, force, err);
	pthread_mutex_unlock(&e->fence.mu);
	return rc;
}

int s0__engine_fence_check(s0__engine *e, const char *sandbox_id, int64_t generation,
                           s0_error **err)
{
	s0_error *cerr = NULL;
	int rc = s0__meta_gen_check(e->meta, sandbox_id, e->ctld.uid, e->fence.epoch,
	                            generation < 0 ? 0 : generation, &cerr);
	if (rc == S0_ECONFLICT)
		e->fence.refused++;
	if (err && !*err)
		*err = cerr;
	else
		s0_error_free(cerr);
	return rc;
}

/* Further attempts at a transaction that another node's aborted. */
#define SAVE_CONFLICT_RETRIES 4

int s0__engine_save_fenced(s0__engine *e, s0__sandbox_row *row, int64_t generation,
                           s0_error **err)
{
	for (int attempt = 0;; attempt++) {
		s0_error *terr = NULL;
		int rc = s0__meta_begin(e->meta, &terr);
		if (rc == S0_OK) {
			rc = s0__engine_fence_check(e, row->rec.id, generation, &terr);
			if (rc == S0_OK)
				rc = s0__engine_save(e, row, &terr);
			if (rc == S0_OK)
				rc = s0__meta_commit(e->meta, &terr);
			else
				s0__meta_rollback(e->meta);
		}
		if (rc == S0_OK)
			s0__engine_watch_bump(e->watch, row->rec.id); /* committed: visible now */
		if (rc == S0_OK || attempt == SAVE_CONFLICT_RETRIES ||
		    strcmp(s0_error_reason(terr), "meta_conflict")) {
			if (err && !*err)
				*err = terr;
			else
				s0_error_free(terr);
			return rc;
		}
		s0_error_free(terr);
		struct timespec ts = {0, (long)(1 + randombytes_uniform(5)) * 1000000L};
		nanosleep(&ts, NULL);
	}
}

int s0__engine_fence_claim(s0__engine *e, const char *sandbox_id, int64_t generation,
                           s0_error **err)
{
	pthread_mutex_lock(&e->fence.mu);
	int rc = keep(e, false, err);
	s0_error *cerr = NULL;
	if (rc == S0_OK)
		rc = s0__meta_gen_claim(e->meta, sandbox_id, generation, e->ctld.uid, e->fence.epoch,
		                        wall_ms(), &cerr);
	if (rc == S0_ECONFLICT && !strcmp(s0_error_reason(cerr), "node_lease_lost")) {
		s0_error_free(cerr);
		cerr = NULL;
		rc = keep(e, true, err);
		if (rc == S0_OK)
			rc = s0__meta_gen_claim(e->meta, sandbox_id, generation, e->ctld.uid,
			                        e->fence.epoch, wall_ms(), &cerr);
	}
	pthread_mutex_unlock(&e->fence.mu);
	if (cerr && err && !*err) {
		*err = cerr;
		cerr = NULL;
	}
	s0_error_free(cerr);
	return rc;
}
