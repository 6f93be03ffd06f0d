/*
 * The session attach stream (docs/wire.md §8.2): the journal's events after
 * the `after` cursor, then live ones as `{"type":"event","event":…}`;
 * `input`, `signal` and `resize` answered with `ack` or `error` by request
 * id. Events are read in pages from the journal (runtime.h
 * S0__RT_SES_EVENTS), so replay and live use one path and a slow reader
 * only delays reads.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/api/stream_int.h"

#define PAGE 200

static int events_page(s0__stream *st, int64_t after, const char *limit, cJSON **data,
                       s0_error **err)
{
	char a[32];
	snprintf(a, sizeof a, "%" PRId64, after);
	return s0__stream_proc(st, S0__RT_SES_EVENTS, NULL, a, limit, data, err);
}

int s0__stream_ses_open(s0__stream *st, const char *after, s0_error **err)
{
	int64_t v = 0;
	if (after && *after) {
		char *end = NULL;
		long long x = strtoll(after, &end, 10);
		if (*end || x < 0)
			return s0__error_set(err, S0_EINVAL, "invalid_request",
			                     "after must be a non-negative integer");
		v = x;
	}
	st->after = v;
	cJSON *data = NULL; /* an expired cursor is answered before the upgrade */
	int rc = events_page(st, v, "1", &data, err);
	cJSON_Delete(data);
	return rc;
}

int s0__stream_ses_pull(s0__stream *st, size_t room, s0__smsgq *out, int64_t *retry_ms)
{
	cJSON *data = NULL;
	s0_error *err = NULL;
	char limit[16];
	snprintf(limit, sizeof limit, "%d", PAGE);
	int rc = events_page(st, st->after, limit, &data, &err);
	if (rc < 0) {
		int code = s0_error_code(err);
		s0_error_free(err);
		if (code == S0_ENOMEM)
			return -1;
		st->reason = code == S0_EGONE       ? "event cursor expired"
		           : code == S0_ENOTFOUND ? "session deleted"
		                                  : "sandbox paused";
		return code == S0_EGONE ? S0__WS_ERROR : S0__WS_GOING_AWAY;
	}
	const cJSON *events = cJSON_GetObjectItemCaseSensitive(data, "events"), *ev;
	int n = 0;
	bool full = false;
	rc = 0;
	cJSON_ArrayForEach(ev, events) {
		if (out->bytes >= room) {
			full = true;
			break;
		}
		cJSON *o = cJSON_CreateObject();
		int r = o ? 0 : -1;
		r |= s0__json_add_str(o, "type", "event");
		if (!r && !cJSON_AddItemToObject(o, "event", cJSON_Duplicate(ev, true)))
			r = -1;
		if (r) {
			cJSON_Delete(o);
			rc = -1;
			break;
		}
		if ((rc = s0__stream_emit(out, o)) < 0)
			break;
		st->after = s0__json_i64(ev, "seq", st->after);
		n++;
	}
	cJSON_Delete(data);
	if (rc < 0)
		return rc;
	if (full || n == PAGE)
		st->kick(st->kick_arg); /* a backlog: the next page when there is room */
	else
		*retry_ms = S0__STREAM_RETRY_MS;
	return 0;
}

static int ack(s0__smsgq *out, const char *rid)
{
	cJSON *o = cJSON_CreateObject();
	int r = o ? 0 : -1;
	r |= s0__json_add_str(o, "type", "ack");
	if (rid)
		r |= s0__json_add_str(o, "request_id", rid);
	if (r) {
		cJSON_Delete(o);
		return -1;
	}
	return s0__stream_emit(out, o);
}

int s0__stream_ses_input(s0__stream *st, const cJSON *msg, s0__smsgq *out)
{
	static const char *const input_keys[] = {"input_id", "expected_attempt_id", "data_base64",
	                                         "eof", NULL};
	static const char *const signal_keys[] = {"signal", "expected_attempt_id", NULL};
	static const char *const resize_keys[] = {"rows", "cols", "expected_attempt_id", NULL};
	const char *type = s0__json_str(msg, "type");
	const char *rid = s0__json_str(msg, "request_id");
	int op = !type                     ? -1
	       : !strcmp(type, "input")  ? S0__RT_SES_INPUT
	       : !strcmp(type, "signal") ? S0__RT_SES_SIGNAL
	       : !strcmp(type, "resize") ? S0__RT_SES_TERMINAL
	                                  : -1;
	if (op < 0)
		return s0__stream_emit_error(out, rid, "unknown message type: expected input, signal "
		                                       "or resize");
	const char *const *keys = op == S0__RT_SES_INPUT    ? input_keys
	                        : op == S0__RT_SES_SIGNAL ? signal_keys
	                                                  : resize_keys;
	int rc = s0__stream_input_call(st, op, msg, keys, rid, out);
	if (rc <= 0)
		return rc;
	st->kick(st->kick_arg); /* its events */
	return ack(out, rid);
}
