/* Streams (stream.h): opening, dispatch by kind. */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/api/fwdstream.h"
#include "local/api/router.h"
#include "local/api/stream_int.h"

int s0__stream_emit(s0__smsgq *out, cJSON *o)
{
	char *raw = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	/* a text message is UTF-8: a program's bytes or a file name that are not
	 * would make the client fail the connection (U+FFFD for each such byte) */
	char *text = raw ? s0__utf8_valid_copy(raw) : NULL;
	free(raw);
	int rc = text ? s0__smsgq_push(out, text, strlen(text)) : -1;
	free(text);
	return rc;
}

int s0__stream_emit_error(s0__smsgq *out, const char *request_id, const char *msg)
{
	cJSON *o = cJSON_CreateObject();
	int rc = o ? 0 : -1;
	rc |= s0__json_add_str(o, "type", "error");
	if (request_id)
		rc |= s0__json_add_str(o, "request_id", request_id);
	rc |= s0__json_add_str(o, "error", msg);
	if (rc) {
		cJSON_Delete(o);
		return -1;
	}
	return s0__stream_emit(out, o);
}

/* A new object with a deep copy of each member of msg named in keys. */
static cJSON *body_of(const cJSON *msg, const char *const *keys)
{
	cJSON *b = cJSON_CreateObject();
	for (size_t i = 0; b && keys[i]; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(msg, keys[i]);
		if (v && !cJSON_AddItemToObject(b, keys[i], cJSON_Duplicate(v, true))) {
			cJSON_Delete(b);
			return NULL;
		}
	}
	return b;
}

int s0__stream_proc(s0__stream *st, int op, const cJSON *body, const char *after,
                    const char *limit, cJSON **data, s0_error **err)
{
	s0__runtime_access *acc;
	int rc = s0__engine_runtime_pin_running(st->e, st->team, st->sandbox, &acc, err);
	if (rc < 0)
		return rc;
	s0__rt_proc_call call = {.op = op, .id = st->id2, .body = body, .after = after,
	                         .limit = limit};
	int status = 200;
	rc = s0__runtime_access_proc(acc, &call, data, &status, err);
	s0__engine_runtime_end(acc);
	return rc;
}

static void on_sandbox_change(void *arg, const char *sandbox_id, uint64_t version)
{
	(void)sandbox_id;
	(void)version;
	s0__stream *st = arg;
	pthread_mutex_lock(&st->mu);
	st->sandbox_changed = true;
	pthread_mutex_unlock(&st->mu);
	st->kick(st->kick_arg);
}

int s0__stream_input_call(s0__stream *st, int op, const cJSON *msg, const char *const *keys,
                          const char *rid, s0__smsgq *out)
{
	cJSON *body = body_of(msg, keys);
	if (!body)
		return -1;
	cJSON *data = NULL;
	s0_error *err = NULL;
	int rc = s0__stream_proc(st, op, body, NULL, NULL, &data, &err);
	cJSON_Delete(body);
	cJSON_Delete(data);
	if (rc < 0) {
		rc = s0__stream_emit_error(out, rid, s0_error_message(err));
		s0_error_free(err);
		return rc;
	}
	return 1;
}

int s0__stream_check_sandbox(s0__stream *st)
{
	pthread_mutex_lock(&st->mu);
	bool changed = st->sandbox_changed;
	st->sandbox_changed = false;
	pthread_mutex_unlock(&st->mu);
	if (!changed)
		return 0;
	s0__sandbox_rec rec = {0};
	int rc = s0__engine_get(st->e, st->team, st->sandbox, &rec, NULL);
	bool runs = rc == S0_OK && rec.status == S0_STATUS_RUNNING && !rec.paused;
	int status = rc == S0_OK ? rec.status : -1;
	s0__sandbox_rec_clear(&rec);
	if (runs)
		return 0;
	/* a pause on its way reads starting or running-without-runtime until it commits */
	st->reason = rc == S0_ENOTFOUND || status == S0_STATUS_TERMINATING ? "sandbox deleted"
	           : status == S0_STATUS_FAILED                           ? "sandbox failed"
	                                                                  : "sandbox paused";
	return S0__WS_GOING_AWAY;
}

/* Reach the sandbox as a runtime call does (waking it) and check the target exists. */
static int reach(s0__stream *st, int64_t budget, s0_error **err)
{
	s0__runtime_access *acc;
	int rc = s0__engine_runtime_begin(st->e, st->team, st->sandbox, budget, &acc, err);
	if (rc < 0)
		return rc;
	cJSON *data = NULL;
	int status = 200;
	cJSON *probe = NULL; /* a context: a read of no bytes (GET would render all its output) */
	if (st->kind == S0__STREAM_CONTEXT && !(probe = cJSON_Parse("{\"max\":1,\"cursor\":{}}")))
		rc = s0__error_nomem(err);
	if (rc == S0_OK && st->kind != S0__STREAM_WATCH) {
		s0__rt_proc_call call = {.op = st->kind == S0__STREAM_CONTEXT ? S0__RT_CTX_STREAM
		                                                               : S0__RT_SES_GET,
		                         .id = st->id2, .body = probe};
		rc = s0__runtime_access_proc(acc, &call, &data, &status, err);
	}
	cJSON_Delete(probe);
	s0__engine_runtime_end(acc);
	cJSON_Delete(data);
	return rc;
}

int s0__stream_open(s0__engine *e, const s0__stream_open_req *req, s0__stream_kick_fn kick,
                    void *kick_arg, s0__stream **out, s0_error **err)
{
	if (!req || !req->team || !req->sandbox_id || !kick || !out ||
	    strlen(req->team) >= S0__ID_MAX || strlen(req->sandbox_id) >= S0__ID_MAX ||
	    (req->kind != S0__STREAM_WATCH && (!req->id2 || strlen(req->id2) >= 256)))
		return s0__error_set(err, S0_ENOTFOUND, "not_found", "not found");
	s0__stream *st = calloc(1, sizeof *st);
	if (!st)
		return s0__error_nomem(err);
	st->e = e;
	st->kind = req->kind;
	s0__strlcpy(st->team, req->team, sizeof st->team);
	s0__strlcpy(st->sandbox, req->sandbox_id, sizeof st->sandbox);
	s0__strlcpy(st->id2, req->id2 ? req->id2 : "", sizeof st->id2);
	st->kick = kick;
	st->kick_arg = kick_arg;
	st->reason = "";
	pthread_mutex_init(&st->mu, NULL);
	int rc = reach(st, req->wake_budget_ms, err);
	if (rc == S0_OK && st->kind == S0__STREAM_SESSION)
		rc = s0__stream_ses_open(st, req->after, err);
	if (rc == S0_OK && st->kind == S0__STREAM_WATCH)
		rc = s0__stream_watch_open(st, err);
	if (rc == S0_OK &&
	    s0__engine_watch_subscribe(s0__engine_watch_of(e), st->sandbox, on_sandbox_change, st,
	                               &st->sub) < 0)
		rc = s0__error_nomem(err);
	if (rc < 0) {
		s0__stream_free(st);
		return rc;
	}
	*out = st;
	return S0_OK;
}

int s0__stream_input(s0__stream *st, const char *text, size_t len, s0__smsgq *out)
{
	if (st->remote)
		return s0__rstream_input(st, text, len, out);
	/* what cJSON would take silently (a \u0000 cuts a path or an input short) */
	const char *bad = s0__json_check(text, len, S0__ROUTER_JSON_DEPTH_MAX);
	cJSON *msg = bad ? NULL : cJSON_ParseWithLength(text, len);
	if (!cJSON_IsObject(msg)) {
		cJSON_Delete(msg);
		st->reason = bad ? bad : "a message must be a JSON object";
		return S0__WS_BAD_DATA;
	}
	int rc = st->kind == S0__STREAM_CONTEXT ? s0__stream_ctx_input(st, msg, out)
	       : st->kind == S0__STREAM_SESSION ? s0__stream_ses_input(st, msg, out)
	                                        : s0__stream_watch_input(st, msg, out);
	cJSON_Delete(msg);
	if (rc < 0) {
		st->reason = "out of memory";
		return S0__WS_ERROR;
	}
	return rc;
}

int s0__stream_pull(s0__stream *st, size_t room, s0__smsgq *out, int64_t *retry_ms)
{
	*retry_ms = 0;
	if (st->remote)
		return s0__rstream_pull(st, room, out);
	int rc = s0__stream_check_sandbox(st);
	if (rc)
		return rc;
	rc = st->kind == S0__STREAM_CONTEXT ? s0__stream_ctx_pull(st, room, out, retry_ms)
	   : st->kind == S0__STREAM_SESSION ? s0__stream_ses_pull(st, room, out, retry_ms)
	                                    : s0__stream_watch_pull(st, room, out, retry_ms);
	if (rc < 0) {
		st->reason = "out of memory";
		return S0__WS_ERROR;
	}
	return rc;
}

const char *s0__stream_close_reason(const s0__stream *st)
{
	return st && st->reason ? st->reason : "";
}

void s0__stream_free(s0__stream *st)
{
	if (!st)
		return;
	if (st->remote)
		s0__rstream_free(st->remote);
	if (st->sub)
		s0__engine_watch_unsubscribe(s0__engine_watch_of(st->e), st->sub);
	s0__stream_watch_free(st);
	cJSON_Delete(st->pending_done);
	pthread_mutex_destroy(&st->mu);
	free(st);
}
