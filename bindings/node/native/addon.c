/* Module registration and the synchronous exports: clients, cancel tokens,
 * version, live-object counters, the thread cap and the error tables. */
#include "addon.h"

#include <stdlib.h>

bool nx_export_define(napi_env env, napi_value exports, const char *name, napi_callback cb)
{
	napi_value fn;
	if (napi_create_function(env, name, NAPI_AUTO_LENGTH, cb, NULL, &fn) != napi_ok ||
	    napi_set_named_property(env, exports, name, fn) != napi_ok) {
		nx_throw_last(env);
		return false;
	}
	return true;
}

static napi_value throw_s0(napi_env env, int rc, s0_error *err)
{
	napi_value v = nx_error_value(env, rc, err);
	s0_error_free(err);
	napi_throw(env, v);
	return NULL;
}

typedef struct client_args {
	char *s[4];
	char **headers;
	s0_client_options opts;
} client_args;

static void client_args_free(client_args *a)
{
	for (int i = 0; i < 4; i++)
		free(a->s[i]);
	nx_strv_free(a->headers);
}

/* {baseUrl, token, userAgent, teamId, headers: ["Name: value"],
 *  connectTimeoutMs, requestTimeoutMs} */
static bool client_args_read(napi_env env, napi_value o, client_args *a)
{
	s0_client_options_init(&a->opts, S0_CLIENT_OPTIONS_VERSION);
	if (!nx_str(env, nx_prop(env, o, "baseUrl"), true, "baseUrl", &a->s[0]) ||
	    !nx_str(env, nx_prop(env, o, "token"), true, "token", &a->s[1]) ||
	    !nx_str(env, nx_prop(env, o, "userAgent"), true, "userAgent", &a->s[2]) ||
	    !nx_str(env, nx_prop(env, o, "teamId"), true, "teamId", &a->s[3]) ||
	    !nx_strv(env, nx_prop(env, o, "headers"), "headers", &a->headers) ||
	    !nx_i64(env, nx_prop(env, o, "connectTimeoutMs"), 0, "connectTimeoutMs",
	            &a->opts.connect_timeout_ms) ||
	    !nx_i64(env, nx_prop(env, o, "requestTimeoutMs"), 0, "requestTimeoutMs",
	            &a->opts.request_timeout_ms)) {
		client_args_free(a);
		return false;
	}
	a->opts.base_url = a->s[0];
	a->opts.token = a->s[1];
	a->opts.user_agent = a->s[2];
	a->opts.team_id = a->s[3];
	a->opts.headers = (const char *const *)a->headers;
	return true;
}

static napi_value client_new(napi_env env, napi_callback_info info, bool from_env)
{
	napi_value argv[1];
	client_args a = {0};
	s0_client *c = NULL;
	s0_error *err = NULL;
	if (!nx_args(env, info, 1, argv) || !client_args_read(env, argv[0], &a))
		return NULL;
	int rc = from_env ? s0_client_new_from_env(&a.opts, &c, &err)
	                  : s0_client_new(&a.opts, &c, &err);
	client_args_free(&a);
	if (rc != S0_OK)
		return throw_s0(env, rc, err);
	return nx_obj_wrap(env, NX_CLIENT, c, NULL);
}

/* clientNew(opts) → client handle (no I/O; throws an error object on bad
 * options) */
static napi_value js_client_new(napi_env env, napi_callback_info info)
{
	return client_new(env, info, false);
}

/* clientNewFromEnv(opts): SANDBOX0_BASE_URL, SANDBOX0_TOKEN/SANDBOX0_API_KEY */
static napi_value js_client_new_env(napi_env env, napi_callback_info info)
{
	return client_new(env, info, true);
}

/* clientNewLocal(local, opts): a client over the embedded backend; it keeps
 * the backend open until it is closed too. */
static napi_value js_client_new_local(napi_env env, napi_callback_info info)
{
	napi_value argv[2];
	client_args a = {0};
	s0_client *c = NULL;
	s0_error *err = NULL;
	if (!nx_args(env, info, 2, argv))
		return NULL;
	nx_obj *l = nx_obj_get(env, argv[0], NX_LOCAL, "local");
	if (!l || !client_args_read(env, argv[1], &a))
		return NULL;
	int rc = s0_client_new_local(l->ptr, &a.opts, &c, &err);
	client_args_free(&a);
	if (rc != S0_OK)
		return throw_s0(env, rc, err);
	return nx_obj_wrap(env, NX_CLIENT, c, l);
}

static napi_value close_kind(napi_env env, napi_callback_info info, nx_kind kind)
{
	napi_value argv[1];
	void *data = NULL;
	napi_valuetype t;
	if (!nx_args(env, info, 1, argv))
		return NULL;
	/* closing twice is a no-op */
	if (napi_typeof(env, argv[0], &t) == napi_ok && t == napi_external &&
	    napi_get_value_external(env, argv[0], &data) == napi_ok && data &&
	    ((nx_obj *)data)->js_closed)
		return NULL;
	nx_obj *o = nx_obj_get(env, argv[0], kind, "handle");
	if (o)
		nx_obj_close(o);
	return NULL;
}

/* clientClose(client): frees the client once its calls in flight end. */
static napi_value js_client_close(napi_env env, napi_callback_info info)
{
	return close_kind(env, info, NX_CLIENT);
}

/* tokenNew() → cancel token handle */
static napi_value js_token_new(napi_env env, napi_callback_info info)
{
	(void)info;
	s0_cancel_token *t = NULL;
	s0_error *err = NULL;
	int rc = s0_cancel_token_new(&t, &err);
	if (rc != S0_OK)
		return throw_s0(env, rc, err);
	return nx_obj_wrap(env, NX_TOKEN, t, NULL);
}

/* tokenCancel(token): fire it (any call using it returns promptly). */
static napi_value js_token_cancel(napi_env env, napi_callback_info info)
{
	napi_value argv[1];
	if (!nx_args(env, info, 1, argv))
		return NULL;
	nx_obj *o = nx_obj_get(env, argv[0], NX_TOKEN, "token");
	if (o)
		s0_cancel_token_cancel(o->ptr);
	return NULL;
}

/* tokenFree(token): release the JS handle's reference. */
static napi_value js_token_free(napi_env env, napi_callback_info info)
{
	return close_kind(env, info, NX_TOKEN);
}

static napi_value js_version(napi_env env, napi_callback_info info)
{
	(void)info;
	return nx_string(env, s0_version_string());
}

/* liveObjects() → s0_live_objects(): library objects alive in the process */
static napi_value js_live_objects(napi_env env, napi_callback_info info)
{
	(void)info;
	return nx_int(env, s0_live_objects());
}

/* liveHandles() → holders whose library object is alive */
static napi_value js_live_handles(napi_env env, napi_callback_info info)
{
	(void)info;
	return nx_int(env, nx_obj_live());
}

/* poolStats() → {threads, queued, inflight, peakThreads, maxThreads} */
static napi_value js_pool_stats(napi_env env, napi_callback_info info)
{
	(void)info;
	int threads, queued, inflight, peak;
	napi_value o;
	nx_pool_stats(&threads, &queued, &inflight, &peak);
	napi_create_object(env, &o);
	nx_set(env, o, "threads", nx_int(env, threads));
	nx_set(env, o, "queued", nx_int(env, queued));
	nx_set(env, o, "inflight", nx_int(env, inflight));
	nx_set(env, o, "peakThreads", nx_int(env, peak));
	nx_set(env, o, "maxThreads", nx_int(env, nx_pool_cap()));
	return o;
}

/* setMaxThreads(n): 1..4096; queued calls start when the cap rises */
static napi_value js_set_max_threads(napi_env env, napi_callback_info info)
{
	napi_value argv[1];
	int64_t n;
	if (!nx_args(env, info, 1, argv) || !nx_i64(env, argv[0], 0, "maxThreads", &n))
		return NULL;
	if (n < 1 || n > 4096 || !nx_pool_set_cap((int)n)) {
		napi_throw_range_error(env, "ERR_OUT_OF_RANGE", "maxThreads must be 1..4096");
		return NULL;
	}
	return NULL;
}

static void push(napi_env env, napi_value arr, napi_value row)
{
	uint32_t n = 0;
	napi_get_array_length(env, arr, &n);
	napi_set_element(env, arr, n, row);
}

static napi_value row(napi_env env, napi_value a, napi_value b, napi_value c, napi_value d)
{
	napi_value r;
	napi_create_array_with_length(env, d ? 4 : 3, &r);
	napi_set_element(env, r, 0, a);
	napi_set_element(env, r, 1, b);
	napi_set_element(env, r, 2, c);
	if (d)
		napi_set_element(env, r, 3, d);
	return r;
}

/* errorTables() → {codes: [[ident, value, name, description]…],
 * wire: [[wireCode, httpStatus, code, reason]…], reasons: [[wireCode,
 * substring, reason]…]}: the X-macro tables as compiled into the library's
 * headers (tests compare the generated TS classes with them). */
static napi_value js_error_tables(napi_env env, napi_callback_info info)
{
	(void)info;
	napi_value o, codes, wire, reasons;
	napi_create_object(env, &o);
	napi_create_array(env, &codes);
	napi_create_array(env, &wire);
	napi_create_array(env, &reasons);
#define CODE_ROW(id, val, name, desc)                                                    \
	push(env, codes, row(env, nx_string(env, #id), nx_int(env, val), nx_string(env, name), \
	                     nx_string(env, desc)));
	S0_CODE_MAP(CODE_ROW)
#undef CODE_ROW
#define WIRE_ROW(w, status, code, reason)                                                \
	push(env, wire, row(env, nx_string(env, w), nx_int(env, status), nx_int(env, code),   \
	                    nx_string(env, reason)));
	S0_WIRE_ERROR_MAP(WIRE_ROW)
#undef WIRE_ROW
#define REASON_ROW(w, sub, reason)                                                       \
	push(env, reasons, row(env, nx_string(env, w), nx_string(env, sub),                   \
	                       nx_string(env, reason), NULL));
	S0_WIRE_REASON_MAP(REASON_ROW)
#undef REASON_ROW
	nx_set(env, o, "codes", codes);
	nx_set(env, o, "wire", wire);
	nx_set(env, o, "reasons", reasons);
	return o;
}

static napi_value init(napi_env env, napi_value exports)
{
	s0_error *err = NULL;
	int rc = s0_global_init(&err);
	if (rc != S0_OK)
		return throw_s0(env, rc, err);
	const char *cap = getenv("SANDBOX0_NODE_MAX_THREADS");
	if (cap && *cap) {
		char *end = NULL;
		long n = strtol(cap, &end, 10);
		if (*end || !nx_pool_set_cap((int)n)) {
			napi_throw_range_error(env, "ERR_OUT_OF_RANGE",
			                       "SANDBOX0_NODE_MAX_THREADS must be 1..4096");
			return NULL;
		}
	}
	if (!nx_export_define(env, exports, "clientNew", js_client_new) ||
	    !nx_export_define(env, exports, "clientNewFromEnv", js_client_new_env) ||
	    !nx_export_define(env, exports, "clientNewLocal", js_client_new_local) ||
	    !nx_export_define(env, exports, "clientClose", js_client_close) ||
	    !nx_export_define(env, exports, "tokenNew", js_token_new) ||
	    !nx_export_define(env, exports, "tokenCancel", js_token_cancel) ||
	    !nx_export_define(env, exports, "tokenFree", js_token_free) ||
	    !nx_export_define(env, exports, "version", js_version) ||
	    !nx_export_define(env, exports, "liveObjects", js_live_objects) ||
	    !nx_export_define(env, exports, "liveHandles", js_live_handles) ||
	    !nx_export_define(env, exports, "poolStats", js_pool_stats) ||
	    !nx_export_define(env, exports, "setMaxThreads", js_set_max_threads) ||
	    !nx_export_define(env, exports, "errorTables", js_error_tables) ||
	    !nx_export_client_ops(env, exports) || !nx_export_wait_ops(env, exports) ||
	    !nx_export_data_ops(env, exports) || !nx_export_local_ops(env, exports) ||
	    !nx_export_stream_ops(env, exports))
		return NULL;
	return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
