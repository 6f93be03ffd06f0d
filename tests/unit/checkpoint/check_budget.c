/*
 * The reservation budget and the capture phases, on a manual clock that
 * sleeps by advancing (S0_MANUAL_CLOCK_AUTO_ADVANCE). Module-level parts
 * of MFB-07 (capture failure after authorisation: nothing retained),
 * MFB-08 (uncertain capture never reported as retained), MFB-09
 * (preparation expires: cancelled, nothing captured), MFB-10 (a full
 * budget delays, then cancels; a hold released in time lets it through),
 * MFB-11 (an image over the limit fails at admission) and MFB-12 (the
 * reservation returns after finish).
 */
#include "cksuites.h"

#include <stdlib.h>

static ckfix F;
static char *R;

#define BUDGET (64ull << 20)

static void setup(void)
{
	ckfix_open(&F, BUDGET, 32ull << 20);
	R = rtfix_repl(&F.rt);
	free(rtfix_out(&F.rt, R, "alloc 8M"));
}

static void teardown(void)
{
	free(R);
	ckfix_close(&F);
}

static s0__ckpt_budget_usage usage(void)
{
	s0__ckpt_budget_usage u;
	s0__ckpt_budget_usage_get(F.budget, &u);
	return u;
}

static int64_t now(void)
{
	return F.rt.clock.monotonic_ms(F.rt.clock.ctx);
}

static int prepare(int64_t wait_ms, s0__ckpt_prep **p, s0_error **e)
{
	s0__ckpt_prepare_opts o = {.sandbox_id = "sb-1", .clock = &F.rt.clock,
	                           .deadline_ms = wait_ms ? now() + wait_ms : 0, .retry_ms = 250};
	return s0__ckpt_prepare(F.ck, ckfix_src(&F), &o, p, e);
}

START_TEST(admission_limit)
{
	free(rtfix_out(&F.rt, R, "alloc 30M"));
	s0__ckpt_prep *p = NULL;
	s0_error *e = NULL;
	int64_t t0 = now();
	ck_assert_int_eq(prepare(5000, &p, &e), S0_ECONFLICT);
	ASSERT_STR(s0_error_reason(e), "image_too_large");
	ck_assert_ptr_nonnull(strstr(s0_error_message(e), "memory checkpoint exceeds reservation limit"));
	s0_error_free(e);
	ck_assert_int_eq(now(), t0); /* at once: no waiting */
	ck_assert_uint_eq(usage().reserved_bytes, 0);
	ck_assert_uint_eq(usage().refused, 1);
	ck_assert_int_eq(F.calls[S0__CKPT_PREPARE], 0);
	/* zero memory is no image bytes */
	free(rtfix_out(&F.rt, R, "alloc -z 8G"));
	teardown();
	setup();
	free(rtfix_out(&F.rt, R, "alloc -z 8G"));
	ck_assert_int_eq(prepare(0, &p, NULL), S0_OK);
	s0__ckpt_finish(p);
}
END_TEST

START_TEST(full_budget_until_deadline)
{
	s0__ckpt_budget_hold(F.budget, BUDGET);
	s0__ckpt_prep *p = NULL;
	s0_error *e = NULL;
	int64_t t0 = now();
	ck_assert_int_eq(prepare(5000, &p, &e), S0_EUNAVAILABLE);
	ASSERT_STR(s0_error_reason(e), "reservation_unavailable");
	ck_assert_ptr_nonnull(strstr(s0_error_message(e), "memory checkpoint reservation unavailable"));
	s0_error_free(e);
	ck_assert_ptr_null(p);
	ck_assert_int_eq(now() - t0, 5000);
	ck_assert_int_eq(F.calls[S0__CKPT_PREPARE], 21); /* every 250 ms, then the last try */
	ck_assert_uint_eq(usage().reserved_bytes, 0);
	ck_assert_uint_eq(usage().held_bytes, BUDGET);
	ck_assert_int_eq(F.calls[S0__CKPT_AUTHORIZE], 0);
}
END_TEST

START_TEST(hold_released_in_time)
{
	s0__ckpt_budget_hold(F.budget, BUDGET);
	F.unhold_at_call = 4;
	s0__ckpt_prep *p = NULL;
	int64_t t0 = now();
	ck_assert_int_eq(prepare(5000, &p, NULL), S0_OK);
	ck_assert_int_eq(now() - t0, 750);
	ck_assert_uint_gt(usage().reserved_bytes, 8u << 20);
	ck_assert_uint_eq(usage().reservations, 1);
	ck_assert_int_eq(s0__ckpt_authorize(p, NULL), S0_OK);
	s0__ckpt_meta m = {.sandbox_id = "sb-1", .rootfs_generation = "gen-1", .fingerprint = &F.fp};
	s0__ckpt_image_info info;
	ck_assert_int_eq(s0__ckpt_capture(p, ckfix_src(&F), &m, &info, NULL), S0_OK);
	ck_assert_uint_eq(info.upload_reserved, usage().reserved_bytes);
	ck_assert_uint_gt(usage().reserved_bytes, 0); /* held until the source is terminal */
	s0__ckpt_finish(p);
	ck_assert_uint_eq(usage().reserved_bytes, 0); /* MFB-12 */
	ck_assert_uint_eq(usage().reservations, 0);
}
END_TEST

START_TEST(cancel_rules)
{
	s0__ckpt_prep *p;
	ck_assert_int_eq(prepare(0, &p, NULL), S0_OK);
	ck_assert_uint_gt(usage().reserved_bytes, 0);
	ck_assert_int_eq(s0__ckpt_cancel(p, NULL), S0_OK);
	ck_assert_uint_eq(usage().reserved_bytes, 0);
	ck_assert_int_eq(prepare(0, &p, NULL), S0_OK);
	ck_assert_int_eq(s0__ckpt_authorize(p, NULL), S0_OK);
	s0_error *e = NULL;
	ck_assert_int_eq(s0__ckpt_cancel(p, &e), S0_ECONFLICT);
	ASSERT_STR(s0_error_reason(e), "capture_authorized");
	s0_error_free(e);
	e = NULL;
	s0__ckpt_meta m = {.fingerprint = &F.fp};
	s0__ckpt_image_info info;
	ck_assert_int_eq(s0__ckpt_capture(p, ckfix_src(&F), &m, &info, NULL), S0_OK);
	s0__ckpt_finish(p);
	ck_assert_int_eq(prepare(0, &p, NULL), S0_OK);
	/* not authorised */
	ck_assert_int_eq(s0__ckpt_capture(p, ckfix_src(&F), &m, &info, &e), S0_EINVAL);
	s0_error_free(e);
	s0__ckpt_finish(p);
	ck_assert_uint_eq(usage().reserved_bytes, 0);
}
END_TEST

START_TEST(preparation_stall_expires)
{
	F.hold_prepare_until = 1000;
	s0__ckpt_prep *p = NULL;
	s0_error *e = NULL;
	ck_assert_int_eq(prepare(2000, &p, &e), S0_EUNAVAILABLE);
	ASSERT_STR(s0_error_reason(e), "preparation_expired");
	s0_error_free(e);
	e = NULL;
	ck_assert_uint_eq(usage().reserved_bytes, 0);
	/* the sandbox keeps running with its state */
	char *o = rtfix_out(&F.rt, R, "echo alive");
	ASSERT_STR(o, "alive\n");
	free(o);
	F.hold_prepare_until = 0;
	F.verdict[S0__CKPT_PREPARE] = S0__HOOK_FAIL;
	ck_assert_int_eq(prepare(2000, &p, &e), S0_EUNAVAILABLE);
	ASSERT_STR(s0_error_reason(e), "preparation_failed");
	s0_error_free(e);
}
END_TEST

/* A failure at a capture phase: nothing visible, heaps stay dirty. */
static void capture_phase_fails(int phase, int verdict, const char *reason)
{
	s0__objstore_counters c0, c1;
	s0__objstore_counters_get(F.os, &c0);
	F.verdict[phase] = verdict;
	s0__ckpt_image_info info;
	s0_error *e = NULL;
	ck_assert_int_eq(ckfix_capture(&F, &info, &e), S0_EMEMCAPTURE);
	ASSERT_STR(s0_error_reason(e), reason);
	s0_error_free(e);
	F.verdict[phase] = S0__HOOK_PROCEED;
	s0__objstore_counters_get(F.os, &c1);
	ck_assert_uint_eq(c1.batches_committed, c0.batches_committed);
	ck_assert_uint_eq(c1.objects_written, c0.objects_written);
	ck_assert_uint_eq(usage().reserved_bytes, 0);
	s0__heap_stats hs;
	s0__guest_heap_stats(F.rt.g, &hs);
	ck_assert_uint_eq(hs.dirty, 8);
}

START_TEST(capture_failures)
{
	capture_phase_fails(S0__CKPT_AUTHORIZE, S0__HOOK_FAIL, "capture_failed");
	capture_phase_fails(S0__CKPT_CAPTURE, S0__HOOK_FAIL, "capture_failed");
	capture_phase_fails(S0__CKPT_COMMIT, S0__HOOK_FAIL, "capture_failed");
	capture_phase_fails(S0__CKPT_AUTHORIZE, S0__HOOK_UNCERTAIN, "capture_uncertain");
	capture_phase_fails(S0__CKPT_COMMIT, S0__HOOK_UNCERTAIN, "capture_uncertain");
	s0__ckpt_image_info info = ckfix_capture_ok(&F);
	ck_assert_uint_eq(info.chunks_written, 8);
	ck_assert_uint_eq(F.calls[S0__CKPT_COMMIT], 3);
}
END_TEST

START_TEST(budget_object)
{
	s0__ckpt_budget *b;
	ck_assert_int_eq(s0__ckpt_budget_new(0, 0, &b, NULL), S0_EINVAL);
	ck_assert_int_eq(s0__ckpt_budget_new(100, 0, &b, NULL), S0_OK);
	ck_assert_int_eq(s0__ckpt_budget_admit(b, 100, 100, NULL), S0_OK);
	ck_assert_int_eq(s0__ckpt_budget_admit(b, 50, 101, NULL), S0_ECONFLICT);
	ck_assert(s0__ckpt_budget_try(b, 60));
	ck_assert(!s0__ckpt_budget_try(b, 41));
	s0__ckpt_budget_hold(b, 30);
	ck_assert(!s0__ckpt_budget_try(b, 11));
	ck_assert(s0__ckpt_budget_try(b, 10));
	s0__ckpt_budget_unhold(b, 1000);
	s0__ckpt_budget_put(b, 60);
	s0__ckpt_budget_put(b, 10);
	s0__ckpt_budget_usage u;
	s0__ckpt_budget_usage_get(b, &u);
	ck_assert_uint_eq(u.reserved_bytes + u.held_bytes + u.reservations, 0);
	ck_assert_uint_eq(u.refused, 1);
	s0__ckpt_budget_free(b);
}
END_TEST

Suite *ck_budget_suite(void)
{
	Suite *s = suite_create("checkpoint-budget");
	TCase *t = tcase_create("budget");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, admission_limit);
	tcase_add_test(t, full_budget_until_deadline);
	tcase_add_test(t, hold_released_in_time);
	tcase_add_test(t, cancel_rules);
	tcase_add_test(t, preparation_stall_expires);
	tcase_add_test(t, capture_failures);
	tcase_add_test(t, budget_object);
	suite_add_tcase(s, t);
	return s;
}
