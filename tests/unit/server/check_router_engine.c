/*
 * The router over the real lifecycle engine: each endpoint's status and
 * JSON shape through a whole sandbox life, team isolation, and the
 * engine's own errors as envelopes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local_fixture.h"
#include "router_call.h"
#include "server_test.h"

static lf f;

#define CALL(...) CALL_(__VA_ARGS__, .pad_ = 0)
#define CALL_(m, p, ...) rc_call(f.engine, m, p, &(rc_opts){__VA_ARGS__})

static void setup(void)
{
	lf_open(&f, false);
}

static void teardown(void)
{
	lf_close(&f);
}

static void expect_error(rc_result *r, int status, const char *code)
{
	ck_assert_msg(r->status == status, "status %d, want %d: %s", r->status, status,
	              r->resp.body.data);
	ck_assert_str_eq(rc_err_code(r), code);
	rc_free(r);
}

/* Claim on "default" and return the id (static buffer). */
static const char *claim(const char *team)
{
	static char id[128];
	rc_result r = CALL("POST", "/api/v1/sandboxes", .team = team,
	                   .body = "{\"template\":\"default\"}");
	ck_assert_msg(r.status == 201, "claim: %d %s", r.status, r.resp.body.data);
	s0__strlcpy(id, s0__json_str0(r.data, "sandbox_id"), sizeof id);
	rc_free(&r);
	return id;
}

static char *path_of(const char *id, const char *suffix)
{
	char *p = NULL;
	ck_assert_int_ge(asprintf(&p, "/api/v1/sandboxes/%s%s", id, suffix), 0);
	return p;
}

START_TEST(claim_get_list_shapes)
{
	rc_result r = CALL("POST", "/api/v1/sandboxes", .body = "{\"template\":\" Default \"}");
	ck_assert_int_eq(r.status, 201);
	static const char *const ckeys[] = {"sandbox_id", "status", "pod_name", "template",
	                                    "runtime_id", NULL};
	ck_assert(rc_has_keys(r.data, ckeys));
	ck_assert_str_eq(s0__json_str0(r.data, "status"), "running");
	ck_assert_str_eq(s0__json_str0(r.data, "template"), "default");
	ck_assert_str_ne(s0__json_str0(r.data, "runtime_id"), "");
	char *id = strdup(s0__json_str0(r.data, "sandbox_id"));
	rc_free(&r);
	char *p = path_of(id, "");
	r = CALL("GET", p);
	ck_assert_int_eq(r.status, 200);
	static const char *const must[] = {"id", "template_id", "team_id", "status", "paused",
	                                   "auto_resume", "pod_name", "runtime_generation",
	                                   "runtime_id", "created_at", "updated_at", "claimed_at",
	                                   "expires_at", "hard_expires_at"};
	for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
		ck_assert_msg(cJSON_HasObjectItem(r.data, must[i]), "missing %s", must[i]);
	ck_assert_str_eq(s0__json_str0(r.data, "team_id"), "team_a");
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(r.data, "paused")));
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(r.data, "auto_resume")));
	ck_assert(cJSON_IsNull(cJSON_GetObjectItem(r.data, "expires_at")));
	rc_free(&r);
	r = CALL("GET", "/api/v1/sandboxes");
	ck_assert_int_eq(r.status, 200);
	ck_assert_int_eq(s0__json_i64(r.data, "count", 0), 1);
	const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(r.data, "sandboxes"), 0);
	ck_assert_str_eq(s0__json_str0(first, "id"), id);
	ck_assert_str_ne(s0__json_str0(first, "runtime_id"), "");
	rc_free(&r);
	r = CALL("GET", "/api/v1/sandboxes", .query = "status=paused");
	ck_assert_int_eq(s0__json_i64(r.data, "count", -1), 0);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(r.data, "sandboxes")), 0);
	rc_free(&r);
	free(p);
	free(id);
}
END_TEST

START_TEST(teams_do_not_see_each_other)
{
	char *id = strdup(claim("team_a"));
	char *p = path_of(id, "");
	rc_result r = CALL("GET", p, .team = "team_b");
	expect_error(&r, 404, "not_found");
	r = CALL("DELETE", p, .team = "team_b");
	expect_error(&r, 404, "not_found");
	char *pp = path_of(id, "/pause");
	r = CALL("POST", pp, .team = "team_b");
	expect_error(&r, 404, "not_found");
	r = CALL("GET", "/api/v1/sandboxes", .team = "team_b");
	ck_assert_int_eq(s0__json_i64(r.data, "count", -1), 0);
	rc_free(&r);
	r = CALL("GET", p);
	ck_assert_int_eq(r.status, 200);
	rc_free(&r);
	free(pp);
	free(p);
	free(id);
}
END_TEST

START_TEST(pause_resume_refresh_cycle)
{
	char *id = strdup(claim(NULL));
	char *p = path_of(id, ""), *pp = path_of(id, "/pause"), *rp = path_of(id, "/resume"),
	     *fp = path_of(id, "/refresh");
	rc_result r = CALL("POST", fp, .body = "{\"duration\":60}");
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(s0__json_str0(r.data, "expires_at"), "2026-01-01T00:01:00Z");
	rc_free(&r);
	r = CALL("POST", pp, .body = "{}");
	ck_assert_int_eq(r.status, 200);
	static const char *const keys[] = {"sandbox_id", "paused", "status", "operation_id",
	                                   "runtime_generation", NULL};
	ck_assert(rc_has_keys(r.data, keys));
	int64_t retires = s0__json_i64(r.data, "runtime_generation", -1);
	rc_free(&r);
	lf_quiesce(&f);
	r = CALL("GET", p);
	ck_assert_str_eq(s0__json_str0(r.data, "status"), "paused");
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(r.data, "paused")));
	ck_assert_str_eq(s0__json_str0(r.data, "runtime_id"), "");
	int64_t gen = s0__json_i64(r.data, "runtime_generation", -1);
	ck_assert_int_eq(retires, gen); /* the generation the pause retired (docs/wire.md §6.3) */
	rc_free(&r);
	r = CALL("POST", pp);
	ck_assert_int_eq(r.status, 200);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(r.data, "paused")));
	ck_assert_str_eq(s0__json_str0(r.data, "status"), "paused");
	rc_free(&r);
	r = CALL("POST", fp);
	expect_error(&r, 409, "conflict");
	r = CALL("POST", rp);
	ck_assert_int_eq(r.status, 200);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(r.data, "resumed")));
	rc_free(&r);
	r = CALL("GET", p);
	ck_assert_str_eq(s0__json_str0(r.data, "status"), "running");
	ck_assert_int_eq(s0__json_i64(r.data, "runtime_generation", -1), gen + 1);
	rc_free(&r);
	r = CALL("DELETE", p);
	ck_assert_int_eq(r.status, 202);
	ck_assert_str_eq(s0__json_str0(r.data, "message"), "sandbox terminated successfully");
	rc_free(&r);
	lf_quiesce(&f);
	r = CALL("GET", p);
	expect_error(&r, 404, "not_found");
	free(p);
	free(pp);
	free(rp);
	free(fp);
	free(id);
}
END_TEST

START_TEST(snapshots_restore_fork)
{
	char *id = strdup(claim(NULL));
	char *sp = path_of(id, "/snapshots"), *rp = path_of(id, "/rootfs/restore"),
	     *fk = path_of(id, "/fork"), *pp = path_of(id, "/pause");
	rc_result r = CALL("POST", sp, .body = "{\"name\":\"first\"}");
	ck_assert_msg(r.status == 201, "%s", r.resp.body.data);
	ck_assert_str_eq(s0__json_str0(r.data, "sandbox_id"), id);
	ck_assert(cJSON_IsString(cJSON_GetObjectItem(r.data, "expires_at")));
	char *snap = strdup(s0__json_str0(r.data, "id"));
	rc_free(&r);
	r = CALL("GET", sp);
	ck_assert_int_eq(s0__json_i64(r.data, "count", 0), 1);
	rc_free(&r);
	r = CALL("POST", sp, .body = "{\"expires_at\":\"2025-01-01T00:00:00Z\"}");
	ck_assert_str_eq(rc_err_message(&r), "rootfs snapshot expires_at must be in the future");
	expect_error(&r, 400, "bad_request");
	char body[256];
	snprintf(body, sizeof body, "{\"snapshot_id\":\"%s\"}", snap);
	r = CALL("POST", rp, .body = body);
	expect_error(&r, 409, "conflict");
	r = CALL("POST", pp);
	rc_free(&r);
	lf_quiesce(&f);
	r = CALL("POST", rp, .body = body);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(s0__json_str0(r.data, "status"), "paused");
	rc_free(&r);
	r = CALL("POST", fk, .body = "{}");
	ck_assert_msg(r.status == 201, "%s", r.resp.body.data);
	ck_assert_str_eq(s0__json_str0(r.data, "source_sandbox_id"), id);
	const cJSON *child = cJSON_GetObjectItem(r.data, "sandbox");
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(child, "paused")));
	ck_assert_str_eq(s0__json_str0(child, "status"), "paused");
	ck_assert_str_ne(s0__json_str0(child, "id"), id);
	rc_free(&r);
	char *gp = NULL;
	ck_assert_int_ge(asprintf(&gp, "/api/v1/sandbox-rootfs-snapshots/%s", snap), 0);
	r = CALL("GET", gp);
	ck_assert_int_eq(r.status, 200);
	rc_free(&r);
	r = CALL("GET", gp, .team = "team_b");
	expect_error(&r, 404, "not_found");
	r = CALL("DELETE", gp);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(r.data, "deleted")));
	rc_free(&r);
	r = CALL("GET", gp);
	expect_error(&r, 404, "not_found");
	free(gp);
	free(snap);
	free(sp);
	free(rp);
	free(fk);
	free(pp);
	free(id);
}
END_TEST

START_TEST(engine_validation_and_errors)
{
	rc_result r = CALL("POST", "/api/v1/sandboxes", .body = "{\"template\":\"nope\"}");
	expect_error(&r, 404, "not_found");
	r = CALL("POST", "/api/v1/sandboxes",
	         .body = "{\"template\":\"default\",\"config\":{\"resources\":{\"memory\":\"1Ki\"}}}");
	expect_error(&r, 400, "bad_request");
	r = CALL("GET", "/api/v1/sandboxes/sb-none");
	expect_error(&r, 404, "not_found");
	r = CALL("POST", "/api/v1/sandboxes/sb-none/pause");
	expect_error(&r, 404, "not_found");
	r = CALL("GET", "/api/v1/sandboxes/sb-none/files", .query = "path=/x");
	expect_error(&r, 404, "not_found");
	char *id = strdup(claim(NULL));
	char *p = path_of(id, "");
	r = CALL("PUT", p, .body = "{\"config\":{\"ttl\":30,\"auto_resume\":false}}");
	ck_assert_int_eq(r.status, 200);
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(r.data, "auto_resume")));
	ck_assert_str_eq(s0__json_str0(r.data, "expires_at"), "2026-01-01T00:00:30Z");
	rc_free(&r);
	r = CALL("GET", p, .zero_time = true);
	ck_assert_str_eq(s0__json_str0(r.data, "hard_expires_at"), "0001-01-01T00:00:00Z");
	rc_free(&r);
	free(p);
	free(id);
}
END_TEST

START_TEST(files_through_the_engine)
{
	char *id = strdup(claim(NULL));
	char *fp = path_of(id, "/files"), *pp = path_of(id, "/pause"), *p = path_of(id, "");
	rc_result r = CALL("POST", fp, .query = "path=/workspace/hello.txt", .body = "hi there");
	ck_assert_msg(r.status == 200, "%s", r.resp.body.data);
	rc_free(&r);
	r = CALL("POST", fp, .query = "path=/tmp/scratch", .body = "gone after pause");
	ck_assert_int_eq(r.status, 200);
	rc_free(&r);
	r = CALL("POST", pp);
	rc_free(&r);
	lf_quiesce(&f);
	/* auto_resume wakes it for the read; /tmp did not survive the pause */
	r = CALL("GET", fp, .query = "path=/workspace/hello.txt");
	ck_assert_msg(r.status == 200, "%s", r.resp.body.data);
	ck_assert_str_eq(r.resp.body.data, "hi there");
	rc_free(&r);
	r = CALL("GET", fp, .query = "path=/tmp/scratch");
	expect_error(&r, 404, "file_not_found");
	r = CALL("GET", p);
	ck_assert_str_eq(s0__json_str0(r.data, "status"), "running");
	rc_free(&r);
	/* with auto_resume off a paused sandbox refuses runtime access */
	r = CALL("PUT", p, .body = "{\"config\":{\"auto_resume\":false}}");
	rc_free(&r);
	r = CALL("POST", pp);
	rc_free(&r);
	lf_quiesce(&f);
	r = CALL("GET", fp, .query = "path=/workspace/hello.txt");
	ck_assert_str_eq(rc_err_message(&r), "sandbox is not running and auto_resume is disabled");
	expect_error(&r, 503, "unavailable");
	free(fp);
	free(pp);
	free(p);
	free(id);
}
END_TEST

Suite *s0_router_engine_suite(void)
{
	Suite *s = suite_create("router_engine");
	TCase *tc = tcase_create("engine");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, claim_get_list_shapes);
	tcase_add_test(tc, teams_do_not_see_each_other);
	tcase_add_test(tc, pause_resume_refresh_cycle);
	tcase_add_test(tc, snapshots_restore_fork);
	tcase_add_test(tc, engine_validation_and_errors);
	tcase_add_test(tc, files_through_the_engine);
	suite_add_tcase(s, tc);
	return s;
}
