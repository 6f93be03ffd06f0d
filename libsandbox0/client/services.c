/* Public services of a sandbox (sandbox0/services.h): JSON text in and out. */
#include <stdlib.h>

#include "client/client_internal.h"
#include "sandbox0/services.h"

static int call_text(s0_client *c, const s0__call *call, char **out, s0_error **err)
{
	s0__reply r;
	int rc = s0__client_call(c, call, &r, NULL, err);
	if (rc < 0)
		return rc;
	if (out && !(*out = r.data ? cJSON_PrintUnformatted(r.data) : s0__strdup("null")))
		rc = s0__error_nomem(err);
	s0__reply_free(&r);
	return rc;
}

int s0_sandbox_services_get(s0_client *c, const char *sandbox_id, char **services_json_out,
                            s0_error **err)
{
	int rc = s0__check_id("sandbox_id", sandbox_id, err);
	if (rc == S0_OK && !services_json_out)
		rc = s0__error_set(err, S0_EINVAL, "invalid_argument", "services_json_out is NULL");
	char *path = rc == S0_OK ? s0__sandbox_path(sandbox_id, "/services") : NULL;
	if (rc == S0_OK && !path)
		rc = s0__error_nomem(err);
	if (rc == S0_OK) {
		s0__call call = {.method = "GET", .path = path, .sandbox_id = sandbox_id};
		rc = call_text(c, &call, services_json_out, err);
	}
	free(path);
	return rc;
}

int s0_sandbox_services_update(s0_client *c, const char *sandbox_id, const char *services_json,
                               char **services_json_out, s0_error **err)
{
	int rc = s0__check_id("sandbox_id", sandbox_id, err);
	cJSON *list = rc == S0_OK && services_json ? cJSON_Parse(services_json) : NULL;
	if (rc == S0_OK && !cJSON_IsArray(list))
		rc = s0__error_set(err, S0_EINVAL, "invalid_argument",
		                   "services_json must be a JSON array of services");
	cJSON *body = rc == S0_OK ? cJSON_CreateObject() : NULL;
	if (rc == S0_OK && (!body || !cJSON_AddItemToObject(body, "services", list)))
		rc = s0__error_nomem(err);
	else if (rc == S0_OK)
		list = NULL; /* the body's */
	char *path = rc == S0_OK ? s0__sandbox_path(sandbox_id, "/services") : NULL;
	if (rc == S0_OK && !path)
		rc = s0__error_nomem(err);
	if (rc == S0_OK) {
		s0__call call = {.method = "PUT", .path = path, .json = body, .sandbox_id = sandbox_id};
		rc = call_text(c, &call, services_json_out, err);
	}
	free(path);
	cJSON_Delete(list);
	cJSON_Delete(body);
	return rc;
}
