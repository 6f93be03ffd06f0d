/* SandboxConfig validation and application (docs/wire.md §3.1, §3.5, §6.10). */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/lifecycle/engine_internal.h"
#include "local/runtime/netpolicy.h"

#define MEM_MIN (128LL << 20)
#define MEM_MAX (16LL << 30)

static int bad(s0_error **err, const char *what, const char *msg)
{
	return s0__error_set(err, S0_EINVAL, "bad_request", "invalid %s request: %s", what, msg);
}

static int check_int(const cJSON *cfg, const char *key, const char *what, int32_t *out, bool *has,
                     s0_error **err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cfg, key);
	*has = v && !cJSON_IsNull(v);
	if (!*has)
		return S0_OK;
	if (!cJSON_IsNumber(v) || v->valuedouble != (double)(int64_t)v->valuedouble ||
	    v->valuedouble > 2147483647.0)
		return s0__error_set(err, S0_EINVAL, "bad_request", "invalid %s request: %s must be an integer",
		                     what, key);
	if (v->valuedouble < 0)
		return s0__error_set(err, S0_EINVAL, "bad_request", "invalid %s request: %s must be >= 0",
		                     what, key);
	*out = (int32_t)v->valuedouble;
	return S0_OK;
}

static int check_shapes(const cJSON *cfg, const char *what, bool update, s0_error **err)
{
	const cJSON *env = cJSON_GetObjectItemCaseSensitive(cfg, "env_vars");
	if (env && !cJSON_IsNull(env)) {
		if (!cJSON_IsObject(env))
			return bad(err, what, "env_vars must be an object");
		const cJSON *it;
		cJSON_ArrayForEach(it, env) if (!cJSON_IsString(it)) return bad(
			err, what, "env_vars values must be strings");
	}
	const cJSON *res = cJSON_GetObjectItemCaseSensitive(cfg, "resources");
	if (res && !cJSON_IsNull(res)) {
		const cJSON *mem = cJSON_GetObjectItemCaseSensitive(res, "memory");
		if (!cJSON_IsObject(res) || (mem && !cJSON_IsString(mem)))
			return bad(err, what, "resources.memory must be a string");
		int64_t b = mem ? s0__parse_memory(mem->valuestring) : MEM_MIN;
		if (b < MEM_MIN || b > MEM_MAX)
			return bad(err, what, "memory must be between 128Mi and 16Gi");
	}
	const cJSON *ar = cJSON_GetObjectItemCaseSensitive(cfg, "auto_resume");
	if (ar && !cJSON_IsNull(ar) && !cJSON_IsBool(ar))
		return bad(err, what, "auto_resume must be a boolean");
	const cJSON *svc = cJSON_GetObjectItemCaseSensitive(cfg, "services");
	if (svc && !cJSON_IsNull(svc) && !cJSON_IsArray(svc))
		return bad(err, what, "services must be an array");
	int rc = s0__netpolicy_validate(cJSON_GetObjectItemCaseSensitive(cfg, "network"), what, err);
	if (rc < 0)
		return rc;
	if (update && cJSON_GetObjectItemCaseSensitive(cfg, "webhook"))
		return bad(err, what, "webhook can only be set at claim");
	return S0_OK;
}

/* UCloud-style lifecycle {on_timeout, auto_resume} → ttl/hard_ttl (docs/wire.md §6.10). */
static int translate_lifecycle(cJSON *cfg, const char *what, s0_error **err)
{
	cJSON *lc = cJSON_DetachItemFromObjectCaseSensitive(cfg, "lifecycle");
	if (!lc)
		return S0_OK;
	int rc = S0_OK;
	const char *on = s0__json_str(lc, "on_timeout");
	const cJSON *ar = cJSON_GetObjectItemCaseSensitive(lc, "auto_resume");
	if (!cJSON_IsObject(lc) || (on && strcmp(on, "pause") && strcmp(on, "kill")))
		rc = bad(err, what, "lifecycle.on_timeout must be \"pause\" or \"kill\"");
	else if (on && !strcmp(on, "kill")) {
		/* the timeout becomes a hard deadline */
		cJSON *ttl = cJSON_DetachItemFromObjectCaseSensitive(cfg, "ttl");
		if (ttl) {
			cJSON_DeleteItemFromObjectCaseSensitive(cfg, "hard_ttl");
			cJSON_AddItemToObject(cfg, "hard_ttl", ttl);
			cJSON_AddNumberToObject(cfg, "ttl", 0);
		}
	}
	if (rc == S0_OK && cJSON_IsBool(ar) && !cJSON_GetObjectItemCaseSensitive(cfg, "auto_resume"))
		cJSON_AddBoolToObject(cfg, "auto_resume", cJSON_IsTrue(ar));
	cJSON_Delete(lc);
	return rc;
}

/* null means "not given" inside `resources` too: {"memory": null} keeps
 * the memory, and a `resources` left empty is not given at all. */
static void drop_null_resources(cJSON *cfg)
{
	cJSON *res = cJSON_GetObjectItemCaseSensitive(cfg, "resources");
	if (!cJSON_IsObject(res))
		return;
	for (cJSON *m = res->child, *next; m; m = next) {
		next = m->next;
		if (cJSON_IsNull(m))
			cJSON_Delete(cJSON_DetachItemViaPointer(res, m));
	}
	if (!res->child)
		cJSON_DeleteItemFromObjectCaseSensitive(cfg, "resources");
}

/* Merge the given keys into the stored config object. */
static int merge(s0__sandbox_row *row, const cJSON *cfg, s0_error **err)
{
	cJSON *stored = cJSON_Parse(row->rec.config_json ? row->rec.config_json : "{}");
	if (!stored)
		stored = cJSON_CreateObject();
	if (!stored)
		return s0__error_nomem(err);
	const cJSON *it;
	cJSON_ArrayForEach(it, cfg)
	{
		if (cJSON_IsNull(it))
			continue; /* null = omitted = keep (docs/wire.md §3.5; Go's decoding) */
		cJSON_DeleteItemFromObjectCaseSensitive(stored, it->string);
		cJSON_AddItemToObject(stored, it->string, cJSON_Duplicate(it, 1));
	}
	char *txt = cJSON_PrintUnformatted(stored);
	cJSON_Delete(stored);
	if (!txt)
		return s0__error_nomem(err);
	free(row->rec.config_json);
	row->rec.config_json = txt;
	return S0_OK;
}

int s0__config_apply(const cJSON *in, bool update, s0__sandbox_row *row, int64_t now,
                     s0_error **err)
{
	const char *what = update ? "update" : "claim";
	if (in && !cJSON_IsObject(in))
		return bad(err, what, "config must be an object");
	cJSON *cfg = in ? cJSON_Duplicate(in, 1) : cJSON_CreateObject();
	if (!cfg)
		return s0__error_nomem(err);
	int32_t ttl = row->rec.ttl_sec, hard = row->rec.hard_ttl_sec;
	bool has_ttl = false, has_hard = false;
	int rc = translate_lifecycle(cfg, what, err);
	drop_null_resources(cfg);
	if (rc == S0_OK)
		rc = check_shapes(cfg, what, update, err);
	if (rc == S0_OK)
		rc = check_int(cfg, "ttl", what, &ttl, &has_ttl, err);
	if (rc == S0_OK)
		rc = check_int(cfg, "hard_ttl", what, &hard, &has_hard, err);
	if (rc == S0_OK && ttl > 0 && hard > 0 && ttl > hard)
		rc = bad(err, what, "ttl must be <= hard_ttl");
	if (rc == S0_OK)
		rc = merge(row, cfg, err);
	if (rc == S0_OK) {
		const cJSON *ar = cJSON_GetObjectItemCaseSensitive(cfg, "auto_resume");
		if (cJSON_IsBool(ar))
			row->rec.auto_resume = cJSON_IsTrue(ar);
		if (!update || has_ttl) {
			row->rec.ttl_sec = ttl;
			row->rec.expires_at_ms = ttl > 0 && !row->rec.paused ? now + ttl * 1000LL : 0;
		}
		if (!update || has_hard) {
			row->rec.hard_ttl_sec = hard;
			row->rec.hard_expires_at_ms = hard > 0 ? now + hard * 1000LL : 0;
		}
	}
	cJSON_Delete(cfg);
	return rc;
}
