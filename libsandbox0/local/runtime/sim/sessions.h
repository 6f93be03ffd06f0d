/*
 * Supervised sessions of docs/wire.md §8.3 (the minimum of §8.4): a sandbox
 * owns stable sessions; each OS process that runs one is an *attempt* in
 * the simulated guest (guest.h), or in a real runtime's init when the
 * registry is given one (s0__sessions_set_procs: the gvisor runtime's procd). A session's identity, spec and event
 * journal live here, outside process memory, so they survive a
 * filesystem-only replacement; the lead persists them (the sink below and
 * s0__sessions_serialize()).
 *
 * Request bodies (the spec at every level, desired-state, signals, inputs,
 * terminal, attempts) take only the wire keys of the official SDK's models
 * (ExecutionSession*ToJSON); any other member is 400 `invalid_request`
 * `unknown field "<path>"` (e.g. "lifecycle.restart.polcy"), so a misspelt
 * field is never taken for an absent one.
 *
 * Behaviour:
 * - create starts the first attempt at once (desired state `running`):
 *   events `session.created`, `attempt.starting`, `attempt.started`,
 *   `session.ready` (readiness `process` is met at start, `delay` when
 *   the attempt is still alive delay_ms later, `output` when the bytes
 *   appear), then `output` events (stream stdout
 *   / stderr, or pty) and `attempt.exited`. The restart policy (`never`,
 *   `on_failure`, `always`; max_restarts within window_seconds;
 *   exponential backoff from initial_backoff_ms to max_backoff_ms, in the
 *   guest's virtual time) decides between `exited`, `backoff` (then a new
 *   attempt) and `failed` (restart limit).
 * - An Idempotency-Key replayed with the same normalised spec returns the
 *   existing session (200); with another spec 409 `session_conflict`.
 * - desired-state `stopped` stops the attempt (TERM) and keeps it stopped;
 *   `running` starts a new attempt of a terminal session.
 * - The journal keeps events by event_retention (max_bytes of event JSON,
 *   max_age_seconds on the wall clock); `after` older than the retained
 *   window answers 410 `event_cursor_expired`.
 * - s0__sessions_runtime_replaced(): after a filesystem-only replacement
 *   every session active at replacement (not exited, stopped or failed)
 *   records `attempt.exited` with reason `runtime_replaced` and no exit
 *   code, then follows `runtime_recovery`: `restart` starts a new attempt
 *   (new PID) in the new generation, `stop` makes it `stopped`. Terminal
 *   sessions stay terminal (SES-01..05).
 * - s0__sessions_memory_restored(): after a memory restore sessions keep
 *   their captured attempt and PID; nothing is recorded (SES-06).
 * - lifecycle.idle_timeout_seconds (docs/wire.md §8.3: activity = output,
 *   accepted input, signals, resize — not attachments or reads) is an
 *   idle deadline on each attempt's process in the guest's virtual time
 *   (guest.h "Deadlines"), counted from the attempt's start; 0 is off.
 *   When virtual time reaches the last activity + the timeout the guest
 *   stops the process, and the next reconciliation journals
 *   `attempt.stopping` and (once it has ended) `attempt.exited` with reason
 *   `idle_timeout`, then `session.expired` (reason `idle_timeout`): the
 *   phase is `exited` whatever the restart policy (an expiry is not a
 *   failure to restart from). The deadline lives in the process, so a
 *   memory checkpoint keeps it.
 * - lifecycle.max_lifetime_seconds: docs/wire.md §8.3 says "measured from
 *   creation" — the session's creation, so it bounds the session, not each
 *   attempt: every attempt's process carries the deadline creation +
 *   lifetime (virtual time), met exactly like the idle deadline, journaled
 *   the same with reason `max_lifetime` and not restarted. A session in
 *   `backoff` at the deadline records `session.expired` alone; a later
 *   start (desired state, PUT spec) records it again and starts nothing;
 *   POST …/attempts answers 409 `session_conflict`. A changed lifetime
 *   applies to attempts started after the change.
 * - lifecycle.stop_grace_period_seconds: every stop (desired state
 *   `stopped`, delete, PUT spec, replace_current, an expiry, a readiness
 *   timeout) sends TERM; a process still alive when the grace has passed in
 *   virtual time gets KILL (s0__guest_stop()). The shell dies on TERM
 *   unless it ran `trap '' TERM` (shell.h). The attempt exits 143 (TERM) or
 *   137 (KILL); meanwhile the phase is `stopping`, and a replacement attempt
 *   (PUT spec, replace_current, desired `running`) starts once the old one
 *   has exited. A deleted session's process is disowned and reaped when it
 *   ends. A runtime shutdown has no grace (s0__guest_shutdown()).
 * - readiness timeout_ms (0: none): an attempt not ready that long after
 *   its start is stopped (`attempt.stopping` / `attempt.exited` reason
 *   `readiness_timeout`). It is an attempt failure (docs/wire.md §8.3: phase
 *   `failed` covers "startup, readiness or restart limit"): `on_failure`
 *   and `always` restart it as after a failed exit; `never` leaves the
 *   session `failed` with `session.failed` reason `readiness_timeout`.
 *   Delay and timeout are checked at reconciliation, on virtual time; a
 *   tie of delay and timeout is ready.
 * - The second tier (docs/wire.md §8.4 item 3, ses_tier2.c): PUT spec, new
 *   attempts, inputs and terminal resize, below. Input reaches the
 *   attempt's stdin: a top-level `read` of an attempt waits for a whole
 *   line or EOF (shell.h).
 * - Simulation notes: the streaming routes (events/stream, ws) are not
 *   offered.
 *
 * Every operation first reconciles with the guest (s0__sessions_sync):
 * output becomes events, ended attempts are recorded and restarted. A guest
 * whose procd has stopped (s0__guest_shutdown) is not reconciled, so a
 * teardown never turns active sessions into normal exits (SES-04).
 *
 * Errors carry wire reasons: S0_EINVAL `invalid_request` (400),
 * S0_ENOTFOUND `session_not_found` (404), S0_ECONFLICT `session_conflict`
 * (409), S0_EGONE `event_cursor_expired` (410), S0_ETHROTTLED
 * `input_buffer_full` (429).
 *
 * @threadsafety safe from any thread: one mutex per registry, taken before
 * the guest's (never the other way round).
 */
#ifndef S0_RUNTIME_SIM_SESSIONS_H
#define S0_RUNTIME_SIM_SESSIONS_H

#include <cjson/cJSON.h>

#include "local/runtime/sim/guest.h"

typedef struct s0__sessions s0__sessions;

/**
 * Where durable changes go (all nullable). Called with the registry lock
 * held, in order; must not call back into the registry.
 */
typedef struct s0__sessions_sink {
	/** An event was appended to a journal: its ExecutionSessionEvent JSON. */
	void (*event)(void *payload, const char *session_id, int64_t seq, const char *event_json);
	/** A session was created or changed (its ExecutionSession JSON), or deleted (NULL). */
	void (*session)(void *payload, const char *session_id, const char *session_json);
	void *payload;
} s0__sessions_sink;

/**
 * A process host other than the simulated guest — a real runtime's init
 * (the gvisor runtime's procd) — for the attempts of a registry
 * (s0__sessions_set_procs). Each function has the meaning of its guest.h
 * namesake (s0__guest_vtime_ms, s0__guest_spawn, s0__guest_proc_get
 * (PID 1: the init itself), s0__guest_signal, s0__guest_stop,
 * s0__guest_take_output, s0__guest_write_input, s0__guest_reap), with
 * @p ctx for the guest. Called with the registry lock held.
 */
typedef struct s0__ses_procs {
	void *ctx;
	int64_t (*vtime_ms)(void *ctx);
	int (*spawn)(void *ctx, const s0__spawn_req *r, int32_t *pid_out, s0_error **err);
	int (*proc_get)(void *ctx, int32_t pid, s0__proc_info *out, s0_error **err);
	int (*signal)(void *ctx, int32_t pid, int signo, s0_error **err);
	int (*stop)(void *ctx, int32_t pid, int64_t grace_ms, bool disown, s0_error **err);
	int (*take_output)(void *ctx, int32_t pid, s0__buf *out, s0__buf *errb, s0__buf *raw,
	                   s0_error **err);
	int (*write_input)(void *ctx, int32_t pid, const void *data, size_t len, bool eof,
	                   s0_error **err);
	void (*reap)(void *ctx, int32_t pid);
} s0__ses_procs;

/**
 * Run the registry's attempts on @p p (copied; NULL: on the guest each
 * call passes, the default). While set, every call below takes NULL for
 * its guest and uses @p p instead; the caller keeps p->ctx valid until it
 * sets another host (or NULL) and makes no call on the registry after.
 * @threadsafety safe (under the registry lock).
 */
void s0__sessions_set_procs(s0__sessions *s, const s0__ses_procs *p);

/** Options of s0__sessions_new(); zero fields mean the default. */
typedef struct s0__sessions_opts {
	const s0_clock *clock;    /**< wall clock for timestamps and retention (copied); NULL real */
	int64_t generation;       /**< the sandbox's current runtime_generation */
	s0__sessions_sink sink;
} s0__sessions_opts;

/** A registry with no sessions. @param[out] out (transfer full) free with s0__sessions_free(). */
int s0__sessions_new(const s0__sessions_opts *o, s0__sessions **out, s0_error **err);
/** Free the registry (attempt processes are left to their guest). NULL-safe. */
void s0__sessions_free(s0__sessions *s);

/**
 * POST /sessions: 201 with a new ExecutionSession, or 200 with the
 * existing one for a replayed @p idempotency_key (nullable).
 * @param g (nullable) the running guest; NULL: the attempt starts later
 *          (s0__sessions_runtime_replaced).
 * @param[out] status_out 201 or 200.
 */
int s0__sessions_create_json(s0__sessions *s, s0__guest *g, const cJSON *spec,
                             const char *idempotency_key, cJSON **data_out, int *status_out,
                             s0_error **err);
/** GET /sessions (200): `{sessions:[ExecutionSession…]}` in creation order. */
int s0__sessions_list_json(s0__sessions *s, s0__guest *g, cJSON **data_out, s0_error **err);
/** GET /sessions/{id} (200). @retval S0_ENOTFOUND `session_not_found` */
int s0__sessions_get_json(s0__sessions *s, s0__guest *g, const char *id, cJSON **data_out,
                          s0_error **err);
/** DELETE /sessions/{id} (200 `{deleted:true}`): stops the attempt, drops identity and journal. */
int s0__sessions_delete_json(s0__sessions *s, s0__guest *g, const char *id, cJSON **data_out,
                             s0_error **err);
/** PUT /sessions/{id}/desired-state (200): body `{state: running|stopped}`. */
int s0__sessions_desired_json(s0__sessions *s, s0__guest *g, const char *id, const cJSON *body,
                              cJSON **data_out, s0_error **err);
/**
 * POST /sessions/{id}/signals (202 `{accepted:true}`): body `{signal,
 * expected_attempt_id?}`. @retval S0_ECONFLICT `session_conflict` no
 * running attempt, or another attempt than expected.
 */
int s0__sessions_signal_json(s0__sessions *s, s0__guest *g, const char *id, const cJSON *body,
                             cJSON **data_out, s0_error **err);
/**
 * PUT /sessions/{id} (200 ExecutionSession): replace the spec (the body is
 * a whole ExecutionSessionSpec, normalised as on create). The same
 * normalised spec changes nothing; another one gets the next spec_version.
 * When command, cwd, env, io or readiness change and the desired state is
 * `running`, the running attempt is stopped (`attempt.stopping`, reason
 * `spec_changed`) and a new attempt starts under the new spec; a terminal
 * session starts one too. Desired state `stopped` stops the attempt; a
 * change from `stopped` to `running` starts one. An Idempotency-Key of the
 * create then compares with the new spec.
 * @retval S0_EINVAL `invalid_request`. @retval S0_ENOTFOUND `session_not_found`
 * @retval S0_ECONFLICT `session_conflict` the session is stopping.
 */
int s0__sessions_replace_json(s0__sessions *s, s0__guest *g, const char *id, const cJSON *spec,
                              cJSON **data_out, s0_error **err);
/**
 * POST /sessions/{id}/attempts (201 ExecutionSession): start a new attempt
 * now (also from `backoff` or a terminal phase; the desired state is not
 * changed). Body (nullable) `{replace_current?: bool}`: true stops a running
 * attempt first (`attempt.stopping`, reason `replaced`).
 * @retval S0_EINVAL "replace_current must be a boolean".
 * @retval S0_ECONFLICT `session_conflict` an attempt runs and replace_current
 *         is not true.
 */
int s0__sessions_attempt_json(s0__sessions *s, s0__guest *g, const char *id, const cJSON *body,
                              cJSON **data_out, s0_error **err);
/**
 * POST /sessions/{id}/inputs (202 `{input_id, attempt_id, accepted:true,
 * duplicate}`): body ExecutionSessionInputRequest `{input_id (1..255
 * bytes), expected_attempt_id?, data_base64?, eof?}`. The bytes (and EOF)
 * are queued on the current attempt's stdin; event `input.accepted`
 * (reason: the input_id), then whatever the attempt printed. The last
 * ::S0__SES_INPUTS_KEEP input ids of a session are remembered (and carried
 * by s0__sessions_serialize): the same input_id with the same bytes and eof
 * answers again with `duplicate: true` and the attempt that took it,
 * whatever the attempt's state now.
 * @retval S0_EINVAL `invalid_request` (input_id, data_base64, eof).
 * @retval S0_ECONFLICT `session_conflict` the input_id with other content,
 *         no running attempt, another attempt than expected, or stdin
 *         already closed by eof.
 * @retval S0_ETHROTTLED `input_buffer_full` (429) more than
 *         ::S0__SES_STDIN_MAX bytes would wait unread on stdin.
 */
int s0__sessions_input_json(s0__sessions *s, s0__guest *g, const char *id, const cJSON *body,
                            cJSON **data_out, s0_error **err);
/**
 * PUT /sessions/{id}/terminal (200 `{resized:true}`): body `{rows, cols
 * (integers 1..65535), expected_attempt_id?}`. The attempt's terminal takes
 * the size (kept in the registry; WINCH is sent, which the shell ignores);
 * event `terminal.resized` with reason "ROWSxCOLS".
 * @retval S0_EINVAL "rows and cols are required and must be between 1 and 65535".
 * @retval S0_ECONFLICT `session_conflict` no running attempt or another
 *         attempt than expected; `pty_unavailable` io.mode `pipes`.
 */
int s0__sessions_terminal_json(s0__sessions *s, s0__guest *g, const char *id, const cJSON *body,
                               cJSON **data_out, s0_error **err);
/**
 * GET /sessions/{id}/events (200): `{events:[…], cursor:{earliest,latest}}`.
 * @param after (nullable) the raw query value (default 0, exclusive).
 * @param limit (nullable) the raw query value (1..10000, default 1000).
 * @retval S0_EINVAL "after must be a non-negative integer" / "limit must be
 *         between 1 and 10000". @retval S0_EGONE `event_cursor_expired`.
 */
int s0__sessions_events_json(s0__sessions *s, s0__guest *g, const char *id, const char *after,
                             const char *limit, cJSON **data_out, s0_error **err);

/** Reconcile with the guest now (output, exits, restarts). @p g nullable. */
int s0__sessions_sync(s0__sessions *s, s0__guest *g, s0_error **err);

/**
 * Apply runtime_recovery after a filesystem-only replacement: @p g is the
 * new generation's guest, @p generation its runtime_generation.
 */
int s0__sessions_runtime_replaced(s0__sessions *s, s0__guest *g, int64_t generation,
                                  s0_error **err);

/**
 * After a memory restore into @p g (generation @p generation): sessions
 * keep their attempts and PIDs; an attempt whose process is missing from
 * the image is recovered as in s0__sessions_runtime_replaced().
 */
int s0__sessions_memory_restored(s0__sessions *s, s0__guest *g, int64_t generation,
                                 s0_error **err);

/** The PID of a session's current attempt (0: none). @retval S0_ENOTFOUND */
int s0__sessions_pid(s0__sessions *s, const char *id, int32_t *pid_out, s0_error **err);

/**
 * Everything (sessions, specs, attempts, journals, idempotency keys, input
 * ids, terminal sizes, deadline state) as one blob (format "S0SES003";
 * "S0SES002" blobs, without the deadline state, and "S0SES001" blobs,
 * without the second-tier state either, are still read: their creation and
 * attempt-start virtual times are taken at the next reconciliation).
 * @param[out] buf_out (transfer full) free().
 */
int s0__sessions_serialize(s0__sessions *s, void **buf_out, size_t *len_out, s0_error **err);

/**
 * Rebuild a registry from s0__sessions_serialize() output.
 * @param o options (clock, sink, generation) for the new registry.
 * @retval S0_ECORRUPT not a valid blob. @retval S0_ENOMEM
 */
int s0__sessions_deserialize(const void *buf, size_t len, const s0__sessions_opts *o,
                             s0__sessions **out, s0_error **err);

#endif
