/*
 * Forwarded streams, the owner's side (fwdstream.h): streams opened over the
 * node channel for another node's client, kept in a registry by a random id,
 * pulled in batches of at most the asker's room (so what waits here is
 * bounded by S0__STREAM_QUEUE_MAX) and dropped when nobody pulls for
 * S0__FWDSTREAM_IDLE_MS.
 */
#include <pthread.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/json.h"
#include "local/api/fwdstream.h"
#include "local/api/stream_route.h"

#define SEG "/node-streams"

typedef struct fwd {
	struct fwd *next;
	char id[33];
	char team[S0__ID_MAX];
	s0__stream *st;
	pthread_mutex_t drive; /* one driver at a time (stream.h) */
	/* under reg.mu */
	bool kicked;
	int64_t retry_at, seen_ms;
	int refs; /* the registry + calls in flight */
} fwd;

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;       /* CLOCK_MONOTONIC; any kick */
	pthread_cond_t reaper_cv; /* CLOCK_MONOTONIC; only the reaper's time */
	fwd *head;
	bool reaper; /* a reaper thread runs (while the registry is not empty) */
} reg = {.mu = PTHREAD_MUTEX_INITIALIZER};
static pthread_once_t reg_once = PTHREAD_ONCE_INIT;

static void reg_init(void)
{
	pthread_condattr_t a;
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&reg.cv, &a);
	pthread_cond_init(&reg.reaper_cv, &a);
	pthread_condattr_destroy(&a);
}

bool s0__fwdstream_is_route(const char *path)
{
	static const char prefix[] = "/api/v1/sandboxes/";
	if (strncmp(path, prefix, sizeof prefix - 1))
		return false;
	const char *s = strchr(path + sizeof prefix - 1, '/');
	return s && !strncmp(s, SEG, sizeof SEG - 1) && (!s[sizeof SEG - 1] || s[sizeof SEG - 1] == '/');
}

static void kick(void *arg)
{
	fwd *f = arg;
	pthread_mutex_lock(&reg.mu);
	f->kicked = true;
	pthread_cond_broadcast(&reg.cv);
	pthread_mutex_unlock(&reg.mu);
}

static void fwd_free(fwd *f)
{
	s0__stream_free(f->st); /* no kick after this */
	pthread_mutex_destroy(&f->drive);
	free(f);
}

static void unref(fwd *f)
{
	pthread_mutex_lock(&reg.mu);
	bool last = --f->refs == 0;
	pthread_mutex_unlock(&reg.mu);
	if (last)
		fwd_free(f);
}

/* Under reg.mu: take f out of the registry (its reference goes to *gone). */
static void unlink_locked(fwd *f, fwd **gone)
{
	for (fwd **p = &reg.head; *p; p = &(*p)->next)
		if (*p == f) {
			*p = f->next;
			f->next = *gone;
			*gone = f;
			return;
		}
}

/* Drop the streams nobody pulls any more. */
static void sweep(void)
{
	int64_t now = s0__real_monotonic_ms();
	fwd *gone = NULL;
	pthread_mutex_lock(&reg.mu);
	for (fwd *f = reg.head, *next; f; f = next) {
		next = f->next;
		if (f->refs == 1 && now - f->seen_ms > S0__FWDSTREAM_IDLE_MS)
			unlink_locked(f, &gone);
	}
	pthread_mutex_unlock(&reg.mu);
	while (gone) {
		fwd *f = gone;
		gone = f->next;
		unref(f);
	}
}

/* Sweep every quarter of the idle time while any forwarded stream is held,
 * so a stream whose entry node died is dropped even when no call comes. */
static void *reaper(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&reg.mu);
		if (!reg.head) {
			reg.reaper = false;
			pthread_mutex_unlock(&reg.mu);
			return NULL;
		}
		int64_t at = s0__real_monotonic_ms() + S0__FWDSTREAM_IDLE_MS / 4;
		struct timespec ts = {.tv_sec = at / 1000, .tv_nsec = (at % 1000) * 1000000L};
		pthread_cond_timedwait(&reg.reaper_cv, &reg.mu, &ts);
		pthread_mutex_unlock(&reg.mu);
		sweep();
	}
}

/* Under reg.mu, with f just registered: a reaper runs (if a thread can be had;
 * else the next call's sweep does its work). */
static void reaper_start_locked(void)
{
	if (reg.reaper)
		return;
	pthread_t t;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	reg.reaper = pthread_create(&t, &a, reaper, NULL) == 0;
	pthread_attr_destroy(&a);
}

/* The stream id of team (a reference), or NULL. */
static fwd *lookup(const char *id, const char *team)
{
	fwd *f;
	pthread_mutex_lock(&reg.mu);
	for (f = reg.head; f; f = f->next)
		if (!strcmp(f->id, id) && !strcmp(f->team, team)) {
			f->refs++;
			f->seen_ms = s0__real_monotonic_ms();
			break;
		}
	pthread_mutex_unlock(&reg.mu);
	return f;
}

static void drop(fwd *f)
{
	fwd *gone = NULL;
	pthread_mutex_lock(&reg.mu);
	unlink_locked(f, &gone);
	pthread_mutex_unlock(&reg.mu);
	if (gone)
		unref(gone);
}

static int reply_json(s0__http_response *resp, int status, cJSON *o)
{
	char *text = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	int rc = text ? S0_OK : S0_ENOMEM;
	resp->status = status;
	if (rc == S0_OK && (s0__headers_add(&resp->headers, "Content-Type", "application/json") < 0 ||
	                    s0__buf_put(&resp->body, text, strlen(text)) < 0))
		rc = S0_ENOMEM;
	free(text);
	return rc;
}

/* {"messages":[…],"close":code,"reason":…} of what out holds (emptied). */
static int reply_batch(s0__http_response *resp, s0__smsgq *out, int close, const char *reason)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *a = o ? cJSON_AddArrayToObject(o, "messages") : NULL;
	bool ok = a != NULL;
	s0__smsg *m;
	while ((m = s0__smsgq_pop(out))) {
		ok = ok && cJSON_AddItemToArray(a, cJSON_CreateString(m->data));
		free(m);
	}
	ok = ok && s0__json_add_i64(o, "close", close) == 0 &&
	     s0__json_add_str(o, "reason", close ? reason : "") == 0;
	if (!ok) {
		cJSON_Delete(o);
		return S0_ENOMEM;
	}
	return reply_json(resp, 200, o);
}

static int serve_open(s0__engine *e, const s0__router_opts *opts, const s0__http_request *req,
                      s0__http_response *resp)
{
	cJSON *body = req->has_body ? cJSON_ParseWithLength(req->body, req->body_len) : NULL;
	const char *target = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(body, "target"));
	if (!target || strncmp(target, "/api/v1/sandboxes/", 18)) {
		cJSON_Delete(body);
		return s0__router_reply_error(resp, opts->request_id, 400, "bad_request",
		                              "invalid request: a stream target is required");
	}
	fwd *f = calloc(1, sizeof *f);
	char *path = s0__strdup(target);
	if (!f || !path) {
		free(f);
		free(path);
		cJSON_Delete(body);
		return S0_ENOMEM;
	}
	char *q = strchr(path, '?');
	if (q)
		*q++ = '\0';
	pthread_mutex_init(&f->drive, NULL);
	unsigned char raw[16];
	randombytes_buf(raw, sizeof raw);
	sodium_bin2hex(f->id, sizeof f->id, raw, sizeof raw);
	s0__strlcpy(f->team, opts->team_id, sizeof f->team);
	f->kicked = true;
	f->refs = 1;
	s0__http_request sreq = {.method = "GET", .path = path, .query = q, .headers = req->headers};
	int rc = s0__router_stream_open(e, opts, &sreq, kick, f, &f->st, resp);
	free(path);
	cJSON_Delete(body);
	if (rc == S0_ENOTFOUND)
		rc = s0__router_reply_error(resp, opts->request_id, 404, "not_found",
		                            "not found: no stream at this target");
	if (rc < 0 || !f->st) {
		fwd_free(f);
		return rc < 0 ? rc : S0_OK;
	}
	f->seen_ms = s0__real_monotonic_ms();
	pthread_mutex_lock(&reg.mu);
	f->next = reg.head;
	reg.head = f;
	reaper_start_locked();
	pthread_mutex_unlock(&reg.mu);
	cJSON *o = cJSON_CreateObject();
	if (o && s0__json_add_str(o, "stream_id", f->id) < 0) {
		cJSON_Delete(o);
		o = NULL;
	}
	return reply_json(resp, 201, o);
}

static int64_t body_i64(const cJSON *body, const char *key, int64_t dflt, int64_t max)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(body, key);
	int64_t n = cJSON_IsNumber(v) && v->valuedouble >= 0 ? (int64_t)v->valuedouble : dflt;
	return n > max ? max : n;
}

/* Hold until the stream has something (or closes) or the wait is over. */
static int serve_pull(fwd *f, const cJSON *body, s0__http_response *resp)
{
	int64_t wait = body_i64(body, "wait_ms", S0__FWDSTREAM_WAIT_MS, S0__FWDSTREAM_WAIT_MS);
	size_t room = (size_t)body_i64(body, "max_bytes", S0__STREAM_QUEUE_MAX, S0__STREAM_QUEUE_MAX);
	int64_t until = s0__real_monotonic_ms() + wait;
	s0__smsgq out = {0};
	int close = 0;
	char reason[128] = "";
	for (; room > 0;) { /* no room: a keep-alive, answered at once */
		int64_t now = s0__real_monotonic_ms();
		pthread_mutex_lock(&reg.mu);
		bool go = f->kicked || (f->retry_at && now >= f->retry_at);
		if (go) {
			f->kicked = false;
			f->retry_at = 0;
		} else if (now < until) {
			int64_t at = f->retry_at && f->retry_at < until ? f->retry_at : until;
			struct timespec ts = {.tv_sec = at / 1000, .tv_nsec = (at % 1000) * 1000000L};
			pthread_cond_timedwait(&reg.cv, &reg.mu, &ts);
		}
		pthread_mutex_unlock(&reg.mu);
		if (go) {
			int64_t retry = 0;
			pthread_mutex_lock(&f->drive);
			close = s0__stream_pull(f->st, room > out.bytes ? room - out.bytes : 1, &out, &retry);
			if (close)
				s0__strlcpy(reason, s0__stream_close_reason(f->st), sizeof reason);
			pthread_mutex_unlock(&f->drive);
			if (retry > 0) {
				pthread_mutex_lock(&reg.mu);
				f->retry_at = s0__real_monotonic_ms() + retry;
				pthread_mutex_unlock(&reg.mu);
			}
		}
		if (close || out.count || (!go && s0__real_monotonic_ms() >= until))
			break;
	}
	pthread_mutex_lock(&reg.mu);
	f->seen_ms = s0__real_monotonic_ms(); /* idle from the end of the pull */
	pthread_mutex_unlock(&reg.mu);
	if (close)
		drop(f);
	int rc = reply_batch(resp, &out, close, reason);
	s0__smsgq_clear(&out);
	return rc;
}

static int serve_input(fwd *f, const cJSON *body, s0__http_response *resp)
{
	const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(body, "messages");
	s0__smsgq out = {0};
	int close = 0;
	char reason[128] = "";
	const cJSON *m;
	pthread_mutex_lock(&f->drive);
	cJSON_ArrayForEach(m, msgs)
	{
		const char *text = cJSON_GetStringValue(m);
		if (text && !close)
			close = s0__stream_input(f->st, text, strlen(text), &out);
	}
	if (close)
		s0__strlcpy(reason, s0__stream_close_reason(f->st), sizeof reason);
	pthread_mutex_unlock(&f->drive);
	if (close)
		drop(f);
	int rc = reply_batch(resp, &out, close, reason);
	s0__smsgq_clear(&out);
	return rc;
}

int s0__fwdstream_serve(s0__engine *e, const s0__router_opts *opts,
                        const s0__http_request *req, const char *path,
                        s0__http_response *resp)
{
	pthread_once(&reg_once, reg_init);
	sweep();
	const char *rid = opts->request_id;
	if (!opts->team_id)
		return s0__router_reply_error(resp, rid, 401, "unauthorized", "unauthorized");
	const char *rest = strstr(strchr(path + 18, '/'), SEG) + sizeof SEG - 1;
	if (!*rest)
		return strcmp(req->method, "POST")
		           ? s0__router_reply_error(resp, rid, 405, "method_not_allowed",
		                                    "method not allowed")
		           : serve_open(e, opts, req, resp);
	char id[33] = "";
	const char *op = strchr(rest + 1, '/');
	size_t n = op ? (size_t)(op - rest - 1) : strlen(rest + 1);
	if (n < sizeof id) {
		memcpy(id, rest + 1, n);
		id[n] = '\0';
	}
	fwd *f = *id ? lookup(id, opts->team_id) : NULL;
	if (!f)
		return s0__router_reply_error(resp, rid, 404, "not_found",
		                              "not found: no such forwarded stream");
	cJSON *body = req->has_body ? cJSON_ParseWithLength(req->body, req->body_len) : NULL;
	int rc;
	if (!op && !strcmp(req->method, "DELETE")) {
		drop(f);
		resp->status = 204;
		rc = S0_OK;
	} else if (op && !strcmp(op, "/pull") && !strcmp(req->method, "POST"))
		rc = serve_pull(f, body, resp);
	else if (op && !strcmp(op, "/input") && !strcmp(req->method, "POST"))
		rc = serve_input(f, body, resp);
	else
		rc = s0__router_reply_error(resp, rid, 404, "not_found", "not found");
	cJSON_Delete(body);
	unref(f);
	return rc;
}
