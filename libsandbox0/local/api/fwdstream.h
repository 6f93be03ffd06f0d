/*
 * Streams across nodes (docs/scaling.md "Streams across nodes", docs/wire.md
 * "Forwarded streams"): a WebSocket stream opened on a node that does not run
 * the sandbox is driven on the node that does, over the node channel
 * (forward.h) — open, pull (held, in bounded batches), input, close — so the
 * entry node's server serves its client exactly as for a local stream.
 */
#ifndef S0_API_FWDSTREAM_H
#define S0_API_FWDSTREAM_H

#include <stdbool.h>

#include "local/api/router.h"
#include "local/api/stream.h"

/* Longest hold of one pull on the owner (ms). */
#define S0__FWDSTREAM_WAIT_MS 5000
/* A forwarded stream nobody pulled for this long is dropped by its owner (ms);
 * an entry node whose client reads slowly (its queue full) sends an empty
 * pull (max_bytes 0) every quarter of it to keep the stream. */
#define S0__FWDSTREAM_IDLE_MS 10000

/* Whether path (decoded) is a node-channel route of forwarded streams
 * (/api/v1/sandboxes/{id}/node-streams[/…]). Pure. */
bool s0__fwdstream_is_route(const char *path);

/*
 * The owner side: serve one such call that arrived over the verified node
 * channel (opts->team_id the caller's team; path decoded). Fills resp
 * (201 opened, 200 a batch, 204 closed, 404 no such stream, or the stream
 * route's refusal as the WebSocket GET would get it). A pull blocks up to
 * S0__FWDSTREAM_WAIT_MS for news. Returns S0_OK or S0_ENOMEM. Thread-safe.
 */
int s0__fwdstream_serve(s0__engine *e, const s0__router_opts *opts,
                        const s0__http_request *req, const char *path,
                        s0__http_response *resp);

/*
 * The entry side: open req's stream (a WebSocket GET, raw path and query; its
 * authentication headers are sent along) on the peer at url. S0_OK with *out
 * a stream driven through the peer (stream.h; kick as s0__stream_open());
 * S0_OK with *out NULL and resp filled when the peer refused (its answer) or
 * could not be reached (503 unavailable, Retry-After 1); S0_ENOMEM. Blocks
 * for the peer's answer. Thread-safe.
 */
int s0__fwdstream_open(s0__engine *e, const char *url, const s0__http_request *req,
                       const char *request_id, s0__stream_kick_fn kick, void *kick_arg,
                       s0__stream **out, s0__http_response *resp);

/* The entry side's stream.h operations (stream.c dispatches to them). */
struct s0__rstream;
int s0__rstream_input(s0__stream *st, const char *text, size_t len, s0__smsgq *out);
int s0__rstream_pull(s0__stream *st, size_t room, s0__smsgq *out);
void s0__rstream_free(struct s0__rstream *r);

#endif
