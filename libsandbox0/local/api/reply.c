/* Response builders: envelopes, engine errors, raw bodies (docs/wire.md §2.1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/api/api_internal.h"

#define JSON_TYPE "application/json; charset=utf-8"

void s0__reply_header(s0__rctx *c, const char *name, const char *value)
{
	if (s0__headers_add(&c->resp->headers, name, value) < 0)
		c->oom = true;
}

static void reply_body(s0__rctx *c, int status, const char *type, const void *data, size_t len)
{
	c->resp->status = status;
	s0__buf_reset(&c->resp->body);
	if (len && s0__buf_put(&c->resp->body, data, len) < 0)
		c->oom = true;
	s0__reply_header(c, "Content-Type", type);
}

/* Print and send a whole envelope (takes root). */
static void reply_envelope(s0__rctx *c, int status, cJSON *root)
{
	char *text = root ? cJSON_PrintUnformatted(root) : NULL;
	cJSON_Delete(root);
	if (!text) {
		c->oom = true;
		c->resp->status = 500;
		return;
	}
	reply_body(c, status, JSON_TYPE, text, strlen(text));
	free(text);
}

void s0__reply_data(s0__rctx *c, int status, cJSON *data)
{
	cJSON *root = cJSON_CreateObject();
	if (!root || !cJSON_AddBoolToObject(root, "success", true)) {
		cJSON_Delete(data);
		cJSON_Delete(root);
		reply_envelope(c, status, NULL);
		return;
	}
	if (data)
		cJSON_AddItemToObject(root, "data", data);
	reply_envelope(c, status, root);
}

static void reply_err_details(s0__rctx *c, int status, const char *wire, const char *message,
                              const char *details_json)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *e = cJSON_CreateObject();
	if (!root || !e || !cJSON_AddBoolToObject(root, "success", false)) {
		cJSON_Delete(root);
		cJSON_Delete(e);
		reply_envelope(c, status, NULL);
		return;
	}
	cJSON_AddItemToObject(root, "error", e);
	int rc = s0__json_add_str(e, "code", wire);
	rc |= s0__json_add_str(e, "message", message);
	cJSON *details = details_json ? cJSON_Parse(details_json) : NULL;
	if (details)
		cJSON_AddItemToObject(e, "details", details);
	if (rc) {
		cJSON_Delete(root);
		root = NULL;
	}
	reply_envelope(c, status, root);
}

void s0__reply_err(s0__rctx *c, int status, const char *wire, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = s0__vasprintf(fmt, ap);
	va_end(ap);
	if (!msg)
		c->oom = true;
	reply_err_details(c, status, wire, msg ? msg : "out of memory", NULL);
	free(msg);
}

void s0__reply_invalid(s0__rctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = s0__vasprintf(fmt, ap);
	va_end(ap);
	if (!msg)
		c->oom = true;
	s0__reply_err(c, 400, "bad_request", "invalid request: %s", msg ? msg : "out of memory");
	free(msg);
}

/* A wait deadline inside the engine is the gateway's 504 `unavailable`. */
static void wire_of(const s0_error *err, const char **wire, int *status, const char **canon)
{
	int code = s0_error_code(err);
	const char *reason = s0_error_reason(err);
	if (code == S0_ETIMEDOUT && strcmp(reason, "exec_timeout")) {
		code = S0_EUNAVAILABLE;
		reason = "gateway_timeout";
	}
	s0_error_to_wire(code, reason, wire, status, canon);
}

static void add_retry_after(s0__rctx *c, int64_t retry_ms)
{
	if (retry_ms < 0)
		return;
	char v[32];
	snprintf(v, sizeof v, "%lld", (long long)((retry_ms + 999) / 1000));
	s0__reply_header(c, "Retry-After", v);
}

void s0__reply_error(s0__rctx *c, s0_error *err)
{
	if (!err) {
		reply_err_details(c, 500, "internal_error", "internal error", NULL);
		return;
	}
	if (s0_error_code(err) == S0_ENOMEM)
		c->oom = true;
	const char *wire, *canon;
	int status;
	wire_of(err, &wire, &status, &canon);
	/* the engine's message is the wire message; a generic one (the code's
	 * description) gives way to the reason's canonical wire message */
	const char *msg = s0_error_message(err);
	if (!msg || !*msg || (canon && !strcmp(msg, s0_strerror(s0_error_code(err)))))
		msg = canon ? canon : s0_strerror(s0_error_code(err));
	char *full = NULL;
	if (status == 500 && c->action && strncmp(msg, "failed to ", 10))
		full = s0__asprintf("failed to %s: %s", c->action, msg);
	add_retry_after(c, s0_error_retry_after_ms(err));
	reply_err_details(c, status, wire, full ? full : msg, s0_error_details_json(err));
	free(full);
	s0_error_free(err);
}

void s0__reply_raw(s0__rctx *c, int status, const char *content_type, const void *data,
                   size_t len)
{
	reply_body(c, status, content_type, data, len);
}

int s0__router_reply_error(s0__http_response *resp, const char *request_id, int status,
                           const char *wire_code, const char *message)
{
	s0__rctx c = {.resp = resp};
	reply_err_details(&c, status, wire_code, message, NULL);
	if (request_id)
		s0__reply_header(&c, "X-Request-ID", request_id);
	return c.oom ? S0_ENOMEM : S0_OK;
}
