/* The session event stream over server-sent events (sse.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/api/router.h"
#include "local/api/stream.h"
#include "server/loop.h"
#include "server/sse.h"
#include "server/workers.h"

#define SUFFIX "/events/stream"

struct s0__sse {
	s0_server *s;
	pthread_mutex_t mu;
	void *st; /* the session stream (s->cfg.streams) */
	struct MHD_Connection *conn;
	s0__loop_src *src; /* NULL once removed */
	s0__buf out;       /* bytes for the reader, from out_pos */
	size_t out_pos;
	bool suspended; /* the reader suspended the connection */
	bool done;      /* no more bytes will come: end the body once out is sent */
	bool job;       /* a pull runs on a handler thread */
	bool gone;      /* libmicrohttpd freed the response */
	bool started;   /* the response was made */
	int64_t keepalive_at; /* next keep-alive comment (real monotonic ms) */
	int64_t retry_ms;     /* the last pull asked to be run again after this */
	int64_t pull_at;      /* ... at this time (0: only on a kick) */
};

bool s0__sse_is_route(const char *method, const char *raw_path)
{
	size_t n = strlen(raw_path), k = sizeof SUFFIX - 1;
	return !strcmp(method, "GET") && n > k && !strcmp(raw_path + n - k, SUFFIX) &&
	       strstr(raw_path, "/sessions/");
}

static void resume(s0__sse *x) /* x->mu held */
{
	if (x->suspended) {
		x->suspended = false;
		MHD_resume_connection(x->conn);
	}
}

/* Free once nothing refers to x (x->mu held; unlocks). */
static void release(s0__sse *x)
{
	bool last = !x->src && !x->job && (x->gone || !x->started);
	pthread_mutex_unlock(&x->mu);
	if (!last)
		return;
	if (x->st)
		x->s->cfg.streams->free(x->st);
	s0__buf_free(&x->out);
	pthread_mutex_destroy(&x->mu);
	free(x);
}

static void kick(void *arg)
{
	s0__sse *x = arg;
	pthread_mutex_lock(&x->mu);
	if (x->src)
		s0__loop_signal(x->src);
	pthread_mutex_unlock(&x->mu);
}

/* One stream message as an SSE block: events only (acks and errors are
 * the WebSocket's). */
static int append_msg(s0__buf *b, const char *text)
{
	cJSON *m = cJSON_Parse(text);
	const cJSON *ev = cJSON_GetObjectItemCaseSensitive(m, "event");
	const char *type = s0__json_str(m, "type");
	int rc = 0;
	if (type && !strcmp(type, "event") && cJSON_IsObject(ev)) {
		const cJSON *seq = cJSON_GetObjectItemCaseSensitive(ev, "seq");
		char *data = cJSON_PrintUnformatted(ev);
		rc = !data ? -1
		     : cJSON_IsNumber(seq)
		         ? s0__buf_printf(b, "id: %.0f\ndata: %s\n\n", seq->valuedouble, data)
		         : s0__buf_printf(b, "data: %s\n\n", data);
		free(data);
	}
	cJSON_Delete(m);
	return rc;
}

/* A pull on a handler thread. */
static void pull_job(void *arg)
{
	s0__sse *x = arg;
	pthread_mutex_lock(&x->mu);
	size_t queued = x->out.len - x->out_pos;
	bool stop = x->done || x->gone;
	pthread_mutex_unlock(&x->mu);
	s0__smsgq q = {0};
	int code = 0;
	if (!stop && queued < S0__STREAM_QUEUE_MAX) {
		int64_t retry = 0;
		code = x->s->cfg.streams->pull(x->st, S0__STREAM_QUEUE_MAX - queued, &q, &retry);
		pthread_mutex_lock(&x->mu);
		x->retry_ms = retry;
		if (retry > 0 && x->src)
			s0__loop_signal(x->src); /* the loop sets the retry's deadline */
		pthread_mutex_unlock(&x->mu);
	}
	pthread_mutex_lock(&x->mu);
	s0__smsg *m;
	while ((m = s0__smsgq_pop(&q))) {
		if (append_msg(&x->out, m->data) < 0)
			code = S0__WS_ERROR;
		free(m);
	}
	if (code > 0)
		x->done = true;
	x->job = false;
	resume(x);
	release(x);
}

static void schedule_pull(s0__sse *x) /* x->mu held */
{
	if (x->job || x->done || x->gone)
		return;
	x->job = true;
	if (s0__workers_submit(x->s->workers, pull_job, x) < 0)
		x->job = false;
}

static void on_loop(s0__loop_src *src, unsigned events, void *arg)
{
	s0__sse *x = arg;
	pthread_mutex_lock(&x->mu);
	if (events & S0__LOOP_STOP || x->gone) {
		x->done = true;
		resume(x);
		s0__loop_remove(src);
		x->src = NULL;
		release(x);
		return;
	}
	int64_t now = s0__real_monotonic_ms();
	if (now >= x->keepalive_at) {
		if (x->out.len == x->out_pos && s0__buf_puts(&x->out, ": keep-alive\n\n") == 0)
			resume(x);
		x->keepalive_at = now + S0__SSE_KEEPALIVE_MS;
	}
	if (x->retry_ms > 0) { /* the stream asked to be pulled again then */
		x->pull_at = now + x->retry_ms;
		x->retry_ms = 0;
	} else if (events & (S0__LOOP_SIGNAL | S0__LOOP_TIMEOUT) &&
	           (!x->pull_at || now >= x->pull_at || !(events & S0__LOOP_TIMEOUT))) {
		x->pull_at = 0;
		schedule_pull(x); /* a kick, a due retry, or the keep-alive's look */
	}
	int64_t due = x->pull_at && x->pull_at < x->keepalive_at ? x->pull_at : x->keepalive_at;
	s0__loop_set(src, 0, due);
	pthread_mutex_unlock(&x->mu);
}

static ssize_t reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	s0__sse *x = cls;
	pthread_mutex_lock(&x->mu);
	size_t avail = x->out.len - x->out_pos;
	ssize_t n = 0;
	if (avail) {
		n = (ssize_t)(avail < max ? avail : max);
		memcpy(buf, x->out.data + x->out_pos, (size_t)n);
		x->out_pos += (size_t)n;
		if (x->out_pos == x->out.len)
			x->out.len = x->out_pos = 0;
		if (x->src) /* room again: the stream may have more */
			s0__loop_signal(x->src);
	} else if (x->done) {
		n = MHD_CONTENT_READER_END_OF_STREAM;
	} else {
		x->suspended = true;
		MHD_suspend_connection(x->conn);
	}
	pthread_mutex_unlock(&x->mu);
	return n;
}

static void reader_free(void *cls)
{
	s0__sse *x = cls;
	pthread_mutex_lock(&x->mu);
	x->gone = true;
	x->done = true;
	x->suspended = false;
	if (x->src)
		s0__loop_signal(x->src);
	release(x);
}

struct MHD_Response *s0__sse_response(s0__sse *x)
{
	struct MHD_Response *mr =
		MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, reader, x, reader_free);
	if (mr) {
		pthread_mutex_lock(&x->mu);
		x->started = true;
		pthread_mutex_unlock(&x->mu);
	}
	return mr;
}

void s0__sse_discard(s0__sse *x)
{
	if (!x)
		return;
	pthread_mutex_lock(&x->mu);
	x->done = true;
	if (x->src) /* its callback removes it and frees x */
		s0__loop_signal(x->src);
	x->gone = true;
	release(x);
}

/* The WebSocket form of the request: …/sessions/{id}/ws?after=N. */
static int ws_request(const s0__sreq *r, s0__http_request *req, char **path, s0__buf *query)
{
	size_t n = strlen(r->path) - (sizeof SUFFIX - 1);
	*path = s0__asprintf("%.*s/ws", (int)n, r->path);
	bool present = false;
	char *after = r->query ? s0__query_get(r->query, "after", &present) : NULL;
	const char *last = s0__headers_get(&r->hdrs, "Last-Event-ID");
	int bad = !*path;
	if (!bad && (present || last)) /* Last-Event-ID wins (the SDKs' reconnect) */
		bad = s0__query_add(query, "after", last ? last : after ? after : "");
	if (!bad)
		bad = s0__buf_put(query, "", 1);
	free(after);
	*req = (s0__http_request){.method = "GET", .path = *path,
	                          .query = query->len > 1 ? query->data : NULL,
	                          .headers = r->hdrs};
	return bad ? S0_ENOMEM : S0_OK;
}

void s0__sse_run(s0__sreq *r)
{
	s0_server *s = r->s;
	s0__sse *x = calloc(1, sizeof *x);
	char *path = NULL;
	s0__buf query = {0};
	s0__http_request req;
	int rc = x ? ws_request(r, &req, &path, &query) : S0_ENOMEM;
	if (rc == S0_OK) {
		x->s = s;
		x->conn = r->conn;
		pthread_mutex_init(&x->mu, NULL);
		s0__server_call call = {.team_id = r->team, .request_id = r->rid};
		rc = s->cfg.streams->open(s->cfg.streams->ctx, &call, &req, kick, x, &x->st,
		                          &r->resp);
	}
	free(path);
	s0__buf_free(&query);
	if (rc == S0_OK && !x->st) { /* refused: resp holds the answer */
		pthread_mutex_destroy(&x->mu);
		free(x);
		return;
	}
	if (rc == S0_OK && s0__buf_puts(&x->out, ": stream open\n\n") < 0)
		rc = S0_ENOMEM;
	if (rc == S0_OK) {
		pthread_mutex_lock(&x->mu);
		x->keepalive_at = s0__real_monotonic_ms() + S0__SSE_KEEPALIVE_MS;
		rc = s0__loop_add(s->loop, -1, 0, x->keepalive_at, on_loop, x, &x->src);
		if (rc == S0_OK)
			s0__loop_signal(x->src); /* the replay */
		pthread_mutex_unlock(&x->mu);
	}
	if (rc < 0) {
		if (x && x->st)
			s->cfg.streams->free(x->st);
		if (x) {
			s0__buf_free(&x->out);
			pthread_mutex_destroy(&x->mu);
		}
		free(x);
		s0__http_response_free(&r->resp);
		memset(&r->resp, 0, sizeof r->resp);
		int unavailable = rc == S0_EUNAVAILABLE;
		s0__router_reply_error(&r->resp, r->rid, unavailable ? 503 : 500,
		                       unavailable ? "unavailable" : "internal_error",
		                       unavailable ? "too many open streams; retry" : "out of memory");
		if (unavailable)
			s0__headers_add(&r->resp.headers, "Retry-After", "1");
		return;
	}
	r->sse = x;
	r->resp.status = 200;
	if (s0__headers_add(&r->resp.headers, "Content-Type", "text/event-stream") < 0 ||
	    s0__headers_add(&r->resp.headers, "Cache-Control", "no-cache") < 0 ||
	    s0__headers_add(&r->resp.headers, "X-Request-ID", r->rid) < 0)
		r->resp.status = 0; /* 500, and conn.c discards r->sse */
}
