/*
 * Both adapters over the same router and fake engine: the in-process
 * transport under an s0_client, and the HTTP server under the HTTP client.
 * The same call must give the same sandbox JSON through either.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_internal.h"
#include "fake_engine.h"
#include "local/api/transport.h"
#include "server_test.h"

static s0__engine *eng;

static void setup(void)
{
	eng = fake_engine_new();
}

static void teardown(void)
{
	fake_engine_free(eng);
}

static s0_client *local_client(s0_cancel_token *cancel)
{
	s0__router_opts ro = {.team_id = "team_x"};
	void *tctx = NULL;
	ck_assert_int_eq(s0__local_transport_new(eng, &ro, &tctx, NULL), S0_OK);
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	o.cancel = cancel;
	s0_client *c = NULL;
	ck_assert_int_eq(
		s0__client_new_with_transport(&o, &s0__local_transport_ops, tctx, "local:test", &c, NULL),
		S0_OK);
	return c;
}

static int route(void *ctx, const s0__server_call *call, const s0__http_request *req,
                 s0__http_response *resp)
{
	s0__router_opts o = {.team_id = call->team_id, .request_id = call->request_id};
	return s0__router_handle_raw(ctx, &o, req, resp);
}

static size_t limit(void *ctx, const char *method, const char *path, const char **wire)
{
	(void)ctx;
	return s0__router_body_limit(method, path, wire);
}

START_TEST(transport_reaches_the_router)
{
	s0_client *c = local_client(NULL);
	s0_sandbox_info *info = NULL;
	ck_assert_int_eq(s0_sandbox_get(c, "sb 1", &info, NULL), S0_OK);
	ck_assert_str_eq(s0_sandbox_info_id(info), "sb 1");
	ck_assert_str_eq(s0_sandbox_info_team_id(info), "team_x");
	ck_assert_str_eq(fake_last(eng)->id, "sb 1");
	ck_assert_str_eq(fake_last(eng)->team, "team_x");
	s0_sandbox_info_free(info);
	fake_fail_next(eng, S0_ENOTFOUND, "not_found", "sandbox not found", -1, NULL);
	s0_error *err = NULL;
	ck_assert_int_eq(s0_sandbox_get(c, "sb-2", &info, &err), S0_ENOTFOUND);
	ck_assert_int_eq(s0_error_http_status(err), 404);
	ck_assert_str_eq(s0_error_wire_code(err), "not_found");
	ck_assert_ptr_nonnull(s0_error_request_id(err));
	s0_error_free(err);
	s0_client_free(c);
}
END_TEST

START_TEST(transport_honours_cancel_before_dispatch)
{
	s0_cancel_token *tok = NULL;
	ck_assert_int_eq(s0_cancel_token_new(&tok, NULL), S0_OK);
	s0_cancel_token_cancel(tok);
	s0_client *c = local_client(tok);
	s0_sandbox_info *info = NULL;
	ck_assert_int_eq(s0_sandbox_get(c, "sb-1", &info, NULL), S0_ECANCELED);
	ck_assert_int_eq(fake_last(eng)->calls, 0);
	s0_client_free(c);
	s0_cancel_token_free(tok);
	void *ctx = NULL;
	s0__router_opts none = {0};
	ck_assert_int_eq(s0__local_transport_new(eng, &none, &ctx, NULL), S0_EINVAL);
	ck_assert_int_eq(s0__local_transport_new(NULL, &none, &ctx, NULL), S0_EINVAL);
}
END_TEST

START_TEST(http_and_in_process_answer_alike)
{
	static const s0_server_api_key keys[] = {{KEY_A, "team_x"}};
	s0_server_options so = S0_SERVER_OPTIONS_INIT;
	so.api_keys = keys;
	so.api_keys_len = 1;
	s0__server_config cfg = {.opts = &so, .handler = route, .handler_ctx = eng,
	                         .body_limit = limit};
	s0_server *srv = NULL;
	ck_assert_int_eq(s0__server_new(&cfg, &srv, NULL), S0_OK);
	char *url = NULL;
	ck_assert_int_ge(asprintf(&url, "http://127.0.0.1:%d", s0_server_port(srv)), 0);
	s0_client_options co = S0_CLIENT_OPTIONS_INIT;
	co.base_url = url;
	co.token = KEY_A;
	s0_client *hc = NULL;
	ck_assert_int_eq(s0_client_new(&co, &hc, NULL), S0_OK);
	s0_client *lc = local_client(NULL);
	static const char *const ids[] = {"sb-1", "sb-paused", "sb-ttl", "sb 1", "a+b"};
	for (size_t i = 0; i < 5; i++) {
		s0_sandbox_info *a = NULL, *b = NULL;
		ck_assert_int_eq(s0_sandbox_get(hc, ids[i], &a, NULL), S0_OK);
		ck_assert_str_eq(fake_last(eng)->id, ids[i]);
		ck_assert_int_eq(s0_sandbox_get(lc, ids[i], &b, NULL), S0_OK);
		ck_assert_str_eq(s0_sandbox_info_json(a), s0_sandbox_info_json(b));
		s0_sandbox_info_free(a);
		s0_sandbox_info_free(b);
	}
	s0_lifecycle_result *pr = NULL;
	fake_pause_accepted(eng);
	ck_assert_int_eq(s0_sandbox_pause(hc, "sb-1", 1, &pr, NULL), S0_OK);
	ck_assert_int_eq(s0_lifecycle_result_http_status(pr), 202);
	ck_assert(fake_last(eng)->memory);
	s0_lifecycle_result_free(pr);
	s0_client_free(hc);
	s0_client_free(lc);
	s0_server_free(srv);
	free(url);
}
END_TEST

Suite *s0_router_adapters_suite(void)
{
	Suite *s = suite_create("router_adapters");
	TCase *tc = tcase_create("adapters");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, transport_reaches_the_router);
	tcase_add_test(tc, transport_honours_cancel_before_dispatch);
	tcase_add_test(tc, http_and_in_process_answer_alike);
	suite_add_tcase(s, tc);
	return s;
}
