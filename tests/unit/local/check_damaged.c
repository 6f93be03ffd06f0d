/*
 * Damaged metadata read back at a reopen (issue 21's fuzz_reopen findings,
 * each reproduced here): the backend must answer, never wedge or crash.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lt.h"
#include "pgtest.h"
#include "suites.h"

/* Run one SQL statement on the closed backend's metadata database. */
static void meta_sql(lt *t, const char *sql)
{
	if (t->opts.meta) { /* a PostgreSQL run (S0_TEST_META) */
		ck_assert_msg(s0_test_meta_exec(t->opts.meta, sql), "%s", sql);
		return;
	}
	char *path = NULL;
	ck_assert_int_ge(asprintf(&path, "%s/meta.db", t->dir), 0);
	sqlite3 *db = NULL;
	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	char *msg = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
	ck_assert_msg(rc == SQLITE_OK, "%s: %s", sql, msg ? msg : "?");
	ck_assert_int_gt(sqlite3_changes(db), 0);
	sqlite3_close(db);
	free(path);
}

/*
 * fuzz_reopen reproducer: the finished pause operation of a paused sandbox
 * gets a state outside the table (the one-byte blob x'01', 'bogus', ''), so
 * it would read as in flight again; before the metadata seam the resume
 * then waited for that pause forever. Now the open refuses the store with
 * S0_EINVAL `unknown_op_state`, naming the operation and its sandbox, and
 * changes nothing: once the operator mends the row, the backend opens and
 * the sandbox resumes from its committed head with its files.
 */
START_TEST(unknown_operation_state_does_not_wedge_resume)
{
	static const char *const states[] = {"x'01'", "'bogus'", "''"};
	for (size_t i = 0; i < sizeof states / sizeof states[0]; i++) {
		lt t;
		lt_open(&t, NULL);
		char *id = lt_claim(&t, NULL, NULL);
		lt_write(&t, id, "/workspace/kept.txt", "kept");
		lt_pause(&t, id);
		lt_quiesce(&t);
		int64_t now = s0_local_now_unix_ms(t.local);
		lt_shutdown(&t);
		char sql[256];
		snprintf(sql, sizeof sql, "UPDATE operations SET state=%s WHERE sandbox_id='%s'",
		         states[i], id);
		meta_sql(&t, sql);
		t.opts.manual_clock_start_unix_ms = now;
		s0_local *l = NULL;
		s0_error *err = NULL;
		ck_assert_int_eq(s0_local_open(t.dir, &t.opts, &l, &err), S0_EINVAL);
		ck_assert_ptr_null(l);
		ck_assert_str_eq(s0_error_reason(err), "unknown_op_state");
		ck_assert_msg(strstr(s0_error_message(err), id), "%s", s0_error_message(err));
		s0_error_free(err);
		/* refused twice alike: the failed open changed nothing */
		ck_assert_int_eq(s0_local_open(t.dir, &t.opts, &l, NULL), S0_EINVAL);
		snprintf(sql, sizeof sql, "UPDATE operations SET state='done' WHERE sandbox_id='%s'", id);
		meta_sql(&t, sql);
		lt_reopen(&t);
		lt_quiesce(&t);
		ck_assert_int_eq(lt_pending_ops(&t, id), 0);
		lt_resume(&t, id);
		lt_assert_running(&t, id);
		ck_assert(lt_file_is(&t, id, "/workspace/kept.txt", "kept"));
		free(id);
		lt_close(&t);
	}
}
END_TEST

/*
 * fuzz_reopen reproducer (corpus/reopen/template_mounts_blob): the default
 * template's stored ephemeral mounts are not JSON. Resuming a sandbox of
 * that template used to fail as out of memory — the router's "could not
 * build a response" code, so the in-process transport and the server had
 * no envelope to give. Now the resume fails with S0_ECORRUPT `corrupt`
 * (HTTP 500 internal_error), the sandbox stays paused, and every other
 * call keeps working.
 */
START_TEST(damaged_template_mounts_are_corrupt_not_oom)
{
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_pause(&t, id);
	lt_quiesce(&t);
	int64_t now = s0_local_now_unix_ms(t.local);
	lt_shutdown(&t);
	meta_sql(&t, "UPDATE templates SET ephemeral_mounts=x'04' WHERE name='default'");
	t.opts.manual_clock_start_unix_ms = now;
	lt_reopen(&t);
	s0_lifecycle_result *res = NULL;
	s0_error *err = NULL;
	int rc = s0_sandbox_resume(t.c, id, 0, &res, &err);
	ck_assert_msg(rc != S0_ENOMEM && rc < 0, "resume: %d", rc);
	ck_assert_int_eq(s0_error_http_status(err), 500);
	s0_error_free(err);
	s0_lifecycle_result_free(res);
	lt_assert_paused(&t, id);
	ck_assert_int_eq(lt_status(&t, id), S0_STATUS_PAUSED);
	free(id);
	lt_close(&t);
}
END_TEST

Suite *s0_local_damaged_suite(void)
{
	Suite *s = suite_create("local-damaged");
	TCase *tc = tcase_create("reopen");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, unknown_operation_state_does_not_wedge_resume);
	tcase_add_test(tc, damaged_template_mounts_are_corrupt_not_oom);
	suite_add_tcase(s, tc);
	return s;
}
