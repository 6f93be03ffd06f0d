/* The process APIs: contexts, exec and sessions (docs/wire.md §8). */
#include <stdlib.h>
#include <string.h>

#include "sandbox0/contexts.h"
#include "client/client_internal.h"
#include "common/json.h"

/* The data member as JSON text ("null" when absent). */
static int data_text(const s0__reply *r, char **out, s0_error **err)
{
	char *t = r->data ? cJSON_PrintUnformatted(r->data) : s0__strdup("null");
	if (!t)
		return s0__error_nomem(err);
	*out = t;
	return S0_OK;
}

int s0_runtime_call(s0_client *c, const char *method, const char *sandbox_id, const char *suffix,
                    const char *body_json, const char *idempotency_key, int *status_out,
                    char **data_json_out, s0_error **err)
{
	int rc = s0__check_id("sandbox_id", sandbox_id, err);
	if (rc < 0)
		return rc;
	if (!c || !method || !suffix ||
	    (strncmp(suffix, "/contexts", 9) && strncmp(suffix, "/sessions", 9)))
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "a method and a /contexts or /sessions suffix are required");
	cJSON *body = NULL;
	if (body_json && !(body = s0__json_parse_arg(body_json, "the request body", err)))
		return S0_EINVAL;
	char *sfx = s0__strdup(suffix);
	char *q = sfx ? strchr(sfx, '?') : NULL;
	if (q)
		*q++ = '\0';
	char *path = sfx ? s0__sandbox_path(sandbox_id, sfx) : NULL;
	if (!path) {
		free(sfx);
		cJSON_Delete(body);
		return s0__error_nomem(err);
	}
	s0__call call = {.method = method, .path = path, .query = q, .json = body,
	                 .idempotency_key = idempotency_key, .sandbox_id = sandbox_id};
	s0__reply r;
	rc = s0__client_call(c, &call, &r, NULL, err);
	if (rc == S0_OK) {
		if (status_out)
			*status_out = r.status;
		if (data_json_out)
			rc = data_text(&r, data_json_out, err);
		s0__reply_free(&r);
	}
	free(path);
	free(sfx);
	cJSON_Delete(body);
	return rc;
}

/* "/contexts/<escaped id><tail>" (malloc'd), or NULL when OOM. */
static char *ctx_suffix(const char *ctx_id, const char *tail)
{
	char *esc = s0__url_escape(ctx_id);
	char *s = esc ? s0__asprintf("/contexts/%s%s", esc, tail) : NULL;
	free(esc);
	return s;
}

static int ctx_call(s0_client *c, const char *method, const char *sandbox_id, const char *ctx_id,
                    const char *tail, const char *body, char **out, s0_error **err)
{
	int rc = s0__check_id("context_id", ctx_id, err);
	if (rc < 0)
		return rc;
	char *sfx = ctx_suffix(ctx_id, tail);
	if (!sfx)
		return s0__error_nomem(err);
	rc = s0_runtime_call(c, method, sandbox_id, sfx, body, NULL, NULL, out, err);
	free(sfx);
	return rc;
}

int s0_context_create(s0_client *c, const char *sandbox_id, const char *request_json,
                      char **context_json_out, s0_error **err)
{
	if (!request_json || !context_json_out)
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "a request and an output are required");
	return s0_runtime_call(c, "POST", sandbox_id, "/contexts", request_json, NULL, NULL,
	                       context_json_out, err);
}

int s0_context_exec(s0_client *c, const char *sandbox_id, const char *context_id,
                    const char *data, char **result_json_out, s0_error **err)
{
	if (!data || !result_json_out)
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "data and an output are required");
	cJSON *b = cJSON_CreateObject();
	char *text = b && cJSON_AddStringToObject(b, "data", data) ? cJSON_PrintUnformatted(b) : NULL;
	cJSON_Delete(b);
	if (!text)
		return s0__error_nomem(err);
	int rc = ctx_call(c, "POST", sandbox_id, context_id, "/exec", text, result_json_out, err);
	free(text);
	return rc;
}

int s0_context_get(s0_client *c, const char *sandbox_id, const char *context_id,
                   char **context_json_out, s0_error **err)
{
	if (!context_json_out)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "an output is required");
	return ctx_call(c, "GET", sandbox_id, context_id, "", NULL, context_json_out, err);
}

int s0_context_delete(s0_client *c, const char *sandbox_id, const char *context_id,
                      s0_error **err)
{
	return ctx_call(c, "DELETE", sandbox_id, context_id, "", NULL, NULL, err);
}
