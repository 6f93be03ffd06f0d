/* Restore a paused sandbox's RootFS and fork (docs/wire.md §3.8, §6.7). */
#include <string.h>

#include "common/json.h"
#include "local/api/api_internal.h"

static cJSON *done(cJSON *o, int rc)
{
	if (rc) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static void restore(s0__rctx *c, const char *snap)
{
	s0_error *err = NULL;
	if (s0__engine_restore(c->e, c->team, c->id, snap, &err) < 0) {
		s0__reply_error(c, err);
		return;
	}
	cJSON *d = cJSON_CreateObject();
	int rc = d ? 0 : -1;
	if (d) {
		rc |= s0__json_add_str(d, "sandbox_id", c->id);
		rc |= s0__json_add_str(d, "snapshot_id", snap);
		rc |= s0__json_add_str(d, "status", "paused");
	}
	if (!(d = done(d, rc)))
		c->oom = true;
	s0__reply_data(c, 200, d);
}

void s0__ep_restore(s0__rctx *c)
{
	c->action = "restore sandbox rootfs";
	cJSON *body;
	const char *snap;
	if (!s0__body_json(c, true, &body))
		return;
	if (s0__field_str(c, body, "snapshot_id", &snap)) {
		if (s0__is_blank(snap))
			s0__reply_err(c, 400, "bad_request", "snapshot_id is required");
		else
			restore(c, snap);
	}
	cJSON_Delete(body);
}

/* {config?: {ttl?, hard_ttl?}, memory?} only (additionalProperties: false
 * in the spec; `memory` is the memory fork of MEM-13). */
static bool fork_config(s0__rctx *c, const cJSON *body, s0__fork_req *f)
{
	const cJSON *cfg, *it;
	cJSON_ArrayForEach(it, body)
	{
		if (strcmp(it->string, "config") && strcmp(it->string, "memory")) {
			s0__reply_invalid(c, "unknown field \"%.64s\"", it->string);
			return false;
		}
	}
	if (!s0__field_obj(c, body, "config", &cfg) ||
	    !s0__field_bool(c, body, "memory", &(bool){false}, &f->memory))
		return false;
	cJSON_ArrayForEach(it, cfg)
	{
		if (strcmp(it->string, "ttl") && strcmp(it->string, "hard_ttl")) {
			s0__reply_invalid(c, "unknown field \"%.64s\" in config", it->string);
			return false;
		}
	}
	if (!s0__field_i32(c, cfg, "ttl", &f->has_ttl, &f->ttl_sec) ||
	    !s0__field_i32(c, cfg, "hard_ttl", &f->has_hard_ttl, &f->hard_ttl_sec))
		return false;
	if (f->ttl_sec < 0 || f->hard_ttl_sec < 0) {
		s0__reply_err(c, 400, "bad_request", "invalid fork request: %s must be >= 0",
		              f->ttl_sec < 0 ? "ttl" : "hard_ttl");
		return false;
	}
	if (f->ttl_sec > 0 && f->hard_ttl_sec > 0 && f->ttl_sec > f->hard_ttl_sec) {
		s0__reply_err(c, 400, "bad_request", "invalid fork request: ttl must be <= hard_ttl");
		return false;
	}
	return true;
}

static bool idempotency_key(s0__rctx *c, s0__fork_req *f)
{
	const char *k = s0__headers_get(&c->req->headers, "Idempotency-Key");
	if (k && strlen(k) > 255) {
		s0__reply_invalid(c, "Idempotency-Key is too long (%zu > 255)", strlen(k));
		return false;
	}
	f->idempotency_key = k && !s0__is_blank(k) ? k : NULL;
	return true;
}

static void fork_reply(s0__rctx *c, s0__sandbox_rec *child)
{
	cJSON *d = cJSON_CreateObject();
	cJSON *sb = s0__render_sandbox(child, c->opts->zero_time_compat);
	int rc = d && sb ? s0__json_add_str(d, "source_sandbox_id", c->id) : -1;
	if (!rc)
		cJSON_AddItemToObject(d, "sandbox", sb);
	else
		cJSON_Delete(sb);
	s0__sandbox_rec_clear(child);
	if (!(d = done(d, rc)))
		c->oom = true;
	s0__reply_data(c, 201, d);
}

void s0__ep_fork(s0__rctx *c)
{
	c->action = "fork sandbox";
	cJSON *body;
	s0__fork_req f = {0};
	if (!s0__body_json(c, false, &body))
		return;
	if (fork_config(c, body, &f) && idempotency_key(c, &f)) {
		s0__sandbox_rec child = {0};
		s0_error *err = NULL;
		if (s0__engine_fork(c->e, c->team, c->id, &f, &child, &err) < 0)
			s0__reply_error(c, err);
		else
			fork_reply(c, &child);
	}
	cJSON_Delete(body);
}
