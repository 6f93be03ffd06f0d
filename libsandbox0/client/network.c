/* The sandbox network policy: GET/PUT /api/v1/sandboxes/{id}/network (sandbox.h). */
#include <stdlib.h>
#include <string.h>

#include "client/client_internal.h"
#include "common/json.h"

/* data (a SandboxNetworkPolicy object) as compact JSON text. */
static int policy_text(const cJSON *d, int st, void **out, s0_error **err)
{
	(void)st;
	if (!cJSON_IsObject(d))
		return s0__error_set(err, S0_EPROTOCOL, "bad_response",
		                     "network policy response has no data object");
	char *t = cJSON_PrintUnformatted(d);
	if (!t)
		return s0__error_nomem(err);
	*out = t;
	return S0_OK;
}

static int network_call(s0_client *c, const char *method, const char *id, const cJSON *body,
                        char **out, s0_error **err)
{
	int rc = s0__check_id("sandbox_id", id, err);
	if (rc < 0)
		return rc;
	char *path = s0__sandbox_path(id, "/network");
	if (!path)
		return s0__error_nomem(err);
	s0__call call = {.method = method, .path = path, .json = body, .sandbox_id = id};
	rc = s0__call_into(c, &call, policy_text, (void **)out, err);
	free(path);
	return rc;
}

int s0_sandbox_get_network_policy(s0_client *c, const char *sandbox_id, char **policy_json_out,
                                  s0_error **err)
{
	if (!policy_json_out)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "an output pointer is required");
	*policy_json_out = NULL;
	return network_call(c, "GET", sandbox_id, NULL, policy_json_out, err);
}

int s0_sandbox_update_network_policy(s0_client *c, const char *sandbox_id, const char *policy_json,
                                     char **policy_json_out, s0_error **err)
{
	if (policy_json_out)
		*policy_json_out = NULL;
	cJSON *body = s0__json_parse_arg(policy_json, "the network policy", err);
	if (!body)
		return S0_EINVAL;
	char *out = NULL;
	int rc = network_call(c, "PUT", sandbox_id, body, &out, err);
	cJSON_Delete(body);
	if (rc == S0_OK && policy_json_out)
		*policy_json_out = out;
	else
		free(out);
	return rc;
}
