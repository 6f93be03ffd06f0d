/*
 * The context stream (docs/wire.md §8.2): `input` (written as-is, then the
 * output it made and `done` with its request id), `resize`, `signal`;
 * output by source in the order the process wrote it, and a terminal
 * `done` with exit_code and state when the process has exited and its
 * output is out. Output is read from a cursor (runtime.h
 * S0__RT_CTX_STREAM), so a slow reader only delays reads.
 */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/api/stream_int.h"

static const char *request_id_of(const cJSON *msg)
{
	const char *r = s0__json_str(msg, "request_id");
	return r ? r : s0__json_str(msg, "requestId");
}

static int emit_pending_dones(s0__stream *st, s0__smsgq *out);

/* Read output after the cursors into out (≤ room bytes); 1 when the process ended
 * and everything is out, 0 when more may come, or an error code (< 0) / close (> 0). */
static int read_output(s0__stream *st, size_t room, s0__smsgq *out, bool *drained)
{
	cJSON *body = cJSON_CreateObject();
	cJSON *cur = body ? cJSON_AddObjectToObject(body, "cursor") : NULL;
	int rc = cur ? 0 : -1;
	rc |= s0__json_add_i64(cur, "stdout", st->cur_out);
	rc |= s0__json_add_i64(cur, "stderr", st->cur_err);
	rc |= s0__json_add_i64(cur, "pty", st->cur_pty);
	rc |= s0__json_add_i64(body, "max", (int64_t)(room ? room : 1));
	if (rc) {
		cJSON_Delete(body);
		return -1;
	}
	cJSON *data = NULL;
	s0_error *err = NULL;
	rc = s0__stream_proc(st, S0__RT_CTX_STREAM, body, NULL, NULL, &data, &err);
	cJSON_Delete(body);
	if (rc < 0) {
		int code = s0_error_code(err);
		s0_error_free(err);
		if (code == S0_ENOMEM)
			return -1;
		st->reason = code == S0_ENOTFOUND && st->sandbox_changed ? "sandbox deleted"
		           : code == S0_ENOTFOUND                       ? "context deleted"
		                                                        : "sandbox paused";
		return S0__WS_GOING_AWAY;
	}
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(data, "output"), *it;
	rc = 0;
	cJSON_ArrayForEach(it, items) {
		cJSON *o = cJSON_CreateObject();
		int r = o ? 0 : -1;
		r |= s0__json_add_str(o, "type", "output");
		r |= s0__json_add_str(o, "source", s0__json_str0(it, "source"));
		r |= s0__json_add_str(o, "data", s0__json_str0(it, "data"));
		if (r) {
			cJSON_Delete(o);
			rc = -1;
		} else
			rc |= s0__stream_emit(out, o);
	}
	const cJSON *cur2 = cJSON_GetObjectItemCaseSensitive(data, "cursor");
	st->cur_out = s0__json_i64(cur2, "stdout", st->cur_out);
	st->cur_err = s0__json_i64(cur2, "stderr", st->cur_err);
	st->cur_pty = s0__json_i64(cur2, "pty", st->cur_pty);
	*drained = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(data, "drained"));
	bool running = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(data, "running"));
	if (!rc && !running && *drained) {
		rc = st->pending_done ? emit_pending_dones(st, out) : 0;
		cJSON *d = cJSON_CreateObject();
		int r = d ? 0 : -1;
		r |= s0__json_add_str(d, "type", "done");
		const cJSON *ec = cJSON_GetObjectItemCaseSensitive(data, "exit_code");
		if (cJSON_IsNumber(ec))
			r |= s0__json_add_i64(d, "exit_code", (int64_t)ec->valuedouble);
		r |= s0__json_add_str(d, "state", s0__json_str0(data, "state"));
		if (r || rc)
			cJSON_Delete(d);
		rc = r || rc ? -1 : s0__stream_emit(out, d);
		if (!rc) {
			st->reason = "process exited";
			rc = S0__WS_NORMAL;
		}
	}
	cJSON_Delete(data);
	return rc;
}

/* {"type":"done","request_id":rid} */
static int emit_done(s0__smsgq *out, const char *rid)
{
	cJSON *d = cJSON_CreateObject();
	int r = d ? 0 : -1;
	r |= s0__json_add_str(d, "type", "done");
	r |= s0__json_add_str(d, "request_id", rid);
	if (r) {
		cJSON_Delete(d);
		return -1;
	}
	return s0__stream_emit(out, d);
}

/* The dones of inputs whose output is now all out, in the order of the inputs. */
static int emit_pending_dones(s0__stream *st, s0__smsgq *out)
{
	const cJSON *it;
	int rc = 0;
	cJSON_ArrayForEach(it, st->pending_done) rc |= emit_done(out, it->valuestring);
	cJSON_Delete(st->pending_done);
	st->pending_done = NULL;
	return rc;
}

int s0__stream_ctx_pull(s0__stream *st, size_t room, s0__smsgq *out, int64_t *retry_ms)
{
	bool drained = false;
	int rc = read_output(st, room, out, &drained);
	if (rc)
		return rc;
	if (drained && st->pending_done && emit_pending_dones(st, out))
		return -1;
	if (!drained)
		st->kick(st->kick_arg); /* more than room: again when there is room */
	else
		*retry_ms = S0__STREAM_RETRY_MS; /* what (virtual) time brings */
	return 0;
}

int s0__stream_ctx_input(s0__stream *st, const cJSON *msg, s0__smsgq *out)
{
	static const char *const input_keys[] = {"data", NULL};
	static const char *const resize_keys[] = {"rows", "cols", NULL};
	static const char *const signal_keys[] = {"signal", NULL};
	const char *type = s0__json_str(msg, "type");
	const char *rid = request_id_of(msg);
	int op = !type                     ? -1
	       : !strcmp(type, "input")  ? S0__RT_CTX_INPUT
	       : !strcmp(type, "resize") ? S0__RT_CTX_RESIZE
	       : !strcmp(type, "signal") ? S0__RT_CTX_SIGNAL
	                                  : -1;
	if (op < 0)
		return s0__stream_emit_error(out, rid, "unknown message type: expected input, resize "
		                                       "or signal");
	const char *const *keys = op == S0__RT_CTX_INPUT    ? input_keys
	                        : op == S0__RT_CTX_RESIZE ? resize_keys
	                                                  : signal_keys;
	int rc = s0__stream_input_call(st, op, msg, keys, rid, out);
	if (rc <= 0)
		return rc;
	if (op != S0__RT_CTX_INPUT) { /* a signal may end the process: look soon */
		st->kick(st->kick_arg);
		return 0;
	}
	/* what the input made goes out before its done */
	bool drained = true;
	rc = read_output(st, S0__STREAM_QUEUE_MAX, out, &drained);
	if (rc)
		return rc; /* an error, or the process ended: its done went out */
	if (drained && st->pending_done && emit_pending_dones(st, out))
		return -1;
	if (!drained)
		st->kick(st->kick_arg);
	if (!rid)
		return 0;
	if (drained)
		return emit_done(out, rid);
	/* more than one queue's worth: its done goes out with the pull that
	 * drains it (an input sent meanwhile has its output after this one's;
	 * both dones follow) */
	if (!st->pending_done && !(st->pending_done = cJSON_CreateArray()))
		return -1;
	cJSON *s = cJSON_CreateString(rid);
	if (!s || !cJSON_AddItemToArray(st->pending_done, s)) {
		cJSON_Delete(s);
		return -1;
	}
	return 0;
}
