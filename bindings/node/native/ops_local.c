/* The embedded backend (local.h): open, clients, clock, faults, inspection.
 * Calls that may block (open, advance, quiesce, restart, inspect, gc,
 * template build) return promises; the rest are quick and synchronous. */
#include "addon.h"

#include <stdlib.h>

#define LOCAL(j) ((s0_local *)(j)->local->ptr)

static void free_local(nx_job *j) { s0_local_close(j->res); }
static void free_cstr(nx_job *j) { s0_free(j->res); }

static napi_value done_local(napi_env env, nx_job *j)
{
	napi_value ext = nx_obj_wrap(env, NX_LOCAL, j->res, NULL);
	if (ext)
		j->res = NULL; /* owned by the holder now */
	return ext;
}
static napi_value done_cstr(napi_env env, nx_job *j) { return nx_string(env, j->res); }

static int run_open(nx_job *j)
{
	s0_local_options lo = S0_LOCAL_OPTIONS_INIT;
	lo.manual_clock = (int32_t)j->n[0];
	lo.manual_clock_start_unix_ms = j->n[1];
	lo.disable_memory_checkpoints = (int32_t)j->n[2];
	lo.max_active_runtimes = (int32_t)j->n[3];
	lo.zero_time_compat = (int32_t)j->n[4];
	lo.team_id = j->s[1];
	return s0_local_open(j->s[0], &lo, (s0_local **)&j->res, &j->err);
}
static int run_advance(nx_job *j) { return s0_local_clock_advance(LOCAL(j), j->n[0], &j->err); }
static int run_quiesce(nx_job *j) { return s0_local_quiesce(LOCAL(j), j->n[0], &j->err); }
static int run_restart(nx_job *j) { return s0_local_restart_manager(LOCAL(j), &j->err); }
static int run_gc(nx_job *j) { return s0_local_gc(LOCAL(j), &j->err); }
static int run_inspect(nx_job *j)
{
	return s0_local_inspect(LOCAL(j), j->s[0], (char **)&j->res, &j->err);
}
static int run_template(nx_job *j)
{
	s0_template_options to = S0_TEMPLATE_OPTIONS_INIT;
	to.size_bytes = (uint64_t)j->n[0];
	to.ephemeral_mounts = (const char *const *)j->strv;
	return s0_local_template_build(LOCAL(j), j->s[0], j->s[1], &to, &j->err);
}

/* localOpen(dir, {manualClock, manualClockStartUnixMs,
 *   disableMemoryCheckpoints, maxActiveRuntimes, zeroTimeCompat, teamId}) */
static napi_value js_open(napi_env env, napi_callback_info info)
{
	napi_value argv[2];
	if (!nx_args(env, info, 2, argv))
		return NULL;
	nx_job *j = nx_job_new(env, run_open, done_local, free_local);
	if (!j)
		return NULL;
	napi_value o = argv[1];
	bool ok = nx_str(env, argv[0], false, "dir", &j->s[0]) &&
	          nx_i64(env, nx_prop(env, o, "manualClock"), 0, "manualClock", &j->n[0]) &&
	          nx_i64(env, nx_prop(env, o, "manualClockStartUnixMs"), 0,
	                 "manualClockStartUnixMs", &j->n[1]) &&
	          nx_i64(env, nx_prop(env, o, "disableMemoryCheckpoints"), 0,
	                 "disableMemoryCheckpoints", &j->n[2]) &&
	          nx_i64(env, nx_prop(env, o, "maxActiveRuntimes"), 0, "maxActiveRuntimes",
	                 &j->n[3]) &&
	          nx_i64(env, nx_prop(env, o, "zeroTimeCompat"), 0, "zeroTimeCompat", &j->n[4]) &&
	          nx_str(env, nx_prop(env, o, "teamId"), true, "teamId", &j->s[1]);
	if (ok && (j->n[3] < 0 || j->n[3] > INT32_MAX)) {
		nx_throw_type(env, "maxActiveRuntimes is out of range");
		ok = false;
	}
	if (!ok) {
		nx_job_discard(env, j);
		return NULL;
	}
	return nx_job_submit(env, j);
}

/* localClose(local): the backend closes once no client made on it and no
 * call on it remains (s0_local_close blocks until in-flight operations
 * reach a durable point). Returns null when it closed now, else a promise
 * resolved once it has (the caller then removes a temporary directory). */
static napi_value js_close(napi_env env, napi_callback_info info)
{
	napi_value argv[1], promise = NULL;
	if (!nx_args(env, info, 1, argv))
		return NULL;
	nx_obj *l = nx_obj_get(env, argv[0], NX_LOCAL, "local");
	if (!l)
		return NULL;
	if (l->refs > 1 && !l->on_free)
		NX_CHECK(env, napi_create_promise(env, &l->on_free, &promise));
	nx_obj_close(l);
	if (!promise || !l->on_free)
		napi_get_null(env, &promise);
	return promise;
}

/* Local job helpers. */
static nx_job *local_job(napi_env env, napi_value v, nx_run_fn run, nx_done_fn done,
                         nx_free_fn fr)
{
	nx_obj *l = nx_obj_get(env, v, NX_LOCAL, "local");
	if (!l)
		return NULL;
	nx_job *j = nx_job_new(env, run, done, fr);
	if (j)
		j->local = l;
	return j;
}

static napi_value local_num_call(napi_env env, napi_callback_info info, nx_run_fn run,
                                 const char *what, int64_t dflt)
{
	napi_value argv[2];
	if (!nx_args(env, info, 2, argv))
		return NULL;
	nx_job *j = local_job(env, argv[0], run, NULL, NULL);
	if (!j)
		return NULL;
	if (!nx_i64(env, argv[1], dflt, what, &j->n[0])) {
		nx_job_discard(env, j);
		return NULL;
	}
	return nx_job_submit(env, j);
}

/* clockAdvance(local, ms) */
static napi_value js_advance(napi_env env, napi_callback_info info)
{
	return local_num_call(env, info, run_advance, "ms", 0);
}
/* quiesce(local, timeoutMs) */
static napi_value js_quiesce(napi_env env, napi_callback_info info)
{
	return local_num_call(env, info, run_quiesce, "timeoutMs", 10000);
}
/* restartManager(local) */
static napi_value js_restart(napi_env env, napi_callback_info info)
{
	return local_num_call(env, info, run_restart, "unused", 0);
}
/* gc(local) */
static napi_value js_gc(napi_env env, napi_callback_info info)
{
	return local_num_call(env, info, run_gc, "unused", 0);
}

/* inspect(local, sandboxId|null) → JSON text */
static napi_value js_inspect(napi_env env, napi_callback_info info)
{
	napi_value argv[2];
	if (!nx_args(env, info, 2, argv))
		return NULL;
	nx_job *j = local_job(env, argv[0], run_inspect, done_cstr, free_cstr);
	if (!j)
		return NULL;
	if (!nx_str(env, argv[1], true, "sandboxId", &j->s[0])) {
		nx_job_discard(env, j);
		return NULL;
	}
	return nx_job_submit(env, j);
}

/* templateBuild(local, name, dir|null, sizeBytes, ephemeralMounts|null) */
static napi_value js_template(napi_env env, napi_callback_info info)
{
	napi_value argv[5];
	if (!nx_args(env, info, 5, argv))
		return NULL;
	nx_job *j = local_job(env, argv[0], run_template, NULL, NULL);
	if (!j)
		return NULL;
	bool ok = nx_str(env, argv[1], false, "name", &j->s[0]) &&
	          nx_str(env, argv[2], true, "dir", &j->s[1]) &&
	          nx_i64(env, argv[3], 0, "sizeBytes", &j->n[0]) &&
	          nx_strv(env, argv[4], "ephemeralMounts", &j->strv);
	if (ok && j->n[0] < 0) {
		nx_throw_type(env, "sizeBytes must not be negative");
		ok = false;
	}
	if (!ok) {
		nx_job_discard(env, j);
		return NULL;
	}
	return nx_job_submit(env, j);
}

/* Synchronous calls report failures as a thrown plain error object (the
 * shape of nx_error_value) that the TS layer converts. */
static napi_value throw_s0(napi_env env, int rc, s0_error *err)
{
	napi_value v = nx_error_value(env, rc, err);
	s0_error_free(err);
	napi_throw(env, v);
	return NULL;
}

/* faultArm(local, name, mode, count, delayMs) */
static napi_value js_fault_arm(napi_env env, napi_callback_info info)
{
	napi_value argv[5];
	int64_t mode, count, delay;
	char *name = NULL;
	s0_error *err = NULL;
	if (!nx_args(env, info, 5, argv))
		return NULL;
	nx_obj *l = nx_obj_get(env, argv[0], NX_LOCAL, "local");
	if (!l || !nx_str(env, argv[1], false, "name", &name))
		return NULL;
	if (!nx_i64(env, argv[2], S0_FAULT_FAIL, "mode", &mode) ||
	    !nx_i64(env, argv[3], 1, "count", &count) || !nx_i64(env, argv[4], 0, "delayMs", &delay) ||
	    mode < INT32_MIN || mode > INT32_MAX) {
		free(name);
		return nx_throw_type(env, "fault mode, count and delayMs must be numbers");
	}
	int rc = s0_local_fault_arm(l->ptr, name, (int32_t)mode, count, delay, &err);
	free(name);
	return rc == S0_OK ? NULL : throw_s0(env, rc, err);
}

/* faultRelease(local, name) */
static napi_value js_fault_release(napi_env env, napi_callback_info info)
{
	napi_value argv[2];
	char *name = NULL;
	s0_error *err = NULL;
	if (!nx_args(env, info, 2, argv))
		return NULL;
	nx_obj *l = nx_obj_get(env, argv[0], NX_LOCAL, "local");
	if (!l || !nx_str(env, argv[1], false, "name", &name))
		return NULL;
	int rc = s0_local_fault_release(l->ptr, name, &err);
	free(name);
	return rc == S0_OK ? NULL : throw_s0(env, rc, err);
}

/* nowUnixMs(local) */
static napi_value js_now(napi_env env, napi_callback_info info)
{
	napi_value argv[1];
	if (!nx_args(env, info, 1, argv))
		return NULL;
	nx_obj *l = nx_obj_get(env, argv[0], NX_LOCAL, "local");
	return l ? nx_int(env, s0_local_now_unix_ms(l->ptr)) : NULL;
}

bool nx_export_local_ops(napi_env env, napi_value exports)
{
	return nx_export_define(env, exports, "localOpen", js_open) &&
	       nx_export_define(env, exports, "localClose", js_close) &&
	       nx_export_define(env, exports, "clockAdvance", js_advance) &&
	       nx_export_define(env, exports, "quiesce", js_quiesce) &&
	       nx_export_define(env, exports, "restartManager", js_restart) &&
	       nx_export_define(env, exports, "gc", js_gc) &&
	       nx_export_define(env, exports, "inspect", js_inspect) &&
	       nx_export_define(env, exports, "templateBuild", js_template) &&
	       nx_export_define(env, exports, "faultArm", js_fault_arm) &&
	       nx_export_define(env, exports, "faultRelease", js_fault_release) &&
	       nx_export_define(env, exports, "nowUnixMs", js_now);
}
