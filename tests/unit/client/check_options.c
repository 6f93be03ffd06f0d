/*
 * Client options, headers on the wire (docs/wire.md §1.1–1.3) and
 * s0_client_new_from_env() precedence.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_test.h"

#define SB_MIN "{\"id\":\"sb-1\"}"

static const s0t_request *one_get(s0_client *c)
{
	s0t_push_ok(R, 200, SB_MIN);
	s0_sandbox_info *sb = NULL;
	s0_error *e = NULL;
	int rc = s0_sandbox_get(c, "sb-1", &sb, &e);
	ck_assert_msg(rc == S0_OK, "%s", s0_error_message(e));
	s0_sandbox_info_free(sb);
	return s0t_responder_last(R);
}

static int new_client_rc(const s0_client_options *o, const char *want_reason)
{
	s0_client *c = (s0_client *)0x1;
	s0_error *e = NULL;
	int rc = s0_client_new(o, &c, &e);
	if (rc < 0) {
		ck_assert_ptr_eq(c, (s0_client *)0x1); /* untouched */
		ck_assert_int_eq(s0_error_code(e), rc);
		if (want_reason)
			ck_assert_str_eq(s0_error_reason(e), want_reason);
	} else {
		s0_client_free(c);
	}
	s0_error_free(e);
	return rc;
}

/* docs/wire.md §1.1: an empty or blank token sends no Authorization header. */
START_TEST(test_no_token_no_authorization)
{
	const char *tokens[] = {NULL, "", "   ", "\t"};
	for (size_t i = 0; i < sizeof tokens / sizeof tokens[0]; i++) {
		s0_client_options o = S0_CLIENT_OPTIONS_INIT;
		o.token = tokens[i];
		s0_client *c = ct_client(&o);
		const s0t_request *q = one_get(c);
		ck_assert_ptr_null(s0t_req_header(q, "Authorization"));
		s0_client_free(c);
	}
}
END_TEST

START_TEST(test_custom_headers)
{
	static const char *const extra[] = {"X-Extra: one", "X-Other:two", "X-Spaced:   three  ",
	                                    "Accept: application/vnd.test", NULL};
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	o.token = "eyJhbGciOi.jwt.token";
	o.user_agent = "my-agent/1.2";
	o.team_id = "team-42";
	o.headers = extra;
	s0_client *c = ct_client(&o);
	const s0t_request *q = one_get(c);
	ck_assert_str_eq(s0t_req_header(q, "Authorization"), "Bearer eyJhbGciOi.jwt.token");
	ck_assert_str_eq(s0t_req_header(q, "User-Agent"), "my-agent/1.2");
	ck_assert_uint_eq(s0t_req_header_count(q, "User-Agent"), 1);
	ck_assert_str_eq(s0t_req_header(q, "X-Team-ID"), "team-42");
	ck_assert_str_eq(s0t_req_header(q, "X-Extra"), "one");
	ck_assert_str_eq(s0t_req_header(q, "X-Other"), "two");
	ck_assert_str_eq(s0t_req_header(q, "X-Spaced"), "three");
	/* an extra header replaces the library's own of the same name */
	ck_assert_uint_eq(s0t_req_header_count(q, "Accept"), 1);
	ck_assert_str_eq(s0t_req_header(q, "Accept"), "application/vnd.test");
	s0_client_free(c);
	/* a blank team id is not sent; extra headers reach every endpoint */
	o.team_id = " ";
	o.user_agent = NULL;
	c = ct_client(&o);
	s0t_push_ok(R, 200, "{\"written\":true}");
	ck_assert_int_eq(s0_files_write(c, "sb-1", "/a", "x", 1, NULL), S0_OK);
	q = s0t_responder_last(R);
	ck_assert_ptr_null(s0t_req_header(q, "X-Team-ID"));
	ck_assert_str_eq(s0t_req_header(q, "X-Extra"), "one");
	ck_assert_str_eq(s0t_req_header(q, "User-Agent"), "libsandbox0/" S0_VERSION_STRING);
	ck_assert_str_eq(s0t_req_header(q, "Content-Type"), "application/octet-stream");
	s0_client_free(c);
}
END_TEST

/* docs/wire.md §1.1: a base URL may carry a path prefix; trailing slashes go. */
START_TEST(test_base_url_prefix)
{
	char url[128];
	snprintf(url, sizeof url, "%s/gateway/v2///", s0t_responder_url(R));
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	o.base_url = url;
	s0_client *c = ct_client(&o);
	char want[128];
	snprintf(want, sizeof want, "%s/gateway/v2", s0t_responder_url(R));
	ck_assert_str_eq(s0_client_base_url(c), want);
	const s0t_request *q = one_get(c);
	ck_assert_str_eq(q->path, "/gateway/v2/api/v1/sandboxes/sb-1");
	s0_client_free(c);
	ck_assert_str_eq(s0_client_base_url(C), s0t_responder_url(R));
}
END_TEST

START_TEST(test_options_validation)
{
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	o.version = 0;
	ck_assert_int_eq(new_client_rc(&o, "options_version"), S0_EINVAL);
	o.version = S0_CLIENT_OPTIONS_VERSION + 1;
	ck_assert_int_eq(new_client_rc(&o, "options_version"), S0_EINVAL);

	const char *bad_urls[] = {"ftp://example.com", "example.com", "http:/x", "http://",
	                          "https://", "https:///path", "file:///etc/passwd", " http://x"};
	for (size_t i = 0; i < sizeof bad_urls / sizeof bad_urls[0]; i++) {
		s0_client_options b = S0_CLIENT_OPTIONS_INIT;
		b.base_url = bad_urls[i];
		ck_assert_msg(new_client_rc(&b, "invalid_base_url") == S0_EINVAL, "%s", bad_urls[i]);
	}
	const char *good_urls[] = {"http://127.0.0.1:1", "https://api.sandbox0.ai",
	                           "HTTPS://API.EXAMPLE", "http://[::1]:8080/p", NULL, ""};
	for (size_t i = 0; i < sizeof good_urls / sizeof good_urls[0]; i++) {
		s0_client_options g = S0_CLIENT_OPTIONS_INIT;
		g.base_url = good_urls[i];
		ck_assert_msg(new_client_rc(&g, NULL) == S0_OK, "%s", good_urls[i]);
	}

	s0_client_options t = S0_CLIENT_OPTIONS_INIT;
	t.base_url = "http://127.0.0.1:1";
	t.connect_timeout_ms = -1;
	ck_assert_int_eq(new_client_rc(&t, "invalid_timeout"), S0_EINVAL);
	t.connect_timeout_ms = 0;
	t.request_timeout_ms = -5;
	ck_assert_int_eq(new_client_rc(&t, "invalid_timeout"), S0_EINVAL);
	t.request_timeout_ms = S0_TIMEOUT_INFINITE;
	ck_assert_int_eq(new_client_rc(&t, NULL), S0_OK);

	static const char *const no_colon[] = {"X-Bad", NULL};
	static const char *const empty_name[] = {": v", NULL};
	static const char *const crlf[] = {"X-A: b\r\nX-Injected: 1", NULL};
	static const char *const bad_name[] = {"X A: b", NULL};
	const char *const *bad_headers[] = {no_colon, empty_name, crlf, bad_name};
	for (size_t i = 0; i < sizeof bad_headers / sizeof bad_headers[0]; i++) {
		s0_client_options h = S0_CLIENT_OPTIONS_INIT;
		h.base_url = "http://127.0.0.1:1";
		h.headers = bad_headers[i];
		ck_assert_msg(new_client_rc(&h, "invalid_header") == S0_EINVAL, "case %zu", i);
	}
	s0_client_options inj = S0_CLIENT_OPTIONS_INIT;
	inj.base_url = "http://127.0.0.1:1";
	inj.token = "tok\r\nX-Injected: 1";
	ck_assert_int_eq(new_client_rc(&inj, NULL), S0_EINVAL);
	inj.token = NULL;
	inj.user_agent = "ua\n";
	ck_assert_int_eq(new_client_rc(&inj, NULL), S0_EINVAL);
	inj.user_agent = NULL;
	inj.team_id = "t\r1";
	ck_assert_int_eq(new_client_rc(&inj, NULL), S0_EINVAL);

	ck_assert_int_eq(s0_client_new(NULL, NULL, NULL), S0_EINVAL);
	s0_client_free(NULL);
	ck_assert_int_eq(s0_live_objects(), ct_live_start + 1);
}
END_TEST

START_TEST(test_options_init_and_defaults)
{
	s0_client_options o;
	memset(&o, 0x5a, sizeof o);
	ck_assert_int_eq(s0_client_options_init(&o, S0_CLIENT_OPTIONS_VERSION), S0_OK);
	ck_assert_uint_eq(o.version, S0_CLIENT_OPTIONS_VERSION);
	ck_assert_ptr_null(o.base_url);
	ck_assert_ptr_null(o.token);
	ck_assert_int_eq(o.request_timeout_ms, 0);
	ck_assert_ptr_null(o.clock);
	ck_assert_ptr_null(o.cancel);
	s0_client_options keep = o;
	ck_assert_int_eq(s0_client_options_init(&o, 99), S0_EINVAL);
	ck_assert_mem_eq(&o, &keep, sizeof o);
	ck_assert_int_eq(s0_client_options_init(NULL, S0_CLIENT_OPTIONS_VERSION), S0_EINVAL);

	/* NULL options: the official base URL and the real clock */
	s0_client *c = NULL;
	ck_assert_int_eq(s0_client_new(NULL, &c, NULL), S0_OK);
	ck_assert_str_eq(s0_client_base_url(c), S0_DEFAULT_BASE_URL);
	s0_clock clk;
	s0_client_clock(c, &clk);
	ck_assert_uint_eq(clk.version, S0_CLOCK_VERSION);
	ck_assert(clk.now_unix_ms != NULL);
	ck_assert_int_gt(clk.now_unix_ms(clk.ctx), 1600000000000LL);
	s0_client_free(c);

	/* the configured clock is copied */
	s0_manual_clock *mc = NULL;
	ck_assert_int_eq(s0_manual_clock_new(1000, 0, &mc, NULL), S0_OK);
	s0_clock mclk;
	s0_manual_clock_get(mc, &mclk);
	s0_client_options co = S0_CLIENT_OPTIONS_INIT;
	co.clock = &mclk;
	ck_assert_int_eq(s0_client_new(&co, &c, NULL), S0_OK);
	memset(&mclk, 0, sizeof mclk);
	s0_client_clock(c, &clk);
	ck_assert_int_eq(clk.now_unix_ms(clk.ctx), 1000);
	s0_client_free(c);
	s0_manual_clock_free(mc);
}
END_TEST

static s0_client *env_client(const s0_client_options *o)
{
	s0_client *c = NULL;
	s0_error *e = NULL;
	int rc = s0_client_new_from_env(o, &c, &e);
	ck_assert_msg(rc == S0_OK, "%s", s0_error_message(e));
	return c;
}

/* SANDBOX0_BASE_URL, then SANDBOX0_TOKEN before SANDBOX0_API_KEY; options win. */
START_TEST(test_from_env_precedence)
{
	/* each test runs in its own process (CK_FORK), so setenv is local */
	setenv("SANDBOX0_BASE_URL", s0t_responder_url(R), 1);
	setenv("SANDBOX0_TOKEN", "env-token", 1);
	setenv("SANDBOX0_API_KEY", "s0_env_key", 1);
	s0_client *c = env_client(NULL);
	ck_assert_str_eq(s0_client_base_url(c), s0t_responder_url(R));
	ck_assert_str_eq(s0t_req_header(one_get(c), "Authorization"), "Bearer env-token");
	s0_client_free(c);

	unsetenv("SANDBOX0_TOKEN");
	c = env_client(NULL);
	ck_assert_str_eq(s0t_req_header(one_get(c), "Authorization"), "Bearer s0_env_key");
	s0_client_free(c);

	setenv("SANDBOX0_TOKEN", "  ", 1); /* blank counts as unset */
	c = env_client(NULL);
	ck_assert_str_eq(s0t_req_header(one_get(c), "Authorization"), "Bearer s0_env_key");
	s0_client_free(c);

	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	o.token = "opt-token";
	c = env_client(&o);
	ck_assert_str_eq(s0t_req_header(one_get(c), "Authorization"), "Bearer opt-token");
	s0_client_free(c);

	unsetenv("SANDBOX0_API_KEY");
	unsetenv("SANDBOX0_TOKEN");
	c = env_client(NULL);
	ck_assert_ptr_null(s0t_req_header(one_get(c), "Authorization"));
	s0_client_free(c);

	/* the options' base URL beats the environment's */
	setenv("SANDBOX0_BASE_URL", "http://127.0.0.1:1/unreachable", 1);
	s0_client_options ob = S0_CLIENT_OPTIONS_INIT;
	ob.base_url = s0t_responder_url(R);
	c = env_client(&ob);
	ck_assert_str_eq(s0_client_base_url(c), s0t_responder_url(R));
	one_get(c);
	s0_client_free(c);

	/* neither: the official default */
	unsetenv("SANDBOX0_BASE_URL");
	c = env_client(NULL);
	ck_assert_str_eq(s0_client_base_url(c), S0_DEFAULT_BASE_URL);
	s0_client_free(c);
	setenv("SANDBOX0_BASE_URL", "", 1);
	c = env_client(NULL);
	ck_assert_str_eq(s0_client_base_url(c), S0_DEFAULT_BASE_URL);
	s0_client_free(c);

	/* a bad environment URL is reported like a bad option */
	setenv("SANDBOX0_BASE_URL", "ftp://nope", 1);
	s0_client *bad = NULL;
	s0_error *e = NULL;
	ck_assert_int_eq(s0_client_new_from_env(NULL, &bad, &e), S0_EINVAL);
	ck_assert_ptr_null(bad);
	s0_error_free(e);
	s0_client_options v = S0_CLIENT_OPTIONS_INIT;
	v.version = 7;
	ck_assert_int_eq(s0_client_new_from_env(&v, &bad, NULL), S0_EINVAL);
}
END_TEST

Suite *s0_client_options_suite(void)
{
	Suite *s = suite_create("client_options");
	TCase *tc = tcase_create("options");
	tcase_add_checked_fixture(tc, ct_setup, ct_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_no_token_no_authorization);
	tcase_add_test(tc, test_custom_headers);
	tcase_add_test(tc, test_base_url_prefix);
	tcase_add_test(tc, test_options_validation);
	tcase_add_test(tc, test_options_init_and_defaults);
	tcase_add_test(tc, test_from_env_precedence);
	suite_add_tcase(s, tc);
	return s;
}
