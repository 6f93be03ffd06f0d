/* The files API on the wire (docs/wire.md §3.9): query strings, raw and base64 bodies. */
#include <stdlib.h>
#include <string.h>

#include "client_test.h"

static void assert_auth(const s0t_request *q)
{
	ck_assert_str_eq(s0t_req_header(q, "Authorization"), "Bearer " CT_TOKEN);
}

START_TEST(test_read_raw_binary)
{
	static const unsigned char bytes[] = {0x00, 0xff, 'a', 0x00, '\n', 0x80, 0x7f, 0x00};
	s0t_push(R, 200, "application/octet-stream", bytes, sizeof bytes);
	void *data = NULL;
	size_t len = 0;
	ck_assert_int_eq(s0_files_read(C, "sb-1", "/workspace/a b+c.bin", &data, &len, NULL), S0_OK);
	ck_assert_uint_eq(len, sizeof bytes);
	ck_assert_mem_eq(data, bytes, sizeof bytes);
	ck_assert_int_eq(((char *)data)[len], '\0');
	s0_free(data);
	const s0t_request *q = s0t_responder_req(R, 0);
	CT_ASSERT_REQ(q, "GET", "/api/v1/sandboxes/sb-1/files", "path=%2Fworkspace%2Fa%20b%2Bc.bin");
	assert_auth(q);
	ck_assert_uint_eq(q->body_len, 0);
	ck_assert_ptr_null(s0t_req_header(q, "Content-Type"));
	/* The raw form is what the client asks for (docs/wire.md §3.9: Accept with
	 * application/json would make procd answer base64 JSON). */
	const char *accept = s0t_req_header(q, "Accept");
	ck_assert(!accept || !strstr(accept, "application/json"));
}
END_TEST

START_TEST(test_read_empty_and_untyped)
{
	s0t_push(R, 200, "application/octet-stream", NULL, 0);
	s0t_push(R, 200, NULL, "plain text", (size_t)-1);
	void *data = NULL;
	size_t len = 99;
	ck_assert_int_eq(s0_files_read(C, "sb-1", "empty", &data, &len, NULL), S0_OK);
	ck_assert_uint_eq(len, 0);
	ck_assert_ptr_nonnull(data);
	ck_assert_str_eq(data, "");
	s0_free(data);
	ck_assert_int_eq(s0_files_read(C, "sb-1", "t.txt", &data, &len, NULL), S0_OK);
	ck_assert_uint_eq(len, 10);
	ck_assert_str_eq(data, "plain text");
	s0_free(data);
	CT_ASSERT_REQ(s0t_responder_req(R, 0), "GET", "/api/v1/sandboxes/sb-1/files", "path=empty");
}
END_TEST

/* The JSON read form {content, encoding:"base64"} (PY/JS decode by content type). */
START_TEST(test_read_base64_json)
{
	/* "hello\0world\xff" */
	s0t_push_ok(R, 200, "{\"content\":\"aGVsbG8Ad29ybGT/\",\"encoding\":\"base64\"}");
	s0t_push_ok(R, 200, "{\"content\":\"\",\"encoding\":\"base64\"}");
	s0t_push(R, 200, "application/json; charset=utf-8",
	         "{\"success\":true,\"data\":{\"content\":\"YWJj\"}}", (size_t)-1);
	void *data = NULL;
	size_t len = 0;
	ck_assert_int_eq(s0_files_read(C, "sb-1", "/a", &data, &len, NULL), S0_OK);
	ck_assert_uint_eq(len, 12);
	ck_assert_mem_eq(data, "hello\0world\xff", 12);
	s0_free(data);
	ck_assert_int_eq(s0_files_read(C, "sb-1", "/a", &data, &len, NULL), S0_OK);
	ck_assert_uint_eq(len, 0);
	s0_free(data);
	ck_assert_int_eq(s0_files_read(C, "sb-1", "/a", &data, &len, NULL), S0_OK);
	ck_assert_uint_eq(len, 3);
	ck_assert_str_eq(data, "abc");
	s0_free(data);
}
END_TEST

START_TEST(test_read_bad_json_forms)
{
	s0t_push_ok(R, 200, "{\"content\":\"!!!not base64\",\"encoding\":\"base64\"}");
	s0t_push_ok(R, 200, "{\"content\":\"abc\",\"encoding\":\"utf8\"}");
	s0t_push_ok(R, 200, "{\"encoding\":\"base64\"}");
	s0t_push_json(R, 200, "{\"success\":true,\"data\":{\"content\":\"YW");
	for (int i = 0; i < 4; i++) {
		void *data = (void *)0x1;
		size_t len = 77;
		s0_error *e = NULL;
		ck_assert_int_eq(s0_files_read(C, "sb-1", "/a", &data, &len, &e), S0_EPROTOCOL);
		ck_assert_ptr_eq(data, (void *)0x1); /* untouched */
		ck_assert_uint_eq(len, 77);
		s0_error_free(e);
	}
}
END_TEST

START_TEST(test_write_binary)
{
	s0t_push_ok(R, 200, "{\"written\":true}");
	s0t_push_ok(R, 200, "{\"written\":true}");
	static const unsigned char bytes[] = {0x00, 0x01, 0xfe, 0xff, '{', '}', 0x00};
	ck_assert_int_eq(s0_files_write(C, "sb-1", "/w/x.bin", bytes, sizeof bytes, NULL), S0_OK);
	const s0t_request *q = s0t_responder_req(R, 0);
	CT_ASSERT_REQ(q, "POST", "/api/v1/sandboxes/sb-1/files", "path=%2Fw%2Fx.bin");
	assert_auth(q);
	ck_assert_str_eq(s0t_req_header(q, "Content-Type"), "application/octet-stream");
	ck_assert_str_eq(s0t_req_header(q, "Content-Length"), "7");
	ck_assert_ptr_null(s0t_req_header(q, "Expect"));
	ck_assert_uint_eq(q->body_len, sizeof bytes);
	ck_assert_mem_eq(q->body, bytes, sizeof bytes);
	/* an empty file is an empty octet-stream body */
	ck_assert_int_eq(s0_files_write(C, "sb-1", "/w/empty", NULL, 0, NULL), S0_OK);
	q = s0t_responder_req(R, 1);
	ck_assert_str_eq(s0t_req_header(q, "Content-Type"), "application/octet-stream");
	ck_assert_uint_eq(q->body_len, 0);
	/* local validation */
	ck_assert_int_eq(s0_files_write(C, "sb-1", "/w/x", NULL, 5, NULL), S0_EINVAL);
	s0_error *e = NULL;
	ck_assert_int_eq(s0_files_write(C, "sb-1", "/w/x", bytes, S0_FILES_MAX_WRITE_BYTES + 1, &e),
	                 S0_ETOOLARGE);
	CT_ASSERT_ERR(e, S0_ETOOLARGE, "file_too_large");
	s0_error_free(e);
	ck_assert_int_eq(s0_files_write(C, "sb-1", "", bytes, 1, NULL), S0_EINVAL);
	ck_assert_int_eq(s0_files_write(C, "", "/w/x", bytes, 1, NULL), S0_EINVAL);
	ck_assert_uint_eq(s0t_responder_count(R), 2);
}
END_TEST

START_TEST(test_mkdir_delete)
{
	s0t_push_ok(R, 201, "{\"created\":true}");
	s0t_push_ok(R, 201, "{\"created\":true}");
	s0t_push_ok(R, 200, "{\"deleted\":true}");
	ck_assert_int_eq(s0_files_mkdir(C, "sb-1", "/w/d", false, NULL), S0_OK);
	ck_assert_int_eq(s0_files_mkdir(C, "sb-1", "/w/a/b", true, NULL), S0_OK);
	ck_assert_int_eq(s0_files_delete(C, "sb-1", "/w/d", NULL), S0_OK);
	const s0t_request *q = s0t_responder_req(R, 0);
	CT_ASSERT_REQ(q, "POST", "/api/v1/sandboxes/sb-1/files", "path=%2Fw%2Fd&mkdir=true");
	ck_assert_uint_eq(q->body_len, 0);
	ck_assert_str_eq(s0t_req_header(q, "Content-Type"), "application/octet-stream");
	CT_ASSERT_REQ(s0t_responder_req(R, 1), "POST", "/api/v1/sandboxes/sb-1/files",
	              "path=%2Fw%2Fa%2Fb&mkdir=true&recursive=true");
	q = s0t_responder_req(R, 2);
	CT_ASSERT_REQ(q, "DELETE", "/api/v1/sandboxes/sb-1/files", "path=%2Fw%2Fd");
	ck_assert_uint_eq(q->body_len, 0);
	ck_assert_ptr_null(s0t_req_header(q, "Content-Type"));
	assert_auth(q);

	s0t_push_error(R, 409, "path_exists", "path already exists");
	s0_error *e = NULL;
	ck_assert_int_eq(s0_files_mkdir(C, "sb-1", "/w/d", false, &e), S0_ECONFLICT);
	CT_ASSERT_ERR(e, S0_ECONFLICT, "path_exists");
	s0_error_free(e);
	ck_assert_int_eq(s0_files_mkdir(C, "sb-1", NULL, false, NULL), S0_EINVAL);
	ck_assert_int_eq(s0_files_delete(C, "sb-1", "", NULL), S0_EINVAL);
	ck_assert_uint_eq(s0t_responder_count(R), 4);
}
END_TEST

#define FI_FILE                                                                            \
	"{\"name\":\"a.txt\",\"path\":\"/w/a.txt\",\"type\":\"file\",\"size\":1234,"            \
	"\"mode\":\"0644\",\"mod_time\":\"2030-01-01T00:00:01Z\",\"is_link\":false}"
#define FI_LINK                                                                            \
	"{\"name\":\"l\",\"path\":\"/w/l\",\"type\":\"symlink\",\"size\":5,\"mode\":\"0777\","  \
	"\"mod_time\":\"2030-01-01T00:00:00.250Z\",\"is_link\":true,\"link_target\":\"a.txt\"}"
#define FI_DIR                                                                             \
	"{\"name\":\"d\",\"path\":\"/w/d\",\"type\":\"dir\",\"size\":4096,\"mode\":\"1755\","   \
	"\"mod_time\":\"0001-01-01T00:00:00Z\",\"is_link\":false,\"extra\":[1]}"

START_TEST(test_stat_list)
{
	s0t_push_ok(R, 200, FI_LINK);
	s0t_push_ok(R, 200, "{\"entries\":[" FI_FILE "," FI_DIR "]}");
	s0t_push_ok(R, 200, "{\"entries\":[]}");
	s0_file_info *fi = NULL;
	ck_assert_int_eq(s0_files_stat(C, "sb-1", "/w/l", &fi, NULL), S0_OK);
	CT_ASSERT_REQ(s0t_responder_req(R, 0), "GET", "/api/v1/sandboxes/sb-1/files/stat",
	              "path=%2Fw%2Fl");
	ck_assert_str_eq(s0_file_info_name(fi), "l");
	ck_assert_str_eq(s0_file_info_path(fi), "/w/l");
	ck_assert_int_eq(s0_file_info_type(fi), S0_FILE_TYPE_SYMLINK);
	ck_assert_int_eq(s0_file_info_size_bytes(fi), 5);
	ck_assert_uint_eq(s0_file_info_mode(fi), 0777);
	ck_assert_int_eq(s0_file_info_mod_time_unix_ms(fi), 1893456000250LL);
	ck_assert(s0_file_info_is_link(fi));
	ck_assert_str_eq(s0_file_info_link_target(fi), "a.txt");
	s0_file_info_free(fi);

	s0_file_list *l = NULL;
	ck_assert_int_eq(s0_files_list(C, "sb-1", "/w", &l, NULL), S0_OK);
	CT_ASSERT_REQ(s0t_responder_req(R, 1), "GET", "/api/v1/sandboxes/sb-1/files/list",
	              "path=%2Fw");
	ck_assert_uint_eq(s0_file_list_length(l), 2);
	const s0_file_info *a = s0_file_list_at(l, 0), *d = s0_file_list_at(l, 1);
	ck_assert_int_eq(s0_file_info_type(a), S0_FILE_TYPE_FILE);
	ck_assert_uint_eq(s0_file_info_mode(a), 0644);
	ck_assert_int_eq(s0_file_info_size_bytes(a), 1234);
	ck_assert_int_eq(s0_file_info_mod_time_unix_ms(a), 1893456001000LL);
	ck_assert(!s0_file_info_is_link(a));
	ck_assert_ptr_null(s0_file_info_link_target(a));
	ck_assert_int_eq(s0_file_info_type(d), S0_FILE_TYPE_DIR);
	ck_assert_uint_eq(s0_file_info_mode(d), 01755);
	ck_assert_int_eq(s0_file_info_mod_time_unix_ms(d), 0);
	ck_assert_ptr_null(s0_file_list_at(l, 2));
	s0_file_list_free(l);
	ck_assert_int_eq(s0_files_list(C, "sb-1", "/empty", &l, NULL), S0_OK);
	ck_assert_uint_eq(s0_file_list_length(l), 0);
	s0_file_list_free(l);
}
END_TEST

START_TEST(test_move)
{
	s0t_push_ok(R, 200, "{\"moved\":true}");
	ck_assert_int_eq(s0_files_move(C, "sb-1", "/w/a", "/w/b/c", NULL), S0_OK);
	const s0t_request *q = s0t_responder_req(R, 0);
	CT_ASSERT_REQ(q, "POST", "/api/v1/sandboxes/sb-1/files/move", NULL);
	assert_auth(q);
	ck_assert_str_eq(s0t_req_header(q, "Content-Type"), "application/json");
	ck_assert_msg(s0t_req_json_eq(q, "{\"source\":\"/w/a\",\"destination\":\"/w/b/c\"}"),
	              "body %s", q->body);
	s0_error *e = NULL;
	ck_assert_int_eq(s0_files_move(C, "sb-1", "", "/w/b", &e), S0_EINVAL);
	CT_ASSERT_ERR(e, S0_EINVAL, "invalid_paths");
	s0_error_free(e);
	ck_assert_int_eq(s0_files_move(C, "sb-1", "/w/a", NULL, NULL), S0_EINVAL);
	ck_assert_uint_eq(s0t_responder_count(R), 1);
}
END_TEST

/* docs/wire.md §3.10 and §6.6 errors on the files paths. */
START_TEST(test_files_errors)
{
	static const struct {
		int status;
		const char *code, *message;
		int want;
		const char *reason;
	} rows[] = {
		{404, "file_not_found", "file not found", S0_ENOTFOUND, "file_not_found"},
		{409, "path_not_file", "is a directory", S0_ECONFLICT, "path_not_file"},
		{400, "invalid_request", "path is required", S0_EINVAL, "invalid_request"},
		{403, "permission_denied", "permission denied", S0_EFORBIDDEN, "permission_denied"},
		{503, "unavailable", "sandbox is waking up", S0_EUNAVAILABLE, "waking_up"},
		{503, "unavailable", "sandbox is not running and auto_resume is disabled",
		 S0_EUNAVAILABLE, "auto_resume_disabled"},
		{503, "sandbox_resume_failed", "sandbox resume failed", S0_ERESUME, "resume_failed"},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		s0t_push_error(R, rows[i].status, rows[i].code, rows[i].message);
		void *data = NULL;
		size_t len = 0;
		s0_error *e = NULL;
		ck_assert_int_eq(s0_files_read(C, "sb-1", "/a", &data, &len, &e), rows[i].want);
		CT_ASSERT_ERR(e, rows[i].want, rows[i].reason);
		ck_assert_str_eq(s0_error_wire_code(e), rows[i].code);
		ck_assert_str_eq(s0_error_message(e), rows[i].message);
		ck_assert_str_eq(s0_error_sandbox_id(e), "sb-1");
		s0_error_free(e);
	}
	s0t_push_error(R, 413, "file_too_large", "file too large");
	s0_error *e = NULL;
	ck_assert_int_eq(s0_files_write(C, "sb-1", "/a", "x", 1, &e), S0_ETOOLARGE);
	CT_ASSERT_ERR(e, S0_ETOOLARGE, "file_too_large");
	s0_error_free(e);
	s0t_push_error(R, 404, "directory_not_found", "no such dir");
	s0_file_list *l = NULL;
	e = NULL;
	ck_assert_int_eq(s0_files_list(C, "sb-1", "/nodir", &l, &e), S0_ENOTFOUND);
	CT_ASSERT_ERR(e, S0_ENOTFOUND, "directory_not_found");
	ck_assert_ptr_null(l);
	s0_error_free(e);
}
END_TEST

Suite *s0_client_files_suite(void)
{
	Suite *s = suite_create("client_files");
	TCase *tc = tcase_create("files");
	tcase_add_checked_fixture(tc, ct_setup, ct_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_read_raw_binary);
	tcase_add_test(tc, test_read_empty_and_untyped);
	tcase_add_test(tc, test_read_base64_json);
	tcase_add_test(tc, test_read_bad_json_forms);
	tcase_add_test(tc, test_write_binary);
	tcase_add_test(tc, test_mkdir_delete);
	tcase_add_test(tc, test_stat_list);
	tcase_add_test(tc, test_move);
	tcase_add_test(tc, test_files_errors);
	suite_add_tcase(s, tc);
	return s;
}
