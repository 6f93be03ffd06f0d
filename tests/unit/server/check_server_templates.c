/*
 * Templates of teams over `s0 serve` through this library's HTTP client
 * (sandbox0/templates.h): create from a spec or a tar archive, list, get,
 * delete, claim from them; another team's template answers 404; a name used
 * twice 409; a template in use 409; hostile archives 400/413.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/json.h"
#include "local/api/router.h"
#include "local/lifecycle/templates.h"
#include "local/rootfs/tarin.h"
#include "client_steps.h"
#include "local_fixture.h"
#include "check_main.h"
#include "sandbox0/sandbox0.h"
#include "sandbox0/server.h"
#include "server_test.h"
#include "tar_build.h"

static lf f;
static s0_server *srv;
static s0_client *ca, *cb;

static void setup(void)
{
	lf_open(&f, false);
	srv = cs_serve_keys(f.local);
	ca = cs_client(srv, KEY_A, NULL);
	cb = cs_client(srv, KEY_B, NULL);
}

static void teardown(void)
{
	s0_client_free(ca);
	s0_client_free(cb);
	s0_server_free(srv);
	srv = NULL;
	lf_close(&f);
}

/* Entries of a directory other than . and .. (0 when it does not exist). */
static int entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0;
	while (d && (de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

START_TEST(template_from_tar_is_the_rootfs)
{
	static const tar_member m[] = {
		{'d', "app", NULL},
		{'f', "app/main.py", "print('hi')\n"},
		{'f', "./workspace/readme.txt", "hello"},
		{'l', "app/passwd", "/etc/passwd"}, /* a link inside the sandbox: kept */
		{'h', "app/again.py", "app/main.py"},
	};
	size_t len = 0;
	void *tar = tar_build(m, sizeof m / sizeof m[0], &len);
	char *json = NULL;
	s0_error *err = NULL;
	int rc = s0_template_create_tar(ca, "Py-App", tar, len, &json, &err);
	ck_assert_msg(rc == S0_OK, "create: %s", err ? s0_error_message(err) : "?");
	free(tar);
	cJSON *o = cJSON_Parse(json);
	s0_free(json);
	ck_assert_str_eq(s0__json_str0(o, "template_id"), "py-app"); /* lowercased */
	ck_assert_str_eq(s0__json_str0(o, "scope"), "team");
	ck_assert_str_eq(s0__json_str0(o, "team_id"), "team_a");
	ck_assert_str_eq(s0__json_str0(o, "created_at"), "2026-01-01T00:00:00Z");
	cJSON_Delete(o);

	char *sb = cs_claim(ca, "py-app");
	void *data = NULL;
	size_t n = 0;
	ck_assert_int_eq(s0_files_read(ca, sb, "/app/main.py", &data, &n, NULL), S0_OK);
	ck_assert_uint_eq(n, 12);
	ck_assert_mem_eq(data, "print('hi')\n", 12);
	s0_free(data);
	ck_assert_int_eq(s0_files_read(ca, sb, "/app/again.py", &data, &n, NULL), S0_OK);
	ck_assert_uint_eq(n, 12);
	s0_free(data);
	ck_assert_int_eq(s0_files_read(ca, sb, "/workspace/readme.txt", &data, &n, NULL), S0_OK);
	ck_assert_mem_eq(data, "hello", 5);
	s0_free(data);
	s0_file_info *fi = NULL;
	ck_assert_int_eq(s0_files_stat(ca, sb, "/app/passwd", &fi, NULL), S0_OK);
	ck_assert_int_eq(s0_file_info_type(fi), S0_FILE_TYPE_SYMLINK);
	s0_file_info_free(fi);

	/* in use: refused; after the sandbox is gone: deleted */
	EXPECT(s0_template_delete(ca, "py-app", &err), S0_ECONFLICT, 409, "used by 1");
	ck_assert_int_eq(s0_sandbox_delete(ca, sb, NULL), S0_OK);
	lf_quiesce(&f);
	ck_assert_int_eq(s0_template_delete(ca, "py-app", NULL), S0_OK);
	EXPECT(s0_template_get(ca, "py-app", &json, &err), S0_ENOTFOUND, 404, "not found");
	free(sb);
}
END_TEST

START_TEST(templates_are_team_scoped)
{
	char *json = NULL;
	s0_error *err = NULL;
	ck_assert_int_eq(s0_template_create(ca, "a-only",
	                                    "{\"description\":\"mine\",\"pod\":{\"emptyDirMounts\":"
	                                    "[{\"mountPath\":\"/cache\"}]}}",
	                                    &json, NULL),
	                 S0_OK);
	cJSON *o = cJSON_Parse(json);
	s0_free(json);
	const cJSON *spec = cJSON_GetObjectItem(o, "spec");
	ck_assert_str_eq(s0__json_str0(spec, "description"), "mine");
	cJSON_Delete(o);

	/* team b sees default only; its claim, get and delete of a's answer 404 */
	ck_assert_int_eq(s0_template_list(cb, &json, NULL), S0_OK);
	o = cJSON_Parse(json);
	s0_free(json);
	ck_assert_int_eq(s0__json_i64(o, "count", -1), 1);
	ck_assert_str_eq(s0__json_str0(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "templates"), 0),
	                               "template_id"),
	                 "default");
	cJSON_Delete(o);
	ck_assert_int_eq(s0_template_list(ca, &json, NULL), S0_OK);
	o = cJSON_Parse(json);
	s0_free(json);
	ck_assert_int_eq(s0__json_i64(o, "count", -1), 2);
	cJSON_Delete(o);
	EXPECT(s0_template_get(cb, "a-only", &json, &err), S0_ENOTFOUND, 404, "not found");
	EXPECT(s0_template_delete(cb, "a-only", &err), S0_ENOTFOUND, 404, "not found");
	s0_sandbox_info *info = NULL;
	EXPECT(s0_sandbox_claim(cb, "a-only", NULL, NULL, &info, &err), S0_ENOTFOUND, 404,
	       "template not found");

	/* the runtime-only mount of the spec is there, empty */
	char *sb = cs_claim(ca, "a-only");
	s0_file_info *fi = NULL;
	ck_assert_int_eq(s0_files_stat(ca, sb, "/cache", &fi, NULL), S0_OK);
	ck_assert_int_eq(s0_file_info_type(fi), S0_FILE_TYPE_DIR);
	s0_file_info_free(fi);
	ck_assert_int_eq(s0_sandbox_delete(ca, sb, NULL), S0_OK);
	free(sb);

	/* a name used twice, by the same team or another: 409 */
	EXPECT(s0_template_create(ca, "a-only", NULL, &json, &err), S0_ECONFLICT, 409,
	       "already exists");
	EXPECT(s0_template_create(cb, "A-ONLY ", NULL, &json, &err), S0_ECONFLICT, 409,
	       "already exists");
	EXPECT(s0_template_create(cb, "default", NULL, &json, &err), S0_ECONFLICT, 409,
	       "already exists");
	/* public templates cannot be deleted; unknown names are 404 */
	EXPECT(s0_template_delete(ca, "default", &err), S0_EFORBIDDEN, 403, "public");
	EXPECT(s0_template_get(ca, "nope", &json, &err), S0_ENOTFOUND, 404, "not found");
	EXPECT(s0_template_delete(ca, "nope", &err), S0_ENOTFOUND, 404, "not found");
	/* bad names and specs */
	EXPECT(s0_template_create(ca, "a/b", NULL, &json, &err), S0_EINVAL, 400, "'/'");
	EXPECT(s0_template_create(ca, "with space", NULL, &json, &err), S0_EINVAL, 400,
	       "spaces");
	/* dot segments: a URL client could never get or delete them again */
	EXPECT(s0_template_create(ca, "..", NULL, &json, &err), S0_EINVAL, 400, "\"..\"");
	EXPECT(s0_template_create(ca, ".", NULL, &json, &err), S0_EINVAL, 400, "\"..\"");
	EXPECT(s0_template_create(ca, " . ", NULL, &json, &err), S0_EINVAL, 400, "\"..\"");
	EXPECT(s0_template_create(ca, "x", "[1]", &json, &err), S0_EINVAL, 0, "object");
}
END_TEST

/* Each hostile archive is refused with its reason, and nothing is stored. */
START_TEST(hostile_tars_refused)
{
	static const struct {
		tar_member m[3];
		size_t n;
		const char *why;
	} cases[] = {
		{{{'f', "../escape.txt", "x"}}, 1, "\"..\" component"},
		{{{'f', "a/../../escape.txt", "x"}}, 1, "\"..\" component"},
		{{{'f', "/etc/evil", "x"}}, 1, "absolute path"},
		{{{'l', "out", "/"}, {'f', "out/etc/evil", "x"}}, 2, "symbolic link"},
		{{{'l', "up", "../../.."}, {'d', "up/x", NULL}}, 2, "symbolic link"},
		{{{'l', "ln", "/tmp"}, {'d', "ln", NULL}}, 2, "replaces a symbolic link"},
		{{{'h', "hl", "/etc/shadow"}}, 1, "hard link target"},
		{{{'h', "hl", "../outside"}}, 1, "hard link target"},
		{{{'c', "dev/null2", NULL}}, 1, "device nodes"},
		/* entries the disk writer cannot create: bad input too, not 500 */
		{{{'d', "a", NULL}, {'f', "a/b", "x"}, {'f', "a", "x"}}, 3, "cannot be created"},
		{{{'h', "h", "not-there"}}, 1, "cannot be created"},
		{{{'d', "dd", NULL}, {'h', "h", "dd"}}, 2, "cannot be created"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t len = 0;
		void *tar = tar_build(cases[i].m, cases[i].n, &len);
		char name[32], *json = NULL;
		snprintf(name, sizeof name, "bad-%zu", i);
		s0_error *err = NULL;
		int rc = s0_template_create_tar(ca, name, tar, len, &json, &err);
		free(tar);
		ck_assert_msg(rc == S0_EINVAL, "case %zu: rc %d", i, rc);
		ck_assert_int_eq(s0_error_http_status(err), 400);
		ck_assert_str_eq(s0_error_wire_code(err), "bad_request");
		ck_assert_msg(strstr(s0_error_message(err), cases[i].why), "case %zu: %s", i,
		              s0_error_message(err));
		ck_assert_msg(!strstr(s0_error_message(err), f.dir), "case %zu names the data dir: %s",
		              i, s0_error_message(err));
		s0_error_free(err);
		err = NULL;
		EXPECT(s0_template_get(ca, name, &json, &err), S0_ENOTFOUND, 404, "not found");
	}
	/* not a tar at all, and empty */
	char *json = NULL;
	s0_error *err = NULL;
	EXPECT(s0_template_create_tar(ca, "junk", "this is not a tar archive", 25, &json, &err),
	       S0_EINVAL, 400, "template tar");
	EXPECT(s0_template_create_tar(ca, "junk", "", 0, &json, &err), S0_EINVAL, 0, "empty");
	/* nothing left behind in the data directory's scratch space */
	char *tmp = NULL;
	ck_assert_int_ne(asprintf(&tmp, "%s/tmp", f.dir), -1);
	ck_assert_int_eq(entries(tmp), 0);
	free(tmp);
}
END_TEST

/* An archive over the upload cap is 413 before its bytes are read (the
 * buffer is calloc'd and never touched: curl waits for 100-continue). */
START_TEST(template_upload_over_the_cap_is_413)
{
	size_t n = S0__ROUTER_TEMPLATE_BODY_MAX + 1;
	void *big = calloc(1, n);
	ck_assert_ptr_nonnull(big);
	char *url = th_url(s0_server_port(srv), "/api/v1/templates?template_id=big");
	const char *hs[] = {"Authorization: Bearer " KEY_A, "Content-Type: application/x-tar", NULL};
	th_req q = {.method = "POST", .url = url, .headers = hs, .body = big, .body_len = n,
	            .expect_continue = true};
	th_resp r;
	th_do(&q, &r);
	ck_assert_int_eq(r.status, 413);
	cJSON *j = resp_json(&r);
	ck_assert_str_eq(err_code(j), "request_too_large");
	cJSON_Delete(j);
	th_resp_free(&r);
	free(url);
	free(big);
	char *json = NULL;
	s0_error *err = NULL;
	EXPECT(s0_template_get(ca, "big", &json, &err), S0_ENOTFOUND, 404, "not found");
}
END_TEST

/* Media types are case-insensitive (RFC 9110 §8.3.1): "Application/X-Tar"
 * is a tar upload, not JSON; a longer type that merely starts the same is not. */
START_TEST(tar_content_type_is_case_insensitive)
{
	static const tar_member m[] = {{'f', "a.txt", "x"}};
	size_t len = 0;
	void *tar = tar_build(m, 1, &len);
	char *url = th_url(s0_server_port(srv), "/api/v1/templates?template_id=ct");
	const char *hs[] = {"Authorization: Bearer " KEY_A, "Content-Type: Application/X-Tar", NULL};
	th_req q = {.method = "POST", .url = url, .headers = hs, .body = tar, .body_len = len};
	th_resp r;
	th_do(&q, &r);
	ck_assert_int_eq(r.status, 201);
	th_resp_free(&r);
	const char *hs2[] = {"Authorization: Bearer " KEY_A, "Content-Type: application/x-tarball",
	                     NULL};
	free(url);
	url = th_url(s0_server_port(srv), "/api/v1/templates?template_id=ct2");
	th_req q2 = {.method = "POST", .url = url, .headers = hs2, .body = tar, .body_len = len};
	th_do(&q2, &r);
	ck_assert_int_eq(r.status, 400); /* read as JSON */
	th_resp_free(&r);
	free(url);
	free(tar);
}
END_TEST

/* The content limits of an archive (tarin.h), at small limits. */
START_TEST(tar_limits)
{
	static const tar_member m[] = {{'f', "a", "0123456789"}, {'f', "b", "0123456789"}};
	size_t len = 0;
	void *tar = tar_build(m, 2, &len);
	char *dir = s0_test_tmpdir("tarin");
	s0_error *err = NULL;
	ck_assert_int_eq(s0__tar_extract(tar, len, dir, 15, 100, &err), S0_ETOOLARGE);
	ck_assert_str_eq(s0_error_reason(err), "template_too_large");
	s0_error_free(err);
	s0_test_rmrf(dir);
	free(dir);
	dir = s0_test_tmpdir("tarin");
	err = NULL;
	ck_assert_int_eq(s0__tar_extract(tar, len, dir, 100, 1, &err), S0_ETOOLARGE);
	ck_assert_ptr_nonnull(strstr(s0_error_message(err), "more than 1 entries"));
	s0_error_free(err);
	s0_test_rmrf(dir);
	free(dir);
	dir = s0_test_tmpdir("tarin");
	ck_assert_int_eq(s0__tar_extract(tar, len, dir, 20, 2, NULL), S0_OK);
	free(tar);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

/* The root directory entry `tar -C DIR -cf F .` writes ("./") is the
 * destination itself: skipped, not refused; a non-directory named so is. */
START_TEST(tar_root_entry_is_the_destination)
{
	static const tar_member m[] = {
		{'d', "./", NULL}, {'d', ".", NULL}, {'d', "./app/", NULL}, {'f', "./app/x", "hi"}};
	size_t len = 0;
	void *tar = tar_build(m, sizeof m / sizeof m[0], &len);
	char *dir = s0_test_tmpdir("tarin");
	s0_error *err = NULL;
	int rc = s0__tar_extract(tar, len, dir, 100, 100, &err);
	ck_assert_msg(rc == S0_OK, "extract: %s", err ? s0_error_message(err) : "?");
	free(tar);
	char *p = NULL;
	ck_assert_int_ne(asprintf(&p, "%s/app/x", dir), -1);
	struct stat st;
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_size, 2);
	free(p);
	s0_test_rmrf(dir);
	free(dir);

	static const tar_member bad[] = {{'f', "./", "x"}};
	tar = tar_build(bad, 1, &len);
	dir = s0_test_tmpdir("tarin");
	ck_assert_int_eq(s0__tar_extract(tar, len, dir, 100, 100, &err), S0_EINVAL);
	ck_assert_ptr_nonnull(strstr(s0_error_message(err), "empty name"));
	s0_error_free(err);
	free(tar);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

Suite *s0_server_templates_suite(void)
{
	Suite *s = suite_create("server_templates");
	TCase *tc = tcase_create("templates");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, template_from_tar_is_the_rootfs);
	tcase_add_test(tc, templates_are_team_scoped);
	tcase_add_test(tc, hostile_tars_refused);
	tcase_add_test(tc, template_upload_over_the_cap_is_413);
	tcase_add_test(tc, tar_content_type_is_case_insensitive);
	TCase *lim = tcase_create("limits");
	tcase_add_test(lim, tar_limits);
	tcase_add_test(lim, tar_root_entry_is_the_destination);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, lim);
	return s;
}
