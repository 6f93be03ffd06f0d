/* CreateContextRequest parsing and validation (docs/wire.md §8.1). */
#include "local/runtime/sim/ctx_int.h"

#include "common/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad(s0_error **err, const char *msg)
{
	return s0__error_set(err, S0_EINVAL, "invalid_request", "%s", msg);
}

/* Only the wire keys of the SDK's models (CreateContextRequestToJSON and
 * the models it nests): a misspelt field ("tll_sec") is refused, not ignored. */
static int only(const cJSON *o, const char *const *keys, const char *path, s0_error **err)
{
	return s0__json_check_keys(o, keys, path, "invalid_request", err);
}

/* Optional string member into *out (copied). */
static int opt_str(const cJSON *o, const char *key, char **out, s0_error **err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!v || cJSON_IsNull(v))
		return S0_OK;
	if (!cJSON_IsString(v))
		return s0__error_set(err, S0_EINVAL, "invalid_request", "%s must be a string", key);
	free(*out);
	*out = s0__strdup(v->valuestring);
	return *out ? S0_OK : s0__error_nomem(err);
}

/* Optional int32 member (>= min; below it: msg). */
static int opt_i32(const cJSON *o, const char *key, int32_t min, int32_t *out, const char *msg,
                   s0_error **err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!v || cJSON_IsNull(v))
		return S0_OK;
	double d = v->valuedouble; /* the range test first: out of it, the cast is undefined */
	if (!cJSON_IsNumber(v) || !(d >= (double)INT32_MIN && d <= (double)INT32_MAX) ||
	    d != (double)(int32_t)d)
		return s0__error_set(err, S0_EINVAL, "invalid_request",
		                     "%s must be an integer in %d..%d", key, (int)min, (int)INT32_MAX);
	if ((int32_t)d < min)
		return bad(err, msg);
	*out = (int32_t)d;
	return S0_OK;
}

static int parse_command(const cJSON *cmd, ctx_req *r, s0_error **err)
{
	static const char *const keys[] = {"command", NULL};
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(cmd, "command");
	int n = cJSON_IsArray(c) ? cJSON_GetArraySize(c) : 0;
	if (only(cmd, keys, "cmd", err) < 0)
		return S0_EINVAL;
	if (c && !cJSON_IsNull(c) && !cJSON_IsArray(c))
		return bad(err, "cmd.command must be an array of strings");
	if (n < 1)
		return bad(err, "cmd.command is required");
	if (!(r->command = calloc((size_t)n + 1, sizeof *r->command)))
		return s0__error_nomem(err);
	const cJSON *it;
	cJSON_ArrayForEach(it, c)
	{
		if (!cJSON_IsString(it))
			return bad(err, "cmd.command must be an array of strings");
		if (!(r->command[r->ncommand++] = s0__strdup(it->valuestring)))
			return s0__error_nomem(err);
	}
	if (!r->command[0][0])
		return bad(err, "cmd.command[0] must not be empty");
	return S0_OK;
}

/* Each object of @p arr (REPLConfig's candidates / env lists) against @p keys. */
static int only_each(const cJSON *arr, const char *const *keys, const char *path, s0_error **err)
{
	const cJSON *it;
	int i = 0;
	if (!cJSON_IsArray(arr))
		return S0_OK;
	cJSON_ArrayForEach(it, arr)
	{
		char p[64];
		snprintf(p, sizeof p, "%s[%d]", path, i++);
		if (only(it, keys, p, err) < 0)
			return S0_EINVAL;
	}
	return S0_OK;
}

/* REPLConfig (REPLConfigToJSON and the models it nests): only name is used. */
static int repl_config_keys(const cJSON *cfg, s0_error **err)
{
	static const char *const keys[] = {"name", "display_name", "description", "candidates",
	                                   "env",  "default_term", "prompt",      "ready", NULL};
	static const char *const cand[] = {"name", "args", NULL};
	static const char *const env[] = {"name", "value", "value_from", NULL};
	static const char *const prompt[] = {"custom_prompt", NULL};
	static const char *const ready[] = {"mode", "token", "startup_delay_ms", NULL};
#define P "repl.repl_config"
	if (only(cfg, keys, P, err) < 0 ||
	    only(cJSON_GetObjectItemCaseSensitive(cfg, "prompt"), prompt, P ".prompt", err) < 0 ||
	    only(cJSON_GetObjectItemCaseSensitive(cfg, "ready"), ready, P ".ready", err) < 0 ||
	    only_each(cJSON_GetObjectItemCaseSensitive(cfg, "candidates"), cand, P ".candidates",
	              err) < 0 ||
	    only_each(cJSON_GetObjectItemCaseSensitive(cfg, "env"), env, P ".env", err) < 0)
		return S0_EINVAL;
#undef P
	return S0_OK;
}

static int parse_repl(const cJSON *repl, ctx_req *r, s0_error **err)
{
	static const char *const keys[] = {"alias", "input", "repl_config", NULL};
	int rc = only(repl, keys, "repl", err);
	if (rc == S0_OK)
		rc = opt_str(repl, "alias", &r->alias, err);
	if (rc == S0_OK)
		rc = opt_str(repl, "input", &r->input, err);
	const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(repl, "repl_config");
	if (rc < 0 || !cfg || cJSON_IsNull(cfg))
		return rc;
	if (cJSON_IsObject(cfg) && repl_config_keys(cfg, err) < 0)
		return S0_EINVAL;
	const char *name = cJSON_IsObject(cfg) ? s0__json_str(cfg, "name") : NULL;
	if (!name || !*name)
		return bad(err, "repl_config.name is required");
	if (r->alias && strcmp(r->alias, name))
		return bad(err, "repl alias and repl_config.name must match");
	if (!r->alias && !(r->alias = s0__strdup(name)))
		return s0__error_nomem(err);
	return S0_OK;
}

static int parse_env(const cJSON *body, ctx_req *r, s0_error **err)
{
	const cJSON *env = cJSON_GetObjectItemCaseSensitive(body, "env_vars");
	if (!env || cJSON_IsNull(env))
		return S0_OK;
	if (!cJSON_IsObject(env))
		return bad(err, "env_vars must be an object");
	const cJSON *it;
	cJSON_ArrayForEach(it, env)
	{
		if (!cJSON_IsString(it) || !s0__var_name_ok(it->string, strlen(it->string)))
			return bad(err, "env_vars must map variable names to strings");
		if (s0__vars_set(&r->env, it->string, it->valuestring, S0__VAR_EXPORT) < 0)
			return s0__error_nomem(err);
	}
	return S0_OK;
}

static int parse_pty(const cJSON *body, ctx_req *r, s0_error **err)
{
	const cJSON *pty = cJSON_GetObjectItemCaseSensitive(body, "pty_size");
	if (!pty || cJSON_IsNull(pty))
		return S0_OK;
	if (!cJSON_IsObject(pty))
		return bad(err, "pty_size must be an object");
	static const char *const keys[] = {"rows", "cols", NULL};
	if (only(pty, keys, "pty_size", err) < 0)
		return S0_EINVAL;
	r->rows = 24, r->cols = 80;
	int rc = opt_i32(pty, "rows", 1, &r->rows, "pty_size rows and cols must be > 0", err);
	if (rc == S0_OK)
		rc = opt_i32(pty, "cols", 1, &r->cols, "pty_size rows and cols must be > 0", err);
	r->pty = true;
	return rc;
}

/* type, and the repl/cmd objects that must agree with it. */
static int parse_type(const cJSON *body, ctx_req *r, const cJSON **repl, const cJSON **cmd,
                      s0_error **err)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(body, "type");
	*repl = cJSON_GetObjectItemCaseSensitive(body, "repl");
	*cmd = cJSON_GetObjectItemCaseSensitive(body, "cmd");
	if (cJSON_IsNull(*repl))
		*repl = NULL;
	if (cJSON_IsNull(*cmd))
		*cmd = NULL;
	if ((*repl && !cJSON_IsObject(*repl)) || (*cmd && !cJSON_IsObject(*cmd)))
		return bad(err, "repl and cmd must be objects");
	if (t && !cJSON_IsNull(t)) {
		if (!cJSON_IsString(t) || (strcmp(t->valuestring, "repl") && strcmp(t->valuestring, "cmd")))
			return bad(err, "type must be repl or cmd");
		r->type = strcmp(t->valuestring, "repl") ? S0__CTX_CMD : S0__CTX_REPL;
	} else {
		r->type = *cmd && !*repl ? S0__CTX_CMD : S0__CTX_REPL;
	}
	if (*repl && r->type != S0__CTX_REPL)
		return bad(err, "repl config requires type repl");
	if (*cmd && r->type != S0__CTX_CMD)
		return bad(err, "cmd config requires type cmd");
	if (r->type == S0__CTX_CMD && !*cmd)
		return bad(err, "cmd.command is required");
	return S0_OK;
}

int s0__ctx_req_parse(const cJSON *body, ctx_req *out, s0_error **err)
{
	memset(out, 0, sizeof *out);
	if (!cJSON_IsObject(body))
		return bad(err, "request body is required");
	static const char *const keys[] = {
		"type",     "repl",     "cmd",  "wait_until_done", "cwd", "env_vars",
		"pty_size", "idle_timeout_sec", "ttl_sec",         NULL};
	if (only(body, keys, "", err) < 0)
		return S0_EINVAL;
	const cJSON *repl, *cmd, *w = cJSON_GetObjectItemCaseSensitive(body, "wait_until_done");
	int rc = parse_type(body, out, &repl, &cmd, err);
	if (rc == S0_OK && w && !cJSON_IsNull(w) && !cJSON_IsBool(w))
		rc = bad(err, "wait_until_done must be a boolean");
	out->wait = cJSON_IsTrue(w);
	if (rc == S0_OK)
		rc = cmd ? parse_command(cmd, out, err) : repl ? parse_repl(repl, out, err) : S0_OK;
	if (rc == S0_OK)
		rc = opt_str(body, "cwd", &out->cwd, err);
	if (rc == S0_OK)
		rc = parse_env(body, out, err);
	if (rc == S0_OK)
		rc = parse_pty(body, out, err);
	const char *m = "idle_timeout_sec and ttl_sec must be >= 0";
	if (rc == S0_OK)
		rc = opt_i32(body, "idle_timeout_sec", 0, &out->idle, m, err);
	if (rc == S0_OK)
		rc = opt_i32(body, "ttl_sec", 0, &out->ttl, m, err);
	if (rc < 0)
		s0__ctx_req_clear(out);
	return rc;
}

void s0__ctx_req_clear(ctx_req *r)
{
	free(r->alias);
	free(r->input);
	for (uint32_t i = 0; i < r->ncommand; i++)
		free(r->command[i]);
	free(r->command);
	free(r->cwd);
	s0__vars_clear(&r->env);
	memset(r, 0, sizeof *r);
}
