/*
 * The streams of docs/wire.md §8.2 as transport-free objects: a context's
 * input and output, a session attach with replay from a cursor, a file watch.
 * The server's WebSocket (server/ws.c) and the in-process stream API
 * (include/sandbox0/streams.h) drive the same object, so both behave alike.
 *
 * A stream is driven by one thread at a time (its driver serialises
 * s0__stream_input and s0__stream_pull); what happens elsewhere (the sandbox
 * pauses, a file changes) calls the driver's kick function, from any thread,
 * so that it pulls again soon. Messages are JSON texts (one per WebSocket text
 * frame) in a queue the driver owns.
 */
#ifndef S0_API_STREAM_H
#define S0_API_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"
#include "common/msgq.h"

typedef struct s0__engine s0__engine;

/* ---- streams ---- */

typedef enum s0__stream_kind {
	S0__STREAM_CONTEXT = 1, /* GET …/contexts/{ctx_id}/ws */
	S0__STREAM_SESSION,     /* GET …/sessions/{session_id}/ws?after= */
	S0__STREAM_WATCH,       /* GET …/files/watch */
} s0__stream_kind;

/* Close codes (RFC 6455 §7.4) a stream ends with; docs/wire.md §8.2. */
enum {
	S0__WS_NORMAL = 1000,      /* the process exited and its `done` went out */
	S0__WS_GOING_AWAY = 1001,  /* the sandbox paused or was deleted; the server stops */
	S0__WS_PROTOCOL = 1002,    /* a malformed frame */
	S0__WS_UNSUPPORTED = 1003, /* a binary message */
	S0__WS_BAD_DATA = 1007,    /* a text message that is not a JSON object */
	S0__WS_TOO_BIG = 1009,     /* a message over S0__STREAM_MSG_MAX */
	S0__WS_ERROR = 1011,       /* the server failed (out of memory, the runtime went away) */
};

/* Largest client message (bytes). */
#define S0__STREAM_MSG_MAX ((size_t)64 << 10)
/* Bytes of messages a driver keeps queued for one stream before it stops
 * pulling (the WebSocket keeps at most this in its own queue and this in
 * wslay's, so a slow reader costs the server about 2 x this). */
#define S0__STREAM_QUEUE_MAX ((size_t)64 << 10)

typedef struct s0__stream s0__stream;

/* Called (any thread, briefly: flag and wake) when the stream has news. */
typedef void (*s0__stream_kick_fn)(void *arg);

typedef struct s0__stream_open_req {
	s0__stream_kind kind;
	const char *team;       /* the authenticated team */
	const char *sandbox_id; /* decoded */
	const char *id2;        /* context or session id (decoded); NULL for a watch */
	const char *after;      /* session: the `after` query value (nullable) */
	int64_t wake_budget_ms; /* how long the open may wait for a wake (engine clock) */
} s0__stream_open_req;

/*
 * Open a stream: the sandbox is reached as every runtime call reaches it (a
 * paused sandbox with auto_resume wakes, within wake_budget_ms; docs/wire.md
 * §6.6), and the context or session must exist. Errors are what the same
 * GET would answer (S0_ENOTFOUND, S0_EUNAVAILABLE waking_up /
 * auto_resume_disabled, S0_ERESUME, S0_EINVAL for a bad `after`, S0_EGONE
 * event_cursor_expired), so the caller answers them before any upgrade.
 * kick(kick_arg) may run from any thread until s0__stream_free returns.
 */
int s0__stream_open(s0__engine *e, const s0__stream_open_req *req, s0__stream_kick_fn kick,
                    void *kick_arg, s0__stream **out, s0_error **err);

/*
 * A client message (text; binary messages are the driver's to refuse).
 * Appends replies to out. Returns S0_OK, or a close code (> 0) when the
 * stream must end (S0__WS_BAD_DATA for text that is not a JSON object).
 */
int s0__stream_input(s0__stream *st, const char *text, size_t len, s0__smsgq *out);

/*
 * Produce what is new, at most about room bytes, into out. Returns 0 (go on:
 * pull again after a kick, or after *retry_ms when > 0), or a close code
 * (> 0): send what is in out, then close with it (and
 * s0__stream_close_reason()).
 */
int s0__stream_pull(s0__stream *st, size_t room, s0__smsgq *out, int64_t *retry_ms);

/* The reason text of the last close code returned (borrowed; never NULL). */
const char *s0__stream_close_reason(const s0__stream *st);

/* End the stream; NULL-safe. kick is never called after this returns. */
void s0__stream_free(s0__stream *st);

#endif
