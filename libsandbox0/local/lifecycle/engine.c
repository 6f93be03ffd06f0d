/* Engine object: open/close, locks, ids, the controller thread. */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/deadline.h"
#include "local/lifecycle/engine_internal.h"
#include "local/lifecycle/engine_open.h"

int64_t s0__engine_now(s0__engine *e)
{
	return e->opt.clock.now_unix_ms(e->opt.clock.ctx);
}

int64_t s0__engine_latest_recorded_ms(s0__engine *e)
{
	return s0__meta_latest_time(e->meta);
}

void s0__engine_new_id(const char *prefix, char *out, size_t n)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
	unsigned char rnd[12];
	char body[13];
	randombytes_buf(rnd, sizeof rnd);
	for (size_t i = 0; i < sizeof rnd; i++)
		body[i] = alphabet[rnd[i] & 31];
	body[12] = '\0';
	snprintf(out, n, "%s%s", prefix, body);
}

/* The lock record of id with one more reference (NULL when out of memory). */
static s0__sblock *lock_ref(s0__engine *e, const char *id)
{
	pthread_mutex_lock(&e->mu);
	s0__sblock *l = e->locks;
	while (l && strcmp(l->id, id))
		l = l->next;
	if (!l) {
		l = calloc(1, sizeof *l);
		if (!l) {
			pthread_mutex_unlock(&e->mu);
			return NULL;
		}
		s0__strlcpy(l->id, id, sizeof l->id);
		pthread_mutex_init(&l->mu, NULL);
		l->next = e->locks;
		e->locks = l;
	}
	l->refs++;
	pthread_mutex_unlock(&e->mu);
	return l;
}

/* Drop a reference taken by lock_ref (the record goes with the last one). */
static void unref(s0__engine *e, s0__sblock *l)
{
	pthread_mutex_lock(&e->mu);
	if (--l->refs == 0) {
		for (s0__sblock **p = &e->locks; *p; p = &(*p)->next)
			if (*p == l) {
				*p = l->next;
				break;
			}
		pthread_mutex_destroy(&l->mu);
		free(l);
	}
	pthread_mutex_unlock(&e->mu);
}

s0__sblock *s0__engine_lock(s0__engine *e, const char *id)
{
	s0__sblock *l = lock_ref(e, id);
	if (l)
		pthread_mutex_lock(&l->mu);
	return l;
}

s0__sblock *s0__engine_trylock(s0__engine *e, const char *id)
{
	s0__sblock *l = lock_ref(e, id);
	if (l && pthread_mutex_trylock(&l->mu) != 0) {
		unref(e, l);
		return NULL;
	}
	return l;
}

void s0__engine_unlock(s0__engine *e, s0__sblock *l)
{
	if (!l)
		return;
	pthread_mutex_unlock(&l->mu);
	unref(e, l);
}

int s0__engine_load(s0__engine *e, const char *team, const char *id, s0__sandbox_row *row,
                    s0_error **err)
{
	if (s0__is_blank(id) || strlen(id) >= S0__ID_MAX)
		return s0__error_set(err, S0_ENOTFOUND, "not_found", "sandbox not found");
	return s0__meta_sandbox_get(e->meta, team, id, row, err);
}

int s0__engine_load_live(s0__engine *e, const char *team, const char *id, s0__sandbox_row *row,
                         s0_error **err)
{
	int rc = s0__engine_load(e, team, id, row, err);
	if (rc == S0_OK && row->rec.status == S0_STATUS_TERMINATING)
		rc = s0__error_set(err, S0_ENOTFOUND, "not_found", "sandbox not found");
	return rc;
}

int s0__engine_save(s0__engine *e, s0__sandbox_row *row, s0_error **err)
{
	row->rec.updated_at_ms = s0__engine_now(e);
	int rc = s0__meta_sandbox_put(e->meta, row, err);
	/* inside a transaction this comes before the commit; s0__op_advance
	 * bumps again after it (watch.h: early wakes are allowed, missed ones not) */
	if (rc == S0_OK)
		s0__engine_watch_bump(e->watch, row->rec.id);
	return rc;
}

s0__engine_watch *s0__engine_watch_of(s0__engine *e)
{
	return e->watch;
}

s0__wake *s0__engine_wake_get(s0__engine *e, const char *id)
{
	for (s0__wake *w = e->wakes; w; w = w->next)
		if (!strcmp(w->id, id))
			return w;
	s0__wake *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	s0__strlcpy(w->id, id, sizeof w->id);
	w->next = e->wakes;
	e->wakes = w;
	return w;
}

/* ---- controller ---- */

void s0__engine_kick(s0__engine *e)
{
	pthread_mutex_lock(&e->mu);
	e->kicks++;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
}

static void *controller_main(void *arg)
{
	s0__engine *e = arg;
	pthread_mutex_lock(&e->mu);
	while (!e->stopping) {
		if (!e->kicks) {
			/* periodic pass: real-clock TTLs and retries of held operations */
			struct timespec dl = s0__deadline_after_ms(CLOCK_REALTIME, 100);
			pthread_cond_timedwait(&e->cv, &e->mu, &dl);
			if (e->stopping)
				break;
			if (!e->kicks && !e->retry_pending && e->opt.manual_clock)
				continue; /* manual clock: only kicks and retries run passes */
		}
		e->kicks = 0;
		e->busy++;
		pthread_mutex_unlock(&e->mu);
		s0__engine_controller_pass(e);
		pthread_mutex_lock(&e->mu);
		e->busy--;
		pthread_cond_broadcast(&e->cv);
	}
	pthread_mutex_unlock(&e->mu);
	return NULL;
}

int s0__engine_controller_start(s0__engine *e, s0_error **err)
{
	e->stopping = false;
	if (pthread_create(&e->controller, NULL, controller_main, e))
		return s0__error_set(err, S0_ERROR, "thread", "cannot start the controller thread");
	e->controller_running = true;
	s0__engine_kick(e);
	return S0_OK;
}

void s0__engine_controller_stop(s0__engine *e)
{
	if (!e->controller_running)
		return;
	pthread_mutex_lock(&e->mu);
	e->stopping = true;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
	pthread_join(e->controller, NULL);
	e->controller_running = false;
}

int s0__engine_quiesce(s0__engine *e, int64_t timeout_ms)
{
	int64_t until = s0__real_monotonic_ms() + timeout_ms;
	pthread_mutex_lock(&e->mu);
	while (e->kicks || e->busy) {
		int64_t left = until - s0__real_monotonic_ms();
		if (left <= 0)
			break;
		struct timespec dl = s0__deadline_after_ms(CLOCK_REALTIME, left < 50 ? left : 50);
		pthread_cond_timedwait(&e->cv, &e->mu, &dl);
	}
	int rc = e->kicks || e->busy ? S0_ETIMEDOUT : S0_OK;
	pthread_mutex_unlock(&e->mu);
	return rc;
}

void s0__engine_controller_pass(s0__engine *e)
{
	/* the lease is renewed by its own thread (lease.c) */
	s0__engine_failover_scan(e); /* sandboxes of nodes whose lease lapsed */
	s0__meta_snapshot_expire(e->meta, s0__engine_now(e), NULL);
	s0__engine_crash_scan(e);
	s0__engine_ttl_scan(e);
	s0__engine_run_limit_scan(e);
	s0__op_row *ops = NULL;
	size_t n = 0;
	bool again = false;
	if (s0__meta_op_pending(e->meta, &ops, &n, NULL) == S0_OK) {
		for (size_t i = 0; i < n; i++) {
			s0__op_kind k = ops[i].kind;
			/* another node's sandbox: its own controller runs the step */
			s0__owner_kind own;
			if (s0__engine_owner(e, ops[i].sandbox_id, &own, NULL, 0, NULL) < 0) {
				again = true; /* the store is unreachable: retried */
				continue;
			}
			if (own != S0__OWNER_HERE)
				continue;
			int rc = s0__op_kind_is_delete(k)          ? s0__engine_run_delete(e, &ops[i])
			         : k == S0__OP_RECOVER         ? s0__engine_run_recover(e, &ops[i])
			         : k == S0__OP_RESUME_FALLBACK ? s0__engine_run_fallback(e, &ops[i])
			                                       : s0__engine_run_pause(e, &ops[i]);
			if (rc != S0_OK)
				again = true;
		}
		free(ops);
	} else {
		again = true; /* the store is unreachable: retried like a held step */
	}
	pthread_mutex_lock(&e->mu);
	e->retry_pending = again;
	bool gc = e->gc_wanted;
	e->gc_wanted = false;
	pthread_mutex_unlock(&e->mu);
	if (gc)
		s0__engine_gc(e, NULL); /* safe beside publishes; a failure waits for the next delete */
}
