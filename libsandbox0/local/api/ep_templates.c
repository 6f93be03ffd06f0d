/*
 * Templates of the caller's team (docs/local-backend.md "Templates"):
 * POST /api/v1/templates {template_id, spec} (the official API), or the
 * same path with a tar archive body (Content-Type application/x-tar, the
 * name in ?template_id=, a local extension the s0 CLI uses), GET list,
 * GET one, DELETE one. Wire shapes are the official SDKs' `Template`.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/json.h"
#include "local/api/api_internal.h"
#include "local/lifecycle/templates.h"

/*
 * The official `SandboxTemplateSpec` requires `mainContainer` {image,
 * resources: {memory}} (the published SDKs decode nothing without it); a
 * spec stored without one answers the container this backend runs
 * (docs/local-backend.md "Templates"). Returns -1 when out of memory.
 */
static int fill_main_container(cJSON *spec)
{
	if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(spec, "mainContainer")))
		return 0;
	cJSON_DeleteItemFromObjectCaseSensitive(spec, "mainContainer");
	cJSON *mc = cJSON_AddObjectToObject(spec, "mainContainer");
	if (!mc || s0__json_add_str(mc, "image", "sandbox0-local-rootfs"))
		return -1;
	cJSON *res = cJSON_AddObjectToObject(mc, "resources");
	return res && !s0__json_add_str(res, "memory", "512Mi") ? 0 : -1;
}

static cJSON *render(const s0__template_row *t)
{
	cJSON *d = cJSON_CreateObject();
	cJSON *spec = cJSON_Parse(t->spec_json ? t->spec_json : "{}");
	if (!cJSON_IsObject(spec)) {
		cJSON_Delete(spec);
		spec = cJSON_CreateObject();
	}
	int rc = d && spec ? fill_main_container(spec) : -1;
	rc |= s0__json_add_str(d, "template_id", t->name);
	rc |= s0__json_add_str(d, "scope", t->team_id[0] ? "team" : "public");
	if (t->team_id[0])
		rc |= s0__json_add_str(d, "team_id", t->team_id);
	if (!rc) {
		cJSON_AddItemToObject(d, "spec", spec);
		spec = NULL;
	}
	rc |= s0__json_add_time(d, "created_at", t->created_at_ms, true);
	rc |= s0__json_add_time(d, "updated_at", t->updated_at_ms, true);
	cJSON_Delete(spec);
	if (rc) {
		cJSON_Delete(d);
		return NULL;
	}
	return d;
}

static void reply_template(s0__rctx *c, int status, const s0__template_row *t)
{
	cJSON *d = render(t);
	if (!d)
		c->oom = true;
	s0__reply_data(c, status, d);
}

/* Trimmed and lowercased, as a claim's template (docs/wire.md §3.1). */
static char *normalise(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	char *out = s0__strdup(s);
	size_t n = out ? strlen(out) : 0;
	while (n && (out[n - 1] == ' ' || out[n - 1] == '\t'))
		out[--n] = 0;
	for (size_t i = 0; i < n; i++)
		out[i] = (char)tolower((unsigned char)out[i]);
	return out;
}

/* Whether the media type (before any parameters, any case) is type. */
static bool media_is(const char *ct, const char *type)
{
	size_t n = strlen(type);
	return !strncasecmp(ct, type, n) && (!ct[n] || ct[n] == ';' || ct[n] == ' ' || ct[n] == '\t');
}

static bool is_tar(const s0__rctx *c)
{
	const char *ct = s0__headers_get(&c->req->headers, "Content-Type");
	return ct && (media_is(ct, "application/x-tar") || media_is(ct, "application/gzip") ||
	              media_is(ct, "application/octet-stream"));
}

static void create_tar(s0__rctx *c)
{
	bool present = false;
	char *raw = NULL, *name = NULL;
	if (!s0__query_value(c, "template_id", &present, &raw))
		return;
	if (!raw || !*raw) {
		s0__reply_invalid(c, "template_id is required (query parameter of a tar upload)");
	} else if (!(name = normalise(raw))) {
		c->oom = true;
	} else {
		s0__template_row t = {0};
		s0_error *err = NULL;
		if (s0__engine_template_create_tar(c->e, c->team, name, NULL, c->req->body,
		                                   c->req->has_body ? c->req->body_len : 0, &t,
		                                   &err) < 0)
			s0__reply_error(c, err);
		else
			reply_template(c, 201, &t);
		s0__template_row_clear(&t);
	}
	free(raw);
	free(name);
}

void s0__ep_template_create(s0__rctx *c)
{
	c->action = "create template";
	if (is_tar(c)) {
		create_tar(c);
		return;
	}
	cJSON *body;
	const char *id = NULL;
	const cJSON *spec = NULL;
	if (!s0__body_json(c, true, &body))
		return;
	char *name = NULL, *spec_text = NULL;
	if (s0__field_str(c, body, "template_id", &id) && s0__field_obj(c, body, "spec", &spec)) {
		if (!id || !*id)
			s0__reply_invalid(c, "template_id is required");
		else if (!(name = normalise(id)) ||
		         (spec && !(spec_text = cJSON_PrintUnformatted(spec))))
			c->oom = true;
		else {
			s0__template_row t = {0};
			s0_error *err = NULL;
			if (s0__engine_template_create(c->e, c->team, name, spec_text, NULL, &t, &err) < 0)
				s0__reply_error(c, err);
			else
				reply_template(c, 201, &t);
			s0__template_row_clear(&t);
		}
	}
	free(name);
	free(spec_text);
	cJSON_Delete(body);
}

void s0__ep_template_list(s0__rctx *c)
{
	c->action = "list templates";
	s0__template_row *v = NULL;
	size_t n = 0;
	s0_error *err = NULL;
	if (s0__engine_template_list(c->e, c->team, &v, &n, &err) < 0) {
		s0__reply_error(c, err);
		return;
	}
	cJSON *d = cJSON_CreateObject();
	cJSON *arr = d ? cJSON_AddArrayToObject(d, "templates") : NULL;
	bool ok = arr != NULL;
	for (size_t i = 0; i < n; i++) {
		cJSON *t = ok ? render(&v[i]) : NULL;
		ok = ok && t;
		if (t)
			cJSON_AddItemToArray(arr, t);
		s0__template_row_clear(&v[i]);
	}
	free(v);
	if (!ok || s0__json_add_i64(d, "count", (int64_t)n) < 0) {
		cJSON_Delete(d);
		d = NULL;
		c->oom = true;
	}
	s0__reply_data(c, 200, d);
}

void s0__ep_template_get(s0__rctx *c)
{
	c->action = "get template";
	s0__template_row t = {0};
	s0_error *err = NULL;
	char *name = normalise(c->id);
	if (!name)
		c->oom = true;
	else if (s0__engine_template_get(c->e, c->team, name, &t, &err) < 0)
		s0__reply_error(c, err);
	else
		reply_template(c, 200, &t);
	s0__template_row_clear(&t);
	free(name);
}

void s0__ep_template_delete(s0__rctx *c)
{
	c->action = "delete template";
	s0_error *err = NULL;
	char *name = normalise(c->id);
	if (!name) {
		c->oom = true;
		return;
	}
	if (s0__engine_template_delete(c->e, c->team, name, &err) < 0) {
		s0__reply_error(c, err);
		free(name);
		return;
	}
	free(name);
	cJSON *d = cJSON_CreateObject();
	if (d && s0__json_add_str(d, "message", "template deleted") < 0) {
		cJSON_Delete(d);
		d = NULL;
	}
	if (!d)
		c->oom = true;
	s0__reply_data(c, 200, d);
}
