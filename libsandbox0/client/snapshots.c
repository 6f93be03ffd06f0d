/* RootFS snapshots, restore and fork (docs/wire.md §3.8, §6.7). */
#include <stdlib.h>
#include <string.h>

#include "client/client_internal.h"
#include "client/results.h"
#include "common/json.h"

static int snap_fn(const cJSON *d, int st, void **out, s0_error **err)
{
	(void)st;
	return s0__snapshot_info_from_json(d, (s0_snapshot_info **)out, err);
}

static int snap_list_fn(const cJSON *d, int st, void **out, s0_error **err)
{
	(void)st;
	return s0__snapshot_list_from_json(d, (s0_snapshot_list **)out, err);
}

static int lifecycle_fn(const cJSON *d, int st, void **out, s0_error **err)
{
	return s0__lifecycle_result_from_json(d, st, (s0_lifecycle_result **)out, err);
}

/* Fork answers {source_sandbox_id, sandbox}; the child is what callers want. */
static int fork_fn(const cJSON *d, int st, void **out, s0_error **err)
{
	(void)st;
	const cJSON *sb = cJSON_GetObjectItemCaseSensitive(d, "sandbox");
	return s0__sandbox_info_from_json(sb, (s0_sandbox_info **)out, err);
}

static char *snapshot_path(const char *snapshot_id)
{
	char *esc = s0__url_escape(snapshot_id);
	char *p = esc ? s0__asprintf("/api/v1/sandbox-rootfs-snapshots/%s", esc) : NULL;
	free(esc);
	return p;
}

int s0_snapshot_create(s0_client *c, const char *sandbox_id, const char *name,
                       const char *description, int64_t expires_at_unix_ms,
                       s0_snapshot_info **out, s0_error **err)
{
	int rc = s0__check_id("sandbox_id", sandbox_id, err);
	if (rc < 0)
		return rc;
	if (expires_at_unix_ms < 0 || expires_at_unix_ms > S0__RFC3339_MAX_MS)
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "expires_at must be 0 (never) or a time before year 10000");
	cJSON *body = cJSON_CreateObject();
	char *path = s0__sandbox_path(sandbox_id, "/snapshots");
	if (!body || !path || (name && s0__json_add_str(body, "name", name) < 0) ||
	    (description && s0__json_add_str(body, "description", description) < 0) ||
	    (expires_at_unix_ms && s0__json_add_time(body, "expires_at", expires_at_unix_ms, false) < 0))
		rc = s0__error_nomem(err);
	if (rc == S0_OK) {
		s0__call call = {.method = "POST", .path = path, .json = body, .sandbox_id = sandbox_id};
		rc = s0__call_into(c, &call, snap_fn, (void **)out, err);
	}
	cJSON_Delete(body);
	free(path);
	return rc;
}

int s0_snapshot_list_get(s0_client *c, const char *sandbox_id, s0_snapshot_list **out,
                         s0_error **err)
{
	int rc = s0__check_id("sandbox_id", sandbox_id, err);
	if (rc < 0)
		return rc;
	char *path = s0__sandbox_path(sandbox_id, "/snapshots");
	if (!path)
		return s0__error_nomem(err);
	s0__call call = {.method = "GET", .path = path, .sandbox_id = sandbox_id};
	rc = s0__call_into(c, &call, snap_list_fn, (void **)out, err);
	free(path);
	return rc;
}

static int snapshot_call(s0_client *c, const char *method, const char *snapshot_id,
                         s0__from_json_fn fn, void **out, s0_error **err)
{
	int rc = s0__check_id("snapshot_id", snapshot_id, err);
	if (rc < 0)
		return rc;
	char *path = snapshot_path(snapshot_id);
	if (!path)
		return s0__error_nomem(err);
	s0__call call = {.method = method, .path = path};
	rc = s0__call_into(c, &call, fn, out, err);
	free(path);
	return rc;
}

int s0_snapshot_get(s0_client *c, const char *snapshot_id, s0_snapshot_info **out,
                    s0_error **err)
{
	return snapshot_call(c, "GET", snapshot_id, snap_fn, (void **)out, err);
}

int s0_snapshot_delete(s0_client *c, const char *snapshot_id, s0_error **err)
{
	return snapshot_call(c, "DELETE", snapshot_id, NULL, NULL, err);
}

int s0_sandbox_restore(s0_client *c, const char *sandbox_id, const char *snapshot_id,
                       s0_lifecycle_result **out, s0_error **err)
{
	int rc = s0__check_id("sandbox_id", sandbox_id, err);
	if (rc == S0_OK)
		rc = s0__check_id("snapshot_id", snapshot_id, err);
	if (rc < 0)
		return rc;
	cJSON *body = cJSON_CreateObject();
	char *path = s0__sandbox_path(sandbox_id, "/rootfs/restore");
	if (!body || !path || s0__json_add_str(body, "snapshot_id", snapshot_id) < 0)
		rc = s0__error_nomem(err);
	if (rc == S0_OK) {
		s0__call call = {.method = "POST", .path = path, .json = body, .sandbox_id = sandbox_id};
		rc = s0__call_into(c, &call, lifecycle_fn, (void **)out, err);
	}
	cJSON_Delete(body);
	free(path);
	return rc;
}

/* No control characters: the key becomes a header value (no header injection). */
static bool printable_key(const char *k)
{
	for (; *k; k++)
		if ((unsigned char)*k < 0x20 || *k == 0x7f)
			return false;
	return true;
}

static int fork_body(const s0_fork_options *o, cJSON **out, s0_error **err)
{
	cJSON *body = cJSON_CreateObject();
	if (!body)
		return s0__error_nomem(err);
	int bad = 0;
	if (o->set & (S0_CONFIG_SET_TTL | S0_CONFIG_SET_HARD_TTL)) {
		cJSON *cfg = cJSON_AddObjectToObject(body, "config");
		bad |= !cfg;
		if (cfg && (o->set & S0_CONFIG_SET_TTL))
			bad |= s0__json_add_i64(cfg, "ttl", o->ttl_sec);
		if (cfg && (o->set & S0_CONFIG_SET_HARD_TTL))
			bad |= s0__json_add_i64(cfg, "hard_ttl", o->hard_ttl_sec);
	}
	if (o->memory)
		bad |= s0__json_add_bool(body, "memory", true);
	if (bad) {
		cJSON_Delete(body);
		return s0__error_nomem(err);
	}
	*out = body;
	return S0_OK;
}

int s0_sandbox_fork(s0_client *c, const char *sandbox_id, const s0_fork_options *opts,
                    s0_sandbox_info **out, s0_error **err)
{
	s0_fork_options d = S0_FORK_OPTIONS_INIT;
	if (!opts)
		opts = &d;
	int rc = s0__check_id("sandbox_id", sandbox_id, err);
	if (rc < 0)
		return rc;
	if (opts->version != S0_FORK_OPTIONS_VERSION)
		return s0__error_set(err, S0_EINVAL, "options_version",
		                     "s0_fork_options.version %u is not %u", opts->version,
		                     S0_FORK_OPTIONS_VERSION);
	const char *key = opts->idempotency_key;
	if (opts->memory && (s0__is_blank(key) || strlen(key) > 255))
		return s0__error_set(err, S0_EINVAL, "idempotency_key_required",
		                     "a memory fork needs an idempotency key of 1..255 characters");
	if (key && (s0__is_blank(key) || strlen(key) > 255 || !printable_key(key)))
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "idempotency key must be 1..255 non-blank printable characters");
	cJSON *body = NULL;
	char *path = s0__sandbox_path(sandbox_id, "/fork");
	rc = path ? fork_body(opts, &body, err) : s0__error_nomem(err);
	if (rc == S0_OK) {
		s0__call call = {.method = "POST", .path = path, .json = body,
		                 .idempotency_key = key, .sandbox_id = sandbox_id};
		rc = s0__call_into(c, &call, fork_fn, (void **)out, err);
	}
	cJSON_Delete(body);
	free(path);
	return rc;
}
