/* RootFS snapshots: create, list, get, delete (docs/wire.md §3.8). */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/api/api_internal.h"

static void reply_snapshot(s0__rctx *c, int status, const s0__snapshot_rec *r)
{
	cJSON *d = s0__render_snapshot(r);
	if (!d)
		c->oom = true;
	s0__reply_data(c, status, d);
}

static bool string_limit(s0__rctx *c, const char *key, const char *v, size_t max)
{
	if (v && strlen(v) > max) {
		s0__reply_invalid(c, "%s is too long (%zu > %zu)", key, strlen(v), max);
		return false;
	}
	return true;
}

static bool parse_expiry(s0__rctx *c, const char *s, int64_t *out)
{
	*out = 0;
	if (s && *s && s0__time_parse_rfc3339(s, out) < 0) {
		s0__reply_invalid(c, "expires_at must be an RFC 3339 date-time");
		return false;
	}
	return true;
}

void s0__ep_snapshot_create(s0__rctx *c)
{
	c->action = "create sandbox rootfs snapshot";
	cJSON *body;
	const char *name = NULL, *desc = NULL, *exp = NULL;
	int64_t exp_ms = 0;
	if (!s0__body_json(c, false, &body))
		return;
	s0__snapshot_rec rec = {0};
	if (s0__field_str(c, body, "name", &name) && s0__field_str(c, body, "description", &desc) &&
	    s0__field_str(c, body, "expires_at", &exp) &&
	    string_limit(c, "name", name, sizeof rec.name - 1) &&
	    string_limit(c, "description", desc, sizeof rec.description - 1) &&
	    parse_expiry(c, exp, &exp_ms)) {
		s0_error *err = NULL;
		if (s0__engine_snapshot_create(c->e, c->team, c->id, name, desc, exp_ms, &rec, &err) <
		    0)
			s0__reply_error(c, err);
		else
			reply_snapshot(c, 201, &rec);
	}
	cJSON_Delete(body);
}

static cJSON *render_list(const s0__snapshot_rec *recs, size_t n)
{
	cJSON *d = cJSON_CreateObject();
	cJSON *arr = d ? cJSON_AddArrayToObject(d, "snapshots") : NULL;
	int rc = arr ? 0 : -1;
	for (size_t i = 0; i < n && !rc; i++) {
		cJSON *s = s0__render_snapshot(&recs[i]);
		rc = s ? 0 : -1;
		if (s)
			cJSON_AddItemToArray(arr, s);
	}
	if (!rc)
		rc = s0__json_add_i64(d, "count", (int64_t)n);
	if (rc) {
		cJSON_Delete(d);
		return NULL;
	}
	return d;
}

void s0__ep_snapshot_list(s0__rctx *c)
{
	c->action = "list sandbox rootfs snapshots";
	s0__snapshot_rec *recs = NULL;
	size_t n = 0;
	s0_error *err = NULL;
	if (s0__engine_snapshot_list(c->e, c->team, c->id, &recs, &n, &err) < 0) {
		s0__reply_error(c, err);
		return;
	}
	cJSON *d = render_list(recs, n);
	free(recs);
	if (!d)
		c->oom = true;
	s0__reply_data(c, 200, d);
}

void s0__ep_snapshot_get(s0__rctx *c)
{
	c->action = "get sandbox rootfs snapshot";
	s0__snapshot_rec rec = {0};
	s0_error *err = NULL;
	if (s0__engine_snapshot_get(c->e, c->team, c->id, &rec, &err) < 0)
		s0__reply_error(c, err);
	else
		reply_snapshot(c, 200, &rec);
}

void s0__ep_snapshot_delete(s0__rctx *c)
{
	c->action = "delete sandbox rootfs snapshot";
	s0_error *err = NULL;
	if (s0__engine_snapshot_delete(c->e, c->team, c->id, &err) < 0) {
		s0__reply_error(c, err);
		return;
	}
	cJSON *d = cJSON_CreateObject();
	if (d && s0__json_add_bool(d, "deleted", true) < 0) {
		cJSON_Delete(d);
		d = NULL;
	}
	if (!d)
		c->oom = true;
	s0__reply_data(c, 200, d);
}
