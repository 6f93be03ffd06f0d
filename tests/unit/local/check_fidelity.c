/*
 * Fidelity rows of issue #19: MEM-12 (a template rebuilt while a sandbox is
 * paused changes nothing either kind of resume sees), UC-14 (the
 * continuous-run limit of the UCloud document, on the manual clock) and
 * UC-16 (inspection reports the retained bytes of each paused sandbox and
 * snapshot).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_main.h"
#include "lt.h"
#include "suites.h"

#define HOUR_MS (3600LL * 1000)
#define DAY_MS (24 * HOUR_MS)

/* Build template `name` from a tree holding /version.txt = version. */
static void build_template(lt *t, const char *name, const char *version)
{
	char *src = NULL, *file = NULL;
	ck_assert_int_ge(asprintf(&src, "%s/tree-%s-%s", t->dir, name, version), 0);
	ck_assert_int_eq(mkdir(src, 0755), 0);
	ck_assert_int_ge(asprintf(&file, "%s/version.txt", src), 0);
	FILE *f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fputs(version, f);
	fclose(f);
	if (!strcmp(version, "v2")) { /* the rebuild also adds a file */
		free(file);
		ck_assert_int_ge(asprintf(&file, "%s/added-in-v2.txt", src), 0);
		f = fopen(file, "w");
		ck_assert_ptr_nonnull(f);
		fputs("new", f);
		fclose(f);
	}
	LT_OK(s0_local_template_build(t->local, name, src, NULL, &e_));
	free(file);
	free(src);
}

/* MEM-12: rebuild the template while one sandbox is paused filesystem-only
 * and another with memory; each resume (of its own kind) sees the old
 * template contents, its own writes, and the same committed head. */
START_TEST(mem12_template_rebuild_while_paused_changes_no_resume)
{
	LT_ROW("MEM-12");
	lt t;
	lt_open(&t, NULL);
	build_template(&t, "mem12", "v1");
	char *fs = lt_claim(&t, "mem12", NULL), *mem = lt_claim(&t, "mem12", NULL);
	ck_assert(lt_file_is(&t, fs, "/version.txt", "v1"));
	lt_write(&t, fs, "/workspace/mine", "fs sandbox");
	lt_write(&t, mem, "/workspace/mine", "memory sandbox");
	lt_write(&t, mem, "/tmp/kept", "runtime tmpfs");
	LT_OK(lt_wait_rc(&t, fs, true, S0_BOOL_FALSE, &e_));
	LT_OK(lt_wait_rc(&t, mem, true, S0_BOOL_TRUE, &e_));
	lt_assert_paused(&t, fs);
	lt_assert_paused(&t, mem);
	char *fs_head = lt_head(&t, fs), *mem_head = lt_head(&t, mem);

	build_template(&t, "mem12", "v2"); /* rebuilt meanwhile */

	LT_OK(lt_wait_rc(&t, fs, false, S0_BOOL_FALSE, &e_));
	LT_OK(lt_wait_rc(&t, mem, false, S0_BOOL_TRUE, &e_));
	lt_assert_running(&t, fs);
	lt_assert_running(&t, mem);
	const char *ids[2] = {fs, mem}, *heads[2] = {fs_head, mem_head};
	for (int i = 0; i < 2; i++) {
		ck_assert(lt_file_is(&t, ids[i], "/version.txt", "v1"));
		ck_assert_int_eq(lt_stat_rc(&t, ids[i], "/added-in-v2.txt"), S0_ENOTFOUND);
		/* the runtime attached the head the pause committed, not the new template */
		cJSON *j = lt_inspect(&t, ids[i]);
		cJSON *rt = cJSON_GetArrayItem(
			cJSON_GetObjectItem(cJSON_GetObjectItem(j, "node"), "runtimes"), 0);
		ck_assert_str_eq(lt_str(rt, "attached_generation"), heads[i]);
		cJSON_Delete(j);
	}
	ck_assert(lt_file_is(&t, fs, "/workspace/mine", "fs sandbox"));
	ck_assert(lt_file_is(&t, mem, "/workspace/mine", "memory sandbox"));
	ck_assert(lt_file_is(&t, mem, "/tmp/kept", "runtime tmpfs")); /* the memory image came back */
	/* a new claim gets the rebuilt template */
	char *fresh = lt_claim(&t, "mem12", NULL);
	ck_assert(lt_file_is(&t, fresh, "/version.txt", "v2"));
	free(fresh);
	free(fs_head);
	free(mem_head);
	free(fs);
	free(mem);
	lt_close(&t);
}
END_TEST

static void open_limited(lt *t, int64_t limit_ms)
{
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.manual_clock = 1;
	o.continuous_run_limit_ms = limit_ms;
	lt_open(t, &o);
}

/* Advance the clock by ms in hourly steps, refreshing the sandbox's TTL at
 * each step (a caller keeping it alive), and let the controller act. */
static void run_hours(lt *t, const char *id, int64_t ms)
{
	for (int64_t done = 0; done < ms;) {
		int64_t step = ms - done < HOUR_MS ? ms - done : HOUR_MS;
		if (lt_status(t, id) == S0_STATUS_RUNNING) {
			s0_sandbox_info *sb = NULL;
			LT_OK(s0_sandbox_refresh(t->c, id, 7200, &sb, &e_));
			s0_sandbox_info_free(sb);
		}
		lt_advance(t, step);
		done += step;
	}
	lt_quiesce(t);
}

/* UC-14: a generation running 24 h without a pause gets the timeout
 * action, a filesystem pause, even while its TTL is refreshed; a resume
 * starts the count again. */
START_TEST(uc14_continuous_run_limit_pauses_and_restarts_after_resume)
{
	LT_ROW("UC-14");
	lt t;
	open_limited(&t, DAY_MS);
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.set = S0_CONFIG_SET_TTL;
	cfg.ttl_sec = 3600;
	char *id = lt_claim(&t, NULL, &cfg);
	lt_write(&t, id, "/workspace/w", "kept");
	int64_t gen = lt_generation(&t, id);
	run_hours(&t, id, DAY_MS - 1000);
	lt_assert_running(&t, id); /* a second short of 24 h */
	run_hours(&t, id, 1000);
	lt_assert_paused(&t, id);
	ck_assert_double_eq(lt_inum(&t, id, "sandbox.operation_counts.ttl_pause"), 1);
	ck_assert_int_eq(lt_runtimes_of(&t, id), 0);

	lt_resume(&t, id); /* a new generation: the count starts again */
	ck_assert_int_eq(lt_generation(&t, id), gen + 1);
	run_hours(&t, id, 23 * HOUR_MS);
	lt_assert_running(&t, id);
	ck_assert(lt_file_is(&t, id, "/workspace/w", "kept"));
	run_hours(&t, id, HOUR_MS);
	lt_assert_paused(&t, id);
	ck_assert_double_eq(lt_inum(&t, id, "sandbox.operation_counts.ttl_pause"), 2);
	free(id);
	lt_close(&t);
}
END_TEST

/* UC-14: with the UCloud lifecycle on_timeout "kill" the limit deletes;
 * with no limit (the default, the Sandbox0 contract) nothing happens. */
START_TEST(uc14_kill_action_and_no_limit_by_default)
{
	LT_ROW("UC-14");
	lt t;
	open_limited(&t, 2 * HOUR_MS);
	char *reply = NULL;
	ck_assert_int_eq(lt_raw(&t, "POST", "/api/v1/sandboxes",
	                        "{\"template\":\"default\",\"config\":{\"ttl\":36000,"
	                        "\"lifecycle\":{\"on_timeout\":\"kill\"}}}",
	                        &reply),
	                 201);
	cJSON *j = cJSON_Parse(reply);
	free(reply);
	char *killed = strdup(cJSON_GetStringValue(
		cJSON_GetObjectItem(cJSON_GetObjectItem(j, "data"), "sandbox_id")));
	cJSON_Delete(j);
	char *paused = lt_claim(&t, NULL, NULL); /* no TTL at all: the pause action */
	lt_advance(&t, 2 * HOUR_MS);
	lt_quiesce(&t);
	s0_sandbox_info *sb = NULL;
	s0_error *err = NULL;
	LT_EXPECT(s0_sandbox_get(t.c, killed, &sb, &err), err, S0_ENOTFOUND, NULL);
	lt_assert_paused(&t, paused);
	free(killed);
	free(paused);
	lt_close(&t);

	lt_open(&t, NULL); /* no limit */
	char *id = lt_claim(&t, NULL, NULL);
	lt_advance(&t, 30 * DAY_MS);
	lt_quiesce(&t);
	lt_assert_running(&t, id);
	free(id);
	lt_close(&t);

	/* a negative limit is refused */
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.continuous_run_limit_ms = -1;
	s0_local *l = NULL;
	char *dir = s0_test_tmpdir("uc14");
	LT_EXPECT(s0_local_open(dir, &o, &l, &err), err, S0_EINVAL, NULL);
	ck_assert_ptr_null(l);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

static double retained(lt *t, const char *id)
{
	cJSON *j = lt_inspect(t, id);
	double b = lt_num(j, "sandbox.retained_bytes");
	cJSON_Delete(j);
	return b;
}

/* UC-16 (stand-in for storage billing): a paused sandbox's retained bytes
 * grow with what it wrote, a snapshot reports its own, and deleting both
 * then collecting garbage frees about that much. */
START_TEST(uc16_inspection_reports_retained_bytes)
{
	LT_ROW("UC-16");
	lt t;
	lt_open(&t, NULL);
	enum { BLOB = 2 << 20 };
	unsigned char *blob = malloc(BLOB);
	ck_assert_ptr_nonnull(blob);
	uint64_t x = 88172645463325252ULL; /* xorshift: incompressible bytes */
	for (size_t i = 0; i < BLOB; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		blob[i] = (unsigned char)x;
	}
	char *big = lt_claim(&t, NULL, NULL), *small = lt_claim(&t, NULL, NULL);
	lt_write_bytes(&t, big, "/workspace/blob", blob, BLOB);
	lt_write(&t, small, "/workspace/note", "tiny");
	lt_pause(&t, big);
	lt_pause(&t, small);
	double rb = retained(&t, big), rs = retained(&t, small);
	ck_assert_msg(rs > 0, "a paused sandbox retains its head (%.0f)", rs);
	ck_assert_msg(rb >= rs + BLOB, "retained %.0f vs %.0f + %d", rb, rs, BLOB);

	/* a snapshot of the resumed sandbox holds the blob too */
	lt_resume(&t, big);
	s0_snapshot_info *snap = NULL;
	LT_OK(s0_snapshot_create(t.c, big, "with-blob", NULL, 0, &snap, &e_));
	cJSON *j = lt_inspect(&t, big);
	cJSON *snaps = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "sandbox"), "snapshots");
	ck_assert_int_eq(cJSON_GetArraySize(snaps), 1);
	cJSON *s0j = cJSON_GetArrayItem(snaps, 0);
	ck_assert_str_eq(lt_str(s0j, "id"), s0_snapshot_info_id(snap));
	ck_assert(lt_num(s0j, "retained_bytes") >= rs + BLOB);
	cJSON_Delete(j);

	/* delete the sandbox and its snapshot, collect: the blob's bytes go */
	double stored0 = lt_inum(&t, NULL, "storage.stored_bytes");
	LT_OK(s0_snapshot_delete(t.c, s0_snapshot_info_id(snap), &e_));
	LT_OK(s0_sandbox_delete(t.c, big, &e_));
	lt_quiesce(&t);
	LT_OK(s0_local_gc(t.local, &e_));
	double stored1 = lt_inum(&t, NULL, "storage.stored_bytes");
	ck_assert_msg(stored1 <= stored0 - BLOB, "stored %.0f -> %.0f", stored0, stored1);
	ck_assert_double_eq(retained(&t, small), rs); /* the other sandbox keeps its bytes */
	s0_snapshot_info_free(snap);
	free(blob);
	free(big);
	free(small);
	lt_close(&t);
}
END_TEST

Suite *s0_local_fidelity_suite(void)
{
	Suite *s = suite_create("fidelity");
	TCase *tc = tcase_create("fidelity");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, mem12_template_rebuild_while_paused_changes_no_resume);
	tcase_add_test(tc, uc14_continuous_run_limit_pauses_and_restarts_after_resume);
	tcase_add_test(tc, uc14_kill_action_and_no_limit_by_default);
	tcase_add_test(tc, uc16_inspection_reports_retained_bytes);
	suite_add_tcase(s, tc);
	return s;
}
