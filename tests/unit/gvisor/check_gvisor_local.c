/*
 * The gvisor runtime under the lifecycle engine (s0_local_options.runtime
 * = "gvisor"), through the public client: inspection names it, a context
 * runs a real program, a filesystem-only pause stops the generation (its
 * processes gone, the terminal proof given), a resume starts a new one
 * (runtime_id changes, runtime_generation + 1) on the same root tree, and
 * asking for the runtime where runsc is missing fails the open naming it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "common/json.h"
#include "local/runtime/gvisor/gvisor.h"
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

/* A template from a real root tree (busybox) for the engine's sandboxes. */
static void busybox_template(lt *t)
{
	char *tmp = s0_test_tmpdir("gvtree");
	char *tree = malloc(strlen(tmp) + 8);
	sprintf(tree, "%s/tree", tmp);
	s0_error *e = NULL;
	int rc = s0__gv_busybox_tree(tree, &e);
	ck_assert_msg(rc == S0_OK, "tree: %s", e ? s0_error_message(e) : "?");
	rc = s0_local_template_build(t->local, "busybox", tree, NULL, &e);
	ck_assert_msg(rc == S0_OK, "template: %s", e ? s0_error_message(e) : "?");
	s0_test_rmrf(tmp);
	free(tmp);
	free(tree);
}

/* Inspection names the runtime; a sandbox of a busybox template runs real
 * programs on its RootFS branch mounted through the carrier; the files
 * API and the programs see the same files; a write followed at once by a
 * filesystem-only pause is in the committed head (read back while paused,
 * from the RootFS); the resume starts a new generation (runtime_id
 * changes, runtime_generation + 1) whose processes are new. */
START_TEST(engine_runs_gvisor_and_pauses)
{
	LT_ROW("FS-01");
	lt t;
	open_gvisor(&t);
	char *json = NULL;
	ck_assert_int_eq(s0_local_inspect(t.local, NULL, &json, NULL), S0_OK);
	cJSON *ins = cJSON_Parse(json);
	const cJSON *rt = cJSON_GetObjectItem(cJSON_GetObjectItem(ins, "node"), "runtime");
	ck_assert_str_eq(s0__json_str(rt, "name"), "gvisor");
	char *caps = cJSON_PrintUnformatted(cJSON_GetObjectItem(rt, "capabilities"));
	ck_assert_str_eq(caps, "[\"contexts\",\"real_processes\",\"kernel_fs\"]");
	free(caps);
	cJSON_Delete(ins);
	s0_free(json);
	busybox_template(&t);

	char *id = lt_claim(&t, "busybox", NULL);
	lt_assert_running(&t, id);
	char *rt0 = lt_runtime_id(&t, id);
	int64_t gen0 = lt_generation(&t, id);
	char *ctx = lt_repl(&t, id);
	char *out = sh(&t, id, ctx, "uname -r; cat /proc/mounts | grep -c ' / '");
	ck_assert_msg(strstr(out, "gvisor"), "%s", out);
	free(out);
	/* the files API and the programs: the same files, both ways */
	lt_write(&t, id, "/workspace/api.txt", "from the api\n");
	out = sh(&t, id, ctx, "cat /workspace/api.txt");
	ck_assert_str_eq(out, "from the api");
	free(out);
	out = sh(&t, id, ctx, "echo kept > /root/kept.txt; sleep 1000 & echo ok");
	ck_assert_str_eq(out, "ok");
	free(out);
	ck_assert(lt_file_is(&t, id, "/root/kept.txt", "kept\n"));
	free(ctx);

	lt_pause(&t, id); /* at once after the write */
	lt_assert_paused(&t, id);
	ck_assert(lt_file_is(&t, id, "/root/kept.txt", "kept\n")); /* from the committed head */
	ck_assert(lt_file_is(&t, id, "/workspace/api.txt", "from the api\n"));
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
