/*
 * The files endpoints (docs/wire.md §3.9–§3.10) over a real RootFS on an
 * in-memory device and a runtime tmpfs, reached through the fake engine's
 * runtime access.
 */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "fake_engine.h"
#include "local/fsview/router.h"
#include "router_call.h"
#include "rt_support.h"
#include "server_test.h"

static s0__engine *eng;
static rt_fs fs;
static s0__tmpfs *tmp;
static s0__files_ns ns;

#define CALL(...) CALL_(__VA_ARGS__, .pad_ = 0)
#define CALL_(m, p, ...) rc_call(eng, m, p, &(rc_opts){__VA_ARGS__})
#define F "/api/v1/sandboxes/sb-1/files"

static void setup(void)
{
	eng = fake_engine_new();
	rt_open_fresh(&fs, 64 * MiB);
	ck_assert_int_eq(s0__tmpfs_new_runtime(NULL, 0, &tmp, NULL), S0_OK);
	ck_assert_int_eq(s0__files_ns_init(&ns, fs.fs, tmp, NULL, 0, NULL), S0_OK);
	fake_set_files(eng, &ns);
}

static void teardown(void)
{
	s0__files_ns_clear(&ns);
	s0__tmpfs_free(tmp);
	rt_close(&fs);
	fake_engine_free(eng);
}

static void expect_error(rc_result *r, int status, const char *code)
{
	ck_assert_msg(r->status == status, "status %d, want %d: %s", r->status, status,
	              r->resp.body.data);
	ck_assert_str_eq(rc_err_code(r), code);
	rc_free(r);
}

static void expect_flag(rc_result *r, int status, const char *key)
{
	ck_assert_msg(r->status == status, "status %d: %s", r->status, r->resp.body.data);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(r->data, key)));
	ck_assert_int_eq(cJSON_GetArraySize(r->data), 1);
	rc_free(r);
}

START_TEST(write_then_read_raw_and_base64)
{
	unsigned char bin[256];
	for (int i = 0; i < 256; i++)
		bin[i] = (unsigned char)i;
	rc_result r = CALL("POST", F, .query = "path=/workspace/a%20b/bin.dat", .body = (char *)bin,
	                   .body_len = sizeof bin);
	expect_flag(&r, 200, "written");
	r = CALL("GET", F, .query = "path=/workspace/a+b/bin.dat");
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(rc_header(&r, "Content-Type"), "application/octet-stream");
	ck_assert_uint_eq(r.resp.body.len, sizeof bin);
	ck_assert_mem_eq(r.resp.body.data, bin, sizeof bin);
	rc_free(&r);
	static const char *const acc[] = {"Accept", "application/json", NULL};
	static const char *const ct[] = {"Content-Type", "application/json; charset=utf-8", NULL};
	const char *const *forms[] = {acc, ct};
	for (int k = 0; k < 2; k++) {
		r = CALL("GET", F, .query = "path=a%20b/bin.dat", .headers = forms[k]);
		ck_assert_int_eq(r.status, 200);
		ck_assert_str_eq(s0__json_str0(r.data, "encoding"), "base64");
		unsigned char out[300];
		size_t n = 0;
		const char *b64 = s0__json_str0(r.data, "content");
		ck_assert_int_eq(sodium_base642bin(out, sizeof out, b64, strlen(b64), NULL, &n, NULL,
		                                   sodium_base64_VARIANT_ORIGINAL),
		                 0);
		ck_assert_uint_eq(n, sizeof bin);
		ck_assert_mem_eq(out, bin, n);
		rc_free(&r);
	}
	/* an empty write makes an empty file */
	r = CALL("POST", F, .query = "path=/workspace/empty");
	expect_flag(&r, 200, "written");
	r = CALL("GET", F, .query = "path=/workspace/empty");
	ck_assert_int_eq(r.status, 200);
	ck_assert_uint_eq(r.resp.body.len, 0);
	rc_free(&r);
}
END_TEST

START_TEST(mkdir_stat_list_move_delete)
{
	rc_result r = CALL("POST", F, .query = "path=/workspace/d/e&mkdir=true&recursive=true",
	                   .body = "");
	expect_flag(&r, 201, "created");
	r = CALL("POST", F, .query = "path=/workspace/d&mkdir=true", .body = "");
	expect_error(&r, 409, "path_exists");
	r = CALL("POST", F, .query = "path=/workspace/x/y&mkdir=true");
	expect_error(&r, 404, "directory_not_found");
	r = CALL("POST", F, .query = "path=/workspace/d/f.txt", .body = "hello");
	expect_flag(&r, 200, "written");
	r = CALL("GET", F "/stat", .query = "path=/workspace/d/f.txt");
	ck_assert_int_eq(r.status, 200);
	static const char *const keys[] = {"name", "path", "type", "size", "mode", "mod_time",
	                                   "is_link", NULL};
	ck_assert(rc_has_keys(r.data, keys));
	ck_assert_str_eq(s0__json_str0(r.data, "name"), "f.txt");
	ck_assert_str_eq(s0__json_str0(r.data, "path"), "/workspace/d/f.txt");
	ck_assert_str_eq(s0__json_str0(r.data, "type"), "file");
	ck_assert_str_eq(s0__json_str0(r.data, "mode"), "0644");
	ck_assert_int_eq(s0__json_i64(r.data, "size", 0), 5);
	rc_free(&r);
	r = CALL("GET", F "/list", .query = "path=/workspace/d");
	ck_assert_int_eq(r.status, 200);
	const cJSON *entries = cJSON_GetObjectItem(r.data, "entries");
	ck_assert_int_eq(cJSON_GetArraySize(entries), 2);
	ck_assert_str_eq(s0__json_str0(cJSON_GetArrayItem(entries, 0), "path"), "/workspace/d/e");
	rc_free(&r);
	r = CALL("GET", F "/list", .query = "path=/workspace/d/e");
	ck_assert(cJSON_IsArray(cJSON_GetObjectItem(r.data, "entries")));
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(r.data, "entries")), 0);
	rc_free(&r);
	r = CALL("POST", F "/move",
	         .body = "{\"source\":\"/workspace/d/f.txt\",\"destination\":\"/workspace/n/g.txt\"}");
	expect_flag(&r, 200, "moved");
	r = CALL("GET", F, .query = "path=/workspace/n/g.txt");
	ck_assert_str_eq(r.resp.body.data, "hello");
	rc_free(&r);
	r = CALL("DELETE", F, .query = "path=/workspace/d");
	expect_flag(&r, 200, "deleted");
	r = CALL("DELETE", F, .query = "path=/workspace/never");
	expect_flag(&r, 200, "deleted");
	r = CALL("GET", F "/stat", .query = "path=/workspace/d");
	expect_error(&r, 404, "file_not_found");
}
END_TEST

START_TEST(files_errors)
{
	rc_result r = CALL("GET", F, .query = "path=/workspace/none");
	expect_error(&r, 404, "file_not_found");
	r = CALL("GET", F, .query = "path=/workspace");
	expect_error(&r, 409, "path_not_file");
	r = CALL("POST", F, .query = "path=/workspace/f", .body = "x");
	rc_free(&r);
	r = CALL("GET", F "/list", .query = "path=/workspace/f");
	expect_error(&r, 409, "path_not_directory");
	r = CALL("GET", F "/list", .query = "path=/workspace/nodir");
	expect_error(&r, 404, "directory_not_found");
	r = CALL("GET", F);
	expect_error(&r, 400, "invalid_request");
	r = CALL("GET", F, .query = "path=");
	expect_error(&r, 400, "invalid_request");
	r = CALL("GET", F, .query = "path=/workspace/f&stat=1");
	expect_error(&r, 400, "invalid_request");
	r = CALL("GET", F, .query = "list&path=/workspace/f");
	expect_error(&r, 400, "invalid_request");
	r = CALL("GET", F, .query = "path=/workspace/f%00.txt");
	ck_assert_int_eq(r.status, 400);
	rc_free(&r);
	r = CALL("POST", F "/move", .body = "{\"source\":\"/workspace/f\"}");
	expect_error(&r, 400, "invalid_paths");
	r = CALL("POST", F "/move", .body = "not json");
	expect_error(&r, 400, "invalid_request");
	r = CALL("POST", F "/move",
	         .body = "{\"source\":\"/workspace/f\",\"destination\":\"/x\","
	                 "\"destination\":\"/y\"}");
	expect_error(&r, 400, "invalid_request");
	r = CALL("POST", F "/move");
	expect_error(&r, 400, "invalid_request");
	r = CALL("POST", F "/move", .body = "{\"source\":\"/workspace/none\",\"destination\":\"/x\"}");
	expect_error(&r, 404, "file_not_found");
	r = CALL("PUT", F, .query = "path=/workspace/f");
	expect_error(&r, 405, "method_not_allowed");
	/* nothing is read past the limit: the length alone decides */
	r = CALL("POST", F, .query = "path=/workspace/big", .body = "x",
	         .body_len = S0__ROUTER_FILE_BODY_MAX + 1, .raw = true);
	expect_error(&r, 413, "file_too_large");
	r = CALL("POST", F, .query = "path=/workspace/big", .body = "x",
	         .body_len = S0__ROUTER_FILE_BODY_MAX + 1);
	expect_error(&r, 413, "file_too_large");
	r = CALL("GET", F "/stat", .query = "path=/workspace/big");
	expect_error(&r, 404, "file_not_found");
}
END_TEST

START_TEST(runtime_paths_and_access_errors)
{
	rc_result r = CALL("POST", F, .query = "path=/tmp/t.txt", .body = "in tmpfs");
	expect_flag(&r, 200, "written");
	r = CALL("GET", F, .query = "path=/tmp/t.txt");
	ck_assert_str_eq(r.resp.body.data, "in tmpfs");
	rc_free(&r);
	r = CALL("GET", "/api/v1/sandboxes/sb-paused/files", .query = "path=/x");
	ck_assert_str_eq(rc_err_message(&r), "sandbox is not running and auto_resume is disabled");
	expect_error(&r, 503, "unavailable");
	r = CALL("GET", "/api/v1/sandboxes/sb-waking/files/list", .query = "path=/");
	ck_assert_str_eq(rc_err_message(&r), "sandbox is waking up");
	expect_error(&r, 503, "unavailable");
	ck_assert_int_eq(fake_last(eng)->duration, S0__ROUTER_WAKE_BUDGET_MS);
	fake_fail_next(eng, S0_ERESUME, "resume_failed", "sandbox resume failed", -1, NULL);
	r = CALL("DELETE", F, .query = "path=/x");
	expect_error(&r, 503, "sandbox_resume_failed");
	/* validation comes before waking anything */
	int calls = fake_last(eng)->calls;
	r = CALL("GET", "/api/v1/sandboxes/sb-waking/files");
	expect_error(&r, 400, "invalid_request");
	ck_assert_int_eq(fake_last(eng)->calls, calls);
}
END_TEST

Suite *s0_router_files_suite(void)
{
	Suite *s = suite_create("router_files");
	TCase *tc = tcase_create("files");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, write_then_read_raw_and_base64);
	tcase_add_test(tc, mkdir_stat_list_move_delete);
	tcase_add_test(tc, files_errors);
	tcase_add_test(tc, runtime_paths_and_access_errors);
	suite_add_tcase(s, tc);
	return s;
}
