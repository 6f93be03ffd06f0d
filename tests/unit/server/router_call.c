#include "router_call.h"

#include <check.h>
#include <string.h>

#include "common/json.h"

rc_result rc_call(s0__engine *e, const char *method, const char *path, const rc_opts *o)
{
	static const rc_opts none = {0};
	if (!o)
		o = &none;
	s0__http_request req = {.method = method, .path = path, .query = o->query};
	if (o->body) {
		req.body = o->body;
		req.body_len = o->body_len ? o->body_len : strlen(o->body);
		req.has_body = true;
	}
	for (const char *const *h = o->headers; h && h[0]; h += 2)
		s0__headers_add(&req.headers, h[0], h[1]);
	s0__router_opts ro = {.team_id = o->team ? o->team : "team_a",
	                      .zero_time_compat = o->zero_time,
	                      .pause_200_only = o->pause_200_only};
	rc_result r = {0};
	int rc = o->raw ? s0__router_handle_raw(e, &ro, &req, &r.resp)
	                : s0__router_handle(e, &ro, &req, &r.resp);
	ck_assert_int_eq(rc, S0_OK);
	s0__headers_free(&req.headers);
	r.status = r.resp.status;
	ck_assert_ptr_nonnull(s0__headers_get(&r.resp.headers, "Content-Type"));
	ck_assert_ptr_nonnull(s0__headers_get(&r.resp.headers, "X-Request-ID"));
	const char *ct = s0__headers_get(&r.resp.headers, "Content-Type");
	if (strstr(ct, "json")) {
		r.json = cJSON_ParseWithLength(r.resp.body.data, r.resp.body.len);
		ck_assert_msg(r.json != NULL, "body is not JSON: %s", r.resp.body.data);
		ck_assert(cJSON_IsBool(cJSON_GetObjectItem(r.json, "success")));
		r.data = cJSON_GetObjectItemCaseSensitive(r.json, "data");
	}
	return r;
}

void rc_free(rc_result *r)
{
	cJSON_Delete(r->json);
	s0__http_response_free(&r->resp);
}

const char *rc_header(const rc_result *r, const char *name)
{
	return s0__headers_get(&r->resp.headers, name);
}

const char *rc_err_code(const rc_result *r)
{
	return s0__json_str0(cJSON_GetObjectItem(r->json, "error"), "code");
}

const char *rc_err_message(const rc_result *r)
{
	return s0__json_str0(cJSON_GetObjectItem(r->json, "error"), "message");
}

bool rc_has_keys(const cJSON *o, const char *const *keys)
{
	int n = 0;
	for (const char *const *k = keys; *k; k++, n++)
		if (!cJSON_HasObjectItem(o, *k))
			return false;
	return cJSON_GetArraySize(o) == n;
}
