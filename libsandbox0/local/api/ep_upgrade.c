/* The WebSocket routes reached without an upgrade (docs/wire.md §8.2). */
#include "local/api/api_internal.h"

void s0__ep_upgrade_required(s0__rctx *c)
{
	s0__reply_err(c, 426, "bad_request",
	              "invalid request: %.200s is a WebSocket endpoint (send Upgrade: websocket)",
	              c->req->path);
	s0__reply_header(c, "Upgrade", "websocket");
}
