/*
 * Runtime access for files, contexts and sessions (TTL-05..TTL-11, GW-01..GW-04;
 * docs/decisions.md "Auto-resume on access"):
 * a running sandbox is pinned for one request; a paused one with
 * auto_resume is woken by a wake thread while the request waits up to its
 * budget on the engine clock, then gets 503 "sandbox is waking up" and the
 * resume goes on. A failed wake answers 503 sandbox_resume_failed to the
 * requests that waited for it.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/deadline.h"
#include "local/lifecycle/engine_internal.h"

struct s0__runtime_access {
	s0__engine *e;
	s0__runtime *rt;
};

typedef struct wake_job {
	s0__engine *e;
	char id[S0__ID_MAX];
	int attempt;
} wake_job;

static void *wake_main(void *arg)
{
	wake_job *j = arg;
	s0__resume_reply reply;
	/* an automatic wake follows the committed state: a retained memory
	 * image is restored when compatible (TTL-05..TTL-11) */
	int rc = s0__engine_resume_wake(j->e, j->id, &reply);
	pthread_mutex_lock(&j->e->mu);
	s0__wake *w = s0__engine_wake_get(j->e, j->id);
	if (w) {
		w->running = false;
		if (rc < 0)
			w->failed_attempt = j->attempt;
	}
	j->e->wake_threads--;
	pthread_cond_broadcast(&j->e->cv);
	pthread_mutex_unlock(&j->e->mu);
	free(j);
	return NULL;
}

/* Start a wake attempt (under e->mu); returns its number, or 0 on failure. */
static int start_wake(s0__engine *e, s0__wake *w)
{
	wake_job *j = calloc(1, sizeof *j);
	if (!j)
		return 0;
	j->e = e;
	s0__strlcpy(j->id, w->id, sizeof j->id);
	j->attempt = ++w->attempt;
	w->running = true;
	pthread_t t;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	int bad = pthread_create(&t, &a, wake_main, j);
	pthread_attr_destroy(&a);
	if (bad) {
		w->running = false;
		free(j);
		return 0;
	}
	e->wake_threads++;
	return j->attempt;
}

/* A wake that failed or is still going is worth another try: Retry-After: 1. */
static int retry_soon(s0_error **err, int rc)
{
	if (err && *err)
		s0__error_set_http(*err, 0, NULL, NULL, 1000);
	return rc;
}

/* Pin the running runtime of row (under e->mu). */
static s0__runtime *pin(s0__engine *e, const s0__sandbox_row *row)
{
	if (row->rec.status != S0_STATUS_RUNNING || row->rec.paused)
		return NULL;
	s0__runtime *rt = s0__node_find(&e->node, row->rec.runtime_id);
	if (!rt || rt->fenced || rt->barrier || !rt->ready)
		return NULL;
	rt->pins++;
	rt->requests++;
	return rt;
}

static void wait_a_little(s0__engine *e)
{
	struct timespec dl = s0__deadline_after_ms(CLOCK_REALTIME, 10);
	pthread_cond_timedwait(&e->cv, &e->mu, &dl);
}

/* One look at the sandbox: 1 = pinned, 0 = keep waiting, <0 = error. */
static int try_access(s0__engine *e, const char *team, const char *id, int *my_attempt,
                      s0__runtime **rt, s0_error **err)
{
	s0__sandbox_row row = {0};
	int rc = s0__engine_load(e, team, id, &row, err);
	if (rc < 0)
		return rc;
	if (row.rec.status == S0_STATUS_TERMINATING) {
		s0__sandbox_rec_clear(&row.rec);
		return s0__error_set(err, S0_ENOTFOUND, "not_found", "sandbox not found");
	}
	/* it runs on another node (a stream, or a call that could not be
	 * forwarded, local/api/forward.c): no wake here, which would wait for
	 * a runtime this node never gets */
	s0__owner_kind own = S0__OWNER_HERE;
	pthread_mutex_lock(&e->mu);
	bool here = s0__node_find(&e->node, row.rec.runtime_id) != NULL;
	pthread_mutex_unlock(&e->mu);
	if (row.rec.runtime_id[0] && !row.rec.paused && !here &&
	    s0__engine_owner(e, id, &own, NULL, 0, NULL) == S0_OK && own != S0__OWNER_HERE) {
		s0__sandbox_rec_clear(&row.rec);
		return retry_soon(err, s0__error_set(err, S0_EUNAVAILABLE, "unavailable",
		                                     "sandbox runs on another node: call that node"));
	}
	pthread_mutex_lock(&e->mu);
	*rt = pin(e, &row);
	s0__runtime *bound = *rt ? NULL : s0__node_find(&e->node, row.rec.runtime_id);
	bool barrier = bound && bound->barrier && !bound->fenced;
	s0__wake *w = *rt || barrier ? NULL : s0__engine_wake_get(e, id);
	if (*rt)
		rc = 1;
	else if (barrier)
		rc = 0; /* a snapshot's brief barrier: wait for it */
	else if (!row.rec.auto_resume)
		rc = s0__error_set(err, S0_EUNAVAILABLE, "auto_resume_disabled",
		                   "sandbox is not running and auto_resume is disabled");
	else if (!w)
		rc = s0__error_nomem(err);
	else if (w->running)
		*my_attempt = w->attempt;
	else if (*my_attempt && w->failed_attempt == *my_attempt)
		rc = retry_soon(err, s0__error_set(err, S0_ERESUME, "resume_failed",
		                                   "sandbox resume failed"));
	else if (!(*my_attempt = start_wake(e, w)))
		rc = s0__error_set(err, S0_EUNAVAILABLE, "unavailable", "sandbox unavailable");
	if (rc == 0)
		wait_a_little(e);
	pthread_mutex_unlock(&e->mu);
	s0__sandbox_rec_clear(&row.rec);
	return rc;
}

int s0__engine_runtime_begin(s0__engine *e, const char *team, const char *id,
                             int64_t wake_budget_ms, s0__runtime_access **out, s0_error **err)
{
	s0__runtime_access *a = calloc(1, sizeof *a);
	if (!a)
		return s0__error_nomem(err);
	int64_t deadline = s0__engine_now(e) + wake_budget_ms;
	int attempt = 0, rc;
	while ((rc = try_access(e, team, id, &attempt, &a->rt, err)) == 0) {
		if (s0__engine_now(e) >= deadline) {
			rc = retry_soon(err, s0__error_set(err, S0_EUNAVAILABLE, "waking_up",
			                                   "sandbox is waking up"));
			break;
		}
	}
	if (rc < 0) {
		free(a);
		return rc;
	}
	a->e = e;
	*out = a;
	return S0_OK;
}

int s0__engine_runtime_pin_running(s0__engine *e, const char *team, const char *id,
                                   s0__runtime_access **out, s0_error **err)
{
	s0__runtime_access *a = calloc(1, sizeof *a);
	s0__sandbox_row row = {0};
	int rc = a ? s0__engine_load(e, team, id, &row, err) : s0__error_nomem(err);
	if (rc == S0_OK) {
		pthread_mutex_lock(&e->mu);
		a->rt = row.rec.status == S0_STATUS_TERMINATING ? NULL : pin(e, &row);
		pthread_mutex_unlock(&e->mu);
		s0__sandbox_rec_clear(&row.rec);
		if (!a->rt)
			rc = s0__error_set(err, S0_EUNAVAILABLE, "not_running", "sandbox is not running");
	}
	if (rc < 0) {
		free(a);
		return rc;
	}
	a->e = e;
	*out = a;
	return S0_OK;
}

void s0__engine_runtime_end(s0__runtime_access *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->e->mu);
	a->rt->pins--;
	pthread_cond_broadcast(&a->e->cv);
	pthread_mutex_unlock(&a->e->mu);
	free(a);
}

s0__runtime *s0__runtime_access_runtime(s0__runtime_access *a)
{
	return a->rt;
}

s0__engine *s0__runtime_access_engine(s0__runtime_access *a)
{
	return a->e;
}

const struct s0__files_ns *s0__runtime_access_files(s0__runtime_access *a)
{
	return a->rt->drv->files(a->rt->gen);
}

int s0__runtime_access_proc(s0__runtime_access *a, s0__rt_proc_call *call, cJSON **data_out,
                            int *status_out, s0_error **err)
{
	bool ses = call->op >= S0__RT_SES_CREATE;
	uint32_t need = ses ? S0__RT_CAP_SESSIONS : S0__RT_CAP_CONTEXTS;
	if (!(a->e->rt_caps & need))
		return s0__error_set(err, S0_EUNAVAILABLE, "unsupported",
		                     "the %s runtime has no %s", a->e->rt_drv->name,
		                     ses ? "sessions" : "contexts");
	if (ses && !(call->sessions = s0__engine_sessions(a->e, a->rt->sandbox_id,
	                                                  a->rt->generation)))
		return s0__error_nomem(err);
	s0__engine_guest_sync(a->e, a->rt);
	return a->rt->drv->proc_call(a->rt->gen, call, data_out, status_out, err);
}
