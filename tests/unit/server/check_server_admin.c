/* --enable-admin routes over a stub callback table. */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "server_test.h"

typedef struct admin_log {
	char name[64];
	int32_t mode;
	int64_t count, delay, advanced;
	int released, inspected;
	char sandbox[64];
} admin_log;

static stub st;
static admin_log al;

static int a_arm(void *ctx, const char *name, int32_t mode, int64_t count, int64_t delay,
                 s0_error **err)
{
	(void)ctx;
	if (!strcmp(name, "no_such_point"))
		return s0__error_set(err, S0_EINVAL, NULL, "unknown fault point %s", name);
	s0__strlcpy(al.name, name, sizeof al.name);
	al.mode = mode;
	al.count = count;
	al.delay = delay;
	return 0;
}

static int a_release(void *ctx, const char *name, s0_error **err)
{
	(void)ctx;
	(void)err;
	s0__strlcpy(al.name, name, sizeof al.name);
	al.released++;
	return 0;
}

static int a_clock(void *ctx, int64_t ms, int64_t *now, s0_error **err)
{
	(void)ctx;
	(void)err;
	al.advanced += ms;
	*now = 1000 + al.advanced;
	return 0;
}

static int a_inspect(void *ctx, const char *sandbox_id, char **json, s0_error **err)
{
	(void)ctx;
	(void)err;
	al.inspected++;
	s0__strlcpy(al.sandbox, sandbox_id ? sandbox_id : "", sizeof al.sandbox);
	*json = strdup("{\"capacity\":{\"cpu\":1}}");
	return 0;
}

static const s0__server_admin_ops ops = {NULL, a_arm, a_release, a_clock, a_inspect, NULL, NULL, NULL};

static s0_server *start(uint32_t flags)
{
	static const s0_server_api_key keys[] = {{KEY_A, "team_a"}};
	s0_server_options o = S0_SERVER_OPTIONS_INIT;
	o.api_keys = keys;
	o.api_keys_len = 1;
	o.flags = flags;
	s0__server_config cfg = {.opts = &o, .handler = stub_handler, .handler_ctx = &st,
	                         .admin = &ops};
	s0_server *s = NULL;
	ck_assert_int_eq(s0__server_new(&cfg, &s, NULL), 0);
	return s;
}

static void setup(void)
{
	stub_init(&st);
	memset(&al, 0, sizeof al);
}

static cJSON *call(s0_server *s, const char *method, const char *path, const char *key,
                   const char *body, long *status)
{
	th_resp r;
	th_simple(s0_server_port(s), method, path, key, body, &r);
	*status = r.status;
	cJSON *j = resp_json(&r);
	th_resp_free(&r);
	return j;
}

START_TEST(admin_is_off_by_default)
{
	s0_server *s = start(0);
	long status;
	cJSON *j = call(s, "POST", "/admin/v1/faults", KEY_A, "{\"name\":\"x\",\"mode\":\"fail\"}",
	                &status);
	/* not the admin: the request went to the ordinary handler (the router 404s it) */
	ck_assert_int_eq(status, 200);
	ck_assert_str_eq(s0__json_str0(j, "path"), "/admin/v1/faults");
	ck_assert_str_eq(al.name, "");
	cJSON_Delete(j);
	s0_server_free(s);
}
END_TEST

START_TEST(admin_routes_call_the_table)
{
	s0_server *s = start(S0_SERVER_ENABLE_ADMIN);
	long status;
	cJSON *j = call(s, "POST", "/admin/v1/faults", KEY_A,
	                "{\"name\":\"node_channel\",\"mode\":\"hold\",\"count\":2,\"delay_ms\":5}",
	                &status);
	ck_assert_int_eq(status, 200);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "success")));
	ck_assert_str_eq(al.name, "node_channel");
	ck_assert_int_eq(al.mode, 2);
	ck_assert_int_eq(al.count, 2);
	ck_assert_int_eq(al.delay, 5);
	cJSON_Delete(j);
	j = call(s, "POST", "/admin/v1/faults", KEY_A, "{\"name\":\"carrier\",\"mode\":4}", &status);
	ck_assert_int_eq(status, 200);
	ck_assert_int_eq(al.mode, 4);
	cJSON_Delete(j);
	j = call(s, "DELETE", "/admin/v1/faults?name=carrier", KEY_A, NULL, &status);
	ck_assert_int_eq(status, 200);
	ck_assert_int_eq(al.released, 1);
	cJSON_Delete(j);
	j = call(s, "DELETE", "/admin/v1/faults", KEY_A, "{\"name\":\"node_channel\"}", &status);
	ck_assert_int_eq(status, 200);
	ck_assert_str_eq(al.name, "node_channel");
	cJSON_Delete(j);
	j = call(s, "POST", "/admin/v1/clock", KEY_A, "{\"advance_ms\":1500}", &status);
	ck_assert_int_eq(status, 200);
	const cJSON *d = cJSON_GetObjectItem(j, "data");
	ck_assert_int_eq(s0__json_i64(d, "now_unix_ms", 0), 2500);
	cJSON_Delete(j);
	j = call(s, "GET", "/admin/v1/inspect?sandbox_id=sb1", KEY_A, NULL, &status);
	ck_assert_int_eq(status, 200);
	d = cJSON_GetObjectItem(j, "data");
	ck_assert_int_eq(s0__json_i64(cJSON_GetObjectItem(d, "capacity"), "cpu", 0), 1);
	ck_assert_str_eq(al.sandbox, "sb1");
	cJSON_Delete(j);
	ck_assert_int_eq(st.calls, 0);
	s0_server_free(s);
}
END_TEST

START_TEST(admin_rejects_bad_requests)
{
	s0_server *s = start(S0_SERVER_ENABLE_ADMIN);
	long status;
	cJSON *j = call(s, "POST", "/admin/v1/faults", NULL, "{}", &status);
	ck_assert_int_eq(status, 401);
	cJSON_Delete(j);
	j = call(s, "POST", "/admin/v1/faults", KEY_A, "{\"name\":\"x\",\"mode\":\"melt\"}", &status);
	ck_assert_int_eq(status, 400);
	ck_assert_str_eq(err_code(j), "bad_request");
	cJSON_Delete(j);
	j = call(s, "POST", "/admin/v1/faults", KEY_A, "not json", &status);
	ck_assert_int_eq(status, 400);
	cJSON_Delete(j);
	j = call(s, "POST", "/admin/v1/faults", KEY_A, "{\"name\":\"no_such_point\",\"mode\":1}",
	         &status);
	ck_assert_int_eq(status, 400);
	ck_assert_str_eq(err_code(j), "bad_request");
	cJSON_Delete(j);
	j = call(s, "POST", "/admin/v1/clock", KEY_A, "{\"advance_ms\":-1}", &status);
	ck_assert_int_eq(status, 400);
	cJSON_Delete(j);
	j = call(s, "GET", "/admin/v1/clock", KEY_A, NULL, &status);
	ck_assert_int_eq(status, 405);
	ck_assert_str_eq(err_code(j), "method_not_allowed");
	cJSON_Delete(j);
	j = call(s, "GET", "/admin/v1/other", KEY_A, NULL, &status);
	ck_assert_int_eq(status, 404);
	cJSON_Delete(j);
	s0_server_free(s);
}
END_TEST

Suite *s0_server_admin_suite(void)
{
	Suite *s = suite_create("server_admin");
	TCase *tc = tcase_create("admin");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, admin_is_off_by_default);
	tcase_add_test(tc, admin_routes_call_the_table);
	tcase_add_test(tc, admin_rejects_bad_requests);
	suite_add_tcase(s, tc);
	return s;
}
