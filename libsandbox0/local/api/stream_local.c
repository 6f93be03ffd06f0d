/*
 * The in-process streams (sandbox0/streams.h; s0_local_stream_open() and
 * s0_stream_open() on an in-process client): the stream objects of stream.h
 * driven by the caller's thread — send runs the stream's input at once, recv
 * pulls (waiting on the stream's kicks and its retry time) until a message
 * is ready.
 */
#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/stream_vt.h"
#include "common/deadline.h"
#include "local/api/router.h"
#include "local/api/stream.h"
#include "local/api/stream_local.h"

typedef struct lstream {
	s0_stream base; /* first: the public handle */
	s0__stream *st;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool kicked;      /* under mu */
	s0__smsgq queue;  /* messages not yet received (the caller's thread only) */
	int close_code;   /* 0 while it goes on */
	char reason[128];
	bool counted;
} lstream;

static void kick(void *arg)
{
	lstream *s = arg;
	pthread_mutex_lock(&s->mu);
	s->kicked = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static void ended(lstream *s, int code)
{
	if (s->close_code)
		return;
	s->close_code = code;
	s0__strlcpy(s->reason, s0__stream_close_reason(s->st), sizeof s->reason);
}

static const s0__stream_vt local_vt;

int s0__stream_local_open(s0__engine *e, const char *team, const s0_stream_options *opts,
                          s0_stream **out, s0_error **err)
{
	int rc = s0__stream_options_check(opts, err);
	if (rc < 0)
		return rc;
	lstream *s = calloc(1, sizeof *s);
	if (!s)
		return s0__error_nomem(err);
	s->base.vt = &local_vt;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->kicked = true; /* the first pull */
	char after[24];
	snprintf(after, sizeof after, "%lld", (long long)opts->after);
	static const s0__stream_kind kinds[] = {0, S0__STREAM_CONTEXT, S0__STREAM_SESSION,
	                                        S0__STREAM_WATCH};
	s0__stream_open_req req = {
		.kind = kinds[opts->kind],
		.team = team,
		.sandbox_id = opts->sandbox_id,
		.id2 = opts->kind == S0_STREAM_FILES_WATCH ? NULL : opts->id,
		.after = after,
		.wake_budget_ms = opts->wake_timeout_ms ? opts->wake_timeout_ms
		                                        : S0__ROUTER_WAKE_BUDGET_MS,
	};
	rc = s0__stream_open(e, &req, kick, s, &s->st, err);
	if (rc < 0) {
		pthread_cond_destroy(&s->cv);
		pthread_mutex_destroy(&s->mu);
		free(s);
		return rc;
	}
	s0__obj_inc();
	s->counted = true;
	*out = &s->base;
	return S0_OK;
}

static int local_send(s0_stream *base, const char *json, size_t len, s0_error **err)
{
	lstream *s = (lstream *)base;
	if (len > S0__STREAM_MSG_MAX)
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "a message of at most %zu bytes is required", S0__STREAM_MSG_MAX);
	if (s->close_code)
		return s0__error_set(err, S0_EGONE, "stream_closed", "the stream has ended (%d %s)",
		                     s->close_code, s->reason);
	int code = s0__stream_input(s->st, json, len, &s->queue);
	if (code > 0)
		ended(s, code);
	return S0_OK;
}

/* Wait until kicked, or ms pass (< 0: no bound). */
static void wait_kick(lstream *s, int64_t ms)
{
	pthread_mutex_lock(&s->mu);
	if (!s->kicked && ms != 0) {
		/* the condition runs on CLOCK_REALTIME by default: wait in small real steps */
		int64_t step = ms < 0 || ms > 1000 ? 1000 : ms;
		struct timespec until = s0__deadline_after_ms(CLOCK_REALTIME, step);
		pthread_cond_timedwait(&s->cv, &s->mu, &until);
	}
	pthread_mutex_unlock(&s->mu);
}

static int64_t ms_left(struct timespec until)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)(until.tv_sec - now.tv_sec) * 1000 + (until.tv_nsec - now.tv_nsec) / 1000000;
}

static int local_recv(s0_stream *base, int64_t timeout_ms, char **msg_out, size_t *len_out,
                      s0_error **err)
{
	lstream *s = (lstream *)base;
	struct timespec until = s0__deadline_after_ms(CLOCK_MONOTONIC, timeout_ms);
	int64_t retry_at_left = -1;
	for (;;) {
		int taken = s0__smsgq_take(&s->queue, msg_out, len_out, err);
		if (taken)
			return taken < 0 ? taken : S0_OK;
		if (s->close_code)
			return s0__error_set(err, S0_ITEROVER, "stream_closed",
			                     "the stream has ended (%d %s)", s->close_code, s->reason);
		pthread_mutex_lock(&s->mu);
		bool pull = s->kicked;
		s->kicked = false;
		pthread_mutex_unlock(&s->mu);
		if (pull || retry_at_left == 0) {
			int64_t retry = 0;
			int code = s0__stream_pull(s->st, S0__STREAM_QUEUE_MAX, &s->queue, &retry);
			if (code > 0)
				ended(s, code);
			retry_at_left = retry > 0 ? retry : -1;
			continue;
		}
		int64_t left = timeout_ms == S0_TIMEOUT_INFINITE ? -1 : ms_left(until);
		if (left <= 0 && timeout_ms != S0_TIMEOUT_INFINITE)
			return s0__error_set(err, S0_ETIMEDOUT, "timeout", "no message within %lld ms",
			                     (long long)timeout_ms);
		int64_t wait = retry_at_left > 0 && (left < 0 || retry_at_left < left) ? retry_at_left
		                                                                       : left;
		struct timespec w0;
		clock_gettime(CLOCK_MONOTONIC, &w0);
		wait_kick(s, wait);
		if (retry_at_left > 0) {
			int64_t spent = -ms_left(w0);
			retry_at_left = spent >= retry_at_left ? 0 : retry_at_left - spent;
		}
	}
}

static int local_close_code(const s0_stream *base, const char **reason_out)
{
	const lstream *s = (const lstream *)base;
	if (reason_out)
		*reason_out = s->reason;
	return s->close_code;
}

static void local_free(s0_stream *base)
{
	lstream *s = (lstream *)base;
	s0__stream_free(s->st);
	s0__smsgq_clear(&s->queue);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	if (s->counted)
		s0__obj_dec();
	free(s);
}

static const s0__stream_vt local_vt = {local_send, local_recv, local_close_code, local_free};
