/*
 * S0__RT_CTX_STREAM of the simulated runtime (runtime.h): a context's output
 * read from a cursor, for the context WebSocket (docs/wire.md §8.2). The
 * output is the one GET shows — a cmd context's process output, a REPL's
 * /input output — so nothing is kept twice; a cursor past the end (a
 * restart cleared the output) starts again at 0.
 */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/runtime/sim/ctx_int.h"
#include "local/runtime/sim/sh_int.h"

typedef struct src {
	const char *name;
	const s0__buf *buf;
	uint64_t dropped; /* bytes gone from the buffer's front: offsets are dropped + index */
} src;

static int64_t cursor_of(const cJSON *body, const char *name)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(body, "cursor");
	const cJSON *v = cJSON_IsObject(c) ? cJSON_GetObjectItemCaseSensitive(c, name) : NULL;
	return cJSON_IsNumber(v) && v->valuedouble >= 0 ? (int64_t)v->valuedouble : 0;
}

/* Append up to *room bytes after absolute position *at as one output item;
 * bytes already dropped from the pipe are skipped (a reader that lags more
 * than the pipe holds loses the oldest, as a real pipe's reader would not —
 * the process would block — but nothing is ever repeated). */
static int take(cJSON *items, const src *s, int64_t *at, size_t *room)
{
	uint64_t base = s->dropped, end = base + s->buf->len, pos = (uint64_t)*at;
	if (pos > end)
		pos = base; /* cleared by a restart: from the start */
	if (pos < base)
		pos = base;
	size_t from = (size_t)(pos - base), avail = (size_t)(end - pos);
	size_t n = avail < *room ? avail : *room;
	const unsigned char *d = (const unsigned char *)s->buf->data + from;
	while (n < avail && n > 0 && (d[n] & 0xc0) == 0x80)
		n--; /* cut between UTF-8 characters: each message is valid text */
	*at = (int64_t)pos;
	if (!n)
		return 0;
	char *text = s0__strndup(s->buf->data + from, n);
	cJSON *it = cJSON_CreateObject();
	int rc = text && it ? 0 : -1;
	rc |= s0__json_add_str(it, "source", s->name);
	rc |= s0__json_add_str(it, "data", text ? text : "");
	free(text);
	if (rc || !cJSON_AddItemToArray(items, it)) {
		cJSON_Delete(it);
		return -1;
	}
	*at += (int64_t)n;
	*room -= n;
	return 0;
}

static cJSON *render(const s0__ctx *c, const s0__proc *p, const cJSON *body, size_t room)
{
	const s0__shout *o = c->type == S0__CTX_CMD && p ? &p->io : &c->last;
	src srcs[3];
	int n = 0;
	if (c->pty)
		srcs[n++] = (src){"pty", &o->raw, o->dropped_raw};
	else {
		srcs[n++] = (src){"stdout", &o->out, o->dropped_out};
		srcs[n++] = (src){"stderr", &o->err, o->dropped_err};
	}
	cJSON *r = cJSON_CreateObject();
	cJSON *items = r ? cJSON_AddArrayToObject(r, "output") : NULL;
	cJSON *cur = r ? cJSON_AddObjectToObject(r, "cursor") : NULL;
	int rc = items && cur ? 0 : -1;
	bool drained = true;
	for (int i = 0; i < n && !rc; i++) {
		int64_t at = cursor_of(body, srcs[i].name);
		rc |= take(items, &srcs[i], &at, &room);
		rc |= s0__json_add_i64(cur, srcs[i].name, at);
		drained = drained && (uint64_t)at >= srcs[i].dropped + srcs[i].buf->len;
	}
	bool ended = !p || p->ended;
	rc |= s0__json_add_bool(r, "running", !ended);
	rc |= s0__json_add_bool(r, "drained", drained);
	if (ended && p) {
		rc |= s0__json_add_i64(r, "exit_code", p->exit_code);
		rc |= s0__json_add_str(r, "state", s0__proc_state_name(p->state));
	}
	if (rc) {
		cJSON_Delete(r);
		return NULL;
	}
	return r;
}

int s0__ctx_stream_json(s0__guest *g, const char *id, const cJSON *body, cJSON **data_out,
                        s0_error **err)
{
	const cJSON *mx = cJSON_IsObject(body) ? cJSON_GetObjectItemCaseSensitive(body, "max") : NULL;
	size_t room = cJSON_IsNumber(mx) && mx->valuedouble >= 1 ? (size_t)mx->valuedouble
	                                                         : (size_t)64 << 10;
	pthread_mutex_lock(&g->mu);
	s0__ctx *c = s0__ctx_find(g, id, err);
	cJSON *data = c ? render(c, s0__gproc_find(g, c->pid), body, room) : NULL;
	pthread_mutex_unlock(&g->mu);
	if (!c)
		return S0_ENOTFOUND;
	if (!data)
		return s0__error_nomem(err);
	*data_out = data;
	return S0_OK;
}
