/*
 * `s0 serve` end to end: s0_server_new over a real s0_local, used by this
 * library's own HTTP client and by raw HTTP; parity with the in-process
 * client; team isolation by API key; the admin routes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "common/json.h"
#include "local/local_internal.h"
#include "local_fixture.h"
#include "sandbox0/sandbox0.h"
#include "sandbox0/server.h"
#include "server_test.h"

#define KEY_L "s0_local_team_key_000111"

static lf f;
static s0_server *srv;

static void setup(void)
{
	lf_open(&f, false);
}

static void teardown(void)
{
	s0_server_free(srv);
	srv = NULL;
	lf_close(&f);
}

static void start(uint32_t flags)
{
	static const s0_server_api_key keys[] = {
		{KEY_A, "team_a"}, {KEY_B, "team_b"}, {KEY_L, "team_local"}};
	s0_server_options o = S0_SERVER_OPTIONS_INIT;
	o.api_keys = keys;
	o.api_keys_len = 3;
	o.flags = flags;
	s0_error *err = NULL;
	int rc = s0_server_new(f.local, &o, &srv, &err);
	ck_assert_msg(rc == S0_OK, "s0_server_new: %s", err ? s0_error_message(err) : "?");
}

static s0_client *http_client(const char *key)
{
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d", s0_server_port(srv));
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	o.base_url = url;
	o.token = key;
	s0_client *c = NULL;
	ck_assert_int_eq(s0_client_new(&o, &c, NULL), S0_OK);
	return c;
}

static long raw_status(const char *method, const char *path, const char *key, const char *body,
                       cJSON **json)
{
	th_resp r;
	th_simple(s0_server_port(srv), method, path, key, body, &r);
	long st = r.status;
	if (json)
		*json = resp_json(&r);
	th_resp_free(&r);
	return st;
}

START_TEST(lifecycle_over_http)
{
	start(0);
	cJSON *j = NULL;
	ck_assert_int_eq(raw_status("GET", "/healthz", NULL, NULL, &j), 200);
	ck_assert_str_eq(s0__json_str0(cJSON_GetObjectItem(j, "data"), "status"), "healthy");
	cJSON_Delete(j);
	ck_assert_int_eq(raw_status("GET", "/metadata", NULL, NULL, NULL), 200);
	th_resp hr; /* HEAD: GET's status and headers, no body (RFC 9110 §9.3.2) */
	th_simple(s0_server_port(srv), "HEAD", "/healthz", NULL, NULL, &hr);
	ck_assert_int_eq(hr.status, 200);
	ck_assert_uint_eq(hr.body_len, 0);
	th_resp_free(&hr);
	ck_assert_int_eq(raw_status("GET", "/api/v1/sandboxes", NULL, NULL, NULL), 401);
	ck_assert_int_eq(raw_status("GET", "/admin/v1/inspect", KEY_A, NULL, NULL), 404);
	s0_client *a = http_client(KEY_A), *b = http_client(KEY_B);
	s0_sandbox_info *info = NULL;
	s0_error *err = NULL;
	int rc = s0_sandbox_claim(a, "default", NULL, NULL, &info, &err);
	ck_assert_msg(rc == S0_OK, "claim: %s", err ? s0_error_message(err) : "?");
	char *id = strdup(s0_sandbox_info_id(info));
	s0_sandbox_info_free(info);
	ck_assert_int_eq(s0_files_write(a, id, "/workspace/x.txt", "data", 4, NULL), S0_OK);
	ck_assert_int_eq(s0_sandbox_pause_and_wait(a, id, NULL, &info, NULL), S0_OK);
	ck_assert(s0_sandbox_info_paused(info));
	ck_assert_str_eq(s0_sandbox_info_runtime_id(info), "");
	s0_sandbox_info_free(info);
	ck_assert_int_eq(s0_sandbox_resume_and_wait(a, id, NULL, &info, NULL), S0_OK);
	ck_assert_int_eq(s0_sandbox_info_status(info), S0_STATUS_RUNNING);
	s0_sandbox_info_free(info);
	void *data = NULL;
	size_t len = 0;
	ck_assert_int_eq(s0_files_read(a, id, "/workspace/x.txt", &data, &len, NULL), S0_OK);
	ck_assert_uint_eq(len, 4);
	ck_assert_mem_eq(data, "data", 4);
	s0_free(data);
	/* another team's key sees nothing */
	ck_assert_int_eq(s0_sandbox_get(b, id, &info, &err), S0_ENOTFOUND);
	ck_assert_int_eq(s0_error_http_status(err), 404);
	s0_error_free(err);
	err = NULL;
	ck_assert_int_eq(s0_sandbox_delete(b, id, NULL), S0_ENOTFOUND);
	ck_assert_int_eq(s0_sandbox_delete(a, id, NULL), S0_OK);
	s0_client *bad = http_client("s0_unknown_key_zzzzzzz");
	ck_assert_int_eq(s0_sandbox_get(bad, id, &info, &err), S0_EAUTH);
	ck_assert_str_eq(s0_error_wire_code(err), "unauthorized");
	s0_error_free(err);
	s0_client_free(bad);
	s0_client_free(a);
	s0_client_free(b);
	free(id);
}
END_TEST

START_TEST(http_and_in_process_clients_agree)
{
	start(0);
	s0_client *h = http_client(KEY_L), *l = NULL;
	ck_assert_int_eq(s0_client_new_local(f.local, NULL, &l, NULL), S0_OK);
	s0_sandbox_info *x = NULL, *y = NULL;
	ck_assert_int_eq(s0_sandbox_claim(l, "default", NULL, NULL, &x, NULL), S0_OK);
	const char *id = s0_sandbox_info_id(x);
	ck_assert_int_eq(s0_sandbox_get(h, id, &y, NULL), S0_OK);
	s0_sandbox_info *z = NULL;
	ck_assert_int_eq(s0_sandbox_get(l, id, &z, NULL), S0_OK);
	ck_assert_str_eq(s0_sandbox_info_json(y), s0_sandbox_info_json(z));
	s0_sandbox_info_free(x);
	s0_sandbox_info_free(y);
	s0_sandbox_info_free(z);
	s0_client_free(h);
	s0_client_free(l);
}
END_TEST

/* The router's duplicate-key check holds over HTTP as in process. */
START_TEST(duplicate_keys_refused_over_http)
{
	start(0);
	cJSON *j = NULL;
	ck_assert_int_eq(raw_status("POST", "/api/v1/sandboxes", KEY_A,
	                            "{\"template\":\"default\",\"config\":{\"ttl\":60,"
	                            "\"ttl\":0}}",
	                            &j),
	                 400);
	ck_assert_str_eq(err_code(j), "bad_request");
	ck_assert_str_eq(err_message(j), "invalid request: duplicate key \"ttl\" in request body");
	cJSON_Delete(j);
	ck_assert_int_eq(raw_status("GET", "/api/v1/sandboxes", KEY_A, NULL, &j), 200);
	ck_assert_int_eq(s0__json_i64(cJSON_GetObjectItem(j, "data"), "count", -1), 0);
	cJSON_Delete(j);
}
END_TEST

/* A misspelt member of a process-API body is 400 invalid_request naming it
 * (docs/wire.md §8), over HTTP as in process; nothing is created or delivered. */
START_TEST(unknown_process_fields_refused_over_http)
{
	start(0);
	s0_client *a = http_client(KEY_A);
	s0_sandbox_info *info = NULL;
	ck_assert_int_eq(s0_sandbox_claim(a, "default", NULL, NULL, &info, NULL), S0_OK);
	char base[128], path[256];
	snprintf(base, sizeof base, "/api/v1/sandboxes/%s", s0_sandbox_info_id(info));
	s0_sandbox_info_free(info);
	static const char *const bad[][3] = {
		{"/contexts", "{\"type\":\"repl\",\"tll_sec\":5}", "unknown field \"tll_sec\""},
		{"/contexts", "{\"type\":\"cmd\",\"cmd\":{\"comand\":[\"ls\"]}}",
		 "unknown field \"cmd.comand\""},
		{"/sessions", "{\"command\":[\"ls\"],\"lifecyle\":{}}", "unknown field \"lifecyle\""},
		{"/sessions", "{\"command\":[\"ls\"],\"lifecycle\":{\"restart\":{\"polcy\":\"always\"}}}",
		 "unknown field \"lifecycle.restart.polcy\""},
	};
	cJSON *j = NULL;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(path, sizeof path, "%s%s", base, bad[i][0]);
		ck_assert_int_eq(raw_status("POST", path, KEY_A, bad[i][1], &j), 400);
		ck_assert_str_eq(err_code(j), "invalid_request");
		ck_assert_str_eq(err_message(j), bad[i][2]);
		cJSON_Delete(j);
	}
	snprintf(path, sizeof path, "%s/contexts", base);
	ck_assert_int_eq(raw_status("GET", path, KEY_A, NULL, &j), 200);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "data"),
	                                                        "contexts")),
	                 0);
	cJSON_Delete(j);
	/* a context: restart takes no body member */
	ck_assert_int_eq(raw_status("POST", path, KEY_A, "{\"type\":\"repl\"}", &j), 201);
	char ctx[64];
	snprintf(ctx, sizeof ctx, "%s", s0__json_str0(cJSON_GetObjectItem(j, "data"), "id"));
	cJSON_Delete(j);
	snprintf(path, sizeof path, "%s/contexts/%s/restart", base, ctx);
	ck_assert_int_eq(raw_status("POST", path, KEY_A, "{\"force\":true}", &j), 400);
	ck_assert_str_eq(err_message(j), "unknown field \"force\"");
	cJSON_Delete(j);
	ck_assert_int_eq(raw_status("POST", path, KEY_A, "{}", NULL), 200);
	ck_assert_int_eq(raw_status("POST", path, KEY_A, NULL, NULL), 200);
	snprintf(path, sizeof path, "%s/contexts/%s/exec", base, ctx);
	ck_assert_int_eq(raw_status("POST", path, KEY_A, "{\"dat\":\"echo hi\"}", &j), 400);
	ck_assert_str_eq(err_message(j), "unknown field \"dat\"");
	cJSON_Delete(j);
	/* a session: the report's input with "data" for "data_base64" */
	snprintf(path, sizeof path, "%s/sessions", base);
	ck_assert_int_eq(raw_status("POST", path, KEY_A, "{\"command\":[\"sh\",\"-c\",\"read X\"]}",
	                            &j),
	                 201);
	char ses[64];
	snprintf(ses, sizeof ses, "%s", s0__json_str0(cJSON_GetObjectItem(j, "data"), "id"));
	cJSON_Delete(j);
	snprintf(path, sizeof path, "%s/sessions/%s/inputs", base, ses);
	ck_assert_int_eq(raw_status("POST", path, KEY_A, "{\"input_id\":\"d1\",\"data\":\"hello\\n\"}",
	                            &j),
	                 400);
	ck_assert_str_eq(err_code(j), "invalid_request");
	ck_assert_str_eq(err_message(j), "unknown field \"data\"");
	cJSON_Delete(j);
	snprintf(path, sizeof path, "%s/sessions/%s", base, ses);
	ck_assert_int_eq(raw_status("GET", path, KEY_A, NULL, &j), 200);
	ck_assert_str_eq(s0__json_str0(cJSON_GetObjectItem(j, "data"), "phase"), "running");
	cJSON_Delete(j);
	s0_client_free(a);
}
END_TEST

START_TEST(admin_routes_reach_the_backend)
{
	start(S0_SERVER_ENABLE_ADMIN);
	cJSON *j = NULL;
	ck_assert_int_eq(raw_status("POST", "/admin/v1/clock", KEY_A, "{\"advance_ms\":1000}", &j),
	                 200);
	ck_assert_int_eq(s0__json_i64(cJSON_GetObjectItem(j, "data"), "now_unix_ms", 0),
	                 1767225601000LL);
	cJSON_Delete(j);
	ck_assert_int_eq(raw_status("GET", "/admin/v1/inspect", KEY_A, NULL, &j), 200);
	ck_assert(cJSON_IsObject(cJSON_GetObjectItem(j, "data")));
	cJSON_Delete(j);
	ck_assert_int_eq(raw_status("POST", "/admin/v1/faults", KEY_A,
	                            "{\"name\":\"object_store\",\"mode\":\"explode\"}", NULL),
	                 400);
	ck_assert_int_eq(raw_status("POST", "/admin/v1/faults", KEY_A,
	                            "{\"name\":\"object_store\",\"mode\":\"fail\",\"count\":1}", NULL),
	                 200);
	ck_assert_int_eq(raw_status("DELETE", "/admin/v1/faults?name=object_store", KEY_A, NULL,
	                            NULL),
	                 200);
	/* a name not in the table of fault points: 400 naming it, nothing armed */
	ck_assert_int_eq(raw_status("POST", "/admin/v1/faults", KEY_A,
	                            "{\"name\":\"object_stor@after-seal\",\"mode\":\"fail\"}", &j),
	                 400);
	ck_assert_str_eq(err_code(j), "bad_request");
	ck_assert_ptr_nonnull(strstr(err_message(j), "\"object_stor\""));
	cJSON_Delete(j);
	ck_assert_int_eq(raw_status("POST", "/admin/v1/faults", KEY_A,
	                            "{\"name\":\"object_store@after-sael\",\"mode\":\"fail\"}", &j),
	                 400);
	ck_assert_ptr_nonnull(strstr(err_message(j), "\"after-sael\""));
	cJSON_Delete(j);
	ck_assert_int_eq(raw_status("GET", "/admin/v1/inspect", KEY_A, NULL, &j), 200);
	ck_assert(!cJSON_GetArraySize(
	    cJSON_GetObjectItem(cJSON_GetObjectItem(j, "data"), "faults")));
	cJSON_Delete(j);
	ck_assert_int_eq(raw_status("GET", "/admin/v1/inspect", NULL, NULL, NULL), 401);
}
END_TEST

typedef struct reader {
	int port;
	char path[256];
	long status;
	char body[64];
	pthread_t t;
} reader;

static void *read_file(void *arg)
{
	reader *r = arg;
	th_resp resp;
	th_simple(r->port, "GET", r->path, KEY_A, NULL, &resp);
	r->status = resp.status;
	s0__strlcpy(r->body, resp.body ? resp.body : "", sizeof r->body);
	th_resp_free(&resp);
	return NULL;
}

/* docs/decisions.md "Auto-resume on access": many requests waiting for one wake
 * hold no shared thread; /healthz and GETs answer promptly meanwhile. */
START_TEST(waking_requests_do_not_block_the_server)
{
	enum { N = 40 };
	start(0);
	s0_client *a = http_client(KEY_A);
	s0_sandbox_info *info = NULL;
	ck_assert_int_eq(s0_sandbox_claim(a, "default", NULL, NULL, &info, NULL), S0_OK);
	char *id = strdup(s0_sandbox_info_id(info));
	s0_sandbox_info_free(info);
	ck_assert_int_eq(s0_files_write(a, id, "/workspace/w.txt", "awake", 5, NULL), S0_OK);
	ck_assert_int_eq(s0_sandbox_pause_and_wait(a, id, NULL, &info, NULL), S0_OK);
	s0_sandbox_info_free(info);
	/* the wake stalls in placement until the manual clock moves 10 s */
	ck_assert_int_eq(s0_local_fault_arm(f.local, "carrier", S0_FAULT_DELAY, 0, 10000, NULL),
	                 S0_OK);
	reader rd[N];
	for (int i = 0; i < N; i++) {
		rd[i] = (reader){.port = s0_server_port(srv)};
		snprintf(rd[i].path, sizeof rd[i].path,
		         "/api/v1/sandboxes/%s/files?path=/workspace/w.txt", id);
		pthread_create(&rd[i].t, NULL, read_file, &rd[i]);
	}
	usleep(300000);
	char get[160];
	snprintf(get, sizeof get, "/api/v1/sandboxes/%s", id);
	for (int k = 0; k < 3; k++) {
		th_resp r;
		th_simple(s0_server_port(srv), "GET", "/healthz", NULL, NULL, &r);
		ck_assert_int_eq(r.status, 200);
		ck_assert_msg(r.seconds < 1.0, "healthz took %.3f s", r.seconds);
		th_resp_free(&r);
		th_simple(s0_server_port(srv), "GET", get, KEY_A, NULL, &r);
		ck_assert_int_eq(r.status, 200);
		ck_assert_msg(r.seconds < 1.0, "GET took %.3f s", r.seconds);
		th_resp_free(&r);
	}
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(rd[i].status, 0); /* still waiting */
	ck_assert_int_eq(s0_local_clock_advance(f.local, 10000, NULL), S0_OK);
	s0_local_fault_release(f.local, "carrier", NULL);
	for (int i = 0; i < N; i++) {
		pthread_join(rd[i].t, NULL);
		ck_assert_int_eq(rd[i].status, 200);
		ck_assert_str_eq(rd[i].body, "awake");
	}
	s0_client_free(a);
	free(id);
}
END_TEST

/* /healthz names the runtime: with "auto" where gvisor cannot run (runsc
 * made missing through S0_RUNSC), sim, requested "auto", and the reason. */
START_TEST(healthz_says_why_auto_chose_sim)
{
	lf_close(&f);
	setenv("S0_RUNSC", "/nonexistent/runsc", 1);
	f.dir = s0_test_tmpdir("srv-auto");
	ck_assert_ptr_nonnull(f.dir);
	s0_local_options lo = S0_LOCAL_OPTIONS_INIT;
	lo.manual_clock = 1;
	lo.runtime = "auto";
	s0_error *err = NULL;
	int rc = s0_local_open(f.dir, &lo, &f.local, &err);
	unsetenv("S0_RUNSC");
	ck_assert_msg(rc == S0_OK, "open auto: %s", err ? s0_error_message(err) : "?");
	f.engine = s0__local_engine(f.local);
	start(0);
	cJSON *j = NULL;
	ck_assert_int_eq(raw_status("GET", "/healthz", NULL, NULL, &j), 200);
	const cJSON *rt = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "data"), "runtime");
	ck_assert_str_eq(s0__json_str0(rt, "name"), "sim");
	ck_assert_str_eq(s0__json_str0(rt, "requested"), "auto");
	const char *why = s0__json_str0(rt, "reason");
	ck_assert_msg(!strncmp(why, "gvisor: ", 8) &&
	                  strstr(why, geteuid() == 0 ? "S0_RUNSC=/nonexistent/runsc" : "root"),
	              "reason: %s", why);
	cJSON_Delete(j);
	/* an explicit runtime has no reason */
	s0_server_free(srv);
	srv = NULL;
	lf_close(&f);
	lf_open(&f, false);
	start(0);
	ck_assert_int_eq(raw_status("GET", "/healthz", NULL, NULL, &j), 200);
	rt = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "data"), "runtime");
	ck_assert_str_eq(s0__json_str0(rt, "requested"), "sim");
	ck_assert_ptr_null(cJSON_GetObjectItem(rt, "reason"));
	cJSON_Delete(j);
}
END_TEST

Suite *s0_server_local_suite(void)
{
	Suite *s = suite_create("server_local");
	TCase *tc = tcase_create("local");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, lifecycle_over_http);
	tcase_add_test(tc, http_and_in_process_clients_agree);
	tcase_add_test(tc, duplicate_keys_refused_over_http);
	tcase_add_test(tc, unknown_process_fields_refused_over_http);
	tcase_add_test(tc, admin_routes_reach_the_backend);
	tcase_add_test(tc, waking_requests_do_not_block_the_server);
	tcase_add_test(tc, healthz_says_why_auto_chose_sim);
	suite_add_tcase(s, tc);
	return s;
}
