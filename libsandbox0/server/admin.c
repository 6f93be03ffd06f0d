/*
 * Admin routes of `s0 serve --enable-admin` (docs/decisions.md "Faults and
 * inspection"): POST /admin/v1/faults {name, mode, count, delay_ms} arms a
 * fault, DELETE /admin/v1/faults {name} (or ?name=) releases it, POST
 * /admin/v1/clock {advance_ms} moves the manual clock, GET
 * /admin/v1/inspect[?sandbox_id=] returns the backend's internal facts.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/api/router.h"
#include "server/server_internal.h"

#define ADMIN_BODY_MAX 65536

typedef struct actx {
	const s0__server_admin_ops *ops;
	const s0__http_request *req;
	const char *rid;
	s0__http_response *resp;
} actx;

static int fail(actx *a, int status, const char *wire, const char *msg)
{
	return s0__router_reply_error(a->resp, a->rid, status, wire, msg);
}

static int fail_err(actx *a, s0_error *err)
{
	const char *wire, *canon;
	int status;
	s0_error_to_wire(s0_error_code(err), s0_error_reason(err), &wire, &status, &canon);
	int rc = fail(a, status, wire, s0_error_message(err));
	s0_error_free(err);
	return rc;
}

static int ok(actx *a, cJSON *data)
{
	cJSON *root = cJSON_CreateObject();
	if (!root || !cJSON_AddBoolToObject(root, "success", true)) {
		cJSON_Delete(root);
		cJSON_Delete(data);
		return S0_ENOMEM;
	}
	if (data)
		cJSON_AddItemToObject(root, "data", data);
	char *text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	a->resp->status = 200;
	int rc = text ? s0__buf_puts(&a->resp->body, text) : -1;
	free(text);
	rc |= s0__headers_add(&a->resp->headers, "Content-Type", "application/json; charset=utf-8");
	rc |= s0__headers_add(&a->resp->headers, "X-Request-ID", a->rid);
	return rc ? S0_ENOMEM : S0_OK;
}

/* The body as an object; NULL (after replying) when bad. */
static cJSON *body(actx *a, int *rc)
{
	const s0__http_request *r = a->req;
	size_t len = r->has_body ? r->body_len : 0;
	cJSON *root = NULL;
	if (len > ADMIN_BODY_MAX)
		*rc = fail(a, 413, "request_too_large", "admin request body is too large");
	else if (!len || s0__json_check(r->body, len, 8) ||
	         !(root = cJSON_ParseWithLength(r->body, len)) || !cJSON_IsObject(root))
		*rc = fail(a, 400, "bad_request", "invalid request: expected a small JSON object");
	if (root && !cJSON_IsObject(root)) {
		cJSON_Delete(root);
		root = NULL;
	}
	int dup_rc;
	if (root && (s0__json_duplicate_key(root, &dup_rc) || dup_rc < 0)) {
		cJSON_Delete(root);
		root = NULL;
		*rc = dup_rc < 0 ? S0_ENOMEM
		                 : fail(a, 400, "bad_request",
		                        "invalid request: duplicate key in request body");
	}
	return root;
}

static int32_t fault_mode(const cJSON *m)
{
	static const char *const names[] = {"fail", "hold", "delay", "crash"};
	if (cJSON_IsNumber(m))
		return m->valuedouble >= 1 && m->valuedouble <= 4 ? (int32_t)m->valuedouble : 0;
	for (int i = 0; cJSON_IsString(m) && i < 4; i++)
		if (!strcmp(m->valuestring, names[i]))
			return i + 1;
	return 0;
}

static int arm(actx *a)
{
	int rc = S0_OK;
	cJSON *b = body(a, &rc);
	if (!b)
		return rc;
	const char *name = s0__json_str(b, "name");
	int32_t mode = fault_mode(cJSON_GetObjectItemCaseSensitive(b, "mode"));
	int64_t count = s0__json_i64(b, "count", 0), delay = s0__json_i64(b, "delay_ms", 0);
	s0_error *err = NULL;
	if (s0__is_blank(name) || !mode || count < 0 || delay < 0)
		rc = fail(a, 400, "bad_request",
		          "invalid request: name, mode (fail|hold|delay|crash), count >= 0 and "
		          "delay_ms >= 0 are required");
	else if (a->ops->fault_arm(a->ops->ctx, name, mode, count, delay, &err) < 0)
		rc = fail_err(a, err);
	else {
		cJSON *d = cJSON_CreateObject();
		rc = d && !s0__json_add_str(d, "name", name) && !s0__json_add_bool(d, "armed", true)
		         ? ok(a, d)
		         : (cJSON_Delete(d), S0_ENOMEM);
	}
	cJSON_Delete(b);
	return rc;
}

static int release(actx *a)
{
	int rc = S0_OK;
	bool present = false;
	char *name = s0__query_get(a->req->query, "name", &present);
	cJSON *b = NULL;
	if (!present && !(b = body(a, &rc)))
		return rc;
	const char *n = name ? name : s0__json_str(b, "name");
	s0_error *err = NULL;
	if (s0__is_blank(n))
		rc = fail(a, 400, "bad_request", "invalid request: name is required");
	else if (a->ops->fault_release(a->ops->ctx, n, &err) < 0)
		rc = fail_err(a, err);
	else {
		cJSON *d = cJSON_CreateObject();
		rc = d && !s0__json_add_str(d, "name", n) && !s0__json_add_bool(d, "released", true)
		         ? ok(a, d)
		         : (cJSON_Delete(d), S0_ENOMEM);
	}
	free(name);
	cJSON_Delete(b);
	return rc;
}

static int clock_advance(actx *a)
{
	int rc = S0_OK;
	cJSON *b = body(a, &rc);
	if (!b)
		return rc;
	const cJSON *ms = cJSON_GetObjectItemCaseSensitive(b, "advance_ms");
	int64_t now = 0;
	s0_error *err = NULL;
	if (!cJSON_IsNumber(ms) || !isfinite(ms->valuedouble) || ms->valuedouble < 0 ||
	    ms->valuedouble > 9e15)
		rc = fail(a, 400, "bad_request", "invalid request: advance_ms >= 0 is required");
	else if (a->ops->clock_advance(a->ops->ctx, (int64_t)ms->valuedouble, &now, &err) < 0)
		rc = fail_err(a, err);
	else {
		cJSON *d = cJSON_CreateObject();
		rc = d && !s0__json_add_i64(d, "now_unix_ms", now) ? ok(a, d)
		                                                    : (cJSON_Delete(d), S0_ENOMEM);
	}
	cJSON_Delete(b);
	return rc;
}

static int inspect(actx *a)
{
	bool present;
	char *sid = s0__query_get(a->req->query, "sandbox_id", &present);
	char *json = NULL;
	s0_error *err = NULL;
	int rc;
	if (a->ops->inspect(a->ops->ctx, sid && *sid ? sid : NULL, &json, &err) < 0) {
		rc = fail_err(a, err);
	} else {
		cJSON *d = json ? cJSON_Parse(json) : NULL;
		rc = d ? ok(a, d) : fail(a, 500, "internal_error", "inspect returned invalid JSON");
	}
	s0_free(json);
	free(sid);
	return rc;
}

int s0__server_admin(const s0__server_admin_ops *ops, const s0__http_request *req,
                     const char *request_id, s0__http_response *resp)
{
	actx a = {ops, req, request_id, resp};
	const char *p = req->path, *m = req->method;
	bool post = !strcmp(m, "POST");
	if (!strcmp(p, "/admin/v1/faults") && (post || !strcmp(m, "DELETE")))
		return post ? arm(&a) : release(&a);
	if (!strcmp(p, "/admin/v1/clock") && post)
		return clock_advance(&a);
	if (!strcmp(p, "/admin/v1/inspect") && !strcmp(m, "GET"))
		return inspect(&a);
	if (!strcmp(p, "/admin/v1/faults") || !strcmp(p, "/admin/v1/clock") ||
	    !strcmp(p, "/admin/v1/inspect"))
		return fail(&a, 405, "method_not_allowed", "method not allowed");
	return fail(&a, 404, "not_found", "not found");
}
