/*
 * Error responses (CL-10 Retry-After and the claim-throttled predicate,
 * CL-11 the error taxonomy; docs/wire.md §1.3, §2.1, §2.2, §3.10, §4.3).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_test.h"

/* GET /sandboxes/sb-1 answered by whatever is queued; returns the error. */
static s0_error *get_error(int want_rc)
{
	s0_sandbox_info *sb = NULL;
	s0_error *e = NULL;
	int rc = s0_sandbox_get(C, "sb-1", &sb, &e);
	ck_assert_msg(rc == want_rc, "rc %s (%s), want %s", s0_code_name(rc), s0_error_message(e),
	              s0_code_name(want_rc));
	ck_assert_ptr_null(sb);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(s0_error_code(e), rc);
	return e;
}

typedef struct wire_case {
	const char *wire;
	int status;
	int code;
	const char *reason;
} wire_case;

#define WIRE_CASE(w, st, c, r) {w, st, c, r},
static const wire_case wire_cases[] = {S0_WIRE_ERROR_MAP(WIRE_CASE)};
#define N_WIRE_CASES (sizeof wire_cases / sizeof wire_cases[0])

/* CL-11: every row of the wire table, with its status, maps to its code and reason. */
START_TEST(test_every_wire_row)
{
	const wire_case *w = &wire_cases[_i];
	char msg[128], rid[64];
	snprintf(msg, sizeof msg, "message for %s", w->wire);
	snprintf(rid, sizeof rid, "req-%d", _i);
	s0t_reply *rep = s0t_push_error(R, w->status, w->wire, msg);
	s0t_reply_header(rep, "X-Request-Id", rid);
	s0_error *e = get_error(w->code);
	ck_assert_str_eq(s0_error_reason(e), w->reason);
	ck_assert_str_eq(s0_error_wire_code(e), w->wire);
	ck_assert_str_eq(s0_error_message(e), msg);
	ck_assert_int_eq(s0_error_http_status(e), w->status);
	ck_assert_str_eq(s0_error_request_id(e), rid);
	ck_assert_int_eq(s0_error_retry_after_ms(e), -1);
	ck_assert_ptr_null(s0_error_details_json(e));
	ck_assert_str_eq(s0_error_sandbox_id(e), "sb-1");
	size_t blen = 0;
	const char *body = s0_error_body(e, &blen);
	ck_assert_ptr_nonnull(body);
	ck_assert_ptr_nonnull(strstr(body, w->wire));
	ck_assert_uint_gt(blen, 0);
	ck_assert_ptr_null(s0_error_action(e));
	ck_assert_ptr_null(s0_error_last_sandbox(e));
	ck_assert_ptr_null(s0_error_cause(e));
	s0_error_free(e);
}
END_TEST

typedef struct reason_case {
	const char *wire, *needle, *reason;
} reason_case;

#define REASON_CASE(w, m, r) {w, m, r},
static const reason_case reason_cases[] = {S0_WIRE_REASON_MAP(REASON_CASE)};
#define N_REASON_CASES (sizeof reason_cases / sizeof reason_cases[0])

/* CL-11: reasons derived from the message, embedded in a longer message. */
START_TEST(test_every_reason_row)
{
	const reason_case *rc = &reason_cases[_i];
	const char *wire;
	int status, code;
	const char *canonical;
	s0_error_map_wire(rc->wire, 0, NULL, &code, NULL);
	s0_error_to_wire(code, rc->reason, &wire, &status, &canonical);
	ck_assert_str_eq(wire, rc->wire);
	char msg[256];
	snprintf(msg, sizeof msg, "sandbox sb-1: %s (attempt 2)", rc->needle);
	s0t_push_error(R, status, rc->wire, msg);
	s0_error *e = get_error(code);
	ck_assert_str_eq(s0_error_reason(e), rc->reason);
	ck_assert_str_eq(s0_error_wire_code(e), rc->wire);
	ck_assert_str_eq(s0_error_message(e), msg);
	ck_assert_int_eq(s0_error_http_status(e), status);
	s0_error_free(e);
}
END_TEST

/* docs/wire.md §2.2 rows with their documented messages. */
START_TEST(test_documented_lifecycle_errors)
{
	static const struct {
		int status;
		const char *code, *message;
		int want;
		const char *reason;
		bool retryable;
	} rows[] = {
		{400, "bad_request", "invalid claim request: ttl must be >= 0", S0_EINVAL, "bad_request",
		 false},
		{401, "unauthorized", "token expired", S0_EAUTH, "unauthorized", false},
		{403, "forbidden", "sandbox belongs to a different team", S0_EFORBIDDEN, "forbidden",
		 false},
		{404, "not_found", "sandbox not found: no rows", S0_ENOTFOUND, "not_found", false},
		{409, "conflict", "sandbox pause conflicts with another lifecycle operation",
		 S0_ECONFLICT, "lifecycle_conflict", false},
		{409, "conflict", "sandbox resume conflicts with another lifecycle operation",
		 S0_ECONFLICT, "lifecycle_conflict", false},
		{409, "conflict", "sandbox rootfs operation requires a paused sandbox", S0_ECONFLICT,
		 "not_paused", false},
		{409, "conflict", "sandbox rootfs source operation requires a running or paused sandbox",
		 S0_ECONFLICT, "not_running_or_paused", false},
		{409, "template_not_ready", "template creation is still in progress", S0_ECONFLICT,
		 "template_not_ready", false},
		{429, "quota_exceeded", "sandbox_claims quota exceeded", S0_EQUOTA, "quota_exceeded",
		 false},
		{503, "unavailable", "sandbox checkpoint pause requires ctld", S0_EUNAVAILABLE,
		 "unavailable", true},
		{503, "unavailable", "sandbox is waking up", S0_EUNAVAILABLE, "waking_up", true},
		{504, "unavailable", "timed out waiting for sandbox to pause", S0_EUNAVAILABLE,
		 "gateway_timeout", true},
		{502, "unavailable", "cluster gateway unavailable", S0_EUNAVAILABLE, "bad_gateway", true},
		{503, "sandbox_resume_failed", "sandbox resume failed", S0_ERESUME, "resume_failed",
		 false},
		{500, "internal_error", "failed to pause sandbox: boom", S0_EINTERNAL, "internal_error",
		 false},
		{413, "request_too_large", "too large", S0_ETOOLARGE, "request_too_large", false},
		{405, "method_not_allowed", "nope", S0_EUNSUPPORTED, "method_not_allowed", false},
		{410, "gone", "gone", S0_EGONE, "gone", false},
		{403, "feature_not_licensed", "no", S0_EFORBIDDEN, "feature_not_licensed", false},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		s0t_push_error(R, rows[i].status, rows[i].code, rows[i].message);
		s0_error *e = get_error(rows[i].want);
		ck_assert_msg(!strcmp(s0_error_reason(e), rows[i].reason), "row %zu: reason %s", i,
		              s0_error_reason(e));
		ck_assert_str_eq(s0_error_message(e), rows[i].message);
		ck_assert_int_eq(s0_error_http_status(e), rows[i].status);
		ck_assert_msg(s0_error_is_retryable(e) == rows[i].retryable, "row %zu retryable", i);
		ck_assert(!s0_error_is_claim_start_throttled(e));
		s0_error_free(e);
	}
}
END_TEST

/* admission_restricted with details (docs/wire.md §2.1 "details"). */
START_TEST(test_details_json)
{
	s0t_push_json(R, 403,
	              "{\"success\":false,\"error\":{\"code\":\"admission_restricted\",\"message\":"
	              "\"team is not allowed to start additional usage\",\"details\":{\"reason\":"
	              "\"debt\",\"version\":3}}}");
	s0t_push_json(R, 400, "{\"success\":false,\"error\":{\"code\":\"bad_request\",\"message\":"
	                      "\"m\",\"details\":[1,\"two\",null]}}");
	s0t_push_json(R, 400, "{\"success\":false,\"error\":{\"code\":\"bad_request\",\"message\":"
	                      "\"m\",\"details\":null}}");
	s0_error *e = get_error(S0_EFORBIDDEN);
	ck_assert_str_eq(s0_error_reason(e), "admission_restricted");
	ck_assert_str_eq(s0_error_details_json(e), "{\"reason\":\"debt\",\"version\":3}");
	s0_error_free(e);
	e = get_error(S0_EINVAL);
	ck_assert_str_eq(s0_error_details_json(e), "[1,\"two\",null]");
	s0_error_free(e);
	e = get_error(S0_EINVAL);
	ck_assert_ptr_null(s0_error_details_json(e));
	s0_error_free(e);
}
END_TEST

/* Unknown or absent wire codes fall back on the HTTP status. */
START_TEST(test_status_fallback)
{
	static const struct {
		int status;
		int want;
		const char *reason;
	} rows[] = {
		{400, S0_EINVAL, "bad_request"},         {401, S0_EAUTH, "unauthorized"},
		{403, S0_EFORBIDDEN, "forbidden"},       {404, S0_ENOTFOUND, "not_found"},
		{405, S0_EUNSUPPORTED, "method_not_allowed"},
		{409, S0_ECONFLICT, "conflict"},         {410, S0_EGONE, "gone"},
		{413, S0_ETOOLARGE, "request_too_large"}, {429, S0_ETHROTTLED, "rate_limited"},
		{500, S0_EINTERNAL, "internal_error"},   {501, S0_EUNSUPPORTED, "not_implemented"},
		{502, S0_EUNAVAILABLE, "bad_gateway"},   {503, S0_EUNAVAILABLE, "unavailable"},
		{504, S0_EUNAVAILABLE, "gateway_timeout"}, {418, S0_EPROTOCOL, "unexpected_response"},
		{599, S0_EINTERNAL, "internal_error"},   {302, S0_EPROTOCOL, "unexpected_response"},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		s0t_push_error(R, rows[i].status, "some_future_code", "whatever");
		s0_error *e = get_error(rows[i].want);
		ck_assert_msg(!strcmp(s0_error_reason(e), rows[i].reason), "status %d: reason %s",
		              rows[i].status, s0_error_reason(e));
		ck_assert_str_eq(s0_error_wire_code(e), "some_future_code"); /* raw code kept */
		ck_assert_str_eq(s0_error_message(e), "whatever");
		s0_error_free(e);
		/* an envelope without a code, or with an empty one */
		s0t_push_json(R, rows[i].status, "{\"success\":false,\"error\":{\"message\":\"x\"}}");
		s0t_push_json(R, rows[i].status,
		              "{\"success\":false,\"error\":{\"code\":\"\",\"message\":\"x\"}}");
		for (int k = 0; k < 2; k++) {
			e = get_error(rows[i].want);
			ck_assert_str_eq(s0_error_reason(e), rows[i].reason);
			ck_assert_str_eq(s0_error_wire_code(e), "unexpected_response");
			ck_assert_str_eq(s0_error_message(e), "x");
			s0_error_free(e);
		}
	}
}
END_TEST

/* CL-11: request id from each spelling the SDKs read. */
START_TEST(test_request_id_spellings)
{
	static const char *names[] = {"X-Request-Id", "X-Request-ID", "Request-Id", "Request-ID",
	                              "x-requestid", "x-request-id"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char v[32];
		snprintf(v, sizeof v, "rid-%zu", i);
		s0t_reply *rep = s0t_push_error(R, 404, "not_found", "sandbox not found");
		s0t_reply_header(rep, names[i], v);
		s0_error *e = get_error(S0_ENOTFOUND);
		ck_assert_msg(s0_error_request_id(e) && !strcmp(s0_error_request_id(e), v),
		              "%s: got %s", names[i], s0_error_request_id(e));
		s0_error_free(e);
	}
	s0t_push_error(R, 404, "not_found", "sandbox not found");
	s0_error *e = get_error(S0_ENOTFOUND);
	ck_assert_ptr_null(s0_error_request_id(e));
	s0_error_free(e);
	/* an empty header does not count; the next spelling does */
	s0t_reply *rep = s0t_push_error(R, 404, "not_found", "sandbox not found");
	s0t_reply_header(rep, "X-Request-Id", "");
	s0t_reply_header(rep, "Request-Id", "second");
	e = get_error(S0_ENOTFOUND);
	ck_assert_str_eq(s0_error_request_id(e), "second");
	s0_error_free(e);
}
END_TEST

/* CL-10: Retry-After in seconds and HTTP-date forms; invalid values are absent. */
START_TEST(test_retry_after_forms)
{
	/* a manual clock fixes "now" at 2030-01-01T00:00:00Z for the date forms */
	s0_manual_clock *mc = NULL;
	ck_assert_int_eq(s0_manual_clock_new(1893456000000LL, 0, &mc, NULL), S0_OK);
	s0_clock clk;
	s0_manual_clock_get(mc, &clk);
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	o.token = CT_TOKEN;
	o.clock = &clk;
	s0_client_free(C);
	C = ct_client(&o);
	static const struct {
		const char *value;
		int64_t want;
	} rows[] = {
		{"7", 7000},
		{"0", 0},
		{" 12 ", 12000},
		{"Tue, 01 Jan 2030 00:00:30 GMT", 30000},        /* IMF-fixdate */
		{"Tuesday, 01-Jan-30 00:01:00 GMT", 60000},      /* RFC 850 */
		{"Tue Jan  1 00:00:05 2030", 5000},              /* asctime */
		{"Mon, 31 Dec 2029 23:00:00 GMT", 0},            /* in the past: retry now */
		{"-1", -1},
		{"soon", -1},
		{"1.5", -1},
		{"0x10", -1},
		{"", -1},
		{"5s", -1},
		{"99999999999999999999999", -1},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		s0t_reply *rep = s0t_push_error(R, 429, "quota_exceeded", "sandbox_claims quota exceeded");
		s0t_reply_header(rep, "Retry-After", rows[i].value);
		s0_error *e = get_error(S0_EQUOTA);
		ck_assert_msg(s0_error_retry_after_ms(e) == rows[i].want, "\"%s\": %lld, want %lld",
		              rows[i].value, (long long)s0_error_retry_after_ms(e),
		              (long long)rows[i].want);
		/* EQUOTA is retryable only with a Retry-After */
		ck_assert(s0_error_is_retryable(e) == (rows[i].want >= 0));
		s0_error_free(e);
	}
	s0_client_free(C);
	C = NULL;
	s0_manual_clock_free(mc);
	C = ct_client(NULL);
}
END_TEST

/* CL-10: the predicate is 429 and claim_start_throttled, nothing else. */
START_TEST(test_claim_start_throttled_predicate)
{
	s0t_reply *rep = s0t_push_error(R, 429, "claim_start_throttled", "slow down");
	s0t_reply_header(rep, "Retry-After", "3");
	s0t_push_error(R, 503, "claim_start_throttled", "slow down");
	s0t_push_error(R, 429, "quota_exceeded", "slow down");
	s0t_push_json(R, 429, "{\"error\":\"rate limit exceeded\",\"retry_after\":2}");
	s0_sandbox_info *sb = NULL;
	s0_error *e = NULL;
	ck_assert_int_eq(s0_sandbox_claim(C, "default", NULL, NULL, &sb, &e), S0_ETHROTTLED);
	CT_ASSERT_ERR(e, S0_ETHROTTLED, "claim_start_throttled");
	ck_assert(s0_error_is_claim_start_throttled(e));
	ck_assert(s0_error_is_retryable(e));
	ck_assert_int_eq(s0_error_retry_after_ms(e), 3000);
	ck_assert_ptr_null(s0_error_sandbox_id(e));
	s0_error_free(e);
	for (int i = 0; i < 3; i++) {
		e = NULL;
		ck_assert_int_lt(s0_sandbox_claim(C, "default", NULL, NULL, &sb, &e), 0);
		ck_assert(!s0_error_is_claim_start_throttled(e));
		s0_error_free(e);
	}
	ck_assert(!s0_error_is_claim_start_throttled(NULL));
}
END_TEST

/* docs/wire.md §2.1: the API rate-limit 429 body is not an envelope. */
START_TEST(test_rate_limit_body)
{
	s0t_push_json(R, 429, "{\"error\":\"rate limit exceeded\",\"retry_after\":12}");
	s0t_reply *rep = s0t_push_json(R, 429, "{\"error\":\"rate limit exceeded\",\"retry_after\":12}");
	s0t_reply_header(rep, "Retry-After", "3");
	s0t_reply_header(rep, "X-RateLimit-Limit", "10");
	s0_error *e = get_error(S0_ETHROTTLED);
	ck_assert_str_eq(s0_error_reason(e), "rate_limited");
	ck_assert_str_eq(s0_error_wire_code(e), "unexpected_response");
	ck_assert_str_eq(s0_error_message(e), "rate limit exceeded");
	ck_assert_int_eq(s0_error_retry_after_ms(e), 12000);
	ck_assert_int_eq(s0_error_http_status(e), 429);
	ck_assert(s0_error_is_retryable(e));
	s0_error_free(e);
	e = get_error(S0_ETHROTTLED);
	ck_assert_int_eq(s0_error_retry_after_ms(e), 3000); /* the header wins */
	s0_error_free(e);
	/* odd retry_after values count as absent, like odd headers */
	const char *odd[] = {"\"12\"", "-3", "1e17", "9.3e18", "null", "31536001"};
	for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
		char body[128];
		snprintf(body, sizeof body, "{\"error\":\"rate limit exceeded\",\"retry_after\":%s}",
		         odd[i]);
		s0t_push_json(R, 429, body);
		e = get_error(S0_ETHROTTLED);
		ck_assert_msg(s0_error_retry_after_ms(e) == -1, "%s: %lld", odd[i],
		              (long long)s0_error_retry_after_ms(e));
		s0_error_free(e);
	}
	s0t_push_json(R, 429, "{\"error\":\"rate limit exceeded\",\"retry_after\":0}");
	e = get_error(S0_ETHROTTLED);
	ck_assert_int_eq(s0_error_retry_after_ms(e), 0);
	s0_error_free(e);
}
END_TEST

/* CL-11: HTML from a proxy, empty bodies, garbage: mapped by status, no crash. */
START_TEST(test_non_envelope_bodies)
{
	const char *html = "<html><body><h1>502 Bad Gateway</h1></body></html>";
	s0t_push(R, 502, "text/html", html, (size_t)-1);
	s0t_push(R, 500, NULL, NULL, 0);
	s0t_push(R, 404, "application/json", NULL, 0);
	s0t_push_json(R, 400, "[1,2,3]");
	s0t_push_json(R, 400, "{\"success\":false,\"error\":{\"code\":404,\"message\":7}}");
	static const unsigned char junk[] = {0x00, 0xff, 0xfe, '{', 0x00, '"'};
	s0t_push(R, 503, "application/octet-stream", junk, sizeof junk);
	s0t_push_json(R, 500, "{\"success\":false,\"error\":{\"code\":\"internal_error\"");

	s0_error *e = get_error(S0_EUNAVAILABLE);
	ck_assert_str_eq(s0_error_reason(e), "bad_gateway");
	ck_assert_str_eq(s0_error_wire_code(e), "unexpected_response");
	ck_assert_ptr_nonnull(strstr(s0_error_message(e), "502"));
	size_t blen = 0;
	ck_assert_str_eq(s0_error_body(e, &blen), html);
	ck_assert_uint_eq(blen, strlen(html));
	ck_assert(s0_error_is_retryable(e));
	s0_error_free(e);

	e = get_error(S0_EINTERNAL);
	ck_assert_str_eq(s0_error_wire_code(e), "unknown_error");
	ck_assert_int_eq(s0_error_http_status(e), 500);
	ck_assert_str_ne(s0_error_message(e), "");
	s0_error_free(e);

	e = get_error(S0_ENOTFOUND);
	ck_assert_str_eq(s0_error_wire_code(e), "unknown_error");
	s0_error_free(e);

	e = get_error(S0_EINVAL);
	ck_assert_str_eq(s0_error_wire_code(e), "unexpected_response");
	s0_error_free(e);

	e = get_error(S0_EINVAL);
	ck_assert_str_eq(s0_error_wire_code(e), "unexpected_response");
	s0_error_free(e);

	e = get_error(S0_EUNAVAILABLE);
	ck_assert_str_eq(s0_error_wire_code(e), "unexpected_response");
	const unsigned char *b = s0_error_body(e, &blen);
	ck_assert_uint_eq(blen, sizeof junk);
	ck_assert_mem_eq(b, junk, sizeof junk);
	s0_error_free(e);

	e = get_error(S0_EINTERNAL);
	ck_assert_str_eq(s0_error_wire_code(e), "unexpected_response");
	s0_error_free(e);
}
END_TEST

/* Malformed and truncated JSON in success responses are protocol errors. */
START_TEST(test_malformed_success)
{
	static const struct {
		const char *ctype, *body;
	} rows[] = {
		{"application/json", "{\"success\":true,\"data\":{\"id\":\"sb-1\",\"status\":"},
		{"application/json", "not json at all"},
		{"application/json", "{\"success\":false}"},
		{"application/json", "{\"data\":{\"id\":\"sb-1\"}}"},
		{"application/json", "{\"success\":\"true\",\"data\":{\"id\":\"sb-1\"}}"},
		{"application/json", "{\"success\":true}"},
		{"application/json", "{\"success\":true,\"data\":null}"},
		{"application/json", "{\"success\":true,\"data\":[]}"},
		{"application/json", "{\"success\":true,\"data\":\"sb-1\"}"},
		{"application/json", "[]"},
		{"application/json", ""},
		{"application/json", "{\"success\":true,\"data\":{\"id\":5}}"},
		{"application/json", "{\"success\":true,\"data\":{\"id\":\"x\",\"paused\":\"yes\"}}"},
		{"application/json",
		 "{\"success\":true,\"data\":{\"id\":\"x\",\"runtime_generation\":\"3\"}}"},
		{"application/json", "{\"success\":true,\"data\":{\"id\":\"x\",\"status\":5}}"},
		{"text/html", "<html>200 OK from a captive portal</html>"},
		{NULL, ""},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		s0t_push(R, 200, rows[i].ctype, rows[i].body, (size_t)-1);
		s0_sandbox_info *sb = NULL;
		s0_error *e = NULL;
		int rc = s0_sandbox_get(C, "sb-1", &sb, &e);
		ck_assert_msg(rc == S0_EPROTOCOL, "row %zu (%s): rc %s", i, rows[i].body,
		              s0_code_name(rc));
		ck_assert_ptr_null(sb);
		ck_assert_int_eq(s0_error_code(e), S0_EPROTOCOL);
		s0_error_free(e);
	}
	/* endpoints without a result still want an envelope when a body comes */
	s0t_push(R, 200, "text/html", "<html>captive portal</html>", (size_t)-1);
	s0t_push_json(R, 200, "{\"success\":false,\"error\":{\"code\":\"x\"}}");
	ck_assert_int_eq(s0_sandbox_delete(C, "sb-1", NULL), S0_EPROTOCOL);
	ck_assert_int_eq(s0_files_delete(C, "sb-1", "/a", NULL), S0_EPROTOCOL);
	/* lists and pages */
	s0t_push_ok(R, 200, "{\"sandboxes\":{\"a\":1},\"count\":1}");
	s0t_push_ok(R, 200, "{\"sandboxes\":[1],\"count\":1}");
	s0_sandbox_page *p = NULL;
	ck_assert_int_eq(s0_sandbox_list(C, NULL, &p, NULL), S0_EPROTOCOL);
	ck_assert_int_eq(s0_sandbox_list(C, NULL, &p, NULL), S0_EPROTOCOL);
	ck_assert_ptr_null(p);
	s0t_push_ok(R, 201, "{\"source_sandbox_id\":\"sb-1\"}");
	s0_sandbox_info *sb = NULL;
	ck_assert_int_eq(s0_sandbox_fork(C, "sb-1", NULL, &sb, NULL), S0_EPROTOCOL);
	s0t_push_ok(R, 200, "{\"sandbox_id\":\"sb-1\",\"paused\":1}");
	s0_lifecycle_result *lr = NULL;
	ck_assert_int_eq(s0_sandbox_pause(C, "sb-1", 0, &lr, NULL), S0_EPROTOCOL);
	s0t_push_ok(R, 201, "{\"name\":\"no id\"}");
	s0_snapshot_info *si = NULL;
	ck_assert_int_eq(s0_snapshot_create(C, "sb-1", NULL, NULL, 0, &si, NULL), S0_EPROTOCOL);
	s0t_push_ok(R, 200, "{\"entries\":\"nope\"}");
	s0_file_list *fl = NULL;
	ck_assert_int_eq(s0_files_list(C, "sb-1", "/", &fl, NULL), S0_EPROTOCOL);
	s0t_push_ok(R, 200, "[]");
	s0_file_info *fi = NULL;
	ck_assert_int_eq(s0_files_stat(C, "sb-1", "/", &fi, NULL), S0_EPROTOCOL);
}
END_TEST

/* Content types are compared without case and parameters; JSON is JSON. */
START_TEST(test_content_type_variants)
{
	static const char *types[] = {"application/json", "application/json; charset=utf-8",
	                              "Application/JSON", "text/plain", NULL,
	                              "application/problem+json"};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
		s0t_push(R, 200, types[i], "{\"success\":true,\"data\":{\"id\":\"sb-1\"}}", (size_t)-1);
		s0_sandbox_info *sb = NULL;
		s0_error *e = NULL;
		ck_assert_msg(s0_sandbox_get(C, "sb-1", &sb, &e) == S0_OK, "%s: %s", types[i],
		              s0_error_message(e));
		ck_assert_str_eq(s0_sandbox_info_id(sb), "sb-1");
		s0_sandbox_info_free(sb);
	}
	/* an empty 2xx body is fine where no result is read */
	s0t_push(R, 200, NULL, NULL, 0);
	s0t_push(R, 204, NULL, NULL, 0);
	ck_assert_int_eq(s0_sandbox_delete(C, "sb-1", NULL), S0_OK);
	ck_assert_int_eq(s0_snapshot_delete(C, "snap-1", NULL), S0_OK);
}
END_TEST

/* Errors are reported without an err slot, and an existing *err is kept. */
START_TEST(test_err_slot_handling)
{
	s0t_push_error(R, 404, "not_found", "first");
	s0t_push_error(R, 409, "conflict", "second");
	s0_sandbox_info *sb = NULL;
	ck_assert_int_eq(s0_sandbox_get(C, "sb-1", &sb, NULL), S0_ENOTFOUND);
	s0_error *e = s0_error_new(S0_EUSER, "mine", "kept");
	ck_assert_int_eq(s0_sandbox_get(C, "sb-1", &sb, &e), S0_ECONFLICT);
	ck_assert_str_eq(s0_error_message(e), "kept");
	s0_error_free(e);
}
END_TEST

Suite *s0_client_errors_suite(void)
{
	Suite *s = suite_create("client_errors");
	TCase *tc = tcase_create("errors");
	tcase_add_checked_fixture(tc, ct_setup, ct_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_loop_test(tc, test_every_wire_row, 0, (int)N_WIRE_CASES);
	tcase_add_loop_test(tc, test_every_reason_row, 0, (int)N_REASON_CASES);
	tcase_add_test(tc, test_documented_lifecycle_errors);
	tcase_add_test(tc, test_details_json);
	tcase_add_test(tc, test_status_fallback);
	tcase_add_test(tc, test_request_id_spellings);
	tcase_add_test(tc, test_retry_after_forms);
	tcase_add_test(tc, test_claim_start_throttled_predicate);
	tcase_add_test(tc, test_rate_limit_body);
	tcase_add_test(tc, test_non_envelope_bodies);
	tcase_add_test(tc, test_malformed_success);
	tcase_add_test(tc, test_content_type_variants);
	tcase_add_test(tc, test_err_slot_handling);
	suite_add_tcase(s, tc);
	return s;
}
