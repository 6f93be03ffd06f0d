/*
 * The admin credential's routes (sandbox0/keys.h): POST /admin/v1/api-keys
 * {team_id, name?} makes a key (201, the secret shown once), GET
 * /admin/v1/api-keys[?team_id=] lists them without secrets, DELETE
 * /admin/v1/api-keys/{id} revokes one. conn.c lets only the admin
 * credential (never a team key) reach them.
 */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/api/router.h"
#include "server/server_internal.h"

#define KEYS "/admin/v1/api-keys"
#define KEYS_BODY_MAX 4096

bool s0__server_is_key_route(const char *path)
{
	return !strcmp(path, KEYS) || !strncmp(path, KEYS "/", sizeof KEYS);
}

static int fail_err(const char *rid, s0__http_response *resp, s0_error *err)
{
	const char *wire, *canon;
	int status;
	s0_error_to_wire(s0_error_code(err), s0_error_reason(err), &wire, &status, &canon);
	int rc = s0__router_reply_error(resp, rid, status, wire, s0_error_message(err));
	s0_error_free(err);
	return rc;
}

/* {"success":true,"data":<json>} with status; takes json (malloc'd text). */
static int reply(const char *rid, s0__http_response *resp, int status, char *json)
{
	cJSON *data = json ? cJSON_Parse(json) : NULL;
	if (json) {
		memset(json, 0, strlen(json)); /* may hold a new key */
		free(json);
	}
	cJSON *root = data ? cJSON_CreateObject() : NULL;
	if (!root || !cJSON_AddBoolToObject(root, "success", true)) {
		cJSON_Delete(root);
		cJSON_Delete(data);
		return S0_ENOMEM;
	}
	cJSON_AddItemToObject(root, "data", data);
	char *text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	resp->status = status;
	int rc = text ? s0__buf_puts(&resp->body, text) : -1;
	if (text) {
		memset(text, 0, strlen(text));
		free(text);
	}
	rc |= s0__headers_add(&resp->headers, "Content-Type", "application/json; charset=utf-8");
	rc |= s0__headers_add(&resp->headers, "Cache-Control", "no-store");
	rc |= s0__headers_add(&resp->headers, "X-Request-ID", rid);
	return rc ? S0_ENOMEM : S0_OK;
}

static int create(const s0__server_admin_ops *ops, const s0__http_request *req, const char *rid,
                  s0__http_response *resp)
{
	size_t len = req->has_body ? req->body_len : 0;
	cJSON *b = NULL;
	if (len > KEYS_BODY_MAX)
		return s0__router_reply_error(resp, rid, 413, "request_too_large",
		                              "api key request body is too large");
	if (!len || s0__json_check(req->body, len, 4) ||
	    !(b = cJSON_ParseWithLength(req->body, len)) || !cJSON_IsObject(b)) {
		cJSON_Delete(b);
		return s0__router_reply_error(resp, rid, 400, "bad_request",
		                              "invalid request: expected {\"team_id\", \"name\"}");
	}
	const cJSON *team = cJSON_GetObjectItemCaseSensitive(b, "team_id");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(b, "name");
	int rc, dup_rc;
	const char *dup = s0__json_duplicate_key(b, &dup_rc);
	if (dup_rc < 0) {
		rc = dup_rc;
	} else if (dup) {
		rc = s0__router_reply_error(resp, rid, 400, "bad_request",
		                            "invalid request: duplicate key in request body");
	} else if (!cJSON_IsString(team) || (name && !cJSON_IsNull(name) && !cJSON_IsString(name))) {
		rc = s0__router_reply_error(resp, rid, 400, "bad_request",
		                            "invalid request: team_id (string) is required; name is "
		                            "a string");
	} else {
		char *json = NULL;
		s0_error *err = NULL;
		if (ops->key_create(ops->ctx, team->valuestring,
		                    cJSON_IsString(name) ? name->valuestring : NULL, &json, &err) < 0)
			rc = fail_err(rid, resp, err);
		else
			rc = reply(rid, resp, 201, json);
	}
	cJSON_Delete(b);
	return rc;
}

int s0__server_admin_keys(const s0__server_admin_ops *ops, const s0__http_request *req,
                          const char *rid, s0__http_response *resp)
{
	if (!ops || !ops->key_create)
		return s0__router_reply_error(resp, rid, 404, "not_found", "not found");
	const char *m = req->method;
	char *json = NULL;
	s0_error *err = NULL;
	if (!strcmp(req->path, KEYS)) {
		if (!strcmp(m, "POST"))
			return create(ops, req, rid, resp);
		if (strcmp(m, "GET"))
			return s0__router_reply_error(resp, rid, 405, "method_not_allowed",
			                              "method not allowed");
		bool present = false;
		char *team = s0__query_get(req->query, "team_id", &present);
		int rc = ops->key_list(ops->ctx, team, &json, &err);
		free(team);
		return rc < 0 ? fail_err(rid, resp, err) : reply(rid, resp, 200, json);
	}
	if (strcmp(m, "DELETE"))
		return s0__router_reply_error(resp, rid, 405, "method_not_allowed",
		                              "method not allowed");
	char *id = NULL;
	const char *raw = req->path + sizeof KEYS;
	if (!*raw || strchr(raw, '/') || s0__router_decode_path(raw, &id) < 0 || !*id) {
		free(id);
		return s0__router_reply_error(resp, rid, 404, "not_found", "API key not found");
	}
	int rc = ops->key_revoke(ops->ctx, id, &json, &err);
	free(id);
	return rc < 0 ? fail_err(rid, resp, err) : reply(rid, resp, 200, json);
}
