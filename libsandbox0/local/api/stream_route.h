/* The WebSocket routes of docs/wire.md §8.2 onto streams (stream_route.c). */
#ifndef S0_API_STREAM_ROUTE_H
#define S0_API_STREAM_ROUTE_H

#include "local/api/router.h"
#include "local/api/stream.h"

/*
 * Open the stream a WebSocket request names (req->path raw, as off the
 * wire; opts->team_id the authenticated team). S0_OK with *out set: opened.
 * S0_OK with *out NULL: refused, resp holds the answer (the envelope of the
 * route's rules: 404, 503 waking_up / sandbox_resume_failed, 400 bad `after`,
 * 410 expired cursor). S0_ENOTFOUND with resp untouched: not a stream route.
 * S0_ENOMEM. kick as s0__stream_open().
 */
int s0__router_stream_open(s0__engine *e, const s0__router_opts *opts,
                           const s0__http_request *req, s0__stream_kick_fn kick, void *kick_arg,
                           s0__stream **out, s0__http_response *resp);

#endif
