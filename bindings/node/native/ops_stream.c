/* Streams (sandbox0/streams.h): a context's input and output, a session
 * attach, a file watch, over either transport of the client.
 *
 * streamOpen() opens on an addon thread (a pool job) and then starts one
 * reader thread per stream. The reader owns the s0_stream: it receives in
 * slices of READ_SLICE_MS under the stream's mutex and posts each message
 * to the JS callback through the stream's own threadsafe function (TSFN).
 * When the stream ends (or streamClose() marks it closing, seen within one
 * slice) the reader frees the s0_stream, posts nothing more and releases the
 * TSFN, so a closed stream keeps no thread and does not hold the event loop
 * open. The TSFN's finalizer (JS thread) drops the stream's reference on its
 * client, so the client outlives the s0_stream that borrows it. Sends run
 * as pool jobs under the same mutex (they wait at most one slice).
 *
 * The holder (nx_stream) is reference counted across threads: the open
 * job, the reader, the TSFN, the JS external and each send job. */
#include "addon.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { READ_SLICE_MS = 50 };
enum { EV_MESSAGE = 1, EV_END = 2, EV_ERROR = 3 };

typedef struct nx_stream {
	pthread_mutex_t mu; /* serialises calls on st */
	s0_stream *st;      /* NULL once the reader freed it */
	atomic_bool closing;
	atomic_int refs;
	napi_threadsafe_function tsfn;
	nx_obj *client; /* referenced until the TSFN is finalized (JS thread) */
	s0_stream_options opts;
} nx_stream;

typedef struct nx_event {
	int type;
	char *json;   /* EV_MESSAGE */
	int code;     /* EV_END: close code; EV_ERROR: result code */
	char *reason; /* EV_END */
	s0_error *err; /* EV_ERROR */
} nx_event;

static const napi_type_tag stream_tag = {0x5330737472656d31ull, 0x6e6f64652d6e6170ull};

static void stream_unref(nx_stream *S)
{
	if (!S || atomic_fetch_sub(&S->refs, 1) != 1)
		return;
	s0_stream_free(S->st);
	free((char *)S->opts.sandbox_id);
	free((char *)S->opts.id);
	pthread_mutex_destroy(&S->mu);
	free(S);
}

static void event_free(nx_event *e)
{
	if (!e)
		return;
	s0_free(e->json);
	free(e->reason);
	s0_error_free(e->err);
	free(e);
}

/* JS thread: hand one event to the callback (type, payload, code, reason). */
static void call_js(napi_env env, napi_value js_cb, void *context, void *data)
{
	(void)context;
	nx_event *e = data;
	if (env && js_cb) {
		napi_value global, argv[4], result;
		napi_get_global(env, &global);
		argv[0] = nx_int(env, e->type);
		if (e->type == EV_MESSAGE)
			argv[1] = nx_string(env, e->json);
		else if (e->type == EV_ERROR)
			argv[1] = nx_error_value(env, e->code, e->err);
		else
			napi_get_null(env, &argv[1]);
		argv[2] = nx_int(env, e->type == EV_END ? e->code : 0);
		argv[3] = nx_string(env, e->reason ? e->reason : "");
		napi_call_function(env, global, js_cb, 4, argv, &result);
		bool pending = false;
		napi_is_exception_pending(env, &pending);
		if (pending) { /* the TS layer never throws here; do not leave one pending */
			napi_value ex;
			napi_get_and_clear_last_exception(env, &ex);
		}
	}
	event_free(e);
}

/* JS thread: the TSFN is gone (the reader released it, or the environment
 * is going away). */
static void tsfn_finalize(napi_env env, void *data, void *hint)
{
	(void)env;
	(void)hint;
	nx_stream *S = data;
	nx_obj_unref(S->client);
	S->client = NULL;
	stream_unref(S);
}

static void *reader_main(void *arg)
{
	nx_stream *S = arg;
	while (!atomic_load(&S->closing)) {
		char *m = NULL;
		s0_error *err = NULL;
		const char *why = NULL;
		int code = 0;
		pthread_mutex_lock(&S->mu);
		int rc = s0_stream_recv(S->st, READ_SLICE_MS, &m, NULL, &err);
		if (rc == S0_ITEROVER)
			code = s0_stream_close_code(S->st, &why);
		nx_event *e = rc == S0_ETIMEDOUT ? NULL : calloc(1, sizeof *e);
		if (e && rc == S0_ITEROVER)
			e->reason = strdup(why ? why : "");
		pthread_mutex_unlock(&S->mu);
		if (rc == S0_ETIMEDOUT) {
			s0_error_free(err);
			continue;
		}
		if (!e) {
			s0_free(m);
			s0_error_free(err);
			break;
		}
		if (rc == S0_OK) {
			e->type = EV_MESSAGE;
			e->json = m;
		} else if (rc == S0_ITEROVER) {
			e->type = EV_END;
			e->code = code;
			s0_error_free(err);
		} else {
			e->type = EV_ERROR;
			e->code = rc;
			e->err = err;
		}
		int type = e->type;
		if (napi_call_threadsafe_function(S->tsfn, e, napi_tsfn_nonblocking) != napi_ok) {
			event_free(e); /* the environment is going away */
			break;
		}
		if (type != EV_MESSAGE)
			break;
	}
	pthread_mutex_lock(&S->mu);
	s0_stream *st = S->st;
	S->st = NULL;
	pthread_mutex_unlock(&S->mu);
	s0_stream_free(st);
	napi_release_threadsafe_function(S->tsfn, napi_tsfn_release);
	stream_unref(S);
	return NULL;
}

/* ---- streamOpen(client, kind, sandboxId, id|null, after, onEvent) → Promise<handle> ---- */

static int run_open(nx_job *j)
{
	nx_stream *S = j->res;
	int rc = s0_stream_open((s0_client *)j->client->ptr, &S->opts, &S->st, &j->err);
	if (rc == S0_OK) {
		pthread_t th;
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		atomic_fetch_add(&S->refs, 1); /* the reader's */
		if (pthread_create(&th, &at, reader_main, S) != 0) {
			atomic_fetch_sub(&S->refs, 1);
			s0_stream_free(S->st);
			S->st = NULL;
			rc = S0_ENOMEM;
			j->err = s0_error_new(S0_ENOMEM, NULL, "cannot start the stream's reader thread");
		}
		pthread_attr_destroy(&at);
	}
	if (rc != S0_OK) /* no reader: nothing will use the TSFN */
		napi_release_threadsafe_function(S->tsfn, napi_tsfn_release);
	return rc;
}

static void external_finalize(napi_env env, void *data, void *hint)
{
	(void)env;
	(void)hint;
	nx_stream *S = data;
	atomic_store(&S->closing, true); /* an unreachable stream ends */
	stream_unref(S);
}

static napi_value done_open(napi_env env, nx_job *j)
{
	nx_stream *S = j->res;
	napi_value ext;
	atomic_fetch_add(&S->refs, 1);
	if (napi_create_external(env, S, external_finalize, NULL, &ext) != napi_ok) {
		atomic_store(&S->closing, true);
		stream_unref(S);
		return nx_throw_last(env);
	}
	napi_type_tag_object(env, ext, &stream_tag);
	return ext;
}

static void free_open(nx_job *j) { stream_unref(j->res); }

static napi_value js_stream_open(napi_env env, napi_callback_info info)
{
	napi_value argv[6];
	nx_job *j = nx_client_job(env, info, 6, argv, run_open, done_open, free_open);
	if (!j)
		return NULL;
	nx_stream *S = calloc(1, sizeof *S);
	int64_t kind = 0, after = 0;
	char *sb = NULL, *id = NULL;
	napi_valuetype t = napi_undefined;
	if (!S || !nx_i64(env, argv[1], 0, "kind", &kind) ||
	    !nx_str(env, argv[2], false, "sandboxId", &sb) || !nx_str(env, argv[3], true, "id", &id) ||
	    !nx_i64(env, argv[4], 0, "after", &after) || !argv[5] ||
	    napi_typeof(env, argv[5], &t) != napi_ok || t != napi_function) {
		free(S);
		free(sb);
		free(id);
		nx_job_discard(env, j);
		if (!S) {
			napi_throw_error(env, NULL, "out of memory");
			return NULL;
		}
		return t != napi_function ? nx_throw_type(env, "onEvent must be a function") : NULL;
	}
	pthread_mutex_init(&S->mu, NULL);
	s0_stream_options o = S0_STREAM_OPTIONS_INIT;
	o.kind = (int32_t)kind;
	o.sandbox_id = sb;
	o.id = id;
	o.after = after;
	S->opts = o;
	atomic_init(&S->refs, 2); /* the TSFN's and the open job's */
	napi_value name;
	if (napi_create_string_utf8(env, "sandbox0.stream", NAPI_AUTO_LENGTH, &name) != napi_ok ||
	    napi_create_threadsafe_function(env, argv[5], NULL, name, 0, 1, S, tsfn_finalize, NULL,
	                                    call_js, &S->tsfn) != napi_ok) {
		stream_unref(S);
		stream_unref(S);
		nx_job_discard(env, j);
		return nx_throw_last(env);
	}
	S->client = j->client;
	nx_obj_ref(S->client);
	j->res = S;
	napi_value promise = nx_job_submit(env, j);
	if (!promise) /* the job was freed (its reference on S with it): end the TSFN */
		napi_release_threadsafe_function(S->tsfn, napi_tsfn_release);
	return promise;
}

/* ---- the stream handle ---- */

static nx_stream *stream_get(napi_env env, napi_value v)
{
	napi_valuetype t;
	bool tagged = false;
	void *data = NULL;
	if (!v || napi_typeof(env, v, &t) != napi_ok || t != napi_external ||
	    napi_check_object_type_tag(env, v, &stream_tag, &tagged) != napi_ok || !tagged ||
	    napi_get_value_external(env, v, &data) != napi_ok || !data) {
		nx_throw_type(env, "stream must be a stream handle");
		return NULL;
	}
	return data;
}

/* streamSend(stream, json) → Promise<void> */
static int run_send(nx_job *j)
{
	nx_stream *S = j->res;
	int rc;
	pthread_mutex_lock(&S->mu);
	if (S->st && !atomic_load(&S->closing)) {
		rc = s0_stream_send(S->st, j->s[0], strlen(j->s[0]), &j->err);
	} else {
		rc = S0_EGONE;
		j->err = s0_error_new(S0_EGONE, "stream_closed", "the stream has ended");
	}
	pthread_mutex_unlock(&S->mu);
	return rc;
}

static void free_send(nx_job *j) { stream_unref(j->res); }

static napi_value js_stream_send(napi_env env, napi_callback_info info)
{
	napi_value argv[2];
	if (!nx_args(env, info, 2, argv))
		return NULL;
	nx_stream *S = stream_get(env, argv[0]);
	if (!S)
		return NULL;
	nx_job *j = nx_job_new(env, run_send, NULL, free_send);
	if (!j)
		return NULL;
	if (!nx_str(env, argv[1], false, "message", &j->s[0])) {
		nx_job_discard(env, j);
		return NULL;
	}
	atomic_fetch_add(&S->refs, 1);
	j->res = S;
	return nx_job_submit(env, j);
}

/* streamClose(stream): the reader stops within one slice; idempotent. */
static napi_value js_stream_close(napi_env env, napi_callback_info info)
{
	napi_value argv[1];
	if (!nx_args(env, info, 1, argv))
		return NULL;
	nx_stream *S = stream_get(env, argv[0]);
	if (!S)
		return NULL;
	atomic_store(&S->closing, true);
	return NULL;
}

bool nx_export_stream_ops(napi_env env, napi_value exports)
{
	return nx_export_define(env, exports, "streamOpen", js_stream_open) &&
	       nx_export_define(env, exports, "streamSend", js_stream_send) &&
	       nx_export_define(env, exports, "streamClose", js_stream_close);
}
