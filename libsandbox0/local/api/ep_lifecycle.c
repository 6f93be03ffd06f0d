/* Pause, resume, refresh (docs/wire.md §3.7, §6.1, §6.3, §6.4). */
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

static void reply_or_oom(s0__rctx *c, int status, cJSON *d)
{
	if (!d)
		c->oom = true;
	s0__reply_data(c, status, d);
}

/* Optional {"memory": bool}: none, empty, {}, null and false are filesystem-only. */
static bool memory_flag(s0__rctx *c, bool *memory)
{
	cJSON *body;
	bool has = false;
	*memory = false;
	if (!s0__body_json(c, false, &body))
		return false;
	bool ok = s0__field_bool(c, body, "memory", &has, memory);
	cJSON_Delete(body);
	return ok;
}

void s0__ep_pause(s0__rctx *c)
{
	c->action = "pause sandbox";
	bool memory;
	if (!memory_flag(c, &memory))
		return;
	s0__pause_reply pr = {0};
	s0_error *err = NULL;
	if (s0__engine_pause(c->e, c->team, c->id, memory, &pr, &err) < 0) {
		s0__reply_error(c, err);
		return;
	}
	cJSON *d = cJSON_CreateObject();
	int rc = d ? 0 : -1;
	if (d) {
		rc |= s0__json_add_str(d, "sandbox_id", c->id);
		rc |= s0__json_add_bool(d, "paused", pr.paused);
		rc |= s0__json_add_str(d, "status", s0_status_name(pr.status));
		/* the durable operation recorded or joined and the runtime
		 * generation it retires (docs/wire.md §6.3) */
		if (pr.op_id > 0) {
			rc |= s0__json_add_i64(d, "operation_id", pr.op_id);
			rc |= s0__json_add_i64(d, "runtime_generation", pr.generation);
		}
	}
	bool accepted = pr.accepted || (c->opts->owner_unreachable && !pr.paused);
	reply_or_oom(c, accepted && !c->opts->pause_200_only ? 202 : 200, done(d, rc));
}

void s0__ep_resume(s0__rctx *c)
{
	c->action = "resume sandbox";
	bool memory;
	if (!memory_flag(c, &memory))
		return;
	s0__resume_reply rr = {0};
	s0_error *err = NULL;
	if (s0__engine_resume(c->e, c->team, c->id, memory, &rr, &err) < 0) {
		s0__reply_error(c, err);
		return;
	}
	cJSON *d = cJSON_CreateObject();
	int rc = d ? 0 : -1;
	if (d) {
		rc |= s0__json_add_str(d, "sandbox_id", c->id);
		rc |= s0__json_add_bool(d, "resumed", rr.resumed);
	}
	reply_or_oom(c, 200, done(d, rc));
}

static void refresh(s0__rctx *c, bool has, int32_t duration)
{
	s0__sandbox_rec rec = {0};
	s0_error *err = NULL;
	if (s0__engine_refresh(c->e, c->team, c->id, has && duration > 0, duration, &rec, &err) <
	    0) {
		s0__reply_error(c, err);
		return;
	}
	bool zt = c->opts->zero_time_compat;
	cJSON *d = cJSON_CreateObject();
	int rc = d ? 0 : -1;
	if (d) {
		rc |= s0__json_add_str(d, "sandbox_id", rec.id);
		rc |= s0__json_add_time(d, "expires_at", rec.expires_at_ms, zt);
		rc |= s0__json_add_time(d, "hard_expires_at", rec.hard_expires_at_ms, zt);
	}
	s0__sandbox_rec_clear(&rec);
	reply_or_oom(c, 200, done(d, rc));
}

void s0__ep_refresh(s0__rctx *c)
{
	c->action = "refresh sandbox";
	cJSON *body;
	bool has = false;
	int32_t duration = 0;
	if (!s0__body_json(c, false, &body))
		return;
	bool ok = s0__field_i32(c, body, "duration", &has, &duration);
	cJSON_Delete(body);
	if (!ok)
		return;
	if (has && duration < 0)
		s0__reply_err(c, 400, "bad_request", "invalid request: duration must be >= 0");
	else
		refresh(c, has, duration);
}
