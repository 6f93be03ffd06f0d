/*
 * The HTTP transport: large bodies both ways, slow and dropped responses,
 * truncation, timeouts, prompt cancel from another thread, and one client
 * shared by many threads.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_test.h"

#define SB_MIN "{\"id\":\"sb-1\",\"status\":\"running\",\"paused\":false}"

static unsigned char *random_bytes(size_t n, unsigned seed)
{
	unsigned char *b = malloc(n);
	ck_assert_ptr_nonnull(b);
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		b[i] = (unsigned char)x;
	}
	return b;
}

START_TEST(test_large_write)
{
	size_t n = 3 * 1024 * 1024 + 17;
	unsigned char *b = random_bytes(n, 1);
	s0t_push_ok(R, 200, "{\"written\":true}");
	ck_assert_int_eq(s0_files_write(C, "sb-1", "/big", b, n, NULL), S0_OK);
	const s0t_request *q = s0t_responder_req(R, 0);
	ck_assert_uint_eq(q->body_len, n);
	ck_assert(!memcmp(q->body, b, n));
	ck_assert_ptr_null(s0t_req_header(q, "Expect")); /* no 100-continue round trip */
	ck_assert_ptr_null(s0t_req_header(q, "Transfer-Encoding"));
	char len[32];
	snprintf(len, sizeof len, "%zu", n);
	ck_assert_str_eq(s0t_req_header(q, "Content-Length"), len);
	free(b);
}
END_TEST

START_TEST(test_large_read)
{
	size_t n = 3 * 1024 * 1024 + 5;
	unsigned char *b = random_bytes(n, 2);
	s0t_push(R, 200, "application/octet-stream", b, n);
	void *data = NULL;
	size_t len = 0;
	ck_assert_int_eq(s0_files_read(C, "sb-1", "/big", &data, &len, NULL), S0_OK);
	ck_assert_uint_eq(len, n);
	ck_assert(!memcmp(data, b, n));
	s0_free(data);
	free(b);
}
END_TEST

/* A 1 MB+ JSON body: base64 file content and a long list page. */
START_TEST(test_large_json)
{
	static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t raw = 1200 * 1024; /* multiple of 3 */
	unsigned char *b = random_bytes(raw, 3);
	size_t enc_len = raw / 3 * 4;
	char *body = malloc(enc_len + 128);
	ck_assert_ptr_nonnull(body);
	size_t o = (size_t)sprintf(body, "{\"success\":true,\"data\":{\"encoding\":\"base64\",\"content\":\"");
	for (size_t i = 0; i < raw; i += 3) {
		uint32_t v = (uint32_t)b[i] << 16 | (uint32_t)b[i + 1] << 8 | b[i + 2];
		body[o++] = tbl[(v >> 18) & 63];
		body[o++] = tbl[(v >> 12) & 63];
		body[o++] = tbl[(v >> 6) & 63];
		body[o++] = tbl[v & 63];
	}
	strcpy(body + o, "\"}}");
	s0t_push(R, 200, "application/json", body, (size_t)-1);
	void *data = NULL;
	size_t len = 0;
	ck_assert_int_eq(s0_files_read(C, "sb-1", "/big", &data, &len, NULL), S0_OK);
	ck_assert_uint_eq(len, raw);
	ck_assert(!memcmp(data, b, raw));
	s0_free(data);
	free(b);
	free(body);

	/* a 200-item page of large summaries */
	size_t cap = 4 * 1024 * 1024;
	char *page = malloc(cap);
	ck_assert_ptr_nonnull(page);
	char *pad = malloc(6001);
	memset(pad, 'p', 6000);
	pad[6000] = '\0';
	o = (size_t)sprintf(page, "{\"success\":true,\"data\":{\"count\":200,\"has_more\":false,"
	                          "\"sandboxes\":[");
	for (int i = 0; i < 200; i++)
		o += (size_t)snprintf(page + o, cap - o, "%s{\"id\":\"sb-%d\",\"pad\":\"%s\"}",
		                      i ? "," : "", i, pad);
	strcpy(page + o, "]}}");
	ck_assert_uint_gt(strlen(page), 1024 * 1024);
	s0t_push(R, 200, "application/json", page, (size_t)-1);
	s0_sandbox_page *p = NULL;
	ck_assert_int_eq(s0_sandbox_list(C, NULL, &p, NULL), S0_OK);
	ck_assert_uint_eq(s0_sandbox_page_length(p), 200);
	ck_assert_str_eq(s0_sandbox_info_id(s0_sandbox_page_at(p, 199)), "sb-199");
	s0_sandbox_page_free(p);
	free(page);
	free(pad);
}
END_TEST

START_TEST(test_slow_response)
{
	s0t_reply *rep = s0t_push_ok(R, 200, SB_MIN);
	s0t_reply_delay(rep, 300);
	int64_t t0 = ct_now_ms();
	s0_sandbox_info *sb = NULL;
	ck_assert_int_eq(s0_sandbox_get(C, "sb-1", &sb, NULL), S0_OK);
	ck_assert_int_ge(ct_now_ms() - t0, 290);
	s0_sandbox_info_free(sb);
}
END_TEST

/*
 * A dropped connection is a transport error, and a POST that may have
 * reached the server is never sent again behind the caller's back (docs/wire.md
 * §1.3: no automatic retries; CL-08 leaves the repeat to the caller).
 */
START_TEST(test_dropped_connection)
{
	const char *paused = "{\"sandbox_id\":\"sb-1\",\"paused\":false,\"status\":\"running\"}";
	s0t_push_ok(R, 200, SB_MIN); /* warm a keep-alive connection first */
	s0_sandbox_info *sb = NULL;
	ck_assert_int_eq(s0_sandbox_get(C, "sb-1", &sb, NULL), S0_OK);
	s0_sandbox_info_free(sb);
	const int32_t modes[] = {S0_BOOL_UNSET, S0_BOOL_TRUE};
	for (size_t i = 0; i < 2; i++) {
		size_t before = s0t_responder_count(R);
		s0t_push_drop(R);
		s0t_push_ok(R, 200, paused); /* what a silent replay would get */
		s0_lifecycle_result *lr = NULL;
		s0_error *e = NULL;
		ck_assert_int_eq(s0_sandbox_pause(C, "sb-1", modes[i], &lr, &e), S0_ETRANSPORT);
		ck_assert_ptr_null(lr);
		ck_assert_str_eq(s0_error_reason(e), "curl:52"); /* CURLE_GOT_NOTHING */
		ck_assert_int_eq(s0_error_http_status(e), 0);
		ck_assert_ptr_null(s0_error_wire_code(e));
		ck_assert(s0_error_is_retryable(e));
		s0_error_free(e);
		ck_assert_uint_eq(s0t_responder_count(R), before + 1); /* exactly one POST */
		ck_assert_uint_eq(s0t_responder_pending(R), 1);
		/* the caller repeats, with the same body */
		ck_assert_int_eq(s0_sandbox_pause(C, "sb-1", modes[i], &lr, NULL), S0_OK);
		s0_lifecycle_result_free(lr);
		const s0t_request *a = s0t_responder_req(R, before), *b = s0t_responder_req(R, before + 1);
		ck_assert_uint_eq(a->body_len, b->body_len);
		ck_assert(!memcmp(a->body, b->body, a->body_len));
	}
	/* a GET is idempotent: libcurl may replay it on another kept-alive
	 * connection, so only the outcome is checked here */
	for (int i = 0; i < 8; i++)
		s0t_push_drop(R);
	s0_error *e = NULL;
	ck_assert_int_eq(s0_sandbox_get(C, "sb-1", &sb, &e), S0_ETRANSPORT);
	ck_assert_str_eq(s0_error_reason(e), "curl:52");
	s0_error_free(e);
	while (s0t_responder_pending(R)) /* use up the spare drops */
		ck_assert_int_eq(s0_sandbox_get(C, "sb-1", &sb, NULL), S0_ETRANSPORT);
	s0t_push_ok(R, 200, SB_MIN);
	ck_assert_int_eq(s0_sandbox_get(C, "sb-1", &sb, NULL), S0_OK);
	s0_sandbox_info_free(sb);
	ck_assert_uint_eq(s0t_responder_pending(R), 0);
	ck_assert_uint_eq(s0t_responder_unscripted(R), 0);
}
END_TEST

/* A body cut short after its headers announced more. */
START_TEST(test_truncated_body)
{
	const char *full = "{\"success\":true,\"data\":" SB_MIN "}";
	s0t_reply *rep = s0t_push_json(R, 200, full);
	s0t_reply_truncate(rep, 10);
	s0_sandbox_info *sb = NULL;
	s0_error *e = NULL;
	ck_assert_int_eq(s0_sandbox_get(C, "sb-1", &sb, &e), S0_ETRANSPORT);
	ck_assert_str_eq(s0_error_reason(e), "curl:18"); /* CURLE_PARTIAL_FILE */
	s0_error_free(e);
	ck_assert_ptr_null(sb);
}
END_TEST

START_TEST(test_connection_refused)
{
	s0t_responder *gone = s0t_responder_new();
	ck_assert_ptr_nonnull(gone);
	char url[64];
	strcpy(url, s0t_responder_url(gone));
	s0t_responder_free(gone);
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	o.base_url = url;
	s0_client *c = ct_client(&o);
	s0_sandbox_info *sb = NULL;
	s0_error *e = NULL;
	ck_assert_int_eq(s0_sandbox_get(c, "sb-1", &sb, &e), S0_ETRANSPORT);
	ck_assert_str_eq(s0_error_reason(e), "curl:7"); /* CURLE_COULDNT_CONNECT */
	s0_error_free(e);
	s0_client_free(c);
}
END_TEST

/* The client's whole-request timeout ends a stalled exchange. */
START_TEST(test_request_timeout)
{
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	o.request_timeout_ms = 300;
	s0_client *c = ct_client(&o);
	s0t_reply_stall(s0t_push_ok(R, 200, SB_MIN));
	int64_t t0 = ct_now_ms();
	s0_sandbox_info *sb = NULL;
	s0_error *e = NULL;
	ck_assert_int_eq(s0_sandbox_get(c, "sb-1", &sb, &e), S0_ETRANSPORT);
	int64_t took = ct_now_ms() - t0;
	ck_assert_str_eq(s0_error_reason(e), "curl:28"); /* CURLE_OPERATION_TIMEDOUT */
	ck_assert_int_ge(took, 290);
	ck_assert_int_lt(took, 3000);
	s0_error_free(e);
	s0t_responder_release(R);
	s0_client_free(c);
}
END_TEST

typedef struct call_arg {
	s0_client *c;
	int rc;
	char reason[64];
	int64_t done_ms;
} call_arg;

static void *get_thread(void *p)
{
	call_arg *a = p;
	s0_sandbox_info *sb = NULL;
	s0_error *e = NULL;
	a->rc = s0_sandbox_get(a->c, "sb-1", &sb, &e);
	a->done_ms = ct_now_ms();
	snprintf(a->reason, sizeof a->reason, "%s", s0_error_reason(e));
	s0_error_free(e);
	s0_sandbox_info_free(sb);
	return NULL;
}

/* Cancel from another thread ends a call on a stalled server in < 100 ms. */
START_TEST(test_cancel_from_other_thread)
{
	s0_cancel_token *tok = NULL;
	ck_assert_int_eq(s0_cancel_token_new(&tok, NULL), S0_OK);
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	o.cancel = tok;
	s0_client *c = ct_client(&o);
	for (int round = 0; round < 3; round++) {
		s0t_reply_stall(s0t_push_ok(R, 200, SB_MIN));
		call_arg a = {c, 1, "", 0};
		pthread_t th;
		ck_assert_int_eq(pthread_create(&th, NULL, get_thread, &a), 0);
		ck_assert(s0t_responder_wait(R, (size_t)round + 1, 5000)); /* the server holds it */
		int64_t t0 = ct_now_ms();
		s0_cancel_token_cancel(tok);
		pthread_join(th, NULL);
		ck_assert_int_eq(a.rc, S0_ECANCELED);
		ck_assert_str_eq(a.reason, "canceled");
		ck_assert_msg(a.done_ms - t0 < 100, "cancel took %lld ms", (long long)(a.done_ms - t0));
		s0t_responder_release(R);
		s0_cancel_token_reset(tok);
	}
	/* a token that already fired stops the call before anything is sent */
	s0_cancel_token_cancel(tok);
	s0_sandbox_info *sb = NULL;
	ck_assert_int_eq(s0_sandbox_get(c, "sb-1", &sb, NULL), S0_ECANCELED);
	ck_assert_uint_eq(s0t_responder_count(R), 3);
	s0_cancel_token_reset(tok);
	/* and after a reset the client works again */
	s0t_push_ok(R, 200, SB_MIN);
	ck_assert_int_eq(s0_sandbox_get(c, "sb-1", &sb, NULL), S0_OK);
	s0_sandbox_info_free(sb);
	s0_client_free(c);
	s0_cancel_token_free(tok);
}
END_TEST

/* One token fired while four calls wait on a stalled server ends all four. */
START_TEST(test_cancel_many_in_flight)
{
	enum { N = 4 };
	s0_cancel_token *tok = NULL;
	ck_assert_int_eq(s0_cancel_token_new(&tok, NULL), S0_OK);
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	o.cancel = tok;
	s0_client *c = ct_client(&o);
	s0_client *other = ct_client(NULL); /* a client without the token is unaffected */
	for (int i = 0; i < N; i++)
		s0t_reply_stall(s0t_push_ok(R, 200, SB_MIN));
	s0t_reply_stall(s0t_push_ok(R, 200, SB_MIN));
	call_arg a[N], b = {other, 1, "", 0};
	pthread_t th[N], tb;
	for (int i = 0; i < N; i++) {
		a[i] = (call_arg){c, 1, "", 0};
		ck_assert_int_eq(pthread_create(&th[i], NULL, get_thread, &a[i]), 0);
	}
	ck_assert(s0t_responder_wait(R, N, 5000));
	ck_assert_int_eq(pthread_create(&tb, NULL, get_thread, &b), 0);
	ck_assert(s0t_responder_wait(R, N + 1, 5000));
	int64_t t0 = ct_now_ms();
	s0_cancel_token_cancel(tok);
	for (int i = 0; i < N; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(a[i].rc, S0_ECANCELED);
		ck_assert_msg(a[i].done_ms - t0 < 100, "call %d: %lld ms", i,
		              (long long)(a[i].done_ms - t0));
	}
	s0t_responder_release(R); /* the other client's call completes normally */
	pthread_join(tb, NULL);
	ck_assert_int_eq(b.rc, S0_OK);
	s0_client_free(other);
	s0_client_free(c);
	s0_cancel_token_free(tok);
}
END_TEST

typedef struct load_arg {
	s0_client *c;
	int calls;
	int failures;
	char first_error[160];
} load_arg;

static void *load_thread(void *p)
{
	load_arg *a = p;
	for (int i = 0; i < a->calls; i++) {
		s0_sandbox_info *sb = NULL;
		s0_error *e = NULL;
		int rc;
		switch (i % 3) {
		case 0:
			rc = s0_sandbox_get(a->c, "sb-1", &sb, &e);
			if (rc == S0_OK && strcmp(s0_sandbox_info_id(sb), "sb-1"))
				rc = S0_ERROR;
			s0_sandbox_info_free(sb);
			break;
		case 1:
			rc = s0_files_write(a->c, "sb-1", "/f", "hello", 5, &e);
			break;
		default: {
			s0_lifecycle_result *lr = NULL;
			rc = s0_sandbox_pause(a->c, "sb-1", S0_BOOL_TRUE, &lr, &e);
			s0_lifecycle_result_free(lr);
		}
		}
		if (rc != S0_OK) {
			if (!a->failures++)
				snprintf(a->first_error, sizeof a->first_error, "%s: %s", s0_code_name(rc),
				         s0_error_message(e));
		}
		s0_error_free(e);
	}
	return NULL;
}

/* 8 threads × 200 calls on one client, without an error or a leak. */
START_TEST(test_threads_share_one_client)
{
	s0t_responder_set_record(R, false);
	s0t_responder_set_default(R, 200, "application/json",
	                          "{\"success\":true,\"data\":{\"id\":\"sb-1\",\"sandbox_id\":\"sb-1\","
	                          "\"status\":\"running\",\"paused\":false,\"written\":true}}");
	enum { NT = 8, CALLS = 200 };
	pthread_t th[NT];
	load_arg a[NT];
	for (int i = 0; i < NT; i++) {
		a[i] = (load_arg){C, CALLS, 0, ""};
		ck_assert_int_eq(pthread_create(&th[i], NULL, load_thread, &a[i]), 0);
	}
	for (int i = 0; i < NT; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < NT; i++)
		ck_assert_msg(a[i].failures == 0, "thread %d: %d failures, first %s", i, a[i].failures,
		              a[i].first_error);
	ck_assert_uint_eq(s0t_responder_count(R), NT * CALLS);
	ck_assert_uint_eq(s0t_responder_unscripted(R), 0);
	ck_assert_int_eq(s0_live_objects(), ct_live_start + 1); /* just the client */
}
END_TEST

/* The responder's own expectation check (tests/support/responder.h). */
START_TEST(test_responder_expectations)
{
	s0t_reply_expect(s0t_push_ok(R, 200, SB_MIN), "GET", "/api/v1/sandboxes/sb-1");
	s0t_reply_expect(s0t_push_ok(R, 200, SB_MIN), "GET", "/api/v1/sandboxes/sb-2");
	s0_sandbox_info *sb = NULL;
	ck_assert_int_eq(s0_sandbox_get(C, "sb-1", &sb, NULL), S0_OK);
	s0_sandbox_info_free(sb);
	s0_error *e = NULL;
	ck_assert_int_eq(s0_sandbox_get(C, "sb-3", &sb, &e), S0_EINTERNAL);
	ck_assert_str_eq(s0_error_wire_code(e), "responder_mismatch");
	ck_assert_int_eq(s0_error_http_status(e), 599);
	s0_error_free(e);
	ck_assert_uint_eq(s0t_responder_mismatches(R), 1);
	ck_assert_uint_eq(s0t_responder_unscripted(R), 0);
	e = NULL;
	ck_assert_int_eq(s0_sandbox_get(C, "sb-1", &sb, &e), S0_EINTERNAL);
	ck_assert_str_eq(s0_error_wire_code(e), "responder_unscripted");
	s0_error_free(e);
	ck_assert_uint_eq(s0t_responder_unscripted(R), 1);
	ck_assert_uint_eq(s0t_responder_count(R), 3);
	s0t_responder_clear(R);
	ck_assert_uint_eq(s0t_responder_count(R), 0);
	ck_assert_ptr_null(s0t_responder_last(R));
	ck_assert_ptr_null(s0t_responder_req(R, 0));
	s0t_push_ok(R, 200, SB_MIN);
	ck_assert_int_eq(s0_sandbox_get(C, "sb-4", &sb, NULL), S0_OK);
	s0_sandbox_info_free(sb);
	ck_assert_str_eq(s0t_responder_req(R, 0)->path, "/api/v1/sandboxes/sb-4");
	ck_assert_uint_eq(s0t_responder_req(R, 0)->seq, 3);
	ck_assert(!s0t_responder_wait(R, 2, 10));
}
END_TEST

Suite *s0_client_transport_suite(void)
{
	Suite *s = suite_create("client_transport");
	TCase *tc = tcase_create("transport");
	tcase_add_checked_fixture(tc, ct_setup, ct_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_large_write);
	tcase_add_test(tc, test_large_read);
	tcase_add_test(tc, test_large_json);
	tcase_add_test(tc, test_slow_response);
	tcase_add_test(tc, test_dropped_connection);
	tcase_add_test(tc, test_truncated_body);
	tcase_add_test(tc, test_connection_refused);
	tcase_add_test(tc, test_request_timeout);
	tcase_add_test(tc, test_cancel_from_other_thread);
	tcase_add_test(tc, test_cancel_many_in_flight);
	tcase_add_test(tc, test_threads_share_one_client);
	tcase_add_test(tc, test_responder_expectations);
	suite_add_tcase(s, tc);
	return s;
}
