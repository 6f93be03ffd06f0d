/* Lifecycle waits: pauseAndWait, resumeAndWait and the generic wait, with a
 * cancel token, progress events and an optional JS predicate (wait.h). */
#include "addon.h"

#include <stdlib.h>

static void free_info(nx_job *j) { s0_sandbox_info_free(j->res); }

static napi_value done_info(napi_env env, nx_job *j)
{
	return j->res ? nx_string(env, s0_sandbox_info_json(j->res)) : nx_string(env, NULL);
}

static int run_pause_wait(nx_job *j)
{
	return s0_sandbox_pause_and_wait(j->client->ptr, j->s[0], &j->wopts,
	                                 (s0_sandbox_info **)&j->res, &j->err);
}

static int run_resume_wait(nx_job *j)
{
	return s0_sandbox_resume_and_wait(j->client->ptr, j->s[0], &j->wopts,
	                                  (s0_sandbox_info **)&j->res, &j->err);
}

static int run_wait(nx_job *j)
{
	j->started_mono_ms = nx_mono_ms();
	return s0_sandbox_wait(j->client->ptr, j->s[0], (uint32_t)j->n[0],
	                       j->predicate ? nx_job_predicate : NULL, &j->wopts,
	                       (s0_sandbox_info **)&j->res, &j->err);
}

static bool is_function(napi_env env, napi_value v)
{
	napi_valuetype t;
	return v && napi_typeof(env, v, &t) == napi_ok && t == napi_function;
}

/* Common arguments: (client, id, opts, token|null, onProgress|null).
 * opts: {memory: 0|1|2, timeoutMs, pollInitialMs, pollMaxMs, noJitter,
 * notFoundOk}; numbers are passed to s0_wait_options unchanged, so the
 * library validates them (S0_EINVAL before any request). */
static nx_job *wait_job(napi_env env, napi_value *argv, nx_run_fn run)
{
	int64_t mem, timeout, initial, maxms, nojit, nf;
	nx_obj *c = nx_obj_get(env, argv[0], NX_CLIENT, "client");
	if (!c)
		return NULL;
	nx_obj *tok = NULL;
	napi_valuetype t = napi_undefined;
	if (argv[3])
		napi_typeof(env, argv[3], &t);
	if (t != napi_undefined && t != napi_null) {
		tok = nx_obj_get(env, argv[3], NX_TOKEN, "token");
		if (!tok)
			return NULL;
	}
	nx_job *j = nx_job_new(env, run, done_info, free_info);
	if (!j)
		return NULL;
	napi_value o = argv[2];
	if (!nx_str(env, argv[1], false, "sandboxId", &j->s[0]) ||
	    !nx_i64(env, nx_prop(env, o, "memory"), 0, "memory", &mem) ||
	    !nx_i64(env, nx_prop(env, o, "timeoutMs"), 0, "timeoutMs", &timeout) ||
	    !nx_i64(env, nx_prop(env, o, "pollInitialMs"), 0, "pollInitialMs", &initial) ||
	    !nx_i64(env, nx_prop(env, o, "pollMaxMs"), 0, "pollMaxMs", &maxms) ||
	    !nx_i64(env, nx_prop(env, o, "noJitter"), 0, "noJitter", &nojit) ||
	    !nx_i64(env, nx_prop(env, o, "notFoundOk"), 0, "notFoundOk", &nf)) {
		nx_job_discard(env, j);
		return NULL;
	}
	if (mem < INT32_MIN || mem > INT32_MAX) {
		nx_job_discard(env, j);
		nx_throw_type(env, "memory is out of range");
		return NULL;
	}
	j->client = c;
	j->token = tok;
	j->wopts.memory = (int32_t)mem;
	j->wopts.timeout_ms = timeout;
	j->wopts.poll_initial_ms = initial;
	j->wopts.poll_max_ms = maxms;
	j->wopts.flags = (nojit ? S0_WAIT_NO_JITTER : 0u) | (nf ? S0_WAIT_NOTFOUND_OK : 0u);
	j->wopts.cancel = tok ? tok->ptr : NULL;
	j->wopts.payload = j;
	if (is_function(env, argv[4])) {
		if (napi_create_reference(env, argv[4], 1, &j->on_progress) != napi_ok) {
			nx_job_discard(env, j);
			nx_throw_last(env);
			return NULL;
		}
		j->wopts.progress_cb = nx_job_progress;
	}
	return j;
}

static napi_value lifecycle_wait(napi_env env, napi_callback_info info, nx_run_fn run)
{
	size_t argc = 5;
	napi_value argv[5] = {NULL, NULL, NULL, NULL, NULL};
	NX_CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
	nx_job *j = wait_job(env, argv, run);
	return j ? nx_job_submit(env, j) : NULL;
}

/* pauseAndWait(client, id, opts, token|null, onProgress|null) */
static napi_value js_pause_wait(napi_env env, napi_callback_info info)
{
	return lifecycle_wait(env, info, run_pause_wait);
}

/* resumeAndWait(client, id, opts, token|null, onProgress|null) */
static napi_value js_resume_wait(napi_env env, napi_callback_info info)
{
	return lifecycle_wait(env, info, run_resume_wait);
}

/* wait(client, id, opts, token|null, onProgress|null, statusMask,
 *      predicate|null) where predicate(json, reply) answers through reply(n):
 *      1 done, 0 keep polling, a negative s0_code to stop. */
static napi_value js_wait(napi_env env, napi_callback_info info)
{
	size_t argc = 7;
	napi_value argv[7] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
	int64_t mask;
	NX_CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
	nx_job *j = wait_job(env, argv, run_wait);
	if (!j)
		return NULL;
	if (!nx_i64(env, argv[5], 0, "statusMask", &mask) || mask < 0 || mask > UINT32_MAX) {
		nx_job_discard(env, j);
		return nx_throw_type(env, "statusMask must be a bit mask of statuses");
	}
	j->n[0] = mask;
	if (is_function(env, argv[6]) &&
	    napi_create_reference(env, argv[6], 1, &j->predicate) != napi_ok) {
		nx_job_discard(env, j);
		return nx_throw_last(env);
	}
	return nx_job_submit(env, j);
}

bool nx_export_wait_ops(napi_env env, napi_value exports)
{
	return nx_export_define(env, exports, "pauseAndWait", js_pause_wait) &&
	       nx_export_define(env, exports, "resumeAndWait", js_resume_wait) &&
	       nx_export_define(env, exports, "wait", js_wait);
}
