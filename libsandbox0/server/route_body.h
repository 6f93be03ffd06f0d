/*
 * A public route's answer body sent as it comes (docs/wire.md "Public
 * routes"): libmicrohttpd pulls it from the service's socket block by block
 * while the client takes it; when nothing is ready the connection is
 * suspended and the service's socket waits on the server's event loop
 * (loop.h), so no thread is held and at most one block (64 KiB) plus the
 * sockets' own buffers is in memory whatever the body's size. A service
 * that sends nothing for the route's timeout ends the answer (the
 * connection is closed: the client sees a cut body).
 */
#ifndef S0_SERVER_ROUTE_BODY_H
#define S0_SERVER_ROUTE_BODY_H

#include "server/server_internal.h"

/* Bytes pulled from the service per call (and MHD's block for it). */
#define S0__ROUTE_BODY_BLOCK ((size_t)64 << 10)

/*
 * The libmicrohttpd response sending @p body (transfer full: freed when the
 * response is, or here when NULL is returned) on @p conn: with its length
 * when known, else chunked (HTTP/1.1) or up to the close. MHD thread.
 * NULL when out of memory.
 */
struct MHD_Response *s0__route_body_response(s0_server *s, struct MHD_Connection *conn,
                                             s0__http_body *body);

#endif
