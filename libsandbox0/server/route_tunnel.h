/*
 * A public route's upgraded connection (docs/wire.md "Public routes"): when
 * the client asks to upgrade (`Connection: Upgrade`, a WebSocket or any
 * other protocol) and the service answers 101, the 101 goes back to the
 * client and the bytes are relayed both ways as they are — frames are the
 * service's business — on the server's event loop (loop.h): no thread is
 * held, each direction has a 64 KiB buffer and a side is read only while
 * the buffer toward the other has room. When either side ends, what is
 * buffered toward the other is sent and both are closed.
 */
#ifndef S0_SERVER_ROUTE_TUNNEL_H
#define S0_SERVER_ROUTE_TUNNEL_H

#include "server/server_internal.h"

#define S0__ROUTE_TUNNEL_BUFFER ((size_t)64 << 10)

/*
 * The libmicrohttpd 101 response relaying @p svc (transfer full; its
 * upgraded flag set: read() gives the service's raw bytes) once the client
 * got it. MHD thread. NULL when out of memory (@p svc freed).
 */
struct MHD_Response *s0__route_tunnel_response(s0_server *s, s0__http_body *svc);

#endif
