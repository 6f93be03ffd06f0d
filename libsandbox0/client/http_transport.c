/*
 * The libcurl transport.
 *
 * Threads: one CURLSH shares DNS and TLS sessions between all threads under
 * per-data mutexes. Connections are NOT shared through it: libcurl does not
 * support a connection cache shared by concurrent threads (CURLSHOPT_SHARE:
 * "It is not supported to share connections between multiple concurrent
 * threads"; curl KNOWN_BUGS "A shared connection cache is not thread-safe",
 * curl issues #4915, #9404). Instead each exchange borrows a (multi, easy)
 * pair from a small pool: the pair is used by one thread at a time, its
 * multi handle keeps its own keep-alive connections between exchanges, and
 * a cancel token wakes it with curl_multi_wakeup() (docs/decisions.md "Wait
 * helpers").
 *
 * Replays: libcurl silently resends a request whose reused keep-alive
 * connection died before any response byte arrived. That is fine for GET,
 * PUT and DELETE, but a POST (claim, pause, resume, fork…) may already have
 * reached the server, and docs/wire.md §1.3 / docs/decisions.md allow no automatic
 * repeat of it. A POST therefore always goes on a fresh connection (where
 * libcurl never replays), unless it carries an Idempotency-Key, which makes
 * a replay safe (the rule Go's net/http follows).
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cancel.h"
#include "client/stream_vt.h"
#include "client/transport.h"

/* Idle (multi, easy) pairs kept for reuse; more are made on demand. */
#define POOL_MAX_IDLE 16

typedef struct conn_slot {
	CURLM *multi;
	CURL *easy;
	struct conn_slot *next;
} conn_slot;

typedef struct http_ctx {
	char *base_url;
	int64_t connect_timeout_ms;
	bool insecure;
	char *ca_file;
	char *proxy;
	CURLSH *share;
	pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
	pthread_mutex_t pool_mu;
	conn_slot *idle;
	size_t n_idle;
} http_ctx;

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access a, void *p)
{
	(void)h;
	(void)a;
	http_ctx *x = p;
	pthread_mutex_lock(&x->locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *p)
{
	(void)h;
	http_ctx *x = p;
	pthread_mutex_unlock(&x->locks[data]);
}

static void slot_free(conn_slot *s)
{
	if (!s)
		return;
	if (s->multi)
		curl_multi_cleanup(s->multi);
	if (s->easy)
		curl_easy_cleanup(s->easy);
	free(s);
}

/* A pair for one exchange: an idle one (reset), or a new one. NULL on OOM. */
static conn_slot *slot_get(http_ctx *x)
{
	pthread_mutex_lock(&x->pool_mu);
	conn_slot *s = x->idle;
	if (s) {
		x->idle = s->next;
		x->n_idle--;
	}
	pthread_mutex_unlock(&x->pool_mu);
	if (s) {
		s->next = NULL;
		curl_easy_reset(s->easy);
		return s;
	}
	s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->multi = curl_multi_init();
	s->easy = curl_easy_init();
	if (!s->multi || !s->easy) {
		slot_free(s);
		return NULL;
	}
	return s;
}

static void slot_put(http_ctx *x, conn_slot *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&x->pool_mu);
	bool keep = x->n_idle < POOL_MAX_IDLE;
	if (keep) {
		s->next = x->idle;
		x->idle = s;
		x->n_idle++;
	}
	pthread_mutex_unlock(&x->pool_mu);
	if (!keep)
		slot_free(s);
}

static void http_free(void *ctx)
{
	http_ctx *x = ctx;
	if (!x)
		return;
	/* the pairs reference the share handle: they go first */
	for (conn_slot *s = x->idle, *n; s; s = n) {
		n = s->next;
		slot_free(s);
	}
	if (x->share)
		curl_share_cleanup(x->share);
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_destroy(&x->locks[i]);
	pthread_mutex_destroy(&x->pool_mu);
	free(x->base_url);
	free(x->ca_file);
	free(x->proxy);
	free(x);
}

int s0__http_transport_new(const s0__http_transport_config *cfg, void **ctx_out, s0_error **err)
{
	http_ctx *x = calloc(1, sizeof *x);
	if (!x)
		return s0__error_nomem(err);
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&x->locks[i], NULL);
	pthread_mutex_init(&x->pool_mu, NULL);
	x->base_url = s0__strdup(cfg->base_url);
	x->connect_timeout_ms = cfg->connect_timeout_ms;
	x->insecure = cfg->insecure_skip_verify;
	x->ca_file = s0__strdup(cfg->ca_file);
	x->proxy = s0__strdup(cfg->proxy);
	x->share = curl_share_init();
	if (!x->base_url || !x->share || (cfg->ca_file && !x->ca_file) ||
	    (cfg->proxy && !x->proxy)) {
		http_free(x);
		return s0__error_nomem(err);
	}
	curl_share_setopt(x->share, CURLSHOPT_LOCKFUNC, share_lock);
	curl_share_setopt(x->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
	curl_share_setopt(x->share, CURLSHOPT_USERDATA, x);
	curl_share_setopt(x->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
	curl_share_setopt(x->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
	*ctx_out = x;
	return S0_OK;
}

typedef struct exchange {
	s0__http_response *resp;
	const s0__http_request *req;
	size_t read_off;
	bool oom;
} exchange;

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
	exchange *ex = ud;
	if (s0__buf_put(&ex->resp->body, p, sz * n) < 0) {
		ex->oom = true;
		return 0;
	}
	return sz * n;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
	exchange *ex = ud;
	size_t len = sz * n;
	if (len >= 5 && !strncmp(p, "HTTP/", 5)) {
		s0__headers_free(&ex->resp->headers); /* a new response (after 100/redirect) */
		return len;
	}
	const char *colon = memchr(p, ':', len);
	if (!colon)
		return len;
	char *name = s0__strndup(p, (size_t)(colon - p));
	const char *v = colon + 1, *end = p + len;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
		end--;
	char *value = s0__strndup(v, (size_t)(end - v));
	if (!name || !value || s0__headers_add(&ex->resp->headers, name, value) < 0)
		ex->oom = true;
	free(name);
	free(value);
	return ex->oom ? 0 : len;
}

static size_t on_read(char *buf, size_t sz, size_t n, void *ud)
{
	exchange *ex = ud;
	size_t left = ex->req->body_len - ex->read_off;
	size_t take = sz * n < left ? sz * n : left;
	if (take)
		memcpy(buf, (const char *)ex->req->body + ex->read_off, take);
	ex->read_off += take;
	return take;
}

static struct curl_slist *build_headers(const s0__http_request *req, bool *oom)
{
	struct curl_slist *list = NULL, *t;
	for (size_t i = 0; i < req->headers.len; i++) {
		char *line = s0__asprintf("%s: %s", req->headers.items[i].name,
		                          req->headers.items[i].value);
		if (!line || !(t = curl_slist_append(list, line))) {
			free(line);
			*oom = true;
			return list;
		}
		list = t;
		free(line);
	}
	/* never let curl add "Expect: 100-continue" on uploads */
	if ((t = curl_slist_append(list, "Expect:")))
		list = t;
	else
		*oom = true;
	/* a request without a body has no Content-Type: stop curl from adding
	 * application/x-www-form-urlencoded to a body-less POST (CL-09) */
	if (!req->has_body) {
		if ((t = curl_slist_append(list, "Content-Type:")))
			list = t;
		else
			*oom = true;
	}
	return list;
}

static void setup_easy(CURL *h, http_ctx *x, const s0__http_request *req, const char *url,
                       struct curl_slist *hdrs, int64_t timeout_ms, exchange *ex)
{
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_SHARE, x->share);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, ex);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, ex);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)x->connect_timeout_ms);
	if (timeout_ms > 0)
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (x->insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (x->ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, x->ca_file);
	if (x->proxy)
		curl_easy_setopt(h, CURLOPT_PROXY, x->proxy);
	/* no silent replay of a POST on a dead keep-alive connection (see top) */
	if (!strcmp(req->method, "POST") && !s0__headers_get(&req->headers, "Idempotency-Key"))
		curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
	if (!strcmp(req->method, "GET")) {
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	} else if (req->has_body) {
		curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(h, CURLOPT_READDATA, ex);
		curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)req->body_len);
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req->method);
	} else {
		if (!strcmp(req->method, "POST")) {
			curl_easy_setopt(h, CURLOPT_POST, 1L);
			curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, 0L);
			curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
		}
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req->method);
	}
}

static void wake_multi(void *arg)
{
	curl_multi_wakeup(arg);
}

/* Drive one easy handle to completion in its multi, or until the token fires. */
static int run_multi(CURLM *m, CURL *h, s0_cancel_token *cancel, CURLcode *result)
{
	if (curl_multi_add_handle(m, h) != CURLM_OK)
		return S0_ENOMEM;
	int sub = s0__cancel_subscribe(cancel, wake_multi, m);
	int rc = S0_OK, running = 1;
	*result = CURLE_OK;
	while (running) {
		if (s0_cancel_token_is_canceled(cancel)) {
			rc = S0_ECANCELED;
			break;
		}
		CURLMcode mc = curl_multi_perform(m, &running);
		if (mc != CURLM_OK) {
			*result = CURLE_SEND_ERROR;
			break;
		}
		if (!running)
			break;
		/* poll in short slices even with a subscription: robust against
		 * tokens that could not allocate one */
		curl_multi_poll(m, NULL, 0, sub ? 1000 : 50, NULL);
	}
	int left;
	CURLMsg *msg;
	while (rc == S0_OK && (msg = curl_multi_info_read(m, &left)))
		if (msg->msg == CURLMSG_DONE)
			*result = msg->data.result;
	s0__cancel_unsubscribe(cancel, sub);
	curl_multi_remove_handle(m, h);
	return rc;
}

static int http_send(void *ctx, const s0__http_request *req, int64_t timeout_ms,
                     s0_cancel_token *cancel, s0__http_response *resp, bool *sent,
                     s0_error **err)
{
	http_ctx *x = ctx;
	*sent = false;
	s0__buf url = S0__BUF_INIT;
	if (s0__buf_puts(&url, x->base_url) < 0 || s0__buf_puts(&url, req->path) < 0 ||
	    (req->query && *req->query &&
	     (s0__buf_puts(&url, "?") < 0 || s0__buf_puts(&url, req->query) < 0))) {
		s0__buf_free(&url);
		return s0__error_nomem(err);
	}
	conn_slot *slot = slot_get(x);
	CURL *h = slot ? slot->easy : NULL;
	bool oom = false;
	struct curl_slist *hdrs = build_headers(req, &oom);
	exchange ex = {resp, req, 0, false};
	int rc = S0_OK;
	if (!h || oom) {
		rc = s0__error_nomem(err);
		goto out;
	}
	setup_easy(h, x, req, url.data, hdrs, timeout_ms, &ex);
	CURLcode cr;
	rc = run_multi(slot->multi, h, cancel, &cr);
	curl_off_t reqsize = 0;
	curl_easy_getinfo(h, CURLINFO_REQUEST_SIZE, &reqsize);
	*sent = reqsize > 0;
	if (rc == S0_ECANCELED) {
		rc = s0__error_set(err, S0_ECANCELED, "canceled", "%s %s canceled", req->method,
		                   req->path);
	} else if (rc < 0 || ex.oom) {
		rc = s0__error_nomem(err);
	} else if (cr != CURLE_OK) {
		char reason[32];
		snprintf(reason, sizeof reason, "curl:%d", (int)cr);
		rc = s0__error_set(err, S0_ETRANSPORT, reason, "%s %s: %s", req->method, url.data,
		                   curl_easy_strerror(cr));
	} else {
		long status = 0;
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
		resp->status = (int)status;
	}
out:
	if (h) /* drop references to this exchange's buffers before the handle idles */
		curl_easy_reset(h);
	slot_put(x, slot);
	curl_slist_free_all(hdrs);
	s0__buf_free(&url);
	return rc;
}

static int http_open_stream(void *ctx, struct s0_client *c, const s0_stream_options *o,
                            s0_stream **out, s0_error **err)
{
	(void)ctx;
	return s0__ws_client_open(c, o, out, err);
}

const s0__transport_ops s0__http_transport_ops = {.name = "http", .send = http_send, .free = http_free,
                                                 .open_stream = http_open_stream};
