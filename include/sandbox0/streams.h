/**
 * @file sandbox0/streams.h
 * @brief Streams without sockets: a context's input and output, a session
 *        attach, a file watch, on the embedded backend (docs/wire.md §8.2).
 *
 * These are the in-process equivalents of the WebSocket routes `s0 serve`
 * answers (`…/contexts/{ctx_id}/ws`, `…/sessions/{session_id}/ws?after=`,
 * `…/files/watch`): the same stream object behind both, so the messages are
 * the same JSON texts, in the same order, with the same close codes. A host
 * program sends client messages with s0_stream_send() and pulls server
 * messages with s0_stream_recv().
 *
 * Messages (JSON objects, UTF-8 text):
 * - context: send `{"type":"input","data":"ls\n","request_id":"r1"}`,
 *   `{"type":"resize","rows":24,"cols":80}`, `{"type":"signal","signal":"INT"}`;
 *   receive `{"type":"output","source":"stdout"|"stderr"|"pty","data":…}`,
 *   `{"type":"done","request_id":…}` after an input's output, and a terminal
 *   `{"type":"done","exit_code":…,"state":…}` when the process has exited
 *   (the stream then ends with close code 1000).
 * - session: receive `{"type":"event","event":ExecutionSessionEvent}` from
 *   the cursor on; send `{"type":"input",input_id,data_base64?,eof?,
 *   expected_attempt_id?,request_id?}`, `{"type":"signal",…}`,
 *   `{"type":"resize",…}`, answered by `{"type":"ack","request_id"}` or
 *   `{"type":"error","request_id","error"}`.
 * - file watch: send `{"action":"subscribe","path":…,"recursive":bool}` and
 *   `{"action":"unsubscribe","watch_id":…}`; receive `subscribed`,
 *   `unsubscribed`, `{"type":"event","watch_id","event":"create"|"write"|
 *   "remove"|"rename"|"chmod"|"invalidate","path"}` and `error`.
 *
 * A stream ends with a close code (RFC 6455 numbers): 1000 the process
 * exited; 1001 the sandbox paused or was deleted (reason "sandbox paused" /
 * "sandbox deleted"; after a resume, open a new stream); 1007 a sent text
 * was not a JSON object; 1011 the backend failed. Opening a stream is a
 * runtime request: a paused sandbox with `auto_resume` is woken first.
 *
 * Thread safety: one stream may be used by one thread at a time, except
 * s0_stream_free(), which must not race any other call on it. Different
 * streams are independent.
 */
#ifndef SANDBOX0_STREAMS_H
#define SANDBOX0_STREAMS_H

#include "sandbox0/client.h"
#include "sandbox0/local.h"

S0_BEGIN_DECLS

/** What a stream follows. */
typedef enum s0_stream_kind {
	S0_STREAM_CONTEXT = 1,     /**< a context's input and output */
	S0_STREAM_SESSION = 2,     /**< a supervised session's events (attach) */
	S0_STREAM_FILES_WATCH = 3, /**< file changes under subscribed paths */
} s0_stream_kind;

/** A stream; see the file comment. */
typedef struct s0_stream s0_stream;

/** Options of s0_local_stream_open(). */
typedef struct s0_stream_options {
	uint32_t version;       /**< S0_STREAM_OPTIONS_VERSION */
	int32_t kind;           /**< ::s0_stream_kind */
	const char *sandbox_id; /**< required */
	const char *id;         /**< the context or session id (required for those kinds) */
	int64_t after;          /**< session: events after this `seq`; 0 = from the start */
	int64_t wake_timeout_ms; /**< how long the open may wait for a wake, on the backend
	                              clock; 0 = 45000 */
} s0_stream_options;

#define S0_STREAM_OPTIONS_VERSION 1u
#define S0_STREAM_OPTIONS_INIT {S0_STREAM_OPTIONS_VERSION, 0, NULL, NULL, 0, 0}

/**
 * Open a stream through a client: over HTTP a WebSocket to the server
 * (`ws://`; an `https` base URL is S0_EUNSUPPORTED), with the client's token,
 * team and headers; on an in-process client (s0_client_new_local()) the
 * in-process stream of s0_local_stream_open() as the client's team.
 * @param[in] c (borrowed; must outlive the stream) @param[in] opts (borrowed for the call)
 * @param[out] out (transfer full) free with s0_stream_free().
 * @retval S0_EINVAL bad options. @retval S0_EUNSUPPORTED no streams on this transport.
 * @retval S0_ETRANSPORT the connection or the handshake failed.
 * Otherwise the errors of s0_local_stream_open(), from the server's answer.
 * Blocks for the connection, the handshake and a wake (up to the client's
 * request timeout).
 * @since 0.2
 */
S0_API int s0_stream_open(s0_client *c, const s0_stream_options *opts, s0_stream **out,
                          s0_error **err);

/**
 * Open a stream on the embedded backend as the backend's own team (the team
 * of s0_client_new_local() clients).
 * @param[in] local the backend (borrowed; must outlive the stream).
 * @param[in] opts (borrowed for the call).
 * @param[out] out (transfer full) free with s0_stream_free().
 * @retval S0_EINVAL bad options (version, kind, a missing id, after < 0).
 * @retval S0_ENOTFOUND the sandbox, context or session does not exist (for
 *         this team).
 * @retval S0_EUNAVAILABLE `waking_up` (the wake goes on), `auto_resume_disabled`.
 * @retval S0_ERESUME the wake failed. @retval S0_EGONE `event_cursor_expired`.
 * @retval S0_ENOMEM  Nothing is left open on failure.
 * Blocks while a paused sandbox wakes (up to wake_timeout_ms).
 * @since 0.2
 */
S0_API int s0_local_stream_open(s0_local *local, const s0_stream_options *opts,
                                s0_stream **out, s0_error **err);

/**
 * Send one client message (a JSON object as text; see the file comment).
 * The stream acts on it at once (an input is written, its output read);
 * what it answers is queued for s0_stream_recv().
 * @param[in] json (borrowed) @param len its bytes (at most 64 KiB).
 * @retval S0_EINVAL json NULL or over 64 KiB (nothing sent).
 * @retval S0_EGONE (reason `stream_closed`) the stream has ended
 *         (s0_stream_close_code() says why); a text that is not a JSON
 *         object ends it with 1007.
 * Blocks for one backend call.
 * @since 0.2
 */
S0_API int s0_stream_send(s0_stream *st, const char *json, size_t len, s0_error **err);

/**
 * Receive the next server message, waiting up to timeout_ms (real time; 0:
 * only what is ready; S0_TIMEOUT_INFINITE: until one comes or the stream
 * ends).
 * @param[out] msg_out (transfer full) NUL-terminated JSON text; free with s0_free().
 * @param[out] len_out (nullable) its length in bytes.
 * @retval S0_ETIMEDOUT nothing within timeout_ms (the stream goes on).
 * @retval S0_ITEROVER every message was received and the stream has ended
 *         (s0_stream_close_code() says why).
 * @since 0.2
 */
S0_API int s0_stream_recv(s0_stream *st, int64_t timeout_ms, char **msg_out, size_t *len_out,
                          s0_error **err);

/**
 * Why the stream ended: its close code (0 while it goes on) and reason
 * (borrowed until s0_stream_free(); "" when none).
 * @since 0.2
 */
S0_API int s0_stream_close_code(const s0_stream *st, const char **reason_out);

/** End the stream (the process goes on: closing only detaches); NULL-safe. @since 0.2 */
S0_API void s0_stream_free(s0_stream *st);

S0_END_DECLS

#endif
