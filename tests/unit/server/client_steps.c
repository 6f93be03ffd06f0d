/* Steps of the client suites (client_steps.h). */
#include "client_steps.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server_test.h"

s0_server *cs_serve_keys(s0_local *local)
{
	return cs_serve_keys_on(local, 0);
}

s0_server *cs_serve_keys_on(s0_local *local, int port)
{
	static const s0_server_api_key keys[] = {{KEY_A, "team_a"}, {KEY_B, "team_b"}};
	s0_server_options o = S0_SERVER_OPTIONS_INIT;
	o.port = port;
	o.api_keys = keys;
	o.api_keys_len = 2;
	s0_server *srv = NULL;
	s0_error *err = NULL;
	int rc = s0_server_new(local, &o, &srv, &err);
	ck_assert_msg(rc == S0_OK, "s0_server_new: %s", err ? s0_error_message(err) : "?");
	return srv;
}

cs_served cs_sv;

void cs_served_setup(void)
{
	lf_open(&cs_sv.f, false);
	cs_sv.srv = cs_serve_keys(cs_sv.f.local);
	cs_sv.port = s0_server_port(cs_sv.srv);
}

void cs_served_teardown(void)
{
	s0_server_free(cs_sv.srv);
	cs_sv.srv = NULL;
	lf_close(&cs_sv.f);
}

s0_client *cs_client(s0_server *srv, const char *token, const char *team)
{
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d", s0_server_port(srv));
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	o.base_url = url;
	o.token = token;
	o.team_id = team;
	s0_client *c = NULL;
	ck_assert_int_eq(s0_client_new(&o, &c, NULL), S0_OK);
	return c;
}

char *cs_claim(s0_client *c, const char *tpl)
{
	s0_sandbox_info *info = NULL;
	s0_error *err = NULL;
	int rc = s0_sandbox_claim(c, tpl, NULL, NULL, &info, &err);
	ck_assert_msg(rc == S0_OK, "claim %s: %s", tpl, err ? s0_error_message(err) : "?");
	char *id = strdup(s0_sandbox_info_id(info));
	s0_sandbox_info_free(info);
	return id;
}

char *cs_context(s0_client *c, const char *sb, const char *request)
{
	char *json = NULL;
	ck_assert_int_eq(s0_context_create(c, sb, request, &json, NULL), S0_OK);
	cJSON *o = cJSON_Parse(json);
	char *id = strdup(cJSON_GetObjectItem(o, "id")->valuestring);
	cJSON_Delete(o);
	s0_free(json);
	return id;
}

cJSON *cs_next(s0_stream *st)
{
	char *m = NULL;
	s0_error *err = NULL;
	int rc = s0_stream_recv(st, 5000, &m, NULL, &err);
	ck_assert_msg(rc == S0_OK, "recv: %s", err ? s0_error_message(err) : "?");
	cJSON *o = cJSON_Parse(m);
	s0_free(m);
	ck_assert_ptr_nonnull(o);
	return o;
}

const char *cs_str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(o, k);
	return cJSON_IsString(v) ? v->valuestring : "";
}

void cs_expect_err(int rc, s0_error *err, int want, int status, const char *msg_part)
{
	ck_assert_int_eq(rc, want);
	ck_assert_int_eq(s0_error_http_status(err), status);
	ck_assert_msg(strstr(s0_error_message(err), msg_part), "message \"%s\" lacks \"%s\"",
	              s0_error_message(err), msg_part);
	s0_error_free(err);
}
