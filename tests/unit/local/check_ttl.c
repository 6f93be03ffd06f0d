/*
 * TTL, hard TTL, auto-resume and the runtime-access 503s (docs/behaviours.md
 * TTL-01..06, 10, 11, 16; TTL-09 is in check_rec.c) and the gateway wake
 * budget (GW-01..GW-04), all on the manual clock.
 *
 * Not here: TTL-07/TTL-08 (memory images: the checkpoint issue), TTL-12
 * (service routes, deferred), TTL-13 (n/a-local), TTL-14/TTL-15 (billing,
 * deferred). GW-01's WebSocket half is deferred with the streaming
 * endpoints; GW-02's HTTP-client timeout, GW-03's procd command timeout and
 * GW-04's server write timeout and client defaults belong to the server,
 * runtime and client issues; here the engine's side of each is checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "local/api/router.h"
#include "local/lifecycle/engine.h"
#include "local/local_internal.h"
#include "lt.h"
#include "suites.h"

static char *claim_ttl(lt *t, int32_t ttl, int32_t hard)
{
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	if (ttl >= 0) {
		cfg.set |= S0_CONFIG_SET_TTL;
		cfg.ttl_sec = ttl;
	}
	if (hard >= 0) {
		cfg.set |= S0_CONFIG_SET_HARD_TTL;
		cfg.hard_ttl_sec = hard;
	}
	return lt_claim(t, NULL, &cfg);
}

/* TTL-01: soft TTL expiry runs the planned filesystem-only pause. */
START_TEST(ttl01_soft_ttl_runs_planned_pause)
{
	LT_ROW("TTL-01");
	lt t;
	lt_open(&t, NULL);
	char *id = claim_ttl(&t, 60, -1);
	lt_write(&t, id, "/workspace/idle", "before the timeout");
	char *head0 = lt_head(&t, id);
	double pub = lt_inum(&t, NULL, "storage.publications");
	lt_advance(&t, 59000);
	lt_quiesce(&t);
	lt_assert_running(&t, id);
	lt_advance(&t, 2000);
	lt_quiesce(&t);
	lt_assert_paused(&t, id);
	ck_assert_double_eq(lt_inum(&t, id, "sandbox.operation_counts.ttl_pause"), 1);
	ck_assert_double_eq(lt_inum(&t, id, "sandbox.operation_counts.pause"), 0);
	ck_assert_double_eq(lt_inum(&t, NULL, "storage.publications"), pub + 1);
	char *head = lt_head(&t, id);
	ck_assert_str_ne(head, head0);
	char *f = lt_gen_cat(&t, head, "/workspace/idle");
	ck_assert_str_eq(f, "before the timeout");
	free(f);
	free(head);
	free(head0);
	free(id);
	lt_close(&t);
}
END_TEST

/* A claim with a raw config (server-side validation, not the client's). */
static int claim_raw(lt *t, const char *extra, s0_error **err)
{
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.extra_json = extra;
	s0_sandbox_info *sb = NULL;
	int rc = s0_sandbox_claim(t->c, "default", NULL, &cfg, &sb, err);
	s0_sandbox_info_free(sb);
	return rc;
}

static void expect_400(int rc, s0_error *err)
{
	ck_assert_int_eq(rc, S0_EINVAL);
	ck_assert_int_eq(s0_error_http_status(err), 400);
	ck_assert_str_eq(s0_error_wire_code(err), "bad_request");
	s0_error_free(err);
}

/* TTL-02: expiry arithmetic across claim, pause and resume; validation. */
START_TEST(ttl02_expiry_arithmetic_and_validation)
{
	LT_ROW("TTL-02");
	lt t;
	lt_open(&t, NULL);
	int64_t t0 = s0_local_now_unix_ms(t.local);
	char *id = claim_ttl(&t, 120, 600);
	s0_sandbox_info *sb = lt_get(&t, id);
	ck_assert_int_eq(s0_sandbox_info_expires_at_unix_ms(sb), t0 + 120000);
	ck_assert_int_eq(s0_sandbox_info_hard_expires_at_unix_ms(sb), t0 + 600000);
	s0_sandbox_info_free(sb);
	lt_advance(&t, 10000);
	lt_pause(&t, id);
	sb = lt_get(&t, id);
	ck_assert_int_eq(s0_sandbox_info_expires_at_unix_ms(sb), 0); /* no runtime: unset */
	ck_assert_int_eq(s0_sandbox_info_hard_expires_at_unix_ms(sb), t0 + 600000);
	s0_sandbox_info_free(sb);
	lt_advance(&t, 30000);
	int64_t t1 = s0_local_now_unix_ms(t.local);
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_resume(t.c, id, S0_BOOL_UNSET, &lr, &e_));
	s0_lifecycle_result_free(lr);
	sb = lt_get(&t, id);
	ck_assert_int_eq(s0_sandbox_info_expires_at_unix_ms(sb), t1 + 120000);
	ck_assert_int_eq(s0_sandbox_info_hard_expires_at_unix_ms(sb), t0 + 600000);
	s0_sandbox_info_free(sb);

	/* 0 means unset */
	char *none = claim_ttl(&t, 0, 0);
	sb = lt_get(&t, none);
	ck_assert_int_eq(s0_sandbox_info_expires_at_unix_ms(sb), 0);
	ck_assert_int_eq(s0_sandbox_info_hard_expires_at_unix_ms(sb), 0);
	s0_sandbox_info_free(sb);

	/* validation on claim and update (raw values reach the server) */
	s0_error *err = NULL;
	int rc = claim_raw(&t, "{\"ttl\":-1}", &err);
	expect_400(rc, err);
	err = NULL;
	rc = claim_raw(&t, "{\"hard_ttl\":-5}", &err);
	expect_400(rc, err);
	err = NULL;
	rc = claim_raw(&t, "{\"ttl\":100,\"hard_ttl\":50}", &err);
	expect_400(rc, err);
	s0_sandbox_config up = S0_SANDBOX_CONFIG_INIT;
	up.extra_json = "{\"ttl\":900}"; /* > hard_ttl 600 */
	err = NULL;
	rc = s0_sandbox_update(t.c, id, &up, &sb, &err);
	expect_400(rc, err);
	up.extra_json = "{\"hard_ttl\":-1}";
	err = NULL;
	rc = s0_sandbox_update(t.c, id, &up, &sb, &err);
	expect_400(rc, err);
	/* nothing changed by the rejected updates */
	sb = lt_get(&t, id);
	ck_assert_int_eq(s0_sandbox_info_hard_expires_at_unix_ms(sb), t0 + 600000);
	s0_sandbox_info_free(sb);
	free(none);
	free(id);
	lt_close(&t);
}
END_TEST

/* TTL-03: refresh moves expires_at (and hard_expires_at when hard_ttl). */
START_TEST(ttl03_refresh)
{
	LT_ROW("TTL-03");
	lt t;
	lt_open(&t, NULL);
	char *id = claim_ttl(&t, 100, 1000);
	lt_advance(&t, 50000);
	int64_t now = s0_local_now_unix_ms(t.local);
	s0_sandbox_info *r = NULL;
	LT_OK(s0_sandbox_refresh(t.c, id, 30, &r, &e_));
	ck_assert_int_eq(s0_sandbox_info_expires_at_unix_ms(r), now + 30000);
	ck_assert_int_eq(s0_sandbox_info_hard_expires_at_unix_ms(r), now + 1000000);
	s0_sandbox_info_free(r);
	lt_advance(&t, 1000);
	now = s0_local_now_unix_ms(t.local);
	LT_OK(s0_sandbox_refresh(t.c, id, 0, &r, &e_)); /* no duration: now + ttl */
	ck_assert_int_eq(s0_sandbox_info_expires_at_unix_ms(r), now + 100000);
	s0_sandbox_info_free(r);
	r = lt_get(&t, id);
	ck_assert_int_eq(s0_sandbox_info_expires_at_unix_ms(r), now + 100000);
	ck_assert_int_eq(s0_sandbox_info_hard_expires_at_unix_ms(r), now + 1000000);
	s0_sandbox_info_free(r);

	s0_error *err = NULL;
	LT_EXPECT(s0_sandbox_refresh(t.c, id, -1, &r, &err), err, S0_EINVAL, NULL);
	int rc = s0_sandbox_refresh(t.c, id, 1001, &r, &err); /* above hard_ttl */
	expect_400(rc, err);
	err = NULL;
	lt_pause(&t, id);
	LT_EXPECT(s0_sandbox_refresh(t.c, id, 10, &r, &err), err, S0_ECONFLICT, NULL);
	LT_EXPECT(s0_sandbox_refresh(t.c, "sb_none", 10, &r, &err), err, S0_ENOTFOUND, NULL);
	free(id);
	lt_close(&t);
}
END_TEST

static void expect_gone(lt *t, const char *id)
{
	s0_sandbox_info *sb = NULL;
	s0_error *err = NULL;
	LT_EXPECT(s0_sandbox_get(t->c, id, &sb, &err), err, S0_ENOTFOUND, NULL);
	s0_lifecycle_result *lr = NULL;
	LT_EXPECT(s0_sandbox_resume(t->c, id, S0_BOOL_UNSET, &lr, &err), err, S0_ENOTFOUND, NULL);
	void *d = NULL;
	size_t n = 0;
	LT_EXPECT(s0_files_read(t->c, id, "/workspace/x", &d, &n, &err), err, S0_ENOTFOUND, NULL);
	cJSON *j = lt_inspect(t, id);
	ck_assert_ptr_null(cJSON_GetObjectItem(j, "sandbox"));
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "node"),
	                                                        "runtimes")), 0);
	cJSON_Delete(j);
}

/* TTL-04: hard TTL deletes running and paused sandboxes alike, also
 * across a manager restart in the middle of the deletion. */
START_TEST(ttl04_hard_ttl_deletes_running_and_paused)
{
	LT_ROW("TTL-04");
	lt t;
	lt_open(&t, NULL);
	double cpu0 = lt_inum(&t, NULL, "node.cpu_used_millis");
	char *run = claim_ttl(&t, -1, 100);
	char *pau = claim_ttl(&t, -1, 100);
	char *mid = claim_ttl(&t, -1, 200);
	lt_write(&t, run, "/workspace/x", "x");
	lt_write(&t, pau, "/workspace/x", "x");
	lt_pause(&t, pau);
	lt_advance(&t, 101000);
	lt_quiesce(&t);
	expect_gone(&t, run);
	expect_gone(&t, pau);
	lt_assert_running(&t, mid);
	LT_OK(s0_local_fault_arm(t.local, "resource_leak:alloc_dir", S0_FAULT_HOLD, 0, 0, &e_));
	lt_advance(&t, 100000);
	lt_quiesce(&t);
	ck_assert_int_eq(lt_status(&t, mid), S0_STATUS_TERMINATING);
	LT_OK(s0_local_restart_manager(t.local, &e_));
	LT_OK(s0_local_fault_release(t.local, "resource_leak:alloc_dir", &e_));
	lt_quiesce(&t);
	expect_gone(&t, mid);
	ck_assert_double_eq(lt_inum(&t, NULL, "node.cpu_used_millis"), cpu0);
	LT_OK(s0_local_gc(t.local, &e_));
	free(run);
	free(pau);
	free(mid);
	lt_close(&t);
}
END_TEST

/* TTL-05: with auto_resume (the default) a runtime request wakes a paused
 * sandbox synchronously and is served in the same request. */
START_TEST(ttl05_runtime_request_wakes_paused_sandbox)
{
	LT_ROW("TTL-05");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/w", "wake me");
	lt_pause(&t, id);
	int64_t g = lt_generation(&t, id);
	ck_assert(lt_file_is(&t, id, "/workspace/w", "wake me"));
	lt_assert_running(&t, id);
	ck_assert_int_eq(lt_generation(&t, id), g + 1);
	/* every runtime request wakes: stat, list, write, mkdir, move, delete */
	lt_pause(&t, id);
	ck_assert_int_eq(lt_stat_rc(&t, id, "/workspace/w"), S0_OK);
	lt_pause(&t, id);
	ck_assert_int_eq(lt_list_len(&t, id, "/workspace"), 1);
	lt_pause(&t, id);
	LT_OK(s0_files_mkdir(t.c, id, "/workspace/d", false, &e_));
	lt_pause(&t, id);
	LT_OK(s0_files_move(t.c, id, "/workspace/w", "/workspace/d/w", &e_));
	lt_pause(&t, id);
	LT_OK(s0_files_delete(t.c, id, "/workspace/d", &e_));
	ck_assert_int_eq(lt_generation(&t, id), g + 6);
	free(id);
	lt_close(&t);
}
END_TEST

/* TTL-06: auto_resume false: a runtime request gets 503 and the sandbox
 * stays paused. */
START_TEST(ttl06_auto_resume_disabled)
{
	LT_ROW("TTL-06");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.auto_resume = S0_BOOL_FALSE;
	s0_sandbox_info *sb = NULL;
	LT_OK(s0_sandbox_update(t.c, id, &cfg, &sb, &e_));
	ck_assert(!s0_sandbox_info_auto_resume(sb));
	s0_sandbox_info_free(sb);
	lt_pause(&t, id);
	void *d = NULL;
	size_t n = 0;
	s0_error *err = NULL;
	int rc = s0_files_read(t.c, id, "/workspace/x", &d, &n, &err);
	ck_assert_int_eq(rc, S0_EUNAVAILABLE);
	ck_assert_int_eq(s0_error_http_status(err), 503);
	ck_assert_str_eq(s0_error_reason(err), "auto_resume_disabled");
	ck_assert_str_eq(s0_error_message(err), "sandbox is not running and auto_resume is disabled");
	s0_error_free(err);
	lt_quiesce(&t);
	lt_assert_paused(&t, id);
	lt_resume(&t, id); /* an explicit resume still works */
	free(id);
	lt_close(&t);
}
END_TEST

static int bg_read(lt *t, void *arg, s0_error **err)
{
	void *data = NULL;
	size_t len = 0;
	int rc = s0_files_read(t->c, arg, "/workspace/f", &data, &len, err);
	if (rc == S0_OK && (len != 4 || memcmp(data, "file", 4)))
		rc = S0_EPROTOCOL;
	s0_free(data);
	return rc;
}

/* Poll GET (real-time naps; the wake thread is not controller work) until running. */
static void wait_woken(lt *t, const char *id)
{
	for (int i = 0; i < 2000 && lt_status(t, id) != S0_STATUS_RUNNING; i++)
		lt_nap_ms(5);
	lt_assert_running(t, id);
}

/* TTL-10: while the accepted resume has not committed, runtime requests
 * get 503 "sandbox is waking up"; once it commits they succeed. */
START_TEST(ttl10_waking_up_until_commit)
{
	LT_ROW("TTL-10");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/f", "file");
	lt_pause(&t, id);
	LT_OK(s0_local_fault_arm(t.local, "resume_delay", S0_FAULT_HOLD, 0, 0, &e_));
	lt_bg bg;
	lt_bg_start(&bg, &t, bg_read, id);
	lt_wait_fault_hits(&t, "resume_delay", 1);
	lt_advance_until_done(&t, &bg, 5000, 1000);
	ck_assert_int_eq(lt_bg_join(&bg), S0_EUNAVAILABLE);
	ck_assert_int_eq(s0_error_http_status(bg.err), 503);
	ck_assert_str_eq(s0_error_reason(bg.err), "waking_up");
	ck_assert_str_eq(s0_error_message(bg.err), "sandbox is waking up");
	ck_assert_int_eq(s0_error_retry_after_ms(bg.err), 1000);
	lt_bg_free(&bg);
	lt_assert_paused(&t, id); /* not committed yet */
	LT_OK(s0_local_fault_release(t.local, "resume_delay", &e_));
	wait_woken(&t, id);
	ck_assert(lt_file_is(&t, id, "/workspace/f", "file"));
	free(id);
	lt_close(&t);
}
END_TEST

/* TTL-11: a wake that fails answers 503 sandbox_resume_failed and the
 * sandbox stays paused; once the cause is gone a new request wakes it. */
START_TEST(ttl11_failed_wake_is_resume_failed)
{
	LT_ROW("TTL-11");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/f", "file");
	lt_pause(&t, id);
	LT_OK(s0_local_fault_arm(t.local, "capacity", S0_FAULT_FAIL, 0, 0, &e_));
	void *d = NULL;
	size_t n = 0;
	s0_error *err = NULL;
	int rc = s0_files_read(t.c, id, "/workspace/f", &d, &n, &err);
	ck_assert_int_eq(rc, S0_ERESUME);
	ck_assert_int_eq(s0_error_http_status(err), 503);
	ck_assert_str_eq(s0_error_wire_code(err), "sandbox_resume_failed");
	ck_assert_str_eq(s0_error_message(err), "sandbox resume failed");
	ck_assert_int_eq(s0_error_retry_after_ms(err), 1000); /* worth another try */
	s0_error_free(err);
	lt_assert_paused(&t, id);
	LT_OK(s0_local_fault_release(t.local, "capacity", &e_));
	ck_assert(lt_file_is(&t, id, "/workspace/f", "file"));
	lt_assert_running(&t, id);
	free(id);
	lt_close(&t);
}
END_TEST

/* TTL-16: the typical pattern, end to end on the clock. */
START_TEST(ttl16_typical_pattern)
{
	LT_ROW("TTL-16");
	lt t;
	lt_open(&t, NULL);
	int64_t t0 = s0_local_now_unix_ms(t.local);
	char *id = claim_ttl(&t, 300, 3600); /* 1: soft ttl, hard bound */
	lt_write(&t, id, "/workspace/step", "one");
	s0_snapshot_info *m1 = NULL, *m2 = NULL; /* 2: milestones */
	LT_OK(s0_snapshot_create(t.c, id, "m1", NULL, t0 + 7200 * 1000LL, &m1, &e_));
	lt_advance(&t, 301000); /* 3: idle time pauses it */
	lt_quiesce(&t);
	lt_assert_paused(&t, id);
	ck_assert(lt_file_is(&t, id, "/workspace/step", "one")); /* 4: access wakes it */
	lt_assert_running(&t, id);
	lt_write(&t, id, "/workspace/step", "two");
	LT_OK(s0_snapshot_create(t.c, id, "m2", NULL, 0, &m2, &e_));
	lt_advance(&t, 301000);
	lt_quiesce(&t);
	lt_assert_paused(&t, id);
	lt_resume(&t, id); /* explicit resume */
	ck_assert(lt_file_is(&t, id, "/workspace/step", "two"));
	/* 5: hard_ttl bounds the durable state */
	lt_advance(&t, t0 + 3601 * 1000LL - s0_local_now_unix_ms(t.local));
	lt_quiesce(&t);
	s0_sandbox_info *sb = NULL;
	s0_error *err = NULL;
	LT_EXPECT(s0_sandbox_get(t.c, id, &sb, &err), err, S0_ENOTFOUND, NULL);
	/* the snapshots follow their own retention */
	s0_snapshot_info *s = NULL;
	LT_OK(s0_snapshot_get(t.c, s0_snapshot_info_id(m1), &s, &e_));
	s0_snapshot_info_free(s);
	LT_OK(s0_sandbox_claim(t.c, "default", s0_snapshot_info_id(m2), NULL, &sb, &e_));
	char *again = strdup(s0_sandbox_info_id(sb));
	s0_sandbox_info_free(sb);
	ck_assert(lt_file_is(&t, again, "/workspace/step", "two"));
	lt_advance(&t, 3600 * 1000LL);
	lt_quiesce(&t);
	LT_EXPECT(s0_snapshot_get(t.c, s0_snapshot_info_id(m1), &s, &err), err, S0_ENOTFOUND, NULL);
	LT_OK(s0_snapshot_get(t.c, s0_snapshot_info_id(m2), &s, &e_));
	s0_snapshot_info_free(s);
	s0_snapshot_info_free(m1);
	s0_snapshot_info_free(m2);
	free(again);
	free(id);
	lt_close(&t);
}
END_TEST

/* GW-01: a wake under 45 s serves the request; a longer one ends the
 * request at 45 s with 503 waking_up while the resume goes on. */
START_TEST(gw01_wake_bounded_at_45s)
{
	LT_ROW("GW-01");
	LT_ROW("GW-04");
	ck_assert_int_ge(S0__ROUTER_WAKE_BUDGET_MS, 45000);
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/f", "file");
	lt_pause(&t, id);
	LT_OK(s0_local_fault_arm(t.local, "resume_delay", S0_FAULT_DELAY, 0, 40000, &e_));
	lt_bg bg;
	lt_bg_start(&bg, &t, bg_read, id);
	lt_wait_fault_hits(&t, "resume_delay", 1);
	lt_advance(&t, 40000);
	ck_assert_int_eq(lt_bg_join(&bg), S0_OK);
	lt_bg_free(&bg);
	lt_assert_running(&t, id);

	lt_pause(&t, id);
	LT_OK(s0_local_fault_arm(t.local, "resume_delay", S0_FAULT_DELAY, 0, 50000, &e_));
	lt_bg_start(&bg, &t, bg_read, id);
	lt_wait_fault_hits(&t, "resume_delay", 1);
	lt_advance(&t, 44000);
	lt_nap_ms(30);
	ck_assert(!__atomic_load_n(&bg.done, __ATOMIC_SEQ_CST)); /* still within budget */
	lt_advance(&t, 1000);
	ck_assert_int_eq(lt_bg_join(&bg), S0_EUNAVAILABLE);
	ck_assert_str_eq(s0_error_reason(bg.err), "waking_up");
	lt_bg_free(&bg);
	lt_assert_paused(&t, id);
	lt_advance(&t, 5000); /* the accepted resume goes on */
	wait_woken(&t, id);
	LT_OK(s0_local_fault_release(t.local, "resume_delay", &e_));
	free(id);
	lt_close(&t);
}
END_TEST

typedef struct begin_args {
	const char *id;
	int64_t budget_ms;
} begin_args;

static int bg_begin(lt *t, void *arg, s0_error **err)
{
	begin_args *a = arg;
	s0__runtime_access *acc = NULL;
	int rc = s0__engine_runtime_begin(s0__local_engine(t->local), "team_local", a->id,
	                                  a->budget_ms, &acc, err);
	s0__engine_runtime_end(acc);
	return rc;
}

/* GW-02 (engine side): an earlier caller deadline ends the request, never
 * the accepted resume, which completes durably. */
START_TEST(gw02_caller_deadline_does_not_cancel_resume)
{
	LT_ROW("GW-02");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_pause(&t, id);
	int64_t g = lt_generation(&t, id);
	LT_OK(s0_local_fault_arm(t.local, "resume_delay", S0_FAULT_DELAY, 0, 20000, &e_));
	begin_args a = {id, 5000};
	lt_bg bg;
	lt_bg_start(&bg, &t, bg_begin, &a);
	lt_wait_fault_hits(&t, "resume_delay", 1);
	lt_advance(&t, 5000);
	ck_assert_int_eq(lt_bg_join(&bg), S0_EUNAVAILABLE);
	ck_assert_str_eq(s0_error_reason(bg.err), "waking_up");
	lt_bg_free(&bg);
	lt_advance(&t, 15000);
	wait_woken(&t, id);
	ck_assert_int_eq(lt_generation(&t, id), g + 1);
	LT_OK(s0_local_fault_release(t.local, "resume_delay", &e_));
	free(id);
	lt_close(&t);
}
END_TEST

/* GW-03: during a held wake, metadata requests answer at once with the
 * current status. */
START_TEST(gw03_metadata_prompt_during_wake)
{
	LT_ROW("GW-03");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/f", "file");
	lt_pause(&t, id);
	LT_OK(s0_local_fault_arm(t.local, "resume_delay", S0_FAULT_HOLD, 0, 0, &e_));
	lt_bg bg;
	lt_bg_start(&bg, &t, bg_read, id);
	lt_wait_fault_hits(&t, "resume_delay", 1);
	for (int i = 0; i < 20; i++) {
		lt_assert_paused(&t, id);
		s0_sandbox_info *st = NULL;
		LT_OK(s0_sandbox_status(t.c, id, &st, &e_));
		ck_assert_int_eq(s0_sandbox_info_status(st), S0_STATUS_PAUSED);
		s0_sandbox_info_free(st);
		s0_sandbox_page *page = NULL;
		LT_OK(s0_sandbox_list(t.c, NULL, &page, &e_));
		s0_sandbox_page_free(page);
	}
	ck_assert(!__atomic_load_n(&bg.done, __ATOMIC_SEQ_CST));
	LT_OK(s0_local_fault_release(t.local, "resume_delay", &e_));
	ck_assert_int_eq(lt_bg_join(&bg), S0_OK);
	lt_bg_free(&bg);
	free(id);
	lt_close(&t);
}
END_TEST

/* A manual clock never goes back across a reopen: it resumes no earlier
 * than the latest time the data directory recorded, so recorded
 * timestamps never lie in the future and TTLs do not slip. */
START_TEST(manual_clock_never_goes_back_across_a_reopen)
{
	lt t;
	lt_open(&t, NULL);
	lt_advance(&t, 86400000); /* a day ahead of the wall clock */
	char *id = lt_claim(&t, NULL, NULL);
	s0_sandbox_info *sb = lt_get(&t, id);
	int64_t created = s0_sandbox_info_created_at_unix_ms(sb);
	s0_sandbox_info_free(sb);
	lt_shutdown(&t); /* reopen with the original start, a day back */
	s0_error *err = NULL;
	lt_ok(s0_local_open(t.dir, &t.opts, &t.local, &err), &err, "s0_local_open");
	ck_assert_int_ge(s0_local_now_unix_ms(t.local), created);
	err = NULL;
	lt_ok(s0_client_new_local(t.local, NULL, &t.c, &err), &err, "s0_client_new_local");
	lt_assert_running(&t, id); /* recovered; nothing expired by the move */
	free(id);
	lt_close(&t);
}
END_TEST

Suite *s0_local_ttl_suite(void)
{
	Suite *s = suite_create("local-ttl");
	TCase *tc = tcase_create("ttl");
	tcase_set_timeout(tc, 120);
	tcase_set_tags(tc, LT_TAG_RUNTIMES); /* also on gvisor (unit-local-gvisor) */
	tcase_add_test(tc, ttl01_soft_ttl_runs_planned_pause);
	tcase_add_test(tc, ttl02_expiry_arithmetic_and_validation);
	tcase_add_test(tc, ttl03_refresh);
	tcase_add_test(tc, ttl04_hard_ttl_deletes_running_and_paused);
	tcase_add_test(tc, ttl05_runtime_request_wakes_paused_sandbox);
	tcase_add_test(tc, ttl06_auto_resume_disabled);
	tcase_add_test(tc, ttl10_waking_up_until_commit);
	tcase_add_test(tc, ttl11_failed_wake_is_resume_failed);
	tcase_add_test(tc, ttl16_typical_pattern);
	tcase_add_test(tc, manual_clock_never_goes_back_across_a_reopen);
	suite_add_tcase(s, tc);
	TCase *gw = tcase_create("gw");
	tcase_set_timeout(gw, 120);
	tcase_add_test(gw, gw01_wake_bounded_at_45s);
	tcase_add_test(gw, gw02_caller_deadline_does_not_cancel_resume);
	tcase_add_test(gw, gw03_metadata_prompt_during_wake);
	suite_add_tcase(s, gw);
	return s;
}
