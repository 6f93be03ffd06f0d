/*
 * The session event stream over server-sent events (docs/wire.md §8.4):
 * `GET …/sessions/{session_id}/events/stream?after=` (Last-Event-ID wins)
 * answers `text/event-stream`, one `id: <seq>` / `data: <event JSON>` block
 * per event, replayed from the cursor and then live, a `: keep-alive`
 * comment every S0__SSE_KEEPALIVE_MS while idle, and a clean end of the
 * body when the sandbox pauses or the session ends.
 *
 * The stream behind it is the session attach of local/api/stream.h (the
 * same object the WebSocket drives). Nothing holds a request thread: the
 * connection is suspended in libmicrohttpd while no bytes wait, a source on
 * the server's event loop (loop.h) carries the stream's kicks and the
 * keep-alive deadline, pulls run as jobs on the handler threads one at a
 * time, and at most S0__STREAM_QUEUE_MAX bytes wait for a slow reader.
 */
#ifndef S0_SERVER_SSE_H
#define S0_SERVER_SSE_H

#include <stdbool.h>

#include "server/request.h"

#define S0__SSE_KEEPALIVE_MS 15000

typedef struct s0__sse s0__sse;

/* Whether a request is a GET of a session's …/events/stream. */
bool s0__sse_is_route(const char *method, const char *raw_path);

/*
 * The handler thread's part: open the stream (auth ran; team scoping and a
 * wake are the stream's) and set r->sse with a 200 text/event-stream head,
 * or fill r->resp with the error the events GET would answer.
 */
void s0__sse_run(s0__sreq *r);

/* The response of r->sse for libmicrohttpd (MHD thread, once); NULL when out of memory. */
struct MHD_Response *s0__sse_response(s0__sse *sse);

/* Free a stream whose response was never made; NULL-safe. */
void s0__sse_discard(s0__sse *sse);

#endif
