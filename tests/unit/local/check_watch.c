/*
 * Waits that end when the work ends (issue #22): the engine's change
 * notification (local/lifecycle/watch.h) and the in-process waits woken by
 * it. Everything runs on the manual clock, which nobody advances: a wait
 * that returned did so because the engine committed, not because time
 * passed (docs/behaviours.md CL-01, CL-04, CL-06 over the in-process
 * transport).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "local/lifecycle/engine_internal.h"
#include "local/local_internal.h"
#include "lt.h"
#include "suites.h"

/* pause_and_wait, resume_and_wait and s0_sandbox_wait return after the
 * commit with the clock where it was (the old wait slept 100 ms first). */
START_TEST(wait_ends_at_commit_without_clock_advance)
{
	LT_ROW("CL-01");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/dirty", "some bytes to publish");
	int64_t t0 = s0_local_now_unix_ms(t.local);
	lt_pause(&t, id); /* asserts the paused state */
	ck_assert_int_eq(s0_local_now_unix_ms(t.local), t0);
	lt_resume(&t, id);
	ck_assert_int_eq(s0_local_now_unix_ms(t.local), t0);

	/* the generic wait, after a plain pause */
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_pause(t.c, id, S0_BOOL_UNSET, &lr, &e_));
	s0_lifecycle_result_free(lr);
	s0_wait_options wo = S0_WAIT_OPTIONS_INIT;
	s0_sandbox_info *sb = NULL;
	LT_OK(s0_sandbox_wait(t.c, id, S0_STATUS_MASK(S0_STATUS_PAUSED), NULL, &wo, &sb, &e_));
	ck_assert_int_eq(s0_sandbox_info_status(sb), S0_STATUS_PAUSED);
	s0_sandbox_info_free(sb);
	ck_assert_int_eq(s0_local_now_unix_ms(t.local), t0);
	free(id);
	lt_close(&t);
}
END_TEST

static void count_fire(void *arg)
{
	(*(int *)arg)++;
}

/* Versions grow on every commit; a subscription fires once when the
 * version passes its value (at once when it already has), never after
 * unsubscribe; a delete moves the id to the floor, past every version. */
START_TEST(watch_versions_and_subscriptions)
{
	LT_ROW("CL-06");
	lt t;
	lt_open(&t, NULL);
	s0__engine *e = s0__local_engine(t.local);
	char *id = lt_claim(&t, NULL, NULL);
	uint64_t v0 = s0__engine_watch_version(s0__engine_watch_of(e), id);
	ck_assert_uint_gt(v0, 0);
	int fired = 0, late = 0, now = 0;
	s0__engine_watch *w = s0__engine_watch_of(e);
	s0__engine_watch_arm *sub = s0__engine_watch_arm_once(w, id, v0, count_fire, &fired);
	s0__engine_watch_arm *sub2 = s0__engine_watch_arm_once(w, id, v0, count_fire, &late);
	ck_assert_ptr_nonnull(sub);
	ck_assert_int_eq(fired, 0);
	s0__engine_watch_disarm(w, sub2);
	lt_pause(&t, id);
	lt_quiesce(&t); /* the pause's steps after paused (release) move it too */
	uint64_t v1 = s0__engine_watch_version(s0__engine_watch_of(e), id);
	ck_assert_uint_gt(v1, v0);
	ck_assert_int_eq(fired, 1);
	ck_assert_int_eq(late, 0);
	s0__engine_watch_disarm(w, sub); /* already fired: just freed */
	s0__engine_watch_arm *sub3 = s0__engine_watch_arm_once(w, id, v0, count_fire, &now);
	ck_assert_ptr_nonnull(sub3);
	ck_assert_int_eq(now, 1); /* passed already: at once */
	s0__engine_watch_disarm(w, sub3);

	/* another sandbox's commits do not move this one */
	char *other = lt_claim(&t, NULL, NULL);
	ck_assert_uint_eq(s0__engine_watch_version(s0__engine_watch_of(e), id), v1);

	/* a waiter on an unknown id and one on the deleted id both wake */
	uint64_t unknown = s0__engine_watch_version(s0__engine_watch_of(e), "sb_neverclaimed");
	int gone = 0, never = 0;
	s0__engine_watch_arm *a1 = s0__engine_watch_arm_once(
		w, other, s0__engine_watch_version(w, other), count_fire, &gone);
	s0__engine_watch_arm *a2 =
		s0__engine_watch_arm_once(w, "sb_neverclaimed", unknown, count_fire, &never);
	LT_OK(s0_sandbox_delete(t.c, other, &e_));
	lt_quiesce(&t);
	ck_assert_int_eq(gone, 1);
	ck_assert_int_eq(never, 1);
	s0__engine_watch_disarm(w, a1);
	s0__engine_watch_disarm(w, a2);
	ck_assert_uint_gt(s0__engine_watch_version(s0__engine_watch_of(e), other), v1);
	free(other);
	free(id);
	lt_close(&t);
}
END_TEST

typedef struct waiter {
	s0__engine *e;
	const char *id;
	uint64_t since, got;
	s0_cancel_token *cancel;
	int rc;
} waiter;

static void *wait_main(void *arg)
{
	waiter *w = arg;
	w->rc = s0__engine_watch_wait(w->e, w->id, w->since, S0_TIMEOUT_INFINITE, w->cancel,
	                              &w->got);
	return NULL;
}

/* The blocking form: a thread blocked with no deadline wakes at the pause's
 * commit; a timeout that has come and a fired cancel end it without one. */
START_TEST(watch_wait_blocks_until_change)
{
	LT_ROW("CL-06");
	lt t;
	lt_open(&t, NULL);
	s0__engine *e = s0__local_engine(t.local);
	char *id = lt_claim(&t, NULL, NULL);
	int64_t t0 = s0_local_now_unix_ms(t.local);
	waiter w = {.e = e, .id = id, .since = s0__engine_watch_version(s0__engine_watch_of(e), id)};
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, wait_main, &w), 0);
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_pause(t.c, id, S0_BOOL_UNSET, &lr, &e_)); /* the controller commits */
	s0_lifecycle_result_free(lr);
	pthread_join(th, NULL);
	ck_assert_int_eq(w.rc, S0_OK);
	ck_assert_uint_gt(w.got, w.since);
	ck_assert_int_eq(s0_local_now_unix_ms(t.local), t0);
	/* The waiter woke at the pause's first change; its later steps move the
	 * version too, so the checks below start from the finished pause. */
	lt_pause(&t, id);
	lt_quiesce(&t);

	uint64_t v = s0__engine_watch_version(s0__engine_watch_of(e), id);
	ck_assert_int_eq(s0__engine_watch_wait(e, id, v, 0, NULL, NULL), S0_ETIMEDOUT);
	ck_assert_int_eq(s0__engine_watch_wait(e, id, v - 1, 0, NULL, NULL), S0_OK);
	s0_cancel_token *tok = NULL;
	LT_OK(s0_cancel_token_new(&tok, &e_));
	waiter c = {.e = e, .id = id, .since = v, .cancel = tok};
	ck_assert_int_eq(pthread_create(&th, NULL, wait_main, &c), 0);
	s0_cancel_token_cancel(tok); /* before or during its sleep: either way it ends */
	pthread_join(th, NULL);
	ck_assert_int_eq(c.rc, S0_ECANCELED);
	s0_cancel_token_free(tok);
	free(id);
	lt_close(&t);
}
END_TEST

/* ST-03: a runtime that lost file changes (gvisor: inotify's IN_Q_OVERFLOW) says
 * "invalidate" on any path; every file watch of the sandbox gets one, on its path. */
START_TEST(runtime_invalidate_reaches_every_watch)
{
	LT_ROW("ST-03");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	s0_stream_options o = S0_STREAM_OPTIONS_INIT;
	o.kind = S0_STREAM_FILES_WATCH;
	o.sandbox_id = id;
	s0_stream *st = NULL;
	ck_assert_int_eq(s0_local_stream_open(t.local, &o, &st, NULL), S0_OK);
	const char *sub = "{\"action\":\"subscribe\",\"path\":\"/workspace\"}";
	ck_assert_int_eq(s0_stream_send(st, sub, strlen(sub), NULL), S0_OK);
	char *m = NULL;
	ck_assert_int_eq(s0_stream_recv(st, 5000, &m, NULL, NULL), S0_OK);
	ck_assert_ptr_nonnull(strstr(m, "\"subscribed\""));
	s0_free(m);
	s0__engine_watch_files_event(s0__engine_watch_of(s0__local_engine(t.local)), id,
	                             "invalidate", "/");
	ck_assert_int_eq(s0_stream_recv(st, 5000, &m, NULL, NULL), S0_OK);
	ck_assert_ptr_nonnull(strstr(m, "\"event\":\"invalidate\",\"path\":\"/workspace\""));
	s0_free(m);
	s0_stream_free(st);
	free(id);
	lt_close(&t);
}
END_TEST

Suite *s0_local_watch_suite(void)
{
	Suite *s = suite_create("local-watch");
	TCase *tc = tcase_create("watch");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, wait_ends_at_commit_without_clock_advance);
	tcase_add_test(tc, watch_versions_and_subscriptions);
	tcase_add_test(tc, watch_wait_blocks_until_change);
	tcase_add_test(tc, runtime_invalidate_reaches_every_watch);
	suite_add_tcase(s, tc);
	return s;
}
