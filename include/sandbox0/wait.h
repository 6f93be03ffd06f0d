/**
 * @file sandbox0/wait.h
 * @brief Lifecycle waits: pause_and_wait, resume_and_wait and the generic
 * wait (docs/decisions.md "Wait helpers"; docs/wire.md §4.2; CL-01..CL-07).
 *
 * Rules the helpers enforce:
 * - the first poll is immediate; later polls back off from
 *   `poll_initial_ms` by `backoff_factor_pct` up to `poll_max_ms`, with
 *   jitter, and never sleep past the deadline;
 * - polling GETs ride out 408, 429 and 503 (honouring Retry-After when it is
 *   longer than the backoff), 503 "sandbox is waking up", other 5xx and
 *   transport errors; 404, 503 `sandbox_resume_failed` (S0_ERESUME), other
 *   4xx and malformed responses (S0_EPROTOCOL) end the wait with that error;
 * - exactly one lifecycle POST is sent; it is repeated with the same body
 *   only when its outcome is unknown (transport error, sent or not; 502;
 *   504; 503 "sandbox is waking up"): the sandbox is first inspected with a
 *   GET, which ends the wait if it already shows the goal; otherwise the
 *   identical request is sent again after the next sleep, and so on until
 *   one is accepted or the deadline. Any other POST error (400, 404, 409,
 *   429, 500, 503 without "waking up"…) is returned as is. The body is
 *   fixed for the whole call: there is no code path that retries a memory
 *   request with `memory: false` or without a body;
 * - a transport failure before any request of the wait could have reached
 *   the server (connection refused, DNS, TLS) is returned at once as
 *   S0_ETRANSPORT: nothing was started, so there is nothing to wait for;
 * - no request starts at or after the deadline, and each request's timeout
 *   is capped by the time left, so the call returns by the deadline (plus
 *   transport slack); a Retry-After that reaches past the deadline makes
 *   the wait sleep to the deadline and time out without another request;
 * - at the deadline the wait returns S0_ETIMEDOUT (reason `wait_deadline`)
 *   carrying the sandbox id, the budget (s0_error_timeout_ms()), the last
 *   observed sandbox, and as cause the last transient failure if the last
 *   request failed; the server's operation goes on;
 * - errors returned from a request (404, S0_ERESUME, S0_EPROTOCOL…) also
 *   carry the sandbox id and the last observed sandbox when there was one.
 *
 * Blocking: all three block on the client's clock. Cancel (the options'
 * token or the client's) returns S0_ECANCELED promptly from any thread.
 * @threadsafety safe on a shared client; the callback runs on the calling
 * thread and never after the function returns.
 */
#ifndef SANDBOX0_WAIT_H
#define SANDBOX0_WAIT_H

#include <stdbool.h>
#include "sandbox0/sandbox.h"

/** Default deadline of filesystem-mode waits (60 s). */
#define S0_WAIT_DEFAULT_TIMEOUT_MS 60000
/** Default deadline of memory-mode waits (360 s, the budget of CL-14's example). */
#define S0_WAIT_DEFAULT_MEMORY_TIMEOUT_MS 360000

/**
 * Progress callback: called on the first observation and on every observed
 * change of (status, paused, runtime_generation, runtime_id). Observations
 * are the sandboxes that GETs return (resume's first read included); the
 * replies of the POST are not observations.
 *
 * @param info (transfer none) the sandbox just observed; valid during the call.
 * @param elapsed_ms time since the wait started, on the client's clock.
 * @param payload the options' payload.
 * @return 0 to continue; non-zero stops the wait with S0_EUSER.
 */
typedef int (*s0_wait_cb)(const s0_sandbox_info *info, int64_t elapsed_ms, void *payload);

/**
 * Predicate for s0_sandbox_wait(): return 1 (any positive value) when done,
 * 0 to keep polling, or a negative ::s0_code to stop with that code
 * (S0_ELIFECYCLE makes the wait return a lifecycle error, reason
 * `predicate_failed`, carrying the sandbox; other codes give an error of
 * that code, reason `predicate`, carrying it too). Called on every
 * observation, whatever the status mask says, so it can stop the wait on
 * states outside the mask.
 */
typedef int (*s0_wait_predicate)(const s0_sandbox_info *info, void *payload);

/**
 * Wait options. Zero fields take the defaults given.
 * @options[version] S0_WAIT_OPTIONS_VERSION
 * @options[init_function] s0_wait_options_init
 */
typedef struct s0_wait_options {
	uint32_t version; /**< S0_WAIT_OPTIONS_VERSION */
	/**
	 * For pause/resume, a tri-state passed through unchanged (CL-09):
	 * S0_BOOL_UNSET (0) sends no body (filesystem-only); S0_BOOL_TRUE sends
	 * `{"memory":true}` and selects memory mode (360 s default, the `failed`
	 * rules); S0_BOOL_FALSE sends `{"memory":false}` with the filesystem
	 * rules. Other values: S0_EINVAL. Ignored by s0_sandbox_wait().
	 */
	int32_t memory;
	/**
	 * Deadline for the whole call in ms: 0 = default (60 s, or 360 s in
	 * memory mode); S0_TIMEOUT_INFINITE = none; other negatives S0_EINVAL.
	 */
	int64_t timeout_ms;
	/**
	 * First sleep after the immediate first poll, ms; 0 = 100 (or
	 * poll_max_ms when that is smaller). Negative, or above an explicit
	 * poll_max_ms: S0_EINVAL.
	 */
	int64_t poll_initial_ms;
	/**
	 * Largest sleep between polls, ms, jitter included; 0 = 500 (or
	 * poll_initial_ms when that is larger). Negative: S0_EINVAL.
	 */
	int64_t poll_max_ms;
	/** Growth of the sleep per poll in percent (200 = ×2); 0 = 150; < 100: S0_EINVAL. */
	uint32_t backoff_factor_pct;
	/**
	 * Random spread of each sleep, percent 0..100: a sleep is shortened by
	 * up to this share of it (never lengthened, so poll_max_ms stays a
	 * cap); 0 = 20; S0_WAIT_NO_JITTER for none; > 100: S0_EINVAL.
	 */
	uint32_t jitter_pct;
	/** Bit flags: S0_WAIT_NO_JITTER, S0_WAIT_NOTFOUND_OK; other bits: S0_EINVAL. */
	uint32_t flags;
	s0_wait_cb progress_cb;  /**< (nullable) progress callback */
	void *payload;           /**< passed to the callback and the predicate */
	/**
	 * (nullable, borrowed) cancel token for this wait, observed together
	 * with the client's own token while sleeping and during each request.
	 */
	s0_cancel_token *cancel;
} s0_wait_options;

/** Current version of ::s0_wait_options. */
#define S0_WAIT_OPTIONS_VERSION 1
/** Static initialiser. */
#define S0_WAIT_OPTIONS_INIT {S0_WAIT_OPTIONS_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
/** flags: no jitter (deterministic schedules in tests). */
#define S0_WAIT_NO_JITTER 0x1u
/**
 * flags: s0_sandbox_wait() treats 404 as "done" with *out NULL (deletion
 * waits). Ignored by the pause and resume helpers, for which 404 is
 * always S0_ENOTFOUND.
 */
#define S0_WAIT_NOTFOUND_OK 0x2u

S0_BEGIN_DECLS

/**
 * Initialise @p opts with defaults (all zero but the version).
 * @param[out] opts the options to fill.
 * @param[in] version S0_WAIT_OPTIONS_VERSION.
 * @retval S0_EINVAL unknown version or NULL @p opts; @p opts untouched.
 * @threadsafety safe
 * @since 0.1
 */
S0_API int s0_wait_options_init(s0_wait_options *opts, uint32_t version);

/**
 * Poll `GET /api/v1/sandboxes/{id}` until @p until_mask contains the status
 * (and, when @p predicate is given, it returns 1). The generic form of the
 * helpers below (JS `waitForLifecycle`, Go `WaitForSandboxLifecycle`),
 * with the same schedule, deadline and cancel rules; it sends no POST.
 *
 * @param[in] c the client.
 * @param[in] sandbox_id the sandbox.
 * @param[in] until_mask statuses that end the wait (S0_STATUS_MASK bits);
 *            0 = decided by @p predicate alone.
 * @param[in] predicate (nullable) extra predicate (see ::s0_wait_predicate);
 *            @p until_mask 0 with no predicate is S0_EINVAL.
 * @param[in] opts (nullable) options; `memory` is ignored here (default
 *            deadline 60 s).
 * @param[out] out (transfer full, nullable) the sandbox that ended the wait
 *             (NULL after a 404 with S0_WAIT_NOTFOUND_OK); untouched on
 *             failure.
 * @param[out] err (nullable) error detail.
 * @retval S0_EINVAL bad options or id, or neither mask nor predicate (no
 *         request sent).
 * @retval S0_ETIMEDOUT deadline; reason `wait_deadline`, last sandbox set.
 * @retval S0_ENOTFOUND the sandbox disappeared (404).
 * @retval S0_ELIFECYCLE the predicate returned S0_ELIFECYCLE.
 * @retval S0_ERESUME / S0_EPROTOCOL / S0_EAUTH… a poll's definite error.
 * @retval S0_ECANCELED cancelled. S0_EUSER the callback stopped the wait.
 * @threadsafety safe
 * @since 0.1
 */
S0_API int s0_sandbox_wait(s0_client *c, const char *sandbox_id, uint32_t until_mask,
                           s0_wait_predicate predicate, const s0_wait_options *opts,
                           s0_sandbox_info **out, s0_error **err);

/**
 * Pause and wait for the paused state (`status == paused && paused`).
 *
 * Sends one POST pause (body per opts->memory, see ::s0_wait_options),
 * then polls at once; 200 and 202 both mean accepted, and the POST reply
 * never ends the wait by itself (CL-01, CL-02). In memory mode an observed
 * `failed` ends the wait with S0_ELIFECYCLE (action "memory pause", reason
 * `memory_pause_failed`): a capture failure is never success, and no
 * filesystem-only pause is ever sent instead (CL-03). In filesystem mode
 * `failed` is not a stop condition. A pause that can no longer complete
 * because its runtime generation was replaced without it (the server
 * crashed before publishing and its recovery superseded the pause, or
 * another caller resumed) ends the wait at the next look with
 * S0_ELIFECYCLE, reason `pause_superseded`: the generation is the one the
 * pause answer names, else the first poll's, and a later one without the
 * paused state is that end; no second pause is sent (CL-19).
 *
 * @param[in] c the client.
 * @param[in] sandbox_id the sandbox.
 * @param[in] opts (nullable) options; NULL = filesystem pause, 60 s.
 * @param[out] out (transfer full, nullable) the paused sandbox; untouched
 *             on failure.
 * @param[out] err (nullable) error detail.
 * @retval S0_EINVAL bad options or id; no request sent.
 * @retval S0_ELIFECYCLE memory capture failed (reason
 *         `memory_pause_failed`); the sandbox reads `failed` with `paused`
 *         true and its last committed RootFS intact. Or the pause was
 *         superseded (reason `pause_superseded`, action "pause" or "memory
 *         pause"): the sandbox runs (or reads `failed` while no replacement
 *         can be placed) on the last committed RootFS head; writes after it
 *         may be lost; pausing again pauses it as it is now.
 * @retval S0_ETIMEDOUT deadline; the pause goes on server-side.
 * @retval S0_ECONFLICT / S0_ENOTFOUND / S0_EUNAVAILABLE / S0_EQUOTA /
 *         S0_ETHROTTLED / S0_EINTERNAL from the POST; nothing was accepted.
 * @retval S0_ENOTFOUND the sandbox disappeared while waiting.
 * @retval S0_EPROTOCOL a malformed poll response.
 * @retval S0_ECANCELED cancelled; the accepted pause goes on.
 * @retval S0_EUSER the progress callback stopped the wait.
 * @threadsafety safe
 * @since 0.1
 */
S0_API int s0_sandbox_pause_and_wait(s0_client *c, const char *sandbox_id,
                                     const s0_wait_options *opts, s0_sandbox_info **out,
                                     s0_error **err);

/**
 * Resume and wait for the new runtime generation to be running.
 *
 * GETs first (retrying that read like any poll): if paused (status
 * `paused` or `paused` true) the target is generation + 1, else the current
 * generation (a running sandbox succeeds without a new generation). Sends
 * one POST resume (body per opts->memory); `resumed: false`, `starting`,
 * a stale `running` at an older generation and "sandbox is waking up" mean
 * keep polling, with no further POST (CL-04). Done when
 * `runtime_generation >= target && status == running && !paused`. In memory
 * mode a `failed` at a generation >= target is S0_ELIFECYCLE (action
 * "memory resume", reason `memory_resume_failed`); an older `failed` is
 * ignored (CL-05). In filesystem mode `failed` is not a stop condition.
 *
 * @param[in] c the client.
 * @param[in] sandbox_id the sandbox.
 * @param[in] opts (nullable) options; NULL = filesystem resume, 60 s.
 * @param[out] out (transfer full, nullable) the running sandbox; untouched
 *             on failure.
 * @param[out] err (nullable) error detail.
 * @retval S0_EINVAL bad options or id; no request sent.
 * @retval S0_ELIFECYCLE memory resume failed at the new generation.
 * @retval S0_ERESUME 503 `sandbox_resume_failed` (POST or poll).
 * @retval S0_ETIMEDOUT deadline; the resume goes on server-side.
 * @retval S0_ENOTFOUND unknown id (no POST sent) or deleted while waiting.
 * @retval S0_EUNAVAILABLE / S0_ECONFLICT / S0_EQUOTA definite POST failure:
 *         the sandbox stays paused with its head unchanged.
 * @retval S0_EPROTOCOL a malformed poll response.
 * @retval S0_ECANCELED cancelled; an accepted resume goes on.
 * @retval S0_EUSER the progress callback stopped the wait.
 * @threadsafety safe
 * @since 0.1
 */
S0_API int s0_sandbox_resume_and_wait(s0_client *c, const char *sandbox_id,
                                      const s0_wait_options *opts, s0_sandbox_info **out,
                                      s0_error **err);

S0_END_DECLS

#endif
