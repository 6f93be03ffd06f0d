/**
 * @file sandbox0/contexts.h
 * @brief Process APIs: contexts, exec and supervised sessions (docs/wire.md §8).
 *
 * A context is a process the sandbox runs for you: a `repl` (a stateful
 * interpreter whose variables and working directory live in process
 * memory) or a `cmd` (one argv). A supervised session is a stable,
 * sandbox-owned process identity with a durable event journal.
 *
 * Results are the `data` member of the success envelope as JSON text (the
 * ContextResponse, ContextExecResponse, ExecutionSession… shapes of docs/wire.md
 * §8), released with s0_free(). s0_runtime_call() reaches every other
 * endpoint of the family.
 *
 * These are runtime requests: a paused sandbox with `auto_resume` is woken
 * first (S0_EUNAVAILABLE reason `waking_up` while the wake has not
 * committed, S0_ERESUME when it failed, S0_EUNAVAILABLE
 * `auto_resume_disabled` without auto-resume). Then procd's codes apply:
 * S0_ENOTFOUND `context_not_found` / `session_not_found`, S0_EINVAL
 * `invalid_request`, S0_ECONFLICT `process_not_running` /
 * `session_conflict` / `pty_unavailable`, S0_EGONE `process_finished` /
 * `event_cursor_expired`, S0_ETIMEDOUT `exec_timeout`, S0_ETHROTTLED
 * `input_buffer_full` (429, session inputs).
 *
 * The local backend (s0_client_new_local(), `s0 serve`) answers every
 * session endpoint of docs/wire.md §8.3 through s0_runtime_call(): create, list,
 * get, `PUT /sessions/{id}` (replace the spec; a changed command, cwd, env,
 * io or readiness starts a new attempt when the desired state is
 * `running`), delete, `PUT …/desired-state`, `POST …/attempts` (201;
 * `{"replace_current":true}` replaces a running attempt, else 409
 * `session_conflict`), `POST …/inputs` (202 `{input_id, attempt_id,
 * accepted, duplicate}`; the same `input_id` with the same bytes answers
 * `duplicate: true`, with other bytes 409 `session_conflict`; at most 64 KiB
 * unread on the attempt's stdin, else 429 `input_buffer_full`), `POST
 * …/signals`, `PUT …/terminal` (`{rows, cols}` 1..65535; 409
 * `pty_unavailable` for `pipes` io) and `GET …/events`. The WebSocket
 * routes (`…/sessions/{id}/ws`, contexts' `…/ws`, `…/files/watch`) are
 * served by `s0 serve`; without sockets use sandbox0/streams.h. The
 * server-sent event stream (`…/events/stream`) answers 501
 * `not_implemented` (S0_EUNSUPPORTED); poll `GET …/events?after=` instead.
 *
 * Every call blocks for one exchange and is safe on a shared client.
 */
#ifndef SANDBOX0_CONTEXTS_H
#define SANDBOX0_CONTEXTS_H

#include "sandbox0/client.h"

S0_BEGIN_DECLS

/**
 * Create a context (`POST …/contexts`, 201).
 * @param request_json a CreateContextRequest object, e.g.
 *        `{"type":"repl"}` or `{"type":"cmd","cmd":{"command":["ls"]},"wait_until_done":true}`.
 * @param[out] context_json_out (transfer full) the ContextResponse; its
 *             `id` names the context. Free with s0_free().
 * @retval S0_EINVAL bad request (`invalid_request`) or request_json not a JSON object.
 * @since 0.1
 */
S0_API int s0_context_create(s0_client *c, const char *sandbox_id, const char *request_json,
                             char **context_json_out, s0_error **err);

/**
 * Run input in a context and wait for its result (`POST …/contexts/{id}/exec`);
 * a REPL gets a newline appended when @p data lacks one.
 * @param[out] result_json_out (transfer full) the ContextExecResponse
 *             (`output_raw`, `stdout`, `stderr`, and `exit_code`/`state`
 *             once the process has exited). Free with s0_free().
 * @retval S0_ETIMEDOUT `exec_timeout`. @retval S0_EGONE `process_finished`.
 * @since 0.1
 */
S0_API int s0_context_exec(s0_client *c, const char *sandbox_id, const char *context_id,
                           const char *data, char **result_json_out, s0_error **err);

/**
 * Read a context (`GET …/contexts/{id}`).
 * @param[out] context_json_out (transfer full) the ContextResponse.
 * @retval S0_ENOTFOUND `context_not_found`.
 * @since 0.1
 */
S0_API int s0_context_get(s0_client *c, const char *sandbox_id, const char *context_id,
                          char **context_json_out, s0_error **err);

/**
 * Delete a context and kill its process (`DELETE …/contexts/{id}`).
 * @retval S0_ENOTFOUND `context_not_found`.
 * @since 0.1
 */
S0_API int s0_context_delete(s0_client *c, const char *sandbox_id, const char *context_id,
                             s0_error **err);

/**
 * Any endpoint of the process family: `<method> /api/v1/sandboxes/{id}<suffix>`.
 * @param method "GET", "POST", "PUT" or "DELETE".
 * @param suffix starts with "/contexts" or "/sessions", already escaped,
 *               with an optional "?query" (e.g. "/sessions/s1/events?after=3",
 *               "/sessions/s1/inputs" with body
 *               `{"input_id":"i1","data_base64":"aGkK"}`).
 * @param body_json (nullable) request body, a JSON object.
 * @param idempotency_key (nullable) sent as `Idempotency-Key` (session create).
 * @param[out] status_out (nullable) the 2xx status (201 created, 200 replayed,
 *             202 accepted…).
 * @param[out] data_json_out (nullable; transfer full) the `data` member as JSON
 *             text ("null" when absent). Free with s0_free().
 * @retval S0_EINVAL bad arguments.
 * @since 0.1
 */
S0_API int s0_runtime_call(s0_client *c, const char *method, const char *sandbox_id,
                           const char *suffix, const char *body_json,
                           const char *idempotency_key, int *status_out, char **data_json_out,
                           s0_error **err);

S0_END_DECLS

#endif
