/* Query parameters, runtime access and small replies of the files endpoints. */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/api/files_common.h"

void s0__files_invalid(s0__rctx *c, const char *wire, const char *msg)
{
	s0__reply_err(c, 400, wire, "%s", msg);
}

bool s0__files_param(s0__rctx *c, const char *key, char **out, size_t *len)
{
	bool present = false;
	*out = NULL;
	if (!s0__query_value(c, key, &present, out))
		return false; /* a NUL byte: answered 400 */
	if (!*out || !**out) {
		free(*out);
		*out = NULL;
		s0__reply_err(c, 400, "invalid_request", "%s is required", key);
		return false;
	}
	*len = strlen(*out);
	return true;
}

bool s0__files_flag(s0__rctx *c, const char *key)
{
	bool present = false;
	char *v = NULL;
	bool on = s0__query_value(c, key, &present, &v) && v && !strcmp(v, "true");
	free(v);
	return on;
}

bool s0__files_begin(s0__rctx *c, s0__runtime_access **acc, const s0__files_ns **ns)
{
	int64_t budget = c->opts->wake_budget_ms > 0 ? c->opts->wake_budget_ms
	                                             : S0__ROUTER_WAKE_BUDGET_MS;
	s0_error *err = NULL;
	if (s0__engine_runtime_begin(c->e, c->team, c->id, budget, acc, &err) < 0) {
		s0__reply_error(c, err);
		return false;
	}
	*ns = s0__runtime_access_files(*acc);
	if (!*ns) {
		s0__engine_runtime_end(*acc);
		s0__reply_err(c, 503, "unavailable", "sandbox is not running");
		return false;
	}
	return true;
}

void s0__files_done(s0__rctx *c, int status, const char *key)
{
	cJSON *d = cJSON_CreateObject();
	if (d && s0__json_add_bool(d, key, true) < 0) {
		cJSON_Delete(d);
		d = NULL;
	}
	if (!d)
		c->oom = true;
	s0__reply_data(c, status, d);
}
