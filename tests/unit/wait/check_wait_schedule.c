/*
 * The wait schedule on its own (CL-06): option resolution and defaults,
 * the backoff sequence, jitter bounds, the sleep plan with Retry-After and
 * deadline, and the deadline arithmetic. No transport, no clock.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "check_main.h"
#include "client/wait_internal.h"
#include "wait_suites.h"

START_TEST(test_options_init)
{
	s0_wait_options o;
	memset(&o, 0xab, sizeof o);
	ck_assert_int_eq(s0_wait_options_init(&o, S0_WAIT_OPTIONS_VERSION), S0_OK);
	ck_assert_uint_eq(o.version, S0_WAIT_OPTIONS_VERSION);
	ck_assert_int_eq(o.memory, 0);
	ck_assert_int_eq(o.timeout_ms, 0);
	ck_assert(o.progress_cb == NULL);
	ck_assert_ptr_null(o.cancel);
	ck_assert_int_eq(s0_wait_options_init(&o, 99), S0_EINVAL);
	ck_assert_int_eq(s0_wait_options_init(NULL, S0_WAIT_OPTIONS_VERSION), S0_EINVAL);
}
END_TEST

START_TEST(test_resolve_defaults)
{
	s0__wait_cfg c;
	ck_assert_int_eq(s0__wait_resolve(NULL, true, &c, NULL), S0_OK);
	ck_assert_int_eq(c.timeout_ms, 60000);
	ck_assert_int_eq(c.poll_initial_ms, 100);
	ck_assert_int_eq(c.poll_max_ms, 500);
	ck_assert_uint_eq(c.factor_pct, 150);
	ck_assert_uint_eq(c.jitter_pct, 20);
	ck_assert_int_eq(c.memory, S0_BOOL_UNSET);
	ck_assert(!c.memory_mode);

	s0_wait_options o = S0_WAIT_OPTIONS_INIT;
	o.memory = S0_BOOL_TRUE;
	ck_assert_int_eq(s0__wait_resolve(&o, true, &c, NULL), S0_OK);
	ck_assert_int_eq(c.timeout_ms, 360000); /* memory default */
	ck_assert(c.memory_mode);
	ck_assert_int_eq(c.memory, S0_BOOL_TRUE);

	o.memory = S0_BOOL_FALSE;
	ck_assert_int_eq(s0__wait_resolve(&o, true, &c, NULL), S0_OK);
	ck_assert_int_eq(c.timeout_ms, 60000);
	ck_assert(!c.memory_mode);
	ck_assert_int_eq(c.memory, S0_BOOL_FALSE); /* passed through (CL-09) */

	o.memory = S0_BOOL_TRUE; /* generic wait: memory ignored */
	ck_assert_int_eq(s0__wait_resolve(&o, false, &c, NULL), S0_OK);
	ck_assert_int_eq(c.timeout_ms, 60000);
	ck_assert_int_eq(c.memory, S0_BOOL_UNSET);

	o.timeout_ms = S0_TIMEOUT_INFINITE;
	o.flags = S0_WAIT_NO_JITTER;
	ck_assert_int_eq(s0__wait_resolve(&o, true, &c, NULL), S0_OK);
	ck_assert_int_eq(c.timeout_ms, S0_TIMEOUT_INFINITE);
	ck_assert_uint_eq(c.jitter_pct, 0);
}
END_TEST

START_TEST(test_resolve_intervals)
{
	s0__wait_cfg c;
	s0_wait_options o = S0_WAIT_OPTIONS_INIT;
	o.poll_initial_ms = 1000; /* above the default cap: the cap follows */
	ck_assert_int_eq(s0__wait_resolve(&o, true, &c, NULL), S0_OK);
	ck_assert_int_eq(c.poll_initial_ms, 1000);
	ck_assert_int_eq(c.poll_max_ms, 1000);
	o.poll_initial_ms = 0;
	o.poll_max_ms = 50; /* below the default first sleep: it follows */
	ck_assert_int_eq(s0__wait_resolve(&o, true, &c, NULL), S0_OK);
	ck_assert_int_eq(c.poll_initial_ms, 50);
	ck_assert_int_eq(c.poll_max_ms, 50);
	o.poll_initial_ms = 20;
	o.poll_max_ms = 2000;
	o.backoff_factor_pct = 200;
	o.jitter_pct = 5;
	ck_assert_int_eq(s0__wait_resolve(&o, true, &c, NULL), S0_OK);
	ck_assert_int_eq(c.poll_initial_ms, 20);
	ck_assert_int_eq(c.poll_max_ms, 2000);
	ck_assert_uint_eq(c.factor_pct, 200);
	ck_assert_uint_eq(c.jitter_pct, 5);
}
END_TEST

/* CL-06: bad options are S0_EINVAL, with the output untouched. */
START_TEST(test_resolve_invalid)
{
	struct {
		const char *what;
		s0_wait_options o;
		const char *reason;
	} bad[] = {
		{"timeout -2", {.version = 1, .timeout_ms = -2}, "invalid_argument"},
		{"timeout INT64_MIN", {.version = 1, .timeout_ms = INT64_MIN}, "invalid_argument"},
		{"poll_initial -1", {.version = 1, .poll_initial_ms = -1}, "invalid_argument"},
		{"poll_max -1", {.version = 1, .poll_max_ms = -1}, "invalid_argument"},
		{"initial > max", {.version = 1, .poll_initial_ms = 600, .poll_max_ms = 500},
		 "invalid_argument"},
		{"factor 99", {.version = 1, .backoff_factor_pct = 99}, "invalid_argument"},
		{"jitter 101", {.version = 1, .jitter_pct = 101}, "invalid_argument"},
		{"unknown flag", {.version = 1, .flags = 0x80}, "invalid_argument"},
		{"memory 3", {.version = 1, .memory = 3}, "invalid_argument"},
		{"memory -1", {.version = 1, .memory = -1}, "invalid_argument"},
		{"version 0", {.version = 0}, "options_version"},
		{"version 2", {.version = 2}, "options_version"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		s0__wait_cfg c = {.timeout_ms = 12345};
		s0_error *err = NULL;
		ck_assert_msg(s0__wait_resolve(&bad[i].o, true, &c, &err) == S0_EINVAL, "%s",
		              bad[i].what);
		ck_assert_str_eq(s0_error_reason(err), bad[i].reason);
		ck_assert_int_eq(c.timeout_ms, 12345);
		s0_error_free(err);
	}
}
END_TEST

static void expect_sequence(s0__backoff *b, const int64_t *want, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int64_t got = s0__backoff_next(b);
		ck_assert_msg(got == want[i], "sleep %zu: %lld want %lld", i, (long long)got,
		              (long long)want[i]);
	}
}

START_TEST(test_backoff_sequences)
{
	s0__backoff b;
	s0__backoff_init(&b, 100, 500, 150, 0, 1);
	const int64_t dflt[] = {100, 150, 225, 337, 500, 500, 500};
	expect_sequence(&b, dflt, 7);

	s0__backoff_init(&b, 100, 500, 200, 0, 1);
	const int64_t twice[] = {100, 200, 400, 500, 500};
	expect_sequence(&b, twice, 5);

	s0__backoff_init(&b, 70, 500, 100, 0, 1); /* factor 100: constant */
	const int64_t flat[] = {70, 70, 70};
	expect_sequence(&b, flat, 3);

	s0__backoff_init(&b, 1, 5, 101, 0, 1); /* tiny bases still grow */
	const int64_t tiny[] = {1, 2, 3, 4, 5, 5};
	expect_sequence(&b, tiny, 6);

	s0__backoff_init(&b, 900, 500, 150, 0, 1); /* initial above the cap is capped */
	const int64_t capped[] = {500, 500};
	expect_sequence(&b, capped, 2);

	s0__backoff_init(&b, 0, 0, 0, 0, 0); /* degenerate inputs are clamped */
	ck_assert_int_eq(s0__backoff_next(&b), 1);
}
END_TEST

START_TEST(test_backoff_no_overflow)
{
	s0__backoff b;
	s0__backoff_init(&b, INT64_MAX / 2, INT64_MAX, UINT32_MAX, 100, 7);
	for (int i = 0; i < 10; i++) {
		int64_t s = s0__backoff_next(&b);
		ck_assert(s >= 1);
		ck_assert(b.base_ms > 0 && b.base_ms <= INT64_MAX);
	}
	ck_assert_int_eq(b.base_ms, INT64_MAX);
}
END_TEST

/* Jitter only shortens a sleep, by at most jitter_pct, and does spread it. */
START_TEST(test_backoff_jitter_bounds)
{
	s0__backoff b;
	s0__backoff_init(&b, 500, 500, 150, 20, 12345);
	int64_t lo = INT64_MAX, hi = 0, sum = 0;
	const int n = 10000;
	for (int i = 0; i < n; i++) {
		int64_t s = s0__backoff_next(&b);
		ck_assert(s >= 400 && s <= 500);
		lo = s < lo ? s : lo;
		hi = s > hi ? s : hi;
		sum += s;
	}
	ck_assert_int_le(lo, 405);
	ck_assert_int_ge(hi, 495);
	ck_assert(sum / n > 440 && sum / n < 460);

	s0__backoff_init(&b, 10, 10, 150, 100, 99); /* 100%: anywhere in [1, base] */
	for (int i = 0; i < 1000; i++) {
		int64_t s = s0__backoff_next(&b);
		ck_assert(s >= 1 && s <= 10);
	}
}
END_TEST

START_TEST(test_plan_sleep)
{
	const int64_t none = S0__NO_DEADLINE;
	ck_assert_int_eq(s0__wait_plan_sleep(100, -1, 0, none), 100);
	ck_assert_int_eq(s0__wait_plan_sleep(100, 2000, 0, none), 2000);  /* Retry-After wins */
	ck_assert_int_eq(s0__wait_plan_sleep(300, 200, 0, none), 300);    /* backoff wins */
	ck_assert_int_eq(s0__wait_plan_sleep(100, 2000, 0, 1000), 1000);  /* capped by deadline */
	ck_assert_int_eq(s0__wait_plan_sleep(500, -1, 900, 1000), 100);   /* the time left */
	ck_assert_int_eq(s0__wait_plan_sleep(100, -1, 1000, 1000), 0);    /* deadline now */
	ck_assert_int_eq(s0__wait_plan_sleep(100, -1, 1500, 1000), 0);    /* deadline passed */
	ck_assert_int_eq(s0__wait_plan_sleep(100, 0, 0, none), 100);      /* Retry-After: 0 */
}
END_TEST

START_TEST(test_deadline)
{
	ck_assert_int_eq(s0__wait_deadline(1000, 60000), 61000);
	ck_assert_int_eq(s0__wait_deadline(1000, S0_TIMEOUT_INFINITE), S0__NO_DEADLINE);
	ck_assert_int_eq(s0__wait_deadline(INT64_MAX - 5, 100), S0__NO_DEADLINE);
}
END_TEST

Suite *s0_wait_schedule_suite(void)
{
	Suite *s = suite_create("wait_schedule");
	TCase *tc = tcase_create("schedule");
	tcase_add_test(tc, test_options_init);
	tcase_add_test(tc, test_resolve_defaults);
	tcase_add_test(tc, test_resolve_intervals);
	tcase_add_test(tc, test_resolve_invalid);
	tcase_add_test(tc, test_backoff_sequences);
	tcase_add_test(tc, test_backoff_no_overflow);
	tcase_add_test(tc, test_backoff_jitter_bounds);
	tcase_add_test(tc, test_plan_sleep);
	tcase_add_test(tc, test_deadline);
	suite_add_tcase(s, tc);
	return s;
}
