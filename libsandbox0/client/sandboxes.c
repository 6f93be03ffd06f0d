/* Sandbox lifecycle endpoints (docs/wire.md §3.1–3.7). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_internal.h"
#include "client/config_json.h"
#include "client/results.h"
#include "common/json.h"

static int info_fn(const cJSON *d, int st, void **out, s0_error **err)
{
	(void)st;
	return s0__sandbox_info_from_json(d, (s0_sandbox_info **)out, err);
}

static int lifecycle_fn(const cJSON *d, int st, void **out, s0_error **err)
{
	return s0__lifecycle_result_from_json(d, st, (s0_lifecycle_result **)out, err);
}

static int page_fn(const cJSON *d, int st, void **out, s0_error **err)
{
	(void)st;
	return s0__sandbox_page_from_json(d, (s0_sandbox_page **)out, err);
}

/* GET/DELETE/POST on /sandboxes/{id}<suffix> with an optional JSON body. */
static int sandbox_call(s0_client *c, const char *method, const char *id, const char *suffix,
                        const cJSON *body, s0__from_json_fn fn, void **out, s0_error **err)
{
	int rc = s0__check_id("sandbox_id", id, err);
	if (rc < 0)
		return rc;
	char *path = s0__sandbox_path(id, suffix);
	if (!path)
		return s0__error_nomem(err);
	s0__call call = {.method = method, .path = path, .json = body, .sandbox_id = id};
	rc = s0__call_into(c, &call, fn, out, err);
	free(path);
	return rc;
}

int s0_sandbox_claim(s0_client *c, const char *template_id, const char *snapshot_id,
                     const s0_sandbox_config *config, s0_sandbox_info **out, s0_error **err)
{
	if (s0__is_blank(template_id))
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "template is required");
	cJSON *body = cJSON_CreateObject();
	if (!body || s0__json_add_str(body, "template", template_id) < 0 ||
	    (snapshot_id && s0__json_add_str(body, "snapshot_id", snapshot_id) < 0)) {
		cJSON_Delete(body);
		return s0__error_nomem(err);
	}
	int rc = S0_OK;
	if (config) {
		cJSON *cfg = NULL;
		rc = s0__config_to_json(config, &cfg, err);
		if (rc == S0_OK)
			cJSON_AddItemToObject(body, "config", cfg);
	}
	if (rc == S0_OK) {
		s0__call call = {.method = "POST", .path = "/api/v1/sandboxes", .json = body};
		rc = s0__call_into(c, &call, info_fn, (void **)out, err);
	}
	cJSON_Delete(body);
	return rc;
}

int s0_sandbox_get(s0_client *c, const char *id, s0_sandbox_info **out, s0_error **err)
{
	return sandbox_call(c, "GET", id, NULL, NULL, info_fn, (void **)out, err);
}

int s0_sandbox_status(s0_client *c, const char *id, s0_sandbox_info **out, s0_error **err)
{
	return sandbox_call(c, "GET", id, "/status", NULL, info_fn, (void **)out, err);
}

int s0_sandbox_update(s0_client *c, const char *id, const s0_sandbox_config *config,
                      s0_sandbox_info **out, s0_error **err)
{
	if (!config)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "config is required");
	cJSON *cfg = NULL, *body = cJSON_CreateObject();
	if (!body)
		return s0__error_nomem(err);
	int rc = s0__config_to_json(config, &cfg, err);
	if (rc == S0_OK) {
		cJSON_AddItemToObject(body, "config", cfg);
		rc = sandbox_call(c, "PUT", id, NULL, body, info_fn, (void **)out, err);
	}
	cJSON_Delete(body);
	return rc;
}

int s0_sandbox_delete(s0_client *c, const char *id, s0_error **err)
{
	return sandbox_call(c, "DELETE", id, NULL, NULL, NULL, NULL, err);
}

/* {"memory": b} or no body at all (CL-09). */
static int memory_body(int32_t memory, cJSON **out, s0_error **err)
{
	*out = NULL;
	if (memory == S0_BOOL_UNSET)
		return S0_OK;
	if (memory != S0_BOOL_TRUE && memory != S0_BOOL_FALSE)
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "memory must be S0_BOOL_UNSET, S0_BOOL_TRUE or S0_BOOL_FALSE");
	*out = cJSON_CreateObject();
	if (!*out || s0__json_add_bool(*out, "memory", memory == S0_BOOL_TRUE) < 0) {
		cJSON_Delete(*out);
		return s0__error_nomem(err);
	}
	return S0_OK;
}

static int lifecycle_post(s0_client *c, const char *id, const char *suffix, int32_t memory,
                          s0_lifecycle_result **out, s0_error **err)
{
	cJSON *body;
	int rc = memory_body(memory, &body, err);
	if (rc == S0_OK)
		rc = sandbox_call(c, "POST", id, suffix, body, lifecycle_fn, (void **)out, err);
	cJSON_Delete(body);
	return rc;
}

int s0_sandbox_pause(s0_client *c, const char *id, int32_t memory, s0_lifecycle_result **out,
                     s0_error **err)
{
	return lifecycle_post(c, id, "/pause", memory, out, err);
}

int s0_sandbox_resume(s0_client *c, const char *id, int32_t memory, s0_lifecycle_result **out,
                      s0_error **err)
{
	return lifecycle_post(c, id, "/resume", memory, out, err);
}

int s0_sandbox_refresh(s0_client *c, const char *id, int32_t duration_sec, s0_sandbox_info **out,
                       s0_error **err)
{
	if (duration_sec < 0)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "duration must be >= 0");
	cJSON *body = cJSON_CreateObject();
	if (!body || (duration_sec > 0 && s0__json_add_i64(body, "duration", duration_sec) < 0)) {
		cJSON_Delete(body);
		return s0__error_nomem(err);
	}
	int rc = sandbox_call(c, "POST", id, "/refresh", body, info_fn, (void **)out, err);
	cJSON_Delete(body);
	return rc;
}

/* ---- list ---- */

int s0__list_query(const s0_list_options *o, int32_t offset, s0__buf *q, s0_error **err)
{
	if (o->version != S0_LIST_OPTIONS_VERSION)
		return s0__error_set(err, S0_EINVAL, "options_version",
		                     "s0_list_options.version %u is not %u", o->version,
		                     S0_LIST_OPTIONS_VERSION);
	if (o->limit < 0 || o->limit > 200)
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "limit must be between 1 and 200");
	if (offset < 0)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "offset must be >= 0");
	if (o->status < S0_STATUS_UNKNOWN || o->status > S0_STATUS_FAILED)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "invalid status filter");
	char num[24];
	int rc = 0;
	if (o->status)
		rc |= s0__query_add(q, "status", s0_status_name(o->status));
	if (o->template_id)
		rc |= s0__query_add(q, "template_id", o->template_id);
	if (o->paused)
		rc |= s0__query_add(q, "paused", o->paused == S0_BOOL_TRUE ? "true" : "false");
	snprintf(num, sizeof num, "%d", o->limit ? o->limit : 50);
	rc |= s0__query_add(q, "limit", num);
	snprintf(num, sizeof num, "%d", offset);
	rc |= s0__query_add(q, "offset", num);
	return rc ? s0__error_nomem(err) : S0_OK;
}

static int list_page(s0_client *c, const s0_list_options *o, int32_t offset, s0_sandbox_page **out,
                     s0_error **err)
{
	s0__buf q = S0__BUF_INIT;
	int rc = s0__list_query(o, offset, &q, err);
	if (rc == S0_OK) {
		s0__call call = {.method = "GET", .path = "/api/v1/sandboxes", .query = q.data};
		rc = s0__call_into(c, &call, page_fn, (void **)out, err);
	}
	s0__buf_free(&q);
	return rc;
}

int s0_sandbox_list(s0_client *c, const s0_list_options *opts, s0_sandbox_page **out,
                    s0_error **err)
{
	s0_list_options d = S0_LIST_OPTIONS_INIT;
	if (!opts)
		opts = &d;
	return list_page(c, opts, opts->offset, out, err);
}

struct s0_sandbox_iter {
	s0_client *c;
	s0_list_options opts;
	char *template_id;
	int32_t offset;
	s0_sandbox_page *page;
	size_t pos;
	bool done;
};

int s0_sandbox_iter_new(s0_client *c, const s0_list_options *opts, s0_sandbox_iter **out,
                        s0_error **err)
{
	s0_list_options d = S0_LIST_OPTIONS_INIT;
	if (!opts)
		opts = &d;
	if (!out)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "out is NULL");
	s0__buf q = S0__BUF_INIT;
	int rc = s0__list_query(opts, opts->offset, &q, err); /* validate now */
	s0__buf_free(&q);
	if (rc < 0)
		return rc;
	s0_sandbox_iter *it = calloc(1, sizeof *it);
	if (!it)
		return s0__error_nomem(err);
	it->c = c;
	it->opts = *opts;
	it->template_id = s0__strdup(opts->template_id);
	it->opts.template_id = it->template_id;
	it->offset = opts->offset;
	s0__obj_inc();
	*out = it;
	return S0_OK;
}

int s0_sandbox_iter_next(s0_sandbox_iter *it, const s0_sandbox_info **out, s0_error **err)
{
	if (!it || !out)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "iterator and out are required");
	while (!it->page || it->pos >= s0_sandbox_page_length(it->page)) {
		if (it->done)
			return S0_ITEROVER;
		s0_sandbox_page *p = NULL;
		int rc = list_page(it->c, &it->opts, it->offset, &p, err);
		if (rc < 0)
			return rc;
		s0_sandbox_page_free(it->page);
		it->page = p;
		it->pos = 0;
		int64_t next = (int64_t)it->offset + (int64_t)s0_sandbox_page_length(p);
		it->done = !s0_sandbox_page_has_more(p) || !s0_sandbox_page_length(p) ||
		           next > INT32_MAX; /* the wire's offset is an int32 */
		it->offset = it->done ? it->offset : (int32_t)next;
	}
	*out = s0_sandbox_page_at(it->page, it->pos++);
	return S0_OK;
}

void s0_sandbox_iter_free(s0_sandbox_iter *it)
{
	if (!it)
		return;
	s0_sandbox_page_free(it->page);
	free(it->template_id);
	free(it);
	s0__obj_dec();
}
