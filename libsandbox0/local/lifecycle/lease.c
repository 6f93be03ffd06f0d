/*
 * The threads that keep this node's lease (docs/scaling.md "Leases"): a
 * renewer, apart from the controller, so a lifecycle step blocked longer
 * than the lease (an object-store call retrying, a large upload) never
 * lets the lease lapse; and a watchdog that applies the fencing rule: once
 * the lease has not been proven for three quarters of its length (the
 * store did not answer a renewal), every running runtime here is halted
 * before the lease can expire and another node can take its sandbox over.
 * When the lease is proven again, the controller gives up each halted
 * runtime whose sandbox another node took meanwhile and recovers the others
 * from their last committed head (uncommitted writes are lost, as in any
 * takeover). The watchdog runs only on a shared metadata store: on SQLite
 * no other node can take anything over.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/deadline.h"
#include "local/lifecycle/engine_internal.h"

static int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The watchdog halts runtimes this long before the proven lease ends. */
static int64_t margin(const s0__engine *e)
{
	return e->opt.lease_ms / 4;
}

bool s0__engine_lease_valid(s0__engine *e)
{
	return s0__real_monotonic_ms() < e->fence.valid_mono - margin(e);
}

/* Wait on the threads' condition until monotonic ms `until` or stop;
 * returns false when stopping (caller holds tmu). */
static bool nap(s0__engine *e, int64_t until)
{
	int64_t left = until - s0__real_monotonic_ms();
	if (left > 0 && !e->fence.stop) {
		struct timespec dl = s0__deadline_after_ms(CLOCK_REALTIME, left);
		pthread_cond_timedwait(&e->fence.tcv, &e->fence.tmu, &dl);
	}
	return !e->fence.stop;
}

static void *renewer_main(void *arg)
{
	s0__engine *e = arg;
	int64_t third = e->opt.lease_ms / 3, retry = e->opt.lease_ms / 12 > 20 ? e->opt.lease_ms / 12
	                                                                      : 20;
	int64_t next = s0__real_monotonic_ms() + third;
	pthread_mutex_lock(&e->fence.tmu);
	while (nap(e, next)) {
		if (s0__real_monotonic_ms() < next)
			continue; /* woken early */
		pthread_mutex_unlock(&e->fence.tmu);
		int rc = s0__engine_fence_renew(e, true, NULL);
		if (rc == S0_OK && s0__engine_lease_fenced_any(e))
			s0__engine_kick(e); /* proven again: the controller recovers them */
		pthread_mutex_lock(&e->fence.tmu);
		/* a failed renewal is tried again soon: the watchdog's deadline nears */
		next = s0__real_monotonic_ms() + (rc == S0_OK ? third : retry);
	}
	pthread_mutex_unlock(&e->fence.tmu);
	return NULL;
}

static bool unfenced(const s0__runtime *rt)
{
	return rt->ready && !rt->halted && !rt->fenced;
}

/* Halt every running runtime whose sandbox lock is free (a busy one is
 * tried again on the next round); true when some are left. */
static bool self_fence(s0__engine *e)
{
	size_t k;
	char(*ids)[S0__ID_MAX];
	pthread_mutex_lock(&e->mu);
	bool left = s0__node_pick_ids(&e->node, unfenced, &ids, &k) != S0_OK;
	pthread_mutex_unlock(&e->mu);
	for (size_t i = 0; i < k; i++) {
		s0__sblock *l = s0__engine_trylock(e, ids[i]);
		if (!l) {
			left = true;
			continue;
		}
		pthread_mutex_lock(&e->mu);
		s0__runtime *rt = s0__node_find_sandbox(&e->node, ids[i]);
		bool halt = rt && rt->ready && !rt->halted && !rt->fenced;
		if (halt)
			rt->lease_fenced = true;
		pthread_mutex_unlock(&e->mu);
		if (halt && s0__engine_halt_runtime(e, rt)) {
			e->fence.self_fenced++;
			e->fence.self_fenced_at = wall_ms();
		}
		s0__engine_unlock(e, l);
	}
	free(ids);
	return left;
}

static void *watchdog_main(void *arg)
{
	s0__engine *e = arg;
	int64_t tick = e->opt.lease_ms / 20 > 10 ? e->opt.lease_ms / 20 : 10;
	pthread_mutex_lock(&e->fence.tmu);
	while (nap(e, s0__real_monotonic_ms() + tick)) {
		if (s0__engine_lease_valid(e))
			continue;
		pthread_mutex_unlock(&e->fence.tmu);
		self_fence(e);
		pthread_mutex_lock(&e->fence.tmu);
	}
	pthread_mutex_unlock(&e->fence.tmu);
	return NULL;
}

int s0__engine_lease_start(s0__engine *e, s0_error **err)
{
	e->fence.stop = false;
	if (pthread_create(&e->fence.renewer, NULL, renewer_main, e))
		return s0__error_set(err, S0_ERROR, "thread", "cannot start the lease thread");
	if (e->opt.meta && pthread_create(&e->fence.watchdog, NULL, watchdog_main, e)) {
		pthread_mutex_lock(&e->fence.tmu);
		e->fence.stop = true;
		pthread_cond_broadcast(&e->fence.tcv);
		pthread_mutex_unlock(&e->fence.tmu);
		pthread_join(e->fence.renewer, NULL);
		return s0__error_set(err, S0_ERROR, "thread", "cannot start the lease watchdog");
	}
	e->fence.threads = true;
	return S0_OK;
}

void s0__engine_lease_stop(s0__engine *e)
{
	if (!e->fence.threads)
		return;
	pthread_mutex_lock(&e->fence.tmu);
	e->fence.stop = true;
	pthread_cond_broadcast(&e->fence.tcv);
	pthread_mutex_unlock(&e->fence.tmu);
	pthread_join(e->fence.renewer, NULL);
	if (e->opt.meta)
		pthread_join(e->fence.watchdog, NULL);
	e->fence.threads = false;
}

bool s0__engine_lease_fenced_any(s0__engine *e)
{
	bool any = false;
	pthread_mutex_lock(&e->mu);
	for (s0__runtime *rt = e->node.runtimes; rt && !any; rt = rt->next)
		any = rt->lease_fenced;
	pthread_mutex_unlock(&e->mu);
	return any;
}

/* One halted runtime, its sandbox lock held: given up, or recovered here. */
static void settle(s0__engine *e, const char *id)
{
	pthread_mutex_lock(&e->mu);
	s0__runtime *rt = s0__node_find_sandbox(&e->node, id);
	bool ours = rt && rt->lease_fenced;
	pthread_mutex_unlock(&e->mu);
	if (!ours)
		return;
	s0__gen_owner_row o;
	int rc = s0__meta_gen_owner(e->meta, id, &o, NULL);
	if (rc < 0 && rc != S0_ENOTFOUND)
		return; /* the store: on a later pass */
	/* another node holds it, or claimed a newer generation and released it */
	bool taken = rc == S0_OK && (o.node_id[0] ? strcmp(o.node_id, e->ctld.uid) != 0
	                                          : o.generation > rt->generation);
	if (s0__node_terminal_proof(e->faults, rt, NULL) < 0)
		return; /* capacity stays fenced until the runtime is proven gone */
	s0__engine_release_runtime(e, rt);
	if (taken) {
		pthread_mutex_lock(&e->mu);
		e->fence.superseded++; /* another node runs it now */
		pthread_mutex_unlock(&e->mu);
		return;
	}
	/* still this node's: as after a restart, from the last committed head */
	s0__engine_recover_locked(e, id);
}

static bool lease_fenced(const s0__runtime *rt)
{
	return rt->lease_fenced;
}

void s0__engine_lease_recover(s0__engine *e)
{
	size_t k;
	char(*ids)[S0__ID_MAX];
	pthread_mutex_lock(&e->mu);
	s0__node_pick_ids(&e->node, lease_fenced, &ids, &k);
	pthread_mutex_unlock(&e->mu);
	for (size_t i = 0; i < k; i++) {
		s0__sblock *l = s0__engine_lock(e, ids[i]);
		settle(e, ids[i]);
		s0__engine_unlock(e, l);
	}
	free(ids);
}
