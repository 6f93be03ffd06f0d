/*
 * Runtime failure recovery (docs/behaviours.md REC-01..REC-09 and TTL-09) and
 * inspect state (INS-01..INS-07), through the public client; REC-06's
 * successor boot goes through the engine's test entry point.
 *
 * Not here: REC-04 during resume (only the pause steps are journaled node
 * operations so far). INS-01's memory
 * exceptions (failed/starting with paused true) belong to the checkpoint
 * issue; INS-04's Python-SDK decoding to the Python issue.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "local/lifecycle/engine.h"
#include "local/local_internal.h"
#include "lt.h"
#include "suites.h"

static void crash(lt *t, const char *id)
{
	char fault[128];
	snprintf(fault, sizeof fault, "runtime_crash@%s", id);
	LT_OK(s0_local_fault_arm(t->local, fault, S0_FAULT_FAIL, 1, 0, &e_));
	lt_quiesce(t);
}

/* Poll (advancing virtual time) until running; assert never paused. */
static void wait_running_never_paused(lt *t, const char *id)
{
	for (int i = 0; i < 200; i++) {
		s0_sandbox_info *sb = lt_get(t, id);
		int st = s0_sandbox_info_status(sb);
		ck_assert(!s0_sandbox_info_paused(sb));
		ck_assert_int_ne(st, S0_STATUS_PAUSED);
		s0_sandbox_info_free(sb);
		if (st == S0_STATUS_RUNNING)
			return;
		lt_advance(t, 100);
		lt_quiesce(t);
		lt_nap_ms(2);
	}
	ck_abort_msg("%s never came back running", id);
}

/* The last-committed-head contract after an unplanned failure. */
static void crash_loses_only_the_tail(bool auto_resume)
{
	lt t;
	lt_open(&t, NULL);
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.auto_resume = auto_resume ? S0_BOOL_TRUE : S0_BOOL_FALSE;
	char *id = lt_claim(&t, NULL, &cfg);
	lt_write(&t, id, "/workspace/A", "committed");
	lt_pause(&t, id);
	lt_resume(&t, id);
	char *head = lt_head(&t, id);
	char *rid = lt_runtime_id(&t, id);
	int64_t g = lt_generation(&t, id);
	lt_write(&t, id, "/workspace/B", "dirty tail");
	lt_write(&t, id, "/workspace/A", "overwritten in the tail");
	double pub0 = lt_inum(&t, NULL, "storage.publications");
	double cpu = lt_inum(&t, NULL, "node.cpu_used_millis");

	/* the old lease stays until the terminal proof (REC-09) */
	LT_OK(s0_local_fault_arm(t.local, "resource_leak:network", S0_FAULT_HOLD, 0, 0, &e_));
	crash(&t, id);
	s0_sandbox_info *sb = lt_get(&t, id);
	ck_assert_int_eq(s0_sandbox_info_status(sb), S0_STATUS_STARTING);
	ck_assert(!s0_sandbox_info_paused(sb));
	ck_assert_str_eq(s0_sandbox_info_runtime_id(sb), "");
	s0_sandbox_info_free(sb);
	cJSON *j = lt_inspect(&t, id);
	ck_assert_double_eq(lt_num(j, "node.cpu_used_millis"), cpu);
	cJSON *rt = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "node"), "runtimes"),
	                               0);
	ck_assert_str_eq(lt_str(rt, "runtime_id"), rid);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(rt, "crashed")));
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(rt, "fenced")));
	cJSON_Delete(j);
	/* no replacement: resume answers 503, the sandbox stays starting */
	s0_lifecycle_result *lr = NULL;
	s0_error *err = NULL;
	LT_EXPECT(s0_sandbox_resume(t.c, id, S0_BOOL_UNSET, &lr, &err), err, S0_EUNAVAILABLE, NULL);
	ck_assert_int_eq(lt_runtimes_of(&t, id), 1);
	ck_assert_int_eq(lt_status(&t, id), S0_STATUS_STARTING);

	LT_OK(s0_local_fault_release(t.local, "resource_leak:network", &e_));
	wait_running_never_paused(&t, id);
	char *rid2 = lt_runtime_id(&t, id);
	ck_assert_str_ne(rid2, rid);
	ck_assert_int_eq(lt_generation(&t, id), g + 1);
	ck_assert_int_eq(lt_runtimes_of(&t, id), 1);
	ck_assert_double_eq(lt_inum(&t, NULL, "node.cpu_used_millis"), cpu);
	/* the tail is lost, never half-applied or published */
	ck_assert(lt_file_is(&t, id, "/workspace/A", "committed"));
	ck_assert_int_eq(lt_stat_rc(&t, id, "/workspace/B"), S0_ENOTFOUND);
	ck_assert_double_eq(lt_inum(&t, NULL, "storage.publications"), pub0);
	char *head2 = lt_head(&t, id);
	ck_assert_str_eq(head2, head);
	ck_assert_int_eq(lt_fsck_generation(&t, head), 0);
	LT_OK(s0_local_gc(t.local, &e_));
	ck_assert(lt_file_is(&t, id, "/workspace/A", "committed"));
	ck_assert_double_eq(lt_inum(&t, id, "sandbox.operation_counts.recover"), 1);
	ck_assert_double_eq(lt_inum(&t, id, "sandbox.operation_counts.pause"), 1);
	free(head2);
	free(rid2);
	free(rid);
	free(head);
	free(id);
	lt_close(&t);
}

/* REC-01, REC-03, REC-09: a crash is not a pause; the old writer is fenced
 * and its tail abandoned; capacity stays reserved until the proof. */
START_TEST(rec01_rec03_rec09_crash_recovers_from_committed_head)
{
	LT_ROW("REC-01");
	LT_ROW("REC-03");
	LT_ROW("REC-09");
	crash_loses_only_the_tail(true);
}
END_TEST

/* TTL-09: auto_resume false does not switch off crash fencing. */
START_TEST(ttl09_auto_resume_false_keeps_crash_fencing)
{
	LT_ROW("TTL-09");
	crash_loses_only_the_tail(false);
}
END_TEST

/* REC-01 (failed): with nothing to place the replacement on, the sandbox
 * reads failed (never paused) and recovers once capacity is back. */
START_TEST(rec01_failed_until_a_replacement_fits)
{
	LT_ROW("REC-01");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	LT_OK(s0_local_fault_arm(t.local, "carrier", S0_FAULT_FAIL, 0, 0, &e_));
	crash(&t, id);
	for (int i = 0; i < 5; i++) {
		lt_advance(&t, 1000);
		lt_quiesce(&t);
	}
	s0_sandbox_info *sb = lt_get(&t, id);
	ck_assert_int_eq(s0_sandbox_info_status(sb), S0_STATUS_FAILED);
	ck_assert(!s0_sandbox_info_paused(sb));
	s0_sandbox_info_free(sb);
	LT_OK(s0_local_fault_release(t.local, "carrier", &e_));
	wait_running_never_paused(&t, id);
	free(id);
	lt_close(&t);
}
END_TEST

/* REC-02: the driver call never returns; reconciliation proves the stop
 * from node state and the pause completes. */
START_TEST(rec02_cleanup_does_not_depend_on_driver)
{
	LT_ROW("REC-02");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	double drv = lt_inum(&t, NULL, "node.driver_stops");
	LT_OK(s0_local_fault_arm(t.local, "driver_exit", S0_FAULT_FAIL, 0, 0, &e_));
	lt_pause(&t, id);
	ck_assert_double_eq(lt_inum(&t, NULL, "node.reconciled_stops"), 1);
	ck_assert_double_eq(lt_inum(&t, NULL, "node.driver_stops"), drv);
	ck_assert_int_eq(lt_runtimes_of(&t, id), 0);
	free(id);
	lt_close(&t);
}
END_TEST

/* Hold an operation, restart the manager, release: it ends exactly once. */
static void restart_mid(lt *t, const char *hold)
{
	LT_OK(s0_local_restart_manager(t->local, &e_));
	lt_quiesce(t);
	LT_OK(s0_local_fault_release(t->local, hold, &e_));
	lt_quiesce(t);
}

/* REC-05: a manager restart recovers every unfinished operation: pause,
 * delete, TTL pause, hard-TTL delete and crash recovery. */
START_TEST(rec05_manager_restart_recovers_every_operation)
{
	LT_ROW("REC-05");
	lt t;
	lt_open(&t, NULL);
	s0_error *err = NULL;
	s0_sandbox_info *sb = NULL;

	/* explicit pause, held before the seal */
	char *p = lt_claim(&t, NULL, NULL);
	LT_OK(s0_local_fault_arm(t.local, "node_channel@pause", S0_FAULT_HOLD, 0, 0, &e_));
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_pause(t.c, p, S0_BOOL_UNSET, &lr, &e_));
	s0_lifecycle_result_free(lr);
	restart_mid(&t, "node_channel@pause");
	lt_pause(&t, p);
	ck_assert_double_eq(lt_inum(&t, p, "sandbox.operation_counts.pause"), 1);

	/* delete, held at the terminal proof */
	char *d = lt_claim(&t, NULL, NULL);
	LT_OK(s0_local_fault_arm(t.local, "resource_leak:lease_cgroup", S0_FAULT_HOLD, 0, 0, &e_));
	LT_OK(s0_sandbox_delete(t.c, d, &e_));
	restart_mid(&t, "resource_leak:lease_cgroup");
	LT_EXPECT(s0_sandbox_get(t.c, d, &sb, &err), err, S0_ENOTFOUND, NULL);

	/* TTL pause, held after the seal */
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.set = S0_CONFIG_SET_TTL;
	cfg.ttl_sec = 30;
	char *tp = lt_claim(&t, NULL, &cfg);
	LT_OK(s0_local_fault_arm(t.local, "meta_store@commit", S0_FAULT_HOLD, 0, 0, &e_));
	lt_advance(&t, 31000);
	lt_quiesce(&t);
	restart_mid(&t, "meta_store@commit");
	lt_assert_paused(&t, tp);
	ck_assert_double_eq(lt_inum(&t, tp, "sandbox.operation_counts.ttl_pause"), 1);

	/* hard-TTL delete, held at the terminal proof */
	cfg.set = S0_CONFIG_SET_HARD_TTL;
	cfg.hard_ttl_sec = 30;
	char *hd = lt_claim(&t, NULL, &cfg);
	LT_OK(s0_local_fault_arm(t.local, "resource_leak:runsc", S0_FAULT_HOLD, 0, 0, &e_));
	lt_advance(&t, 31000);
	lt_quiesce(&t);
	ck_assert_int_eq(lt_status(&t, hd), S0_STATUS_TERMINATING);
	restart_mid(&t, "resource_leak:runsc");
	LT_EXPECT(s0_sandbox_get(t.c, hd, &sb, &err), err, S0_ENOTFOUND, NULL);

	/* crash recovery, held at the terminal proof */
	char *c = lt_claim(&t, NULL, NULL);
	int64_t g = lt_generation(&t, c);
	LT_OK(s0_local_fault_arm(t.local, "resource_leak:writer", S0_FAULT_HOLD, 0, 0, &e_));
	crash(&t, c);
	restart_mid(&t, "resource_leak:writer");
	wait_running_never_paused(&t, c);
	ck_assert_int_eq(lt_generation(&t, c), g + 1);
	ck_assert_double_eq(lt_inum(&t, c, "sandbox.operation_counts.recover"), 1);
	ck_assert_int_eq(lt_runtimes_of(&t, c), 1);

	/* the untouched sandboxes still work */
	lt_resume(&t, p);
	lt_resume(&t, tp);
	ck_assert_int_eq(lt_pending_ops(&t, NULL), 0);
	free(p);
	free(d);
	free(tp);
	free(hd);
	free(c);
	lt_close(&t);
}
END_TEST

/* REC-07: a scheduler record purged early proves nothing: until the
 * allocation directory is gone capacity stays reserved and the pause does
 * not complete. */
START_TEST(rec07_purged_record_is_not_proof_of_absence)
{
	LT_ROW("REC-07");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	double cpu = lt_inum(&t, NULL, "node.cpu_used_millis");
	LT_OK(s0_local_fault_arm(t.local, "alloc_record_purge", S0_FAULT_FAIL, 1, 0, &e_));
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_pause(t.c, id, S0_BOOL_UNSET, &lr, &e_));
	s0_lifecycle_result_free(lr);
	for (int i = 0; i < 5; i++) {
		lt_quiesce(&t);
		lt_advance(&t, 1000);
	}
	s0_sandbox_info *sb = lt_get(&t, id);
	ck_assert(!s0_sandbox_info_paused(sb));
	ck_assert_int_ne(s0_sandbox_info_status(sb), S0_STATUS_PAUSED);
	s0_sandbox_info_free(sb);
	cJSON *j = lt_inspect(&t, id);
	cJSON *rt = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "node"), "runtimes"),
	                               0);
	ck_assert_ptr_nonnull(rt);
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(rt, "scheduler_record")));
	char *dir = strdup(lt_str(rt, "alloc_dir"));
	ck_assert_int_eq(access(dir, F_OK), 0);
	ck_assert_double_eq(lt_num(j, "node.cpu_used_millis"), cpu);
	cJSON_Delete(j);
	ck_assert_int_eq(rmdir(dir), 0); /* the node's absence proof can now pass */
	for (int i = 0; i < 50 && lt_pending_ops(&t, id); i++) {
		lt_advance(&t, 100);
		lt_quiesce(&t);
		lt_nap_ms(2);
	}
	lt_assert_paused(&t, id);
	ck_assert_double_lt(lt_inum(&t, NULL, "node.cpu_used_millis"), cpu);
	free(dir);
	free(id);
	lt_close(&t);
}
END_TEST

/* REC-08: snapshots and pauses are durability points across a crash. */
START_TEST(rec08_snapshot_and_pause_are_durability_points)
{
	LT_ROW("REC-08");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/B", "before the snapshot");
	s0_snapshot_info *snap = NULL;
	LT_OK(s0_snapshot_create(t.c, id, "b", NULL, 0, &snap, &e_));
	lt_write(&t, id, "/workspace/C", "after the snapshot");
	crash(&t, id);
	wait_running_never_paused(&t, id);
	s0_sandbox_info *sb = NULL;
	LT_OK(s0_sandbox_claim(t.c, "default", s0_snapshot_info_id(snap), NULL, &sb, &e_));
	char *from = strdup(s0_sandbox_info_id(sb));
	s0_sandbox_info_free(sb);
	s0_snapshot_info_free(snap);
	ck_assert(lt_file_is(&t, from, "/workspace/B", "before the snapshot"));
	ck_assert_int_eq(lt_stat_rc(&t, from, "/workspace/C"), S0_ENOTFOUND);
	/* the head moves only on pause: the recovered sandbox has neither */
	ck_assert_int_eq(lt_stat_rc(&t, id, "/workspace/C"), S0_ENOTFOUND);

	/* the same with a pause in place of the snapshot */
	lt_write(&t, id, "/workspace/B", "before the pause");
	lt_pause(&t, id);
	lt_resume(&t, id);
	lt_write(&t, id, "/workspace/C", "after the pause");
	crash(&t, id);
	wait_running_never_paused(&t, id);
	ck_assert(lt_file_is(&t, id, "/workspace/B", "before the pause"));
	ck_assert_int_eq(lt_stat_rc(&t, id, "/workspace/C"), S0_ENOTFOUND);
	free(from);
	free(id);
	lt_close(&t);
}
END_TEST

/* ---- INS ---- */

static cJSON *info_json(const s0_sandbox_info *sb)
{
	cJSON *j = cJSON_Parse(s0_sandbox_info_json(sb));
	ck_assert_ptr_nonnull(j);
	return j;
}

static const char *wire_status(const cJSON *j)
{
	const char *s = lt_str(j, "status");
	ck_assert_ptr_nonnull(s);
	return s;
}

/* One GET, checked for the INS-01/INS-02/INS-06 invariants; returns status. */
static int check_details(lt *t, const char *id)
{
	s0_sandbox_info *sb = lt_get(t, id);
	cJSON *j = info_json(sb);
	const char *st = wire_status(j);
	const cJSON *p = cJSON_GetObjectItem(j, "paused");
	const cJSON *rid = cJSON_GetObjectItem(j, "runtime_id");
	ck_assert(cJSON_IsBool(p));
	ck_assert_msg(cJSON_IsString(rid), "runtime_id must always be a string");
	bool paused = cJSON_IsTrue(p);
	ck_assert_int_eq(paused, !strcmp(st, "paused")); /* FS mode: no exceptions */
	if (!strcmp(st, "running"))
		ck_assert_str_ne(rid->valuestring, "");
	else if (strcmp(st, "terminating")) /* a deleting runtime may still be named */
		ck_assert_str_eq(rid->valuestring, "");
	int s = s0_sandbox_info_status(sb);
	cJSON_Delete(j);
	s0_sandbox_info_free(sb);
	return s;
}

/* INS-01: status and paused in every reachable FS state. */
START_TEST(ins01_status_and_paused_in_every_state)
{
	LT_ROW("INS-01");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	ck_assert_int_eq(check_details(&t, id), S0_STATUS_RUNNING);
	/* pause in flight (before the commit) */
	LT_OK(s0_local_fault_arm(t.local, "object_store@after-seal", S0_FAULT_HOLD, 0, 0, &e_));
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_pause(t.c, id, S0_BOOL_UNSET, &lr, &e_));
	s0_lifecycle_result_free(lr);
	lt_quiesce(&t);
	ck_assert_int_eq(check_details(&t, id), S0_STATUS_RUNNING);
	/* committed, terminal proof pending */
	LT_OK(s0_local_fault_arm(t.local, "resource_leak:mount", S0_FAULT_HOLD, 0, 0, &e_));
	LT_OK(s0_local_fault_release(t.local, "object_store@after-seal", &e_));
	lt_quiesce(&t);
	ck_assert_int_eq(check_details(&t, id), S0_STATUS_STARTING);
	LT_OK(s0_local_fault_release(t.local, "resource_leak:mount", &e_));
	lt_quiesce(&t);
	ck_assert_int_eq(check_details(&t, id), S0_STATUS_PAUSED);
	lt_resume(&t, id);
	/* recovering, then failed */
	LT_OK(s0_local_fault_arm(t.local, "resource_leak:runsc", S0_FAULT_HOLD, 0, 0, &e_));
	LT_OK(s0_local_fault_arm(t.local, "capacity", S0_FAULT_FAIL, 0, 0, &e_));
	crash(&t, id);
	ck_assert_int_eq(check_details(&t, id), S0_STATUS_STARTING);
	LT_OK(s0_local_fault_release(t.local, "resource_leak:runsc", &e_));
	lt_quiesce(&t);
	ck_assert_int_eq(check_details(&t, id), S0_STATUS_FAILED);
	LT_OK(s0_local_fault_release(t.local, "capacity", &e_));
	wait_running_never_paused(&t, id);
	/* terminating */
	LT_OK(s0_local_fault_arm(t.local, "resource_leak:network", S0_FAULT_HOLD, 0, 0, &e_));
	LT_OK(s0_sandbox_delete(t.c, id, &e_));
	ck_assert_int_eq(check_details(&t, id), S0_STATUS_TERMINATING);
	LT_OK(s0_local_fault_release(t.local, "resource_leak:network", &e_));
	free(id);
	lt_close(&t);
}
END_TEST

/* The list summary of one sandbox (asserts it is listed). */
static cJSON *summary_of(lt *t, const char *id)
{
	s0_sandbox_page *page = NULL;
	LT_OK(s0_sandbox_list(t->c, NULL, &page, &e_));
	cJSON *out = NULL;
	for (size_t i = 0; i < s0_sandbox_page_length(page); i++)
		if (!strcmp(s0_sandbox_info_id(s0_sandbox_page_at(page, i)), id))
			out = info_json(s0_sandbox_page_at(page, i));
	s0_sandbox_page_free(page);
	ck_assert_ptr_nonnull(out);
	return out;
}

/* INS-02, INS-03: runtime_id always a string, the same on claim, GET and
 * list; generation, auto_resume and both expiries exposed and consistent. */
START_TEST(ins02_ins03_details_and_summaries_agree)
{
	LT_ROW("INS-02");
	LT_ROW("INS-03");
	lt t;
	lt_open(&t, NULL);
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.set = S0_CONFIG_SET_TTL | S0_CONFIG_SET_HARD_TTL;
	cfg.ttl_sec = 300;
	cfg.hard_ttl_sec = 3600;
	cfg.auto_resume = S0_BOOL_FALSE;
	s0_sandbox_info *claim = NULL;
	int64_t now = s0_local_now_unix_ms(t.local);
	LT_OK(s0_sandbox_claim(t.c, "default", NULL, &cfg, &claim, &e_));
	const char *id = s0_sandbox_info_id(claim);
	ck_assert_str_ne(s0_sandbox_info_runtime_id(claim), "");
	for (int round = 0; round < 2; round++) {
		s0_sandbox_info *sb = lt_get(&t, id);
		cJSON *d = info_json(sb), *s = summary_of(&t, id);
		ck_assert(cJSON_IsString(cJSON_GetObjectItem(d, "runtime_id")));
		ck_assert(cJSON_IsString(cJSON_GetObjectItem(s, "runtime_id")));
		ck_assert_str_eq(lt_str(d, "runtime_id"), lt_str(s, "runtime_id"));
		if (round == 0)
			ck_assert_str_eq(lt_str(d, "runtime_id"), s0_sandbox_info_runtime_id(claim));
		else
			ck_assert_str_eq(lt_str(d, "runtime_id"), "");
		ck_assert_double_eq(lt_num(d, "runtime_generation"), lt_num(s, "runtime_generation"));
		ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(d, "auto_resume")));
		ck_assert_str_eq(lt_str(d, "hard_expires_at"), lt_str(s, "hard_expires_at"));
		ck_assert_int_eq(s0_sandbox_info_hard_expires_at_unix_ms(sb), now + 3600 * 1000LL);
		if (round == 0) {
			ck_assert_str_eq(lt_str(d, "expires_at"), lt_str(s, "expires_at"));
			ck_assert_int_eq(s0_sandbox_info_expires_at_unix_ms(sb), now + 300 * 1000LL);
		}
		cJSON_Delete(d);
		cJSON_Delete(s);
		s0_sandbox_info_free(sb);
		if (round == 0)
			lt_pause(&t, id);
	}
	s0_sandbox_info_free(claim);
	lt_close(&t);
}
END_TEST

static bool is_rfc3339_utc(const char *s)
{
	/* YYYY-MM-DDTHH:MM:SS[.fff]Z */
	size_t n = s ? strlen(s) : 0;
	return n >= 20 && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' &&
	       s[16] == ':' && s[n - 1] == 'Z';
}

/* INS-04: expiries are RFC 3339 UTC; unset is null, or the zero time in
 * the compatibility mode; a snapshot's expires_at is never null. */
START_TEST(ins04_expiry_timestamps)
{
	LT_ROW("INS-04");
	for (int compat = 0; compat < 2; compat++) {
		s0_local_options o = S0_LOCAL_OPTIONS_INIT;
		o.manual_clock = 1;
		o.zero_time_compat = compat;
		lt t;
		lt_open(&t, &o);
		char *unset = lt_claim(&t, NULL, NULL);
		s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
		cfg.set = S0_CONFIG_SET_TTL | S0_CONFIG_SET_HARD_TTL;
		cfg.ttl_sec = 60;
		cfg.hard_ttl_sec = 600;
		char *set = lt_claim(&t, NULL, &cfg);
		const char *keys[] = {"expires_at", "hard_expires_at"};
		for (int k = 0; k < 2; k++) {
			s0_sandbox_info *sb = lt_get(&t, unset), *st = NULL, *rf = NULL;
			LT_OK(s0_sandbox_status(t.c, unset, &st, &e_));
			LT_OK(s0_sandbox_refresh(t.c, unset, 0, &rf, &e_));
			s0_sandbox_info *all[] = {sb, st, rf};
			for (int i = 0; i < 3; i++) {
				cJSON *j = info_json(all[i]);
				const cJSON *v = cJSON_GetObjectItem(j, keys[k]);
				if (compat)
					ck_assert(cJSON_IsString(v) &&
					          !strcmp(v->valuestring, "0001-01-01T00:00:00Z"));
				else
					ck_assert_msg(cJSON_IsNull(v), "%s must be null when unset", keys[k]);
				cJSON_Delete(j);
				s0_sandbox_info_free(all[i]);
			}
			sb = lt_get(&t, set);
			cJSON *j = info_json(sb);
			ck_assert(is_rfc3339_utc(lt_str(j, keys[k])));
			cJSON_Delete(j);
			s0_sandbox_info_free(sb);
		}
		cJSON *s = summary_of(&t, unset);
		ck_assert(compat ? cJSON_IsString(cJSON_GetObjectItem(s, "expires_at"))
		                 : cJSON_IsNull(cJSON_GetObjectItem(s, "expires_at")));
		cJSON_Delete(s);
		s0_snapshot_info *snap = NULL;
		LT_OK(s0_snapshot_create(t.c, set, NULL, NULL, 0, &snap, &e_));
		cJSON *sj = cJSON_Parse(s0_snapshot_info_json(snap));
		const cJSON *se = cJSON_GetObjectItem(sj, "expires_at");
		ck_assert(!se || (cJSON_IsString(se) && is_rfc3339_utc(se->valuestring)));
		cJSON_Delete(sj);
		s0_snapshot_info_free(snap);
		free(unset);
		free(set);
		lt_close(&t);
	}
}
END_TEST

static int bg_write(lt *t, void *arg, s0_error **err)
{
	return s0_files_write(t->c, arg, "/workspace/late", "late write", 10, err);
}

/* INS-05: once a planned pause begins retirement, no request runs in the
 * old runtime: it wakes a new generation or gets a 503. */
START_TEST(ins05_no_request_reaches_a_retiring_runtime)
{
	LT_ROW("INS-05");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	char *old = lt_runtime_id(&t, id);
	LT_OK(s0_local_fault_arm(t.local, "node_channel@pause", S0_FAULT_HOLD, 0, 0, &e_));
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_pause(t.c, id, S0_BOOL_UNSET, &lr, &e_));
	s0_lifecycle_result_free(lr);
	lt_quiesce(&t);
	cJSON *j = lt_inspect(&t, id);
	cJSON *rt = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "node"), "runtimes"),
	                               0);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(rt, "fenced")));
	double served = lt_num(rt, "requests");
	cJSON_Delete(j);

	/* 1: the request outlasts its wake budget behind the held pause: 503 */
	lt_bg bg;
	lt_bg_start(&bg, &t, bg_write, id);
	lt_advance_until_done(&t, &bg, 5000, 1000);
	ck_assert_int_eq(lt_bg_join(&bg), S0_EUNAVAILABLE);
	ck_assert_str_eq(s0_error_reason(bg.err), "waking_up");
	lt_bg_free(&bg);
	j = lt_inspect(&t, id);
	rt = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "node"), "runtimes"), 0);
	ck_assert_str_eq(lt_str(rt, "runtime_id"), old);
	ck_assert_double_eq(lt_num(rt, "requests"), served);
	cJSON_Delete(j);

	/* 2: released, a request wakes a new generation and runs only there */
	lt_bg_start(&bg, &t, bg_write, id);
	LT_OK(s0_local_fault_release(t.local, "node_channel@pause", &e_));
	int rc = lt_bg_join(&bg);
	ck_assert_msg(rc == S0_OK, "late write: %d %s", rc, bg.err ? s0_error_message(bg.err) : "");
	lt_bg_free(&bg);
	lt_quiesce(&t);
	char *now = lt_runtime_id(&t, id);
	ck_assert_str_ne(now, old);
	ck_assert(lt_file_is(&t, id, "/workspace/late", "late write"));
	ck_assert_double_eq(lt_inum(&t, id, "sandbox.operation_counts.pause"), 1);
	/* the generation the held pause committed does not hold the late write */
	char *head = lt_head(&t, id);
	char *late = lt_gen_cat(&t, head, "/workspace/late");
	ck_assert_ptr_null(late);
	free(head);
	free(now);
	free(old);
	free(id);
	lt_close(&t);
}
END_TEST

typedef struct poller {
	lt *t;
	const char *id;
	volatile int stop;
	int polls, violations;
	char last[256];
	char ids[64][96];
	int64_t gens[64];
	int n_ids;
} poller;

/* A runtime_id must always pair with the same generation. */
static void pair_check(poller *p, const char *rid, int64_t gen)
{
	if (!*rid)
		return;
	for (int i = 0; i < p->n_ids; i++)
		if (!strcmp(p->ids[i], rid)) {
			if (p->gens[i] != gen) {
				p->violations++;
				snprintf(p->last, sizeof p->last, "%s seen at %lld and %lld", rid,
				         (long long)p->gens[i], (long long)gen);
			}
			return;
		}
	if (p->n_ids < 64) {
		snprintf(p->ids[p->n_ids], sizeof p->ids[0], "%s", rid);
		p->gens[p->n_ids++] = gen;
	}
}

static void consistent(poller *p, const s0_sandbox_info *sb, const char *where)
{
	int st = s0_sandbox_info_status(sb);
	bool paused = s0_sandbox_info_paused(sb);
	const char *rid = s0_sandbox_info_runtime_id(sb);
	bool ok = (st == S0_STATUS_RUNNING && !paused && rid && *rid) ||
	          (st == S0_STATUS_PAUSED && paused && rid && !*rid) ||
	          (st == S0_STATUS_STARTING && !paused && rid && !*rid);
	if (!ok) {
		p->violations++;
		snprintf(p->last, sizeof p->last, "%s: status %s paused %d runtime_id '%s'", where,
		         s0_status_name(st), paused, rid ? rid : "(null)");
	}
	if (rid)
		pair_check(p, rid, s0_sandbox_info_runtime_generation(sb));
}

static void *poll_main(void *arg)
{
	poller *p = arg;
	while (!__atomic_load_n(&p->stop, __ATOMIC_SEQ_CST)) {
		s0_sandbox_info *sb = NULL;
		if (s0_sandbox_get(p->t->c, p->id, &sb, NULL) == S0_OK)
			consistent(p, sb, "get");
		s0_sandbox_info_free(sb);
		s0_sandbox_page *page = NULL;
		if (s0_sandbox_list(p->t->c, NULL, &page, NULL) == S0_OK)
			for (size_t i = 0; i < s0_sandbox_page_length(page); i++)
				consistent(p, s0_sandbox_page_at(page, i), "list");
		s0_sandbox_page_free(page);
		sb = NULL;
		if (s0_sandbox_status(p->t->c, p->id, &sb, NULL) == S0_OK &&
		    s0_sandbox_info_status(sb) == S0_STATUS_UNKNOWN)
			p->violations++;
		s0_sandbox_info_free(sb);
		p->polls++;
	}
	return NULL;
}

static int bg_read(lt *t, void *arg, s0_error **err)
{
	void *data = NULL;
	size_t len = 0;
	int rc = s0_files_read(t->c, arg, "/workspace/f", &data, &len, err);
	s0_free(data);
	return rc;
}

/* INS-06, INS-07: no mixed binding, only public statuses, while pauses,
 * resumes (held before readiness) and snapshots run; runtime requests
 * during a resume reach only the new runtime. */
START_TEST(ins06_ins07_no_mixed_binding_during_transitions)
{
	LT_ROW("INS-06");
	LT_ROW("INS-07");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/f", "file");
	poller p = {.t = &t, .id = id};
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, poll_main, &p), 0);
	for (int cycle = 0; cycle < 3; cycle++) {
		s0_snapshot_info *snap = NULL;
		LT_OK(s0_snapshot_create(t.c, id, NULL, NULL, 0, &snap, &e_));
		s0_snapshot_info_free(snap);
		s0_lifecycle_result *lr = NULL;
		LT_OK(s0_sandbox_pause(t.c, id, S0_BOOL_UNSET, &lr, &e_));
		ck_assert_int_eq(s0_lifecycle_result_http_status(lr), 200);
		s0_lifecycle_result_free(lr);
		lt_pause(&t, id);
		int64_t g = lt_generation(&t, id);
		/* a runtime request arrives while the wake is held before readiness */
		LT_OK(s0_local_fault_arm(t.local, "resume_delay", S0_FAULT_HOLD, 0, 0, &e_));
		lt_bg rd;
		lt_bg_start(&rd, &t, bg_read, id);
		lt_wait_fault_hits(&t, "resume_delay", 1);
		lt_nap_ms(20); /* let the poller observe the held wake */
		LT_OK(s0_local_fault_release(t.local, "resume_delay", &e_));
		ck_assert_int_eq(lt_bg_join(&rd), S0_OK);
		lt_bg_free(&rd);
		lt_assert_running(&t, id);
		ck_assert_int_eq(lt_generation(&t, id), g + 1);
		cJSON *j = lt_inspect(&t, id);
		cJSON *rt = cJSON_GetArrayItem(
			cJSON_GetObjectItem(cJSON_GetObjectItem(j, "node"), "runtimes"), 0);
		ck_assert_double_ge(lt_num(rt, "requests"), 1); /* served by the new runtime */
		ck_assert_double_eq(lt_num(rt, "runtime_generation"), g + 1);
		cJSON_Delete(j);
		LT_OK(s0_sandbox_resume(t.c, id, S0_BOOL_UNSET, &lr, &e_));
		ck_assert_int_eq(s0_lifecycle_result_http_status(lr), 200);
		s0_lifecycle_result_free(lr);
	}
	__atomic_store_n(&p.stop, 1, __ATOMIC_SEQ_CST);
	pthread_join(th, NULL);
	ck_assert_int_gt(p.polls, 0);
	ck_assert_msg(p.violations == 0, "%d violations, last: %s", p.violations, p.last);
	free(id);
	lt_close(&t);
}
END_TEST

/* REC-04: the ctld primary dies at a pause step; the synchronized standby
 * is promoted and finishes the node operation exactly once. */
static void rec04_at(const char *step, bool replayed)
{
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/A", "before the pause");
	cJSON *j = lt_inspect(&t, id);
	double pub = lt_num(j, "storage.publications");
	double started = lt_num(j, "node.runtimes_started");
	double stopped = lt_num(j, "node.runtimes_stopped");
	double stops = lt_num(j, "node.driver_stops");
	ck_assert_str_eq(lt_str(j, "node.ctld.primary"), "a");
	ck_assert_double_eq(lt_num(j, "node.ctld.promotions"), 0);
	cJSON_Delete(j);
	char fault[64];
	snprintf(fault, sizeof fault, "ctld_primary_fail@%s", step);
	LT_OK(s0_local_fault_arm(t.local, fault, S0_FAULT_FAIL, 1, 0, &e_));
	lt_pause(&t, id);
	lt_assert_paused(&t, id);
	j = lt_inspect(&t, id);
	ck_assert_str_eq(lt_str(j, "node.ctld.primary"), "b"); /* the standby took over */
	ck_assert_double_eq(lt_num(j, "node.ctld.promotions"), 1);
	ck_assert_double_eq(lt_num(j, "node.ctld.epoch"), 1);
	if (replayed) /* the standby answered from the journal, not by redoing it */
		ck_assert_double_ge(lt_num(j, "node.ctld.journal_replays"), 1);
	ck_assert_double_eq(lt_num(j, "storage.publications"), pub + 1); /* one publication */
	ck_assert_double_eq(lt_num(j, "node.runtimes_started"), started); /* no writer granted */
	ck_assert_double_eq(lt_num(j, "node.runtimes_stopped"), stopped + 1);
	ck_assert_double_eq(lt_num(j, "node.driver_stops"), stops + 1);
	ck_assert_double_eq(lt_num(j, "node.cpu_used_millis"), 0);
	ck_assert_double_eq(lt_num(j, "sandbox.operation_counts.pause"), 1);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "operations")), 0);
	char *head = strdup(lt_str(j, "sandbox.head"));
	cJSON_Delete(j);
	ck_assert_int_eq(lt_fsck_generation(&t, head), 0);
	lt_resume(&t, id);
	ck_assert(lt_file_is(&t, id, "/workspace/A", "before the pause"));
	ck_assert_double_eq(lt_inum(&t, NULL, "node.runtimes_started"), started + 1);
	free(head);
	free(id);
	lt_close(&t);
}

START_TEST(rec04_standby_finishes_publish_once)
{
	LT_ROW("REC-04");
	rec04_at("publish", true);
}
END_TEST

START_TEST(rec04_standby_finishes_commit_once)
{
	LT_ROW("REC-04");
	rec04_at("commit", false);
}
END_TEST

START_TEST(rec04_standby_finishes_release_once)
{
	LT_ROW("REC-04");
	rec04_at("release", true);
}
END_TEST

/* Advance and settle a few times (an incomplete pause stays incomplete). */
static void settle(lt *t)
{
	for (int i = 0; i < 5; i++) {
		lt_quiesce(t);
		lt_advance(t, 1000);
	}
	lt_quiesce(t);
}

/* REC-06: after `node_reboot` only the authenticated successor boot of the
 * same node UID reconciles the old incarnation; until then the old
 * generation's capacity stays fenced and the pause incomplete. */
START_TEST(rec06_only_the_authenticated_successor_reconciles)
{
	LT_ROW("REC-06");
	lt t;
	lt_open(&t, NULL);
	s0__engine *e = s0__local_engine(t.local);
	char uid[S0__ID_MAX], cred[S0__ID_MAX];
	int64_t inc = 0;
	s0__engine_node_identity(e, uid, cred, &inc);
	ck_assert_int_eq(strncmp(uid, "node_", 5), 0);
	ck_assert(cred[0] != '\0');
	ck_assert_int_ge(inc, 1);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/A", "committed by the pause");
	double cpu = lt_inum(&t, NULL, "node.cpu_used_millis");
	ck_assert_double_gt(cpu, 0);
	LT_OK(s0_local_fault_arm(t.local, "node_reboot", S0_FAULT_FAIL, 1, 0, &e_));
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_pause(t.c, id, S0_BOOL_UNSET, &lr, &e_));
	s0_lifecycle_result_free(lr);
	settle(&t);

	/* the old incarnation's runtime is gone, its capacity fenced */
	cJSON *j = lt_inspect(&t, id);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "node"), "identity"), "awaiting_successor")));
	ck_assert_double_eq(lt_num(j, "node.identity.reboots"), 1);
	cJSON *rt = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "node"), "runtimes"),
	                               0);
	ck_assert_ptr_nonnull(rt);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(rt, "halted")));
	ck_assert_double_eq(lt_num(j, "node.cpu_used_millis"), cpu);
	ck_assert_int_eq(lt_pending_ops(&t, id), 1);
	cJSON_Delete(j);
	s0_sandbox_info *sb = lt_get(&t, id);
	ck_assert(!s0_sandbox_info_paused(sb));
	ck_assert_int_ne(s0_sandbox_info_status(sb), S0_STATUS_PAUSED);
	s0_sandbox_info_free(sb);

	/* another node UID, or a bad credential: cannot reconcile */
	s0_error *err = NULL;
	LT_EXPECT(s0__engine_node_boot(e, "node_someoneelse", cred, &err), err, S0_EFORBIDDEN,
	          "boot_rejected");
	LT_EXPECT(s0__engine_node_boot(e, uid, "bootcred_forged", &err), err, S0_EFORBIDDEN,
	          "boot_rejected");
	settle(&t);
	j = lt_inspect(&t, id);
	ck_assert_double_eq(lt_num(j, "node.identity.boot_rejections"), 2);
	ck_assert_double_eq(lt_num(j, "node.identity.incarnation"), (double)inc);
	ck_assert_double_eq(lt_num(j, "node.cpu_used_millis"), cpu); /* still fenced */
	ck_assert_int_eq(lt_pending_ops(&t, id), 1);
	cJSON_Delete(j);
	sb = lt_get(&t, id);
	ck_assert(!s0_sandbox_info_paused(sb));
	s0_sandbox_info_free(sb);

	/* the proper successor: same UID, valid credential, incarnation + 1 */
	LT_OK(s0__engine_node_boot(e, uid, cred, &e_));
	char uid2[S0__ID_MAX], cred2[S0__ID_MAX];
	int64_t inc2 = 0;
	s0__engine_node_identity(e, uid2, cred2, &inc2);
	ck_assert_str_eq(uid2, uid);
	ck_assert_int_eq(inc2, inc + 1);
	for (int i = 0; i < 50 && lt_pending_ops(&t, id); i++) {
		lt_advance(&t, 100);
		lt_quiesce(&t);
		lt_nap_ms(2);
	}
	lt_assert_paused(&t, id);
	j = lt_inspect(&t, id);
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "node"), "identity"), "awaiting_successor")));
	ck_assert_double_eq(lt_num(j, "node.cpu_used_millis"), 0);
	ck_assert_double_ge(lt_num(j, "node.reconciled_stops"), 1);
	ck_assert_double_eq(lt_num(j, "node.identity.successor_boots"), 1);
	cJSON_Delete(j);
	lt_resume(&t, id);
	ck_assert(lt_file_is(&t, id, "/workspace/A", "committed by the pause"));
	free(id);
	/* the identity is durable: a reopen is the next boot of the same UID */
	lt_reopen(&t);
	s0__engine_node_identity(s0__local_engine(t.local), uid2, cred2, &inc2);
	ck_assert_str_eq(uid2, uid);
	ck_assert_str_eq(cred2, cred);
	ck_assert_int_eq(inc2, inc + 2);
	lt_close(&t);
}
END_TEST

Suite *s0_local_rec_suite(void)
{
	Suite *s = suite_create("local-rec");
	TCase *tc = tcase_create("rec");
	tcase_set_timeout(tc, 120);
	tcase_set_tags(tc, LT_TAG_RUNTIMES); /* also on gvisor (unit-local-gvisor) */
	tcase_add_test(tc, rec01_rec03_rec09_crash_recovers_from_committed_head);
	tcase_add_test(tc, ttl09_auto_resume_false_keeps_crash_fencing);
	tcase_add_test(tc, rec01_failed_until_a_replacement_fits);
	tcase_add_test(tc, rec02_cleanup_does_not_depend_on_driver);
	tcase_add_test(tc, rec04_standby_finishes_publish_once);
	tcase_add_test(tc, rec04_standby_finishes_commit_once);
	tcase_add_test(tc, rec04_standby_finishes_release_once);
	tcase_add_test(tc, rec05_manager_restart_recovers_every_operation);
	tcase_add_test(tc, rec06_only_the_authenticated_successor_reconciles);
	tcase_add_test(tc, rec07_purged_record_is_not_proof_of_absence);
	tcase_add_test(tc, rec08_snapshot_and_pause_are_durability_points);
	suite_add_tcase(s, tc);
	TCase *ins = tcase_create("ins");
	tcase_set_timeout(ins, 120);
	tcase_add_test(ins, ins01_status_and_paused_in_every_state);
	tcase_add_test(ins, ins02_ins03_details_and_summaries_agree);
	tcase_add_test(ins, ins04_expiry_timestamps);
	tcase_add_test(ins, ins05_no_request_reaches_a_retiring_runtime);
	tcase_add_test(ins, ins06_ins07_no_mixed_binding_during_transitions);
	suite_add_tcase(s, ins);
	return s;
}
