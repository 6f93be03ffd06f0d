/*
 * The HTTP transport's streams (sandbox0/streams.h): a WebSocket client
 * (RFC 6455) to the server's routes of docs/wire.md §8.2. The URL is taken
 * apart by libcurl's URL API, the handshake's answer parsed by http-parser,
 * frames made and read by wslay, the accept key checked with GnuTLS's SHA-1;
 * Debian's libcurl speaks no WebSocket. One thread at a time per stream: the
 * caller's, blocking in poll() for what it waits for.
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <http_parser.h>
#include <netdb.h>
#include <poll.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>
#include <wslay/wslay.h>

#include "client/client_internal.h"
#include "client/stream_vt.h"
#include "common/msgq.h"
#include "common/wsio.h"

#define HEAD_MAX ((size_t)64 << 10)   /* the handshake's answer, head and error body */
#define MSG_MAX ((size_t)64 << 20)    /* largest server message accepted */
#define OPEN_TIMEOUT_MS 60000         /* when the client has no request timeout */

typedef struct wsc {
	s0_stream base;
	int fd;
	wslay_event_context_ptr ctx;
	s0__smsgq inbox;
	char *extra; /* bytes read past the handshake */
	size_t extra_len, extra_off;
	int close_code; /* 0 while open */
	char reason[128];
	bool failed; /* a socket error: no more I/O */
} wsc;

static const s0__stream_vt wsc_vt;

/* ---- connecting ---- */

typedef struct target {
	char *host, *port, *path; /* path: the base URL's, no trailing slash */
} target;

static void target_free(target *t)
{
	curl_free(t->host);
	curl_free(t->port);
	curl_free(t->path);
}

static int parse_base(const char *base, target *t, s0_error **err)
{
	CURLU *u = curl_url();
	char *scheme = NULL;
	int rc = u && curl_url_set(u, CURLUPART_URL, base, 0) == CURLUE_OK &&
	                 curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	                 curl_url_get(u, CURLUPART_HOST, &t->host, 0) == CURLUE_OK &&
	                 curl_url_get(u, CURLUPART_PORT, &t->port, CURLU_DEFAULT_PORT) == CURLUE_OK &&
	                 curl_url_get(u, CURLUPART_PATH, &t->path, 0) == CURLUE_OK
	             ? S0_OK
	             : s0__error_set(err, S0_EINVAL, "invalid_argument", "cannot parse %s", base);
	if (rc == S0_OK && strcasecmp(scheme, "http"))
		rc = s0__error_set(err, S0_EUNSUPPORTED, "unsupported",
		                   "streams need an http:// base URL (no TLS WebSocket client)");
	if (rc == S0_OK) { /* a bracketed IPv6 literal is given without brackets to getaddrinfo */
		size_t n = strlen(t->host);
		if (n > 2 && t->host[0] == '[' && t->host[n - 1] == ']') {
			memmove(t->host, t->host + 1, n - 2);
			t->host[n - 2] = '\0';
		}
		size_t p = strlen(t->path);
		while (p > 0 && t->path[p - 1] == '/')
			t->path[--p] = '\0';
	}
	curl_free(scheme);
	curl_url_cleanup(u);
	return rc;
}

/* Wait for events on fd up to ms (< 0: no bound); >0 ready, 0 timed out, <0 error. */
static int wait_fd(int fd, short events, int64_t ms)
{
	struct pollfd p = {.fd = fd, .events = events};
	int rc;
	while ((rc = poll(&p, 1, ms < 0 ? -1 : ms > 0x7fffffff ? 0x7fffffff : (int)ms)) < 0 &&
	       errno == EINTR)
		;
	return rc;
}

static int64_t left_ms(int64_t deadline)
{
	if (deadline < 0)
		return -1;
	int64_t l = deadline - s0__real_monotonic_ms();
	return l < 0 ? 0 : l;
}

static int connect_to(const target *t, int64_t deadline, int *fd_out, s0_error **err)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
	int g = getaddrinfo(t->host, t->port, &hints, &res);
	if (g)
		return s0__error_set(err, S0_ETRANSPORT, "connect_failed", "cannot resolve %s: %s",
		                     t->host, gai_strerror(g));
	int fd = -1, e = 0;
	for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
		if (fd < 0)
			continue;
		if (connect(fd, a->ai_addr, a->ai_addrlen) < 0 && errno != EINPROGRESS) {
			e = errno;
			close(fd);
			fd = -1;
			continue;
		}
		socklen_t len = sizeof e;
		if (wait_fd(fd, POLLOUT, left_ms(deadline)) <= 0 ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0 || e) {
			e = e ? e : ETIMEDOUT;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		return s0__error_set(err, S0_ETRANSPORT, "connect_failed", "cannot connect to %s:%s: %s",
		                     t->host, t->port, strerror(e ? e : ECONNREFUSED));
	*fd_out = fd;
	return S0_OK;
}

static int send_all(int fd, const char *p, size_t n, int64_t deadline, s0_error **err)
{
	while (n) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
		if (k > 0) {
			p += k;
			n -= (size_t)k;
			continue;
		}
		if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return s0__error_set(err, S0_ETRANSPORT, "send_failed", "send: %s", strerror(errno));
		if (wait_fd(fd, POLLOUT, left_ms(deadline)) <= 0)
			return s0__error_set(err, S0_ETRANSPORT, "timeout", "the server did not take the request");
	}
	return S0_OK;
}

/* ---- the handshake's answer ---- */

typedef struct answer {
	s0__http_response resp;
	char *field; /* the header name being read */
	bool head_done, done;
} answer;

static int on_field(http_parser *p, const char *at, size_t n)
{
	answer *a = p->data;
	free(a->field);
	a->field = s0__strndup(at, n);
	return a->field ? 0 : -1;
}

static int on_value(http_parser *p, const char *at, size_t n)
{
	answer *a = p->data;
	char *v = s0__strndup(at, n);
	int rc = v && a->field ? s0__headers_add(&a->resp.headers, a->field, v) : -1;
	free(v);
	return rc;
}

static int on_head(http_parser *p)
{
	answer *a = p->data;
	a->head_done = true;
	a->resp.status = (int)p->status_code;
	return p->status_code == 101 ? 2 : 0; /* 2: no body follows an upgrade */
}

static int on_body(http_parser *p, const char *at, size_t n)
{
	answer *a = p->data;
	return s0__buf_put(&a->resp.body, at, n) < 0 ? -1 : 0;
}

static int on_done(http_parser *p)
{
	((answer *)p->data)->done = true;
	return 0;
}

/* Read and parse the answer; the bytes past a 101's head go to w->extra. */
static int read_answer(wsc *w, answer *a, int64_t deadline, s0_error **err)
{
	static const http_parser_settings cbs = {.on_header_field = on_field,
	                                         .on_header_value = on_value,
	                                         .on_headers_complete = on_head,
	                                         .on_body = on_body,
	                                         .on_message_complete = on_done};
	http_parser p;
	http_parser_init(&p, HTTP_RESPONSE);
	p.data = a;
	char buf[4096];
	size_t total = 0;
	for (;;) {
		ssize_t n = recv(w->fd, buf, sizeof buf, 0);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
			if (wait_fd(w->fd, POLLIN, left_ms(deadline)) <= 0)
				return s0__error_set(err, S0_ETRANSPORT, "timeout",
				                     "no answer to the WebSocket handshake");
			continue;
		}
		if (n < 0)
			return s0__error_set(err, S0_ETRANSPORT, "recv_failed", "recv: %s", strerror(errno));
		size_t used = http_parser_execute(&p, &cbs, buf, (size_t)n);
		total += (size_t)n;
		if (a->head_done && a->resp.status == 101) {
			size_t rest = (size_t)n - used;
			if (rest && !(w->extra = malloc(rest)))
				return s0__error_nomem(err);
			if (rest)
				memcpy(w->extra, buf + used, rest);
			w->extra_len = rest;
			return S0_OK;
		}
		if (a->done || (n == 0 && a->head_done))
			return S0_OK;
		if (n == 0 || (p.http_errno != HPE_OK && !p.upgrade) || total > HEAD_MAX)
			return s0__error_set(err, S0_EPROTOCOL, "unexpected_response",
			                     "the server's answer to the WebSocket handshake is not HTTP");
	}
}

static int accept_of(const char *key, char out[29])
{
	static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
	char cat[24 + sizeof guid];
	memcpy(cat, key, 24);
	memcpy(cat + 24, guid, sizeof guid);
	unsigned char sha[20];
	if (gnutls_hash_fast(GNUTLS_DIG_SHA1, cat, 24 + sizeof guid - 1, sha) < 0)
		return -1;
	sodium_bin2base64(out, 29, sha, sizeof sha, sodium_base64_VARIANT_ORIGINAL);
	return 0;
}

/* The upgrade request: our headers as the request path's other calls send them. */
static char *request_text(s0_client *c, const target *t, const char *route, const char *key)
{
	s0__buf b = S0__BUF_INIT;
	char *line = s0__asprintf("GET %s%s HTTP/1.1\r\nHost: %s:%s\r\nUpgrade: websocket\r\n"
	                          "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
	                          "Sec-WebSocket-Version: 13\r\nUser-Agent: %s\r\n",
	                          t->path, route, t->host, t->port, key, c->user_agent);
	int rc = line ? s0__buf_puts(&b, line) : -1;
	free(line);
	if (c->token && !s0__headers_get(&c->extra, "Authorization")) {
		char *h = s0__asprintf("Authorization: Bearer %s\r\n", c->token);
		rc |= h ? s0__buf_puts(&b, h) : -1;
		free(h);
	}
	if (c->team_id && !s0__headers_get(&c->extra, "X-Team-ID")) {
		char *h = s0__asprintf("X-Team-ID: %s\r\n", c->team_id);
		rc |= h ? s0__buf_puts(&b, h) : -1;
		free(h);
	}
	for (size_t i = 0; i < c->extra.len; i++) {
		char *h = s0__asprintf("%s: %s\r\n", c->extra.items[i].name, c->extra.items[i].value);
		rc |= h ? s0__buf_puts(&b, h) : -1;
		free(h);
	}
	rc |= s0__buf_puts(&b, "\r\n");
	if (rc) {
		s0__buf_free(&b);
		return NULL;
	}
	return s0__buf_detach(&b, NULL);
}

/* ---- wslay ---- */

static ssize_t on_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
                       void *user)
{
	(void)flags;
	wsc *w = user;
	return s0__wsio_recv(ctx, w->fd, w->extra, w->extra_len, &w->extra_off, buf, len);
}

static ssize_t on_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags,
                       void *user)
{
	(void)flags;
	wsc *w = user;
	return s0__wsio_send(ctx, w->fd, data, len);
}

static int on_mask(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, void *user)
{
	(void)ctx;
	(void)user;
	randombytes_buf(buf, len);
	return 0;
}

static void on_msg(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg,
                   void *user)
{
	(void)ctx;
	wsc *w = user;
	if (arg->opcode == WSLAY_TEXT_FRAME) {
		if (s0__smsgq_push(&w->inbox, (const char *)arg->msg, arg->msg_length) < 0)
			w->failed = true;
	} else if (arg->opcode == WSLAY_CONNECTION_CLOSE && !w->close_code) {
		w->close_code = arg->status_code ? arg->status_code : 1005;
		size_t n = arg->msg_length > 2 ? arg->msg_length - 2 : 0;
		if (n >= sizeof w->reason)
			n = sizeof w->reason - 1;
		memcpy(w->reason, arg->msg_length > 2 ? (const char *)arg->msg + 2 : "", n);
		w->reason[n] = '\0';
	}
}

/* Send what wslay holds, waiting for the socket up to deadline. */
static int flush(wsc *w, int64_t deadline, s0_error **err)
{
	while (!w->failed && wslay_event_want_write(w->ctx)) {
		if (wslay_event_send(w->ctx) != 0) {
			w->failed = true;
			break;
		}
		if (wslay_event_want_write(w->ctx) && wait_fd(w->fd, POLLOUT, left_ms(deadline)) <= 0)
			return s0__error_set(err, S0_ETRANSPORT, "timeout", "the server does not read");
	}
	return w->failed ? s0__error_set(err, S0_ETRANSPORT, "send_failed", "the connection failed")
	                 : S0_OK;
}

/* ---- the stream ---- */

int s0__ws_client_open(s0_client *c, const s0_stream_options *o, s0_stream **out,
                       s0_error **err)
{
	static const struct wslay_event_callbacks cbs = {on_recv, on_send, on_mask, NULL,
	                                                 NULL,    NULL,    on_msg};
	int64_t tmo = c->request_timeout_ms > 0 ? c->request_timeout_ms : OPEN_TIMEOUT_MS;
	int64_t deadline = s0__real_monotonic_ms() + tmo;
	target t = {0};
	char *route = s0__stream_route(o), *req = NULL;
	wsc *w = calloc(1, sizeof *w);
	answer a = {0};
	unsigned char nonce[16];
	char key[25], want[29];
	randombytes_buf(nonce, sizeof nonce);
	sodium_bin2base64(key, sizeof key, nonce, sizeof nonce, sodium_base64_VARIANT_ORIGINAL);
	int rc = route && w ? S0_OK : s0__error_nomem(err);
	if (w) {
		w->fd = -1;
		w->base.vt = &wsc_vt;
	}
	if (rc == S0_OK)
		rc = parse_base(c->base_url, &t, err);
	if (rc == S0_OK)
		rc = connect_to(&t, deadline, &w->fd, err);
	if (rc == S0_OK && !(req = request_text(c, &t, route, key)))
		rc = s0__error_nomem(err);
	if (rc == S0_OK)
		rc = send_all(w->fd, req, strlen(req), deadline, err);
	if (rc == S0_OK)
		rc = read_answer(w, &a, deadline, err);
	if (rc == S0_OK && a.resp.status != 101) /* the route's answer: 404, 503 waking up, … */
		rc = s0__error_put(err, s0__error_from_response(&a.resp, c->clock.now_unix_ms(c->clock.ctx),
		                                                o->sandbox_id));
	const char *got = rc == S0_OK ? s0__headers_get(&a.resp.headers, "Sec-WebSocket-Accept") : NULL;
	if (rc == S0_OK && (accept_of(key, want) < 0 || !got || strcmp(got, want)))
		rc = s0__error_set(err, S0_EPROTOCOL, "unexpected_response",
		                   "the server's Sec-WebSocket-Accept does not match");
	if (rc == S0_OK && wslay_event_context_client_init(&w->ctx, &cbs, w) != 0)
		rc = s0__error_nomem(err);
	if (rc == S0_OK)
		wslay_event_config_set_max_recv_msg_length(w->ctx, MSG_MAX);
	free(a.field);
	s0__http_response_free(&a.resp);
	free(req);
	free(route);
	target_free(&t);
	if (rc < 0) {
		if (w)
			w->base.vt->free(&w->base);
		return rc;
	}
	s0__obj_inc();
	*out = &w->base;
	return S0_OK;
}

static int wsc_send(s0_stream *st, const char *json, size_t len, s0_error **err)
{
	wsc *w = (wsc *)st;
	if (w->close_code || w->failed)
		return s0__error_set(err, S0_EGONE, "stream_closed", "the stream has ended (%d %s)",
		                     w->close_code ? w->close_code : 1006, w->reason);
	struct wslay_event_msg m = {WSLAY_TEXT_FRAME, (const uint8_t *)json, len};
	if (wslay_event_queue_msg(w->ctx, &m) != 0)
		return s0__error_set(err, S0_EGONE, "stream_closed", "the stream is closing");
	return flush(w, s0__real_monotonic_ms() + OPEN_TIMEOUT_MS, err);
}

static int wsc_recv(s0_stream *st, int64_t timeout_ms, char **msg_out, size_t *len_out,
                    s0_error **err)
{
	wsc *w = (wsc *)st;
	int64_t deadline = timeout_ms == S0_TIMEOUT_INFINITE ? -1
	                                                     : s0__real_monotonic_ms() + timeout_ms;
	for (;;) {
		int taken = s0__smsgq_take(&w->inbox, msg_out, len_out, err);
		if (taken)
			return taken < 0 ? taken : S0_OK;
		if (w->close_code || w->failed) {
			if (!w->close_code)
				w->close_code = 1006; /* gone without a close frame */
			return s0__error_set(err, S0_ITEROVER, "stream_closed",
			                     "the stream has ended (%d %s)", w->close_code, w->reason);
		}
		bool unread = w->extra_off < w->extra_len;
		int ready = unread ? 1 : wait_fd(w->fd, POLLIN, left_ms(deadline));
		if (ready == 0)
			return s0__error_set(err, S0_ETIMEDOUT, "timeout", "no message within %lld ms",
			                     (long long)timeout_ms);
		if (ready < 0 || wslay_event_recv(w->ctx) != 0)
			w->failed = true;
		else
			flush(w, s0__real_monotonic_ms() + 1000, NULL); /* a close's answer, pongs */
	}
}

static int wsc_close_code(const s0_stream *st, const char **reason_out)
{
	const wsc *w = (const wsc *)st;
	if (reason_out)
		*reason_out = w->reason;
	return w->close_code;
}

static void wsc_free(s0_stream *st)
{
	wsc *w = (wsc *)st;
	bool counted = w->ctx != NULL;
	if (w->ctx && !w->failed && !w->close_code) { /* detach: a normal close, best effort */
		wslay_event_queue_close(w->ctx, 1000, NULL, 0);
		flush(w, s0__real_monotonic_ms() + 1000, NULL);
	}
	if (w->ctx)
		wslay_event_context_free(w->ctx);
	if (w->fd >= 0)
		close(w->fd);
	s0__smsgq_clear(&w->inbox);
	free(w->extra);
	free(w);
	if (counted)
		s0__obj_dec();
}

static const s0__stream_vt wsc_vt = {wsc_send, wsc_recv, wsc_close_code, wsc_free};
