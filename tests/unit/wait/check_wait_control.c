/*
 * Wait control: argument checks before any request (CL-06), the progress
 * callback and S0_EUSER, cancellation from another thread while sleeping
 * and while a request is in flight (CL-07), jitter on the clock, waits
 * without a deadline, and a randomised check of the POST rules (CL-08,
 * CL-09): every repeat of a memory request carries memory:true and follows
 * a successful inspection GET.
 */
#include <check.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "common/cancel.h"
#include "fake_transport.h"
#include "wait_suites.h"

enum { OP_PAUSE, OP_RESUME, OP_WAIT };

static int run_op(int op, ft *f, const char *id, const s0_wait_options *o,
                  s0_sandbox_info **out, s0_error **err)
{
	switch (op) {
	case OP_PAUSE:
		return s0_sandbox_pause_and_wait(f ? f->client : NULL, id, o, out, err);
	case OP_RESUME:
		return s0_sandbox_resume_and_wait(f ? f->client : NULL, id, o, out, err);
	default:
		return s0_sandbox_wait(f ? f->client : NULL, id, S0_STATUS_MASK(S0_STATUS_RUNNING),
		                       NULL, o, out, err);
	}
}

/* CL-06: negative timeouts and other bad arguments: S0_EINVAL, zero requests. */
START_TEST(test_invalid_before_any_request)
{
	static const ft_step script[] = {SB_FOREVER("running,0,1"), END};
	int64_t live = s0_live_objects();
	struct {
		const char *what;
		s0_wait_options o;
		const char *id;
	} bad[] = {
		{"timeout -5", {.version = 1, .timeout_ms = -5}, FT_SANDBOX_ID},
		{"timeout -1000", {.version = 1, .timeout_ms = -1000, .memory = 1}, FT_SANDBOX_ID},
		{"poll_initial -1", {.version = 1, .poll_initial_ms = -1}, FT_SANDBOX_ID},
		{"poll_max -10", {.version = 1, .poll_max_ms = -10}, FT_SANDBOX_ID},
		{"factor 50", {.version = 1, .backoff_factor_pct = 50}, FT_SANDBOX_ID},
		{"jitter 150", {.version = 1, .jitter_pct = 150}, FT_SANDBOX_ID},
		{"bad version", {.version = 7}, FT_SANDBOX_ID},
		{"NULL id", {.version = 1}, NULL},
		{"blank id", {.version = 1}, "  "},
	};
	for (int op = OP_PAUSE; op <= OP_WAIT; op++) {
		for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
			ft *f = ft_new(script, true);
			s0_sandbox_info *out = (s0_sandbox_info *)0x1;
			s0_error *err = NULL;
			int rc = run_op(op, f, bad[i].id, &bad[i].o, &out, &err);
			ck_assert_msg(rc == S0_EINVAL, "op %d %s: rc %d", op, bad[i].what, rc);
			ck_assert_int_eq(s0_error_code(err), S0_EINVAL);
			ck_assert_msg(f->nrec == 0, "op %d %s: %zu requests", op, bad[i].what, f->nrec);
			ck_assert_ptr_eq(out, (s0_sandbox_info *)0x1); /* untouched */
			s0_error_free(err);
			ft_free(f);
		}
	}
	/* memory values other than the tri-state are rejected for pause/resume */
	ft *f = ft_new(script, true);
	s0_wait_options o = {.version = 1, .memory = 3};
	ck_assert_int_eq(s0_sandbox_pause_and_wait(f->client, FT_SANDBOX_ID, &o, NULL, NULL),
	                 S0_EINVAL);
	ck_assert_int_eq(s0_sandbox_resume_and_wait(f->client, FT_SANDBOX_ID, &o, NULL, NULL),
	                 S0_EINVAL);
	/* the generic wait needs a mask or a predicate; a NULL client is rejected */
	ck_assert_int_eq(s0_sandbox_wait(f->client, FT_SANDBOX_ID, 0, NULL, NULL, NULL, NULL),
	                 S0_EINVAL);
	ck_assert_int_eq(s0_sandbox_pause_and_wait(NULL, FT_SANDBOX_ID, NULL, NULL, NULL),
	                 S0_EINVAL);
	ck_assert_uint_eq(f->nrec, 0);
	ft_free(f);
	ck_assert_int_eq(s0_live_objects(), live);
}
END_TEST

/* ---- progress callback ---- */

typedef struct progress_log {
	char text[1024];
	int calls;
	int abort_at; /* return non-zero on this call (1-based), 0 never */
} progress_log;

static int progress(const s0_sandbox_info *i, int64_t elapsed_ms, void *payload)
{
	progress_log *p = payload;
	char spec[64], item[128];
	ft_spec_of(i, spec, sizeof spec);
	snprintf(item, sizeof item, "%s%s/%s@%" PRId64, p->calls ? "; " : "", spec,
	         s0_sandbox_info_runtime_id(i), elapsed_ms);
	strncat(p->text, item, sizeof p->text - strlen(p->text) - 1);
	return ++p->calls == p->abort_at;
}

/* First observation and every change of (status, paused, generation, runtime_id). */
START_TEST(test_progress_sequence)
{
	static const ft_step script[] = {
		SB("paused,1,3"), RESUME_OK("false"), SB("paused,1,3"), SB("starting,1,4"),
		SB("starting,1,4"), SB("starting,1,5"), SB("running,0,5"), END};
	ft *f = ft_new(script, true);
	progress_log p = {.calls = 0};
	s0_wait_options o = S0_WAIT_OPTIONS_INIT;
	o.memory = S0_BOOL_TRUE;
	o.flags = S0_WAIT_NO_JITTER;
	o.progress_cb = progress;
	o.payload = &p;
	s0_sandbox_info *out = NULL;
	ck_assert_int_eq(s0_sandbox_resume_and_wait(f->client, FT_SANDBOX_ID, &o, &out, NULL),
	                 S0_OK);
	/* GETs at 0 (before), 0, 100, 250, 475, 812 */
	ck_assert_str_eq(p.text, "paused,1,3/@0; starting,1,4/rt-4@100; starting,1,5/rt-5@475; "
	                         "running,0,5/rt-5@812");
	ck_assert_int_eq(p.calls, 4);
	s0_sandbox_info_free(out);
	ft_free(f);
}
END_TEST

START_TEST(test_progress_runtime_id_change)
{
	static const ft_step script[] = {
		SB("running,0,1"),
		OK_BODY(200, "{\"id\":\"sb_1\",\"status\":\"running\",\"paused\":false,"
		             "\"runtime_generation\":1,\"runtime_id\":\"rt-other\"}"),
		ERR(404, "not_found", "sandbox not found"), END};
	ft *f = ft_new(script, true);
	progress_log p = {.calls = 0};
	s0_wait_options o = S0_WAIT_OPTIONS_INIT;
	o.flags = S0_WAIT_NO_JITTER | S0_WAIT_NOTFOUND_OK;
	o.progress_cb = progress;
	o.payload = &p;
	s0_sandbox_info *out = (s0_sandbox_info *)0x1;
	ck_assert_int_eq(s0_sandbox_wait(f->client, FT_SANDBOX_ID,
	                                 S0_STATUS_MASK(S0_STATUS_TERMINATING), NULL, &o, &out, NULL),
	                 S0_OK);
	ck_assert_ptr_null(out); /* deleted: success without a sandbox */
	ck_assert_str_eq(p.text, "running,0,1/rt-1@0; running,0,1/rt-other@100");
	ft_free(f);
}
END_TEST

/* A callback returning non-zero stops the wait with S0_EUSER and no more requests. */
START_TEST(test_progress_abort)
{
	static const ft_step script[] = {PAUSE_OK(200, "false", "running"), SB("running,0,1"),
	                                 SB("running,0,1"), SB("starting,0,1"), SB("paused,1,1"),
	                                 END};
	int64_t live = s0_live_objects();
	ft *f = ft_new(script, true);
	progress_log p = {.abort_at = 2};
	s0_wait_options o = S0_WAIT_OPTIONS_INIT;
	o.flags = S0_WAIT_NO_JITTER;
	o.progress_cb = progress;
	o.payload = &p;
	s0_error *err = NULL;
	ck_assert_int_eq(s0_sandbox_pause_and_wait(f->client, FT_SANDBOX_ID, &o, NULL, &err),
	                 S0_EUSER);
	ck_assert_int_eq(s0_error_code(err), S0_EUSER);
	char log[256], spec[64];
	ft_log(f, log, sizeof log);
	ck_assert_str_eq(log, "POST /pause, GET, GET, GET");
	ft_spec_of(s0_error_last_sandbox(err), spec, sizeof spec);
	ck_assert_str_eq(spec, "starting,0,1");
	ck_assert_int_eq(p.calls, 2);
	s0_error_free(err);
	ft_free(f);
	ck_assert_int_eq(s0_live_objects(), live);
}
END_TEST

/* ---- cancellation (CL-07) ---- */

typedef struct canceller {
	s0_cancel_token *tok;
	int64_t after_ms;
	int64_t fired_at; /* real monotonic ms */
} canceller;

static void *cancel_later(void *arg)
{
	canceller *k = arg;
	s0__cancel_sleep(NULL, k->after_ms);
	k->fired_at = s0__real_monotonic_ms();
	s0_cancel_token_cancel(k->tok);
	return NULL;
}

/*
 * Run op on the real clock with short intervals and fire a token from
 * another thread after_ms later: the wait must return S0_ECANCELED within
 * 100 ms of the cancel.
 */
static void cancel_case(const ft_step *script, int op, bool client_token, const char *want_log)
{
	int64_t live = s0_live_objects();
	ft *f = ft_new(script, false);
	s0_cancel_token *wait_tok = NULL;
	s0_cancel_token_new(&wait_tok, NULL);
	canceller k = {.tok = client_token ? f->client_cancel : wait_tok, .after_ms = 60};
	s0_wait_options o = S0_WAIT_OPTIONS_INIT;
	o.poll_initial_ms = 10;
	o.poll_max_ms = 40;
	o.cancel = wait_tok;
	pthread_t th;
	pthread_create(&th, NULL, cancel_later, &k);
	s0_error *err = NULL;
	int rc = run_op(op, f, FT_SANDBOX_ID, &o, NULL, &err);
	int64_t returned = s0__real_monotonic_ms();
	pthread_join(th, NULL);
	ck_assert_msg(rc == S0_ECANCELED, "rc %s: %s", s0_code_name(rc), s0_error_message(err));
	ck_assert_str_eq(s0_error_reason(err), "canceled");
	ck_assert_str_eq(s0_error_sandbox_id(err), FT_SANDBOX_ID);
	ck_assert_msg(returned - k.fired_at < 100, "returned %" PRId64 " ms after cancel",
	              returned - k.fired_at);
	ck_assert_msg(k.fired_at > 0, "returned before the cancel");
	if (want_log) {
		char log[256];
		ft_log(f, log, sizeof log);
		ck_assert_str_eq(log, want_log);
	}
	ck_assert(f->nrec > 0);
	s0_error_free(err);
	ft_free(f);
	s0_cancel_token_free(wait_tok);
	ck_assert_int_eq(s0_live_objects(), live);
}

START_TEST(test_cancel_while_sleeping)
{
	static const ft_step script[] = {PAUSE_OK(200, "false", "running"),
	                                 SB_FOREVER("running,0,1"), END};
	cancel_case(script, OP_PAUSE, false, NULL);
}
END_TEST

START_TEST(test_cancel_in_flight)
{
	static const ft_step script[] = {PAUSE_OK(200, "false", "running"), BLOCK, END};
	cancel_case(script, OP_PAUSE, false, "POST /pause, GET");
}
END_TEST

START_TEST(test_cancel_in_flight_post)
{
	static const ft_step script[] = {SB("paused,1,3"), BLOCK, END};
	cancel_case(script, OP_RESUME, false, "GET, POST /resume");
}
END_TEST

START_TEST(test_client_token_cancels_sleep)
{
	static const ft_step script[] = {SB_FOREVER("starting,0,1"), END};
	cancel_case(script, OP_WAIT, true, NULL);
}
END_TEST

START_TEST(test_client_token_cancels_in_flight)
{
	static const ft_step script[] = {SB("starting,0,1"), BLOCK, END};
	cancel_case(script, OP_WAIT, true, "GET, GET");
}
END_TEST

/* A token fired before the call: S0_ECANCELED and no request at all. */
START_TEST(test_cancel_before_start)
{
	static const ft_step script[] = {SB_FOREVER("running,0,1"), END};
	ft *f = ft_new(script, true);
	s0_cancel_token *tok = NULL;
	s0_cancel_token_new(&tok, NULL);
	s0_cancel_token_cancel(tok);
	s0_wait_options o = S0_WAIT_OPTIONS_INIT;
	o.cancel = tok;
	for (int op = OP_PAUSE; op <= OP_WAIT; op++)
		ck_assert_int_eq(run_op(op, f, FT_SANDBOX_ID, &o, NULL, NULL), S0_ECANCELED);
	ck_assert_uint_eq(f->nrec, 0);
	ft_free(f);
	s0_cancel_token_free(tok);
}
END_TEST

/* The server script fires the token mid-request ("cancel now"). */
START_TEST(test_cancel_now_step)
{
	static const ft_step script[] = {PAUSE_OK(200, "false", "running"), SB("running,0,1"),
	                                 CANCEL_NOW, SB("paused,1,1"), END};
	ft *f = ft_new(script, true);
	s0_cancel_token *tok = NULL;
	s0_cancel_token_new(&tok, NULL);
	f->fire = tok;
	s0_wait_options o = S0_WAIT_OPTIONS_INIT;
	o.flags = S0_WAIT_NO_JITTER;
	o.cancel = tok;
	s0_error *err = NULL;
	ck_assert_int_eq(s0_sandbox_pause_and_wait(f->client, FT_SANDBOX_ID, &o, NULL, &err),
	                 S0_ECANCELED);
	char log[256], spec[64];
	ft_log(f, log, sizeof log);
	ck_assert_str_eq(log, "POST /pause, GET, GET");
	ft_spec_of(s0_error_last_sandbox(err), spec, sizeof spec);
	ck_assert_str_eq(spec, "running,0,1");
	ck_assert_int_eq(ft_now(f), 100); /* returned at once, no further sleep */
	s0_error_free(err);
	ft_free(f);
	s0_cancel_token_free(tok);
}
END_TEST

/* ---- schedule on the clock ---- */

/* Default jitter: each gap lies in [0.8, 1.0] of the backoff step, capped by the deadline. */
START_TEST(test_jitter_on_clock)
{
	static const ft_step script[] = {SB_FOREVER("starting,0,1"), END};
	ft *f = ft_new(script, true);
	s0_wait_options o = S0_WAIT_OPTIONS_INIT;
	o.timeout_ms = 5000;
	ck_assert_int_eq(s0_sandbox_wait(f->client, FT_SANDBOX_ID,
	                                 S0_STATUS_MASK(S0_STATUS_RUNNING), NULL, &o, NULL, NULL),
	                 S0_ETIMEDOUT);
	const int64_t base[] = {100, 150, 225, 337};
	bool spread = false;
	for (size_t i = 1; i < f->nrec; i++) {
		int64_t gap = f->rec[i].at_ms - f->rec[i - 1].at_ms;
		int64_t b = i - 1 < 4 ? base[i - 1] : 500;
		ck_assert_msg(gap >= b - b / 5 && gap <= b, "gap %zu: %" PRId64 " (base %" PRId64 ")",
		              i, gap, b);
		spread |= gap != b;
	}
	ck_assert(spread);
	ck_assert_int_eq(ft_now(f), 5000);
	ft_free(f);
}
END_TEST

/* S0_TIMEOUT_INFINITE: no deadline, requests get the client's own timeout. */
START_TEST(test_no_deadline)
{
	const int n = 1000;
	ft_step *script = calloc((size_t)n + 2, sizeof *script);
	ft_step starting = SB("starting,0,1"), running = SB("running,0,1");
	for (int i = 0; i < n; i++)
		script[i] = starting;
	script[n] = running;
	ft *f = ft_new(script, true);
	s0_wait_options o = S0_WAIT_OPTIONS_INIT;
	o.timeout_ms = S0_TIMEOUT_INFINITE;
	o.flags = S0_WAIT_NO_JITTER;
	s0_sandbox_info *out = NULL;
	ck_assert_int_eq(s0_sandbox_wait(f->client, FT_SANDBOX_ID,
	                                 S0_STATUS_MASK(S0_STATUS_RUNNING), NULL, &o, &out, NULL),
	                 S0_OK);
	ck_assert_uint_eq(f->nrec, (size_t)n + 1);
	ck_assert_int_gt(ft_now(f), 360000); /* past every default budget */
	for (size_t i = 0; i < f->nrec; i++)
		ck_assert_int_eq(f->rec[i].timeout_ms, 120000);
	ck_assert_int_eq(s0_sandbox_info_status(out), S0_STATUS_RUNNING);
	s0_sandbox_info_free(out);
	ft_free(f);
	free(script);
}
END_TEST

/* ---- randomised POST rules (CL-08, CL-09) ---- */

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A GET answered 2xx with an object: a successful inspection. */
static bool step_is_success(const ft_step *s)
{
	return s->kind == FT_RESPOND && s->status >= 200 && s->status < 300;
}

/*
 * Random server answers (each answers whichever request comes) for memory
 * pause and resume. Whatever happens: every POST is {"memory":true}, a
 * repeated POST always follows a GET that returned a sandbox, and the call
 * ends by its deadline.
 */
START_TEST(test_random_post_rules)
{
	const ft_step pool[] = {
		FAIL_SENT, FAIL_UNSENT, ERR(502, "unavailable", "bad gateway"),
		ERR(504, "unavailable", "timed out waiting for sandbox to pause"), WAKING_UP,
		ERR_H(429, "quota_exceeded", "rate", "Retry-After: 1"), ERR(500, "internal_error", "x"),
		SB("running,0,1"), SB("running,0,1"), SB("paused,0,1"), SB("starting,1,2"),
		SB("paused,1,1"), SB("failed,1,1"), SB("running,0,2"), PAUSE_OK(200, "false", "running"),
		RESUME_OK("false")};
	const size_t npool = sizeof pool / sizeof pool[0];
	uint64_t seed = 0x5eed1234abcdULL;
	long iters = s0_test_iterations(300);
	int64_t live = s0_live_objects();
	for (long it = 0; it < iters; it++) {
		ft_step script[42];
		size_t n = 1 + rnd(&seed) % 38;
		for (size_t i = 0; i < n; i++)
			script[i] = pool[rnd(&seed) % npool];
		ft_step loop = LOOP, tail = SB("running,0,1"), end = END;
		script[n] = loop;
		script[n + 1] = tail;
		script[n + 2] = end;
		ft *f = ft_new(script, true);
		s0_wait_options o = S0_WAIT_OPTIONS_INIT;
		o.memory = S0_BOOL_TRUE;
		o.timeout_ms = 3000;
		int op = (it & 1) ? OP_RESUME : OP_PAUSE;
		s0_sandbox_info *out = NULL;
		s0_error *err = NULL;
		int rc = run_op(op, f, FT_SANDBOX_ID, &o, &out, &err);
		ck_assert(rc <= 0);
		ck_assert(ft_now(f) <= 3000);
		bool inspected = true;
		int posts = 0;
		for (size_t i = 0; i < f->nrec; i++) {
			const ft_record *r = &f->rec[i];
			const ft_step *s = i < n ? &script[i] : &tail;
			if (!strcmp(r->method, "POST")) {
				ck_assert_msg(r->body && !strcmp(r->body, "{\"memory\":true}"),
				              "iteration %ld: POST body %s", it, r->body ? r->body : "none");
				ck_assert_msg(posts == 0 || inspected,
				              "iteration %ld: POST %zu without an inspection", it, i);
				posts++;
				inspected = false;
			} else if (step_is_success(s)) {
				inspected = true;
			}
		}
		if (rc == S0_OK)
			ck_assert_ptr_nonnull(out);
		s0_sandbox_info_free(out);
		s0_error_free(err);
		ft_free(f);
	}
	ck_assert_int_eq(s0_live_objects(), live);
}
END_TEST

Suite *s0_wait_control_suite(void)
{
	Suite *s = suite_create("wait_control");
	TCase *tc = tcase_create("control");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_invalid_before_any_request);
	tcase_add_test(tc, test_progress_sequence);
	tcase_add_test(tc, test_progress_runtime_id_change);
	tcase_add_test(tc, test_progress_abort);
	tcase_add_test(tc, test_cancel_while_sleeping);
	tcase_add_test(tc, test_cancel_in_flight);
	tcase_add_test(tc, test_cancel_in_flight_post);
	tcase_add_test(tc, test_client_token_cancels_sleep);
	tcase_add_test(tc, test_client_token_cancels_in_flight);
	tcase_add_test(tc, test_cancel_before_start);
	tcase_add_test(tc, test_cancel_now_step);
	tcase_add_test(tc, test_jitter_on_clock);
	tcase_add_test(tc, test_no_deadline);
	tcase_add_test(tc, test_random_post_rules);
	suite_add_tcase(s, tc);
	return s;
}
