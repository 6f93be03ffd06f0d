/* s0_sandbox_info: an immutable snapshot of one sandbox JSON object. */
#include <stdlib.h>
#include <string.h>

#include "client/client_internal.h"
#include "common/json.h"

struct s0_sandbox_info {
	char *json;
	char *id, *template_id, *team_id, *pod_name, *runtime_id;
	int status;
	bool paused, auto_resume;
	int64_t generation;
	int64_t expires_at, hard_expires_at, created_at, updated_at, claimed_at;
};

static const char *const status_names[] = {"unknown", "starting", "running",
                                           "paused",  "terminating", "failed"};

const char *s0_status_name(int status)
{
	if (status < 0 || status > S0_STATUS_FAILED)
		return "unknown";
	return status_names[status];
}

int s0_status_from_name(const char *name)
{
	for (int i = S0_STATUS_STARTING; name && i <= S0_STATUS_FAILED; i++)
		if (!strcmp(status_names[i], name))
			return i;
	return S0_STATUS_UNKNOWN;
}

void s0_sandbox_info_free(s0_sandbox_info *i)
{
	if (!i)
		return;
	free(i->json);
	free(i->id);
	free(i->template_id);
	free(i->team_id);
	free(i->pod_name);
	free(i->runtime_id);
	free(i);
	s0__obj_dec();
}

/* Wrong types on modelled fields are protocol errors; absent ones default. */
static int check_types(const cJSON *o, s0_error **err)
{
	static const char *strs[] = {"id", "sandbox_id", "template_id", "template", "team_id",
	                             "status", "pod_name", "runtime_id"};
	for (size_t k = 0; k < sizeof strs / sizeof strs[0]; k++) {
		const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, strs[k]);
		if (it && !cJSON_IsString(it) && !cJSON_IsNull(it))
			return s0__error_set(err, S0_EPROTOCOL, "unexpected_response",
			                     "sandbox field \"%s\" is not a string", strs[k]);
	}
	/* null reads as absent, as for the strings (docs/wire.md §3.0 tolerance) */
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "paused");
	if (p && !cJSON_IsBool(p) && !cJSON_IsNull(p))
		return s0__error_set(err, S0_EPROTOCOL, "unexpected_response",
		                     "sandbox field \"paused\" is not a boolean");
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "auto_resume");
	if (a && !cJSON_IsBool(a) && !cJSON_IsNull(a))
		return s0__error_set(err, S0_EPROTOCOL, "unexpected_response",
		                     "sandbox field \"auto_resume\" is not a boolean");
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(o, "runtime_generation");
	if (g && !cJSON_IsNumber(g) && !cJSON_IsNull(g))
		return s0__error_set(err, S0_EPROTOCOL, "unexpected_response",
		                     "sandbox field \"runtime_generation\" is not a number");
	return S0_OK;
}

int s0__sandbox_info_from_json(const cJSON *o, s0_sandbox_info **out, s0_error **err)
{
	if (!cJSON_IsObject(o))
		return s0__error_set(err, S0_EPROTOCOL, "unexpected_response",
		                     "expected a sandbox object in the response");
	int rc = check_types(o, err);
	if (rc < 0)
		return rc;
	s0_sandbox_info *i = calloc(1, sizeof *i);
	if (!i)
		return s0__error_nomem(err);
	s0__obj_inc();
	const char *id = s0__json_str(o, "id");
	const char *tpl = s0__json_str(o, "template_id");
	i->json = s0__json_print(o);
	i->id = s0__strdup(id ? id : s0__json_str0(o, "sandbox_id"));
	i->template_id = s0__strdup(tpl ? tpl : s0__json_str0(o, "template"));
	i->team_id = s0__strdup(s0__json_str0(o, "team_id"));
	i->pod_name = s0__strdup(s0__json_str0(o, "pod_name"));
	i->runtime_id = s0__strdup(s0__json_str0(o, "runtime_id"));
	i->status = s0_status_from_name(s0__json_str(o, "status"));
	i->paused = s0__json_bool(o, "paused", false);
	i->auto_resume = s0__json_bool(o, "auto_resume", true);
	i->generation = s0__json_i64(o, "runtime_generation", 0);
	i->expires_at = s0__json_time(o, "expires_at");
	i->hard_expires_at = s0__json_time(o, "hard_expires_at");
	i->created_at = s0__json_time(o, "created_at");
	i->updated_at = s0__json_time(o, "updated_at");
	i->claimed_at = s0__json_time(o, "claimed_at");
	if (!i->json || !i->id || !i->template_id || !i->team_id || !i->pod_name || !i->runtime_id) {
		s0_sandbox_info_free(i);
		return s0__error_nomem(err);
	}
	*out = i;
	return S0_OK;
}

int s0_sandbox_info_parse(const char *json, s0_sandbox_info **out, s0_error **err)
{
	if (!json || !out)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "json and out are required");
	cJSON *o = cJSON_Parse(json);
	if (!o)
		return s0__error_set(err, S0_EPROTOCOL, "invalid_json", "not valid JSON");
	int rc = s0__sandbox_info_from_json(o, out, err);
	cJSON_Delete(o);
	return rc;
}

int s0_sandbox_info_dup(const s0_sandbox_info *info, s0_sandbox_info **out, s0_error **err)
{
	return s0_sandbox_info_parse(info->json, out, err);
}

const char *s0_sandbox_info_id(const s0_sandbox_info *i) { return i->id; }
const char *s0_sandbox_info_template_id(const s0_sandbox_info *i) { return i->template_id; }
const char *s0_sandbox_info_team_id(const s0_sandbox_info *i) { return i->team_id; }
int s0_sandbox_info_status(const s0_sandbox_info *i) { return i->status; }
bool s0_sandbox_info_paused(const s0_sandbox_info *i) { return i->paused; }
bool s0_sandbox_info_auto_resume(const s0_sandbox_info *i) { return i->auto_resume; }
const char *s0_sandbox_info_pod_name(const s0_sandbox_info *i) { return i->pod_name; }
const char *s0_sandbox_info_runtime_id(const s0_sandbox_info *i) { return i->runtime_id; }
int64_t s0_sandbox_info_runtime_generation(const s0_sandbox_info *i) { return i->generation; }
int64_t s0_sandbox_info_expires_at_unix_ms(const s0_sandbox_info *i) { return i->expires_at; }
int64_t s0_sandbox_info_hard_expires_at_unix_ms(const s0_sandbox_info *i)
{
	return i->hard_expires_at;
}
int64_t s0_sandbox_info_created_at_unix_ms(const s0_sandbox_info *i) { return i->created_at; }
int64_t s0_sandbox_info_updated_at_unix_ms(const s0_sandbox_info *i) { return i->updated_at; }
int64_t s0_sandbox_info_claimed_at_unix_ms(const s0_sandbox_info *i) { return i->claimed_at; }
const char *s0_sandbox_info_json(const s0_sandbox_info *i) { return i->json; }
