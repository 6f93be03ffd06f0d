/* The event journal of a session: seq, retention, cursor (sessions.h). */
#include "local/runtime/sim/ses_int.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"

static char *b64(const void *data, size_t len)
{
	size_t n = sodium_base64_encoded_len(len, sodium_base64_VARIANT_ORIGINAL);
	char *s = malloc(n);
	if (s)
		sodium_bin2base64(s, n, data, len, sodium_base64_VARIANT_ORIGINAL);
	return s;
}

static char *event_json(const ses *x, int64_t seq, int64_t gen, const char *type,
                        const char *stream, const void *data, size_t len,
                        const int32_t *exit_code, const char *reason, int64_t at)
{
	cJSON *o = cJSON_CreateObject();
	char ts[40], *d = data ? b64(data, len) : NULL;
	s0__time_format_rfc3339(at, ts, sizeof ts);
	int rc = !o || (data && !d);
	if (!rc) {
		rc |= s0__json_add_i64(o, "seq", seq);
		rc |= s0__json_add_str(o, "session_id", x->id);
		rc |= s0__json_add_i64(o, "runtime_generation", gen);
		if (x->has_attempt)
			rc |= s0__json_add_str(o, "attempt_id", x->att.id);
		rc |= s0__json_add_str(o, "type", type);
		if (stream)
			rc |= s0__json_add_str(o, "stream", stream);
		if (d)
			rc |= s0__json_add_str(o, "data_base64", d);
		if (exit_code)
			rc |= s0__json_add_i64(o, "exit_code", *exit_code);
		if (reason)
			rc |= s0__json_add_str(o, "reason", reason);
		rc |= s0__json_add_str(o, "occurred_at", ts);
	}
	char *text = rc ? NULL : cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	free(d);
	return text;
}

void s0__ses_cursor(const ses *x, int64_t *earliest, int64_t *latest)
{
	*latest = x->next_seq - 1;
	*earliest = x->nev ? x->ev[0].seq : x->next_seq;
}

static void drop_first(ses *x, size_t k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k; i++) {
		x->ev_bytes -= x->ev[i].bytes;
		free(x->ev[i].json);
	}
	memmove(x->ev, x->ev + k, (x->nev - k) * sizeof *x->ev);
	x->nev -= k;
}

void s0__ses_retain(s0__sessions *s, ses *x)
{
	int64_t now = s0__ses_now(s), max_age = x->spec.keep_age_s * 1000;
	size_t k = 0;
	size_t bytes = x->ev_bytes;
	while (k < x->nev && ((int64_t)bytes > x->spec.keep_bytes || now - x->ev[k].at_ms > max_age)) {
		bytes -= x->ev[k].bytes;
		k++;
	}
	if (k)
		drop_first(x, k);
}

void s0__ses_event(s0__sessions *s, ses *x, const char *type, const char *stream,
                   const void *data, size_t len, const int32_t *exit_code, const char *reason)
{
	int64_t at = s0__ses_now(s), seq = x->next_seq;
	char *json = event_json(x, seq, s->generation, type, stream, data, len, exit_code, reason, at);
	if (!json)
		return; /* out of memory: the event is lost, the seq is not used */
	if (x->nev == x->capev) {
		size_t cap = x->capev ? x->capev * 2 : 16;
		ses_event *v = realloc(x->ev, cap * sizeof *v);
		if (!v) {
			free(json);
			return;
		}
		x->ev = v;
		x->capev = cap;
	}
	size_t bytes = strlen(json);
	x->ev[x->nev++] = (ses_event){.seq = seq, .at_ms = at, .json = json, .bytes = bytes};
	x->ev_bytes += bytes;
	x->next_seq++;
	x->activity_ms = at;
	if (s->sink.event)
		s->sink.event(s->sink.payload, x->id, seq, json);
	s0__ses_retain(s, x);
}

void s0__ses_events_free(ses *x)
{
	drop_first(x, x->nev);
	free(x->ev);
	x->ev = NULL;
	x->capev = 0;
}
