/* A public route's request body streamed to the service (route_upload.h). */
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "local/api/router.h"
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
	int64_t length;     /* announced, or -1 */
	bool eof;           /* the body ended */
	bool suspended;     /* the connection waits for room or for the answer */
	bool done;          /* the handler answered */
	bool orphan;        /* libmicrohttpd completed the request first (hang-up) */
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
	} else if (*size) {
		if (u->pos + u->len + *size > S0__ROUTE_UPLOAD_BUFFER && u->pos) {
			memmove(u->buf, u->buf + u->pos, u->len);
			u->pos = 0;
		}
		size_t room = S0__ROUTE_UPLOAD_BUFFER - u->pos - u->len;
		size_t k = room < *size ? room : *size;
		memcpy(u->buf + u->pos + u->len, data, k);
		u->len += k;
		*size -= k;
		if (*size) { /* full: until the handler makes room */
			u->suspended = true;
			MHD_suspend_connection(u->conn);
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
	pthread_cond_destroy(&u->cv);
	pthread_mutex_destroy(&u->mu);
	free(u->buf);
	free(u);
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
	bool gone = (u->orphan && !u->eof) || (!u->eof && client_gone(u->r->fd));
	pthread_mutex_unlock(&u->mu);
	return gone;
}

int64_t s0__route_upload_length(const s0__route_upload *u)
{
	return u->length;
}
