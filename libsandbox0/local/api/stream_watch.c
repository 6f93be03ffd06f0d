/*
 * The file watch stream (docs/wire.md §8.2, the Watch row of the API):
 * `{"action":"subscribe","path":…,"recursive":bool}` answered with
 * `subscribed` and a watch id, `{"action":"unsubscribe","watch_id":…}` with
 * `unsubscribed` (at most WATCHES_MAX watches at once, past them an `error`);
 * then `{"type":"event","watch_id","event","path"}` for
 * every change under a watched path (the path itself and its children; every
 * descendant when recursive), made through the files API or by the guest.
 * Events wait in a bounded queue: when a slow reader lets it fill, what is
 * queued is dropped and each watch gets one `invalidate` (re-read the tree).
 * A pause ends the stream (1001 "sandbox paused"); after the resume the
 * client subscribes again on a new connection.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/api/stream_int.h"
#include "local/rootfs/path.h"

/* The most watches one stream holds: each costs memory and every change is
 * matched against all of them, so a subscribe flood is refused past it. */
#define WATCHES_MAX 1024

typedef struct wentry {
	struct wentry *next;
	char id[24];
	char *path; /* canonical */
	bool recursive;
} wentry;

struct s0__watchset {
	s0__engine_watch_sub *sub; /* only while list has a watch (the runtime watches as long:
	                            * gvisor's inotify), input thread only */
	wentry *list;  /* under st->mu */
	int next_id;
	size_t n; /* watches in list (under st->mu) */
	s0__smsgq pending; /* events not yet pulled (under st->mu) */
	bool overflow;     /* pending was dropped (under st->mu) */
};

static bool matches(const wentry *w, const char *path)
{
	if (w->recursive)
		return s0__path_is_under(path, w->path);
	if (!strcmp(path, w->path))
		return true;
	const char *slash = strrchr(path, '/');
	size_t plen = slash == path ? 1 : (size_t)(slash - path);
	return slash && strlen(w->path) == plen && !strncmp(path, w->path, plen);
}

static cJSON *event_json(const char *watch_id, const char *event, const char *path)
{
	cJSON *o = cJSON_CreateObject();
	int rc = o ? 0 : -1;
	rc |= s0__json_add_str(o, "type", "event");
	rc |= s0__json_add_str(o, "watch_id", watch_id);
	rc |= s0__json_add_str(o, "event", event);
	rc |= s0__json_add_str(o, "path", path);
	if (rc) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* The engine's file change (any thread, the watch's lock held). */
static void on_file(void *arg, const char *event, const char *path)
{
	s0__stream *st = arg;
	s0__watchset *ws = st->watches;
	bool any = false;
	pthread_mutex_lock(&st->mu);
	if (!strcmp(event, "invalidate") && ws->list) { /* the runtime lost events: every watch */
		s0__smsgq_clear(&ws->pending);
		ws->overflow = any = true;
	}
	for (wentry *w = ws->list; w && !ws->overflow; w = w->next) {
		if (!matches(w, path))
			continue;
		any = true;
		if (s0__stream_emit(&ws->pending, event_json(w->id, event, path)) < 0 ||
		    ws->pending.bytes > S0__STREAM_QUEUE_MAX) {
			s0__smsgq_clear(&ws->pending);
			ws->overflow = true;
		}
	}
	pthread_mutex_unlock(&st->mu);
	if (any)
		st->kick(st->kick_arg);
}

int s0__stream_watch_open(s0__stream *st, s0_error **err)
{
	st->watches = calloc(1, sizeof *st->watches);
	return st->watches ? S0_OK : s0__error_nomem(err);
}

void s0__stream_watch_free(s0__stream *st)
{
	s0__watchset *ws = st->watches;
	if (!ws)
		return;
	s0__engine_watch_unsubscribe(s0__engine_watch_of(st->e), ws->sub);
	while (ws->list) {
		wentry *w = ws->list;
		ws->list = w->next;
		free(w->path);
		free(w);
	}
	s0__smsgq_clear(&ws->pending);
	free(ws);
	st->watches = NULL;
}

int s0__stream_watch_pull(s0__stream *st, size_t room, s0__smsgq *out, int64_t *retry_ms)
{
	(void)retry_ms; /* events come by kick */
	s0__watchset *ws = st->watches;
	int rc = 0;
	pthread_mutex_lock(&st->mu);
	s0__smsg *m;
	while (out->bytes < room && (m = s0__smsgq_pop(&ws->pending))) {
		rc |= s0__smsgq_push(out, m->data, m->len);
		free(m);
	}
	bool more = ws->pending.count > 0;
	if (ws->overflow) {
		ws->overflow = false;
		for (wentry *w = ws->list; w; w = w->next)
			rc |= s0__stream_emit(out, event_json(w->id, "invalidate", w->path));
	}
	pthread_mutex_unlock(&st->mu);
	if (more)
		st->kick(st->kick_arg);
	return rc ? -1 : 0;
}

static int reply(s0__smsgq *out, const char *type, const char *id, const char *path)
{
	cJSON *o = cJSON_CreateObject();
	int rc = o ? 0 : -1;
	rc |= s0__json_add_str(o, "type", type);
	rc |= s0__json_add_str(o, "watch_id", id);
	if (path)
		rc |= s0__json_add_str(o, "path", path);
	if (rc) {
		cJSON_Delete(o);
		return -1;
	}
	return s0__stream_emit(out, o);
}

/* The path must exist in the running sandbox (as inotify_add_watch needs). */
static int check_exists(s0__stream *st, const char *path, s0_error **err)
{
	s0__runtime_access *acc;
	int rc = s0__engine_runtime_pin_running(st->e, st->team, st->sandbox, &acc, err);
	if (rc < 0)
		return rc;
	s0__fileinfo *fi = NULL;
	rc = s0__files_stat(s0__runtime_access_files(acc), path, strlen(path), &fi, err);
	s0__fileinfo_free(fi);
	s0__engine_runtime_end(acc);
	return rc;
}

static int subscribe(s0__stream *st, const cJSON *msg, s0__smsgq *out)
{
	s0__watchset *ws = st->watches;
	const char *path = s0__json_str(msg, "path");
	const cJSON *rec = cJSON_GetObjectItemCaseSensitive(msg, "recursive");
	char *norm = NULL;
	s0_error *err = NULL;
	pthread_mutex_lock(&st->mu); /* one input at a time: the count holds until the add */
	bool full = ws->n >= WATCHES_MAX;
	pthread_mutex_unlock(&st->mu);
	int rc = full ? s0__error_set(&err, S0_EINVAL, "invalid_request",
	                              "too many watches on this stream (at most %d)", WATCHES_MAX)
	         : !path || !*path ? s0__error_set(&err, S0_EINVAL, "invalid_request",
	                                           "path is required")
	         : rec && !cJSON_IsBool(rec)
	             ? s0__error_set(&err, S0_EINVAL, "invalid_request", "recursive must be a boolean")
	             : s0__path_normalize(path, strlen(path), 0, &norm, &err);
	if (rc == S0_OK)
		rc = check_exists(st, norm, &err);
	wentry *w = rc == S0_OK ? calloc(1, sizeof *w) : NULL;
	if (rc == S0_OK && !w)
		rc = s0__error_nomem(&err);
	if (rc < 0) {
		free(norm);
		rc = rc == S0_ENOMEM ? -1 : s0__stream_emit_error(out, NULL, s0_error_message(err));
		s0_error_free(err);
		return rc;
	}
	w->path = norm;
	w->recursive = cJSON_IsTrue(rec);
	if (!ws->sub && s0__engine_watch_files_subscribe(s0__engine_watch_of(st->e), st->sandbox,
	                                                 on_file, st, &ws->sub) < 0) {
		free(norm);
		free(w);
		return -1;
	}
	pthread_mutex_lock(&st->mu);
	snprintf(w->id, sizeof w->id, "w%d", ++ws->next_id);
	w->next = ws->list;
	ws->list = w;
	ws->n++;
	pthread_mutex_unlock(&st->mu);
	return reply(out, "subscribed", w->id, norm);
}

static int unsubscribe(s0__stream *st, const cJSON *msg, s0__smsgq *out)
{
	s0__watchset *ws = st->watches;
	const char *id = s0__json_str(msg, "watch_id");
	wentry *gone = NULL;
	pthread_mutex_lock(&st->mu);
	for (wentry **p = &ws->list; id && *p; p = &(*p)->next)
		if (!strcmp((*p)->id, id)) {
			gone = *p;
			*p = gone->next;
			ws->n--;
			break;
		}
	bool none = !ws->list;
	pthread_mutex_unlock(&st->mu);
	if (!gone)
		return s0__stream_emit_error(out, NULL, "unknown watch_id");
	if (none) { /* the last one: the runtime may stop watching (outside st->mu: on_file's order) */
		s0__engine_watch_unsubscribe(s0__engine_watch_of(st->e), ws->sub);
		ws->sub = NULL;
	}
	int rc = reply(out, "unsubscribed", gone->id, NULL);
	free(gone->path);
	free(gone);
	return rc;
}

int s0__stream_watch_input(s0__stream *st, const cJSON *msg, s0__smsgq *out)
{
	const char *action = s0__json_str(msg, "action");
	if (action && !strcmp(action, "subscribe"))
		return subscribe(st, msg, out);
	if (action && !strcmp(action, "unsubscribe"))
		return unsubscribe(st, msg, out);
	return s0__stream_emit_error(out, NULL,
	                             "unknown action: expected subscribe or unsubscribe");
}
