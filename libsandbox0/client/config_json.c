/* s0_sandbox_config -> SandboxConfig / SandboxUpdateConfig JSON. */
#include <stdlib.h>
#include <string.h>

#include "client/client_internal.h"
#include "client/config_json.h"
#include "common/json.h"

static int add_env(cJSON *cfg, const char *const *env, s0_error **err)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return s0__error_nomem(err);
	cJSON_DeleteItemFromObjectCaseSensitive(cfg, "env_vars");
	cJSON_AddItemToObject(cfg, "env_vars", o);
	for (size_t i = 0; env[i]; i++) {
		const char *eq = strchr(env[i], '=');
		if (!eq || eq == env[i])
			return s0__error_set(err, S0_EINVAL, "invalid_argument",
			                     "env_vars[%zu] is not KEY=VALUE", i);
		char *k = s0__strndup(env[i], (size_t)(eq - env[i]));
		int rc = k ? s0__json_add_str(o, k, eq + 1) : -1;
		free(k);
		if (rc < 0)
			return s0__error_nomem(err);
	}
	return S0_OK;
}

static int set_i64(cJSON *cfg, const char *key, int64_t v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(cfg, key);
	return s0__json_add_i64(cfg, key, v);
}

int s0__config_to_json(const s0_sandbox_config *c, cJSON **out, s0_error **err)
{
	if (c->version != S0_SANDBOX_CONFIG_VERSION)
		return s0__error_set(err, S0_EINVAL, "options_version",
		                     "s0_sandbox_config.version %u is not %u", c->version,
		                     S0_SANDBOX_CONFIG_VERSION);
	cJSON *cfg = c->extra_json ? s0__json_parse_arg(c->extra_json, "extra_json", err)
	                           : cJSON_CreateObject();
	if (!cfg)
		return c->extra_json ? S0_EINVAL : s0__error_nomem(err);
	int rc = S0_OK;
	if ((c->set & S0_CONFIG_SET_TTL) && set_i64(cfg, "ttl", c->ttl_sec) < 0)
		rc = s0__error_nomem(err);
	if (!rc && (c->set & S0_CONFIG_SET_HARD_TTL) && set_i64(cfg, "hard_ttl", c->hard_ttl_sec) < 0)
		rc = s0__error_nomem(err);
	if (!rc && c->auto_resume) {
		cJSON_DeleteItemFromObjectCaseSensitive(cfg, "auto_resume");
		if (s0__json_add_bool(cfg, "auto_resume", c->auto_resume == S0_BOOL_TRUE) < 0)
			rc = s0__error_nomem(err);
	}
	if (!rc && c->memory) {
		cJSON *res = cJSON_CreateObject();
		cJSON_DeleteItemFromObjectCaseSensitive(cfg, "resources");
		if (!res || !cJSON_AddItemToObject(cfg, "resources", res) ||
		    s0__json_add_str(res, "memory", c->memory) < 0)
			rc = s0__error_nomem(err);
	}
	if (!rc && c->env_vars)
		rc = add_env(cfg, c->env_vars, err);
	if (rc < 0) {
		cJSON_Delete(cfg);
		return rc;
	}
	*out = cfg;
	return S0_OK;
}
