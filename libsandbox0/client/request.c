/* The one request path: headers, envelope decoding and error mapping. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client/client_internal.h"
#include "common/cancel.h"
#include "common/json.h"

int s0__check_id(const char *what, const char *id, s0_error **err)
{
	if (s0__is_blank(id))
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "%s is required", what);
	if (strlen(id) > 255)
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "%s is too long (%zu > 255)", what, strlen(id));
	return S0_OK;
}

char *s0__sandbox_path(const char *sandbox_id, const char *suffix)
{
	char *esc = s0__url_escape(sandbox_id);
	if (!esc)
		return NULL;
	char *p = s0__asprintf("/api/v1/sandboxes/%s%s", esc, suffix ? suffix : "");
	free(esc);
	return p;
}

static const char *request_id_of(const s0__headers *h)
{
	static const char *names[] = {"X-Request-Id", "Request-Id", "X-RequestId"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const char *v = s0__headers_get(h, names[i]);
		if (v && *v)
			return v;
	}
	return NULL;
}

/* application/json, application/problem+json…; media types ignore case. */
static bool is_json_type(const s0__headers *h)
{
	const char *ct = s0__headers_get(h, "Content-Type");
	return ct && strcasestr(ct, "json");
}

/* Envelope error, the 429 rate-limit body, or anything else. */
static s0_error *error_from_body(const s0__http_response *resp, cJSON *root, int64_t *retry_ms)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
	if (cJSON_IsObject(e)) {
		const char *wire = s0__json_str(e, "code");
		const char *msg = s0__json_str(e, "message");
		if (wire && !*wire)
			wire = NULL; /* "" names no code: the status decides, as in the SDKs */
		int code;
		const char *reason;
		s0_error_map_wire(wire, resp->status, msg, &code, &reason);
		s0_error *err = s0__error_make(code, reason, msg && *msg ? msg : s0_strerror(code));
		s0__error_set_http(err, resp->status, wire ? wire : "unexpected_response", NULL, -1);
		const cJSON *details = cJSON_GetObjectItemCaseSensitive(e, "details");
		if (details && !cJSON_IsNull(details)) {
			char *d = s0__json_print(details);
			s0__error_set_details(err, d);
			free(d);
		}
		return err;
	}
	if (cJSON_IsString(e)) { /* {"error":"rate limit exceeded","retry_after":N} */
		int code;
		const char *reason;
		s0_error_map_wire(NULL, resp->status, NULL, &code, &reason);
		/* whole seconds within the header's one-year bound, else absent */
		const cJSON *rj = cJSON_GetObjectItemCaseSensitive(root, "retry_after");
		if (cJSON_IsNumber(rj) && *retry_ms < 0 && rj->valuedouble >= 0 &&
		    rj->valuedouble <= 86400.0 * 365)
			*retry_ms = (int64_t)rj->valuedouble * 1000;
		s0_error *err = s0__error_make(code, reason, e->valuestring);
		s0__error_set_http(err, resp->status, "unexpected_response", NULL, -1);
		return err;
	}
	return NULL;
}

s0_error *s0__error_from_response(const s0__http_response *resp, int64_t now_unix_ms,
                                  const char *sandbox_id)
{
	int64_t retry_ms = s0__retry_after_parse(s0__headers_get(&resp->headers, "Retry-After"),
	                                         now_unix_ms);
	s0_error *err = NULL;
	cJSON *root = resp->body.len ? cJSON_ParseWithLength(resp->body.data, resp->body.len) : NULL;
	if (root)
		err = error_from_body(resp, root, &retry_ms);
	cJSON_Delete(root);
	if (!err) {
		int code;
		const char *reason;
		s0_error_map_wire(NULL, resp->status, NULL, &code, &reason);
		const char *wire = resp->body.len ? "unexpected_response" : "unknown_error";
		char *msg = resp->body.len
		                ? s0__asprintf("unexpected response: HTTP %d: %.200s", resp->status,
		                               resp->body.data)
		                : s0__asprintf("no error body received (HTTP %d)", resp->status);
		err = s0__error_make(code, reason, msg);
		free(msg);
		s0__error_set_http(err, resp->status, wire, NULL, -1);
	}
	/* keep wire code, set status, request id and retry-after */
	s0__error_set_http(err, resp->status, s0_error_wire_code(err), request_id_of(&resp->headers),
	                   retry_ms);
	s0__error_set_body(err, resp->body.data, resp->body.len);
	if (sandbox_id)
		s0__error_set_sandbox(err, sandbox_id, NULL, NULL, 0);
	return err;
}

static int add_std_headers(s0_client *c, const s0__call *call, s0__http_request *req)
{
	s0__headers *h = &req->headers;
	const s0__headers *x = &c->extra; /* the caller's headers replace these four */
	char *auth = c->token ? s0__asprintf("Bearer %s", c->token) : NULL;
	int rc = 0;
	if (c->token && !s0__headers_get(x, "Authorization"))
		rc |= auth ? s0__headers_add(h, "Authorization", auth) : -1;
	free(auth);
	if (!s0__headers_get(x, "User-Agent"))
		rc |= s0__headers_add(h, "User-Agent", c->user_agent);
	/* A raw file read must not ask for JSON: procd answers the base64 JSON
	 * form when Accept contains application/json (docs/wire.md §3.9). */
	if (!s0__headers_get(x, "Accept"))
		rc |= s0__headers_add(h, "Accept", call->raw_reply ? "*/*" : "application/json");
	if (c->team_id && !s0__headers_get(x, "X-Team-ID"))
		rc |= s0__headers_add(h, "X-Team-ID", c->team_id);
	if (call->idempotency_key)
		rc |= s0__headers_add(h, "Idempotency-Key", call->idempotency_key);
	if (call->if_none_match)
		rc |= s0__headers_add(h, "If-None-Match", call->if_none_match);
	if (call->prefer_wait_s > 0) {
		char v[32];
		snprintf(v, sizeof v, "wait=%d", (int)call->prefer_wait_s);
		rc |= s0__headers_add(h, "Prefer", v);
	}
	if (req->has_body)
		rc |= s0__headers_add(h, "Content-Type",
		                      call->has_raw ? "application/octet-stream" : "application/json");
	for (size_t i = 0; i < c->extra.len; i++)
		rc |= s0__headers_add(h, c->extra.items[i].name, c->extra.items[i].value);
	return rc ? -1 : 0;
}

static int decode_success(const s0__call *call, s0__reply *reply, s0_error **err)
{
	if (!reply->http.body.len)
		return S0_OK; /* nothing to decode; result readers see no data */
	if (call->raw_reply && !is_json_type(&reply->http.headers))
		return S0_OK; /* raw bodies (file reads) are the caller's */
	/* Anything else must be an envelope, even when a proxy mislabels it or
	 * answers 200 with an HTML page: success is never assumed. */
	reply->root = cJSON_ParseWithLength(reply->http.body.data, reply->http.body.len);
	if (!reply->root || !cJSON_IsObject(reply->root) ||
	    !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply->root, "success")))
		return s0__error_set(err, S0_EPROTOCOL, "unexpected_response",
		                     "HTTP %d body is not a success envelope: %.200s",
		                     reply->status, reply->http.body.data);
	reply->data = cJSON_GetObjectItemCaseSensitive(reply->root, "data");
	return S0_OK;
}

int s0__client_call(s0_client *c, const s0__call *call, s0__reply *reply, bool *sent,
                    s0_error **err)
{
	memset(reply, 0, sizeof *reply);
	if (sent)
		*sent = false;
	char *json = call->json ? cJSON_PrintUnformatted(call->json) : NULL;
	if (call->json && !json)
		return s0__error_nomem(err);
	s0__http_request req = {
		.method = call->method,
		.path = call->path,
		.query = call->query,
		.body = call->has_raw ? call->raw : json,
		.body_len = call->has_raw ? call->raw_len : (json ? strlen(json) : 0),
		.has_body = call->has_raw || json,
	};
	int rc = S0_OK;
	if (add_std_headers(c, call, &req) < 0) {
		rc = s0__error_nomem(err);
		goto out;
	}
	s0__cancel_link link = {0};
	s0_cancel_token *tok = call->cancel ? call->cancel : c->cancel;
	if (call->cancel && c->cancel) {
		if ((rc = s0__cancel_link_init(&link, call->cancel, c->cancel, err)) < 0)
			goto out;
		tok = link.token;
	}
	bool was_sent = false;
	int64_t tmo = c->request_timeout_ms;
	if (call->timeout_ms > 0 && (tmo <= 0 || call->timeout_ms < tmo))
		tmo = call->timeout_ms;
	rc = c->ops->send(c->tctx, &req, tmo, tok, &reply->http, &was_sent, err);
	if (link.token)
		s0__cancel_link_free(&link);
	if (sent)
		*sent = was_sent;
	if (rc < 0)
		goto out;
	reply->status = reply->http.status;
	if (reply->status == 304 && call->if_none_match)
		goto out; /* unchanged (RFC 9110 §15.4.5): no body to decode */
	if (reply->status < 200 || reply->status > 299) {
		rc = s0__error_put(err, s0__error_from_response(&reply->http,
		                                                c->clock.now_unix_ms(c->clock.ctx),
		                                                call->sandbox_id));
		goto out;
	}
	rc = decode_success(call, reply, err);
out:
	free(json);
	s0__headers_free(&req.headers);
	if (rc < 0)
		s0__reply_free(reply);
	return rc;
}

void s0__reply_free(s0__reply *r)
{
	s0__http_response_free(&r->http);
	cJSON_Delete(r->root);
	r->root = NULL;
	r->data = NULL;
}

int s0__call_into(s0_client *c, const s0__call *call, s0__from_json_fn fn, void **out,
                  s0_error **err)
{
	if (fn && !out) /* checked before anything is sent */
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "out is NULL");
	s0__reply r;
	int rc = s0__client_call(c, call, &r, NULL, err);
	if (rc < 0)
		return rc;
	if (fn)
		rc = fn(r.data, r.status, out, err);
	s0__reply_free(&r);
	return rc;
}
