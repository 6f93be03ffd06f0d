/*
 * S0__RT_CTX_STREAM of the gvisor runtime (runtime.h; gv_int.h): a
 * context's output read from a cursor, for the context WebSocket
 * (docs/wire.md §8.2), in the simulated runtime's shape (sim/contexts.h
 * s0__ctx_stream_json): `{output: [{source, data}…], cursor: {stdout,
 * stderr}, running, drained, exit_code?, state?}`. A cmd context's output
 * is its process's, kept whole; a REPL's is its transcript, every exec's
 * output (stream inputs and run calls alike) in order, its last 1 MiB kept
 * per source. A cursor is a byte offset from the first byte; one past the
 * end (a restart cleared the output) starts again at the oldest byte kept.
 */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/runtime/gvisor/gv_int.h"

static int64_t cursor_of(const cJSON *body, const char *name)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(body, "cursor");
	const cJSON *v = cJSON_IsObject(c) ? cJSON_GetObjectItemCaseSensitive(c, name) : NULL;
	return cJSON_IsNumber(v) && v->valuedouble >= 0 ? (int64_t)v->valuedouble : 0;
}

/** The bytes of a REPL transcript kept per source. */
#define LOG_KEEP ((size_t)1 << 20)

int s0__gv_ctx_log_add(s0__buf *log, int64_t *base, const char *data, size_t len)
{
	if (len && s0__buf_put(log, data, len) < 0)
		return S0_ENOMEM;
	if (log->len <= LOG_KEEP)
		return S0_OK;
	size_t drop = log->len - LOG_KEEP;
	while (drop < log->len && ((unsigned char)log->data[drop] & 0xc0) == 0x80)
		drop++;
	memmove(log->data, log->data + drop, log->len - drop);
	log->len -= drop;
	*base += (int64_t)drop;
	return S0_OK;
}

/* Up to *room bytes of @p b (its first byte at offset @p base) after *at
 * as one item (cut between UTF-8 characters); *at moves past them. */
static int take(cJSON *items, const char *name, const s0__buf *b, int64_t base, int64_t *at,
                size_t *room)
{
	size_t pos = *at >= base && (size_t)(*at - base) <= b->len ? (size_t)(*at - base) : 0;
	size_t avail = b->len - pos, n = avail < *room ? avail : *room;
	const unsigned char *d = (const unsigned char *)b->data + pos;
	while (n < avail && n > 0 && (d[n] & 0xc0) == 0x80)
		n--;
	*at = base + (int64_t)pos;
	if (!n)
		return 0;
	char *text = s0__strndup((const char *)d, n);
	cJSON *it = cJSON_CreateObject();
	int rc = text && it ? 0 : -1;
	rc |= s0__json_add_str(it, "source", name) | s0__json_add_str(it, "data", text ? text : "");
	free(text);
	if (rc || !cJSON_AddItemToArray(items, it)) {
		cJSON_Delete(it);
		return -1;
	}
	*at += (int64_t)n;
	*room -= n;
	return 0;
}

cJSON *s0__gv_ctx_stream_render(const s0__buf *out, const s0__buf *err, const int64_t *base,
                                const cJSON *body, bool ended, int exit_code, const char *state)
{
	const cJSON *mx = cJSON_IsObject(body) ? cJSON_GetObjectItemCaseSensitive(body, "max") : NULL;
	size_t room = cJSON_IsNumber(mx) && mx->valuedouble >= 1 ? (size_t)mx->valuedouble
	                                                         : (size_t)64 << 10;
	cJSON *r = cJSON_CreateObject();
	cJSON *items = r ? cJSON_AddArrayToObject(r, "output") : NULL;
	cJSON *cur = r ? cJSON_AddObjectToObject(r, "cursor") : NULL;
	int rc = items && cur ? 0 : -1;
	const char *names[] = {"stdout", "stderr"};
	const s0__buf *bufs[] = {out, err};
	bool drained = true;
	for (int i = 0; i < 2 && !rc; i++) {
		int64_t at = cursor_of(body, names[i]);
		int64_t b0 = base ? base[i] : 0;
		rc |= take(items, names[i], bufs[i], b0, &at, &room);
		rc |= s0__json_add_i64(cur, names[i], at);
		drained = drained && at >= b0 + (int64_t)bufs[i]->len;
	}
	rc |= s0__json_add_bool(r, "running", !ended) | s0__json_add_bool(r, "drained", drained);
	if (ended)
		rc |= s0__json_add_i64(r, "exit_code", exit_code) | s0__json_add_str(r, "state", state);
	if (rc) {
		cJSON_Delete(r);
		return NULL;
	}
	return r;
}
