/* Sandbox calls: claim, get, status, update, delete, pause, resume, refresh,
 * list, snapshots, restore, fork, network policy. Each export takes the
 * client handle first and returns a promise (see pool.c). Results are JSON
 * text of the library's result objects; the TS layer maps them. */
#include "addon.h"

#include <stdlib.h>
#include <string.h>

/* ---- results ------------------------------------------------------------ */

static void free_info(nx_job *j) { s0_sandbox_info_free(j->res); }
static void free_lifecycle(nx_job *j) { s0_lifecycle_result_free(j->res); }
static void free_page(nx_job *j) { s0_sandbox_page_free(j->res); }
static void free_snapshot(nx_job *j) { s0_snapshot_info_free(j->res); }
static void free_snaplist(nx_job *j) { s0_snapshot_list_free(j->res); }
static void free_cstr(nx_job *j) { s0_free(j->res); }

static napi_value done_info(napi_env env, nx_job *j)
{
	return nx_string(env, s0_sandbox_info_json(j->res));
}

static napi_value done_lifecycle(napi_env env, nx_job *j)
{
	napi_value o;
	napi_create_object(env, &o);
	nx_set(env, o, "json", nx_string(env, s0_lifecycle_result_json(j->res)));
	nx_set(env, o, "httpStatus", nx_int(env, s0_lifecycle_result_http_status(j->res)));
	return o;
}

static napi_value done_page(napi_env env, nx_job *j)
{
	napi_value o, items;
	size_t n = s0_sandbox_page_length(j->res);
	napi_create_object(env, &o);
	napi_create_array_with_length(env, n, &items);
	for (size_t i = 0; i < n; i++)
		napi_set_element(env, items, (uint32_t)i,
		                 nx_string(env, s0_sandbox_info_json(s0_sandbox_page_at(j->res, i))));
	nx_set(env, o, "items", items);
	nx_set(env, o, "count", nx_int(env, s0_sandbox_page_count(j->res)));
	nx_set(env, o, "hasMore", nx_bool(env, s0_sandbox_page_has_more(j->res)));
	return o;
}

static napi_value done_snapshot(napi_env env, nx_job *j)
{
	return nx_string(env, s0_snapshot_info_json(j->res));
}

static napi_value done_snaplist(napi_env env, nx_job *j)
{
	napi_value items;
	size_t n = s0_snapshot_list_length(j->res);
	napi_create_array_with_length(env, n, &items);
	for (size_t i = 0; i < n; i++)
		napi_set_element(env, items, (uint32_t)i,
		                 nx_string(env, s0_snapshot_info_json(s0_snapshot_list_at(j->res, i))));
	return items;
}

static napi_value done_cstr(napi_env env, nx_job *j)
{
	return nx_string(env, j->res);
}

/* ---- runners (addon threads) --------------------------------------------- */

#define CLIENT(j) ((s0_client *)(j)->client->ptr)
#define INFO_OUT(j) ((s0_sandbox_info **)&(j)->res)
#define LC_OUT(j) ((s0_lifecycle_result **)&(j)->res)

static int run_claim(nx_job *j)
{
	return s0_sandbox_claim(CLIENT(j), j->s[1], j->s[2], j->has_config ? &j->config : NULL,
	                        INFO_OUT(j), &j->err);
}
static int run_get(nx_job *j) { return s0_sandbox_get(CLIENT(j), j->s[0], INFO_OUT(j), &j->err); }
static int run_status(nx_job *j)
{
	return s0_sandbox_status(CLIENT(j), j->s[0], INFO_OUT(j), &j->err);
}
static int run_update(nx_job *j)
{
	return s0_sandbox_update(CLIENT(j), j->s[0], &j->config, INFO_OUT(j), &j->err);
}
static int run_delete(nx_job *j) { return s0_sandbox_delete(CLIENT(j), j->s[0], &j->err); }
static int run_pause(nx_job *j)
{
	return s0_sandbox_pause(CLIENT(j), j->s[0], (int32_t)j->n[0], LC_OUT(j), &j->err);
}
static int run_resume(nx_job *j)
{
	return s0_sandbox_resume(CLIENT(j), j->s[0], (int32_t)j->n[0], LC_OUT(j), &j->err);
}
static int run_refresh(nx_job *j)
{
	return s0_sandbox_refresh(CLIENT(j), j->s[0], (int32_t)j->n[0], INFO_OUT(j), &j->err);
}
static int run_list(nx_job *j)
{
	s0_list_options lo = S0_LIST_OPTIONS_INIT;
	lo.status = (int32_t)j->n[0];
	lo.paused = (int32_t)j->n[1];
	lo.limit = (int32_t)j->n[2];
	lo.offset = (int32_t)j->n[3];
	lo.template_id = j->s[1];
	return s0_sandbox_list(CLIENT(j), &lo, (s0_sandbox_page **)&j->res, &j->err);
}
static int run_snap_create(nx_job *j)
{
	return s0_snapshot_create(CLIENT(j), j->s[0], j->s[1], j->s[2], j->n[0],
	                          (s0_snapshot_info **)&j->res, &j->err);
}
static int run_snap_list(nx_job *j)
{
	return s0_snapshot_list_get(CLIENT(j), j->s[0], (s0_snapshot_list **)&j->res, &j->err);
}
static int run_snap_get(nx_job *j)
{
	return s0_snapshot_get(CLIENT(j), j->s[0], (s0_snapshot_info **)&j->res, &j->err);
}
static int run_snap_delete(nx_job *j) { return s0_snapshot_delete(CLIENT(j), j->s[0], &j->err); }
static int run_restore(nx_job *j)
{
	return s0_sandbox_restore(CLIENT(j), j->s[0], j->s[1], LC_OUT(j), &j->err);
}
static int run_fork(nx_job *j)
{
	s0_fork_options fo = S0_FORK_OPTIONS_INIT;
	fo.set = (uint32_t)j->n[0];
	fo.ttl_sec = (int32_t)j->n[1];
	fo.hard_ttl_sec = (int32_t)j->n[2];
	fo.memory = (int32_t)j->n[3];
	fo.idempotency_key = j->s[1];
	return s0_sandbox_fork(CLIENT(j), j->s[0], &fo, INFO_OUT(j), &j->err);
}
static int run_net_get(nx_job *j)
{
	return s0_sandbox_get_network_policy(CLIENT(j), j->s[0], (char **)&j->res, &j->err);
}
static int run_net_put(nx_job *j)
{
	return s0_sandbox_update_network_policy(CLIENT(j), j->s[0], j->s[1], (char **)&j->res,
	                                        &j->err);
}

/* ---- marshalling (JS thread) --------------------------------------------- */

/* Start a job on the client in argv[0] with the sandbox/snapshot id in
 * argv[1] (when @p id_what is not NULL). */
static nx_job *begin(napi_env env, napi_callback_info info, size_t want, napi_value *argv,
                     const char *id_what, nx_run_fn run, nx_done_fn done, nx_free_fn fr)
{
	nx_job *j = nx_client_job(env, info, want, argv, run, done, fr);
	if (!j)
		return NULL;
	if (id_what && !nx_str(env, argv[1], false, id_what, &j->s[0])) {
		nx_job_discard(env, j);
		return NULL;
	}
	return j;
}

static napi_value finish(napi_env env, nx_job *j, bool ok)
{
	if (!ok) {
		nx_job_discard(env, j);
		return NULL;
	}
	return nx_job_submit(env, j);
}

/* config object: {ttlSec?, hardTtlSec?, autoResume?: 0|1|2, memory?,
 * envVars?: string[], extraJson?} */
static bool read_config(napi_env env, napi_value v, nx_job *j)
{
	int64_t ttl, hard, ar;
	s0_sandbox_config *cfg = &j->config;
	*cfg = (s0_sandbox_config)S0_SANDBOX_CONFIG_INIT;
	napi_value t = nx_prop(env, v, "ttlSec"), h = nx_prop(env, v, "hardTtlSec");
	if (!nx_i64(env, t, -1, "config.ttlSec", &ttl) ||
	    !nx_i64(env, h, -1, "config.hardTtlSec", &hard) ||
	    !nx_i64(env, nx_prop(env, v, "autoResume"), 0, "config.autoResume", &ar) ||
	    !nx_str(env, nx_prop(env, v, "memory"), true, "config.memory", &j->s[3]) ||
	    !nx_str(env, nx_prop(env, v, "extraJson"), true, "config.extraJson", &j->s[4]) ||
	    !nx_strv(env, nx_prop(env, v, "envVars"), "config.envVars", &j->strv))
		return false;
	if (ttl < -1 || ttl > INT32_MAX || hard < -1 || hard > INT32_MAX || ar < 0 || ar > 2) {
		nx_throw_type(env, "config: ttlSec/hardTtlSec must be 0..2147483647 seconds");
		return false;
	}
	if (ttl >= 0) {
		cfg->set |= S0_CONFIG_SET_TTL;
		cfg->ttl_sec = (int32_t)ttl;
	}
	if (hard >= 0) {
		cfg->set |= S0_CONFIG_SET_HARD_TTL;
		cfg->hard_ttl_sec = (int32_t)hard;
	}
	cfg->auto_resume = (int32_t)ar;
	cfg->memory = j->s[3];
	cfg->extra_json = j->s[4];
	cfg->env_vars = (const char *const *)j->strv;
	j->has_config = true;
	return true;
}

/* claim(client, template, snapshotId|null, config|null) */
static napi_value js_claim(napi_env env, napi_callback_info info)
{
	napi_value argv[4];
	nx_job *j = begin(env, info, 4, argv, NULL, run_claim, done_info, free_info);
	if (!j)
		return NULL;
	bool ok = nx_str(env, argv[1], false, "template", &j->s[1]) &&
	          nx_str(env, argv[2], true, "snapshotId", &j->s[2]);
	napi_valuetype t = napi_undefined;
	if (ok && argv[3])
		napi_typeof(env, argv[3], &t);
	if (ok && t == napi_object)
		ok = read_config(env, argv[3], j);
	return finish(env, j, ok);
}

#define SIMPLE_ID_CALL(fname, run, done, fr, what)                           \
	static napi_value fname(napi_env env, napi_callback_info info)           \
	{                                                                        \
		napi_value argv[2];                                                  \
		nx_job *j = begin(env, info, 2, argv, what, run, done, fr);          \
		return j ? nx_job_submit(env, j) : NULL;                             \
	}

SIMPLE_ID_CALL(js_get, run_get, done_info, free_info, "sandboxId")
SIMPLE_ID_CALL(js_status, run_status, done_info, free_info, "sandboxId")
SIMPLE_ID_CALL(js_delete, run_delete, NULL, NULL, "sandboxId")
SIMPLE_ID_CALL(js_snap_list, run_snap_list, done_snaplist, free_snaplist, "sandboxId")
SIMPLE_ID_CALL(js_snap_get, run_snap_get, done_snapshot, free_snapshot, "snapshotId")
SIMPLE_ID_CALL(js_snap_delete, run_snap_delete, NULL, NULL, "snapshotId")
SIMPLE_ID_CALL(js_net_get, run_net_get, done_cstr, free_cstr, "sandboxId")

/* update(client, id, config) */
static napi_value js_update(napi_env env, napi_callback_info info)
{
	napi_value argv[3];
	nx_job *j = begin(env, info, 3, argv, "sandboxId", run_update, done_info, free_info);
	if (!j)
		return NULL;
	return finish(env, j, read_config(env, argv[2], j));
}

/* pause/resume(client, id, memory: 0 unset | 1 true | 2 false) */
static napi_value lifecycle_call(napi_env env, napi_callback_info info, nx_run_fn run)
{
	napi_value argv[3];
	nx_job *j = begin(env, info, 3, argv, "sandboxId", run, done_lifecycle, free_lifecycle);
	if (!j)
		return NULL;
	bool ok = nx_i64(env, argv[2], 0, "memory", &j->n[0]);
	return finish(env, j, ok);
}
static napi_value js_pause(napi_env env, napi_callback_info info)
{
	return lifecycle_call(env, info, run_pause);
}
static napi_value js_resume(napi_env env, napi_callback_info info)
{
	return lifecycle_call(env, info, run_resume);
}

/* refresh(client, id, durationSec) */
static napi_value js_refresh(napi_env env, napi_callback_info info)
{
	napi_value argv[3];
	nx_job *j = begin(env, info, 3, argv, "sandboxId", run_refresh, done_info, free_info);
	if (!j)
		return NULL;
	bool ok = nx_i64(env, argv[2], 0, "durationSec", &j->n[0]);
	if (ok && (j->n[0] < INT32_MIN || j->n[0] > INT32_MAX)) {
		nx_throw_type(env, "durationSec is out of range");
		ok = false;
	}
	return finish(env, j, ok);
}

/* list(client, {status, paused, limit, offset, templateId}) */
static napi_value js_list(napi_env env, napi_callback_info info)
{
	napi_value argv[2];
	nx_job *j = begin(env, info, 2, argv, NULL, run_list, done_page, free_page);
	if (!j)
		return NULL;
	bool ok = nx_i64(env, nx_prop(env, argv[1], "status"), 0, "status", &j->n[0]) &&
	          nx_i64(env, nx_prop(env, argv[1], "paused"), 0, "paused", &j->n[1]) &&
	          nx_i64(env, nx_prop(env, argv[1], "limit"), 0, "limit", &j->n[2]) &&
	          nx_i64(env, nx_prop(env, argv[1], "offset"), 0, "offset", &j->n[3]) &&
	          nx_str(env, nx_prop(env, argv[1], "templateId"), true, "templateId", &j->s[1]);
	if (ok && (j->n[2] < INT32_MIN || j->n[2] > INT32_MAX || j->n[3] < INT32_MIN ||
	           j->n[3] > INT32_MAX)) {
		nx_throw_type(env, "limit/offset out of range");
		ok = false;
	}
	return finish(env, j, ok);
}

/* snapshotCreate(client, id, name|null, description|null, expiresAtUnixMs) */
static napi_value js_snap_create(napi_env env, napi_callback_info info)
{
	napi_value argv[5];
	nx_job *j = begin(env, info, 5, argv, "sandboxId", run_snap_create, done_snapshot,
	                  free_snapshot);
	if (!j)
		return NULL;
	bool ok = nx_str(env, argv[2], true, "name", &j->s[1]) &&
	          nx_str(env, argv[3], true, "description", &j->s[2]) &&
	          nx_i64(env, argv[4], 0, "expiresAt", &j->n[0]);
	return finish(env, j, ok);
}

/* fname(client, sandboxId, then the required string @p what into j->s[1]) */
#define ID_STRING_CALL(fname, run, done, fr, what)                                      \
	static napi_value fname(napi_env env, napi_callback_info info)                      \
	{                                                                                   \
		napi_value argv[3];                                                             \
		nx_job *j = begin(env, info, 3, argv, "sandboxId", run, done, fr);              \
		if (!j)                                                                         \
			return NULL;                                                                \
		return finish(env, j, nx_str(env, argv[2], false, what, &j->s[1]));             \
	}

/* restore(client, id, snapshotId) */
ID_STRING_CALL(js_restore, run_restore, done_lifecycle, free_lifecycle, "snapshotId")

/* fork(client, id, {ttlSec?, hardTtlSec?, memory?: bool, idempotencyKey?}) */
static napi_value js_fork(napi_env env, napi_callback_info info)
{
	napi_value argv[3];
	int64_t ttl, hard;
	bool mem = false;
	nx_job *j = begin(env, info, 3, argv, "sandboxId", run_fork, done_info, free_info);
	if (!j)
		return NULL;
	napi_value m = nx_prop(env, argv[2], "memory");
	napi_valuetype t = napi_undefined;
	if (m)
		napi_typeof(env, m, &t);
	if (t == napi_boolean)
		napi_get_value_bool(env, m, &mem);
	bool ok = nx_i64(env, nx_prop(env, argv[2], "ttlSec"), -1, "ttlSec", &ttl) &&
	          nx_i64(env, nx_prop(env, argv[2], "hardTtlSec"), -1, "hardTtlSec", &hard) &&
	          nx_str(env, nx_prop(env, argv[2], "idempotencyKey"), true, "idempotencyKey",
	                 &j->s[1]);
	if (ok && (ttl < -1 || ttl > INT32_MAX || hard < -1 || hard > INT32_MAX)) {
		nx_throw_type(env, "ttlSec/hardTtlSec must be 0..2147483647 seconds");
		ok = false;
	}
	if (ok) {
		j->n[0] = (ttl >= 0 ? S0_CONFIG_SET_TTL : 0) | (hard >= 0 ? S0_CONFIG_SET_HARD_TTL : 0);
		j->n[1] = ttl >= 0 ? ttl : 0;
		j->n[2] = hard >= 0 ? hard : 0;
		j->n[3] = mem ? 1 : 0;
	}
	return finish(env, j, ok);
}

/* networkPolicyPut(client, id, policyJson) */
ID_STRING_CALL(js_net_put, run_net_put, done_cstr, free_cstr, "policy")

bool nx_export_client_ops(napi_env env, napi_value exports)
{
	return nx_export_define(env, exports, "claim", js_claim) &&
	       nx_export_define(env, exports, "get", js_get) &&
	       nx_export_define(env, exports, "status", js_status) &&
	       nx_export_define(env, exports, "update", js_update) &&
	       nx_export_define(env, exports, "delete", js_delete) &&
	       nx_export_define(env, exports, "pause", js_pause) &&
	       nx_export_define(env, exports, "resume", js_resume) &&
	       nx_export_define(env, exports, "refresh", js_refresh) &&
	       nx_export_define(env, exports, "list", js_list) &&
	       nx_export_define(env, exports, "snapshotCreate", js_snap_create) &&
	       nx_export_define(env, exports, "snapshotList", js_snap_list) &&
	       nx_export_define(env, exports, "snapshotGet", js_snap_get) &&
	       nx_export_define(env, exports, "snapshotDelete", js_snap_delete) &&
	       nx_export_define(env, exports, "restore", js_restore) &&
	       nx_export_define(env, exports, "fork", js_fork) &&
	       nx_export_define(env, exports, "networkPolicyGet", js_net_get) &&
	       nx_export_define(env, exports, "networkPolicyPut", js_net_put);
}
