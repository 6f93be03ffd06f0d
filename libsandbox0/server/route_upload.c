/* A public route's request body streamed to the service (route_upload.h). */
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "local/api/router.h"
#include "server/loop.h"
#include "server/request.h"
#include "server/route_upload.h"
#include "server/workers.h"

/* How often a handler waiting for the body looks for a hang-up, ms. */
#define HUP_CHECK_MS 100

struct s0__route_upload {
	pthread_mutex_t mu;
	pthread_cond_t cv;  /* bytes came, the body ended or the client went */
	s0__sreq *r;
	struct MHD_Connection *conn;
	char *buf;          /* S0__ROUTE_UPLOAD_BUFFER bytes; data at [pos, pos + len) */
	size_t pos, len;
	size_t dropped;     /* body bytes dropped after the answer */
	uint64_t got;       /* body bytes taken into buf so far */
	size_t pending;     /* bytes libmicrohttpd still offered at the last suspension */
	int64_t length;     /* announced, or -1 */
	bool eof;           /* the body ended */
	bool suspended;     /* the connection waits for room or for the answer */
	bool done;          /* the handler answered */
	bool orphan;        /* libmicrohttpd completed the request first (hang-up) */
	bool hup;           /* the client's socket hung up while suspended mid-body */
	bool freeing;       /* completion came while src was held: its callback frees */
	s0__loop_src *src;  /* the client's socket watched for a hang-up (from the first
	                       suspension mid-body until a hang-up or completion) */
};

bool s0__route_upload_wanted(struct MHD_Connection *conn)
{
	const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
	const char *te = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding");
	return te || (cl && strtoull(cl, NULL, 10) > 0);
}

static enum MHD_Result add_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
	(void)kind;
	return s0__headers_add(cls, key, value ? value : "") < 0 ? MHD_NO : MHD_YES;
}

static void resume(s0__route_upload *u) /* u->mu held */
{
	if (u->suspended && !u->orphan) {
		u->suspended = false;
		MHD_resume_connection(u->conn);
	}
}

/*
 * The client went mid-body (u->mu held): shut its socket down so that
 * libmicrohttpd, which was seen not to notice such a hang-up until its idle
 * timeout (docs/decisions.md), reads the end at once and completes the
 * request. Not after the completion: the socket may be closed then.
 */
static void cut(s0__route_upload *u)
{
	if (!u->hup && !u->orphan && u->r->fd >= 0)
		shutdown(u->r->fd, SHUT_RDWR);
	u->hup = true;
}

/* The handler on a worker thread, from the request's head on. */
static void run(void *arg)
{
	s0__sreq *r = arg;
	s0__route_upload *u = r->upload;
	int rc = s0__server_call_handler(r->s, r, &r->resp);
	if (rc < 0 || !r->resp.status) {
		s0__http_response_free(&r->resp);
		memset(&r->resp, 0, sizeof r->resp);
		s0__router_reply_error(&r->resp, r->rid, 500, "internal_error", "out of memory");
	}
	pthread_mutex_lock(&u->mu);
	u->done = true;
	r->done = true;
	bool orphan = u->orphan;
	resume(u);
	pthread_mutex_unlock(&u->mu);
	if (orphan) { /* libmicrohttpd is done with it: finish it here */
		void *p = r;
		s0__server_on_completed(r->s, NULL, &p, MHD_REQUEST_TERMINATED_WITH_ERROR);
	}
}

static bool client_gone(int fd);

static void destroy(s0__route_upload *u)
{
	pthread_cond_destroy(&u->cv);
	pthread_mutex_destroy(&u->mu);
	free(u->buf);
	free(u);
}

/* The client's socket of a connection suspended mid-body hung up, the loop
 * stops, or the request completed (loop thread). libmicrohttpd does not watch
 * a suspended connection (docs/threading.md "Parked connections"): on a
 * hang-up shut the socket down and resume it, so the next feed refuses the
 * body and the connection closes at once rather than at the idle timeout.
 * The source goes (a later suspension adds another). */
static void on_hup(s0__loop_src *src, unsigned events, void *arg)
{
	s0__route_upload *u = arg;
	pthread_mutex_lock(&u->mu);
	/* the body's end may wait in libmicrohttpd's buffer (a client that shut
	 * its side after the whole body is waiting for the answer), or in the
	 * socket: only a known length short of its end, nothing unread, is a hang-up */
	bool short_body = u->length >= 0 && u->got + u->pending < (uint64_t)u->length;
	if (events & S0__LOOP_HUP && !u->freeing && short_body && client_gone(u->r->fd)) {
		cut(u);
		resume(u);
		pthread_cond_broadcast(&u->cv);
	}
	s0__loop_remove(src);
	u->src = NULL;
	bool last = u->freeing;
	pthread_mutex_unlock(&u->mu);
	if (last)
		destroy(u);
}

/* Suspend the connection mid-body; its socket watched for a hang-up (u->mu held). */
static void suspend_mid_body(s0__route_upload *u)
{
	if (!u->src && u->r->fd >= 0) /* refused (loop full or stopping): the idle timeout remains */
		s0__loop_add(u->r->s->loop, u->r->fd, S0__LOOP_HUP, 0, on_hup, u, &u->src);
	u->suspended = true;
	MHD_suspend_connection(u->conn);
}

enum MHD_Result s0__route_upload_begin(s0_server *s, struct MHD_Connection *conn, s0__sreq *r)
{
	s0__route_upload *u = calloc(1, sizeof *u);
	if (!u || !(u->buf = malloc(S0__ROUTE_UPLOAD_BUFFER))) {
		free(u);
		return MHD_NO;
	}
	pthread_mutex_init(&u->mu, NULL);
	pthread_cond_init(&u->cv, NULL);
	u->r = r;
	u->conn = conn;
	const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
	const char *te = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding");
	u->length = cl && !te ? (int64_t)strtoull(cl, NULL, 10) : -1;
	r->upload = u;
	if (MHD_get_connection_values(conn, MHD_HEADER_KIND, add_header, &r->hdrs) < 0) {
		u->done = true; /* nothing runs: completion frees it */
		return MHD_NO;
	}
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	r->s = s;
	r->conn = conn;
	r->fd = ci ? ci->connect_fd : -1;
	r->dispatched = true;
	if (s0__workers_submit(s->workers, run, r) < 0) {
		u->done = true; /* nothing runs: completion frees it */
		return MHD_NO;
	}
	return MHD_YES;
}

int s0__route_upload_call(s0__sreq *r, const char *data, size_t *size)
{
	s0__route_upload *u = r->upload;
	pthread_mutex_lock(&u->mu);
	int out = 0;
	if (u->done) { /* answered: drop the rest of the body (a bounded amount), then
	                  send the answer (libmicrohttpd queues none mid-body) */
		u->dropped += *size;
		out = u->dropped > S0__ROUTE_UPLOAD_DRAIN ? -1 : *size ? 0 : 1;
		*size = 0;
	} else if (*size && u->hup) { /* it went mid-body: the body cannot end */
		out = -1;
	} else if (*size) {
		if (u->pos + u->len + *size > S0__ROUTE_UPLOAD_BUFFER && u->pos) {
			memmove(u->buf, u->buf + u->pos, u->len);
			u->pos = 0;
		}
		size_t room = S0__ROUTE_UPLOAD_BUFFER - u->pos - u->len;
		size_t k = room < *size ? room : *size;
		memcpy(u->buf + u->pos + u->len, data, k);
		u->len += k;
		u->got += k;
		*size -= k;
		if (*size) { /* full: until the handler makes room */
			u->pending = *size;
			suspend_mid_body(u);
		}
	} else { /* the body ended: wait for the answer */
		u->eof = true;
		u->suspended = true;
		MHD_suspend_connection(u->conn);
	}
	pthread_cond_broadcast(&u->cv);
	pthread_mutex_unlock(&u->mu);
	return out;
}

bool s0__route_upload_detach(s0__sreq *r)
{
	s0__route_upload *u = r->upload;
	pthread_mutex_lock(&u->mu);
	bool running = !u->done;
	if (running) {
		u->orphan = true;
		pthread_cond_broadcast(&u->cv);
	}
	pthread_mutex_unlock(&u->mu);
	return running;
}

void s0__route_upload_free(s0__route_upload *u)
{
	if (!u)
		return;
	pthread_mutex_lock(&u->mu);
	u->suspended = false; /* completed: never resumed again */
	if (u->src) {         /* its callback removes it, then u goes */
		u->freeing = true;
		s0__loop_signal(u->src);
		pthread_mutex_unlock(&u->mu);
		return;
	}
	pthread_mutex_unlock(&u->mu);
	destroy(u);
}

/* Whether the client shut its side and nothing it sent waits unread: it
 * hung up mid-body (measured: libmicrohttpd does not always report that
 * while the handler waits for more of the body). */
static bool client_gone(int fd)
{
	struct pollfd p = {fd, POLLRDHUP, 0};
	int unread = 0;
	return fd >= 0 && poll(&p, 1, 0) == 1 && p.revents & (POLLRDHUP | POLLHUP | POLLERR) &&
	       ioctl(fd, FIONREAD, &unread) == 0 && unread == 0;
}

ptrdiff_t s0__route_upload_read(s0__route_upload *u, char *buf, size_t max, int64_t deadline_ms)
{
	pthread_mutex_lock(&u->mu);
	ptrdiff_t n = 0;
	while (!u->len && !u->eof && !u->orphan) {
		resume(u); /* room: let libmicrohttpd feed more */
		int64_t left = deadline_ms - s0__real_monotonic_ms();
		if (left <= 0) {
			n = S0__ROUTE_UPLOAD_TIMEOUT;
			break;
		}
		if (client_gone(u->r->fd)) {
			cut(u);
			n = S0__ROUTE_UPLOAD_FAILED;
			break;
		}
		if (left > HUP_CHECK_MS) /* libmicrohttpd may not tell a hang-up mid-body */
			left = HUP_CHECK_MS;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += left / 1000;
		ts.tv_nsec += (left % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&u->cv, &u->mu, &ts);
	}
	if (n == 0 && u->len) {
		n = (ptrdiff_t)(u->len < max ? u->len : max);
		memcpy(buf, u->buf + u->pos, (size_t)n);
		u->pos += (size_t)n;
		u->len -= (size_t)n;
		if (!u->len)
			u->pos = 0;
		if (!u->eof)
			resume(u); /* room again */
	} else if (n == 0) {
		n = u->orphan && !u->eof ? S0__ROUTE_UPLOAD_FAILED : S0__ROUTE_UPLOAD_END;
	}
	pthread_mutex_unlock(&u->mu);
	return n;
}

bool s0__route_upload_gone(s0__route_upload *u)
{
	pthread_mutex_lock(&u->mu);
	bool gone = ((u->orphan || u->hup) && !u->eof) || (!u->eof && client_gone(u->r->fd));
	if (gone)
		cut(u);
	pthread_mutex_unlock(&u->mu);
	return gone;
}

int64_t s0__route_upload_length(const s0__route_upload *u)
{
	return u->length;
}
