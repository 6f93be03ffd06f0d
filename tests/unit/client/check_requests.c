/*
 * Request lines, headers and bodies of every lifecycle, list and snapshot
 * endpoint (docs/wire.md §1.1, §3.1–3.8; CL-09 request bodies, CL-13 memory fork).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client_test.h"

#define SB_JSON                                                                          \
	"{\"id\":\"sb-1\",\"template_id\":\"default\",\"team_id\":\"team-1\","               \
	"\"status\":\"running\",\"paused\":false,\"auto_resume\":true,\"pod_name\":\"pod-1\"," \
	"\"runtime_generation\":3,\"runtime_id\":\"rt-3\","                                  \
	"\"expires_at\":\"2030-01-01T00:00:00Z\",\"hard_expires_at\":null,"                  \
	"\"claimed_at\":\"2029-12-31T23:00:00Z\",\"created_at\":\"2029-12-31T23:00:00Z\","   \
	"\"updated_at\":\"2029-12-31T23:30:00.5Z\"}"
#define CLAIM_JSON                                                                       \
	"{\"sandbox_id\":\"sb-1\",\"status\":\"running\",\"pod_name\":\"pod-1\","            \
	"\"template\":\"default\",\"runtime_id\":\"rt-1\"}"
#define SNAP_JSON                                                                        \
	"{\"id\":\"snap-1\",\"sandbox_id\":\"sb-1\",\"name\":\"n\",\"description\":\"d\","    \
	"\"created_at\":\"2030-01-01T00:00:00Z\",\"expires_at\":\"0001-01-01T00:00:00Z\"}"

/* Headers every request carries with the default fixture client. */
static void assert_std_headers(const s0t_request *q, bool has_json_body)
{
	ck_assert_str_eq(s0t_req_header(q, "Authorization"), "Bearer " CT_TOKEN);
	ck_assert_uint_eq(s0t_req_header_count(q, "Authorization"), 1);
	ck_assert_str_eq(s0t_req_header(q, "User-Agent"), "libsandbox0/" S0_VERSION_STRING);
	ck_assert_uint_eq(s0t_req_header_count(q, "User-Agent"), 1);
	ck_assert_ptr_null(s0t_req_header(q, "X-Team-ID"));
	ck_assert_ptr_null(s0t_req_header(q, "Idempotency-Key"));
	ck_assert_ptr_null(s0t_req_header(q, "Expect"));
	if (has_json_body) {
		ck_assert_str_eq(s0t_req_header(q, "Content-Type"), "application/json");
	} else {
		ck_assert_msg(!s0t_req_header(q, "Content-Type"), "unexpected Content-Type: %s",
		              s0t_req_header(q, "Content-Type"));
		ck_assert_uint_eq(q->body_len, 0);
	}
}

START_TEST(test_claim_minimal)
{
	s0t_push_ok(R, 201, CLAIM_JSON);
	s0_sandbox_info *sb = NULL;
	s0_error *e = NULL;
	ck_assert_int_eq(s0_sandbox_claim(C, "default", NULL, NULL, &sb, &e), S0_OK);
	const s0t_request *q = s0t_responder_req(R, 0);
	CT_ASSERT_REQ(q, "POST", "/api/v1/sandboxes", NULL);
	assert_std_headers(q, true);
	ck_assert(s0t_req_body_is(q, "{\"template\":\"default\"}"));
	ck_assert_str_eq(s0_sandbox_info_id(sb), "sb-1");
	ck_assert_str_eq(s0_sandbox_info_template_id(sb), "default");
	ck_assert_str_eq(s0_sandbox_info_pod_name(sb), "pod-1");
	ck_assert_str_eq(s0_sandbox_info_runtime_id(sb), "rt-1");
	ck_assert_int_eq(s0_sandbox_info_status(sb), S0_STATUS_RUNNING);
	s0_sandbox_info_free(sb);
}
END_TEST

/* CL-09: the claim body carries every config field; typed fields beat extra_json. */
START_TEST(test_claim_config)
{
	s0t_push_ok(R, 201, CLAIM_JSON);
	static const char *const env[] = {"A=1", "B=x=y", "EMPTY=", NULL};
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.set = S0_CONFIG_SET_TTL | S0_CONFIG_SET_HARD_TTL;
	cfg.ttl_sec = 300;
	cfg.hard_ttl_sec = 3600;
	cfg.auto_resume = S0_BOOL_FALSE;
	cfg.memory = "512Mi";
	cfg.env_vars = env;
	cfg.extra_json = "{\"network\":{\"mode\":\"block-all\"},\"ttl\":5,\"auto_resume\":true,"
	                 "\"env_vars\":{\"OLD\":\"1\"},\"webhook\":{\"url\":\"http://h/\"}}";
	s0_sandbox_info *sb = NULL;
	ck_assert_int_eq(s0_sandbox_claim(C, "default", "snap-9", &cfg, &sb, NULL), S0_OK);
	const s0t_request *q = s0t_responder_last(R);
	CT_ASSERT_REQ(q, "POST", "/api/v1/sandboxes", NULL);
	ck_assert_msg(s0t_req_json_eq(q, "{\"template\":\"default\",\"snapshot_id\":\"snap-9\","
	                                 "\"config\":{\"network\":{\"mode\":\"block-all\"},"
	                                 "\"webhook\":{\"url\":\"http://h/\"},\"ttl\":300,"
	                                 "\"hard_ttl\":3600,\"auto_resume\":false,"
	                                 "\"resources\":{\"memory\":\"512Mi\"},"
	                                 "\"env_vars\":{\"A\":\"1\",\"B\":\"x=y\",\"EMPTY\":\"\"}}}"),
	              "body %s", q->body);
	s0_sandbox_info_free(sb);
}
END_TEST

/* CL-09: zero TTLs are sent when asked for; unset fields are not sent. */
START_TEST(test_claim_config_zero_and_unset)
{
	s0t_push_ok(R, 201, CLAIM_JSON);
	s0t_push_ok(R, 201, CLAIM_JSON);
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.set = S0_CONFIG_SET_TTL;
	cfg.auto_resume = S0_BOOL_TRUE;
	s0_sandbox_info *sb = NULL;
	ck_assert_int_eq(s0_sandbox_claim(C, "default", NULL, &cfg, &sb, NULL), S0_OK);
	s0_sandbox_info_free(sb);
	ck_assert(s0t_req_json_eq(s0t_responder_req(R, 0),
	                          "{\"template\":\"default\",\"config\":{\"ttl\":0,"
	                          "\"auto_resume\":true}}"));
	s0_sandbox_config empty = S0_SANDBOX_CONFIG_INIT;
	ck_assert_int_eq(s0_sandbox_claim(C, "default", NULL, &empty, &sb, NULL), S0_OK);
	s0_sandbox_info_free(sb);
	ck_assert(s0t_req_json_eq(s0t_responder_req(R, 1),
	                          "{\"template\":\"default\",\"config\":{}}"));
}
END_TEST

START_TEST(test_claim_invalid_no_request)
{
	s0_sandbox_info *sb = NULL;
	s0_error *e = NULL;
	ck_assert_int_eq(s0_sandbox_claim(C, NULL, NULL, NULL, &sb, &e), S0_EINVAL);
	s0_error_free(e);
	e = NULL;
	ck_assert_int_eq(s0_sandbox_claim(C, "  ", NULL, NULL, &sb, NULL), S0_EINVAL);
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.version = 99;
	ck_assert_int_eq(s0_sandbox_claim(C, "default", NULL, &cfg, &sb, &e), S0_EINVAL);
	CT_ASSERT_ERR(e, S0_EINVAL, "options_version");
	s0_error_free(e);
	e = NULL;
	s0_sandbox_config c2 = S0_SANDBOX_CONFIG_INIT;
	c2.extra_json = "[1,2]";
	ck_assert_int_eq(s0_sandbox_claim(C, "default", NULL, &c2, &sb, NULL), S0_EINVAL);
	c2.extra_json = "{not json";
	ck_assert_int_eq(s0_sandbox_claim(C, "default", NULL, &c2, &sb, NULL), S0_EINVAL);
	static const char *const bad_env[] = {"=x", NULL};
	static const char *const bad_env2[] = {"NOEQUALS", NULL};
	s0_sandbox_config c3 = S0_SANDBOX_CONFIG_INIT;
	c3.env_vars = bad_env;
	ck_assert_int_eq(s0_sandbox_claim(C, "default", NULL, &c3, &sb, NULL), S0_EINVAL);
	c3.env_vars = bad_env2;
	ck_assert_int_eq(s0_sandbox_claim(C, "default", NULL, &c3, &sb, NULL), S0_EINVAL);
	ck_assert_ptr_null(sb); /* outputs untouched on failure */
	ck_assert_uint_eq(s0t_responder_count(R), 0);
}
END_TEST

START_TEST(test_get_status_delete)
{
	s0t_push_ok(R, 200, SB_JSON);
	s0t_push_ok(R, 200,
	            "{\"sandbox_id\":\"sb-1\",\"template_id\":\"default\",\"team_id\":\"t\","
	            "\"status\":\"paused\",\"claimed_at\":\"2030-01-01T00:00:00Z\","
	            "\"created_at\":\"2030-01-01T00:00:00Z\",\"expires_at\":null}");
	s0t_push_ok(R, 200, "{\"message\":\"sandbox terminated successfully\"}");
	s0_sandbox_info *sb = NULL;
	ck_assert_int_eq(s0_sandbox_get(C, "sb-1", &sb, NULL), S0_OK);
	CT_ASSERT_REQ(s0t_responder_req(R, 0), "GET", "/api/v1/sandboxes/sb-1", NULL);
	assert_std_headers(s0t_responder_req(R, 0), false);
	ck_assert_str_eq(s0_sandbox_info_id(sb), "sb-1");
	ck_assert_str_eq(s0_sandbox_info_team_id(sb), "team-1");
	ck_assert_int_eq(s0_sandbox_info_runtime_generation(sb), 3);
	ck_assert_int_eq(s0_sandbox_info_expires_at_unix_ms(sb), 1893456000000LL);
	ck_assert_int_eq(s0_sandbox_info_hard_expires_at_unix_ms(sb), 0);
	ck_assert_int_eq(s0_sandbox_info_claimed_at_unix_ms(sb), 1893452400000LL);
	ck_assert_int_eq(s0_sandbox_info_created_at_unix_ms(sb), 1893452400000LL);
	ck_assert_int_eq(s0_sandbox_info_updated_at_unix_ms(sb), 1893454200500LL);
	s0_sandbox_info_free(sb);

	ck_assert_int_eq(s0_sandbox_status(C, "sb-1", &sb, NULL), S0_OK);
	CT_ASSERT_REQ(s0t_responder_req(R, 1), "GET", "/api/v1/sandboxes/sb-1/status", NULL);
	assert_std_headers(s0t_responder_req(R, 1), false);
	ck_assert_str_eq(s0_sandbox_info_id(sb), "sb-1");
	ck_assert_int_eq(s0_sandbox_info_status(sb), S0_STATUS_PAUSED);
	ck_assert_int_eq(s0_sandbox_info_claimed_at_unix_ms(sb), 1893456000000LL);
	s0_sandbox_info_free(sb);

	ck_assert_int_eq(s0_sandbox_delete(C, "sb-1", NULL), S0_OK);
	CT_ASSERT_REQ(s0t_responder_req(R, 2), "DELETE", "/api/v1/sandboxes/sb-1", NULL);
	assert_std_headers(s0t_responder_req(R, 2), false);
}
END_TEST

/* Servers of both generations: DELETE answered 200 (older) or 202 (today's
 * official SDKs, docs/wire.md §3.6) is a success either way. */
START_TEST(test_delete_either_generation)
{
	static const int statuses[] = {200, 202};
	for (size_t i = 0; i < 2; i++) {
		s0t_push_ok(R, statuses[i], "{\"message\":\"sandbox terminated successfully\"}");
		s0_error *err = NULL;
		ck_assert_int_eq(s0_sandbox_delete(C, "sb-1", &err), S0_OK);
		ck_assert_ptr_null(err);
		CT_ASSERT_REQ(s0t_responder_req(R, i), "DELETE", "/api/v1/sandboxes/sb-1", NULL);
	}
}
END_TEST

/* Ids are one escaped path segment; bad ids never reach the wire. */
START_TEST(test_id_escaping_and_validation)
{
	s0t_push_ok(R, 200, SB_JSON);
	s0_sandbox_info *sb = NULL;
	ck_assert_int_eq(s0_sandbox_get(C, "a b/c?d#e%", &sb, NULL), S0_OK);
	s0_sandbox_info_free(sb);
	CT_ASSERT_REQ(s0t_responder_req(R, 0), "GET", "/api/v1/sandboxes/a%20b%2Fc%3Fd%23e%25",
	              NULL);
	s0_error *e = NULL;
	ck_assert_int_eq(s0_sandbox_get(C, "", &sb, &e), S0_EINVAL);
	s0_error_free(e);
	ck_assert_int_eq(s0_sandbox_get(C, NULL, &sb, NULL), S0_EINVAL);
	ck_assert_int_eq(s0_sandbox_delete(C, " \t", NULL), S0_EINVAL);
	char long_id[300];
	memset(long_id, 'x', 256);
	long_id[256] = '\0';
	ck_assert_int_eq(s0_sandbox_get(C, long_id, &sb, NULL), S0_EINVAL);
	ck_assert_uint_eq(s0t_responder_count(R), 1);
}
END_TEST

START_TEST(test_update)
{
	s0t_push_ok(R, 200, SB_JSON);
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.set = S0_CONFIG_SET_HARD_TTL;
	cfg.hard_ttl_sec = 7200;
	static const char *const env[] = {NULL};
	cfg.env_vars = env; /* {} clears env_vars on update */
	s0_sandbox_info *sb = NULL;
	ck_assert_int_eq(s0_sandbox_update(C, "sb-1", &cfg, &sb, NULL), S0_OK);
	const s0t_request *q = s0t_responder_req(R, 0);
	CT_ASSERT_REQ(q, "PUT", "/api/v1/sandboxes/sb-1", NULL);
	assert_std_headers(q, true);
	ck_assert_msg(s0t_req_json_eq(q, "{\"config\":{\"hard_ttl\":7200,\"env_vars\":{}}}"),
	              "body %s", q->body);
	ck_assert_str_eq(s0_sandbox_info_id(sb), "sb-1");
	s0_sandbox_info_free(sb);
	sb = NULL;
	s0_error *e = NULL;
	ck_assert_int_eq(s0_sandbox_update(C, "sb-1", NULL, &sb, &e), S0_EINVAL);
	ck_assert_ptr_null(sb);
	s0_error_free(e);
	ck_assert_uint_eq(s0t_responder_count(R), 1);
}
END_TEST

/* CL-09: plain pause sends no body; the option variants send exactly {"memory":<bool>}. */
START_TEST(test_pause_bodies)
{
	s0t_push_ok(R, 200, "{\"sandbox_id\":\"sb-1\",\"paused\":false,\"status\":\"running\"}");
	s0t_push_ok(R, 202, "{\"sandbox_id\":\"sb-1\",\"paused\":false,\"status\":\"running\"}");
	s0t_push_ok(R, 200, "{\"sandbox_id\":\"sb-1\",\"paused\":true,\"status\":\"paused\"}");
	s0_lifecycle_result *lr = NULL;
	ck_assert_int_eq(s0_sandbox_pause(C, "sb-1", S0_BOOL_UNSET, &lr, NULL), S0_OK);
	ck_assert_int_eq(s0_lifecycle_result_http_status(lr), 200);
	ck_assert(!s0_lifecycle_result_paused(lr));
	ck_assert_int_eq(s0_lifecycle_result_status(lr), S0_STATUS_RUNNING);
	ck_assert_str_eq(s0_lifecycle_result_sandbox_id(lr), "sb-1");
	ck_assert_ptr_null(s0_lifecycle_result_snapshot_id(lr));
	s0_lifecycle_result_free(lr);
	ck_assert_int_eq(s0_sandbox_pause(C, "sb-1", S0_BOOL_TRUE, &lr, NULL), S0_OK);
	ck_assert_int_eq(s0_lifecycle_result_http_status(lr), 202); /* accepted, seed §6.3 */
	s0_lifecycle_result_free(lr);
	ck_assert_int_eq(s0_sandbox_pause(C, "sb-1", S0_BOOL_FALSE, &lr, NULL), S0_OK);
	ck_assert(s0_lifecycle_result_paused(lr));
	ck_assert_int_eq(s0_lifecycle_result_status(lr), S0_STATUS_PAUSED);
	s0_lifecycle_result_free(lr);

	const s0t_request *q = s0t_responder_req(R, 0);
	CT_ASSERT_REQ(q, "POST", "/api/v1/sandboxes/sb-1/pause", NULL);
	assert_std_headers(q, false);
	q = s0t_responder_req(R, 1);
	CT_ASSERT_REQ(q, "POST", "/api/v1/sandboxes/sb-1/pause", NULL);
	assert_std_headers(q, true);
	ck_assert_msg(s0t_req_body_is(q, "{\"memory\":true}"), "body %s", q->body);
	q = s0t_responder_req(R, 2);
	assert_std_headers(q, true);
	ck_assert_msg(s0t_req_body_is(q, "{\"memory\":false}"), "body %s", q->body);

	lr = NULL;
	ck_assert_int_eq(s0_sandbox_pause(C, "sb-1", 7, &lr, NULL), S0_EINVAL);
	ck_assert_ptr_null(lr);
	ck_assert_uint_eq(s0t_responder_count(R), 3);
}
END_TEST

/* CL-09 for resume, and `resumed:false` (accepted durable work, §6.4). */
START_TEST(test_resume_bodies)
{
	s0t_push_ok(R, 200, "{\"sandbox_id\":\"sb-1\",\"resumed\":true}");
	s0t_push_ok(R, 200, "{\"sandbox_id\":\"sb-1\",\"resumed\":false}");
	s0t_push_ok(R, 200, "{\"sandbox_id\":\"sb-1\",\"resumed\":true,\"restored_memory\":\"1Gi\"}");
	s0t_push_ok(R, 200, "{\"sandbox_id\":\"sb-1\",\"resumed\":null,\"status\":null}");
	s0_lifecycle_result *lr = NULL;
	ck_assert_int_eq(s0_sandbox_resume(C, "sb-1", S0_BOOL_UNSET, &lr, NULL), S0_OK);
	ck_assert(s0_lifecycle_result_resumed(lr));
	ck_assert_int_eq(s0_lifecycle_result_status(lr), S0_STATUS_UNKNOWN);
	s0_lifecycle_result_free(lr);
	ck_assert_int_eq(s0_sandbox_resume(C, "sb-1", S0_BOOL_TRUE, &lr, NULL), S0_OK);
	ck_assert(!s0_lifecycle_result_resumed(lr));
	s0_lifecycle_result_free(lr);
	ck_assert_int_eq(s0_sandbox_resume(C, "sb-1", S0_BOOL_FALSE, &lr, NULL), S0_OK);
	ck_assert_ptr_nonnull(strstr(s0_lifecycle_result_json(lr), "restored_memory"));
	s0_lifecycle_result_free(lr);
	ck_assert_int_eq(s0_sandbox_resume(C, "sb-1", S0_BOOL_UNSET, &lr, NULL), S0_OK);
	ck_assert(!s0_lifecycle_result_resumed(lr)); /* null reads as absent */
	s0_lifecycle_result_free(lr);
	const s0t_request *q = s0t_responder_req(R, 0);
	CT_ASSERT_REQ(q, "POST", "/api/v1/sandboxes/sb-1/resume", NULL);
	assert_std_headers(q, false);
	ck_assert(s0t_req_body_is(s0t_responder_req(R, 1), "{\"memory\":true}"));
	ck_assert(s0t_req_body_is(s0t_responder_req(R, 2), "{\"memory\":false}"));
	ck_assert_int_eq(s0_sandbox_resume(C, "sb-1", -1, &lr, NULL), S0_EINVAL);
	ck_assert_uint_eq(s0t_responder_count(R), 4);
}
END_TEST

START_TEST(test_refresh)
{
	s0t_push_ok(R, 200, "{\"sandbox_id\":\"sb-1\",\"expires_at\":\"2030-01-01T00:00:00Z\","
	                    "\"hard_expires_at\":\"0001-01-01T00:00:00Z\"}");
	s0t_push_ok(R, 200, "{\"sandbox_id\":\"sb-1\",\"expires_at\":null}");
	s0_sandbox_info *sb = NULL;
	ck_assert_int_eq(s0_sandbox_refresh(C, "sb-1", 0, &sb, NULL), S0_OK);
	ck_assert_str_eq(s0_sandbox_info_id(sb), "sb-1");
	ck_assert_int_eq(s0_sandbox_info_expires_at_unix_ms(sb), 1893456000000LL);
	ck_assert_int_eq(s0_sandbox_info_hard_expires_at_unix_ms(sb), 0);
	s0_sandbox_info_free(sb);
	ck_assert_int_eq(s0_sandbox_refresh(C, "sb-1", 3600, &sb, NULL), S0_OK);
	ck_assert_int_eq(s0_sandbox_info_expires_at_unix_ms(sb), 0);
	s0_sandbox_info_free(sb);
	const s0t_request *q = s0t_responder_req(R, 0);
	CT_ASSERT_REQ(q, "POST", "/api/v1/sandboxes/sb-1/refresh", NULL);
	assert_std_headers(q, true);
	ck_assert(s0t_req_body_is(q, "{}"));
	ck_assert(s0t_req_body_is(s0t_responder_req(R, 1), "{\"duration\":3600}"));
	ck_assert_int_eq(s0_sandbox_refresh(C, "sb-1", -1, &sb, NULL), S0_EINVAL);
	ck_assert_uint_eq(s0t_responder_count(R), 2);
}
END_TEST

#define SUMMARY(id) \
	"{\"id\":\"" id "\",\"template_id\":\"t\",\"status\":\"running\",\"paused\":false," \
	"\"runtime_generation\":1,\"created_at\":\"2030-01-01T00:00:00Z\"," \
	"\"updated_at\":\"2030-01-01T00:00:00Z\"}"

START_TEST(test_list_query)
{
	s0t_push_ok(R, 200, "{\"sandboxes\":[" SUMMARY("a") "," SUMMARY("b") "],\"count\":7,"
	                    "\"has_more\":true}");
	s0t_push_ok(R, 200, "{\"sandboxes\":[],\"count\":0,\"has_more\":false}");
	s0_sandbox_page *p = NULL;
	ck_assert_int_eq(s0_sandbox_list(C, NULL, &p, NULL), S0_OK);
	const s0t_request *q = s0t_responder_req(R, 0);
	CT_ASSERT_REQ(q, "GET", "/api/v1/sandboxes", "limit=50&offset=0");
	assert_std_headers(q, false);
	ck_assert_int_eq(s0_sandbox_page_count(p), 7);
	ck_assert(s0_sandbox_page_has_more(p));
	ck_assert_uint_eq(s0_sandbox_page_length(p), 2);
	ck_assert_str_eq(s0_sandbox_info_id(s0_sandbox_page_at(p, 0)), "a");
	ck_assert_str_eq(s0_sandbox_info_id(s0_sandbox_page_at(p, 1)), "b");
	ck_assert_ptr_null(s0_sandbox_page_at(p, 2));
	s0_sandbox_page_free(p);

	s0_list_options o = S0_LIST_OPTIONS_INIT;
	o.status = S0_STATUS_PAUSED;
	o.paused = S0_BOOL_TRUE;
	o.template_id = "tpl a&b";
	o.limit = 10;
	o.offset = 20;
	ck_assert_int_eq(s0_sandbox_list(C, &o, &p, NULL), S0_OK);
	CT_ASSERT_REQ(s0t_responder_req(R, 1), "GET", "/api/v1/sandboxes",
	              "status=paused&template_id=tpl%20a%26b&paused=true&limit=10&offset=20");
	ck_assert_uint_eq(s0_sandbox_page_length(p), 0);
	ck_assert(!s0_sandbox_page_has_more(p));
	s0_sandbox_page_free(p);

	s0t_push_ok(R, 200, "{\"sandboxes\":[],\"count\":0,\"has_more\":false}");
	s0_list_options o2 = S0_LIST_OPTIONS_INIT;
	o2.paused = S0_BOOL_FALSE;
	o2.status = S0_STATUS_FAILED;
	o2.limit = 200;
	ck_assert_int_eq(s0_sandbox_list(C, &o2, &p, NULL), S0_OK);
	CT_ASSERT_REQ(s0t_responder_req(R, 2), "GET", "/api/v1/sandboxes",
	              "status=failed&paused=false&limit=200&offset=0");
	s0_sandbox_page_free(p);
}
END_TEST

START_TEST(test_list_invalid_no_request)
{
	s0_sandbox_page *p = NULL;
	s0_list_options o = S0_LIST_OPTIONS_INIT;
	o.limit = 201;
	ck_assert_int_eq(s0_sandbox_list(C, &o, &p, NULL), S0_EINVAL);
	o.limit = -1;
	ck_assert_int_eq(s0_sandbox_list(C, &o, &p, NULL), S0_EINVAL);
	o.limit = 0;
	o.offset = -1;
	ck_assert_int_eq(s0_sandbox_list(C, &o, &p, NULL), S0_EINVAL);
	o.offset = 0;
	o.status = 9;
	ck_assert_int_eq(s0_sandbox_list(C, &o, &p, NULL), S0_EINVAL);
	o.status = 0;
	o.version = 0;
	s0_error *e = NULL;
	ck_assert_int_eq(s0_sandbox_list(C, &o, &p, &e), S0_EINVAL);
	CT_ASSERT_ERR(e, S0_EINVAL, "options_version");
	s0_error_free(e);
	s0_sandbox_iter *it = NULL;
	ck_assert_int_eq(s0_sandbox_iter_new(C, &o, &it, NULL), S0_EINVAL);
	ck_assert_ptr_null(it);
	ck_assert_ptr_null(p);
	ck_assert_uint_eq(s0t_responder_count(R), 0);
}
END_TEST

/* The iterator follows has_more, advancing the offset by each page's length. */
START_TEST(test_iter_pages)
{
	s0t_push_ok(R, 200, "{\"sandboxes\":[" SUMMARY("a") "," SUMMARY("b") "],\"count\":5,"
	                    "\"has_more\":true}");
	s0t_push_error(R, 503, "unavailable", "manager service unavailable");
	s0t_push_ok(R, 200, "{\"sandboxes\":[" SUMMARY("c") "," SUMMARY("d") "],\"count\":5,"
	                    "\"has_more\":true}");
	s0t_push_ok(R, 200, "{\"sandboxes\":[" SUMMARY("e") "],\"count\":5,\"has_more\":false}");
	s0_list_options o = S0_LIST_OPTIONS_INIT;
	o.limit = 2;
	o.template_id = "t";
	s0_sandbox_iter *it = NULL;
	ck_assert_int_eq(s0_sandbox_iter_new(C, &o, &it, NULL), S0_OK);
	o.template_id = "changed after iter_new"; /* the iterator keeps its own copy */
	ck_assert_uint_eq(s0t_responder_count(R), 0); /* lazy */
	const char *want[] = {"a", "b", "c", "d", "e"};
	const s0_sandbox_info *sb = NULL;
	size_t got = 0;
	bool saw_error = false;
	for (;;) {
		s0_error *e = NULL;
		int rc = s0_sandbox_iter_next(it, &sb, &e);
		if (rc == S0_ITEROVER) {
			ck_assert_ptr_null(e);
			break;
		}
		if (rc == S0_EUNAVAILABLE && !saw_error) { /* a failed page fetch can be retried */
			saw_error = true;
			s0_error_free(e);
			continue;
		}
		ck_assert_int_eq(rc, S0_OK);
		ck_assert_uint_lt(got, 5);
		ck_assert_str_eq(s0_sandbox_info_id(sb), want[got]);
		got++;
	}
	ck_assert_uint_eq(got, 5);
	ck_assert(saw_error);
	ck_assert_int_eq(s0_sandbox_iter_next(it, &sb, NULL), S0_ITEROVER);
	s0_sandbox_iter_free(it);
	ck_assert_uint_eq(s0t_responder_count(R), 4);
	CT_ASSERT_REQ(s0t_responder_req(R, 0), "GET", "/api/v1/sandboxes",
	              "template_id=t&limit=2&offset=0");
	CT_ASSERT_REQ(s0t_responder_req(R, 1), "GET", "/api/v1/sandboxes",
	              "template_id=t&limit=2&offset=2");
	CT_ASSERT_REQ(s0t_responder_req(R, 2), "GET", "/api/v1/sandboxes",
	              "template_id=t&limit=2&offset=2");
	CT_ASSERT_REQ(s0t_responder_req(R, 3), "GET", "/api/v1/sandboxes",
	              "template_id=t&limit=2&offset=4");
}
END_TEST

START_TEST(test_iter_empty_and_offset)
{
	s0t_push_ok(R, 200, "{\"sandboxes\":[],\"count\":3,\"has_more\":false}");
	s0_list_options o = S0_LIST_OPTIONS_INIT;
	o.offset = 3;
	s0_sandbox_iter *it = NULL;
	ck_assert_int_eq(s0_sandbox_iter_new(C, &o, &it, NULL), S0_OK);
	const s0_sandbox_info *sb = NULL;
	ck_assert_int_eq(s0_sandbox_iter_next(it, &sb, NULL), S0_ITEROVER);
	s0_sandbox_iter_free(it);
	s0_sandbox_iter_free(NULL);
	CT_ASSERT_REQ(s0t_responder_req(R, 0), "GET", "/api/v1/sandboxes", "limit=50&offset=3");
	/* has_more true with an empty page must not loop forever */
	s0t_push_ok(R, 200, "{\"sandboxes\":[],\"count\":9,\"has_more\":true}");
	ck_assert_int_eq(s0_sandbox_iter_new(C, NULL, &it, NULL), S0_OK);
	ck_assert_int_eq(s0_sandbox_iter_next(it, &sb, NULL), S0_ITEROVER);
	s0_sandbox_iter_free(it);
	ck_assert_uint_eq(s0t_responder_count(R), 2);
	/* an offset that would pass INT32_MAX ends the iteration */
	s0t_push_ok(R, 200, "{\"sandboxes\":[" SUMMARY("z") "],\"count\":9,\"has_more\":true}");
	s0_list_options big = S0_LIST_OPTIONS_INIT;
	big.offset = INT32_MAX;
	ck_assert_int_eq(s0_sandbox_iter_new(C, &big, &it, NULL), S0_OK);
	ck_assert_int_eq(s0_sandbox_iter_next(it, &sb, NULL), S0_OK);
	ck_assert_int_eq(s0_sandbox_iter_next(it, &sb, NULL), S0_ITEROVER);
	s0_sandbox_iter_free(it);
	ck_assert_uint_eq(s0t_responder_count(R), 3);
}
END_TEST

START_TEST(test_snapshots)
{
	s0t_push_ok(R, 201, SNAP_JSON);
	s0t_push_ok(R, 201, SNAP_JSON);
	s0t_push_ok(R, 200, "{\"snapshots\":[" SNAP_JSON "," SNAP_JSON "],\"count\":2}");
	s0t_push_ok(R, 200, SNAP_JSON);
	s0t_push_ok(R, 200, "{\"deleted\":true}");
	s0_snapshot_info *s = NULL;
	ck_assert_int_eq(s0_snapshot_create(C, "sb-1", NULL, NULL, 0, &s, NULL), S0_OK);
	const s0t_request *q = s0t_responder_req(R, 0);
	CT_ASSERT_REQ(q, "POST", "/api/v1/sandboxes/sb-1/snapshots", NULL);
	assert_std_headers(q, true);
	ck_assert(s0t_req_body_is(q, "{}"));
	ck_assert_str_eq(s0_snapshot_info_id(s), "snap-1");
	ck_assert_str_eq(s0_snapshot_info_sandbox_id(s), "sb-1");
	ck_assert_str_eq(s0_snapshot_info_name(s), "n");
	ck_assert_str_eq(s0_snapshot_info_description(s), "d");
	ck_assert_int_eq(s0_snapshot_info_created_at_unix_ms(s), 1893456000000LL);
	ck_assert_int_eq(s0_snapshot_info_expires_at_unix_ms(s), 0); /* Go zero time */
	s0_snapshot_info_free(s);
	ck_assert_int_eq(s0_snapshot_create(C, "sb-1", "nightly", "before upgrade",
	                                    1893456000123LL, &s, NULL),
	                 S0_OK);
	s0_snapshot_info_free(s);
	ck_assert_msg(s0t_req_json_eq(s0t_responder_req(R, 1),
	                              "{\"name\":\"nightly\",\"description\":\"before upgrade\","
	                              "\"expires_at\":\"2030-01-01T00:00:00.123Z\"}"),
	              "body %s", s0t_responder_req(R, 1)->body);

	s0_snapshot_list *l = NULL;
	ck_assert_int_eq(s0_snapshot_list_get(C, "sb-1", &l, NULL), S0_OK);
	CT_ASSERT_REQ(s0t_responder_req(R, 2), "GET", "/api/v1/sandboxes/sb-1/snapshots", NULL);
	assert_std_headers(s0t_responder_req(R, 2), false);
	ck_assert_int_eq(s0_snapshot_list_count(l), 2);
	ck_assert_uint_eq(s0_snapshot_list_length(l), 2);
	ck_assert_str_eq(s0_snapshot_info_id(s0_snapshot_list_at(l, 1)), "snap-1");
	ck_assert_ptr_null(s0_snapshot_list_at(l, 2));
	s0_snapshot_list_free(l);

	ck_assert_int_eq(s0_snapshot_get(C, "snap/1", &s, NULL), S0_OK);
	CT_ASSERT_REQ(s0t_responder_req(R, 3), "GET", "/api/v1/sandbox-rootfs-snapshots/snap%2F1",
	              NULL);
	s0_snapshot_info_free(s);
	ck_assert_int_eq(s0_snapshot_delete(C, "snap-1", NULL), S0_OK);
	CT_ASSERT_REQ(s0t_responder_req(R, 4), "DELETE", "/api/v1/sandbox-rootfs-snapshots/snap-1",
	              NULL);
	assert_std_headers(s0t_responder_req(R, 4), false);

	ck_assert_int_eq(s0_snapshot_create(C, "sb-1", NULL, NULL, -5, &s, NULL), S0_EINVAL);
	ck_assert_int_eq(s0_snapshot_create(C, "sb-1", NULL, NULL, INT64_MAX, &s, NULL), S0_EINVAL);
	ck_assert_int_eq(s0_snapshot_get(C, "", &s, NULL), S0_EINVAL);
	ck_assert_int_eq(s0_snapshot_delete(C, NULL, NULL), S0_EINVAL);
	ck_assert_int_eq(s0_snapshot_list_get(C, "", &l, NULL), S0_EINVAL);
	ck_assert_uint_eq(s0t_responder_count(R), 5);
}
END_TEST

START_TEST(test_restore)
{
	s0t_push_ok(R, 200, "{\"sandbox_id\":\"sb-1\",\"snapshot_id\":\"snap-1\",\"status\":\"paused\"}");
	s0_lifecycle_result *lr = NULL;
	ck_assert_int_eq(s0_sandbox_restore(C, "sb-1", "snap-1", &lr, NULL), S0_OK);
	const s0t_request *q = s0t_responder_req(R, 0);
	CT_ASSERT_REQ(q, "POST", "/api/v1/sandboxes/sb-1/rootfs/restore", NULL);
	assert_std_headers(q, true);
	ck_assert(s0t_req_body_is(q, "{\"snapshot_id\":\"snap-1\"}"));
	ck_assert_str_eq(s0_lifecycle_result_snapshot_id(lr), "snap-1");
	ck_assert_int_eq(s0_lifecycle_result_status(lr), S0_STATUS_PAUSED);
	s0_lifecycle_result_free(lr);
	lr = NULL;
	s0_error *e = NULL;
	ck_assert_int_eq(s0_sandbox_restore(C, "sb-1", " ", &lr, &e), S0_EINVAL);
	s0_error_free(e);
	ck_assert_int_eq(s0_sandbox_restore(C, NULL, "snap-1", &lr, NULL), S0_EINVAL);
	ck_assert_ptr_null(lr);
	ck_assert_uint_eq(s0t_responder_count(R), 1);
}
END_TEST

#define FORK_JSON                                                                      \
	"{\"source_sandbox_id\":\"sb-1\",\"sandbox\":{\"id\":\"sb-2\",\"template_id\":\"t\"," \
	"\"status\":\"paused\",\"paused\":true,\"runtime_generation\":0}}"

/* Fork bodies and CL-13: memory forks need a key, sent as Idempotency-Key. */
START_TEST(test_fork)
{
	s0t_push_ok(R, 201, FORK_JSON);
	s0t_push_ok(R, 201, FORK_JSON);
	s0t_push_ok(R, 201, FORK_JSON);
	s0_sandbox_info *sb = NULL;
	ck_assert_int_eq(s0_sandbox_fork(C, "sb-1", NULL, &sb, NULL), S0_OK);
	const s0t_request *q = s0t_responder_req(R, 0);
	CT_ASSERT_REQ(q, "POST", "/api/v1/sandboxes/sb-1/fork", NULL);
	assert_std_headers(q, true);
	ck_assert(s0t_req_body_is(q, "{}"));
	ck_assert_str_eq(s0_sandbox_info_id(sb), "sb-2");
	ck_assert(s0_sandbox_info_paused(sb));
	ck_assert_int_eq(s0_sandbox_info_status(sb), S0_STATUS_PAUSED);
	s0_sandbox_info_free(sb);

	s0_fork_options fo = S0_FORK_OPTIONS_INIT;
	fo.set = S0_CONFIG_SET_TTL | S0_CONFIG_SET_HARD_TTL;
	fo.ttl_sec = 60;
	fo.hard_ttl_sec = 0;
	ck_assert_int_eq(s0_sandbox_fork(C, "sb-1", &fo, &sb, NULL), S0_OK);
	s0_sandbox_info_free(sb);
	q = s0t_responder_req(R, 1);
	ck_assert_msg(s0t_req_json_eq(q, "{\"config\":{\"ttl\":60,\"hard_ttl\":0}}"), "body %s",
	              q->body);
	ck_assert_ptr_null(s0t_req_header(q, "Idempotency-Key"));

	s0_fork_options mo = S0_FORK_OPTIONS_INIT;
	mo.memory = 1;
	mo.idempotency_key = "fork-key-1";
	ck_assert_int_eq(s0_sandbox_fork(C, "sb-1", &mo, &sb, NULL), S0_OK);
	s0_sandbox_info_free(sb);
	q = s0t_responder_req(R, 2);
	ck_assert(s0t_req_body_is(q, "{\"memory\":true}"));
	ck_assert_str_eq(s0t_req_header(q, "Idempotency-Key"), "fork-key-1");
	ck_assert_uint_eq(s0t_req_header_count(q, "Idempotency-Key"), 1);
}
END_TEST

/* CL-13: missing, blank and 256-character keys fail locally; 255 is fine. */
START_TEST(test_fork_memory_key_validation)
{
	char k255[256], k256[257];
	memset(k255, 'k', 255);
	k255[255] = '\0';
	memset(k256, 'k', 256);
	k256[256] = '\0';
	const char *bad[] = {NULL, "", "   ", "\t\n", k256};
	s0_sandbox_info *sb = NULL;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		s0_fork_options mo = S0_FORK_OPTIONS_INIT;
		mo.memory = 1;
		mo.idempotency_key = bad[i];
		s0_error *e = NULL;
		ck_assert_int_eq(s0_sandbox_fork(C, "sb-1", &mo, &sb, &e), S0_EINVAL);
		ck_assert_int_eq(s0_error_code(e), S0_EINVAL);
		s0_error_free(e);
	}
	s0_fork_options v = S0_FORK_OPTIONS_INIT;
	v.version = 2;
	ck_assert_int_eq(s0_sandbox_fork(C, "sb-1", &v, &sb, NULL), S0_EINVAL);
	s0_fork_options inj = S0_FORK_OPTIONS_INIT;
	inj.memory = 1;
	inj.idempotency_key = "key\r\nX-Injected: 1";
	ck_assert_int_eq(s0_sandbox_fork(C, "sb-1", &inj, &sb, NULL), S0_EINVAL);
	ck_assert_ptr_null(sb);
	ck_assert_uint_eq(s0t_responder_count(R), 0);

	/* 255 characters is the longest accepted key; a 503 while capture is
	 * pending reaches the caller, who repeats with the same key. */
	s0t_push_error(R, 503, "unavailable", "memory fork capture is pending");
	s0t_push_ok(R, 201, FORK_JSON);
	s0_fork_options mo = S0_FORK_OPTIONS_INIT;
	mo.memory = 1;
	mo.idempotency_key = k255;
	s0_error *e = NULL;
	ck_assert_int_eq(s0_sandbox_fork(C, "sb-1", &mo, &sb, &e), S0_EUNAVAILABLE);
	CT_ASSERT_ERR(e, S0_EUNAVAILABLE, "capture_pending");
	ck_assert(s0_error_is_retryable(e));
	ck_assert_str_eq(s0_error_sandbox_id(e), "sb-1");
	s0_error_free(e);
	ck_assert_int_eq(s0_sandbox_fork(C, "sb-1", &mo, &sb, NULL), S0_OK);
	s0_sandbox_info_free(sb);
	ck_assert_uint_eq(s0t_responder_count(R), 2);
	for (size_t i = 0; i < 2; i++) {
		const s0t_request *q = s0t_responder_req(R, i);
		ck_assert_str_eq(s0t_req_header(q, "Idempotency-Key"), k255);
		ck_assert(s0t_req_body_is(q, "{\"memory\":true}"));
	}
}
END_TEST

/* A NULL result slot is refused before anything is sent. */
START_TEST(test_null_out_no_request)
{
	s0_error *e = NULL;
	ck_assert_int_eq(s0_sandbox_get(C, "sb-1", NULL, &e), S0_EINVAL);
	CT_ASSERT_ERR(e, S0_EINVAL, "invalid_argument");
	s0_error_free(e);
	ck_assert_int_eq(s0_sandbox_status(C, "sb-1", NULL, NULL), S0_EINVAL);
	ck_assert_int_eq(s0_sandbox_claim(C, "default", NULL, NULL, NULL, NULL), S0_EINVAL);
	ck_assert_int_eq(s0_sandbox_pause(C, "sb-1", 0, NULL, NULL), S0_EINVAL);
	ck_assert_int_eq(s0_sandbox_refresh(C, "sb-1", 0, NULL, NULL), S0_EINVAL);
	ck_assert_int_eq(s0_sandbox_list(C, NULL, NULL, NULL), S0_EINVAL);
	ck_assert_int_eq(s0_sandbox_iter_new(C, NULL, NULL, NULL), S0_EINVAL);
	ck_assert_int_eq(s0_snapshot_get(C, "snap-1", NULL, NULL), S0_EINVAL);
	ck_assert_int_eq(s0_snapshot_list_get(C, "sb-1", NULL, NULL), S0_EINVAL);
	ck_assert_int_eq(s0_sandbox_fork(C, "sb-1", NULL, NULL, NULL), S0_EINVAL);
	ck_assert_int_eq(s0_sandbox_restore(C, "sb-1", "snap-1", NULL, NULL), S0_EINVAL);
	ck_assert_int_eq(s0_files_stat(C, "sb-1", "/a", NULL, NULL), S0_EINVAL);
	ck_assert_int_eq(s0_files_list(C, "sb-1", "/a", NULL, NULL), S0_EINVAL);
	ck_assert_int_eq(s0_files_read(C, "sb-1", "/a", NULL, NULL, NULL), S0_EINVAL);
	s0_sandbox_iter *it = NULL;
	ck_assert_int_eq(s0_sandbox_iter_new(C, NULL, &it, NULL), S0_OK);
	ck_assert_int_eq(s0_sandbox_iter_next(it, NULL, NULL), S0_EINVAL);
	s0_sandbox_iter_free(it);
	ck_assert_uint_eq(s0t_responder_count(R), 0);
}
END_TEST

Suite *s0_client_requests_suite(void)
{
	Suite *s = suite_create("client_requests");
	TCase *tc = tcase_create("requests");
	tcase_add_checked_fixture(tc, ct_setup, ct_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_claim_minimal);
	tcase_add_test(tc, test_claim_config);
	tcase_add_test(tc, test_claim_config_zero_and_unset);
	tcase_add_test(tc, test_claim_invalid_no_request);
	tcase_add_test(tc, test_get_status_delete);
	tcase_add_test(tc, test_delete_either_generation);
	tcase_add_test(tc, test_id_escaping_and_validation);
	tcase_add_test(tc, test_update);
	tcase_add_test(tc, test_pause_bodies);
	tcase_add_test(tc, test_resume_bodies);
	tcase_add_test(tc, test_refresh);
	tcase_add_test(tc, test_list_query);
	tcase_add_test(tc, test_list_invalid_no_request);
	tcase_add_test(tc, test_iter_pages);
	tcase_add_test(tc, test_iter_empty_and_offset);
	tcase_add_test(tc, test_snapshots);
	tcase_add_test(tc, test_restore);
	tcase_add_test(tc, test_fork);
	tcase_add_test(tc, test_fork_memory_key_validation);
	tcase_add_test(tc, test_null_out_no_request);
	suite_add_tcase(s, tc);
	return s;
}
