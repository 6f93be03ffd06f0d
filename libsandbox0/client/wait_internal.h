/*
 * Pieces of the lifecycle waits (wait.c) that are unit-tested on their own:
 * option resolution, the backoff schedule and the sleep plan. No I/O here.
 */
#ifndef S0_WAIT_INTERNAL_H
#define S0_WAIT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "common/internal.h"

/* Defaults of s0_wait_options (docs/decisions.md "Wait helpers"). */
#define S0__WAIT_POLL_INITIAL_MS 100
#define S0__WAIT_POLL_MAX_MS 500
#define S0__WAIT_BACKOFF_PCT 150
#define S0__WAIT_JITTER_PCT 20
/* Longest `Prefer: wait` a wait's GET asks for (docs/wire.md "Long-poll"). */
#define S0__WAIT_LONGPOLL_MAX_S 20
/* How long a server that refuses every connection (nothing sent) may stay so
 * after a wait reached it: long enough for a restart; then the wait ends with
 * that transport error instead of retrying until its deadline. */
#define S0__WAIT_UNREACHABLE_MS 15000

/* "No deadline" as an instant. */
#define S0__NO_DEADLINE INT64_MAX

/* s0_wait_options with every default applied and every value checked. */
typedef struct s0__wait_cfg {
	bool memory_mode;      /* memory == S0_BOOL_TRUE */
	int32_t memory;        /* the body to send, passed through (CL-09) */
	int64_t timeout_ms;    /* resolved; S0_TIMEOUT_INFINITE for none */
	int64_t poll_initial_ms;
	int64_t poll_max_ms;
	uint32_t factor_pct;
	uint32_t jitter_pct;   /* 0 when S0_WAIT_NO_JITTER */
	uint32_t flags;
} s0__wait_cfg;

/*
 * Validate and resolve options (NULL = all defaults). use_memory says
 * whether `memory` matters (pause/resume) or is ignored (s0_sandbox_wait).
 * Returns S0_OK or S0_EINVAL (reason `options_version` or
 * `invalid_argument`) with *err set; out is untouched on failure.
 */
int s0__wait_resolve(const s0_wait_options *opts, bool use_memory, s0__wait_cfg *out,
                     s0_error **err);

/*
 * Backoff schedule: the first sleep is initial_ms, each next one grows by
 * factor_pct (150 = ×1.5) up to max_ms. Jitter only shortens a sleep, by up
 * to jitter_pct of it, so max_ms is a true cap; a sleep is never below 1 ms.
 */
typedef struct s0__backoff {
	int64_t base_ms; /* next sleep before jitter */
	int64_t max_ms;
	uint32_t factor_pct;
	uint32_t jitter_pct;
	uint64_t rng; /* xorshift64 state, never 0 */
} s0__backoff;

void s0__backoff_init(s0__backoff *b, int64_t initial_ms, int64_t max_ms, uint32_t factor_pct,
                      uint32_t jitter_pct, uint64_t seed);
/* The next sleep in ms (>= 1), advancing the schedule. */
int64_t s0__backoff_next(s0__backoff *b);

/*
 * How long to sleep before the next request: the backoff, or the server's
 * Retry-After when longer (retry_after_ms < 0: none), never past the
 * deadline (S0__NO_DEADLINE: none). 0 when the deadline has come.
 */
int64_t s0__wait_plan_sleep(int64_t backoff_ms, int64_t retry_after_ms, int64_t now_ms,
                            int64_t deadline_ms);

/* The deadline instant for a wait starting at start_ms (S0__NO_DEADLINE for none). */
int64_t s0__wait_deadline(int64_t start_ms, int64_t timeout_ms);

/*
 * The change version of sandbox_id from the client's transport (0 when it
 * has no change notification): read it before a poll's GET and pass it to
 * s0__wait_sleep (wait_wake.c).
 */
uint64_t s0__wait_version(s0_client *c, const char *sandbox_id);

/*
 * Sleep ms on the client's clock or until tok (nullable) fires; with a
 * transport that has change notification, also end as soon as sandbox_id's
 * version passes `since` (at once when it already has), so a wait wakes
 * when the work ends instead of after its backoff. Returns S0_OK (slept or
 * woke) or S0_ECANCELED (tok fired). Blocks; thread-safe per client.
 */
int s0__wait_sleep(s0_client *c, const char *sandbox_id, uint64_t since, int64_t ms,
                   s0_cancel_token *tok);

#endif
