/*
 * A request on a worker thread: the handler, then the long-poll of
 * docs/wire.md "Long-poll" — a conditional GET with `Prefer: wait=N` whose
 * answer is 304 is parked on the event loop (no thread held) until the watched
 * resource changes, the time passes, the client hangs up or the server stops.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "local/api/router.h"
#include "server/request.h"
#include "server/workers.h"
#include "server/sse.h"
#include "server/ws.h"

int s0__server_call_handler(s0_server *s, s0__sreq *r, s0__http_response *resp)
{
	s0__http_request req = {.method = r->method, .path = r->path, .query = r->query,
	                        .headers = r->hdrs, .body = r->body.data,
	                        .body_len = r->body.len, .has_body = r->body.len > 0,
	                        .upload = r->upload};
	s0__server_call call = {.team_id = r->team, .request_id = r->rid, .stop = s->stop};
	if (r->admin_keys)
		return s0__server_admin_keys(s->cfg.admin, &req, r->rid, resp);
	if (s->o.flags & S0_SERVER_ENABLE_ADMIN && s->cfg.admin && !strncmp(r->path, "/admin/", 7))
		return s0__server_admin(s->cfg.admin, &req, r->rid, resp);
	return s->cfg.handler(s->cfg.handler_ctx, &call, &req, resp);
}

/* The value of `wait` in a Prefer field (RFC 7240 §4.3), or -1. */
static int prefer_wait(const char *prefer)
{
	const char *p = prefer;
	while (p && *p) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		size_t n = strcspn(p, ",");
		if (n > 4 && !strncasecmp(p, "wait", 4)) {
			const char *v = p + 4;
			while (*v == ' ' || *v == '\t')
				v++;
			if (*v == '=') {
				v++;
				while (*v == ' ' || *v == '\t')
					v++;
				bool quoted = *v == '"';
				if (quoted)
					v++;
				/* delta-seconds (1*DIGIT), else ignored: "1e9" is not 1 */
				const char *end = v;
				while (isdigit((unsigned char)*end))
					end++;
				if (quoted && *end == '"')
					end++;
				while (*end == ' ' || *end == '\t')
					end++;
				if (end > v && isdigit((unsigned char)*v) &&
				    (!*end || *end == ',' || *end == ';')) {
					long s = strtol(v, NULL, 10);
					return s > 100000 ? 100000 : (int)s;
				}
				return -1;
			}
		}
		p += n;
	}
	return -1;
}

void s0__server_longpoll_prepare(s0__sreq *r)
{
	if (strcmp(r->method, "GET") || !r->s->cfg.watch)
		return; /* without If-None-Match nothing is held, but the answer says it could be */
	int w = prefer_wait(s0__headers_get(&r->hdrs, "Prefer"));
	if (w <= 0)
		return;
	r->wait_s = w > S0__SERVER_WAIT_MAX_S ? S0__SERVER_WAIT_MAX_S : w;
	r->wait_deadline_ms = s0__real_monotonic_ms() + (int64_t)r->wait_s * 1000;
}

/* The watch fired (any thread, the watch's lock held): wake the parked request. */
static void on_change(void *arg)
{
	s0__sreq *r = arg;
	pthread_mutex_lock(&r->s->park_mu);
	r->changed = true;
	if (r->src)
		s0__loop_signal(r->src);
	pthread_mutex_unlock(&r->s->park_mu);
}

/* Loop thread: a parked request's time is up, its client left, or it changed. */
static void on_fire(s0__loop_src *src, unsigned events, void *arg)
{
	s0__sreq *r = arg;
	s0_server *s = r->s;
	pthread_mutex_lock(&s->park_mu);
	r->src = NULL;
	if (events & (S0__LOOP_TIMEOUT | S0__LOOP_HUP | S0__LOOP_STOP))
		r->final = true;
	r->changed = false; /* the run below reads the resource anew */
	pthread_mutex_unlock(&s->park_mu);
	s0__loop_remove(src);
	if (s0__workers_submit(s->workers, s0__server_run, r) < 0) {
		/* no memory for a job: answer with what was last computed */
		r->done = true;
		MHD_resume_connection(r->conn);
	}
}

static bool stopping(s0_server *s)
{
	pthread_mutex_lock(&s->mu);
	bool st = s->stopping;
	pthread_mutex_unlock(&s->mu);
	return st;
}

enum park_result { ANSWER, AGAIN, PARKED };

/*
 * Park r until a change, its deadline or a hang-up (PARKED: the loop thread
 * owns r from then on), read again (AGAIN: it changed meanwhile) or answer now.
 */
static enum park_result park(s0__sreq *r)
{
	s0_server *s = r->s;
	if (r->final || r->resp.status != 304 || stopping(s) ||
	    s0__real_monotonic_ms() >= r->wait_deadline_ms)
		return ANSWER;
	pthread_mutex_lock(&s->park_mu);
	if (r->changed) {
		r->changed = false;
		pthread_mutex_unlock(&s->park_mu);
		return AGAIN;
	}
	int rc = s0__loop_add(s->loop, r->fd, S0__LOOP_HUP, r->wait_deadline_ms, on_fire, r,
	                      &r->src);
	pthread_mutex_unlock(&s->park_mu);
	/* refused (the loop is full or stopping): answer now, the wait is a preference */
	return rc == S0_OK ? PARKED : ANSWER;
}


static void reply_500(s0__sreq *r)
{
	s0__http_response_free(&r->resp);
	memset(&r->resp, 0, sizeof r->resp);
	if (s0__router_reply_error(&r->resp, r->rid, 500, "internal_error", "out of memory") < 0)
		r->resp.status = 500;
}

static void reply_err(s0__sreq *r, int status, const char *wire, const char *msg)
{
	s0__http_response_free(&r->resp);
	memset(&r->resp, 0, sizeof r->resp);
	if (s0__router_reply_error(&r->resp, r->rid, status, wire, msg) < 0)
		r->resp.status = 500;
}

/*
 * A WebSocket upgrade (docs/wire.md §8.2): the handshake checked, the stream
 * opened (auth ran already; team scoping and a wake are the stream's), and
 * the answer a 101 with the stream waiting for the socket. false: not a
 * stream route, route it as usual.
 */
static bool run_upgrade(s0__sreq *r)
{
	s0_server *s = r->s;
	char accept[29];
	const char *ver = s0__headers_get(&r->hdrs, "Sec-WebSocket-Version");
	s0__http_request req = {.method = r->method, .path = r->path, .query = r->query,
	                        .headers = r->hdrs};
	s0__server_call call = {.team_id = r->team, .request_id = r->rid};
	if (!ver || strcmp(ver, "13")) {
		reply_err(r, 400, "bad_request", "invalid request: Sec-WebSocket-Version must be 13");
		s0__headers_add(&r->resp.headers, "Sec-WebSocket-Version", "13");
		return true;
	}
	if (s0__ws_accept_value(s0__headers_get(&r->hdrs, "Sec-WebSocket-Key"), accept) < 0) {
		reply_err(r, 400, "bad_request", "invalid request: bad Sec-WebSocket-Key");
		return true;
	}
	s0__ws *ws = s0__ws_new(s);
	if (!ws) {
		reply_500(r);
		return true;
	}
	void *st = NULL;
	int rc = s->cfg.streams->open(s->cfg.streams->ctx, &call, &req, s0__ws_kick, ws, &st,
	                              &r->resp);
	if (rc == S0_ENOTFOUND && !r->resp.status) {
		s0__ws_discard(ws);
		return false;
	}
	if (rc < 0 || !st) {
		s0__ws_discard(ws);
		if (rc < 0 || !r->resp.status)
			reply_500(r);
		return true;
	}
	s0__ws_set_stream(ws, st);
	if (s0__loop_count(s->loop) >= s->park_max) {
		s0__ws_discard(ws);
		reply_err(r, 503, "unavailable", "too many open streams; retry");
		s0__headers_add(&r->resp.headers, "Retry-After", "1");
		return true;
	}
	r->ws = ws;
	r->resp.status = 101;
	if (s0__headers_add(&r->resp.headers, "Upgrade", "websocket") < 0 ||
	    s0__headers_add(&r->resp.headers, "Sec-WebSocket-Accept", accept) < 0) {
		r->ws = NULL;
		s0__ws_discard(ws);
		reply_500(r);
	}
	return true;
}

void s0__server_run(void *arg)
{
	s0__sreq *r = arg;
	s0_server *s = r->s;
	bool sse = s->cfg.streams && r->team && !r->wait_s && s0__sse_is_route(r->method, r->path);
	if (sse)
		s0__sse_run(r); /* the session event stream (sse.h) */
	if (sse || (s->cfg.streams && !r->wait_s && s0__ws_is_upgrade(r->method, &r->hdrs) &&
	            run_upgrade(r))) {
		r->done = true;
		MHD_resume_connection(r->conn);
		return;
	}
	if (r->wait_s && !r->sub && !r->final &&
	    s->cfg.watch->subscribe(s->cfg.watch->ctx, r->path, on_change, r, &r->sub) < 0)
		r->wait_s = 0; /* not a watchable resource: a plain conditional GET */
	for (;;) {
		s0__http_response_free(&r->resp);
		memset(&r->resp, 0, sizeof r->resp);
		int rc = s0__server_call_handler(s, r, &r->resp);
		if (rc < 0 || !r->resp.status) {
			reply_500(r);
			break;
		}
		if (!r->wait_s)
			break;
		enum park_result p = park(r);
		if (p == PARKED)
			return; /* on_fire runs this again; r must not be touched from here */
		if (p == ANSWER)
			break;
	}
	if (r->sub) {
		s->cfg.watch->unsubscribe(s->cfg.watch->ctx, r->sub);
		r->sub = NULL;
	}
	if (r->wait_s) {
		char v[32];
		snprintf(v, sizeof v, "wait=%d", r->wait_s);
		s0__headers_add(&r->resp.headers, "Preference-Applied", v);
	}
	r->done = true;
	MHD_resume_connection(r->conn);
}
