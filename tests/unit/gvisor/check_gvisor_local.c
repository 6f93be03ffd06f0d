/*
 * The gvisor runtime under the lifecycle engine (s0_local_options.runtime
 * = "gvisor"), through the public client: inspection names it, a context
 * runs a real program, a filesystem-only pause stops the generation (its
 * processes gone, the terminal proof given), a resume starts a new one
 * (runtime_id changes, runtime_generation + 1) on the same root tree, and
 * asking for the runtime where runsc is missing fails the open naming it.
 */
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "common/json.h"
#include "lt.h"

static void open_gvisor(lt *t)
{
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.manual_clock = 1;
	o.runtime = "gvisor";
	lt_open(t, &o);
}

/* Run @p cmd in REPL @p ctx of sandbox @p id; its stdout (free()). */
static char *sh(lt *t, const char *id, const char *ctx, const char *cmd)
{
	return lt_sh(t, id, ctx, cmd, NULL);
}

START_TEST(engine_runs_gvisor_and_pauses)
{
	lt t;
	open_gvisor(&t);
	char *json = NULL;
	ck_assert_int_eq(s0_local_inspect(t.local, NULL, &json, NULL), S0_OK);
	cJSON *ins = cJSON_Parse(json);
	const cJSON *rt = cJSON_GetObjectItem(cJSON_GetObjectItem(ins, "node"), "runtime");
	ck_assert_str_eq(s0__json_str(rt, "name"), "gvisor");
	char *caps = cJSON_PrintUnformatted(cJSON_GetObjectItem(rt, "capabilities"));
	ck_assert_str_eq(caps, "[\"contexts\",\"real_processes\"]");
	free(caps);
	cJSON_Delete(ins);
	s0_free(json);

	char *id = lt_claim(&t, NULL, NULL);
	lt_assert_running(&t, id);
	char *rt0 = lt_runtime_id(&t, id);
	int64_t gen0 = lt_generation(&t, id);
	char *ctx = lt_repl(&t, id);
	char *out = sh(&t, id, ctx, "echo kept > /root/kept.txt; sleep 1000 & uname -r");
	ck_assert_msg(strstr(out, "gvisor"), "%s", out);
	free(out);
	free(ctx);

	lt_pause(&t, id);
	lt_assert_paused(&t, id);
	lt_resume(&t, id);
	lt_assert_running(&t, id);
	char *rt1 = lt_runtime_id(&t, id);
	ck_assert_str_ne(rt0, rt1);
	ck_assert_int_eq(lt_generation(&t, id), gen0 + 1);
	ctx = lt_repl(&t, id);
	out = sh(&t, id, ctx, "cat /root/kept.txt; pgrep sleep | grep -c .; true");
	ck_assert_str_eq(out, "kept\n0"); /* the file stayed, the process did not */
	free(out);
	free(ctx);
	free(rt0);
	free(rt1);
	free(id);
	lt_close(&t);
}
END_TEST

START_TEST(open_without_runsc_names_it)
{
	setenv("S0_RUNSC", "/nonexistent/runsc", 1);
	char *dir = s0_test_tmpdir("gvl");
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.manual_clock = 1;
	o.runtime = "gvisor";
	s0_local *l = NULL;
	s0_error *e = NULL;
	ck_assert_int_eq(s0_local_open(dir, &o, &l, &e), S0_EUNAVAILABLE);
	ck_assert_ptr_null(l);
	ck_assert_msg(strstr(s0_error_message(e), "S0_RUNSC"), "%s", s0_error_message(e));
	s0_error_free(e);
	unsetenv("S0_RUNSC");
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

static Suite *gvisor_local_suite(void)
{
	Suite *s = suite_create("gvisor-local");
	TCase *tc = tcase_create("engine");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, engine_runs_gvisor_and_pauses);
	tcase_add_test(tc, open_without_runsc_names_it);
	suite_add_tcase(s, tc);
	return s;
}

S0_TEST_MAIN(gvisor_local_suite)
