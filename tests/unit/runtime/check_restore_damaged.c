/*
 * Damaged guest state blobs (issue 21's fuzz_decoders findings, each
 * reproduced here): s0__guest_restore refuses them with S0_ECORRUPT, and a
 * guest it does restore always lets virtual time advance.
 */
#include "rtsuites.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "local/runtime/sim/guest.h"

/*
 * The bytes of fuzz_decoders input tests/fuzz/corpus/decoders/<name> minus
 * its selector byte (the state blob the decoder was given), read from
 * $S0_FUZZ_CORPUS, else from the directory meson.build compiles in
 * (S0_FUZZ_CORPUS_DIR). Returns a
 * malloc'd buffer (caller frees) and its length in *len; fails the test
 * when the file is missing or holds no blob.
 */
static uint8_t *corpus_blob(const char *name, size_t *len)
{
	const char *dir = getenv("S0_FUZZ_CORPUS");
	if (!dir)
		dir = S0_FUZZ_CORPUS_DIR;
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	long size = ftell(f);
	ck_assert_msg(size > 1, "%s holds no blob", path);
	uint8_t *buf = malloc((size_t)size);
	ck_assert_ptr_nonnull(buf);
	rewind(f);
	ck_assert_int_eq(fread(buf, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	*len = (size_t)size - 1;
	memmove(buf, buf + 1, *len); /* drop the selector byte */
	return buf;
}

/*
 * fuzz_decoders input tests/fuzz/corpus/decoders/guest_pid1_deadline: a state blob whose procd (PID 1) carries a stop's
 * grace deadline (grace_kill_at 49). PID 1 cannot be signalled, so before
 * the fix the restore succeeded and s0__guest_advance() expired that
 * deadline forever without moving time (a hang). Now the blob is refused.
 */
START_TEST(restore_refuses_deadline_on_pid1)
{
	s0__guest *g = NULL;
	s0_error *err = NULL;
	size_t len;
	uint8_t *blob = corpus_blob("guest_pid1_deadline", &len);
	int rc = s0__guest_restore(blob, len, NULL, NULL, 0, NULL, &g, &err);
	free(blob);
	if (rc == S0_OK) { /* never wedge: advancing must return (the tcase timeout guards) */
		s0__guest_advance(g, 1000, NULL);
		s0__guest_free(g);
	}
	ck_assert_int_eq(rc, S0_ECORRUPT);
	ck_assert_ptr_nonnull(err);
	ck_assert_str_eq(s0_error_reason(err), "corrupt");
	s0_error_free(err);
}
END_TEST

/*
 * fuzz_decoders input tests/fuzz/corpus/decoders/guest_procd_sleeping: a
 * well-formed blob whose procd (PID 1, not a script) is marked sleeping with
 * a wake-up in the past. The scheduler picked it as due, could not run it,
 * and picked it again forever. Now only script processes are ever due:
 * advancing returns with time moved and procd still running.
 */
START_TEST(advance_skips_sleeping_non_script)
{
	s0__guest *g = NULL;
	s0_error *err = NULL;
	size_t len;
	uint8_t *blob = corpus_blob("guest_procd_sleeping", &len);
	int rc = s0__guest_restore(blob, len, NULL, NULL, 0, NULL, &g, &err);
	free(blob);
	ck_assert_msg(rc == S0_OK, "restore: %s", err ? s0_error_message(err) : "?");
	int64_t before = s0__guest_vtime_ms(g);
	ck_assert_int_eq(s0__guest_advance(g, 1000, NULL), S0_OK);
	ck_assert_int_eq(s0__guest_vtime_ms(g), before + 1000);
	s0__proc_info pi;
	ck_assert_int_eq(s0__guest_proc_get(g, 1, &pi, NULL), S0_OK);
	ck_assert_int_eq(pi.state, S0__PS_RUNNING);
	s0__guest_free(g);
}
END_TEST

/*
 * fuzz_decoders input tests/fuzz/corpus/decoders/guest_vt_overflow: a blob
 * whose virtual clock reads INT64_MAX; advancing it overflowed vt + ms
 * (UBSan: signed integer overflow in s0__guest_advance). Now a clock outside
 * [0, 2^62] is refused as corrupt, s0__guest_advance saturates its target,
 * and a deadline of "never" (INT64_MAX) is not due even at INT64_MAX.
 */
START_TEST(restore_refuses_clock_at_end_of_time)
{
	s0__guest *g = NULL;
	s0_error *err = NULL;
	size_t len;
	uint8_t *blob = corpus_blob("guest_vt_overflow", &len);
	int rc = s0__guest_restore(blob, len, NULL, NULL, 0, NULL, &g, &err);
	free(blob);
	if (rc == S0_OK)
		s0__guest_free(g);
	ck_assert_int_eq(rc, S0_ECORRUPT);
	ck_assert_str_eq(s0_error_reason(err), "corrupt");
	s0_error_free(err);
	/* advancing to the end of time stays there: no overflow, and "never"
	 * deadlines (INT64_MAX) do not fire there (they made the scheduler spin) */
	ck_assert_int_eq(s0__guest_new(NULL, &g, NULL), S0_OK);
	ck_assert_int_eq(s0__guest_advance(g, INT64_MAX, NULL), S0_OK);
	ck_assert_int_eq(s0__guest_advance(g, 1000, NULL), S0_OK);
	ck_assert(s0__guest_vtime_ms(g) == INT64_MAX);
	s0__guest_free(g);
}
END_TEST

Suite *rt_restore_damaged_suite(void)
{
	Suite *s = suite_create("rt-restore-damaged");
	TCase *tc = tcase_create("restore");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, restore_refuses_deadline_on_pid1);
	tcase_add_test(tc, advance_skips_sleeping_non_script);
	tcase_add_test(tc, restore_refuses_clock_at_end_of_time);
	suite_add_tcase(s, tc);
	return s;
}
