/* Files: stat, list, move (docs/wire.md §3.9). */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/api/files_common.h"

static void reply_json_or_oom(s0__rctx *c, cJSON *d)
{
	if (!d)
		c->oom = true;
	s0__reply_data(c, 200, d);
}

/* A read-only path query rendered as JSON: stat or list. */
typedef int (*query_fn)(const s0__files_ns *ns, const char *path, size_t plen, cJSON **out,
                        s0_error **err);

static int stat_query(const s0__files_ns *ns, const char *path, size_t plen, cJSON **out,
                      s0_error **err)
{
	s0__fileinfo *fi = NULL;
	int rc = s0__files_stat(ns, path, plen, &fi, err);
	if (rc == S0_OK)
		*out = s0__fileinfo_to_json(fi);
	s0__fileinfo_free(fi);
	return rc;
}

static int list_query(const s0__files_ns *ns, const char *path, size_t plen, cJSON **out,
                      s0_error **err)
{
	s0__filelist *l = NULL;
	int rc = s0__files_list(ns, path, plen, &l, err);
	if (rc == S0_OK)
		*out = s0__filelist_to_json(l);
	s0__filelist_free(l);
	return rc;
}

static void path_query(s0__rctx *c, query_fn fn)
{
	char *path = NULL;
	size_t plen = 0;
	s0__runtime_access *acc;
	const s0__files_ns *ns;
	if (!s0__files_param(c, "path", &path, &plen))
		return;
	if (s0__files_begin(c, &acc, &ns)) {
		cJSON *j = NULL;
		s0_error *err = NULL;
		int rc = fn(ns, path, plen, &j, &err);
		s0__engine_runtime_end(acc);
		if (rc < 0)
			s0__reply_error(c, err);
		else
			reply_json_or_oom(c, j);
	}
	free(path);
}

void s0__ep_files_stat(s0__rctx *c)
{
	path_query(c, stat_query);
}

void s0__ep_files_list(s0__rctx *c)
{
	path_query(c, list_query);
}

/* {source, destination}: bad JSON is invalid_request, missing ends invalid_paths. */
static cJSON *move_body(s0__rctx *c, const char **src, const char **dst)
{
	const s0__http_request *r = c->req;
	size_t len = r->has_body ? r->body_len : 0;
	cJSON *b = NULL;
	if (len > S0__ROUTER_JSON_BODY_MAX) {
		s0__reply_err(c, 413, "request_too_large", "request body is too large");
		return NULL;
	}
	if (!len || s0__json_check(r->body, len, S0__ROUTER_JSON_DEPTH_MAX) ||
	    !(b = cJSON_ParseWithLength(r->body, len)) || !cJSON_IsObject(b)) {
		cJSON_Delete(b);
		s0__files_invalid(c, "invalid_request", "invalid request body");
		return NULL;
	}
	int rc;
	if (s0__json_duplicate_key(b, &rc) || rc < 0) {
		cJSON_Delete(b);
		if (rc < 0)
			c->oom = true;
		else
			s0__files_invalid(c, "invalid_request", "duplicate key in request body");
		return NULL;
	}
	*src = s0__json_str(b, "source");
	*dst = s0__json_str(b, "destination");
	if (!*src || !**src || !*dst || !**dst) {
		cJSON_Delete(b);
		s0__files_invalid(c, "invalid_paths", "source and destination are required");
		return NULL;
	}
	return b;
}

void s0__ep_files_move(s0__rctx *c)
{
	const char *src, *dst;
	cJSON *b = move_body(c, &src, &dst);
	if (!b)
		return;
	s0__runtime_access *acc;
	const s0__files_ns *ns;
	if (s0__files_begin(c, &acc, &ns)) {
		s0_error *err = NULL;
		int rc = s0__files_move(ns, src, strlen(src), dst, strlen(dst), &err);
		s0__engine_runtime_end(acc);
		if (rc < 0)
			s0__reply_error(c, err);
		else
			s0__files_done(c, 200, "moved");
	}
	cJSON_Delete(b);
}
