/*
 * Contexts of docs/wire.md §8.1 over the simulated guest: `repl` contexts run
 * the built-in shell (shell.h) interactively, `cmd` contexts run one argv.
 * A context owns one process of the guest; its output lives in that
 * process's pipes (process memory), so a memory checkpoint keeps it.
 *
 * Each function takes the request body as parsed JSON (the router checks
 * that it is valid JSON) and gives the `data` of the success envelope in
 * the exact shape of docs/wire.md §8.1; the HTTP status of a success is given
 * below. Errors carry the wire reasons of include/sandbox0/error.h, so
 * the router answers them with s0_error_to_wire():
 *   S0_EINVAL `invalid_request` (400), S0_ENOTFOUND `context_not_found`
 *   (404), S0_ECONFLICT `process_not_running` / `input_buffer_full` /
 *   `pty_unavailable` (409), S0_EGONE `process_finished` (410),
 *   S0_ETIMEDOUT `exec_timeout` (408, "execution timed out").
 * A body member that is not a wire key of the official SDK's model
 * (CreateContextRequest and the models it nests, ContextInputRequest,
 * SignalContextRequest, ResizeContextRequest) is S0_EINVAL `unknown
 * field "<path>"` (e.g. "pty_size.colums"), so a misspelt "tll_sec" no
 * longer gives a context without a TTL. Restart takes no body, so any
 * member there is unknown (the router's check). ContextResponse has no
 * deadline fields (docs/wire.md §8.1, the SDK's model): ttl_sec and
 * idle_timeout_sec are not echoed.
 *
 * Simulation notes: the REPL is the built-in shell whatever the alias
 * (alias defaults to "sh"); a cmd context runs at once — to its end when
 * `wait_until_done`, else until it ends or sleeps (virtual time, guest.h).
 *
 * Deadlines (guest.h "Deadlines", on virtual time, so the lead's clock
 * drives them): `ttl_sec` ends the context's process when virtual time
 * reaches its start + ttl_sec (the start of create, or of the fresh
 * process a restart makes); `idle_timeout_sec` ends it when virtual time
 * reaches its last activity + idle_timeout_sec, activity being exec,
 * input, signal, resize and output the process writes (an exec in
 * progress is never idle; its end is activity). 0 means none for each. At
 * the deadline the process gets KILL — docs/wire.md §8.1 gives contexts no
 * grace period (unlike a session's stop_grace_period_seconds), and §8.4
 * makes KILL the signal that ends a simulated process `killed` — so GET
 * then answers `running:false`, `state:"killed"`, `exit_code:137`, and
 * exec/input answer 410 `process_finished` (§8.1's error for a finished
 * process), signal and resize 409 `process_not_running`; an exec cut by
 * the deadline answers its output with that final state. The deadlines
 * live in the process, so a memory checkpoint keeps them.
 *
 * A REPL `/input` runs every complete line at once (its output is kept
 * for GET's `output_raw`); `/exec` returns the output of what it ran,
 * giving up with `exec_timeout` once the exec's virtual time passes the
 * guest's exec timeout (the REPL keeps running).
 *
 * @threadsafety safe from any thread (the guest lock).
 */
#ifndef S0_RUNTIME_SIM_CONTEXTS_H
#define S0_RUNTIME_SIM_CONTEXTS_H

#include <cjson/cJSON.h>

#include "local/runtime/sim/guest.h"

/** Largest pending (not yet newline-terminated) REPL input, bytes. */
#define S0__CTX_INPUT_MAX ((size_t)64 << 10)

/**
 * POST /contexts: create a context (201).
 * @param body (borrowed) CreateContextRequest.
 * @param[out] data_out (transfer full) ContextResponse; with
 *             `wait_until_done` it carries the finished command's (or the
 *             initial input's) output_raw, stdout, stderr, exit_code, state.
 * @retval S0_EINVAL `invalid_request` (message names the field).
 * @retval S0_ENOMEM
 */
int s0__ctx_create_json(s0__guest *g, const cJSON *body, cJSON **data_out, s0_error **err);

/** GET /contexts (200): `{contexts:[ContextResponse…]}` in creation order. */
int s0__ctx_list_json(s0__guest *g, cJSON **data_out, s0_error **err);

/** GET /contexts/{id} (200): ContextResponse. @retval S0_ENOTFOUND `context_not_found` */
int s0__ctx_get_json(s0__guest *g, const char *id, cJSON **data_out, s0_error **err);

/** DELETE /contexts/{id} (200): `{deleted:true}`; the process is killed and reaped. */
int s0__ctx_delete_json(s0__guest *g, const char *id, cJSON **data_out, s0_error **err);

/** POST /contexts/{id}/restart (200): a fresh process for the same context. */
int s0__ctx_restart_json(s0__guest *g, const char *id, cJSON **data_out, s0_error **err);

/**
 * POST /contexts/{id}/input (200): `{written:true}`; body `{data}`.
 * @retval S0_EINVAL "data is required". @retval S0_EGONE `process_finished`.
 * @retval S0_ECONFLICT `process_not_running` (stopped by STOP) or
 *         `input_buffer_full` (over ::S0__CTX_INPUT_MAX pending).
 */
int s0__ctx_input_json(s0__guest *g, const char *id, const cJSON *body, cJSON **data_out,
                       s0_error **err);

/**
 * POST /contexts/{id}/exec (200): ContextExecResponse `{output_raw, stdout,
 * stderr[, exit_code, state]}`; a REPL gets `\n` appended when missing.
 * Errors as input, plus S0_ETIMEDOUT `exec_timeout`.
 */
int s0__ctx_exec_json(s0__guest *g, const char *id, const cJSON *body, cJSON **data_out,
                      s0_error **err);

/**
 * POST /contexts/{id}/signal (200): `{signaled:true}`; body `{signal}`.
 * @retval S0_EINVAL "signal is required" / "unsupported signal".
 * @retval S0_ECONFLICT `process_not_running`.
 */
int s0__ctx_signal_json(s0__guest *g, const char *id, const cJSON *body, cJSON **data_out,
                        s0_error **err);

/**
 * POST /contexts/{id}/resize (200): `{resized:true}`; body `{rows, cols}`
 * (both > 0). @retval S0_ECONFLICT `pty_unavailable` (a cmd context made
 * without pty_size) or `process_not_running`.
 */
int s0__ctx_resize_json(s0__guest *g, const char *id, const cJSON *body, cJSON **data_out,
                        s0_error **err);

/**
 * The context WebSocket's read (runtime.h S0__RT_CTX_STREAM): output after a
 * cursor. body `{cursor: {stdout|stderr|pty: bytes}, max: bytes}` (max
 * default 64 KiB). data `{output: [{source, data}…], cursor: {…}, running,
 * drained[, exit_code, state]}`: at most max bytes, sources in order
 * (`pty` for a context with a PTY, else `stdout` then `stderr`); drained
 * when nothing is left after the new cursor. @retval S0_ENOTFOUND
 */
int s0__ctx_stream_json(s0__guest *g, const char *id, const cJSON *body, cJSON **data_out,
                        s0_error **err);

/** The PID of a context's process (inspection and tests). @retval S0_ENOTFOUND */
int s0__ctx_pid(s0__guest *g, const char *id, int32_t *pid_out, s0_error **err);

#endif
