/* Engine records as wire JSON: Sandbox, SandboxSummary, SandboxStatus, snapshots. */
#include <stdlib.h>

#include "common/json.h"
#include "local/api/api_internal.h"

int s0__json_add_time_sec(cJSON *o, const char *key, int64_t unix_ms)
{
	char buf[40];
	s0__time_format_rfc3339(unix_ms - unix_ms % 1000, buf, sizeof buf);
	return s0__json_add_str(o, key, buf);
}

static int add_status(cJSON *o, int status)
{
	return s0__json_add_str(o, "status", s0_status_name(status));
}

/* resources: only when the durable config carries a memory override. */
static int add_resources(cJSON *o, const char *config_json)
{
	cJSON *cfg = config_json ? cJSON_Parse(config_json) : NULL;
	const cJSON *res = cJSON_GetObjectItemCaseSensitive(cfg, "resources");
	const char *mem = s0__json_str(res, "memory");
	int rc = 0;
	if (mem && *mem) {
		cJSON *r = cJSON_AddObjectToObject(o, "resources");
		rc = r ? s0__json_add_str(r, "memory", mem) : -1;
	}
	cJSON_Delete(cfg);
	return rc;
}

static int add_common(cJSON *o, const s0__sandbox_rec *r, bool zero_time)
{
	int rc = s0__json_add_str(o, "id", r->id);
	rc |= s0__json_add_str(o, "template_id", r->template_id);
	rc |= add_status(o, r->status);
	rc |= s0__json_add_bool(o, "paused", r->paused);
	rc |= s0__json_add_i64(o, "runtime_generation", r->runtime_generation);
	rc |= s0__json_add_str(o, "runtime_id", r->runtime_id);
	rc |= s0__json_add_time(o, "created_at", r->created_at_ms, true);
	rc |= s0__json_add_time(o, "updated_at", r->updated_at_ms, true);
	rc |= s0__json_add_time(o, "expires_at", r->expires_at_ms, zero_time);
	rc |= s0__json_add_time(o, "hard_expires_at", r->hard_expires_at_ms, zero_time);
	return rc;
}

static cJSON *finish(cJSON *o, int rc)
{
	if (rc) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

cJSON *s0__render_sandbox(const s0__sandbox_rec *r, bool zero_time)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	int rc = add_common(o, r, zero_time);
	rc |= s0__json_add_str(o, "team_id", r->team_id);
	rc |= s0__json_add_bool(o, "auto_resume", r->auto_resume);
	rc |= s0__json_add_str(o, "pod_name", r->pod_name);
	rc |= s0__json_add_time(o, "claimed_at", r->claimed_at_ms, true);
	rc |= add_resources(o, r->config_json);
	return finish(o, rc);
}

cJSON *s0__render_summary(const s0__sandbox_rec *r, bool zero_time)
{
	cJSON *o = cJSON_CreateObject();
	return o ? finish(o, add_common(o, r, zero_time)) : NULL;
}

cJSON *s0__render_status(const s0__sandbox_rec *r, bool zero_time)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	int rc = s0__json_add_str(o, "sandbox_id", r->id);
	rc |= s0__json_add_str(o, "template_id", r->template_id);
	rc |= s0__json_add_str(o, "team_id", r->team_id);
	rc |= s0__json_add_str(o, "pod_name", r->pod_name);
	rc |= add_status(o, r->status);
	rc |= s0__json_add_time_sec(o, "claimed_at", r->claimed_at_ms);
	rc |= s0__json_add_time_sec(o, "created_at", r->created_at_ms);
	rc |= s0__json_add_time(o, "expires_at", r->expires_at_ms, zero_time);
	rc |= s0__json_add_time(o, "hard_expires_at", r->hard_expires_at_ms, zero_time);
	return finish(o, rc);
}

/* expires_at: the manager's Go zero time when unset, never null (docs/wire.md §3.8). */
cJSON *s0__render_snapshot(const s0__snapshot_rec *r)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	int rc = s0__json_add_str(o, "id", r->id);
	rc |= s0__json_add_str(o, "sandbox_id", r->sandbox_id);
	if (r->name[0])
		rc |= s0__json_add_str(o, "name", r->name);
	if (r->description[0])
		rc |= s0__json_add_str(o, "description", r->description);
	rc |= s0__json_add_time(o, "created_at", r->created_at_ms, true);
	rc |= s0__json_add_time(o, "expires_at", r->expires_at_ms, true);
	return finish(o, rc);
}
