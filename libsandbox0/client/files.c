/* The files API (docs/wire.md §3.9–3.10). */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_internal.h"
#include "client/results.h"
#include "common/json.h"

/* GET/POST/DELETE …/files<suffix>?path=…[&extra] */
static int files_call(s0_client *c, const char *method, const char *id, const char *suffix,
                      const char *path, const char *extra_query, s0__call *proto,
                      s0__reply *reply, s0_error **err)
{
	int rc = s0__check_id("sandbox_id", id, err);
	if (rc < 0)
		return rc;
	if (!path || !*path)
		return s0__error_set(err, S0_EINVAL, "invalid_request", "path is required");
	char *p = s0__sandbox_path(id, suffix);
	s0__buf q = S0__BUF_INIT;
	if (!p || s0__query_add(&q, "path", path) < 0 ||
	    (extra_query && (s0__buf_puts(&q, "&") < 0 || s0__buf_puts(&q, extra_query) < 0))) {
		free(p);
		s0__buf_free(&q);
		return s0__error_nomem(err);
	}
	proto->method = method;
	proto->path = p;
	proto->query = q.data;
	proto->sandbox_id = id;
	rc = s0__client_call(c, proto, reply, NULL, err);
	free(p);
	s0__buf_free(&q);
	return rc;
}

static int decode_base64_read(const cJSON *data, void **out, size_t *len, s0_error **err)
{
	const char *content = s0__json_str(data, "content");
	const char *enc = s0__json_str(data, "encoding");
	if (!content || (enc && strcmp(enc, "base64")))
		return s0__error_set(err, S0_EPROTOCOL, "unsupported_encoding",
		                     "file read reply is neither raw bytes nor base64 JSON");
	size_t cap = strlen(content) / 4 * 3 + 3, n = 0;
	unsigned char *buf = malloc(cap + 1);
	if (!buf)
		return s0__error_nomem(err);
	if (sodium_base642bin(buf, cap, content, strlen(content), " \r\n", &n, NULL,
	                      sodium_base64_VARIANT_ORIGINAL) < 0) {
		free(buf);
		return s0__error_set(err, S0_EPROTOCOL, "unsupported_encoding",
		                     "file content is not valid base64");
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return S0_OK;
}

int s0_files_read(s0_client *c, const char *id, const char *path, void **data_out,
                  size_t *len_out, s0_error **err)
{
	if (!data_out || !len_out)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "outputs are required");
	s0__call call = {.raw_reply = true};
	s0__reply r;
	int rc = files_call(c, "GET", id, "/files", path, NULL, &call, &r, err);
	if (rc < 0)
		return rc;
	if (r.root) {
		rc = decode_base64_read(r.data, data_out, len_out, err);
	} else {
		size_t n = 0;
		char *d = s0__buf_detach(&r.http.body, &n);
		if (!d) {
			rc = s0__error_nomem(err);
		} else {
			*data_out = d;
			*len_out = n;
		}
	}
	s0__reply_free(&r);
	return rc;
}

int s0_files_write(s0_client *c, const char *id, const char *path, const void *data, size_t len,
                   s0_error **err)
{
	if (len && !data)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "data is NULL");
	if (len > S0_FILES_MAX_WRITE_BYTES)
		return s0__error_set(err, S0_ETOOLARGE, "file_too_large",
		                     "file is %zu bytes, the limit is %llu", len,
		                     (unsigned long long)S0_FILES_MAX_WRITE_BYTES);
	s0__call call = {.raw = data ? data : "", .raw_len = len, .has_raw = true};
	s0__reply r;
	int rc = files_call(c, "POST", id, "/files", path, NULL, &call, &r, err);
	if (rc == S0_OK)
		s0__reply_free(&r);
	return rc;
}

int s0_files_mkdir(s0_client *c, const char *id, const char *path, bool recursive,
                   s0_error **err)
{
	s0__call call = {.raw = "", .raw_len = 0, .has_raw = true};
	s0__reply r;
	int rc = files_call(c, "POST", id, "/files", path,
	                    recursive ? "mkdir=true&recursive=true" : "mkdir=true", &call, &r, err);
	if (rc == S0_OK)
		s0__reply_free(&r);
	return rc;
}

int s0_files_delete(s0_client *c, const char *id, const char *path, s0_error **err)
{
	s0__call call = {0};
	s0__reply r;
	int rc = files_call(c, "DELETE", id, "/files", path, NULL, &call, &r, err);
	if (rc == S0_OK)
		s0__reply_free(&r);
	return rc;
}

int s0_files_stat(s0_client *c, const char *id, const char *path, s0_file_info **out,
                  s0_error **err)
{
	if (!out)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "out is NULL");
	s0__call call = {0};
	s0__reply r;
	int rc = files_call(c, "GET", id, "/files/stat", path, NULL, &call, &r, err);
	if (rc < 0)
		return rc;
	rc = s0__file_info_from_json(r.data, out, err);
	s0__reply_free(&r);
	return rc;
}

int s0_files_list(s0_client *c, const char *id, const char *path, s0_file_list **out,
                  s0_error **err)
{
	if (!out)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "out is NULL");
	s0__call call = {0};
	s0__reply r;
	int rc = files_call(c, "GET", id, "/files/list", path, NULL, &call, &r, err);
	if (rc < 0)
		return rc;
	rc = s0__file_list_from_json(r.data, out, err);
	s0__reply_free(&r);
	return rc;
}

int s0_files_move(s0_client *c, const char *id, const char *source, const char *destination,
                  s0_error **err)
{
	int rc = s0__check_id("sandbox_id", id, err);
	if (rc < 0)
		return rc;
	if (s0__is_blank(source) || s0__is_blank(destination))
		return s0__error_set(err, S0_EINVAL, "invalid_paths",
		                     "source and destination are required");
	cJSON *body = cJSON_CreateObject();
	char *p = s0__sandbox_path(id, "/files/move");
	if (!body || !p || s0__json_add_str(body, "source", source) < 0 ||
	    s0__json_add_str(body, "destination", destination) < 0)
		rc = s0__error_nomem(err);
	if (rc == S0_OK) {
		s0__call call = {.method = "POST", .path = p, .json = body, .sandbox_id = id};
		rc = s0__call_into(c, &call, NULL, NULL, err);
	}
	cJSON_Delete(body);
	free(p);
	return rc;
}
