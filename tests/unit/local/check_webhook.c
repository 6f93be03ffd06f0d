/*
 * MFB-15: with a webhook configured, memory capture needs the durable
 * webhook outbox and starts only after in-flight deliveries and their
 * acknowledgements have drained; without a durable outbox the memory pause
 * is refused (503) and the sandbox keeps running. The receiver is the
 * loopback responder (tests/support/responder.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lt.h"
#include "suites.h"
#include "../../support/responder.h"

static char *claim_hooked(lt *t, const char *url)
{
	char extra[512];
	snprintf(extra, sizeof extra,
	         "{\"webhook\":{\"url\":\"%s/hook\",\"secret\":\"s3cret\","
	         "\"watch_dir\":\"/workspace\"}}",
	         url);
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.extra_json = extra;
	return lt_claim(t, NULL, &cfg);
}

static int mem_pause_rc(lt *t, const char *id, s0_error **err)
{
	s0_wait_options wo = S0_WAIT_OPTIONS_INIT;
	wo.flags = S0_WAIT_NO_JITTER;
	wo.memory = S0_BOOL_TRUE;
	s0_sandbox_info *sb = NULL;
	int rc = s0_sandbox_pause_and_wait(t->c, id, &wo, &sb, err);
	s0_sandbox_info_free(sb);
	return rc;
}

static int bg_mem_pause(lt *t, void *arg, s0_error **err)
{
	return mem_pause_rc(t, arg, err);
}

/* MFB-15, first half: acknowledgements held by `webhook_ack_delay` hold
 * capture; capture starts after the last acknowledgement. */
START_TEST(mfb15_capture_waits_for_webhook_acks)
{
	LT_ROW("MFB-15");
	s0t_responder *r = s0t_responder_new();
	ck_assert_ptr_nonnull(r);
	s0t_responder_set_default(r, 200, "application/json", "{}");
	lt t;
	lt_open(&t, NULL);
	char *id = claim_hooked(&t, s0t_responder_url(r));
	LT_OK(s0_local_fault_arm(t.local, "webhook_ack_delay", S0_FAULT_HOLD, 0, 0, &e_));
	lt_bg b;
	lt_bg_start(&b, &t, bg_mem_pause, id);
	ck_assert(s0t_responder_wait(r, 1, 10000)); /* delivered to the receiver */
	lt_wait_fault_hits(&t, "webhook_ack_delay", 1);
	lt_nap_ms(200);
	ck_assert(!b.done); /* the pause waits for the acknowledgement */
	cJSON *j = lt_inspect(&t, NULL);
	ck_assert_int_eq((int)lt_num(j, "memory.captures"), 0);
	ck_assert((int)lt_num(j, "memory.webhooks.pending") >= 1);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "memory"), "webhooks"), "durable")));
	cJSON_Delete(j);
	const s0t_request *q = s0t_responder_req(r, 0);
	ck_assert_str_eq(q->method, "POST");
	ck_assert_str_eq(q->path, "/hook");
	ck_assert_str_eq(s0t_req_header(q, "X-S0-Event"), "sandbox.pausing");
	ck_assert(!strncmp(s0t_req_header(q, "X-S0-Signature"), "sha256=", 7));
	ck_assert(strstr((const char *)q->body, id) != NULL);
	LT_OK(s0_local_fault_release(t.local, "webhook_ack_delay", &e_));
	ck_assert_int_eq(lt_bg_join(&b), S0_OK);
	lt_bg_free(&b);
	lt_quiesce(&t);
	lt_assert_paused(&t, id);
	/* inspection: capture started after the last acknowledgement before it */
	j = lt_inspect(&t, NULL);
	ck_assert_int_eq((int)lt_num(j, "memory.captures"), 1);
	cJSON *wh = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "memory"), "webhooks");
	cJSON *cap = cJSON_GetObjectItem(cJSON_GetObjectItem(wh, "capture_started_tick"), id);
	ck_assert(cJSON_IsNumber(cap));
	int before = 0;
	double last_ack = 0;
	const cJSON *ev;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItem(wh, "events"))
	{
		const char *name = cJSON_GetObjectItem(ev, "event")->valuestring;
		if (strcmp(name, "sandbox.pausing"))
			continue;
		ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(ev, "acked")));
		double tick = cJSON_GetObjectItem(ev, "ack_tick")->valuedouble;
		if (tick > last_ack)
			last_ack = tick;
		before++;
	}
	ck_assert_int_ge(before, 1);
	ck_assert(last_ack > 0 && cap->valuedouble > last_ack);
	cJSON_Delete(j);
	/* the outbox is durable: a restart keeps the acknowledged events */
	lt_reopen(&t);
	ck_assert((int)lt_inum(&t, NULL, "memory.webhooks.acked") >= 1);
	free(id);
	lt_close(&t);
	s0t_responder_free(r);
}
END_TEST

/* MFB-15, second half: without a durable outbox a memory pause of a
 * webhook sandbox is refused and the sandbox keeps running. */
START_TEST(mfb15_no_durable_outbox_refuses_memory_pause)
{
	LT_ROW("MFB-15");
	s0t_responder *r = s0t_responder_new();
	ck_assert_ptr_nonnull(r);
	s0t_responder_set_default(r, 200, "application/json", "{}");
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.manual_clock = 1;
	o.disable_webhook_outbox = 1;
	lt t;
	lt_open(&t, &o);
	char *id = claim_hooked(&t, s0t_responder_url(r));
	char *rt0 = lt_runtime_id(&t, id);
	s0_lifecycle_result *lr = NULL;
	s0_error *err = NULL;
	LT_EXPECT(s0_sandbox_pause(t.c, id, S0_BOOL_TRUE, &lr, &err), err, S0_EUNAVAILABLE, NULL);
	s0_lifecycle_result_free(lr);
	lt_quiesce(&t);
	lt_assert_running(&t, id);
	char *rt1 = lt_runtime_id(&t, id);
	ck_assert_str_eq(rt0, rt1);
	ck_assert_int_eq(lt_pending_ops(&t, id), 0);
	ck_assert_int_eq((int)lt_inum(&t, NULL, "memory.captures"), 0);
	/* a sandbox without a webhook still memory-pauses there */
	char *plain = lt_claim(&t, NULL, NULL);
	LT_OK(mem_pause_rc(&t, plain, &e_));
	lt_quiesce(&t);
	lt_assert_paused(&t, plain);
	/* and the webhook sandbox still pauses to its filesystem */
	lt_pause(&t, id);
	lt_assert_paused(&t, id);
	free(plain);
	free(rt0);
	free(rt1);
	free(id);
	lt_close(&t);
	s0t_responder_free(r);
}
END_TEST

Suite *s0_local_webhook_suite(void)
{
	Suite *s = suite_create("local-webhook");
	TCase *tc = tcase_create("mfb15");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, mfb15_capture_waits_for_webhook_acks);
	tcase_add_test(tc, mfb15_no_durable_outbox_refuses_memory_pause);
	suite_add_tcase(s, tc);
	return s;
}
