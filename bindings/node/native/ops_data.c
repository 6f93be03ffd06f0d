/* Files and process calls (files.h, contexts.h): each takes the client
 * handle and the sandbox id first and returns a promise. */
#include "addon.h"

#include <stdlib.h>
#include <string.h>

#define CLIENT(j) ((s0_client *)(j)->client->ptr)

static void free_cstr(nx_job *j) { s0_free(j->res); }
static void free_finfo(nx_job *j) { s0_file_info_free(j->res); }
static void free_flist(nx_job *j) { s0_file_list_free(j->res); }

static napi_value done_bytes(napi_env env, nx_job *j)
{
	napi_value b;
	void *dst = NULL;
	if (napi_create_buffer_copy(env, j->res_len, j->res_len ? j->res : "", &dst, &b) != napi_ok)
		return nx_throw_last(env);
	return b;
}
static napi_value done_cstr(napi_env env, nx_job *j) { return nx_string(env, j->res); }
static napi_value done_finfo(napi_env env, nx_job *j) { return nx_file_info_value(env, j->res); }
static napi_value done_flist(napi_env env, nx_job *j)
{
	napi_value arr;
	size_t n = s0_file_list_length(j->res);
	napi_create_array_with_length(env, n, &arr);
	for (size_t i = 0; i < n; i++)
		napi_set_element(env, arr, (uint32_t)i,
		                 nx_file_info_value(env, s0_file_list_at(j->res, i)));
	return arr;
}
static napi_value done_runtime(napi_env env, nx_job *j)
{
	napi_value o;
	napi_create_object(env, &o);
	nx_set(env, o, "status", nx_int(env, j->status));
	nx_set(env, o, "json", nx_string(env, j->res));
	return o;
}

static int run_read(nx_job *j)
{
	return s0_files_read(CLIENT(j), j->s[0], j->s[1], &j->res, &j->res_len, &j->err);
}
static int run_write(nx_job *j)
{
	return s0_files_write(CLIENT(j), j->s[0], j->s[1], j->buf, j->buf_len, &j->err);
}
static int run_mkdir(nx_job *j)
{
	return s0_files_mkdir(CLIENT(j), j->s[0], j->s[1], j->n[0] != 0, &j->err);
}
static int run_fdelete(nx_job *j) { return s0_files_delete(CLIENT(j), j->s[0], j->s[1], &j->err); }
static int run_stat(nx_job *j)
{
	return s0_files_stat(CLIENT(j), j->s[0], j->s[1], (s0_file_info **)&j->res, &j->err);
}
static int run_flist(nx_job *j)
{
	return s0_files_list(CLIENT(j), j->s[0], j->s[1], (s0_file_list **)&j->res, &j->err);
}
static int run_move(nx_job *j)
{
	return s0_files_move(CLIENT(j), j->s[0], j->s[1], j->s[2], &j->err);
}
static int run_ctx_create(nx_job *j)
{
	return s0_context_create(CLIENT(j), j->s[0], j->s[1], (char **)&j->res, &j->err);
}
static int run_ctx_exec(nx_job *j)
{
	return s0_context_exec(CLIENT(j), j->s[0], j->s[1], j->s[2], (char **)&j->res, &j->err);
}
static int run_ctx_get(nx_job *j)
{
	return s0_context_get(CLIENT(j), j->s[0], j->s[1], (char **)&j->res, &j->err);
}
static int run_ctx_delete(nx_job *j)
{
	return s0_context_delete(CLIENT(j), j->s[0], j->s[1], &j->err);
}
static int run_runtime(nx_job *j)
{
	return s0_runtime_call(CLIENT(j), j->s[2], j->s[0], j->s[1], j->s[3], j->s[4], &j->status,
	                       (char **)&j->res, &j->err);
}

/* (client, sandboxId, then @p nstr more strings named by @p names; a name
 * starting with '?' is optional) */
static nx_job *strings_job(napi_env env, napi_callback_info info, napi_value *argv, size_t want,
                           const char *const *names, size_t nstr, nx_run_fn run,
                           nx_done_fn done, nx_free_fn fr)
{
	nx_job *j = nx_client_job(env, info, want, argv, run, done, fr);
	if (!j)
		return NULL;
	bool ok = nx_str(env, argv[1], false, "sandboxId", &j->s[0]);
	for (size_t i = 0; ok && i < nstr; i++) {
		bool opt = names[i][0] == '?';
		ok = nx_str(env, argv[2 + i], opt, names[i] + (opt ? 1 : 0), &j->s[1 + i]);
	}
	if (!ok) {
		nx_job_discard(env, j);
		return NULL;
	}
	return j;
}

/* fname(client, id, then one string per name in __VA_ARGS__ (see strings_job)) */
#define STRINGS_CALL(fname, run, done, fr, ...)                                       \
	static napi_value fname(napi_env env, napi_callback_info info)                    \
	{                                                                                 \
		static const char *const names[] = {__VA_ARGS__};                             \
		enum { nstr = sizeof names / sizeof names[0] };                               \
		napi_value argv[2 + nstr];                                                    \
		nx_job *j = strings_job(env, info, argv, 2 + nstr, names, nstr, run, done, fr); \
		return j ? nx_job_submit(env, j) : NULL;                                      \
	}
#define PATH_CALL(fname, run, done, fr) STRINGS_CALL(fname, run, done, fr, "path")

PATH_CALL(js_read, run_read, done_bytes, free_cstr)
PATH_CALL(js_fdelete, run_fdelete, NULL, NULL)
PATH_CALL(js_stat, run_stat, done_finfo, free_finfo)
PATH_CALL(js_flist, run_flist, done_flist, free_flist)

/* filesWrite(client, id, path, Buffer|Uint8Array) */
static napi_value js_write(napi_env env, napi_callback_info info)
{
	static const char *const names[] = {"path"};
	napi_value argv[4];
	nx_job *j = strings_job(env, info, argv, 4, names, 1, run_write, NULL, NULL);
	if (!j)
		return NULL;
	bool is_ta = false;
	void *data = NULL;
	size_t len = 0;
	napi_typedarray_type tt;
	napi_value ab;
	size_t off;
	if (!argv[3] || napi_is_typedarray(env, argv[3], &is_ta) != napi_ok || !is_ta ||
	    napi_get_typedarray_info(env, argv[3], &tt, &len, &data, &ab, &off) != napi_ok ||
	    tt != napi_uint8_array) {
		nx_job_discard(env, j);
		return nx_throw_type(env, "data must be a Uint8Array");
	}
	/* copied: the caller may reuse the array while the write runs */
	j->buf = malloc(len ? len : 1);
	if (!j->buf) {
		nx_job_discard(env, j);
		napi_throw_error(env, NULL, "out of memory");
		return NULL;
	}
	if (len)
		memcpy(j->buf, data, len);
	j->buf_len = len;
	return nx_job_submit(env, j);
}

/* filesMkdir(client, id, path, recursive) */
static napi_value js_mkdir(napi_env env, napi_callback_info info)
{
	static const char *const names[] = {"path"};
	napi_value argv[4];
	bool rec = false;
	nx_job *j = strings_job(env, info, argv, 4, names, 1, run_mkdir, NULL, NULL);
	if (!j)
		return NULL;
	if (argv[3])
		napi_get_value_bool(env, argv[3], &rec);
	j->n[0] = rec;
	return nx_job_submit(env, j);
}

/* filesMove(client, id, source, destination) */
STRINGS_CALL(js_move, run_move, NULL, NULL, "source", "destination")

/* contextCreate(client, id, requestJson) */
STRINGS_CALL(js_ctx_create, run_ctx_create, done_cstr, free_cstr, "request")

/* contextExec(client, id, contextId, data) */
STRINGS_CALL(js_ctx_exec, run_ctx_exec, done_cstr, free_cstr, "contextId", "input")

/* contextGet(client, id, contextId) */
STRINGS_CALL(js_ctx_get, run_ctx_get, done_cstr, free_cstr, "contextId")

/* contextDelete(client, id, contextId) */
STRINGS_CALL(js_ctx_delete, run_ctx_delete, NULL, NULL, "contextId")

/* runtimeCall(client, id, suffix, method, bodyJson|null, idempotencyKey|null)
 * → {status, json} */
STRINGS_CALL(js_runtime, run_runtime, done_runtime, free_cstr, "suffix", "method", "?body",
             "?idempotencyKey")

bool nx_export_data_ops(napi_env env, napi_value exports)
{
	return nx_export_define(env, exports, "filesRead", js_read) &&
	       nx_export_define(env, exports, "filesWrite", js_write) &&
	       nx_export_define(env, exports, "filesMkdir", js_mkdir) &&
	       nx_export_define(env, exports, "filesDelete", js_fdelete) &&
	       nx_export_define(env, exports, "filesStat", js_stat) &&
	       nx_export_define(env, exports, "filesList", js_flist) &&
	       nx_export_define(env, exports, "filesMove", js_move) &&
	       nx_export_define(env, exports, "contextCreate", js_ctx_create) &&
	       nx_export_define(env, exports, "contextExec", js_ctx_exec) &&
	       nx_export_define(env, exports, "contextGet", js_ctx_get) &&
	       nx_export_define(env, exports, "contextDelete", js_ctx_delete) &&
	       nx_export_define(env, exports, "runtimeCall", js_runtime);
}
