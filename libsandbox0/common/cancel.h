/* Internal side of cancel tokens: wake-up subscriptions and timed waits. */
#ifndef S0_CANCEL_H
#define S0_CANCEL_H

#include "common/internal.h"

typedef void (*s0__cancel_fn)(void *arg);

/*
 * Call fn(arg) when tok fires (at once, on this thread, if it already has).
 * Returns a subscription id > 0, or 0 when tok is NULL or out of memory
 * (then the caller must poll s0_cancel_token_is_canceled). fn runs on the
 * cancelling thread with the token's lock released; it must be short.
 */
int s0__cancel_subscribe(s0_cancel_token *tok, s0__cancel_fn fn, void *arg);
/* Remove a subscription; after it returns fn will not run again. */
void s0__cancel_unsubscribe(s0_cancel_token *tok, int id);
/*
 * Sleep up to ms milliseconds on the real monotonic clock, returning early
 * with S0_ECANCELED when tok (nullable) fires.
 */
int s0__cancel_sleep(s0_cancel_token *tok, int64_t ms);
/* True when any of the (nullable) tokens has fired. */
bool s0__canceled(const s0_cancel_token *a, const s0_cancel_token *b);

/*
 * A token that fires when either parent fires (both nullable). Use it to
 * give one token to code that must observe two. Free with
 * s0__cancel_link_free before the parents.
 */
typedef struct s0__cancel_link {
	s0_cancel_token *token;
	s0_cancel_token *parents[2];
	int ids[2];
} s0__cancel_link;
int s0__cancel_link_init(s0__cancel_link *l, s0_cancel_token *a, s0_cancel_token *b,
                         s0_error **err);
void s0__cancel_link_free(s0__cancel_link *l);

#endif
