/* Typed request members and the SandboxConfig checks of docs/wire.md §3.1 / §3.5. */
#include <math.h>

#include "local/api/api_internal.h"

static const cJSON *member(const cJSON *o, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
	return it && !cJSON_IsNull(it) ? it : NULL;
}

bool s0__field_str(s0__rctx *c, const cJSON *o, const char *key, const char **out)
{
	const cJSON *it = member(o, key);
	*out = NULL;
	if (!it)
		return true;
	if (!cJSON_IsString(it)) {
		s0__reply_invalid(c, "%s must be a string", key);
		return false;
	}
	*out = it->valuestring;
	return true;
}

bool s0__field_bool(s0__rctx *c, const cJSON *o, const char *key, bool *has, bool *out)
{
	const cJSON *it = member(o, key);
	*has = false;
	if (!it)
		return true;
	if (!cJSON_IsBool(it)) {
		s0__reply_invalid(c, "%s must be a boolean", key);
		return false;
	}
	*has = true;
	*out = cJSON_IsTrue(it);
	return true;
}

bool s0__field_i32(s0__rctx *c, const cJSON *o, const char *key, bool *has, int32_t *out)
{
	const cJSON *it = member(o, key);
	*has = false;
	if (!it)
		return true;
	double d = cJSON_IsNumber(it) ? it->valuedouble : NAN;
	if (!isfinite(d) || d != floor(d) || d < INT32_MIN || d > INT32_MAX) {
		s0__reply_invalid(c, "%s must be a 32-bit integer", key);
		return false;
	}
	*has = true;
	*out = (int32_t)d;
	return true;
}

bool s0__field_obj(s0__rctx *c, const cJSON *o, const char *key, const cJSON **out)
{
	const cJSON *it = member(o, key);
	*out = NULL;
	if (!it)
		return true;
	if (!cJSON_IsObject(it)) {
		s0__reply_invalid(c, "%s must be an object", key);
		return false;
	}
	*out = it;
	return true;
}

static bool string_map(s0__rctx *c, const cJSON *config, const char *key)
{
	const cJSON *m;
	if (!s0__field_obj(c, config, key, &m))
		return false;
	const cJSON *it;
	cJSON_ArrayForEach(it, m)
	{
		if (!cJSON_IsString(it)) {
			s0__reply_invalid(c, "%s values must be strings", key);
			return false;
		}
	}
	return true;
}

static bool shapes(s0__rctx *c, const cJSON *config)
{
	const cJSON *res, *net, *hook;
	const char *mem;
	bool has, b;
	if (!string_map(c, config, "env_vars") || !s0__field_obj(c, config, "resources", &res) ||
	    !s0__field_str(c, res, "memory", &mem) || !s0__field_obj(c, config, "network", &net) ||
	    !s0__field_obj(c, config, "webhook", &hook) ||
	    !s0__field_bool(c, config, "auto_resume", &has, &b))
		return false;
	const cJSON *svc = member(config, "services");
	if (svc && !cJSON_IsArray(svc)) {
		s0__reply_invalid(c, "services must be an array");
		return false;
	}
	return true;
}

bool s0__check_config(s0__rctx *c, const cJSON *config, const char *what)
{
	if (!config)
		return true;
	bool has_ttl, has_hard;
	int32_t ttl = 0, hard = 0;
	if (!shapes(c, config) || !s0__field_i32(c, config, "ttl", &has_ttl, &ttl) ||
	    !s0__field_i32(c, config, "hard_ttl", &has_hard, &hard))
		return false;
	if (ttl < 0 || hard < 0) {
		s0__reply_err(c, 400, "bad_request", "invalid %s request: %s must be >= 0", what,
		              ttl < 0 ? "ttl" : "hard_ttl");
		return false;
	}
	if (ttl > 0 && hard > 0 && ttl > hard) {
		s0__reply_err(c, 400, "bad_request", "invalid %s request: ttl must be <= hard_ttl",
		              what);
		return false;
	}
	return true;
}
