/*
 * The filesystem pause transaction (docs/behaviours.md PTX-01..PTX-10), driven
 * through the public client with fault points holding each step.
 *
 * PTX-05 at real crash points (kill -9 of a separate process) lives in
 * check_crash.c; here the same invariant is checked across in-process
 * manager restarts. PTX-04's guest-process half (a process appending
 * numbered records) belongs to the runtime issue; the fence half is
 * INS-05 in check_rec.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "lt.h"
#include "suites.h"

static s0_lifecycle_result *post_pause(lt *t, const char *id)
{
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_pause(t->c, id, S0_BOOL_UNSET, &lr, &e_));
	return lr;
}

/* Poll GET until the paused state (status paused and paused true). */
static int is_paused_state(const s0_sandbox_info *sb, void *payload)
{
	(void)payload;
	return s0_sandbox_info_status(sb) == S0_STATUS_PAUSED && s0_sandbox_info_paused(sb);
}

static void wait_paused(lt *t, const char *id)
{
	s0_sandbox_info *sb = NULL;
	LT_OK(s0_sandbox_wait(t->c, id, 0, is_paused_state, NULL, &sb, &e_));
	s0_sandbox_info_free(sb);
	lt_assert_paused(t, id);
}

/* The pending operation of a sandbox in the inspection (NULL when none). */
static cJSON *pending_op(lt *t, const char *id)
{
	cJSON *j = lt_inspect(t, id);
	cJSON *ops = cJSON_DetachItemFromObject(j, "operations");
	cJSON_Delete(j);
	cJSON *op = cJSON_GetArraySize(ops) ? cJSON_DetachItemFromArray(ops, 0) : NULL;
	cJSON_Delete(ops);
	return op;
}

/* GET shows no paused state (pause in flight). */
static void assert_not_paused(lt *t, const char *id)
{
	s0_sandbox_info *sb = lt_get(t, id);
	ck_assert(!s0_sandbox_info_paused(sb));
	ck_assert_int_ne(s0_sandbox_info_status(sb), S0_STATUS_PAUSED);
	s0_sandbox_info_free(sb);
}

/* PTX-01: pause is asynchronous: 200 paused false, resume-ready only once
 * GET shows the paused state. */
START_TEST(ptx01_pause_is_asynchronous)
{
	LT_ROW("PTX-01");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	LT_OK(s0_local_fault_arm(t.local, "object_store@after-seal", S0_FAULT_HOLD, 0, 0, &e_));
	s0_lifecycle_result *lr = post_pause(&t, id);
	ck_assert_int_eq(s0_lifecycle_result_http_status(lr), 200);
	ck_assert(!s0_lifecycle_result_paused(lr));
	ck_assert_int_eq(s0_lifecycle_result_status(lr), S0_STATUS_RUNNING);
	s0_lifecycle_result_free(lr);
	lt_quiesce(&t);
	lt_advance(&t, 5000);
	assert_not_paused(&t, id);
	LT_OK(s0_local_fault_release(t.local, "object_store@after-seal", &e_));
	wait_paused(&t, id);
	free(id);
	lt_close(&t);
}
END_TEST

/* PTX-02: the durable intent names the exact runtime generation and
 * lease; after a manager restart exactly those are retired. */
START_TEST(ptx02_intent_names_exact_runtime_and_survives_restart)
{
	LT_ROW("PTX-02");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	char *other = lt_claim(&t, NULL, NULL);
	char *rid = lt_runtime_id(&t, id), *other_rid = lt_runtime_id(&t, other);
	int64_t gen = lt_generation(&t, id);
	double stopped0 = lt_inum(&t, NULL, "node.runtimes_stopped");
	LT_OK(s0_local_fault_arm(t.local, "node_channel@pause", S0_FAULT_HOLD, 0, 0, &e_));
	s0_lifecycle_result *lr = post_pause(&t, id);
	ck_assert_int_eq(s0_lifecycle_result_http_status(lr), 202); /* the step form counts */
	s0_lifecycle_result_free(lr);
	lt_quiesce(&t);
	cJSON *op = pending_op(&t, id);
	ck_assert_ptr_nonnull(op);
	ck_assert_str_eq(lt_str(op, "kind"), "pause");
	ck_assert_str_eq(lt_str(op, "state"), "intent");
	ck_assert_str_eq(lt_str(op, "runtime_id"), rid);
	ck_assert_int_eq((int64_t)lt_num(op, "runtime_generation"), gen);
	cJSON_Delete(op);

	LT_OK(s0_local_restart_manager(t.local, &e_));
	op = pending_op(&t, id); /* reloaded from the metadata store */
	ck_assert_str_eq(lt_str(op, "runtime_id"), rid);
	cJSON_Delete(op);
	LT_OK(s0_local_fault_release(t.local, "node_channel@pause", &e_));
	wait_paused(&t, id);
	ck_assert_double_eq(lt_inum(&t, NULL, "node.runtimes_stopped"), stopped0 + 1);
	ck_assert_double_eq(lt_inum(&t, id, "sandbox.operation_counts.pause"), 1);
	lt_assert_running(&t, other); /* no other allocation was stopped */
	char *now_rid = lt_runtime_id(&t, other);
	ck_assert_str_eq(now_rid, other_rid);
	free(now_rid);
	free(rid);
	free(other_rid);
	free(other);
	free(id);
	lt_close(&t);
}
END_TEST

/* PTX-03: retried stops are idempotent and never reach another runtime. */
START_TEST(ptx03_stop_is_idempotent_and_exact)
{
	LT_ROW("PTX-03");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	char *other = lt_claim(&t, NULL, NULL);
	char *other_rid = lt_runtime_id(&t, other);
	double stops0 = lt_inum(&t, NULL, "node.driver_stops");
	double stopped0 = lt_inum(&t, NULL, "node.runtimes_stopped");
	/* a flapping node channel: the first three attempts fail */
	LT_OK(s0_local_fault_arm(t.local, "node_channel@pause", S0_FAULT_FAIL, 3, 0, &e_));
	/* and the terminal proof fails for a while, so the stop step repeats */
	LT_OK(s0_local_fault_arm(t.local, "resource_leak:mount", S0_FAULT_HOLD, 0, 0, &e_));
	s0_lifecycle_result_free(post_pause(&t, id));
	for (int i = 0; i < 10; i++) {
		lt_quiesce(&t);
		lt_advance(&t, 1000);
	}
	cJSON *op = pending_op(&t, id);
	ck_assert_str_eq(lt_str(op, "state"), "committed");
	cJSON_Delete(op);
	LT_OK(s0_local_fault_release(t.local, "resource_leak:mount", &e_));
	wait_paused(&t, id);
	ck_assert_double_eq(lt_inum(&t, NULL, "node.driver_stops"), stops0 + 1);
	ck_assert_double_eq(lt_inum(&t, NULL, "node.runtimes_stopped"), stopped0 + 1);
	lt_assert_running(&t, other);
	char *rid = lt_runtime_id(&t, other);
	ck_assert_str_eq(rid, other_rid);
	lt_write(&t, other, "/workspace/still", "serving");
	ck_assert(lt_file_is(&t, other, "/workspace/still", "serving"));
	free(rid);
	free(other_rid);
	free(other);
	free(id);
	lt_close(&t);
}
END_TEST

/* PTX-04 (storage half): a published generation never changes afterwards,
 * whatever runs later (cycles, snapshots, forks, GC, restarts). The guest
 * process half (numbered records before the fence) belongs to the runtime
 * issue; the fence itself is INS-05. */
START_TEST(ptx04_published_generations_never_change)
{
	LT_ROW("PTX-04");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/v", "first");
	lt_pause(&t, id);
	char *g1 = lt_head(&t, id);
	uint64_t d1 = lt_gen_digest(&t, g1);
	s0_snapshot_info *snap = NULL; /* keeps g1 live */
	LT_OK(s0_snapshot_create(t.c, id, NULL, NULL, 0, &snap, &e_));
	for (int i = 0; i < 3; i++) {
		lt_resume(&t, id);
		lt_write(&t, id, "/workspace/v", "later");
		lt_write(&t, id, "/workspace/w", "more");
		s0_sandbox_info *sb = NULL;
		LT_OK(s0_sandbox_fork(t.c, id, NULL, &sb, &e_));
		s0_sandbox_info_free(sb);
		lt_pause(&t, id);
		LT_OK(s0_local_gc(t.local, &e_));
	}
	LT_OK(s0_local_restart_manager(t.local, &e_));
	lt_reopen(&t);
	LT_OK(s0_local_gc(t.local, &e_));
	ck_assert_uint_eq(lt_gen_digest(&t, g1), d1);
	char *v = lt_gen_cat(&t, g1, "/workspace/v");
	ck_assert_str_eq(v, "first");
	free(v);
	s0_snapshot_info_free(snap);
	free(g1);
	free(id);
	lt_close(&t);
}
END_TEST

/*
 * PTX-05 (in-process half): at each durable step a manager restart keeps
 * the invariant — old head and not paused, or new head and paused (or
 * finishing) — and the pause completes once; e2fsck of the head is clean.
 */
START_TEST(ptx05_restart_at_each_step_keeps_commit_atomic)
{
	LT_ROW("PTX-05");
	static const char *const holds[] = {"node_channel@pause", "meta_store@commit",
	                                    "resource_leak:writer"};
	static const char *const states[] = {"intent", "published", "committed"};
	for (size_t k = 0; k < 3; k++) {
		lt t;
		lt_open(&t, NULL);
		char *id = lt_claim(&t, NULL, NULL);
		lt_write(&t, id, "/workspace/v", "before pause");
		char *old_head = lt_head(&t, id);
		LT_OK(s0_local_fault_arm(t.local, holds[k], S0_FAULT_HOLD, 0, 0, &e_));
		s0_lifecycle_result_free(post_pause(&t, id));
		lt_quiesce(&t);
		cJSON *op = pending_op(&t, id);
		ck_assert_str_eq(lt_str(op, "state"), states[k]);
		cJSON_Delete(op);
		LT_OK(s0_local_restart_manager(t.local, &e_));
		lt_quiesce(&t);
		char *head = lt_head(&t, id);
		s0_sandbox_info *sb = lt_get(&t, id);
		if (!strcmp(head, old_head))
			ck_assert(!s0_sandbox_info_paused(sb) &&
			          s0_sandbox_info_status(sb) == S0_STATUS_RUNNING);
		else
			ck_assert_int_eq(lt_pending_ops(&t, id), 1); /* finishes pausing */
		s0_sandbox_info_free(sb);
		free(head);
		LT_OK(s0_local_fault_release(t.local, holds[k], &e_));
		wait_paused(&t, id);
		head = lt_head(&t, id);
		ck_assert_str_ne(head, old_head);
		ck_assert_int_eq(lt_fsck_generation(&t, head), 0);
		char *v = lt_gen_cat(&t, head, "/workspace/v");
		ck_assert_str_eq(v, "before pause");
		ck_assert_double_eq(lt_inum(&t, id, "sandbox.operation_counts.pause"), 1);
		free(v);
		free(head);
		free(old_head);
		free(id);
		lt_close(&t);
	}
}
END_TEST

/*
 * PTX-06: capacity comes back only after the terminal proof of all six
 * resources; until then every pause request reports paused false and GET
 * is not the paused state.
 */
START_TEST(ptx06_capacity_returns_only_after_terminal_proof)
{
	LT_ROW("PTX-06");
	static const char *const kinds[] = {"runsc", "writer", "mount", "network", "alloc_dir",
	                                    "lease_cgroup"};
	lt t;
	lt_open(&t, NULL);
	double cpu0 = lt_inum(&t, NULL, "node.cpu_used_millis");
	for (size_t k = 0; k < 6; k++) {
		char fault[64];
		snprintf(fault, sizeof fault, "resource_leak:%s", kinds[k]);
		char *id = lt_claim(&t, NULL, NULL);
		double cpu1 = lt_inum(&t, NULL, "node.cpu_used_millis");
		ck_assert_double_gt(cpu1, cpu0);
		LT_OK(s0_local_fault_arm(t.local, fault, S0_FAULT_HOLD, 0, 0, &e_));
		s0_lifecycle_result *lr = post_pause(&t, id);
		ck_assert(!s0_lifecycle_result_paused(lr));
		s0_lifecycle_result_free(lr);
		lt_quiesce(&t);
		lt_advance(&t, 10000);
		lr = post_pause(&t, id); /* repeated: still not resume-ready */
		ck_assert_int_eq(s0_lifecycle_result_http_status(lr), 200);
		ck_assert(!s0_lifecycle_result_paused(lr));
		ck_assert_int_ne(s0_lifecycle_result_status(lr), S0_STATUS_PAUSED);
		s0_lifecycle_result_free(lr);
		assert_not_paused(&t, id);
		ck_assert_double_eq(lt_inum(&t, NULL, "node.cpu_used_millis"), cpu1);
		ck_assert_int_eq(lt_runtimes_of(&t, id), 1); /* lease still held */
		s0_error *err = NULL;
		ck_assert_int_eq(lt_pause_rc(&t, id, &err), S0_ETIMEDOUT);
		s0_error_free(err);

		LT_OK(s0_local_fault_release(t.local, fault, &e_));
		lt_quiesce(&t);
		lr = post_pause(&t, id);
		ck_assert(s0_lifecycle_result_paused(lr));
		ck_assert_int_eq(s0_lifecycle_result_status(lr), S0_STATUS_PAUSED);
		s0_lifecycle_result_free(lr);
		lt_assert_paused(&t, id);
		ck_assert_double_eq(lt_inum(&t, NULL, "node.cpu_used_millis"), cpu0);
		ck_assert_int_eq(lt_runtimes_of(&t, id), 0);
		LT_OK(s0_sandbox_delete(t.c, id, &e_));
		free(id);
	}
	lt_close(&t);
}
END_TEST

static int bg_pause(lt *t, void *arg, s0_error **err)
{
	s0_lifecycle_result *lr = NULL;
	int rc = s0_sandbox_pause(t->c, arg, S0_BOOL_UNSET, &lr, err);
	if (rc == S0_OK && s0_lifecycle_result_http_status(lr) != 200)
		rc = S0_EPROTOCOL;
	s0_lifecycle_result_free(lr);
	return rc;
}

/* PTX-07: repeated and concurrent pauses join one durable operation. */
START_TEST(ptx07_concurrent_pauses_join_one_operation)
{
	LT_ROW("PTX-07");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/f", "data");
	double pub0 = lt_inum(&t, NULL, "storage.publications");
	LT_OK(s0_local_fault_arm(t.local, "object_store@after-seal", S0_FAULT_HOLD, 0, 0, &e_));
	enum { N = 10 };
	lt_bg bg[N];
	for (int i = 0; i < N; i++)
		lt_bg_start(&bg[i], &t, bg_pause, id);
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(lt_bg_join(&bg[i]), S0_OK);
		lt_bg_free(&bg[i]);
	}
	lt_quiesce(&t);
	ck_assert_int_eq(lt_pending_ops(&t, id), 1);
	/* and after a manager restart */
	LT_OK(s0_local_restart_manager(t.local, &e_));
	s0_lifecycle_result_free(post_pause(&t, id));
	ck_assert_int_eq(lt_pending_ops(&t, id), 1);
	LT_OK(s0_local_fault_release(t.local, "object_store@after-seal", &e_));
	wait_paused(&t, id);
	ck_assert_double_eq(lt_inum(&t, id, "sandbox.operation_counts.pause"), 1);
	ck_assert_double_eq(lt_inum(&t, NULL, "storage.publications"), pub0 + 1);
	char *head = lt_head(&t, id);
	s0_lifecycle_result *lr = post_pause(&t, id);
	ck_assert_int_eq(s0_lifecycle_result_http_status(lr), 200);
	ck_assert(s0_lifecycle_result_paused(lr));
	ck_assert_int_eq(s0_lifecycle_result_status(lr), S0_STATUS_PAUSED);
	ck_assert_str_eq(s0_lifecycle_result_sandbox_id(lr), id);
	s0_lifecycle_result_free(lr);
	lt_quiesce(&t);
	ck_assert_double_eq(lt_inum(&t, NULL, "storage.publications"), pub0 + 1);
	char *head2 = lt_head(&t, id);
	ck_assert_str_eq(head, head2);
	free(head);
	free(head2);
	free(id);
	lt_close(&t);
}
END_TEST

/* PTX-08: with the intent durable, a node-channel outage still yields
 * acceptance (202 here); without the intent the call fails, nothing changes. */
START_TEST(ptx08_accepted_under_outage_error_without_intent)
{
	LT_ROW("PTX-08");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	LT_OK(s0_local_fault_arm(t.local, "node_channel", S0_FAULT_HOLD, 0, 0, &e_));
	s0_lifecycle_result *lr = post_pause(&t, id);
	ck_assert_int_eq(s0_lifecycle_result_http_status(lr), 202);
	ck_assert(!s0_lifecycle_result_paused(lr));
	s0_lifecycle_result_free(lr);
	lt_quiesce(&t);
	lt_advance(&t, 30000);
	assert_not_paused(&t, id);
	lr = post_pause(&t, id); /* a retry still joins and is accepted */
	ck_assert_int_eq(s0_lifecycle_result_http_status(lr), 202);
	s0_lifecycle_result_free(lr);
	LT_OK(s0_local_fault_release(t.local, "node_channel", &e_));
	wait_paused(&t, id);
	ck_assert_double_eq(lt_inum(&t, id, "sandbox.operation_counts.pause"), 1);

	/* the intent cannot be recorded: an error, and the sandbox is unchanged */
	char *id2 = lt_claim(&t, NULL, NULL);
	char *rid = lt_runtime_id(&t, id2);
	LT_OK(s0_local_fault_arm(t.local, "meta_store@intent", S0_FAULT_FAIL, 1, 0, &e_));
	s0_error *err = NULL;
	lr = NULL;
	LT_EXPECT(s0_sandbox_pause(t.c, id2, S0_BOOL_UNSET, &lr, &err), err, S0_EINTERNAL, NULL);
	lt_quiesce(&t);
	lt_assert_running(&t, id2);
	char *rid2 = lt_runtime_id(&t, id2);
	ck_assert_str_eq(rid, rid2);
	ck_assert_double_eq(lt_inum(&t, id2, "sandbox.operation_counts.pause"), 0);
	free(rid);
	free(rid2);
	free(id2);
	free(id);
	lt_close(&t);
}
END_TEST

/* PTX-09: a store outage after the seal keeps the retirement retryable:
 * not paused, writer and capacity held; then exactly one publication. */
START_TEST(ptx09_store_outage_after_seal_is_retryable)
{
	LT_ROW("PTX-09");
	static const char *const faults[] = {"object_store@after-seal", "meta_store@commit"};
	for (size_t k = 0; k < 2; k++) {
		lt t;
		lt_open(&t, NULL);
		char *id = lt_claim(&t, NULL, NULL);
		lt_write(&t, id, "/workspace/w", "dirty");
		double cpu = lt_inum(&t, NULL, "node.cpu_used_millis");
		double pub0 = lt_inum(&t, NULL, "storage.publications");
		LT_OK(s0_local_fault_arm(t.local, faults[k], S0_FAULT_FAIL, 0, 0, &e_));
		s0_lifecycle_result_free(post_pause(&t, id));
		for (int i = 0; i < 5; i++) {
			lt_quiesce(&t);
			lt_advance(&t, 2000);
		}
		assert_not_paused(&t, id);
		cJSON *j = lt_inspect(&t, id);
		cJSON *rts = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "node"), "runtimes");
		ck_assert_int_eq(cJSON_GetArraySize(rts), 1); /* writer grant held */
		ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(rts, 0), "fenced")));
		ck_assert_double_eq(lt_num(j, "node.cpu_used_millis"), cpu);
		cJSON_Delete(j);
		LT_OK(s0_local_fault_release(t.local, faults[k], &e_));
		wait_paused(&t, id);
		ck_assert_double_eq(lt_inum(&t, NULL, "storage.publications"), pub0 + 1);
		char *head = lt_head(&t, id);
		char *w = lt_gen_cat(&t, head, "/workspace/w");
		ck_assert_str_eq(w, "dirty");
		free(w);
		free(head);
		free(id);
		lt_close(&t);
	}
}
END_TEST

static int bg_resume(lt *t, void *arg, s0_error **err)
{
	s0_lifecycle_result *lr = NULL;
	int rc = s0_sandbox_resume(t->c, arg, S0_BOOL_UNSET, &lr, err);
	if (rc == S0_OK && !s0_lifecycle_result_resumed(lr))
		rc = S0_EPROTOCOL;
	s0_lifecycle_result_free(lr);
	return rc;
}

static int bg_pause_and_wait(lt *t, void *arg, s0_error **err)
{
	return lt_pause_rc(t, arg, err);
}

/* Wait until n threads hold or await the sandbox's lifecycle lock. */
static void wait_lock_refs(lt *t, const char *id, int n)
{
	char path[160];
	snprintf(path, sizeof path, "node.lifecycle_locks.%s", id);
	for (int i = 0; i < 4000; i++) {
		cJSON *j = lt_inspect(t, id);
		const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "node"),
		                                                         "lifecycle_locks"), id);
		bool ok = cJSON_IsNumber(v) && v->valuedouble >= n;
		cJSON_Delete(j);
		if (ok)
			return;
		lt_nap_ms(5);
	}
	ck_abort_msg("lock of %s never reached %d", id, n);
}

/* PTX-10: pause preconditions: starting, failed and terminating are 409,
 * unknown 404; a pause during a resume waits for it, then pauses. */
START_TEST(ptx10_pause_preconditions)
{
	LT_ROW("PTX-10");
	lt t;
	lt_open(&t, NULL);
	s0_lifecycle_result *lr = NULL;
	s0_error *err = NULL;
	LT_EXPECT(s0_sandbox_pause(t.c, "sb_unknown", S0_BOOL_UNSET, &lr, &err), err, S0_ENOTFOUND,
	          "not_found");

	/* starting: a crashed runtime whose terminal proof is pending */
	char *id = lt_claim(&t, NULL, NULL);
	char fault[128];
	snprintf(fault, sizeof fault, "runtime_crash@%s", id);
	LT_OK(s0_local_fault_arm(t.local, "resource_leak:network", S0_FAULT_HOLD, 0, 0, &e_));
	LT_OK(s0_local_fault_arm(t.local, fault, S0_FAULT_FAIL, 1, 0, &e_));
	lt_quiesce(&t);
	ck_assert_int_eq(lt_status(&t, id), S0_STATUS_STARTING);
	LT_EXPECT(s0_sandbox_pause(t.c, id, S0_BOOL_UNSET, &lr, &err), err, S0_ECONFLICT,
	          "lifecycle_conflict");
	/* failed: the proof passes but no replacement can be placed */
	LT_OK(s0_local_fault_arm(t.local, "capacity", S0_FAULT_FAIL, 0, 0, &e_));
	LT_OK(s0_local_fault_release(t.local, "resource_leak:network", &e_));
	lt_quiesce(&t);
	s0_sandbox_info *sb = lt_get(&t, id);
	ck_assert_int_eq(s0_sandbox_info_status(sb), S0_STATUS_FAILED);
	ck_assert(!s0_sandbox_info_paused(sb));
	s0_sandbox_info_free(sb);
	LT_EXPECT(s0_sandbox_pause(t.c, id, S0_BOOL_UNSET, &lr, &err), err, S0_ECONFLICT,
	          "lifecycle_conflict");
	LT_OK(s0_local_fault_release(t.local, "capacity", &e_));
	lt_quiesce(&t);
	for (int i = 0; i < 100 && lt_status(&t, id) != S0_STATUS_RUNNING; i++)
		lt_advance(&t, 100), lt_quiesce(&t);
	lt_assert_running(&t, id);
	/* terminating: a delete whose terminal proof is pending */
	LT_OK(s0_local_fault_arm(t.local, "resource_leak:alloc_dir", S0_FAULT_HOLD, 0, 0, &e_));
	LT_OK(s0_sandbox_delete(t.c, id, &e_));
	ck_assert_int_eq(lt_status(&t, id), S0_STATUS_TERMINATING);
	LT_EXPECT(s0_sandbox_pause(t.c, id, S0_BOOL_UNSET, &lr, &err), err, S0_ECONFLICT,
	          "lifecycle_conflict");
	LT_OK(s0_local_fault_release(t.local, "resource_leak:alloc_dir", &e_));
	lt_quiesce(&t);
	sb = NULL;
	LT_EXPECT(s0_sandbox_get(t.c, id, &sb, &err), err, S0_ENOTFOUND, NULL);
	free(id);

	/* a pause during a resume waits for the resume, then pauses (g+1) */
	id = lt_claim(&t, NULL, NULL);
	lt_pause(&t, id);
	int64_t g = lt_generation(&t, id);
	LT_OK(s0_local_fault_arm(t.local, "resume_delay", S0_FAULT_HOLD, 0, 0, &e_));
	lt_bg res, pau;
	lt_bg_start(&res, &t, bg_resume, id);
	lt_wait_fault_hits(&t, "resume_delay", 1);
	lt_bg_start(&pau, &t, bg_pause_and_wait, id);
	wait_lock_refs(&t, id, 2); /* the pause waits behind the resume */
	LT_OK(s0_local_fault_release(t.local, "resume_delay", &e_));
	ck_assert_int_eq(lt_bg_join(&res), S0_OK);
	ck_assert_int_eq(lt_bg_join(&pau), S0_OK);
	lt_bg_free(&res);
	lt_bg_free(&pau);
	lt_assert_paused(&t, id);
	ck_assert_int_eq(lt_generation(&t, id), g + 1);
	free(id);
	lt_close(&t);
}
END_TEST

Suite *s0_local_ptx_suite(void)
{
	Suite *s = suite_create("local-ptx");
	TCase *tc = tcase_create("ptx");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, ptx01_pause_is_asynchronous);
	tcase_add_test(tc, ptx02_intent_names_exact_runtime_and_survives_restart);
	tcase_add_test(tc, ptx03_stop_is_idempotent_and_exact);
	tcase_add_test(tc, ptx04_published_generations_never_change);
	tcase_add_test(tc, ptx05_restart_at_each_step_keeps_commit_atomic);
	tcase_add_test(tc, ptx06_capacity_returns_only_after_terminal_proof);
	tcase_add_test(tc, ptx07_concurrent_pauses_join_one_operation);
	tcase_add_test(tc, ptx08_accepted_under_outage_error_without_intent);
	tcase_add_test(tc, ptx09_store_outage_after_seal_is_retryable);
	tcase_add_test(tc, ptx10_pause_preconditions);
	suite_add_tcase(s, tc);
	return s;
}
