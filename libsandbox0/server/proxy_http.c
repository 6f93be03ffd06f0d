/* One HTTP/1.1 exchange over a connected socket (proxy_http.h). */
#include <errno.h>
#include <fcntl.h>
#include <http_parser.h>
#include <limits.h>
#include <unistd.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "common/internal.h"
#include "server/proxy_http.h"
#include "server/route_upload.h"

static int64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static bool again(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

/* Wait for ev on fd until deadline: 1 ready, 0 timed out, -1 error. */
static int wait_fd(int fd, short ev, int64_t deadline)
{
	for (;;) {
		int64_t left = deadline - now_ms();
		if (left <= 0)
			return 0;
		struct pollfd p = {fd, ev, 0};
		int n = poll(&p, 1, left > 1000000 ? 1000000 : (int)left);
		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR)
			return -1;
	}
}

/* Send all n bytes before deadline (monotonic ms). With an upload
 * (nullable), the waits are slices of at most 100 ms between which it stops
 * when the client hung up (nothing would use the answer). */
static int send_all(int fd, struct s0__route_upload *up, const char *p, size_t n,
                    int64_t deadline, const char **why)
{
	while (n) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
		if (k > 0) {
			p += k;
			n -= (size_t)k;
			continue;
		}
		if (k < 0 && !again()) {
			*why = "the service closed the connection";
			return S0_ETRANSPORT;
		}
		if (up && s0__route_upload_gone(up)) {
			*why = "the client hung up mid-body";
			return S0_ETRANSPORT;
		}
		int64_t slice = up ? now_ms() + 100 : deadline;
		int w = wait_fd(fd, POLLOUT, slice < deadline ? slice : deadline);
		if (w < 0 || (w == 0 && now_ms() >= deadline)) {
			*why = w ? "the connection failed"
			     : up ? "the service did not take the body in time"
			          : "the service did not take the request in time";
			return w ? S0_ETRANSPORT : S0_ETIMEDOUT;
		}
	}
	return S0_OK;
}

typedef struct answer {
	s0__http_response *resp;
	size_t max;
	char *field;
	bool head_done, done, too_large, oom, head_only, stream;
} answer;

static int on_field(http_parser *p, const char *at, size_t n)
{
	answer *a = p->data;
	free(a->field);
	a->field = s0__strndup(at, n);
	a->oom = !a->field;
	return a->oom ? -1 : 0;
}

static int on_value(http_parser *p, const char *at, size_t n)
{
	answer *a = p->data;
	char *v = s0__strndup(at, n);
	int rc = v && a->field ? s0__headers_add(&a->resp->headers, a->field, v) : -1;
	free(v);
	a->oom = rc < 0;
	return rc < 0 ? -1 : 0;
}

static int on_head(http_parser *p)
{
	answer *a = p->data;
	a->head_done = true;
	a->resp->status = (int)p->status_code;
	if (a->stream && !a->head_only)
		http_parser_pause(p, 1); /* the body goes on in a stream (proxy_body) */
	return a->head_only ? 1 : 0; /* 1: no body follows (HEAD) */
}

static int on_body(http_parser *p, const char *at, size_t n)
{
	answer *a = p->data;
	if (a->resp->body.len + n > a->max) {
		a->too_large = true;
		return -1;
	}
	if (s0__buf_put(&a->resp->body, at, n) < 0) {
		a->oom = true;
		return -1;
	}
	return 0;
}

static int on_done(http_parser *p)
{
	((answer *)p->data)->done = true;
	return 0;
}

/* The request head; NULL when out of memory. */
static char *head_of(const s0__proxy_req *r)
{
	s0__buf b = {0};
	int bad = s0__buf_printf(&b, "%s %s HTTP/1.1\r\n", r->method, r->target);
	for (size_t i = 0; !bad && r->headers && i < r->headers->len; i++)
		bad = s0__buf_printf(&b, "%s: %s\r\n", r->headers->items[i].name,
		                     r->headers->items[i].value);
	int64_t up_len = r->upload ? s0__route_upload_length(r->upload) : 0;
	if (!bad && r->upload && up_len >= 0)
		bad = s0__buf_printf(&b, "Content-Length: %lld\r\n", (long long)up_len);
	else if (!bad && r->upload)
		bad = s0__buf_printf(&b, "Transfer-Encoding: chunked\r\n");
	else if (!bad && r->has_body)
		bad = s0__buf_printf(&b, "Content-Length: %zu\r\n", r->body_len);
	if (!bad)
		bad = s0__buf_printf(&b, "Connection: %s\r\n\r\n", r->upgrade ? "Upgrade" : "close");
	if (!bad)
		bad = s0__buf_put(&b, "", 1); /* NUL */
	if (bad) {
		s0__buf_free(&b);
		return NULL;
	}
	size_t n;
	return s0__buf_detach(&b, &n);
}

/* The streamed request body (route_upload.h) after the head: as it comes,
 * with its length or in chunks (the chunk framing of RFC 9112 §7.1 is the
 * only HTTP written here beside the head), each wait bounded by timeout_ms. */
static int send_upload(int fd, const s0__proxy_req *r, const char **why)
{
	bool chunked = s0__route_upload_length(r->upload) < 0;
	char *buf = malloc(S0__ROUTE_UPLOAD_BUFFER);
	if (!buf) {
		*why = "out of memory";
		return S0_ENOMEM;
	}
	int rc = S0_OK;
	for (;;) {
		ptrdiff_t n = s0__route_upload_read(r->upload, buf, S0__ROUTE_UPLOAD_BUFFER,
		                                    now_ms() + r->timeout_ms);
		if (n == S0__ROUTE_UPLOAD_TIMEOUT || n == S0__ROUTE_UPLOAD_FAILED) {
			*why = n == S0__ROUTE_UPLOAD_TIMEOUT ? "the client did not send its body in time"
			                                     : "the client hung up mid-body";
			rc = n == S0__ROUTE_UPLOAD_TIMEOUT ? S0_ETIMEDOUT : S0_ETRANSPORT;
			break;
		}
		char frame[24];
		int64_t deadline = now_ms() + r->timeout_ms;
		if (chunked) {
			snprintf(frame, sizeof frame, n ? "%zx\r\n" : "0\r\n\r\n", (size_t)n);
			rc = send_all(fd, r->upload, frame, strlen(frame), deadline, why);
		}
		if (rc == S0_OK && n)
			rc = send_all(fd, r->upload, buf, (size_t)n, deadline, why);
		if (rc == S0_OK && n && chunked)
			rc = send_all(fd, r->upload, "\r\n", 2, deadline, why);
		if (rc < 0 || !n)
			break;
	}
	free(buf);
	return rc;
}

/* ---- the answer's body as it comes (r->stream) ---- */

typedef struct proxy_body {
	s0__http_body base;
	http_parser p;
	char *left;             /* bytes read past the head, not parsed yet */
	size_t left_len, left_pos;
	char *out;              /* where on_body puts bytes during one read */
	size_t out_len;
	bool done;
} proxy_body;

static int pb_on_body(http_parser *p, const char *at, size_t n)
{
	proxy_body *b = p->data;
	memmove(b->out + b->out_len, at, n); /* never past at: framing only shrinks */
	b->out_len += n;
	return 0;
}

static int pb_on_done(http_parser *p)
{
	proxy_body *b = p->data;
	b->done = true;
	http_parser_pause(p, 1); /* nothing after the message is ours */
	return 0;
}

static const http_parser_settings pb_cbs = {.on_body = pb_on_body,
                                            .on_message_complete = pb_on_done};

static ptrdiff_t pb_read(s0__http_body *base, char *buf, size_t max)
{
	proxy_body *b = (proxy_body *)base;
	if (b->base.upgraded) { /* raw: what came after the 101, then the socket */
		if (b->left_pos < b->left_len) {
			size_t k = b->left_len - b->left_pos < max ? b->left_len - b->left_pos : max;
			memcpy(buf, b->left + b->left_pos, k);
			b->left_pos += k;
			return (ptrdiff_t)k;
		}
		ssize_t r = recv(b->base.fd, buf, max, 0);
		return r >= 0 ? (ptrdiff_t)r : again() ? S0__HTTP_BODY_AGAIN : -1;
	}
	b->out = buf;
	b->out_len = 0;
	while (!b->done && !b->out_len) {
		size_t k;
		if (b->left_pos < b->left_len) {
			k = b->left_len - b->left_pos < max ? b->left_len - b->left_pos : max;
			memcpy(buf, b->left + b->left_pos, k);
			b->left_pos += k;
		} else {
			ssize_t r = recv(b->base.fd, buf, max, 0);
			if (r < 0)
				return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR
				               ? S0__HTTP_BODY_AGAIN
				               : -1;
			k = (size_t)r;
		}
		size_t used = http_parser_execute(&b->p, &pb_cbs, buf, k); /* k 0: the end */
		if (!b->done && (HTTP_PARSER_ERRNO(&b->p) != HPE_OK || used != k || !k))
			return b->out_len ? (ptrdiff_t)b->out_len : -1; /* cut short or not HTTP */
	}
	return (ptrdiff_t)b->out_len;
}

static void pb_free(s0__http_body *base)
{
	proxy_body *b = (proxy_body *)base;
	if (b->base.fd >= 0)
		close(b->base.fd);
	free(b->left);
	free(b);
}

/* The stream of the body after the head parsed by p (paused), with the
 * n bytes at rest still unparsed; takes fd. NULL when out of memory. */
static s0__http_body *body_stream(int fd, const http_parser *p, const char *rest, size_t n,
                                  int64_t idle_ms)
{
	proxy_body *b = calloc(1, sizeof *b);
	if (!b || (n && !(b->left = malloc(n)))) {
		free(b);
		return NULL;
	}
	memcpy(b->left, rest, n);
	b->left_len = n;
	b->p = *p;
	b->p.data = b;
	http_parser_pause(&b->p, 0);
	bool sized = !(p->flags & F_CHUNKED) && p->content_length != ULLONG_MAX;
	b->base = (s0__http_body){.read = pb_read, .free = pb_free, .fd = fd,
	                          .length = sized ? (int64_t)p->content_length : -1,
	                          .idle_ms = idle_ms};
	return &b->base;
}

int s0__proxy_exchange(int fd, const s0__proxy_req *r, s0__http_response *out, const char **why)
{
	int64_t deadline = now_ms() + r->timeout_ms;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	char *head = head_of(r);
	if (!head) {
		*why = "out of memory";
		return S0_ENOMEM;
	}
	int rc = send_all(fd, NULL, head, strlen(head), deadline, why);
	free(head);
	if (rc == S0_OK && r->upload)
		rc = send_upload(fd, r, why);
	else if (rc == S0_OK && r->has_body && r->body_len)
		rc = send_all(fd, NULL, r->body, r->body_len, deadline, why);
	if (rc < 0)
		return rc;
	deadline = now_ms() + r->timeout_ms; /* the answer's head: from the request's end */
	static const http_parser_settings cbs = {.on_header_field = on_field,
	                                         .on_header_value = on_value,
	                                         .on_headers_complete = on_head,
	                                         .on_body = on_body,
	                                         .on_message_complete = on_done};
	answer a = {.resp = out, .max = r->response_max, .head_only = !strcmp(r->method, "HEAD"),
	            .stream = r->stream};
	http_parser p;
	http_parser_init(&p, HTTP_RESPONSE);
	p.data = &a;
	char buf[16384];
	while (rc == S0_OK && !a.done) {
		ssize_t n = recv(fd, buf, sizeof buf, 0);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
			int w = wait_fd(fd, POLLIN, deadline);
			if (w <= 0) {
				*why = w ? "the connection failed" : "the service did not answer in time";
				rc = w ? S0_ETRANSPORT : S0_ETIMEDOUT;
			}
			continue;
		}
		if (n < 0) {
			*why = "the connection to the service failed";
			rc = S0_ETRANSPORT;
			break;
		}
		size_t used = http_parser_execute(&p, &cbs, buf, (size_t)n);
		if (!a.oom && a.stream && HTTP_PARSER_ERRNO(&p) == HPE_PAUSED) { /* the head is in */
			if (p.status_code == 101 && r->upgrade) { /* relayed both ways from here */
				if (used < (size_t)n && buf[used] == '\n')
					used++; /* paused in on_headers_complete, http_parser stops
					           before the head's last LF */
				out->stream = body_stream(fd, &p, buf + used, (size_t)n - used, 0);
				if (out->stream) {
					out->stream->upgraded = true;
					out->stream->length = -1;
					break;
				}
				a.oom = true;
			}
			bool none = p.status_code / 100 == 1 || p.status_code == 204 ||
			            p.status_code == 304 ||
			            (!(p.flags & F_CHUNKED) && p.content_length == 0);
			if (none)
				break; /* no body follows */
			out->stream = body_stream(fd, &p, buf + used, (size_t)n - used, r->timeout_ms);
			if (!out->stream)
				a.oom = true;
			else
				break;
		}
		if (a.oom) {
			*why = "out of memory";
			rc = S0_ENOMEM;
		} else if (a.too_large) {
			*why = "the service's answer is too large";
			rc = S0_ETOOLARGE;
		} else if (!a.done && (used != (size_t)n || p.http_errno != HPE_OK || n == 0)) {
			*why = a.head_done ? "the service's answer ended early"
			                   : "the service's answer is not HTTP";
			rc = S0_ETRANSPORT;
		}
	}
	free(a.field);
	return rc;
}
