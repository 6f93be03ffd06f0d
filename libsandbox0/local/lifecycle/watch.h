/*
 * Change notification of the lifecycle engine (issue #22): a per-sandbox
 * version that moves forward on every durable state change, and ways to
 * learn when it has moved past a value one has seen.
 *
 * Who uses it: the in-process transport's waits (pause_and_wait,
 * resume_and_wait, s0_sandbox_wait wake on a change instead of sleeping
 * their backoff) and the HTTP long-poll of `GET /sandboxes/{id}` (a parked
 * request is answered when the version passes the one its If-None-Match
 * named). Both go through these s0__engine_watch_* functions only.
 *
 * The version. s0__engine_watch_version() of a sandbox is a uint64_t that
 * never goes back while the engine is open and is bumped after every
 * committed change of what GET /sandboxes/{id} shows: the sandbox row (claim,
 * update, refresh, pause intent and commit, resume, fork child, delete) and
 * its lifecycle operation (s0__op_advance). The values come from one
 * engine-wide sequence, so a version is also never reused by another
 * sandbox; a sandbox this process has not changed (or whose entry was
 * dropped after its delete) reports the table's floor, which is at least
 * every version it ever reported, so "wait until the version passes v"
 * never misses a change. A bump may come without a visible change (a
 * spurious wake-up): callers re-read the state and wait again. Versions are
 * not durable: they restart with the process (clients wake once, re-read,
 * and go on). A sandbox id need not exist: waiting on an unknown id ends at
 * its first change (a claim of that id never happens: ids are random).
 *
 * The race-free pattern: read the version, then read the state, then wait
 * for the version to pass the one read first. A commit between the two
 * reads is either seen by the state read or passes the version.
 *
 * Thread safety: every function is safe from any thread. Callbacks run on
 * the thread that commits the change, with the watch table's lock held:
 * they must be short (fire a cancel token, write to an eventfd, signal a
 * condition) and must not call s0__engine_watch_* or take engine locks.
 */
#ifndef S0_LIFECYCLE_WATCH_H
#define S0_LIFECYCLE_WATCH_H

#include <stdint.h>

#include "common/internal.h"

struct s0__engine;
typedef struct s0__watch s0__watch;

/* Make and free the table (engine open and close). new: NULL on OOM. */
s0__watch *s0__watch_new(void);
void s0__watch_free(s0__watch *w);

/* The current version of sandbox id (any string; never fails). */
uint64_t s0__engine_watch_version(struct s0__engine *e, const char *id);

/*
 * Record a durable change of sandbox id: its version becomes a fresh value of
 * the engine-wide sequence and every subscription whose `since` it passes
 * fires (and is removed). Call after the change is committed; calling it
 * more often only wakes readers early. Never fails.
 */
void s0__engine_watch_bump(struct s0__engine *e, const char *id);

/*
 * Forget sandbox id (after its delete is committed): bump it once more, then
 * drop its entry; its version from now on is the table's floor. Keeps the
 * table as small as the set of live sandboxes. Never fails.
 */
void s0__engine_watch_forget(struct s0__engine *e, const char *id);

/* A notification callback: arg as given to subscribe. */
typedef void (*s0__engine_watch_fn)(void *arg);

/*
 * Call fn(arg) once, when the version of sandbox id passes `since` (at once,
 * on this thread, when it already has; see the header for the callback
 * rules). The subscription ends when fn has run or when it is unsubscribed.
 * This is the non-blocking form a parked HTTP request uses.
 * Returns a subscription handle > 0, or 0 when out of memory (then the
 * caller falls back to polling).
 */
int s0__engine_watch_subscribe(struct s0__engine *e, const char *id, uint64_t since,
                               s0__engine_watch_fn fn, void *arg);

/*
 * End subscription sub (0, an unknown or an already fired handle are
 * no-ops). After it returns, fn does not run and is not running.
 */
void s0__engine_watch_unsubscribe(struct s0__engine *e, int sub);

/*
 * Block until the version of sandbox id passes `since`, timeout_ms passes on
 * the engine clock (a manual clock: until it is advanced that far;
 * S0_TIMEOUT_INFINITE: no limit) or cancel (nullable) fires.
 * Returns S0_OK (passed; *version_out, nullable, receives the version),
 * S0_ETIMEDOUT, S0_ECANCELED, or S0_ENOMEM (nothing waited). No error
 * detail: the caller words its own.
 */
int s0__engine_watch_wait(struct s0__engine *e, const char *id, uint64_t since,
                          int64_t timeout_ms, s0_cancel_token *cancel, uint64_t *version_out);

#endif
