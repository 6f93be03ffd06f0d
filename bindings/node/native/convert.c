/* Argument marshalling and result/error conversion (JS thread only). */
#include "addon.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

napi_value nx_throw_type(napi_env env, const char *msg)
{
	bool pending = false;
	napi_is_exception_pending(env, &pending);
	if (!pending)
		napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", msg);
	return NULL;
}

napi_value nx_throw_last(napi_env env)
{
	const napi_extended_error_info *ei = NULL;
	bool pending = false;
	napi_get_last_error_info(env, &ei);
	napi_is_exception_pending(env, &pending);
	if (!pending)
		napi_throw_error(env, NULL,
		                 ei && ei->error_message ? ei->error_message : "N-API call failed");
	return NULL;
}

bool nx_args(napi_env env, napi_callback_info info, size_t want, napi_value *argv)
{
	size_t argc = want;
	for (size_t i = 0; i < want; i++)
		argv[i] = NULL;
	if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) {
		nx_throw_last(env);
		return false;
	}
	return true;
}

static bool is_nullish(napi_env env, napi_value v)
{
	napi_valuetype t;
	if (!v || napi_typeof(env, v, &t) != napi_ok)
		return true;
	return t == napi_undefined || t == napi_null;
}

napi_value nx_prop(napi_env env, napi_value obj, const char *key)
{
	napi_valuetype t;
	napi_value v = NULL;
	if (!obj || napi_typeof(env, obj, &t) != napi_ok || t != napi_object)
		return NULL;
	if (napi_get_named_property(env, obj, key, &v) != napi_ok)
		return NULL;
	return v;
}

bool nx_str(napi_env env, napi_value v, bool optional, const char *what, char **out)
{
	char msg[160];
	napi_valuetype t;
	size_t len = 0;
	*out = NULL;
	if (is_nullish(env, v)) {
		if (optional)
			return true;
		snprintf(msg, sizeof msg, "%s must be a string", what);
		nx_throw_type(env, msg);
		return false;
	}
	if (napi_typeof(env, v, &t) != napi_ok || t != napi_string) {
		snprintf(msg, sizeof msg, "%s must be a string", what);
		nx_throw_type(env, msg);
		return false;
	}
	if (napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok) {
		nx_throw_last(env);
		return false;
	}
	char *s = malloc(len + 1);
	if (!s) {
		napi_throw_error(env, NULL, "out of memory");
		return false;
	}
	napi_get_value_string_utf8(env, v, s, len + 1, &len);
	if (strlen(s) != len) {
		free(s);
		snprintf(msg, sizeof msg, "%s must not contain NUL characters", what);
		nx_throw_type(env, msg);
		return false;
	}
	*out = s;
	return true;
}

bool nx_i64(napi_env env, napi_value v, int64_t dflt, const char *what, int64_t *out)
{
	char msg[160];
	napi_valuetype t;
	double d;
	if (is_nullish(env, v)) {
		*out = dflt;
		return true;
	}
	if (napi_typeof(env, v, &t) != napi_ok || t != napi_number ||
	    napi_get_value_double(env, v, &d) != napi_ok || !isfinite(d) ||
	    d > 9007199254740991.0 || d < -9007199254740991.0) {
		snprintf(msg, sizeof msg, "%s must be a finite number", what);
		nx_throw_type(env, msg);
		return false;
	}
	*out = (int64_t)d;
	return true;
}

void nx_strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

bool nx_strv(napi_env env, napi_value v, const char *what, char ***out)
{
	bool is_array = false;
	uint32_t n = 0;
	*out = NULL;
	if (is_nullish(env, v))
		return true;
	if (napi_is_array(env, v, &is_array) != napi_ok || !is_array) {
		char msg[160];
		snprintf(msg, sizeof msg, "%s must be an array of strings", what);
		nx_throw_type(env, msg);
		return false;
	}
	napi_get_array_length(env, v, &n);
	char **arr = calloc((size_t)n + 1, sizeof *arr);
	if (!arr) {
		napi_throw_error(env, NULL, "out of memory");
		return false;
	}
	for (uint32_t i = 0; i < n; i++) {
		napi_value e;
		if (napi_get_element(env, v, i, &e) != napi_ok || !nx_str(env, e, false, what, &arr[i])) {
			nx_strv_free(arr);
			return false;
		}
	}
	*out = arr;
	return true;
}

napi_value nx_string(napi_env env, const char *s)
{
	napi_value v;
	if (!s)
		napi_get_null(env, &v);
	else
		napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &v);
	return v;
}

napi_value nx_int(napi_env env, int64_t n)
{
	napi_value v;
	napi_create_double(env, (double)n, &v);
	return v;
}

napi_value nx_bool(napi_env env, bool b)
{
	napi_value v;
	napi_get_boolean(env, b, &v);
	return v;
}

void nx_set(napi_env env, napi_value obj, const char *key, napi_value v)
{
	napi_set_named_property(env, obj, key, v);
}

napi_value nx_file_info_value(napi_env env, const s0_file_info *fi)
{
	static const char *const types[] = {"unknown", "file", "dir", "symlink"};
	napi_value o;
	int t = s0_file_info_type(fi);
	napi_create_object(env, &o);
	nx_set(env, o, "name", nx_string(env, s0_file_info_name(fi)));
	nx_set(env, o, "path", nx_string(env, s0_file_info_path(fi)));
	nx_set(env, o, "type", nx_string(env, types[t >= 0 && t <= 3 ? t : 0]));
	nx_set(env, o, "size", nx_int(env, s0_file_info_size_bytes(fi)));
	nx_set(env, o, "mode", nx_int(env, s0_file_info_mode(fi)));
	nx_set(env, o, "modTimeUnixMs", nx_int(env, s0_file_info_mod_time_unix_ms(fi)));
	nx_set(env, o, "isLink", nx_bool(env, s0_file_info_is_link(fi)));
	nx_set(env, o, "linkTarget", nx_string(env, s0_file_info_link_target(fi)));
	return o;
}

napi_value nx_error_value(napi_env env, int rc, const s0_error *err)
{
	napi_value o;
	napi_create_object(env, &o);
	int code = err ? s0_error_code(err) : rc;
	nx_set(env, o, "code", nx_int(env, code));
	nx_set(env, o, "kind", nx_string(env, s0_code_name(code)));
	nx_set(env, o, "reason", nx_string(env, err ? s0_error_reason(err) : s0_code_name(code)));
	nx_set(env, o, "message", nx_string(env, err ? s0_error_message(err) : s0_strerror(code)));
	if (!err)
		return o;
	nx_set(env, o, "wireCode", nx_string(env, s0_error_wire_code(err)));
	nx_set(env, o, "httpStatus", nx_int(env, s0_error_http_status(err)));
	nx_set(env, o, "requestId", nx_string(env, s0_error_request_id(err)));
	nx_set(env, o, "retryAfterMs", nx_int(env, s0_error_retry_after_ms(err)));
	nx_set(env, o, "detailsJson", nx_string(env, s0_error_details_json(err)));
	size_t blen = 0;
	const void *body = s0_error_body(err, &blen);
	if (body) {
		napi_value b;
		void *dst = NULL;
		if (napi_create_buffer_copy(env, blen, body, &dst, &b) == napi_ok)
			nx_set(env, o, "body", b);
	}
	nx_set(env, o, "sandboxId", nx_string(env, s0_error_sandbox_id(err)));
	nx_set(env, o, "action", nx_string(env, s0_error_action(err)));
	const s0_sandbox_info *last = s0_error_last_sandbox(err);
	nx_set(env, o, "lastSandboxJson", nx_string(env, last ? s0_sandbox_info_json(last) : NULL));
	nx_set(env, o, "timeoutMs", nx_int(env, s0_error_timeout_ms(err)));
	nx_set(env, o, "retryable", nx_bool(env, s0_error_is_retryable(err)));
	nx_set(env, o, "claimStartThrottled", nx_bool(env, s0_error_is_claim_start_throttled(err)));
	const s0_error *cause = s0_error_cause(err);
	if (cause)
		nx_set(env, o, "cause", nx_error_value(env, s0_error_code(cause), cause));
	return o;
}
