/*
 * A scripted HTTP responder for client tests (libmicrohttpd, loopback only).
 *
 * The test queues replies; each incoming request takes the next one in order
 * (FIFO), or the default reply when the queue is empty (a 599 error envelope
 * with code "responder_unscripted" unless s0t_responder_set_default() gave
 * one). A reply can be delayed, held until s0t_responder_release(), cut
 * short after some body bytes, or replaced by closing the connection.
 * Every request is recorded (method, raw path and query, headers, body) in
 * arrival order for assertions.
 *
 * Threads: MHD runs one thread per connection, so a stalled reply never
 * blocks other connections. All functions are safe to call from any thread;
 * modify a reply only before the request that takes it arrives.
 *
 * Bounds: 127.0.0.1 on an ephemeral port, at most 256 connections, request
 * bodies recorded up to 256 MiB, a stall or delay ends after 60 s at the
 * latest. s0t_responder_free() releases every held reply and stops the
 * daemon (joining its threads).
 */
#ifndef S0_TEST_RESPONDER_H
#define S0_TEST_RESPONDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct s0t_responder s0t_responder;
typedef struct s0t_reply s0t_reply;

/* One recorded request (immutable once recorded; lives until the responder is freed). */
typedef struct s0t_request {
	char *method;
	char *path;  /* raw (still percent-encoded) path, without the query */
	char *query; /* raw query without '?', or NULL when the URL has none */
	size_t n_headers;
	char **header_names; /* as the client spelled them */
	char **header_values;
	unsigned char *body; /* NUL-terminated for convenience (not counted) */
	size_t body_len;
	uint64_t seq; /* 0-based arrival index */
} s0t_request;

/* Start on 127.0.0.1, port 0. Returns NULL on failure. */
s0t_responder *s0t_responder_new(void);
/* Release held replies, stop the daemon, free everything. NULL is a no-op. */
void s0t_responder_free(s0t_responder *r);
/* "http://127.0.0.1:<port>" (valid while r lives). */
const char *s0t_responder_url(const s0t_responder *r);
unsigned s0t_responder_port(const s0t_responder *r);

/* ---- scripting ---- */

/*
 * Queue a reply. content_type NULL sends no Content-Type; len (size_t)-1
 * means strlen(body); body NULL means an empty body.
 */
s0t_reply *s0t_push(s0t_responder *r, int status, const char *content_type, const void *body,
                    size_t len);
/* application/json body. */
s0t_reply *s0t_push_json(s0t_responder *r, int status, const char *json);
/* {"success":true,"data":<data_json>} with the given status (data_json NULL: no "data"). */
s0t_reply *s0t_push_ok(s0t_responder *r, int status, const char *data_json);
/* {"success":false,"error":{"code":…,"message":…}} (code/message NULL: omitted). */
s0t_reply *s0t_push_error(s0t_responder *r, int status, const char *code, const char *message);
/* Close the connection after reading the request, without any response. */
s0t_reply *s0t_push_drop(s0t_responder *r);

/* Add a response header. */
void s0t_reply_header(s0t_reply *rep, const char *name, const char *value);
/* Wait ms before answering. */
void s0t_reply_delay(s0t_reply *rep, int ms);
/* Hold the reply until s0t_responder_release() (or the responder is freed). */
void s0t_reply_stall(s0t_reply *rep);
/* Announce the whole body length but send only the first n bytes, then close. */
void s0t_reply_truncate(s0t_reply *rep, size_t n);
/*
 * Expect this reply to be taken by METHOD PATH (raw path, no query). A
 * request that does not match gets a 599 "responder_mismatch" error instead
 * (the reply is still consumed) and counts in s0t_responder_mismatches().
 */
void s0t_reply_expect(s0t_reply *rep, const char *method, const char *path);

/*
 * The reply for requests that find the queue empty (copied by value as a
 * template: status, type, body, headers). Replaces any earlier default.
 */
void s0t_responder_set_default(s0t_responder *r, int status, const char *content_type,
                               const char *body);
/* Wake every reply held by s0t_reply_stall() now (later stalls hold again). */
void s0t_responder_release(s0t_responder *r);
/* Replies queued and not yet taken. */
size_t s0t_responder_pending(s0t_responder *r);
/* Requests answered by the unscripted default (no default set) or a mismatch. */
size_t s0t_responder_unscripted(s0t_responder *r);
size_t s0t_responder_mismatches(s0t_responder *r);
/* Stop recording requests (counting goes on); for load tests. */
void s0t_responder_set_record(s0t_responder *r, bool record);

/* ---- observing ---- */

/* Requests received so far (recorded or not). */
size_t s0t_responder_count(s0t_responder *r);
/* Request i in arrival order (borrowed), or NULL. */
const s0t_request *s0t_responder_req(s0t_responder *r, size_t i);
/* The most recent request, or NULL. */
const s0t_request *s0t_responder_last(s0t_responder *r);
/* Block until at least n requests have fully arrived; false on timeout. */
bool s0t_responder_wait(s0t_responder *r, size_t n, int timeout_ms);
/* Forget recorded requests (count restarts at 0). */
void s0t_responder_clear(s0t_responder *r);

/* Case-insensitive lookup of the first header named name, or NULL. */
const char *s0t_req_header(const s0t_request *q, const char *name);
/* Number of headers named name (case-insensitive). */
size_t s0t_req_header_count(const s0t_request *q, const char *name);
/* Whether the body parses as JSON equal to expected (order-insensitive objects). */
bool s0t_req_json_eq(const s0t_request *q, const char *expected);
/* Whether the body is exactly the bytes of s. */
bool s0t_req_body_is(const s0t_request *q, const char *s);

#endif
