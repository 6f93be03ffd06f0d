/* Claim, get, status, update, delete (docs/wire.md §3.1, §3.3–§3.6). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/api/api_internal.h"
#include "local/lifecycle/services.h"

/* Go strings.ToLower(strings.TrimSpace(s)) for ASCII. */
static char *normalise_template(const char *s)
{
	while (s && isspace((unsigned char)*s))
		s++;
	size_t n = s ? strlen(s) : 0;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	char *t = s0__strndup(s ? s : "", n);
	for (char *p = t; p && *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return t;
}

static bool template_ok(s0__rctx *c, const char *t)
{
	if (!*t)
		s0__reply_err(c, 400, "bad_request", "template is required");
	else if (strlen(t) > 255)
		s0__reply_err(c, 400, "bad_request", "template_id is too long (%zu > 255)", strlen(t));
	else if (strchr(t, '/'))
		s0__reply_err(c, 400, "bad_request", "template_id cannot contain '/'");
	else
		return true;
	return false;
}

static cJSON *claim_response(const s0__sandbox_rec *r)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	int rc = s0__json_add_str(o, "sandbox_id", r->id);
	rc |= s0__json_add_str(o, "status", s0_status_name(r->status));
	rc |= s0__json_add_str(o, "pod_name", r->pod_name);
	rc |= s0__json_add_str(o, "template", r->template_id);
	rc |= s0__json_add_str(o, "runtime_id", r->runtime_id);
	if (rc) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* Reply with a rendered record (NULL render = OOM) and clear it. */
static void reply_rec(s0__rctx *c, int status, cJSON *data, s0__sandbox_rec *r)
{
	s0__sandbox_rec_clear(r);
	if (!data) {
		c->oom = true;
		s0__reply_err(c, 500, "internal_error", "out of memory");
		return;
	}
	s0__reply_data(c, status, data);
}

static void claim(s0__rctx *c, const cJSON *body)
{
	const char *tpl, *snap;
	const cJSON *config, *mounts = cJSON_GetObjectItemCaseSensitive(body, "mounts");
	if (!s0__field_str(c, body, "template", &tpl) ||
	    !s0__field_str(c, body, "snapshot_id", &snap) ||
	    !s0__field_obj(c, body, "config", &config) || !s0__check_config(c, config, "claim"))
		return;
	if (mounts && !cJSON_IsNull(mounts) && !cJSON_IsArray(mounts)) {
		s0__reply_invalid(c, "mounts must be an array");
		return;
	}
	/* volumes (what the official SDKs send as claim-time mounts) do not
	 * exist here: refused by name, never ignored (docs/wire.md §3.1) */
	if (cJSON_GetArraySize(mounts) > 0) {
		s0__reply_invalid(c, "mounts is not supported: this server has no sandbox volumes");
		return;
	}
	char *t = normalise_template(tpl);
	if (!t) {
		c->oom = true;
		return;
	}
	/* config.services (the SDKs' claim option): checked first, stored after */
	const cJSON *svc = cJSON_GetObjectItemCaseSensitive(config, "services");
	bool ar = !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(config, "auto_resume"));
	s0_error *err = NULL;
	if (cJSON_GetArraySize(svc) > 0 && s0__services_validate(svc, ar, &err) < 0)
		s0__reply_error(c, err);
	else if (template_ok(c, t)) {
		s0__claim_req req = {.template_id = t, .snapshot_id = snap && *snap ? snap : NULL,
		                     .config = config};
		s0__sandbox_rec rec = {0};
		cJSON *stored = NULL;
		if (s0__engine_claim(c->e, c->team, &req, &rec, &err) < 0 ||
		    (cJSON_GetArraySize(svc) > 0 &&
		     s0__engine_services_put(c->e, c->team, rec.id, svc, &stored, &err) < 0)) {
			s0__sandbox_rec_clear(&rec);
			s0__reply_error(c, err);
		} else {
			reply_rec(c, 201, claim_response(&rec), &rec);
		}
		cJSON_Delete(stored);
	}
	free(t);
}

void s0__ep_claim(s0__rctx *c)
{
	c->action = "claim sandbox";
	cJSON *body;
	if (!s0__body_json(c, true, &body))
		return;
	claim(c, body);
	cJSON_Delete(body);
}

void s0__ep_get(s0__rctx *c)
{
	c->action = "get sandbox";
	s0__sandbox_rec rec = {0};
	s0_error *err = NULL;
	char etag[96];
	s0__etag_of(c->e, c->id, etag, sizeof etag); /* before the read: never newer than it */
	if (s0__engine_get(c->e, c->team, c->id, &rec, &err) < 0) {
		s0__reply_error(c, err);
		return;
	}
	s0__reply_header(c, "ETag", etag);
	if (!s0__etag_none_match(s0__headers_get(&c->req->headers, "If-None-Match"), etag)) {
		s0__sandbox_rec_clear(&rec); /* unchanged: 304, no body (RFC 9110 §15.4.5) */
		c->resp->status = 304;
		return;
	}
	reply_rec(c, 200, s0__render_sandbox(&rec, c->opts->zero_time_compat), &rec);
}

void s0__ep_status(s0__rctx *c)
{
	c->action = "get sandbox";
	s0__sandbox_rec rec = {0};
	s0_error *err = NULL;
	if (s0__engine_get(c->e, c->team, c->id, &rec, &err) < 0)
		s0__reply_error(c, err);
	else
		reply_rec(c, 200, s0__render_status(&rec, c->opts->zero_time_compat), &rec);
}

void s0__ep_update(s0__rctx *c)
{
	c->action = "update sandbox";
	cJSON *body;
	const cJSON *config;
	if (!s0__body_json(c, true, &body))
		return;
	if (s0__field_obj(c, body, "config", &config)) {
		if (!config) {
			s0__reply_err(c, 400, "bad_request", "config is required");
		} else if (s0__check_config(c, config, "update")) {
			s0__sandbox_rec rec = {0};
			s0_error *err = NULL;
			if (s0__engine_update(c->e, c->team, c->id, config, &rec, &err) < 0)
				s0__reply_error(c, err);
			else
				reply_rec(c, 200, s0__render_sandbox(&rec, c->opts->zero_time_compat),
				          &rec);
		}
	}
	cJSON_Delete(body);
}

void s0__ep_delete(s0__rctx *c)
{
	c->action = "terminate sandbox";
	s0_error *err = NULL;
	if (s0__engine_delete(c->e, c->team, c->id, &err) < 0) {
		s0__reply_error(c, err);
		return;
	}
	cJSON *d = cJSON_CreateObject();
	if (d && s0__json_add_str(d, "message", "sandbox terminated successfully") < 0) {
		cJSON_Delete(d);
		d = NULL;
	}
	if (!d)
		c->oom = true;
	/* 202 as today's official SDKs declare it (docs/wire.md §3.6) */
	s0__reply_data(c, 202, d);
}
