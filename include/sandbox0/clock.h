/**
 * @file sandbox0/clock.h
 * @brief Injectable clock and cancel tokens (docs/decisions.md "Clock").
 *
 * Every wait, poll, backoff and TTL in the library reads time through an
 * ::s0_clock. The default is the real clock; tests use a manual clock so that
 * TTL expiry and wait deadlines are exercised without sleeping.
 */
#ifndef SANDBOX0_CLOCK_H
#define SANDBOX0_CLOCK_H

#include <stdbool.h>
#include "sandbox0/common.h"

S0_BEGIN_DECLS

/**
 * A clock: a table of callbacks plus their context. Copy it by value; the
 * context must outlive every object the clock was given to.
 *
 * @options[version] S0_CLOCK_VERSION
 */
typedef struct s0_clock {
	uint32_t version; /**< S0_CLOCK_VERSION */
	void *ctx;        /**< passed to every callback */
	/** Wall-clock time in ms since the Unix epoch (timestamps, TTLs). */
	int64_t (*now_unix_ms)(void *ctx);
	/** Monotonic time in ms (deadlines); may share the wall clock's base. */
	int64_t (*monotonic_ms)(void *ctx);
	/**
	 * Sleep @p ms milliseconds (0 returns at once) or until @p cancel
	 * (nullable) fires. Returns S0_OK, or S0_ECANCELED when cancelled.
	 */
	int (*sleep_ms)(void *ctx, int64_t ms, s0_cancel_token *cancel);
} s0_clock;

/** Current version of ::s0_clock. */
#define S0_CLOCK_VERSION 1

/**
 * Fill @p out with the real clock (CLOCK_REALTIME, CLOCK_MONOTONIC and a
 * cancellable sleep).
 *
 * @param[out] out receives the clock.
 * @threadsafety safe
 * @since 0.1
 */
S0_API void s0_clock_real(s0_clock *out);

/** @brief A manual clock for tests; time moves only when told. */
typedef struct s0_manual_clock s0_manual_clock;

/** Sleeping on the manual clock advances it instead of blocking. */
#define S0_MANUAL_CLOCK_AUTO_ADVANCE 0x1u

/**
 * Make a manual clock starting at @p start_unix_ms.
 *
 * Without ::S0_MANUAL_CLOCK_AUTO_ADVANCE a sleep blocks until other threads
 * have advanced the clock far enough (or the cancel token fires); with it a
 * sleep advances the clock by the requested amount and returns at once
 * (virtual time for single-threaded tests).
 *
 * @param[in] start_unix_ms initial wall-clock time in ms since the epoch;
 *            0 means the current real time.
 * @param[in] flags 0 or ::S0_MANUAL_CLOCK_AUTO_ADVANCE.
 * @param[out] out (transfer full) the clock; free with s0_manual_clock_free()
 *             after every user of its ::s0_clock is gone.
 * @param[out] err (nullable) error detail.
 * @retval S0_ENOMEM out of memory.
 * @threadsafety safe
 * @since 0.1
 */
S0_API int s0_manual_clock_new(int64_t start_unix_ms, uint32_t flags, s0_manual_clock **out,
                               s0_error **err);

/**
 * The ::s0_clock view of a manual clock.
 * @param mc the manual clock. @param[out] out receives the view.
 * @threadsafety safe
 * @since 0.1
 */
S0_API void s0_manual_clock_get(s0_manual_clock *mc, s0_clock *out);

/**
 * Move a manual clock forward by @p ms (negative values are ignored) and
 * wake sleepers whose time has come.
 * @threadsafety safe
 * @since 0.1
 */
S0_API void s0_manual_clock_advance(s0_manual_clock *mc, int64_t ms);

/** Current time of a manual clock in ms since the epoch. @threadsafety safe @since 0.1 */
S0_API int64_t s0_manual_clock_now(const s0_manual_clock *mc);

/** Free a manual clock; NULL is a no-op. @since 0.1 */
S0_API void s0_manual_clock_free(s0_manual_clock *mc);

/**
 * Make a cancel token. Blocking calls that take one return S0_ECANCELED
 * promptly (well under 100 ms) after any thread fires it.
 *
 * @param[out] out (transfer full) the token; free with s0_cancel_token_free().
 * @param[out] err (nullable) error detail.
 * @retval S0_ENOMEM out of memory.
 * @threadsafety safe
 * @since 0.1
 */
S0_API int s0_cancel_token_new(s0_cancel_token **out, s0_error **err);

/**
 * Fire the token: every current and future blocking call using it returns
 * S0_ECANCELED until s0_cancel_token_reset(). Idempotent.
 * @threadsafety safe from any thread, including signal-free async contexts.
 * @since 0.1
 */
S0_API void s0_cancel_token_cancel(s0_cancel_token *tok);

/** Whether the token has fired. @threadsafety safe @since 0.1 */
S0_API bool s0_cancel_token_is_canceled(const s0_cancel_token *tok);

/** Re-arm a fired token for reuse. @threadsafety safe @since 0.1 */
S0_API void s0_cancel_token_reset(s0_cancel_token *tok);

/**
 * Free a token; NULL is a no-op. No call may still be using it.
 * @since 0.1
 */
S0_API void s0_cancel_token_free(s0_cancel_token *tok);

S0_END_DECLS

#endif
