/*
 * A public route's request body streamed to the service (docs/wire.md
 * "Public routes"): the handler (server/proxy.c) runs on a handler thread
 * from the request's head on — resolving the route, waking the sandbox,
 * connecting — while libmicrohttpd feeds the body into a bounded buffer
 * (S0__ROUTE_UPLOAD_BUFFER) the handler drains into the service's socket.
 * When the buffer is full the connection is suspended until the handler
 * made room (backpressure to the client); when the handler answers before
 * the body ended (an error, or a service that answers early) the rest is
 * read and dropped, the answer sent after it (libmicrohttpd queues no
 * answer mid-body); past S0__ROUTE_UPLOAD_DRAIN dropped the connection is
 * closed instead. A client that hangs up mid-body ends the handler's reads with an
 * error; the request's state is freed by whichever of the two ends last.
 */
#ifndef S0_SERVER_ROUTE_UPLOAD_H
#define S0_SERVER_ROUTE_UPLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "server/server_internal.h"

struct s0__sreq;
typedef struct s0__route_upload s0__route_upload;

#define S0__ROUTE_UPLOAD_BUFFER ((size_t)256 << 10)
#define S0__ROUTE_UPLOAD_DRAIN ((size_t)16 << 20)

/* What s0__route_upload_read() answers besides bytes. */
#define S0__ROUTE_UPLOAD_END 0
#define S0__ROUTE_UPLOAD_FAILED (-1)   /* the client hung up */
#define S0__ROUTE_UPLOAD_TIMEOUT (-2)  /* nothing came before the deadline */

/* Whether a request head announces a body (Content-Length > 0, or a
 * Transfer-Encoding). MHD thread. */
bool s0__route_upload_wanted(struct MHD_Connection *conn);

/*
 * Start the handler of @p r now, its body to be fed by later calls (MHD
 * thread, the first call). r->upload is set. MHD_NO when out of memory
 * or no handler thread takes it (the connection is closed).
 */
enum MHD_Result s0__route_upload_begin(s0_server *s, struct MHD_Connection *conn, struct s0__sreq *r);

/*
 * A later call of the access handler for r (MHD thread): @p size bytes of
 * the body at @p data (0: the body ended). Returns 0 when the call is
 * done with (*size left as libmicrohttpd must offer again), 1 when the
 * body ended and the handler answered: r->done, r->resp holds it, send it
 * now, -1 to close the connection (an answered request's body past the
 * drain, or a client that hung up while the connection was suspended with
 * the buffer full: its socket is watched on the server's event loop then,
 * since libmicrohttpd does not watch a suspended connection).
 */
int s0__route_upload_call(struct s0__sreq *r, const char *data, size_t *size);

/*
 * libmicrohttpd completed the request (MHD thread): true when the handler
 * still runs — r is then the handler's to finish (it calls
 * s0__server_on_completed() itself when done) and must not be freed now.
 */
bool s0__route_upload_detach(struct s0__sreq *r);

/* Free r->upload (the request's completion; MHD thread or the handler's).
 * When its socket is still watched on the event loop, the loop thread frees
 * it once the watch is removed. NULL-safe. */
void s0__route_upload_free(struct s0__route_upload *u);

/*
 * Handler side: up to @p max bytes of the body into @p buf, waiting until
 * @p deadline_ms (real monotonic) for some. > 0 bytes, S0__ROUTE_UPLOAD_END,
 * _FAILED or _TIMEOUT.
 */
ptrdiff_t s0__route_upload_read(struct s0__route_upload *u, char *buf, size_t max,
                                int64_t deadline_ms);

/* Whether the client hung up mid-body (the handler stops sending what it
 * has). Handler side, any time. */
bool s0__route_upload_gone(struct s0__route_upload *u);

/* The body's announced length, or -1 (chunked: its end is the end). */
int64_t s0__route_upload_length(const struct s0__route_upload *u);

#endif
