/*
 * Teams over `s0 serve` through this library's HTTP client: API keys made
 * in the metadata store (sandbox0/keys.h) separate tenants, the admin
 * credential manages keys and is no team key, a revoked key answers 401
 * at once, an X-Team-ID of another team answers 401 "not a member of
 * selected team", and bad input gets clear errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "client_steps.h"
#include "local_fixture.h"
#include "sandbox0/sandbox0.h"
#include "sandbox0/server.h"
#include "server_test.h"

#define ADMIN "s0admin_credential_for_tests_0001"

static lf f;
static s0_server *srv;

static void setup(void)
{
	lf_open(&f, false);
	s0_server_options o = S0_SERVER_OPTIONS_INIT;
	o.admin_token = ADMIN;
	s0_error *err = NULL;
	int rc = s0_server_new(f.local, &o, &srv, &err);
	ck_assert_msg(rc == S0_OK, "s0_server_new: %s", err ? s0_error_message(err) : "?");
}

static void teardown(void)
{
	s0_server_free(srv);
	srv = NULL;
	lf_close(&f);
}

/* A new key of team (through the backend); *id_out (nullable) its id. */
static char *make_key(const char *team, char **id_out)
{
	char *json = NULL;
	s0_error *err = NULL;
	int rc = s0_local_api_key_create(f.local, team, NULL, &json, &err);
	ck_assert_msg(rc == S0_OK, "key create: %s", err ? s0_error_message(err) : "?");
	cJSON *o = cJSON_Parse(json);
	char *key = strdup(s0__json_str0(o, "key"));
	ck_assert_str_eq(s0__json_str0(o, "team_id"), team);
	if (id_out)
		*id_out = strdup(s0__json_str0(o, "id"));
	cJSON_Delete(o);
	s0_free(json);
	return key;
}

START_TEST(two_teams_are_isolated)
{
	char *ka = make_key("alpha", NULL), *kb = make_key("beta", NULL);
	s0_client *a = cs_client(srv, ka, NULL), *b = cs_client(srv, kb, NULL);
	char *sa = cs_claim(a, "default"), *sb = cs_claim(b, "default");
	s0_sandbox_info *info = NULL;
	s0_error *err = NULL;
	/* each sees its own, the other's answers 404 */
	ck_assert_int_eq(s0_sandbox_get(a, sa, &info, NULL), S0_OK);
	ck_assert_str_eq(s0_sandbox_info_team_id(info), "alpha");
	s0_sandbox_info_free(info);
	EXPECT(s0_sandbox_get(b, sa, &info, &err), S0_ENOTFOUND, 404, "not found");
	EXPECT(s0_sandbox_get(a, sb, &info, &err), S0_ENOTFOUND, 404, "not found");
	EXPECT(s0_sandbox_delete(b, sa, &err), S0_ENOTFOUND, 404, "not found");
	ck_assert_int_eq(s0_files_write(a, sa, "/workspace/a.txt", "A", 1, NULL), S0_OK);
	void *data = NULL;
	size_t len = 0;
	EXPECT(s0_files_read(b, sa, "/workspace/a.txt", &data, &len, &err), S0_ENOTFOUND, 404,
	       "not found");
	s0_snapshot_info *snap = NULL;
	ck_assert_int_eq(s0_snapshot_create(a, sa, "s", NULL, 0, &snap, NULL), S0_OK);
	s0_snapshot_info *got = NULL;
	EXPECT(s0_snapshot_get(b, s0_snapshot_info_id(snap), &got, &err), S0_ENOTFOUND, 404,
	       "not found");
	s0_snapshot_info_free(snap);
	/* fork, contexts and sessions under another team's sandbox: 404 */
	EXPECT(s0_sandbox_fork(b, sa, NULL, &info, &err), S0_ENOTFOUND, 404, "not found");
	char *ctx = NULL;
	ck_assert_int_eq(s0_context_create(a, sa, "{\"type\":\"repl\"}", &ctx, NULL), S0_OK);
	cJSON *cj = cJSON_Parse(ctx);
	char *ctx_id = strdup(s0__json_str0(cj, "id"));
	cJSON_Delete(cj);
	s0_free(ctx);
	EXPECT(s0_context_get(b, sa, ctx_id, &ctx, &err), S0_ENOTFOUND, 404, "not found");
	EXPECT(s0_context_exec(b, sa, ctx_id, "echo hi", &ctx, &err), S0_ENOTFOUND, 404,
	       "not found");
	EXPECT(s0_context_create(b, sa, "{\"type\":\"repl\"}", &ctx, &err), S0_ENOTFOUND, 404,
	       "not found");
	EXPECT(s0_runtime_call(b, "GET", sa, "/sessions", NULL, NULL, NULL, &ctx, &err),
	       S0_ENOTFOUND, 404, "not found");
	ck_assert_int_eq(s0_context_get(a, sa, ctx_id, &ctx, NULL), S0_OK);
	s0_free(ctx);
	free(ctx_id);
	s0_sandbox_page *page = NULL;
	ck_assert_int_eq(s0_sandbox_list(b, NULL, &page, NULL), S0_OK);
	ck_assert_uint_eq(s0_sandbox_page_length(page), 1);
	ck_assert_str_eq(s0_sandbox_info_id(s0_sandbox_page_at(page, 0)), sb);
	s0_sandbox_page_free(page);

	/* a key with another team's X-Team-ID: 401, whatever the resource */
	s0_client *a_as_b = cs_client(srv, ka, "beta");
	EXPECT(s0_sandbox_get(a_as_b, sb, &info, &err), S0_EAUTH, 401,
	       "not a member of selected team");
	s0_client *a_as_a = cs_client(srv, ka, "alpha");
	ck_assert_int_eq(s0_sandbox_get(a_as_a, sa, &info, NULL), S0_OK);
	s0_sandbox_info_free(info);
	s0_client_free(a_as_a);
	s0_client_free(a_as_b);

	ck_assert_int_eq(s0_sandbox_delete(a, sa, NULL), S0_OK);
	ck_assert_int_eq(s0_sandbox_delete(b, sb, NULL), S0_OK);
	s0_client_free(a);
	s0_client_free(b);
	free(sa);
	free(sb);
	free(ka);
	free(kb);
}
END_TEST

START_TEST(admin_endpoint_manages_keys)
{
	s0_client *admin = cs_client(srv, ADMIN, NULL);
	char *json = NULL;
	s0_error *err = NULL;
	ck_assert_int_eq(s0_client_admin_request(admin, "POST", "/admin/v1/api-keys",
	                                         "{\"team_id\":\"gamma\",\"name\":\"ci\"}", &json,
	                                         &err),
	                 S0_OK);
	cJSON *o = cJSON_Parse(json);
	s0_free(json);
	char *key = strdup(s0__json_str0(o, "key")), *id = strdup(s0__json_str0(o, "id"));
	ck_assert_str_eq(s0__json_str0(o, "name"), "ci");
	ck_assert_int_eq(strncmp(key, "s0_", 3), 0);
	ck_assert_uint_eq(strlen(key), 43);
	cJSON_Delete(o);

	/* the key works at once on the running server */
	s0_client *g = cs_client(srv, key, NULL);
	char *sg = cs_claim(g, "default");

	/* listed without its secret */
	ck_assert_int_eq(s0_client_admin_request(admin, "GET", "/admin/v1/api-keys?team_id=gamma",
	                                         NULL, &json, NULL),
	                 S0_OK);
	ck_assert_ptr_null(strstr(json, key));
	o = cJSON_Parse(json);
	s0_free(json);
	ck_assert_int_eq(s0__json_i64(o, "count", -1), 1);
	const cJSON *k0 = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "api_keys"), 0);
	ck_assert_str_eq(s0__json_str0(k0, "id"), id);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(k0, "is_active")));
	cJSON_Delete(o);

	/* a team key is no admin credential, the admin credential is no team key */
	s0_client *as_admin = cs_client(srv, key, NULL);
	EXPECT(s0_client_admin_request(as_admin, "GET", "/admin/v1/api-keys", NULL, &json, &err), S0_EAUTH, 401, "admin credential");
	s0_client_free(as_admin);
	s0_sandbox_page *page = NULL;
	EXPECT(s0_sandbox_list(admin, NULL, &page, &err), S0_EAUTH, 401, "invalid token");

	/* revoked: 401 from the next request on */
	char *path = NULL;
	ck_assert_int_ne(asprintf(&path, "/admin/v1/api-keys/%s", id), -1);
	ck_assert_int_eq(s0_client_admin_request(admin, "DELETE", path, NULL, &json, NULL), S0_OK);
	ck_assert_ptr_nonnull(strstr(json, "\"is_active\":false"));
	s0_free(json);
	s0_sandbox_info *info = NULL;
	EXPECT(s0_sandbox_get(g, sg, &info, &err), S0_EAUTH, 401, "invalid token");
	/* revoking again keeps it revoked; an unknown id is 404 */
	ck_assert_int_eq(s0_client_admin_request(admin, "DELETE", path, NULL, NULL, NULL), S0_OK);
	EXPECT(s0_client_admin_request(admin, "DELETE", "/admin/v1/api-keys/key_nope", NULL, NULL,
	                               &err), S0_ENOTFOUND, 404, "not found");
	free(path);
	s0_client_free(g);
	s0_client_free(admin);
	free(sg);
	free(key);
	free(id);
}
END_TEST

START_TEST(key_bad_input)
{
	char *json = NULL;
	s0_error *err = NULL;
	char huge[400];
	memset(huge, 'n', sizeof huge - 1);
	huge[sizeof huge - 1] = 0;
	/* through the backend */
	EXPECT(s0_local_api_key_create(f.local, "", NULL, &json, &err), S0_EINVAL, 0, "team");
	EXPECT(s0_local_api_key_create(f.local, "has space", NULL, &json, &err), S0_EINVAL, 0,
	       "team");
	EXPECT(s0_local_api_key_create(f.local, huge, NULL, &json, &err), S0_EINVAL, 0, "team");
	EXPECT(s0_local_api_key_create(f.local, "t", huge, &json, &err), S0_EINVAL, 0,
	       "name");
	EXPECT(s0_local_api_key_create(f.local, "t", "bad\nname", &json, &err), S0_EINVAL, 0,
	       "name");
	EXPECT(s0_local_api_key_revoke(f.local, "key_unknown", NULL, &err), S0_ENOTFOUND, 0,
	       "not found");
	EXPECT(s0_local_api_key_revoke(f.local, "", NULL, &err), S0_ENOTFOUND, 0, "not found");
	ck_assert_int_eq(s0_local_api_key_list(f.local, NULL, &json, NULL), S0_OK);
	ck_assert_str_eq(json, "{\"api_keys\":[],\"count\":0}"); /* nothing was stored */
	s0_free(json);

	/* through the admin endpoint */
	s0_client *admin = cs_client(srv, ADMIN, NULL);
	EXPECT(s0_client_admin_request(admin, "POST", "/admin/v1/api-keys", "{\"team_id\":\"\"}",
	                               &json, &err), S0_EINVAL, 400, "team");
	EXPECT(s0_client_admin_request(admin, "POST", "/admin/v1/api-keys", "{\"name\":\"x\"}",
	                               &json, &err), S0_EINVAL, 400, "team_id");
	/* an ambiguous team is refused like every other body's duplicated key */
	EXPECT(s0_client_admin_request(admin, "POST", "/admin/v1/api-keys",
	                               "{\"team_id\":\"t\",\"team_id\":\"u\"}", &json, &err),
	       S0_EINVAL, 400, "duplicate key");
	char *body = NULL;
	ck_assert_int_ne(asprintf(&body, "{\"team_id\":\"t\",\"name\":\"%s\"}", huge), -1);
	EXPECT(s0_client_admin_request(admin, "POST", "/admin/v1/api-keys", body, &json, &err),
	       S0_EINVAL, 400, "name");
	free(body);
	/* other admin routes take team keys (s0 serve --enable-admin), not the credential */
	EXPECT(s0_client_admin_request(admin, "GET", "/admin/v1/nothing", NULL, &json, &err),
	       S0_EAUTH, 401, "invalid token");
	EXPECT(s0_client_admin_request(admin, "PUT", "/admin/v1/api-keys", NULL, &json, &err),
	       S0_EINVAL, 0, "method");
	s0_client_free(admin);

	/* an admin credential that is one of the keys, or too short, is refused */
	s0_server_options o = S0_SERVER_OPTIONS_INIT;
	static const s0_server_api_key keys[] = {{KEY_A, "team_a"}};
	o.api_keys = keys;
	o.api_keys_len = 1;
	o.admin_token = KEY_A;
	s0_server *s2 = NULL;
	EXPECT(s0_server_new(f.local, &o, &s2, &err), S0_EINVAL, 0, "API keys");
	o.admin_token = "short";
	EXPECT(s0_server_new(f.local, &o, &s2, &err), S0_EINVAL, 0, "admin_token");
	/* a version 1 options struct (before admin_token) still starts a server */
	s0_server_options v1;
	ck_assert_int_eq(s0_server_options_init(&v1, 1), S0_OK);
	ck_assert_int_eq(v1.version, 1);
	ck_assert_int_eq(s0_server_new(f.local, &v1, &s2, NULL), S0_OK);
	s0_server_free(s2);
}
END_TEST

Suite *s0_server_teams_suite(void)
{
	Suite *s = suite_create("server_teams");
	TCase *tc = tcase_create("teams");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, two_teams_are_isolated);
	tcase_add_test(tc, admin_endpoint_manages_keys);
	tcase_add_test(tc, key_bad_input);
	suite_add_tcase(s, tc);
	return s;
}
