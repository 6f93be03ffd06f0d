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

/* One route's upgraded connection, from the 101 until both sides closed. */
struct s0__route_tunnel;

/*
 * A tunnel relaying @p svc (transfer full; its upgraded flag set: read()
 * gives the service's raw bytes) once the client got the 101. MHD thread.
 * NULL when out of memory (@p svc freed).
 */
struct s0__route_tunnel *s0__route_tunnel_new(s0_server *s, s0__http_body *svc);

/*
 * libmicrohttpd's upgrade handler for @p t (the arguments of an
 * MHD_UpgradeHandler): from here the tunnel runs on the loop and frees
 * itself, the service's socket and the client's (MHD_UPGRADE_ACTION_CLOSE).
 */
void s0__route_tunnel_upgraded(struct s0__route_tunnel *t, const char *extra_in,
                               size_t extra_in_size, MHD_socket sock,
                               struct MHD_UpgradeResponseHandle *urh);

/*
 * Free a tunnel whose upgrade never happened (the client went before the
 * 101, or libmicrohttpd failed it): closes the service's socket. NULL-safe.
 */
void s0__route_tunnel_discard(struct s0__route_tunnel *t);

#endif
