/**
 * @file sandbox0/wait.h
 * @brief Lifecycle waits: pause_and_wait, resume_and_wait and the generic
 * wait (design.md §4, §6 "Wait helpers"; api.md §4.2; seed "Pause And Resume").
 *
 * Rules the helpers enforce:
 * - the first poll is immediate; later polls back off from
 *   `poll_initial_ms` by `backoff_factor_pct` up to `poll_max_ms`, with
 *   jitter, and never sleep past the deadline;
 * - polling GETs ride out 429 (honouring Retry-After), 503 (including
 *   "sandbox is waking up"), other 5xx and transport errors;
 * - exactly one lifecycle POST is sent; it is repeated with the same body
 *   only when its outcome is unknown (transport error after sending, 502,
 *   504), after inspecting the sandbox with GET. There is no code path that
 *   retries a memory request with `memory: false`;
 * - at the deadline the wait returns S0_ETIMEDOUT (reason `wait_deadline`)
 *   carrying the last observed sandbox; the server's operation goes on.
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
/** Default deadline of memory-mode waits (360 s, the seed's example budget). */
#define S0_WAIT_DEFAULT_MEMORY_TIMEOUT_MS 360000

/**
 * Progress callback: called on the first observation and on every observed
 * change of (status, paused, runtime_generation, runtime_id).
 *
 * @param info (transfer none) the sandbox just observed; valid during the call.
 * @param elapsed_ms time since the wait started, on the client's clock.
 * @param payload the options' payload.
 * @return 0 to continue; non-zero stops the wait with S0_EUSER.
 */
typedef int (*s0_wait_cb)(const s0_sandbox_info *info, int64_t elapsed_ms, void *payload);

/**
 * Predicate for s0_sandbox_wait(): return 1 when done, 0 to keep polling,
 * or a negative ::s0_code to stop with that code (S0_ELIFECYCLE makes the
 * wait return a lifecycle error carrying the sandbox).
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
	 * For pause/resume: request memory mode (`{"memory":true}`); also
	 * selects the memory defaults and the `failed` rules. Zero: the plain
	 * call, with no body.
	 */
	int32_t memory;
	/**
	 * Deadline for the whole call in ms: 0 = default (60 s, or 360 s in
	 * memory mode); S0_TIMEOUT_INFINITE = none; other negatives S0_EINVAL.
	 */
	int64_t timeout_ms;
	/** First sleep after the immediate first poll, ms; 0 = 100. Negative: S0_EINVAL. */
	int64_t poll_initial_ms;
	/** Largest sleep between polls, ms; 0 = 500. Negative: S0_EINVAL. */
	int64_t poll_max_ms;
	/** Growth of the sleep per poll in percent (200 = ×2); 0 = 150; < 100: S0_EINVAL. */
	uint32_t backoff_factor_pct;
	/** Random spread of each sleep, percent 0..100; 0 = 20 (S0_WAIT_NO_JITTER for none). */
	uint32_t jitter_pct;
	/** Bit flags: S0_WAIT_NO_JITTER, S0_WAIT_NOTFOUND_OK. */
	uint32_t flags;
	s0_wait_cb progress_cb;  /**< (nullable) progress callback */
	void *payload;           /**< passed to the callback and the predicate */
	s0_cancel_token *cancel; /**< (nullable) cancel token for this wait */
} s0_wait_options;

/** Current version of ::s0_wait_options. */
#define S0_WAIT_OPTIONS_VERSION 1
/** Static initialiser. */
#define S0_WAIT_OPTIONS_INIT {S0_WAIT_OPTIONS_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
/** flags: no jitter (deterministic schedules in tests). */
#define S0_WAIT_NO_JITTER 0x1u
/** flags: s0_sandbox_wait() treats 404 as "done" with *out NULL (deletion waits). */
#define S0_WAIT_NOTFOUND_OK 0x2u

S0_BEGIN_DECLS

/**
 * Initialise @p opts with defaults.
 * @retval S0_EINVAL unknown version; @p opts untouched.
 * @since 0.1
 */
S0_API int s0_wait_options_init(s0_wait_options *opts, uint32_t version);

/**
 * Poll `GET /api/v1/sandboxes/{id}` until @p until_mask contains the status
 * (and, when @p predicate is given, it returns 1).
 *
 * @param[in] until_mask statuses that end the wait (S0_STATUS_MASK bits);
 *            0 = decided by @p predicate alone.
 * @param[in] predicate (nullable) extra predicate (see ::s0_wait_predicate).
 * @param[in] opts (nullable) options; `memory` is ignored here.
 * @param[out] out (transfer full, nullable) the sandbox that ended the wait
 *             (NULL after a 404 with S0_WAIT_NOTFOUND_OK).
 * @retval S0_EINVAL bad options or id (no request sent).
 * @retval S0_ETIMEDOUT deadline; reason `wait_deadline`, last sandbox set.
 * @retval S0_ENOTFOUND the sandbox disappeared (404).
 * @retval S0_ELIFECYCLE the predicate returned S0_ELIFECYCLE.
 * @retval S0_ECANCELED cancelled. S0_EUSER the callback stopped the wait.
 * @since 0.1
 */
S0_API int s0_sandbox_wait(s0_client *c, const char *sandbox_id, uint32_t until_mask,
                           s0_wait_predicate predicate, const s0_wait_options *opts,
                           s0_sandbox_info **out, s0_error **err);

/**
 * Pause and wait for the paused state (`status == paused && paused`).
 *
 * Sends one POST pause (no body, or `{"memory":true}` when opts->memory);
 * 200 and 202 both mean accepted. In memory mode an observed `failed` ends
 * the wait with S0_ELIFECYCLE (action "memory pause"): a capture failure is
 * never success, and no filesystem-only pause is ever sent instead. In
 * filesystem mode `failed` is not a stop condition.
 *
 * @param[out] out (transfer full, nullable) the paused sandbox.
 * @retval S0_ELIFECYCLE memory capture failed; the sandbox reads `failed`
 *         with `paused` true and its last committed RootFS intact.
 * @retval S0_ETIMEDOUT deadline; the pause goes on server-side.
 * @retval S0_ECONFLICT / S0_ENOTFOUND / S0_EUNAVAILABLE from the POST;
 *         nothing was accepted.
 * @retval S0_ECANCELED cancelled; the accepted pause goes on.
 * @since 0.1
 */
S0_API int s0_sandbox_pause_and_wait(s0_client *c, const char *sandbox_id,
                                     const s0_wait_options *opts, s0_sandbox_info **out,
                                     s0_error **err);

/**
 * Resume and wait for the new runtime generation to be running.
 *
 * GETs first: if paused (status `paused` or `paused` true) the target is
 * generation + 1, else the current generation (a running sandbox succeeds
 * without a new generation). Sends one POST resume; `resumed: false`,
 * `starting` and "sandbox is waking up" mean keep polling. Done when
 * `runtime_generation >= target && status == running && !paused`. In memory
 * mode a `failed` at a generation >= target is S0_ELIFECYCLE (action
 * "memory resume"); an older `failed` is ignored.
 *
 * @param[out] out (transfer full, nullable) the running sandbox.
 * @retval S0_ELIFECYCLE memory resume failed at the new generation.
 * @retval S0_ERESUME 503 `sandbox_resume_failed`.
 * @retval S0_ETIMEDOUT deadline; the resume goes on server-side.
 * @retval S0_ENOTFOUND unknown id or deleted while waiting.
 * @retval S0_EUNAVAILABLE / S0_ECONFLICT / S0_EQUOTA definite POST failure:
 *         the sandbox stays paused with its head unchanged.
 * @retval S0_ECANCELED cancelled; an accepted resume goes on.
 * @since 0.1
 */
S0_API int s0_sandbox_resume_and_wait(s0_client *c, const char *sandbox_id,
                                      const s0_wait_options *opts, s0_sandbox_info **out,
                                      s0_error **err);

S0_END_DECLS

#endif
