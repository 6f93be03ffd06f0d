/*
 * Forwarded streams, the entry node's side (fwdstream.h): a stream whose
 * messages come from the node running the sandbox. A puller thread per
 * stream holds one pull at a time on the owner and queues what comes (at
 * most S0__STREAM_QUEUE_MAX bytes: it pulls again only when the driver made
 * room); input goes to the owner at once, its replies back with it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/json.h"
#include "local/api/forward.h"
#include "local/api/fwdstream.h"
#include "local/api/stream_int.h"

#define CALL_TIMEOUT_MS 15000 /* an input or open answered by the owner */

struct s0__rstream {
	s0__engine *e;
	char url[512];
	char *base;      /* /api/v1/sandboxes/{raw id}/node-streams/{stream id} */
	s0__headers hdrs; /* the client's authentication, sent along */
	s0__stream_kick_fn kick;
	void *kick_arg;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* room in q, or stop */
	s0__smsgq q;       /* under mu */
	bool stop;         /* under mu: the stream was freed */
	int close;         /* under mu: the close code once known */
	char reason[128];  /* set with close */
	int refs;          /* under mu: the stream + the puller */
	char close_auth[S0__NODE_AUTH_MAX]; /* the DELETE's signature, made by the free */
};

static bool not_sent(const char *name)
{
	static const char *const h[] = {"Upgrade", "Sec-WebSocket-Key", "Sec-WebSocket-Version",
	                                "Sec-WebSocket-Extensions", "Sec-WebSocket-Protocol",
	                                "Content-Type", S0__NODE_AUTH_HEADER};
	for (size_t i = 0; i < sizeof h / sizeof h[0]; i++)
		if (!strcasecmp(name, h[i]))
			return true;
	return false;
}

/* One call on the owner: method path with body (a JSON text, nullable),
 * signed here with e, or (e NULL) with auth made by sign_with() before. */
static int call_text(s0__engine *e, const char *auth, const char *url, const s0__headers *hdrs,
                     const char *method, const char *path, const char *text,
                     int64_t timeout_ms, s0__http_response *resp)
{
	s0__http_request req = {.method = method, .path = path, .body = text,
	                        .body_len = text ? strlen(text) : 0, .has_body = text != NULL};
	int rc = S0_OK;
	if (s0__headers_copy(&req.headers, hdrs, not_sent) < 0 ||
	    (text && s0__headers_add(&req.headers, "Content-Type", "application/json") < 0) ||
	    (!e && s0__headers_add(&req.headers, S0__NODE_AUTH_HEADER, auth) < 0))
		rc = S0_ENOMEM;
	bool sent = false;
	if (rc == S0_OK)
		rc = s0__node_call(e, url, &req, timeout_ms, resp, &sent);
	s0__headers_free(&req.headers);
	return rc;
}

/* call_text() with body (taken; nullable) signed with e. */
static int call(s0__engine *e, const char *url, const s0__headers *hdrs, const char *method,
                const char *path, cJSON *body, int64_t timeout_ms, s0__http_response *resp)
{
	char *text = body ? cJSON_PrintUnformatted(body) : NULL;
	cJSON_Delete(body);
	int rc = body && !text ? S0_ENOMEM
	                       : call_text(e, NULL, url, hdrs, method, path, text, timeout_ms, resp);
	free(text);
	return rc;
}

/* Messages of an owner's batch into q; its close code (0: none) and reason. */
static int take_batch(const s0__http_response *resp, s0__smsgq *q, char reason[128])
{
	cJSON *o = cJSON_ParseWithLength(resp->body.data, resp->body.len);
	const cJSON *m;
	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(o, "messages"))
	{
		const char *t = cJSON_GetStringValue(m);
		if (t && s0__smsgq_push(q, t, strlen(t)) < 0) {
			cJSON_Delete(o);
			s0__strlcpy(reason, "out of memory", 128);
			return S0__WS_ERROR;
		}
	}
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "close");
	int close = o && cJSON_IsNumber(c) ? (int)c->valuedouble : S0__WS_ERROR;
	const char *why = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "reason"));
	s0__strlcpy(reason, !o ? "the node running this sandbox answered what cannot be read"
	                    : why ? why : "", 128);
	cJSON_Delete(o);
	return close;
}

/* The close of a failed exchange (rc from call(), else resp's status). */
static int failed(int rc, const s0__http_response *resp, char reason[128])
{
	s0__strlcpy(reason,
	            rc == S0_ETRANSPORT ? "the node running this sandbox stopped answering"
	            : rc < 0            ? "out of memory"
	            : resp->status == 404
	                ? "the node running this sandbox no longer holds the stream"
	                : "the node running this sandbox refused the stream",
	            128);
	return S0__WS_ERROR;
}

static void rs_unref(struct s0__rstream *r)
{
	pthread_mutex_lock(&r->mu);
	bool last = --r->refs == 0;
	pthread_mutex_unlock(&r->mu);
	if (!last)
		return;
	s0__smsgq_clear(&r->q);
	s0__headers_free(&r->hdrs);
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
	free(r->base);
	free(r);
}

/*
 * The puller's calls are signed under r->mu while the stream is not freed, so
 * the engine (which outlives every stream) is never used after
 * s0__rstream_free() returns; the close sent after a free was signed by it.
 */
static void *puller(void *arg)
{
	struct s0__rstream *r = arg;
	char *pull = s0__asprintf("%s/pull", r->base);
	bool stopped = false;
	char auth[S0__NODE_AUTH_MAX];
	for (;;) {
		pthread_mutex_lock(&r->mu);
		if (!r->stop && r->q.bytes >= S0__STREAM_QUEUE_MAX) { /* the client is behind */
			int64_t at = s0__real_monotonic_ms() + S0__FWDSTREAM_IDLE_MS / 4;
			struct timespec ts = {.tv_sec = at / 1000, .tv_nsec = (at % 1000) * 1000000L};
			pthread_cond_timedwait(&r->cv, &r->mu, &ts);
		}
		stopped = r->stop;
		/* still no room: an empty pull keeps the stream on the owner */
		size_t room = r->q.bytes >= S0__STREAM_QUEUE_MAX ? 0 : S0__STREAM_QUEUE_MAX - r->q.bytes;
		pthread_mutex_unlock(&r->mu);
		if (stopped)
			break;
		char text[96];
		snprintf(text, sizeof text, "{\"wait_ms\":%d,\"max_bytes\":%zu}", S0__FWDSTREAM_WAIT_MS,
		         room);
		pthread_mutex_lock(&r->mu);
		stopped = r->stop;
		if (!stopped && pull)
			s0__engine_node_sign(r->e, "POST", pull, text, strlen(text), auth);
		pthread_mutex_unlock(&r->mu);
		if (stopped)
			break;
		s0__http_response resp = {0};
		int rc = pull ? call_text(NULL, auth, r->url, &r->hdrs, "POST", pull, text,
		                          S0__FWDSTREAM_WAIT_MS + CALL_TIMEOUT_MS, &resp)
		              : S0_ENOMEM;
		s0__smsgq got = {0};
		char reason[128];
		int close = rc == S0_OK && resp.status == 200 ? take_batch(&resp, &got, reason)
		                                              : failed(rc, &resp, reason);
		s0__http_response_free(&resp);
		pthread_mutex_lock(&r->mu);
		s0__smsgq_move(&r->q, &got);
		if (close) {
			r->close = close;
			s0__strlcpy(r->reason, reason, sizeof r->reason);
		}
		stopped = r->stop;
		if (!stopped)
			r->kick(r->kick_arg);
		pthread_mutex_unlock(&r->mu);
		s0__smsgq_clear(&got);
		if (close)
			break;
	}
	if (stopped) { /* the client left first: end it on the owner now */
		s0__http_response resp = {0};
		call_text(NULL, r->close_auth, r->url, &r->hdrs, "DELETE", r->base, NULL,
		          CALL_TIMEOUT_MS, &resp);
		s0__http_response_free(&resp);
	}
	free(pull);
	rs_unref(r);
	return NULL;
}

int s0__fwdstream_open(s0__engine *e, const char *url, const s0__http_request *req,
                       const char *request_id, s0__stream_kick_fn kick, void *kick_arg,
                       s0__stream **out, s0__http_response *resp)
{
	*out = NULL;
	const char *raw = req->path + 18; /* after /api/v1/sandboxes/ */
	size_t idn = strcspn(raw, "/");
	char *target = req->query && *req->query ? s0__asprintf("%s?%s", req->path, req->query)
	                                         : s0__strdup(req->path);
	char *open = s0__asprintf("/api/v1/sandboxes/%.*s/node-streams", (int)idn, raw);
	cJSON *b = cJSON_CreateObject();
	int rc = target && open && b && s0__json_add_str(b, "target", target) == 0 ? S0_OK
	                                                                            : S0_ENOMEM;
	s0__http_response got = {0};
	if (rc == S0_OK) {
		rc = call(e, url, &req->headers, "POST", open, b, CALL_TIMEOUT_MS, &got);
		b = NULL;
	}
	cJSON_Delete(b);
	free(target);
	const char *sid = NULL;
	cJSON *o = NULL;
	if (rc == S0_OK && got.status == 201) {
		o = cJSON_ParseWithLength(got.body.data, got.body.len);
		sid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "stream_id"));
	}
	if (rc == S0_ETRANSPORT || (rc == S0_OK && got.status == 201 && !sid)) {
		rc = s0__router_reply_error(resp, request_id, 503, "unavailable",
		                            "the node running this sandbox cannot be reached; retry");
		if (rc == S0_OK && s0__headers_add(&resp->headers, "Retry-After", "1") < 0)
			rc = S0_ENOMEM;
	} else if (rc == S0_OK && !sid) { /* refused there: its answer, as it came */
		*resp = got;
		memset(&got, 0, sizeof got);
	}
	s0__http_response_free(&got);
	if (rc < 0 || !sid) {
		cJSON_Delete(o);
		free(open);
		return rc;
	}
	s0__stream *st = calloc(1, sizeof *st);
	struct s0__rstream *r = calloc(1, sizeof *r);
	if (r)
		r->base = s0__asprintf("%s/%s", open, sid);
	free(open);
	cJSON_Delete(o);
	if (!st || !r || !r->base || s0__headers_copy(&r->hdrs, &req->headers, not_sent) < 0) {
		if (r) {
			s0__headers_free(&r->hdrs);
			free(r->base);
		}
		free(r);
		free(st);
		return S0_ENOMEM;
	}
	r->e = e;
	s0__strlcpy(r->url, url, sizeof r->url);
	r->kick = kick;
	r->kick_arg = kick_arg;
	r->refs = 2;
	pthread_mutex_init(&r->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cv, &ca);
	pthread_condattr_destroy(&ca);
	st->e = e;
	st->remote = r;
	st->reason = "";
	pthread_mutex_init(&st->mu, NULL);
	pthread_t t;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &a, puller, r) != 0) {
		r->refs = 1;
		pthread_mutex_lock(&r->mu);
		r->close = S0__WS_ERROR;
		s0__strlcpy(r->reason, "the server could not start the stream", sizeof r->reason);
		pthread_mutex_unlock(&r->mu);
	}
	pthread_attr_destroy(&a);
	*out = st;
	return S0_OK;
}

int s0__rstream_input(s0__stream *st, const char *text, size_t len, s0__smsgq *out)
{
	struct s0__rstream *r = st->remote;
	cJSON *b = cJSON_CreateObject();
	cJSON *a = b ? cJSON_AddArrayToObject(b, "messages") : NULL;
	char *copy = strndup(text, len);
	if (!a || !copy || !cJSON_AddItemToArray(a, cJSON_CreateString(copy))) {
		free(copy);
		cJSON_Delete(b);
		st->reason = "out of memory";
		return S0__WS_ERROR;
	}
	free(copy);
	char *path = s0__asprintf("%s/input", r->base);
	s0__http_response resp = {0};
	int rc = path ? call(r->e, r->url, &r->hdrs, "POST", path, b, CALL_TIMEOUT_MS, &resp)
	              : (cJSON_Delete(b), S0_ENOMEM);
	free(path);
	char reason[128];
	int close = rc == S0_OK && resp.status == 200 ? take_batch(&resp, out, reason)
	                                              : failed(rc, &resp, reason);
	s0__http_response_free(&resp);
	if (close) {
		pthread_mutex_lock(&r->mu);
		if (!r->close) {
			r->close = close;
			s0__strlcpy(r->reason, reason, sizeof r->reason);
		}
		st->reason = r->reason;
		close = r->close;
		pthread_mutex_unlock(&r->mu);
	}
	return close;
}

int s0__rstream_pull(s0__stream *st, size_t room, s0__smsgq *out)
{
	struct s0__rstream *r = st->remote;
	pthread_mutex_lock(&r->mu);
	size_t took = 0;
	s0__smsg *m;
	while ((!took || took + (r->q.head ? r->q.head->len : 0) <= room) &&
	       (m = s0__smsgq_pop(&r->q))) {
		took += m->len;
		int rc = s0__smsgq_push(out, m->data, m->len);
		free(m);
		if (rc < 0) {
			r->close = S0__WS_ERROR;
			s0__strlcpy(r->reason, "out of memory", sizeof r->reason);
			break;
		}
	}
	int close = r->q.count ? 0 : r->close;
	if (close)
		st->reason = r->reason;
	bool more = r->q.count > 0;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
	if (more) /* what did not fit: the driver pulls again soon */
		r->kick(r->kick_arg);
	return close;
}

void s0__rstream_free(struct s0__rstream *r)
{
	pthread_mutex_lock(&r->mu);
	s0__engine_node_sign(r->e, "DELETE", r->base, NULL, 0, r->close_auth);
	r->stop = true;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
	rs_unref(r);
}
