/* The scripted HTTP responder of responder.h, on libmicrohttpd. */
#include "responder.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define MAX_CONNECTIONS 256
#define MAX_RECORDED_BODY (256u * 1024 * 1024)
#define MAX_HOLD_MS 60000

struct s0t_reply {
	s0t_responder *owner;
	int status;
	char *content_type;
	size_t n_headers;
	char **hnames, **hvalues;
	unsigned char *body;
	size_t body_len;
	int delay_ms;
	bool stall, drop, truncate;
	size_t truncate_at;
	char *expect_method, *expect_path;
	s0t_reply *next;
};

struct s0t_responder {
	struct MHD_Daemon *d;
	unsigned port;
	char url[64];
	pthread_mutex_t mu;
	pthread_cond_t cv; /* requests arrived, release, stop */
	s0t_reply *head, *tail; /* queue */
	s0t_reply *used;        /* taken replies, freed at the end */
	s0t_reply *def;         /* default template, or NULL */
	s0t_request **reqs;
	size_t n_reqs, cap_reqs;
	size_t count; /* requests received (recorded or not) */
	size_t base_reqs, base_count; /* what s0t_responder_clear() hid */
	size_t unscripted, mismatches;
	uint64_t release_gen;
	bool stopping;
	bool record;
};

/* Per-request state, made by the URI log callback. */
typedef struct req_state {
	s0t_request *q;
	size_t cap_body;
	bool started;
	bool oversized;
} req_state;

/* ---- small helpers ---- */

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static char *xstrndup(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static void deadline_after(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static void request_free(s0t_request *q)
{
	if (!q)
		return;
	free(q->method);
	free(q->path);
	free(q->query);
	for (size_t i = 0; i < q->n_headers; i++) {
		free(q->header_names[i]);
		free(q->header_values[i]);
	}
	free(q->header_names);
	free(q->header_values);
	free(q->body);
	free(q);
}

static void reply_free(s0t_reply *rep)
{
	if (!rep)
		return;
	free(rep->content_type);
	for (size_t i = 0; i < rep->n_headers; i++) {
		free(rep->hnames[i]);
		free(rep->hvalues[i]);
	}
	free(rep->hnames);
	free(rep->hvalues);
	free(rep->body);
	free(rep->expect_method);
	free(rep->expect_path);
	free(rep);
}

static s0t_reply *reply_make(int status, const char *content_type, const void *body, size_t len)
{
	s0t_reply *rep = calloc(1, sizeof *rep);
	if (!rep)
		abort();
	rep->status = status;
	rep->content_type = xstrdup(content_type);
	if (len == (size_t)-1)
		len = body ? strlen(body) : 0;
	rep->body = malloc(len + 1);
	if (!rep->body)
		abort();
	if (len)
		memcpy(rep->body, body, len);
	rep->body[len] = '\0';
	rep->body_len = len;
	return rep;
}

/* ---- MHD callbacks ---- */

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	(void)cls;
	(void)conn;
	req_state *st = calloc(1, sizeof *st);
	if (!st)
		return NULL;
	st->q = calloc(1, sizeof *st->q);
	if (!st->q) {
		free(st);
		return NULL;
	}
	const char *qm = strchr(uri, '?');
	st->q->path = qm ? xstrndup(uri, (size_t)(qm - uri)) : xstrdup(uri);
	st->q->query = qm ? xstrdup(qm + 1) : NULL;
	return st;
}

static enum MHD_Result on_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
	(void)kind;
	s0t_request *q = cls;
	char **n = realloc(q->header_names, (q->n_headers + 1) * sizeof *n);
	if (n)
		q->header_names = n;
	char **v = realloc(q->header_values, (q->n_headers + 1) * sizeof *v);
	if (v)
		q->header_values = v;
	if (!n || !v)
		return MHD_NO;
	q->header_names[q->n_headers] = xstrdup(key);
	q->header_values[q->n_headers] = xstrdup(value ? value : "");
	q->n_headers++;
	return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)conn;
	(void)toe;
	req_state *st = *con_cls;
	if (!st)
		return;
	request_free(st->q); /* NULL once handed to the record */
	free(st);
	*con_cls = NULL;
}

typedef struct trunc_src {
	unsigned char *data;
	size_t n; /* bytes to send before failing */
} trunc_src;

static ssize_t trunc_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	trunc_src *t = cls;
	if (pos >= t->n)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	size_t take = t->n - (size_t)pos;
	if (take > max)
		take = max;
	memcpy(buf, t->data + pos, take);
	return (ssize_t)take;
}

static void trunc_free(void *cls)
{
	trunc_src *t = cls;
	free(t->data);
	free(t);
}

/* Wait until the stop flag, a release after gen (when stall) or the deadline. */
static void hold(s0t_responder *r, bool stall, int delay_ms, uint64_t gen)
{
	struct timespec dl;
	deadline_after(&dl, stall ? MAX_HOLD_MS : (delay_ms > MAX_HOLD_MS ? MAX_HOLD_MS : delay_ms));
	pthread_mutex_lock(&r->mu);
	while (!r->stopping && (!stall || r->release_gen == gen))
		if (pthread_cond_timedwait(&r->cv, &r->mu, &dl) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&r->mu);
}

static enum MHD_Result answer(struct MHD_Connection *conn, const s0t_reply *rep, int status,
                              const char *ctype, const void *body, size_t len)
{
	struct MHD_Response *resp;
	if (rep && rep->truncate && rep->truncate_at < len) {
		trunc_src *t = malloc(sizeof *t);
		if (!t)
			return MHD_NO;
		t->data = malloc(len ? len : 1);
		if (!t->data) {
			free(t);
			return MHD_NO;
		}
		memcpy(t->data, body, len);
		t->n = rep->truncate_at;
		resp = MHD_create_response_from_callback(len, 4096, trunc_read, t, trunc_free);
	} else {
		resp = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	}
	if (!resp)
		return MHD_NO;
	if (ctype)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	for (size_t i = 0; rep && i < rep->n_headers; i++)
		MHD_add_response_header(resp, rep->hnames[i], rep->hvalues[i]);
	enum MHD_Result ret = MHD_queue_response(conn, (unsigned)status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result answer_error(struct MHD_Connection *conn, const char *code,
                                    const s0t_request *q)
{
	char body[1024];
	snprintf(body, sizeof body,
	         "{\"success\":false,\"error\":{\"code\":\"%s\",\"message\":\"%s %.400s\"}}", code,
	         q ? q->method : "?", q ? q->path : "?");
	return answer(conn, NULL, 599, "application/json", body, strlen(body));
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
	(void)url;
	(void)version;
	s0t_responder *r = cls;
	req_state *st = *con_cls;
	if (!st || !st->q)
		return MHD_NO;
	s0t_request *q = st->q;
	if (!st->started) {
		st->started = true;
		q->method = xstrdup(method);
		MHD_get_connection_values(conn, MHD_HEADER_KIND, on_header, q);
		return MHD_YES;
	}
	if (*upload_data_size) {
		size_t n = *upload_data_size;
		*upload_data_size = 0;
		if (st->oversized || q->body_len + n > MAX_RECORDED_BODY) {
			st->oversized = true;
			return MHD_YES;
		}
		if (q->body_len + n + 1 > st->cap_body) {
			size_t cap = st->cap_body ? st->cap_body : 4096;
			while (cap < q->body_len + n + 1)
				cap *= 2;
			unsigned char *b = realloc(q->body, cap);
			if (!b)
				return MHD_NO;
			q->body = b;
			st->cap_body = cap;
		}
		memcpy(q->body + q->body_len, upload_data, n);
		q->body_len += n;
		return MHD_YES;
	}
	if (!q->body) {
		q->body = malloc(1);
		if (!q->body)
			return MHD_NO;
	}
	q->body[q->body_len] = '\0';

	/* The request is complete: record it and take a reply. */
	pthread_mutex_lock(&r->mu);
	q->seq = r->count++;
	if (r->record && r->n_reqs == r->cap_reqs) {
		size_t cap = r->cap_reqs ? r->cap_reqs * 2 : 32;
		s0t_request **a = realloc(r->reqs, cap * sizeof *a);
		if (a) {
			r->reqs = a;
			r->cap_reqs = cap;
		}
	}
	if (r->record && r->n_reqs < r->cap_reqs) {
		r->reqs[r->n_reqs++] = q;
		st->q = NULL; /* owned by the record now */
	}
	s0t_reply *rep = r->head;
	if (rep) {
		r->head = rep->next;
		if (!r->head)
			r->tail = NULL;
		rep->next = r->used;
		r->used = rep;
	}
	const s0t_reply *def = r->def;
	bool mismatch = rep && ((rep->expect_method && strcmp(rep->expect_method, q->method)) ||
	                        (rep->expect_path && strcmp(rep->expect_path, q->path)));
	if (mismatch)
		r->mismatches++;
	if (!rep && !def)
		r->unscripted++;
	uint64_t gen = r->release_gen;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);

	if (mismatch)
		return answer_error(conn, "responder_mismatch", q);
	if (!rep && !def)
		return answer_error(conn, "responder_unscripted", q);
	const s0t_reply *use = rep ? rep : def;
	if (use->delay_ms > 0 || use->stall)
		hold(r, use->stall, use->delay_ms, gen);
	if (use->drop)
		return MHD_NO;
	return answer(conn, use, use->status, use->content_type, use->body, use->body_len);
}

/* ---- lifecycle ---- */

s0t_responder *s0t_responder_new(void)
{
	s0t_responder *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, &ca);
	pthread_condattr_destroy(&ca);
	r->record = true;
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = 0;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	r->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
	                            MHD_USE_POLL,
	                        0, NULL, NULL, on_request, r, MHD_OPTION_SOCK_ADDR,
	                        (struct sockaddr *)&sa, MHD_OPTION_URI_LOG_CALLBACK, on_uri, r,
	                        MHD_OPTION_NOTIFY_COMPLETED, on_completed, r,
	                        MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
	                        MHD_OPTION_CONNECTION_TIMEOUT, 120u, MHD_OPTION_END);
	if (!r->d) {
		pthread_mutex_destroy(&r->mu);
		pthread_cond_destroy(&r->cv);
		free(r);
		return NULL;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(r->d, MHD_DAEMON_INFO_BIND_PORT);
	r->port = info ? info->port : 0;
	snprintf(r->url, sizeof r->url, "http://127.0.0.1:%u", r->port);
	return r;
}

void s0t_responder_free(s0t_responder *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->mu);
	r->stopping = true;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	MHD_stop_daemon(r->d);
	for (s0t_reply *p = r->head, *n; p; p = n) {
		n = p->next;
		reply_free(p);
	}
	for (s0t_reply *p = r->used, *n; p; p = n) {
		n = p->next;
		reply_free(p);
	}
	reply_free(r->def);
	for (size_t i = 0; i < r->n_reqs; i++)
		request_free(r->reqs[i]);
	free(r->reqs);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
	free(r);
}

const char *s0t_responder_url(const s0t_responder *r)
{
	return r->url;
}

unsigned s0t_responder_port(const s0t_responder *r)
{
	return r->port;
}

/* ---- scripting ---- */

static s0t_reply *enqueue(s0t_responder *r, s0t_reply *rep)
{
	rep->owner = r;
	pthread_mutex_lock(&r->mu);
	if (r->tail)
		r->tail->next = rep;
	else
		r->head = rep;
	r->tail = rep;
	pthread_mutex_unlock(&r->mu);
	return rep;
}

s0t_reply *s0t_push(s0t_responder *r, int status, const char *content_type, const void *body,
                    size_t len)
{
	return enqueue(r, reply_make(status, content_type, body, len));
}

s0t_reply *s0t_push_json(s0t_responder *r, int status, const char *json)
{
	return s0t_push(r, status, "application/json", json, (size_t)-1);
}

s0t_reply *s0t_push_ok(s0t_responder *r, int status, const char *data_json)
{
	size_t n = 64 + (data_json ? strlen(data_json) : 0);
	char *b = malloc(n);
	if (!b)
		abort();
	if (data_json)
		snprintf(b, n, "{\"success\":true,\"data\":%s}", data_json);
	else
		snprintf(b, n, "{\"success\":true}");
	s0t_reply *rep = s0t_push_json(r, status, b);
	free(b);
	return rep;
}

s0t_reply *s0t_push_error(s0t_responder *r, int status, const char *code, const char *message)
{
	cJSON *root = cJSON_CreateObject(), *e = cJSON_CreateObject();
	cJSON_AddBoolToObject(root, "success", 0);
	if (code)
		cJSON_AddStringToObject(e, "code", code);
	if (message)
		cJSON_AddStringToObject(e, "message", message);
	cJSON_AddItemToObject(root, "error", e);
	char *b = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	s0t_reply *rep = s0t_push_json(r, status, b);
	free(b);
	return rep;
}

s0t_reply *s0t_push_drop(s0t_responder *r)
{
	s0t_reply *rep = reply_make(0, NULL, NULL, 0);
	rep->drop = true;
	return enqueue(r, rep);
}

void s0t_reply_header(s0t_reply *rep, const char *name, const char *value)
{
	s0t_responder *r = rep->owner;
	if (r)
		pthread_mutex_lock(&r->mu);
	char **n = realloc(rep->hnames, (rep->n_headers + 1) * sizeof *n);
	char **v = n ? realloc(rep->hvalues, (rep->n_headers + 1) * sizeof *v) : NULL;
	if (!n || !v)
		abort();
	rep->hnames = n;
	rep->hvalues = v;
	rep->hnames[rep->n_headers] = xstrdup(name);
	rep->hvalues[rep->n_headers] = xstrdup(value);
	rep->n_headers++;
	if (r)
		pthread_mutex_unlock(&r->mu);
}

void s0t_reply_delay(s0t_reply *rep, int ms)
{
	pthread_mutex_lock(&rep->owner->mu);
	rep->delay_ms = ms;
	pthread_mutex_unlock(&rep->owner->mu);
}

void s0t_reply_stall(s0t_reply *rep)
{
	pthread_mutex_lock(&rep->owner->mu);
	rep->stall = true;
	pthread_mutex_unlock(&rep->owner->mu);
}

void s0t_reply_truncate(s0t_reply *rep, size_t n)
{
	pthread_mutex_lock(&rep->owner->mu);
	rep->truncate = true;
	rep->truncate_at = n;
	pthread_mutex_unlock(&rep->owner->mu);
}

void s0t_reply_expect(s0t_reply *rep, const char *method, const char *path)
{
	pthread_mutex_lock(&rep->owner->mu);
	free(rep->expect_method);
	free(rep->expect_path);
	rep->expect_method = xstrdup(method);
	rep->expect_path = xstrdup(path);
	pthread_mutex_unlock(&rep->owner->mu);
}

void s0t_responder_set_default(s0t_responder *r, int status, const char *content_type,
                               const char *body)
{
	s0t_reply *rep = reply_make(status, content_type, body, (size_t)-1);
	rep->owner = r;
	pthread_mutex_lock(&r->mu);
	s0t_reply *old = r->def;
	r->def = rep;
	if (old) { /* a handler may still read it: keep it until the end */
		old->next = r->used;
		r->used = old;
	}
	pthread_mutex_unlock(&r->mu);
}

void s0t_responder_release(s0t_responder *r)
{
	pthread_mutex_lock(&r->mu);
	r->release_gen++;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

size_t s0t_responder_pending(s0t_responder *r)
{
	size_t n = 0;
	pthread_mutex_lock(&r->mu);
	for (s0t_reply *p = r->head; p; p = p->next)
		n++;
	pthread_mutex_unlock(&r->mu);
	return n;
}

size_t s0t_responder_unscripted(s0t_responder *r)
{
	pthread_mutex_lock(&r->mu);
	size_t n = r->unscripted;
	pthread_mutex_unlock(&r->mu);
	return n;
}

size_t s0t_responder_mismatches(s0t_responder *r)
{
	pthread_mutex_lock(&r->mu);
	size_t n = r->mismatches;
	pthread_mutex_unlock(&r->mu);
	return n;
}

void s0t_responder_set_record(s0t_responder *r, bool record)
{
	pthread_mutex_lock(&r->mu);
	r->record = record;
	pthread_mutex_unlock(&r->mu);
}

/* ---- observing ---- */

size_t s0t_responder_count(s0t_responder *r)
{
	pthread_mutex_lock(&r->mu);
	size_t n = r->count - r->base_count;
	pthread_mutex_unlock(&r->mu);
	return n;
}

const s0t_request *s0t_responder_req(s0t_responder *r, size_t i)
{
	pthread_mutex_lock(&r->mu);
	const s0t_request *q = r->base_reqs + i < r->n_reqs ? r->reqs[r->base_reqs + i] : NULL;
	pthread_mutex_unlock(&r->mu);
	return q;
}

const s0t_request *s0t_responder_last(s0t_responder *r)
{
	pthread_mutex_lock(&r->mu);
	const s0t_request *q = r->n_reqs > r->base_reqs ? r->reqs[r->n_reqs - 1] : NULL;
	pthread_mutex_unlock(&r->mu);
	return q;
}

bool s0t_responder_wait(s0t_responder *r, size_t n, int timeout_ms)
{
	struct timespec dl;
	deadline_after(&dl, timeout_ms);
	pthread_mutex_lock(&r->mu);
	while (r->count - r->base_count < n)
		if (pthread_cond_timedwait(&r->cv, &r->mu, &dl) == ETIMEDOUT)
			break;
	bool ok = r->count - r->base_count >= n;
	pthread_mutex_unlock(&r->mu);
	return ok;
}

void s0t_responder_clear(s0t_responder *r)
{
	/* Recorded requests stay allocated until the end: callers may hold them. */
	pthread_mutex_lock(&r->mu);
	r->base_reqs = r->n_reqs;
	r->base_count = r->count;
	pthread_mutex_unlock(&r->mu);
}

const char *s0t_req_header(const s0t_request *q, const char *name)
{
	for (size_t i = 0; q && i < q->n_headers; i++)
		if (!strcasecmp(q->header_names[i], name))
			return q->header_values[i];
	return NULL;
}

size_t s0t_req_header_count(const s0t_request *q, const char *name)
{
	size_t n = 0;
	for (size_t i = 0; q && i < q->n_headers; i++)
		n += !strcasecmp(q->header_names[i], name);
	return n;
}

bool s0t_req_json_eq(const s0t_request *q, const char *expected)
{
	if (!q || !q->body_len)
		return false;
	cJSON *a = cJSON_ParseWithLength((const char *)q->body, q->body_len);
	cJSON *b = cJSON_Parse(expected);
	bool eq = a && b && cJSON_Compare(a, b, 1);
	cJSON_Delete(a);
	cJSON_Delete(b);
	return eq;
}

bool s0t_req_body_is(const s0t_request *q, const char *s)
{
	size_t n = strlen(s);
	return q && q->body_len == n && (!n || !memcmp(q->body, s, n));
}
