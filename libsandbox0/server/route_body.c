/* A public route's answer body sent as it comes (route_body.h). */
#include <pthread.h>
#include <stdlib.h>

#include "server/loop.h"
#include "server/route_body.h"

typedef struct rbody {
	s0_server *s;
	struct MHD_Connection *conn;
	s0__http_body *b;
	pthread_mutex_t mu;
	s0__loop_src *src; /* set while the connection waits for the service */
	bool suspended;    /* the reader suspended the connection */
	bool failed;       /* the service stalled, or the server stops: cut the body */
	bool gone;         /* libmicrohttpd freed the response */
} rbody;

/* Free once nothing refers to x (x->mu held; unlocks). */
static void release(rbody *x)
{
	bool last = !x->src && x->gone;
	pthread_mutex_unlock(&x->mu);
	if (!last)
		return;
	x->b->free(x->b);
	pthread_mutex_destroy(&x->mu);
	free(x);
}

/* The service's socket is readable, hung up or stalled, or the loop stops
 * (loop thread): let libmicrohttpd pull again; the source goes. */
static void on_loop(s0__loop_src *src, unsigned events, void *arg)
{
	rbody *x = arg;
	pthread_mutex_lock(&x->mu);
	if (events & (S0__LOOP_TIMEOUT | S0__LOOP_STOP))
		x->failed = true;
	if (x->suspended && !x->gone) {
		x->suspended = false;
		MHD_resume_connection(x->conn);
	}
	s0__loop_remove(src);
	x->src = NULL;
	release(x);
}

static ssize_t reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	rbody *x = cls;
	pthread_mutex_lock(&x->mu);
	bool failed = x->failed;
	pthread_mutex_unlock(&x->mu);
	ptrdiff_t n = failed ? -1 : x->b->read(x->b, buf, max);
	if (n > 0)
		return (ssize_t)n;
	if (n == 0)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (n != S0__HTTP_BODY_AGAIN)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	pthread_mutex_lock(&x->mu);
	int64_t due = x->b->idle_ms > 0 ? s0__real_monotonic_ms() + x->b->idle_ms : 0;
	int rc = s0__loop_add(x->s->loop, x->b->fd, S0__LOOP_IN, due, on_loop, x, &x->src);
	if (rc == S0_OK) {
		x->suspended = true;
		MHD_suspend_connection(x->conn);
	}
	pthread_mutex_unlock(&x->mu);
	return rc == S0_OK ? 0 : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void reader_free(void *cls)
{
	rbody *x = cls;
	pthread_mutex_lock(&x->mu);
	x->gone = true;
	x->suspended = false;
	if (x->src) /* its callback removes it, then x goes */
		s0__loop_signal(x->src);
	release(x);
}

struct MHD_Response *s0__route_body_response(s0_server *s, struct MHD_Connection *conn,
                                             s0__http_body *body)
{
	rbody *x = calloc(1, sizeof *x);
	struct MHD_Response *mr =
		x ? MHD_create_response_from_callback(body->length >= 0 ? (uint64_t)body->length
		                                                        : MHD_SIZE_UNKNOWN,
		                                      S0__ROUTE_BODY_BLOCK, reader, x, reader_free)
		  : NULL;
	if (!mr) {
		free(x);
		body->free(body);
		return NULL;
	}
	x->s = s;
	x->conn = conn;
	x->b = body;
	pthread_mutex_init(&x->mu, NULL);
	return mr;
}
