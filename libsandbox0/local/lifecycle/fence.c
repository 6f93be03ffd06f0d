/*
 * This node's lease in the metadata store and the claim of each runtime
 * generation before it starts (meta.h "nodes and fencing",
 * docs/scaling.md): two processes acting as nodes of one store never run
 * the same generation of a sandbox. Lease times are the wall clock (they
 * are compared between nodes), never the engine's manual clock.
 */
#include <string.h>
#include <time.h>

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
	int64_t epoch = 0;
	int rc = s0__meta_node_lease(e->meta, e->ctld.uid, wall_ms(), e->opt.lease_ms, &epoch, err);
	if (rc == S0_OK) {
		e->fence.epoch = epoch;
		e->fence.renewed_mono = e->fence.held_since_mono = s0__real_monotonic_ms();
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
	int64_t epoch = f->epoch;
	s0_error *lost = NULL;
	int rc = epoch ? s0__meta_node_lease(e->meta, e->ctld.uid, wall_ms(), e->opt.lease_ms, &epoch,
	                                     &lost)
	               : S0_ECONFLICT;
	if (rc == S0_OK) {
		f->renewed_mono = s0__real_monotonic_ms();
		f->renewals++;
	} else if (rc == S0_ECONFLICT) { /* lapsed while idle, or never taken */
		rc = acquire(e, err);
		if (rc == S0_OK)
			f->reacquisitions++;
	} else if (err) {
		*err = lost;
		lost = NULL;
	}
	s0_error_free(lost);
	return rc;
}

void s0__engine_fence_renew(s0__engine *e)
{
	pthread_mutex_lock(&e->fence.mu);
	keep(e, false, NULL);
	pthread_mutex_unlock(&e->fence.mu);
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
