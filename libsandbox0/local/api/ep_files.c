/* Files: read, write / mkdir, delete (docs/wire.md §3.9). */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/api/files_common.h"

static bool wants_json(const s0__rctx *c)
{
	const char *acc = s0__headers_get(&c->req->headers, "Accept");
	const char *ct = s0__headers_get(&c->req->headers, "Content-Type");
	return (acc && strstr(acc, "application/json")) || (ct && strstr(ct, "application/json"));
}

static void reply_base64(s0__rctx *c, const void *data, size_t len)
{
	size_t n = sodium_base64_encoded_len(len, sodium_base64_VARIANT_ORIGINAL);
	char *b64 = malloc(n);
	cJSON *d = b64 ? cJSON_CreateObject() : NULL;
	if (d) {
		sodium_bin2base64(b64, n, data, len, sodium_base64_VARIANT_ORIGINAL);
		if (s0__json_add_str(d, "content", b64) < 0 ||
		    s0__json_add_str(d, "encoding", "base64") < 0) {
			cJSON_Delete(d);
			d = NULL;
		}
	}
	free(b64);
	if (!d)
		c->oom = true;
	s0__reply_data(c, 200, d);
}

static void read_file(s0__rctx *c, const char *path, size_t plen)
{
	s0__runtime_access *acc;
	const s0__files_ns *ns;
	if (!s0__files_begin(c, &acc, &ns))
		return;
	void *data = NULL;
	size_t len = 0;
	s0_error *err = NULL;
	int rc = s0__files_read(ns, path, plen, 0, -1, &data, &len, &err);
	s0__engine_runtime_end(acc);
	if (rc < 0)
		s0__reply_error(c, err);
	else if (wants_json(c))
		reply_base64(c, data, len);
	else
		s0__reply_raw(c, 200, "application/octet-stream", data, len);
	free(data);
}

void s0__ep_files_read(s0__rctx *c)
{
	bool stat_key = false, list_key = false;
	char *v = NULL, *path = NULL;
	size_t plen = 0;
	if (!s0__query_value(c, "stat", &stat_key, &v))
		return;
	free(v);
	if (!s0__query_value(c, "list", &list_key, &v))
		return;
	free(v);
	if (stat_key || list_key) {
		s0__files_invalid(c, "invalid_request",
		                  "use GET /files/stat or /files/list instead of the stat or list query");
		return;
	}
	if (!s0__files_param(c, "path", &path, &plen))
		return;
	read_file(c, path, plen);
	free(path);
}

static void write_or_mkdir(s0__rctx *c, const char *path, size_t plen)
{
	bool mkdir = s0__files_flag(c, "mkdir"), recursive = s0__files_flag(c, "recursive");
	const s0__http_request *r = c->req;
	size_t len = r->has_body ? r->body_len : 0;
	if (!mkdir && len > S0__ROUTER_FILE_BODY_MAX) {
		s0__reply_err(c, 413, "file_too_large", "file is too large (%zu > %zu bytes)", len,
		              S0__ROUTER_FILE_BODY_MAX);
		return;
	}
	s0__runtime_access *acc;
	const s0__files_ns *ns;
	if (!s0__files_begin(c, &acc, &ns))
		return;
	s0_error *err = NULL;
	int rc = mkdir ? s0__files_mkdir(ns, path, plen, recursive, &err)
	               : s0__files_write(ns, path, plen, len ? r->body : "", len, &err);
	s0__engine_runtime_end(acc);
	if (rc < 0)
		s0__reply_error(c, err);
	else
		s0__files_done(c, mkdir ? 201 : 200, mkdir ? "created" : "written");
}

void s0__ep_files_write(s0__rctx *c)
{
	char *path = NULL;
	size_t plen = 0;
	if (!s0__files_param(c, "path", &path, &plen))
		return;
	write_or_mkdir(c, path, plen);
	free(path);
}

void s0__ep_files_delete(s0__rctx *c)
{
	char *path = NULL;
	size_t plen = 0;
	if (!s0__files_param(c, "path", &path, &plen))
		return;
	s0__runtime_access *acc;
	const s0__files_ns *ns;
	if (s0__files_begin(c, &acc, &ns)) {
		s0_error *err = NULL;
		int rc = s0__files_delete(ns, path, plen, &err);
		s0__engine_runtime_end(acc);
		if (rc < 0)
			s0__reply_error(c, err);
		else
			s0__files_done(c, 200, "deleted");
	}
	free(path);
}
