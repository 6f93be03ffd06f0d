/*
 * The resume transaction (docs/behaviours.md RTX-01..RTX-08) through the public
 * client. RTX-04's network-policy half is in check_network.c. Not here:
 * RTX-08's admission (403) and caller-cancel
 * (503) cases — billing is deferred, and the in-process transport cannot
 * cancel a request after dispatch (the HTTP server's tests own that).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_main.h"
#include "lt.h"
#include "suites.h"

static int bg_resume(lt *t, void *arg, s0_error **err)
{
	s0_lifecycle_result *lr = NULL;
	int rc = s0_sandbox_resume(t->c, arg, S0_BOOL_UNSET, &lr, err);
	if (rc == S0_OK && (!s0_lifecycle_result_resumed(lr) ||
	                    s0_lifecycle_result_http_status(lr) != 200))
		rc = S0_EPROTOCOL;
	s0_lifecycle_result_free(lr);
	return rc;
}

/* Lease counters that must be back where they were when a resume fails. */
typedef struct counters {
	double cpu, mem, carriers, nbd;
} counters;

static counters read_counters(lt *t)
{
	cJSON *j = lt_inspect(t, NULL);
	counters c = {lt_num(j, "node.cpu_used_millis"), lt_num(j, "node.memory_used_bytes"),
	              lt_num(j, "node.carriers_used"), lt_num(j, "node.nbd_used")};
	cJSON_Delete(j);
	return c;
}

static void assert_paused_intact(lt *t, const char *id, const char *head, int64_t gen)
{
	lt_assert_paused(t, id);
	char *h = lt_head(t, id);
	ck_assert_str_eq(h, head);
	free(h);
	if (gen >= 0)
		ck_assert_int_eq(lt_generation(t, id), gen);
}

/* RTX-01: concurrent resumes produce one new runtime at g+1. */
START_TEST(rtx01_concurrent_resumes_one_generation)
{
	LT_ROW("RTX-01");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_pause(&t, id);
	int64_t g = lt_generation(&t, id);
	double started = lt_inum(&t, NULL, "node.runtimes_started");
	enum { N = 10 };
	lt_bg bg[N];
	for (int i = 0; i < N; i++)
		lt_bg_start(&bg[i], &t, bg_resume, id);
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(lt_bg_join(&bg[i]), S0_OK);
		lt_bg_free(&bg[i]);
	}
	lt_assert_running(&t, id);
	ck_assert_int_eq(lt_generation(&t, id), g + 1);
	ck_assert_double_eq(lt_inum(&t, NULL, "node.runtimes_started"), started + 1);
	ck_assert_int_eq(lt_runtimes_of(&t, id), 1);
	free(id);
	lt_close(&t);
}
END_TEST

/* RTX-02: resume runs the sandbox's recorded image on its latest
 * committed head, never a newer template version. */
START_TEST(rtx02_resume_uses_recorded_image_and_head)
{
	LT_ROW("RTX-02");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	cJSON *j0 = lt_inspect(&t, id);
	char *image = strdup(lt_str(j0, "sandbox.image"));
	cJSON_Delete(j0);
	lt_write(&t, id, "/workspace/mine", "sandbox data");
	lt_pause(&t, id);
	char *head = lt_head(&t, id);

	/* the template is rebuilt meanwhile, with a marker file */
	char *src = NULL;
	ck_assert_int_ge(asprintf(&src, "%s/tree", t.dir), 0);
	ck_assert_int_eq(mkdir(src, 0755), 0);
	char *marker = NULL;
	ck_assert_int_ge(asprintf(&marker, "%s/new-template-version", src), 0);
	FILE *f = fopen(marker, "w");
	fputs("v2", f);
	fclose(f);
	LT_OK(s0_local_template_build(t.local, "default", src, NULL, &e_));

	lt_resume(&t, id);
	cJSON *j = lt_inspect(&t, id);
	ck_assert_str_eq(lt_str(j, "sandbox.image"), image);
	cJSON *rt = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "node"), "runtimes"),
	                               0);
	ck_assert_str_eq(lt_str(rt, "attached_generation"), head);
	cJSON_Delete(j);
	ck_assert(lt_file_is(&t, id, "/workspace/mine", "sandbox data"));
	ck_assert_int_eq(lt_stat_rc(&t, id, "/new-template-version"), S0_ENOTFOUND);
	/* a new claim does get the new version */
	char *fresh = lt_claim(&t, NULL, NULL);
	ck_assert(lt_file_is(&t, fresh, "/new-template-version", "v2"));
	free(fresh);
	free(marker);
	free(src);
	free(head);
	free(image);
	free(id);
	lt_close(&t);
}
END_TEST

/* RTX-03: one carrier and the exact CPU/memory leased atomically; the
 * carrier is resource-neutral; on failure nothing stays leased. */
START_TEST(rtx03_exact_lease_and_neutral_carrier)
{
	LT_ROW("RTX-03");
	lt t;
	lt_open(&t, NULL);
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.memory = "1Gi";
	char *id = lt_claim(&t, NULL, &cfg);
	lt_write(&t, id, "/tmp/previous-tenant", "x");
	lt_pause(&t, id);
	counters c0 = read_counters(&t);
	LT_OK(s0_local_fault_arm(t.local, "capacity", S0_FAULT_FAIL, 1, 0, &e_));
	s0_lifecycle_result *lr = NULL;
	s0_error *err = NULL;
	LT_EXPECT(s0_sandbox_resume(t.c, id, S0_BOOL_UNSET, &lr, &err), err, S0_EUNAVAILABLE, NULL);
	counters c1 = read_counters(&t);
	ck_assert(!memcmp(&c0, &c1, sizeof c0));

	lt_resume(&t, id);
	counters c2 = read_counters(&t);
	ck_assert_double_eq(c2.mem - c0.mem, 1 << 30);
	ck_assert_double_eq(c2.cpu - c0.cpu, 256); /* 1 millicore per 4 MiB */
	ck_assert_double_eq(c2.carriers - c0.carriers, 1);
	ck_assert_double_eq(c2.nbd - c0.nbd, 1);
	cJSON *j = lt_inspect(&t, id);
	cJSON *rt = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "node"), "runtimes"),
	                               0);
	ck_assert_double_eq(lt_num(rt, "memory_bytes"), 1 << 30);
	ck_assert_double_eq(lt_num(rt, "cpu_millis"), 256);
	cJSON_Delete(j);
	ck_assert_int_eq(lt_list_len(&t, id, "/tmp"), 0);
	free(id);
	lt_close(&t);
}
END_TEST

/* RTX-04: the new runtime has the committed RootFS attached before it is
 * reported running; without the readiness proof it never is. */
START_TEST(rtx04_running_only_after_readiness_proof)
{
	LT_ROW("RTX-04");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/r", "ready");
	lt_pause(&t, id);
	char *head = lt_head(&t, id);
	int64_t g = lt_generation(&t, id);
	counters c0 = read_counters(&t);
	LT_OK(s0_local_fault_arm(t.local, "procd_not_ready", S0_FAULT_FAIL, 1, 0, &e_));
	s0_lifecycle_result *lr = NULL;
	s0_error *err = NULL;
	LT_EXPECT(s0_sandbox_resume(t.c, id, S0_BOOL_UNSET, &lr, &err), err, S0_EUNAVAILABLE, NULL);
	/* stopped and reclaimed, generation consumed, still paused on its head */
	assert_paused_intact(&t, id, head, g + 1);
	counters c1 = read_counters(&t);
	ck_assert_double_eq(c1.cpu, c0.cpu);
	ck_assert_double_eq(c1.carriers, c0.carriers);

	LT_OK(s0_sandbox_resume(t.c, id, S0_BOOL_UNSET, &lr, &e_));
	s0_lifecycle_result_free(lr);
	lt_assert_running(&t, id);
	ck_assert_int_eq(lt_generation(&t, id), g + 2);
	ck_assert(lt_file_is(&t, id, "/workspace/r", "ready"));
	free(head);
	free(id);
	lt_close(&t);
}
END_TEST

/* RTX-05: FS resume is synchronous: right after the 200 the sandbox is
 * running at g+1 with a new runtime_id and serves at once. */
START_TEST(rtx05_resume_is_synchronous)
{
	LT_ROW("RTX-05");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	char *rid0 = lt_runtime_id(&t, id);
	lt_pause(&t, id);
	int64_t g = lt_generation(&t, id);
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_resume(t.c, id, S0_BOOL_UNSET, &lr, &e_));
	ck_assert_int_eq(s0_lifecycle_result_http_status(lr), 200);
	ck_assert(s0_lifecycle_result_resumed(lr));
	ck_assert_str_eq(s0_lifecycle_result_sandbox_id(lr), id);
	s0_lifecycle_result_free(lr);
	s0_sandbox_info *sb = lt_get(&t, id); /* no quiesce, no wait */
	ck_assert_int_eq(s0_sandbox_info_status(sb), S0_STATUS_RUNNING);
	ck_assert(!s0_sandbox_info_paused(sb));
	ck_assert_str_ne(s0_sandbox_info_runtime_id(sb), "");
	ck_assert_str_ne(s0_sandbox_info_runtime_id(sb), rid0);
	ck_assert_int_eq(s0_sandbox_info_runtime_generation(sb), g + 1);
	s0_sandbox_info_free(sb);
	lt_write(&t, id, "/workspace/now", "served");
	ck_assert(lt_file_is(&t, id, "/workspace/now", "served"));
	free(rid0);
	free(id);
	lt_close(&t);
}
END_TEST

/* RTX-06: no carrier, capacity, NBD device, node channel or object store:
 * 503, the paused state and head unchanged; resumes once the cause is gone. */
START_TEST(rtx06_unavailable_causes_keep_paused_state)
{
	LT_ROW("RTX-06");
	static const char *const faults[] = {"carrier", "capacity", "nbd_device", "node_channel",
	                                      "object_store"};
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/k", "kept");
	lt_pause(&t, id);
	for (size_t k = 0; k < 5; k++) {
		char *head = lt_head(&t, id);
		int64_t g = lt_generation(&t, id);
		counters c0 = read_counters(&t);
		LT_OK(s0_local_fault_arm(t.local, faults[k], S0_FAULT_FAIL, 0, 0, &e_));
		s0_lifecycle_result *lr = NULL;
		s0_error *err = NULL;
		int rc = s0_sandbox_resume(t.c, id, S0_BOOL_UNSET, &lr, &err);
		ck_assert_msg(rc == S0_EUNAVAILABLE && s0_error_http_status(err) == 503,
		              "%s: %s %d", faults[k], s0_code_name(rc), s0_error_http_status(err));
		s0_error_free(err);
		assert_paused_intact(&t, id, head, g); /* nothing started: generation kept */
		counters c1 = read_counters(&t);
		ck_assert(!memcmp(&c0, &c1, sizeof c0));
		LT_OK(s0_local_fault_release(t.local, faults[k], &e_));
		lt_resume(&t, id);
		ck_assert(lt_file_is(&t, id, "/workspace/k", "kept"));
		lt_pause(&t, id);
		free(head);
	}
	free(id);
	lt_close(&t);
}
END_TEST

/* RTX-07: resume of a running sandbox, during an explicit pause, and
 * during an automatic TTL pause. */
START_TEST(rtx07_resume_in_other_states)
{
	LT_ROW("RTX-07");
	lt t;
	lt_open(&t, NULL);
	/* running: resumed true, no new generation */
	char *id = lt_claim(&t, NULL, NULL);
	int64_t g = lt_generation(&t, id);
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_resume(t.c, id, S0_BOOL_UNSET, &lr, &e_));
	ck_assert(s0_lifecycle_result_resumed(lr));
	s0_lifecycle_result_free(lr);
	ck_assert_int_eq(lt_generation(&t, id), g);

	/* held explicit pause: the resume waits for it, then resumes (g+1) */
	LT_OK(s0_local_fault_arm(t.local, "object_store@after-seal", S0_FAULT_HOLD, 0, 0, &e_));
	LT_OK(s0_sandbox_pause(t.c, id, S0_BOOL_UNSET, &lr, &e_));
	s0_lifecycle_result_free(lr);
	lt_quiesce(&t);
	lt_bg bg;
	lt_bg_start(&bg, &t, bg_resume, id);
	lt_wait_fault_hits(&t, "object_store@after-seal", 3); /* the resume drives it too */
	LT_OK(s0_local_fault_release(t.local, "object_store@after-seal", &e_));
	ck_assert_int_eq(lt_bg_join(&bg), S0_OK);
	lt_bg_free(&bg);
	lt_assert_running(&t, id);
	ck_assert_int_eq(lt_generation(&t, id), g + 1);
	ck_assert_double_eq(lt_inum(&t, id, "sandbox.operation_counts.pause"), 1);
	free(id);

	/* held clock-triggered TTL pause: cancelled, stays in its generation */
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.set = S0_CONFIG_SET_TTL;
	cfg.ttl_sec = 60;
	id = lt_claim(&t, NULL, &cfg);
	g = lt_generation(&t, id);
	char *rid = lt_runtime_id(&t, id);
	LT_OK(s0_local_fault_arm(t.local, "node_channel@pause", S0_FAULT_HOLD, 0, 0, &e_));
	lt_advance(&t, 61000);
	lt_quiesce(&t);
	ck_assert_double_eq(lt_inum(&t, id, "sandbox.operation_counts.ttl_pause"), 1);
	ck_assert_int_eq(lt_pending_ops(&t, id), 1);
	LT_OK(s0_sandbox_resume(t.c, id, S0_BOOL_UNSET, &lr, &e_));
	ck_assert(s0_lifecycle_result_resumed(lr));
	s0_lifecycle_result_free(lr);
	ck_assert_int_eq(lt_pending_ops(&t, id), 0);
	LT_OK(s0_local_fault_release(t.local, "node_channel@pause", &e_));
	lt_quiesce(&t);
	lt_assert_running(&t, id);
	ck_assert_int_eq(lt_generation(&t, id), g);
	char *rid2 = lt_runtime_id(&t, id);
	ck_assert_str_eq(rid, rid2);
	lt_write(&t, id, "/workspace/after-cancel", "served by the same runtime");
	ck_assert(lt_file_is(&t, id, "/workspace/after-cancel", "served by the same runtime"));
	/* the soft TTL was re-armed from the resume, not left expired */
	s0_sandbox_info *sb = lt_get(&t, id);
	int64_t now = s0_local_now_unix_ms(t.local);
	ck_assert_int_gt(s0_sandbox_info_expires_at_unix_ms(sb), now);
	ck_assert_int_le(s0_sandbox_info_expires_at_unix_ms(sb), now + 60000);
	s0_sandbox_info_free(sb);
	lt_advance(&t, 1000);
	lt_quiesce(&t);
	lt_assert_running(&t, id);
	free(rid);
	free(rid2);
	free(id);
	lt_close(&t);
}
END_TEST

/* RTX-08: resume errors, each leaving the paused state and head intact. */
START_TEST(rtx08_resume_errors)
{
	LT_ROW("RTX-08");
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.manual_clock = 1;
	o.max_active_runtimes = 2;
	lt t;
	lt_open(&t, &o);
	s0_lifecycle_result *lr = NULL;
	s0_error *err = NULL;
	LT_EXPECT(s0_sandbox_resume(t.c, "sb_nosuchsandbox", S0_BOOL_UNSET, &lr, &err), err,
	          S0_ENOTFOUND, "not_found");

	/* hard-expired: 404 */
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.set = S0_CONFIG_SET_HARD_TTL;
	cfg.hard_ttl_sec = 60;
	char *exp = lt_claim(&t, NULL, &cfg);
	lt_pause(&t, exp);
	lt_advance(&t, 61000);
	lt_quiesce(&t);
	LT_EXPECT(s0_sandbox_resume(t.c, exp, S0_BOOL_UNSET, &lr, &err), err, S0_ENOTFOUND, NULL);
	free(exp);

	/* over the active quota: 429, still paused */
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/q", "quota");
	lt_pause(&t, id);
	char *head = lt_head(&t, id);
	int64_t g = lt_generation(&t, id);
	char *a = lt_claim(&t, NULL, NULL), *b = lt_claim(&t, NULL, NULL);
	ck_assert_int_eq(s0_sandbox_resume(t.c, id, S0_BOOL_UNSET, &lr, &err), S0_EQUOTA);
	ck_assert_str_eq(s0_error_reason(err), "quota_exceeded");
	ck_assert_int_eq(s0_error_retry_after_ms(err), 1000); /* worth a retry */
	s0_error_free(err);
	err = NULL;
	assert_paused_intact(&t, id, head, g);
	/* a claim refused for quota or placement carries Retry-After: 1 (docs/wire.md §3.1) */
	s0_sandbox_info *sb = NULL;
	ck_assert_int_eq(s0_sandbox_claim(t.c, "default", NULL, NULL, &sb, &err), S0_EQUOTA);
	ck_assert_int_eq(s0_error_retry_after_ms(err), 1000);
	s0_error_free(err);
	err = NULL;
	LT_OK(s0_local_fault_arm(t.local, "carrier", S0_FAULT_FAIL, 1, 0, &e_));
	LT_OK(s0_sandbox_delete(t.c, b, &e_));
	ck_assert_int_eq(s0_sandbox_claim(t.c, "default", NULL, NULL, &sb, &err), S0_EUNAVAILABLE);
	ck_assert_int_eq(s0_error_retry_after_ms(err), 1000);
	s0_error_free(err);
	err = NULL;
	free(b);
	b = lt_claim(&t, NULL, NULL);
	LT_OK(s0_sandbox_delete(t.c, a, &e_));
	LT_OK(s0_sandbox_delete(t.c, b, &e_));

	/* the server's wait for an in-flight pause runs out: 504 */
	char *busy = lt_claim(&t, NULL, NULL);
	LT_OK(s0_local_fault_arm(t.local, "meta_store@commit", S0_FAULT_HOLD, 0, 0, &e_));
	LT_OK(s0_sandbox_pause(t.c, busy, S0_BOOL_UNSET, &lr, &e_));
	s0_lifecycle_result_free(lr);
	lt_bg bg;
	lt_bg_start(&bg, &t, bg_resume, busy);
	lt_advance_until_done(&t, &bg, 5000, 1000);
	int rc = lt_bg_join(&bg);
	ck_assert_int_eq(rc, S0_EUNAVAILABLE);
	ck_assert_int_eq(s0_error_http_status(bg.err), 504);
	lt_bg_free(&bg);
	LT_OK(s0_local_fault_release(t.local, "meta_store@commit", &e_));
	lt_quiesce(&t);
	lt_pause(&t, busy);

	/* terminating: 409 */
	LT_OK(s0_local_fault_arm(t.local, "resource_leak:runsc", S0_FAULT_HOLD, 0, 0, &e_));
	char *dying = lt_claim(&t, NULL, NULL);
	LT_OK(s0_sandbox_delete(t.c, dying, &e_));
	LT_EXPECT(s0_sandbox_resume(t.c, dying, S0_BOOL_UNSET, &lr, &err), err, S0_ECONFLICT,
	          "lifecycle_conflict");
	LT_OK(s0_local_fault_release(t.local, "resource_leak:runsc", &e_));
	lt_quiesce(&t);

	/* after all of them the paused sandbox resumes with its data */
	assert_paused_intact(&t, id, head, g);
	lt_resume(&t, id);
	ck_assert(lt_file_is(&t, id, "/workspace/q", "quota"));
	free(dying);
	free(busy);
	free(a);
	free(b);
	free(head);
	free(id);
	lt_close(&t);
}
END_TEST

Suite *s0_local_rtx_suite(void)
{
	Suite *s = suite_create("local-rtx");
	TCase *tc = tcase_create("rtx");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, rtx01_concurrent_resumes_one_generation);
	tcase_add_test(tc, rtx02_resume_uses_recorded_image_and_head);
	tcase_add_test(tc, rtx03_exact_lease_and_neutral_carrier);
	tcase_add_test(tc, rtx04_running_only_after_readiness_proof);
	tcase_add_test(tc, rtx05_resume_is_synchronous);
	tcase_add_test(tc, rtx06_unavailable_causes_keep_paused_state);
	tcase_add_test(tc, rtx07_resume_in_other_states);
	tcase_add_test(tc, rtx08_resume_errors);
	suite_add_tcase(s, tc);
	return s;
}
