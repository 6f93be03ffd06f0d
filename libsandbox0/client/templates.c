/* Templates of the caller's team (sandbox0/templates.h) and admin requests
 * (sandbox0/keys.h s0_client_admin_request): JSON text in and out. */
#include <stdlib.h>
#include <string.h>

#include "client/client_internal.h"
#include "common/json.h"

#define TPL "/api/v1/templates"

/* The reply's data as JSON text ("null" when absent) into *out. */
static int data_text(const cJSON *data, char **out, s0_error **err)
{
	*out = data ? cJSON_PrintUnformatted(data) : s0__strdup("null");
	return *out ? S0_OK : s0__error_nomem(err);
}

static int call_text(s0_client *c, const s0__call *call, char **out, s0_error **err)
{
	s0__reply r;
	int rc = s0__client_call(c, call, &r, NULL, err);
	if (rc < 0)
		return rc;
	if (out)
		rc = data_text(r.data, out, err);
	s0__reply_free(&r);
	return rc;
}

static char *tpl_path(const char *id)
{
	char *esc = s0__url_escape(id);
	char *p = esc ? s0__asprintf(TPL "/%s", esc) : NULL;
	free(esc);
	return p;
}

int s0_template_create(s0_client *c, const char *template_id, const char *spec_json,
                       char **template_json_out, s0_error **err)
{
	int rc = s0__check_id("template_id", template_id, err);
	if (rc < 0)
		return rc;
	cJSON *spec = spec_json ? cJSON_Parse(spec_json) : cJSON_CreateObject();
	if (!cJSON_IsObject(spec)) {
		cJSON_Delete(spec);
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "spec_json must be a JSON object");
	}
	cJSON *body = cJSON_CreateObject();
	if (!body || s0__json_add_str(body, "template_id", template_id) < 0) {
		cJSON_Delete(body);
		cJSON_Delete(spec);
		return s0__error_nomem(err);
	}
	cJSON_AddItemToObject(body, "spec", spec);
	s0__call call = {.method = "POST", .path = TPL, .json = body};
	rc = call_text(c, &call, template_json_out, err);
	cJSON_Delete(body);
	return rc;
}

int s0_template_create_tar(s0_client *c, const char *template_id, const void *tar,
                           size_t tar_len, char **template_json_out, s0_error **err)
{
	int rc = s0__check_id("template_id", template_id, err);
	if (rc < 0)
		return rc;
	if (!tar || !tar_len)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "the tar archive is empty");
	s0__buf q = {0};
	if (s0__query_add(&q, "template_id", template_id) < 0) {
		s0__buf_free(&q);
		return s0__error_nomem(err);
	}
	s0__call call = {.method = "POST", .path = TPL, .query = q.data, .raw = tar,
	                 .raw_len = tar_len, .has_raw = true};
	rc = call_text(c, &call, template_json_out, err);
	s0__buf_free(&q);
	return rc;
}

int s0_template_get(s0_client *c, const char *template_id, char **template_json_out,
                    s0_error **err)
{
	int rc = s0__check_id("template_id", template_id, err);
	if (rc == S0_OK && !template_json_out)
		rc = s0__error_set(err, S0_EINVAL, "invalid_argument", "template_json_out is NULL");
	char *path = rc == S0_OK ? tpl_path(template_id) : NULL;
	if (rc == S0_OK && !path)
		rc = s0__error_nomem(err);
	if (rc == S0_OK) {
		s0__call call = {.method = "GET", .path = path};
		rc = call_text(c, &call, template_json_out, err);
	}
	free(path);
	return rc;
}

int s0_template_list(s0_client *c, char **list_json_out, s0_error **err)
{
	if (!list_json_out)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "list_json_out is NULL");
	s0__call call = {.method = "GET", .path = TPL};
	return call_text(c, &call, list_json_out, err);
}

int s0_template_delete(s0_client *c, const char *template_id, s0_error **err)
{
	int rc = s0__check_id("template_id", template_id, err);
	char *path = rc == S0_OK ? tpl_path(template_id) : NULL;
	if (rc == S0_OK && !path)
		rc = s0__error_nomem(err);
	if (rc == S0_OK) {
		s0__call call = {.method = "DELETE", .path = path};
		rc = call_text(c, &call, NULL, err);
	}
	free(path);
	return rc;
}

int s0_client_admin_request(s0_client *c, const char *method, const char *path,
                            const char *body_json, char **data_json_out, s0_error **err)
{
	if (!method || (strcmp(method, "GET") && strcmp(method, "POST") && strcmp(method, "DELETE")))
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "method must be GET, POST or DELETE");
	if (!path || strncmp(path, "/admin/v1/", 10))
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "path must start with /admin/v1/");
	cJSON *body = body_json ? cJSON_Parse(body_json) : NULL;
	if (body_json && !cJSON_IsObject(body)) {
		cJSON_Delete(body);
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "body_json must be a JSON object");
	}
	const char *q = strchr(path, '?');
	char *p = q ? s0__strndup(path, (size_t)(q - path)) : s0__strdup(path);
	int rc = p ? S0_OK : s0__error_nomem(err);
	if (rc == S0_OK) {
		s0__call call = {.method = method, .path = p, .query = q ? q + 1 : NULL, .json = body};
		rc = call_text(c, &call, data_json_out, err);
	}
	free(p);
	cJSON_Delete(body);
	return rc;
}
