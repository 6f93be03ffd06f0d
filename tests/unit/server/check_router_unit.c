/*
 * The router over a fake engine: every route's status and JSON shape, the
 * validation rules and messages of docs/wire.md §2.2/§3.x, error envelopes from
 * engine errors, and hostile input. The same router over the real engine
 * is in check_router_engine.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "common/json.h"
#include "fake_engine.h"
#include "router_call.h"
#include "server_test.h"

static s0__engine *eng;

/* CALL(method, path[, .field = value…]); the trailing .pad_ keeps C11 happy */
#define CALL(...) CALL_(__VA_ARGS__, .pad_ = 0)
#define CALL_(m, p, ...) rc_call(eng, m, p, &(rc_opts){__VA_ARGS__})
#define SB "/api/v1/sandboxes"

static void setup(void)
{
	eng = fake_engine_new();
}

static void teardown(void)
{
	fake_engine_free(eng);
}

static void expect_error(rc_result *r, int status, const char *code, const char *message)
{
	ck_assert_int_eq(r->status, status);
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(r->json, "success")));
	ck_assert_str_eq(rc_err_code(r), code);
	if (message)
		ck_assert_str_eq(rc_err_message(r), message);
	rc_free(r);
}

/* Each call fails validation with (400, bad_request, message) and never reaches the engine. */
static void expect_400(const char *method, const char *path, const char *query,
                       const char *body, const char *message)
{
	int before = fake_last(eng)->calls;
	rc_result r = CALL(method, path, .query = query, .body = body);
	ck_assert_msg(r.status == 400, "%s %s ?%s %s -> %d %s", method, path, query ? query : "",
	              body ? body : "(none)", r.status, r.resp.body.data);
	expect_error(&r, 400, "bad_request", message);
	ck_assert_int_eq(fake_last(eng)->calls, before);
}

START_TEST(service_routes)
{
	rc_result r = CALL("GET", "/healthz", .team = "");
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(s0__json_str0(r.data, "status"), "healthy");
	ck_assert(s0__json_i64(r.data, "timestamp", 0) > 1700000000);
	rc_free(&r);
	r = CALL("GET", "/metadata", .team = "");
	ck_assert_str_eq(s0__json_str0(r.data, "gateway_mode"), "direct");
	ck_assert_str_eq(s0__json_str0(r.data, "service"), "libsandbox0");
	rc_free(&r);
	r = CALL("POST", "/healthz");
	expect_error(&r, 405, "method_not_allowed", NULL);
}
END_TEST

START_TEST(unknown_routes_wrong_methods_and_deferred_routes)
{
	rc_result r = CALL("GET", "/api/v1/nothing");
	expect_error(&r, 404, "not_found", NULL);
	r = CALL("GET", SB "/sb-1/");
	expect_error(&r, 404, "not_found", NULL);
	r = CALL("GET", "api/v1/sandboxes");
	expect_error(&r, 404, "not_found", NULL);
	r = CALL("PATCH", SB "/sb-1");
	expect_error(&r, 405, "method_not_allowed", NULL);
	r = CALL("GET", SB "/sb-1/pause");
	ck_assert_str_eq(rc_header(&r, "Allow"), "POST");
	expect_error(&r, 405, "method_not_allowed", NULL);
	r = CALL("POST", SB "/sb-1");
	ck_assert_str_eq(rc_header(&r, "Allow"), "GET, HEAD, PUT, DELETE");
	expect_error(&r, 405, "method_not_allowed", NULL);
	r = CALL("PUT", SB "/sb-1/files");
	expect_error(&r, 405, "method_not_allowed", NULL);
	r = CALL("DELETE", "/api/v1/sandbox-rootfs-snapshots");
	expect_error(&r, 404, "not_found", NULL);
	/* the session event stream is s0 serve's (SSE before routing): in process 501 */
	r = CALL("GET", SB "/sb-1/sessions/s1/events/stream");
	ck_assert_ptr_nonnull(strstr(rc_err_message(&r), "s0_stream_open()")); /* names the way */
	expect_error(&r, 501, "not_implemented", NULL);
	/* other methods of the stream paths, and of any known path, are 405 with
	 * Allow and the error envelope (RFC 9110 §15.5.6); unknown paths 404 */
	static const char *const wrong[][3] = {
		{"POST", SB "/sb-1/sessions/s1/events/stream", "GET, HEAD"},
		{"DELETE", SB "/sb-1/sessions/s1/events/stream", "GET, HEAD"},
		{"POST", SB "/sb-1/files/watch", "GET, HEAD"},
		{"PUT", SB "/sb-1/contexts/c1/ws", "GET, HEAD"},
		{"POST", SB "/sb-1/sessions/s1/ws", "GET, HEAD"},
		{"GET", SB "/sb-1/sessions/s1/attempts", "POST"},
		{"GET", SB "/sb-1/sessions/s1/terminal", "PUT"}};
	for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
		r = CALL(wrong[i][0], wrong[i][1]);
		ck_assert_msg(r.status == 405, "%s %s: %d", wrong[i][0], wrong[i][1], r.status);
		ck_assert_str_eq(rc_header(&r, "Allow"), wrong[i][2]);
		char msg[64];
		snprintf(msg, sizeof msg, "method %s not allowed", wrong[i][0]);
		expect_error(&r, 405, "method_not_allowed", msg);
	}
	static const char *const unknown[] = {SB "/sb-1/sessions/s1/events/stream/x",
	                                      SB "/sb-1/contexts/c1/nothing",
	                                      SB "/sb-1/files/watch/x"};
	for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
		r = CALL("GET", unknown[i]);
		expect_error(&r, 404, "not_found", NULL);
	}
	/* the WebSocket routes without an upgrade (docs/wire.md §8.2): 426 */
	static const char *const ws[] = {SB "/sb-1/files/watch", SB "/sb-1/contexts/c1/ws",
	                                 SB "/sb-1/sessions/s1/ws"};
	for (size_t i = 0; i < 3; i++) {
		r = CALL("GET", ws[i]);
		ck_assert_str_eq(rc_header(&r, "Upgrade"), "websocket");
		expect_error(&r, 426, "bad_request", NULL);
	}
	ck_assert_int_eq(fake_last(eng)->calls, 0);
	/* the sessions' second tier is routed (docs/wire.md §8.4 item 3): the fake
	 * has no runtime, so the runtime-access rules answer (a paused sandbox
	 * without auto-resume) once the engine was reached */
	static const char *const tier2[][2] = {
		{"PUT", SB "/sb-paused/sessions/s1"}, {"POST", SB "/sb-paused/sessions/s1/attempts"},
		{"POST", SB "/sb-paused/sessions/s1/inputs"},
		{"PUT", SB "/sb-paused/sessions/s1/terminal"}};
	for (size_t i = 0; i < 4; i++) {
		r = CALL(tier2[i][0], tier2[i][1], .body = "{}");
		expect_error(&r, 503, "unavailable",
		             "sandbox is not running and auto_resume is disabled");
		ck_assert_int_eq(fake_last(eng)->calls, (int)i + 1);
	}
}
END_TEST

START_TEST(api_routes_need_a_team)
{
	rc_result r = CALL("GET", SB, .team = "");
	expect_error(&r, 401, "unauthorized", "missing authentication");
	ck_assert_int_eq(fake_last(eng)->calls, 0);
}
END_TEST

START_TEST(request_id_from_header_or_generated)
{
	static const char *const h[] = {"X-Request-ID", "abc-123", NULL};
	rc_result r = CALL("GET", "/healthz", .headers = h);
	ck_assert_str_eq(rc_header(&r, "X-Request-ID"), "abc-123");
	rc_free(&r);
	r = CALL("GET", "/nowhere");
	ck_assert_uint_eq(strlen(rc_header(&r, "X-Request-ID")), 36);
	rc_free(&r);
}
END_TEST

START_TEST(claim_shape_and_normalisation)
{
	rc_result r = CALL("POST", SB,
	                   .body = "{\"template\":\"  DeFault \",\"config\":{\"ttl\":60,\"hard_ttl\":"
	                           "120,\"env_vars\":{\"A\":\"1\"},\"auto_resume\":false},"
	                           "\"mounts\":[]}");
	ck_assert_int_eq(r.status, 201);
	static const char *const keys[] = {"sandbox_id", "status", "pod_name", "template",
	                                   "runtime_id", NULL};
	ck_assert(rc_has_keys(r.data, keys));
	ck_assert_str_eq(s0__json_str0(r.data, "status"), "running");
	ck_assert_str_eq(s0__json_str0(r.data, "template"), "default");
	ck_assert_str_eq(s0__json_str0(r.data, "runtime_id"), "rt-1");
	ck_assert_str_eq(fake_last(eng)->template_id, "default");
	ck_assert_str_eq(fake_last(eng)->team, "team_a");
	ck_assert_ptr_nonnull(strstr(fake_last(eng)->config_json, "\"ttl\":60"));
	rc_free(&r);
	r = CALL("POST", SB, .body = "{\"template\":\"default\",\"snapshot_id\":\"snap-9\"}");
	ck_assert_int_eq(r.status, 201);
	ck_assert_str_eq(fake_last(eng)->snapshot_id, "snap-9");
	rc_free(&r);
}
END_TEST

START_TEST(claim_validation)
{
	char long_tpl[300 + 20];
	snprintf(long_tpl, sizeof long_tpl, "{\"template\":\"%0300d\"}", 0);
	expect_400("POST", SB, NULL, NULL, "invalid request: request body is required");
	expect_400("POST", SB, NULL, "  ", "invalid request: request body is required");
	expect_400("POST", SB, NULL, "{}", "template is required");
	expect_400("POST", SB, NULL, "{\"template\":\"   \"}", "template is required");
	expect_400("POST", SB, NULL, long_tpl, "template_id is too long (300 > 255)");
	expect_400("POST", SB, NULL, "{\"template\":\"a/b\"}", "template_id cannot contain '/'");
	expect_400("POST", SB, NULL, "{\"template\":5}", "invalid request: template must be a string");
	expect_400("POST", SB, NULL, "{\"template\":\"d\",\"config\":{\"ttl\":-1}}",
	           "invalid claim request: ttl must be >= 0");
	expect_400("POST", SB, NULL, "{\"template\":\"d\",\"config\":{\"hard_ttl\":-5}}",
	           "invalid claim request: hard_ttl must be >= 0");
	expect_400("POST", SB, NULL, "{\"template\":\"d\",\"config\":{\"ttl\":10,\"hard_ttl\":5}}",
	           "invalid claim request: ttl must be <= hard_ttl");
	expect_400("POST", SB, NULL, "{\"template\":\"d\",\"config\":{\"ttl\":1.5}}",
	           "invalid request: ttl must be a 32-bit integer");
	expect_400("POST", SB, NULL, "{\"template\":\"d\",\"config\":{\"ttl\":3000000000}}",
	           "invalid request: ttl must be a 32-bit integer");
	expect_400("POST", SB, NULL, "{\"template\":\"d\",\"config\":[]}",
	           "invalid request: config must be an object");
	expect_400("POST", SB, NULL, "{\"template\":\"d\",\"config\":{\"env_vars\":{\"A\":1}}}",
	           "invalid request: env_vars values must be strings");
	expect_400("POST", SB, NULL, "{\"template\":\"d\",\"config\":{\"auto_resume\":\"no\"}}",
	           "invalid request: auto_resume must be a boolean");
	expect_400("POST", SB, NULL, "{\"template\":\"d\",\"mounts\":{}}",
	           "invalid request: mounts must be an array");
	expect_400("POST", SB, NULL, "[\"template\"]",
	           "invalid request: request body must be a JSON object");
	expect_400("POST", SB, NULL, "{\"template\":", NULL);
	expect_400("POST", SB, NULL, "{\"template\":\"d\"} x",
	           "invalid request: unexpected data after the JSON value at offset 16");
	/* ttl within hard_ttl, and either alone, are fine */
	rc_result r = CALL("POST", SB, .body = "{\"template\":\"d\",\"config\":{\"ttl\":5,\"hard_ttl\":5}}");
	ck_assert_int_eq(r.status, 201);
	rc_free(&r);
}
END_TEST

START_TEST(hostile_bodies)
{
	/* nesting past the cap, a huge body, embedded NUL bytes */
	size_t depth = 1000;
	char *deep = malloc(depth * 2 + 1);
	for (size_t i = 0; i < depth; i++) {
		deep[i] = '[';
		deep[depth + i] = ']';
	}
	deep[depth * 2] = '\0';
	expect_400("POST", SB, NULL, deep, "invalid request: JSON nested too deeply");
	free(deep);
	size_t big = S0__ROUTER_JSON_BODY_MAX + 1;
	char *huge = malloc(big + 1);
	memset(huge, ' ', big);
	huge[big] = '\0';
	rc_result r = CALL("POST", SB, .body = huge);
	expect_error(&r, 413, "request_too_large", NULL);
	r = CALL("POST", SB "/sb-1/pause", .body = huge, .raw = true);
	expect_error(&r, 413, "request_too_large", NULL);
	free(huge);
	static const char nul_body[] = "{\"template\":\"d\0x\"}";
	r = CALL("POST", SB, .body = nul_body, .body_len = sizeof nul_body - 1);
	expect_error(&r, 400, "bad_request", "invalid request: NUL byte in JSON");
	expect_400("POST", SB, NULL, "{\"template\":\"d\\u0000x\"}",
	           "invalid request: NUL character in a JSON string");
	expect_400("POST", SB, NULL, "{\"template\":\"d\tx\"}",
	           "invalid request: control character in a JSON string");
	/* not UTF-8: a stray byte, an overlong form, a surrogate, a cut sequence */
	static const char *const not_utf8[] = {"{\"template\":\"\xff\xfe\"}",
	                                       "{\"template\":\"\xc0\xaf\"}",
	                                       "{\"template\":\"\xed\xa0\x80\"}",
	                                       "{\"template\":\"\xe2\x82\"}"};
	for (size_t i = 0; i < sizeof not_utf8 / sizeof *not_utf8; i++)
		expect_400("POST", SB, NULL, not_utf8[i], "invalid request: invalid UTF-8 in JSON");
	r = CALL("POST", SB, .body = "{\"template\":\"d\xc3\xa9j\xe2\x82\xac\xf0\x9f\x98\x80\"}");
	ck_assert_int_eq(r.status, 201); /* well-formed UTF-8 of 2, 3 and 4 bytes passes */
	rc_free(&r);
	ck_assert_int_eq(fake_last(eng)->calls, 1);
}
END_TEST

/* {"k0":0,…,"k<n-1>":0} with member dup_at renamed to "k0" when dup_at > 0. */
static char *wide_object(size_t n, size_t dup_at)
{
	char *o = malloc(n * 24 + 16), *p = o;
	*p++ = '{';
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "%s\"k%zu\":0", i ? "," : "", i == dup_at && dup_at ? (size_t)0 : i);
	*p++ = '}';
	*p = '\0';
	return o;
}

static const char *dup_of(const char *text)
{
	static char name[64];
	cJSON *j = cJSON_Parse(text);
	ck_assert_ptr_nonnull(j);
	int rc = -1;
	const char *d = s0__json_duplicate_key(j, &rc);
	ck_assert_int_eq(rc, S0_OK);
	s0__strlcpy(name, d ? d : "", sizeof name);
	cJSON_Delete(j);
	return name;
}

/* cJSON keeps both members of a duplicated key and lookups take the first;
 * the router refuses such bodies at any depth instead (400 bad_request). */
/* Claim-time mounts (volumes) as the official npm SDK sends them: a 400
 * naming the field, nothing claimed; an empty list or null asks for nothing. */
START_TEST(claim_mounts_refused_by_name)
{
	int calls = fake_last(eng) ? fake_last(eng)->calls : 0;
	expect_400("POST", SB, NULL,
	           "{\"template\":\"default\",\"mounts\":[{\"sandboxvolume_id\":\"vol-1\","
	           "\"mount_point\":\"/mnt/data\"}]}",
	           "invalid request: mounts is not supported: this server has no sandbox volumes");
	ck_assert_int_eq(fake_last(eng) ? fake_last(eng)->calls : 0, calls);
	rc_result r = CALL("POST", SB, .body = "{\"template\":\"default\",\"mounts\":null}");
	ck_assert_int_eq(r.status, 201);
	rc_free(&r);
}
END_TEST

START_TEST(duplicate_keys_are_400)
{
	expect_400("POST", SB, NULL, "{\"template\":\"d\",\"template\":\"e\"}",
	           "invalid request: duplicate key \"template\" in request body");
	expect_400("POST", SB, NULL, "{\"template\":\"d\",\"config\":{\"ttl\":1,\"ttl\":2}}",
	           "invalid request: duplicate key \"ttl\" in request body");
	expect_400("POST", SB, NULL,
	           "{\"template\":\"d\",\"mounts\":[{\"sandboxvolume_id\":\"v\",\"mount_point\":\"/m\","
	           "\"mount_point\":\"/n\"}]}",
	           "invalid request: duplicate key \"mount_point\" in request body");
	/* the same key spelt with an escape is the same key */
	expect_400("POST", SB, NULL, "{\"template\":\"d\",\"templ\\u0061te\":\"e\"}",
	           "invalid request: duplicate key \"template\" in request body");
	/* a long key is quoted in part */
	char body[512], want[256];
	char key[101];
	memset(key, 'k', 100);
	key[100] = '\0';
	snprintf(body, sizeof body, "{\"template\":\"d\",\"%s\":1,\"%s\":2}", key, key);
	snprintf(want, sizeof want, "invalid request: duplicate key \"%.64s...\" in request body",
	         key);
	expect_400("POST", SB, NULL, body, want);
	/* bodyless-tolerant routes check too */
	expect_400("POST", SB "/sb-1/pause", NULL, "{\"a\":{\"b\":[1,{\"c\":1,\"c\":1}]}}",
	           "invalid request: duplicate key \"c\" in request body");
	/* past 16 members the names are sorted: last and first clash */
	char *wide = wide_object(40, 39);
	expect_400("POST", SB, NULL, wide, "invalid request: duplicate key \"k0\" in request body");
	free(wide);
	ck_assert_int_eq(fake_last(eng)->calls, 0);
	/* equal names in different objects, and case variants, are fine */
	rc_result r = CALL("POST", SB,
	                   .body = "{\"template\":\"d\",\"config\":{\"env_vars\":{\"A\":\"1\",\"a\":\"2\","
	                           "\"template\":\"3\"}}}");
	ck_assert_int_eq(r.status, 201);
	rc_free(&r);
	/* past the duplicate check, non-empty mounts meet their own refusal */
	expect_400("POST", SB, NULL,
	           "{\"template\":\"d\",\"mounts\":[{\"mount_point\":\"/a\"},{\"mount_point\":\"/b\"}]}",
	           "invalid request: mounts is not supported: this server has no sandbox volumes");
}
END_TEST

/* The check itself: exact at the sort threshold, and not quadratic on a huge
 * object (200 000 distinct members would take ~2e10 compares pairwise). */
START_TEST(duplicate_key_check_scales)
{
	ck_assert_str_eq(dup_of("[1,\"a\",{\"x\":{}}]"), "");
	ck_assert_str_eq(dup_of("{\"x\":1,\"y\":{\"x\":2}}"), "");
	ck_assert_str_eq(dup_of("[[{\"q\":1,\"q\":2}]]"), "q");
	for (size_t n = 15; n <= 18; n++) {
		char *o = wide_object(n, 0);
		ck_assert_str_eq(dup_of(o), "");
		free(o);
		o = wide_object(n, n - 1);
		ck_assert_str_eq(dup_of(o), "k0");
		free(o);
	}
	char *big = wide_object(200000, 0);
	int64_t t0 = s0__real_monotonic_ms();
	ck_assert_str_eq(dup_of(big), "");
	free(big);
	big = wide_object(200000, 199999);
	ck_assert_str_eq(dup_of(big), "k0");
	free(big);
	ck_assert_int_lt(s0__real_monotonic_ms() - t0, 20000);
}
END_TEST

START_TEST(list_shape_and_paging)
{
	rc_result r = CALL("GET", SB);
	ck_assert_int_eq(r.status, 200);
	static const char *const keys[] = {"sandboxes", "count", "has_more", NULL};
	ck_assert(rc_has_keys(r.data, keys));
	const cJSON *arr = cJSON_GetObjectItem(r.data, "sandboxes");
	ck_assert_int_eq(cJSON_GetArraySize(arr), 3);
	static const char *const summary[] = {"id", "template_id", "status", "paused",
	                                      "runtime_generation", "runtime_id", "created_at",
	                                      "updated_at", "expires_at", "hard_expires_at", NULL};
	ck_assert(rc_has_keys(cJSON_GetArrayItem(arr, 0), summary));
	ck_assert(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(arr, 0), "expires_at")));
	ck_assert_int_eq(s0__json_i64(r.data, "count", 0), 3);
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(r.data, "has_more")));
	const s0__list_filter *f = &fake_last(eng)->filter;
	ck_assert_int_eq(f->limit, 50);
	ck_assert_int_eq(f->offset, 0);
	ck_assert_int_eq(f->paused, -1);
	ck_assert_int_eq(f->status, 0);
	rc_free(&r);
	r = CALL("GET", SB, .query = "limit=1");
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(r.data, "has_more")));
	rc_free(&r);
	r = CALL("GET", SB, .query = "offset=9&status=paused&paused=T&template_id=my%20tpl");
	arr = cJSON_GetObjectItem(r.data, "sandboxes");
	ck_assert(cJSON_IsArray(arr));
	ck_assert_int_eq(cJSON_GetArraySize(arr), 0);
	ck_assert_int_eq(fake_last(eng)->filter.status, S0_STATUS_PAUSED);
	ck_assert_int_eq(fake_last(eng)->filter.paused, 1);
	ck_assert_int_eq(fake_last(eng)->filter.offset, 9);
	ck_assert_str_eq(fake_last(eng)->filter_template, "my tpl");
	rc_free(&r);
	/* empty values mean "not given" */
	r = CALL("GET", SB, .query = "status=&paused=&limit=&offset=");
	ck_assert_int_eq(r.status, 200);
	rc_free(&r);
	r = CALL("GET", SB, .query = "paused=0");
	ck_assert_int_eq(fake_last(eng)->filter.paused, 0);
	rc_free(&r);
}
END_TEST

START_TEST(list_validation)
{
	expect_400("GET", SB, "status=completed", NULL, "invalid status parameter");
	expect_400("GET", SB, "status=RUNNING", NULL, "invalid status parameter");
	expect_400("GET", SB, "paused=yes", NULL, "invalid paused parameter");
	expect_400("GET", SB, "limit=abc", NULL, "invalid limit parameter");
	expect_400("GET", SB, "limit=1.5", NULL, "invalid limit parameter");
	expect_400("GET", SB, "limit=0", NULL, "limit must be between 1 and 200");
	expect_400("GET", SB, "limit=201", NULL, "limit must be between 1 and 200");
	expect_400("GET", SB, "limit=99999999999", NULL, "limit must be between 1 and 200");
	expect_400("GET", SB, "offset=x", NULL, "invalid offset parameter");
	expect_400("GET", SB, "offset=-1", NULL, "offset must be >= 0");
	expect_400("GET", SB, "template_id=a%00b", NULL,
	           "invalid request: template_id contains a NUL byte");
	rc_result r = CALL("GET", SB, .query = "limit=200&offset=%2B3");
	ck_assert_int_eq(r.status, 200);
	ck_assert_int_eq(fake_last(eng)->filter.offset, 3);
	rc_free(&r);
}
END_TEST

START_TEST(get_shape_and_time_modes)
{
	rc_result r = CALL("GET", SB "/sb-1");
	ck_assert_int_eq(r.status, 200);
	static const char *const keys[] = {
		"id", "template_id", "team_id", "status", "paused", "auto_resume", "pod_name",
		"runtime_generation", "runtime_id", "created_at", "updated_at", "claimed_at",
		"expires_at", "hard_expires_at", "resources", NULL};
	ck_assert(rc_has_keys(r.data, keys));
	ck_assert_str_eq(s0__json_str0(r.data, "team_id"), "team_a");
	ck_assert_str_eq(s0__json_str0(r.data, "created_at"), "2026-01-01T00:00:00Z");
	ck_assert_str_eq(s0__json_str0(r.data, "updated_at"), "2026-01-01T00:00:01.500Z");
	ck_assert(cJSON_IsNull(cJSON_GetObjectItem(r.data, "expires_at")));
	ck_assert_str_eq(s0__json_str0(cJSON_GetObjectItem(r.data, "resources"), "memory"), "512Mi");
	rc_free(&r);
	r = CALL("GET", SB "/sb-1", .zero_time = true);
	ck_assert_str_eq(s0__json_str0(r.data, "expires_at"), "0001-01-01T00:00:00Z");
	ck_assert_str_eq(s0__json_str0(r.data, "hard_expires_at"), "0001-01-01T00:00:00Z");
	rc_free(&r);
	r = CALL("GET", SB "/sb-paused");
	ck_assert_str_eq(s0__json_str0(r.data, "status"), "paused");
	ck_assert_str_eq(s0__json_str0(r.data, "runtime_id"), "");
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(r.data, "paused")));
	rc_free(&r);
	r = CALL("GET", SB "/sb-ttl/status");
	static const char *const skeys[] = {"sandbox_id", "template_id", "team_id", "pod_name",
	                                    "status", "claimed_at", "created_at", "expires_at",
	                                    "hard_expires_at", NULL};
	ck_assert(rc_has_keys(r.data, skeys));
	ck_assert_str_eq(s0__json_str0(r.data, "expires_at"), "2026-01-01T00:01:00Z");
	ck_assert_str_eq(s0__json_str0(r.data, "claimed_at"), "2026-01-01T00:00:00Z");
	rc_free(&r);
}
END_TEST

START_TEST(update_and_delete)
{
	rc_result r = CALL("PUT", SB "/sb-1", .body = "{\"config\":{\"ttl\":30,\"env_vars\":{}}}");
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(s0__json_str0(r.data, "id"), "sb-1");
	ck_assert_str_eq(fake_last(eng)->config_json, "{\"ttl\":30,\"env_vars\":{}}");
	rc_free(&r);
	expect_400("PUT", SB "/sb-1", NULL, "{}", "config is required");
	expect_400("PUT", SB "/sb-1", NULL, "{\"config\":null}", "config is required");
	expect_400("PUT", SB "/sb-1", NULL, NULL, "invalid request: request body is required");
	expect_400("PUT", SB "/sb-1", NULL, "{\"config\":{\"ttl\":-2}}",
	           "invalid update request: ttl must be >= 0");
	r = CALL("DELETE", SB "/sb-1");
	ck_assert_int_eq(r.status, 202);
	ck_assert_str_eq(s0__json_str0(r.data, "message"), "sandbox terminated successfully");
	rc_free(&r);
}
END_TEST

START_TEST(pause_bodies_and_statuses)
{
	static const char *const fs_only[] = {NULL, "", "{}", "{\"memory\":false}", "null",
	                                      " \n", "{\"other\":1}"};
	for (size_t i = 0; i < sizeof fs_only / sizeof fs_only[0]; i++) {
		rc_result r = CALL("POST", SB "/sb-1/pause", .body = fs_only[i]);
		ck_assert_int_eq(r.status, 200);
		ck_assert(!fake_last(eng)->memory);
		static const char *const keys[] = {"sandbox_id", "paused", "status", NULL};
		ck_assert(rc_has_keys(r.data, keys));
		ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(r.data, "paused")));
		ck_assert_str_eq(s0__json_str0(r.data, "status"), "running");
		rc_free(&r);
	}
	rc_result r = CALL("POST", SB "/sb-1/pause", .body = "{\"memory\":true}");
	ck_assert_int_eq(r.status, 200);
	ck_assert(fake_last(eng)->memory);
	rc_free(&r);
	expect_400("POST", SB "/sb-1/pause", NULL, "{\"memory\":\"yes\"}",
	           "invalid request: memory must be a boolean");
	expect_400("POST", SB "/sb-1/pause", NULL, "{\"memory\":1}",
	           "invalid request: memory must be a boolean");
	expect_400("POST", SB "/sb-1/pause", NULL, "[true]",
	           "invalid request: request body must be a JSON object");
	expect_400("POST", SB "/sb-1/pause", NULL, "{memory:true}", NULL);
	fake_pause_accepted(eng);
	r = CALL("POST", SB "/sb-1/pause");
	ck_assert_int_eq(r.status, 202);
	rc_free(&r);
	fake_pause_accepted(eng);
	r = CALL("POST", SB "/sb-1/pause", .pause_200_only = true);
	ck_assert_int_eq(r.status, 200);
	rc_free(&r);
}
END_TEST

START_TEST(resume_and_refresh)
{
	rc_result r = CALL("POST", SB "/sb-1/resume");
	ck_assert_int_eq(r.status, 200);
	static const char *const keys[] = {"sandbox_id", "resumed", NULL};
	ck_assert(rc_has_keys(r.data, keys));
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(r.data, "resumed")));
	rc_free(&r);
	r = CALL("POST", SB "/sb-1/resume", .body = "{\"memory\":true}");
	ck_assert(fake_last(eng)->memory);
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(r.data, "resumed")));
	rc_free(&r);
	expect_400("POST", SB "/sb-1/resume", NULL, "{\"memory\":null,\"x\":[}", NULL);
	r = CALL("POST", SB "/sb-1/refresh");
	ck_assert_int_eq(r.status, 200);
	static const char *const rkeys[] = {"sandbox_id", "expires_at", "hard_expires_at", NULL};
	ck_assert(rc_has_keys(r.data, rkeys));
	ck_assert(!fake_last(eng)->has_duration);
	rc_free(&r);
	r = CALL("POST", SB "/sb-1/refresh", .body = "{\"duration\":60}", .zero_time = true);
	ck_assert(fake_last(eng)->has_duration);
	ck_assert_int_eq(fake_last(eng)->duration, 60);
	ck_assert_str_eq(s0__json_str0(r.data, "expires_at"), "2026-01-01T00:01:00Z");
	ck_assert_str_eq(s0__json_str0(r.data, "hard_expires_at"), "0001-01-01T00:00:00Z");
	rc_free(&r);
	r = CALL("POST", SB "/sb-1/refresh", .body = "{\"duration\":0}");
	ck_assert(!fake_last(eng)->has_duration);
	rc_free(&r);
	expect_400("POST", SB "/sb-1/refresh", NULL, "{\"duration\":-1}",
	           "invalid request: duration must be >= 0");
	expect_400("POST", SB "/sb-1/refresh", NULL, "{\"duration\":\"60\"}",
	           "invalid request: duration must be a 32-bit integer");
}
END_TEST

START_TEST(snapshots_restore_fork)
{
	rc_result r = CALL("POST", SB "/sb-1/snapshots");
	ck_assert_int_eq(r.status, 201);
	static const char *const keys[] = {"id", "sandbox_id", "created_at", "expires_at", NULL};
	ck_assert(rc_has_keys(r.data, keys));
	ck_assert_str_eq(s0__json_str0(r.data, "expires_at"), "0001-01-01T00:00:00Z");
	rc_free(&r);
	r = CALL("POST", SB "/sb-1/snapshots",
	         .body = "{\"name\":\"n\",\"description\":\"d\",\"expires_at\":\"2030-01-01T00:00:00Z\"}");
	ck_assert_int_eq(r.status, 201);
	ck_assert_str_eq(s0__json_str0(r.data, "name"), "n");
	ck_assert_str_eq(s0__json_str0(r.data, "expires_at"), "2030-01-01T00:00:00Z");
	ck_assert_int_eq(fake_last(eng)->expires_at_ms, 1893456000000LL);
	rc_free(&r);
	expect_400("POST", SB "/sb-1/snapshots", NULL, "{\"expires_at\":\"tomorrow\"}",
	           "invalid request: expires_at must be an RFC 3339 date-time");
	expect_400("POST", SB "/sb-1/snapshots", NULL, "{\"name\":7}",
	           "invalid request: name must be a string");
	r = CALL("GET", SB "/sb-1/snapshots");
	ck_assert_int_eq(r.status, 200);
	ck_assert_int_eq(s0__json_i64(r.data, "count", 0), 2);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(r.data, "snapshots")), 2);
	rc_free(&r);
	r = CALL("GET", "/api/v1/sandbox-rootfs-snapshots/snap-1");
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(s0__json_str0(r.data, "id"), "snap-1");
	rc_free(&r);
	r = CALL("DELETE", "/api/v1/sandbox-rootfs-snapshots/snap-1");
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(r.data, "deleted")));
	rc_free(&r);
	r = CALL("POST", SB "/sb-1/rootfs/restore", .body = "{\"snapshot_id\":\"snap-1\"}");
	ck_assert_int_eq(r.status, 200);
	static const char *const rkeys[] = {"sandbox_id", "snapshot_id", "status", NULL};
	ck_assert(rc_has_keys(r.data, rkeys));
	ck_assert_str_eq(s0__json_str0(r.data, "status"), "paused");
	rc_free(&r);
	expect_400("POST", SB "/sb-1/rootfs/restore", NULL, "{}", "snapshot_id is required");
	expect_400("POST", SB "/sb-1/rootfs/restore", NULL, "{\"snapshot_id\":\" \"}",
	           "snapshot_id is required");
	static const char *const idem[] = {"Idempotency-Key", "k-1", NULL};
	r = CALL("POST", SB "/sb-1/fork", .body = "{\"config\":{\"ttl\":0,\"hard_ttl\":90},\"memory\":true}",
	         .headers = idem);
	ck_assert_int_eq(r.status, 201);
	ck_assert_str_eq(s0__json_str0(r.data, "source_sandbox_id"), "sb-1");
	const cJSON *child = cJSON_GetObjectItem(r.data, "sandbox");
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(child, "paused")));
	ck_assert_str_eq(s0__json_str0(child, "status"), "paused");
	const s0__fork_req *f = &fake_last(eng)->fork;
	ck_assert(f->has_ttl && f->has_hard_ttl && f->memory);
	ck_assert_int_eq(f->hard_ttl_sec, 90);
	ck_assert_str_eq(fake_last(eng)->idem, "k-1");
	rc_free(&r);
	r = CALL("POST", SB "/sb-1/fork");
	ck_assert_int_eq(r.status, 201);
	ck_assert(!fake_last(eng)->fork.has_ttl);
	rc_free(&r);
	expect_400("POST", SB "/sb-1/fork", NULL, "{\"config\":{\"memory\":\"1Gi\"}}",
	           "invalid request: unknown field \"memory\" in config");
	expect_400("POST", SB "/sb-1/fork", NULL, "{\"bogus\":1}",
	           "invalid request: unknown field \"bogus\"");
	expect_400("POST", SB "/sb-1/fork", NULL, "{\"config\":{\"ttl\":-1}}",
	           "invalid fork request: ttl must be >= 0");
}
END_TEST

static void engine_error(int code, const char *reason, const char *msg, int64_t retry,
                         const char *details, int status, const char *wire,
                         const char *want_msg)
{
	fake_fail_next(eng, code, reason, msg, retry, details);
	rc_result r = CALL("POST", SB, .body = "{\"template\":\"default\"}");
	ck_assert_int_eq(r.status, status);
	ck_assert_str_eq(rc_err_code(&r), wire);
	ck_assert_str_eq(rc_err_message(&r), want_msg);
	const char *ra = rc_header(&r, "Retry-After");
	if (retry >= 0)
		ck_assert_str_eq(ra, "1");
	else
		ck_assert_ptr_null(ra);
	const cJSON *d = cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "error"), "details");
	ck_assert(details ? cJSON_IsObject(d) : d == NULL);
	rc_free(&r);
}

START_TEST(engine_errors_become_envelopes)
{
	engine_error(S0_ENOTFOUND, "not_found", "template not found: x", -1, NULL, 404, "not_found",
	             "template not found: x");
	engine_error(S0_ECONFLICT, "template_not_ready", "template creation is still in progress",
	             1000, NULL, 409, "template_not_ready", "template creation is still in progress");
	engine_error(S0_EUNAVAILABLE, "waking_up", "", -1, NULL, 503, "unavailable",
	             "sandbox is waking up");
	engine_error(S0_ERESUME, "resume_failed", "sandbox resume failed", -1, NULL, 503,
	             "sandbox_resume_failed", "sandbox resume failed");
	engine_error(S0_EINTERNAL, NULL, "database is locked", -1, NULL, 500, "internal_error",
	             "failed to claim sandbox: database is locked");
	engine_error(S0_EIO, "io_error", "disk full", -1, NULL, 500, "internal_error",
	             "failed to claim sandbox: disk full");
	engine_error(S0_EFORBIDDEN, "admission_restricted",
	             "team is not allowed to start additional usage", -1,
	             "{\"reason\":\"debt\",\"version\":3}", 403, "admission_restricted",
	             "team is not allowed to start additional usage");
	engine_error(S0_EQUOTA, "quota_exceeded", "active runtimes quota exceeded", 1000, NULL, 429,
	             "quota_exceeded", "active runtimes quota exceeded");
	engine_error(S0_ETIMEDOUT, "wait_deadline", "timed out waiting for sandbox to resume", -1,
	             NULL, 504, "unavailable", "timed out waiting for sandbox to resume");
	engine_error(S0_ECONFLICT, "lifecycle_conflict",
	             "sandbox pause conflicts with another lifecycle operation", -1, NULL, 409,
	             "conflict", "sandbox pause conflicts with another lifecycle operation");
}
END_TEST

START_TEST(hostile_ids_and_paths)
{
	char path[400];
	snprintf(path, sizeof path, SB "/%0300d", 0);
	rc_result r = CALL("GET", path);
	expect_error(&r, 404, "not_found", "sandbox not found");
	snprintf(path, sizeof path, "/api/v1/sandbox-rootfs-snapshots/%0100d", 0);
	r = CALL("DELETE", path);
	expect_error(&r, 404, "not_found", "not found");
	r = CALL("GET", SB "/a%01b", .raw = true);
	expect_error(&r, 404, "not_found", "sandbox not found");
	ck_assert_int_eq(fake_last(eng)->calls, 0);
	/* a NUL byte never truncates a path into another route */
	r = CALL("DELETE", SB "/sb-1%00/files", .query = "path=/x", .raw = true);
	expect_error(&r, 400, "bad_request", "invalid request: path contains a NUL byte");
	ck_assert_int_eq(fake_last(eng)->calls, 0);
	/* escaped ids are decoded; an escaped '/' is a separator */
	r = CALL("GET", SB "/sb%2D1", .raw = true);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(fake_last(eng)->id, "sb-1");
	rc_free(&r);
	r = CALL("GET", SB "/a%2Fb", .raw = true);
	expect_error(&r, 404, "not_found", NULL);
	char deep[200] = SB;
	for (int i = 0; i < 20; i++)
		strcat(deep, "/x");
	r = CALL("GET", deep);
	expect_error(&r, 404, "not_found", NULL);
}
END_TEST

/* xorshift64*: deterministic across runs. */
static uint64_t rng(uint64_t *st)
{
	*st ^= *st >> 12;
	*st ^= *st << 25;
	*st ^= *st >> 27;
	return *st * 2685821657736338717ULL;
}

static void random_bytes(uint64_t *st, char *out, size_t n, const char *alphabet)
{
	size_t k = strlen(alphabet);
	for (size_t i = 0; i < n; i++)
		out[i] = alphabet[rng(st) % k];
	out[n] = '\0';
}

/* Hostile and random requests: always a well-formed answer, never a crash. */
START_TEST(random_requests_never_crash)
{
	static const char *const methods[] = {"GET", "POST", "PUT", "DELETE", "PATCH", ""};
	static const char *const stems[] = {
		"/api/v1/sandboxes", "/api/v1/sandboxes/sb-1", "/api/v1/sandboxes/sb-1/pause",
		"/api/v1/sandboxes/sb-1/resume", "/api/v1/sandboxes/sb-1/refresh",
		"/api/v1/sandboxes/sb-1/snapshots", "/api/v1/sandboxes/sb-1/fork",
		"/api/v1/sandboxes/sb-1/rootfs/restore", "/api/v1/sandbox-rootfs-snapshots/x",
		"/api/v1/sandboxes/sb-1/files/move", "/healthz", "/", ""};
	static const char *const bodies[] = {
		"{\"template\":\"default\",\"config\":{\"ttl\":", "{\"memory\":[1,{\"a\":null}]}",
		"{\"config\":{\"ttl\":1e309}}", "\"\\ud800\"", "{\"snapshot_id\":{}}", "nul\x01l",
		"{\"duration\":-0.0}", "{\"name\":\"\\u0000\"}", "[[[[[[[[[[]]]]]]]]]]", "{}"};
	const char *junk = "abc%/?&=+-_.~0129\"{}[]:,\\ \t";
	uint64_t st = 0x5eed5eedULL;
	long n = s0_test_iterations(3000);
	for (long i = 0; i < n; i++) {
		char path[200], query[64], extra[40], body[200];
		random_bytes(&st, extra, rng(&st) % 12, junk);
		snprintf(path, sizeof path, "%s%s", stems[rng(&st) % 13], rng(&st) % 3 ? "" : extra);
		random_bytes(&st, query, rng(&st) % 40, junk);
		const char *b = bodies[rng(&st) % 10];
		if (rng(&st) % 4 == 0) {
			random_bytes(&st, body, rng(&st) % 150, junk);
			b = body;
		}
		const char *team = rng(&st) % 8 ? "team_a" : "";
		rc_result r = CALL(methods[rng(&st) % 6], path, .query = query, .body = b,
		                   .team = team, .raw = true);
		ck_assert_msg(r.status >= 200 && r.status <= 503 && r.status != 500,
		              "%s ?%s -> %d %s", path, query, r.status, r.resp.body.data);
		rc_free(&r);
	}
}
END_TEST

Suite *s0_router_unit_suite(void)
{
	Suite *s = suite_create("router_unit");
	TCase *tc = tcase_create("router");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, service_routes);
	tcase_add_test(tc, unknown_routes_wrong_methods_and_deferred_routes);
	tcase_add_test(tc, api_routes_need_a_team);
	tcase_add_test(tc, request_id_from_header_or_generated);
	tcase_add_test(tc, claim_shape_and_normalisation);
	tcase_add_test(tc, claim_validation);
	tcase_add_test(tc, hostile_bodies);
	tcase_add_test(tc, duplicate_keys_are_400);
	tcase_add_test(tc, claim_mounts_refused_by_name);
	tcase_add_test(tc, duplicate_key_check_scales);
	tcase_add_test(tc, list_shape_and_paging);
	tcase_add_test(tc, list_validation);
	tcase_add_test(tc, get_shape_and_time_modes);
	tcase_add_test(tc, update_and_delete);
	tcase_add_test(tc, pause_bodies_and_statuses);
	tcase_add_test(tc, resume_and_refresh);
	tcase_add_test(tc, snapshots_restore_fork);
	tcase_add_test(tc, engine_errors_become_envelopes);
	tcase_add_test(tc, hostile_ids_and_paths);
	tcase_add_test(tc, random_requests_never_crash);
	suite_add_tcase(s, tc);
	return s;
}
