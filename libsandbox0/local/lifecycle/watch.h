/*
 * Change notification of the engine: a per-sandbox version counter and
 * callbacks run when it moves (docs/threading.md "Parked connections").
 *
 * Every committed change of a sandbox's row (claim, update, pause and resume
 * steps, TTL actions, delete, restore, fork of a child) bumps that sandbox's
 * version; the engine bumps after the change is visible to readers, so a
 * reader woken by a bump that reads the row sees the change or a later one
 * (a bump may also come early, before a commit: readers must tolerate a wake
 * with nothing new, never miss one). Versions are drawn from one counter per
 * engine, so a sandbox's version only grows; together with the epoch (random
 * per engine open) a version names one state of one sandbox in this process's
 * life, which is what an HTTP ETag of `GET /sandboxes/{id}` needs.
 *
 * Subscribers are for waiters that must not block a thread (the HTTP server's
 * parked long-polls) and for in-process waits (a condition variable signalled
 * from the callback). Thread-safe: every function may be called from any thread.
 */
#ifndef S0_LIFECYCLE_WATCH_H
#define S0_LIFECYCLE_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct s0__engine s0__engine;
typedef struct s0__engine_watch s0__engine_watch;
typedef struct s0__engine_watch_sub s0__engine_watch_sub;

/*
 * A change callback: sandbox_id's version moved to version. Runs on the thread
 * that made the change, with the watch's lock held: it must be short and must
 * not block or call back into this watch (signal a condition, write an
 * eventfd, set a flag). Never runs after s0__engine_watch_unsubscribe()
 * returned for its subscription.
 */
typedef void (*s0__engine_watch_fn)(void *arg, const char *sandbox_id, uint64_t version);

/* A new registry (epoch drawn at random), or NULL when out of memory. */
s0__engine_watch *s0__engine_watch_new(void);
/* Free the registry; NULL-safe. No subscription may remain. */
void s0__engine_watch_free(s0__engine_watch *w);

/* The engine's registry (lives as long as the engine; never NULL on an open engine). */
s0__engine_watch *s0__engine_watch_of(s0__engine *e);

/*
 * Mark a change of sandbox_id: its version becomes the next value of the
 * engine's counter and its subscribers run (see s0__engine_watch_fn). Out of
 * memory for a new entry, the change is still announced to nobody but the
 * version of that sandbox stays 0: readers then see "changed" every time,
 * never "unchanged" for a changed sandbox.
 */
void s0__engine_watch_bump(s0__engine_watch *w, const char *sandbox_id);

/*
 * Current version of sandbox_id. A sandbox not bumped since the engine opened,
 * or forgotten since, reports the registry's floor (0 until the first forget,
 * then the counter at the last forget): a value never below any version it
 * reported before, so "wait until the version passes v" never misses a change;
 * a floor that moves is only an early wake for such an id.
 */
uint64_t s0__engine_watch_version(s0__engine_watch *w, const char *sandbox_id);

/* How many subscriptions are live (parked long-polls, streams; inspection
 * `node.watchers`). */
size_t s0__engine_watch_subscribers(s0__engine_watch *w);

/*
 * The delete of sandbox_id is committed: bump it once more (its waiters wake
 * and read the 404), then drop its entry so the registry stays as small as
 * the set of live sandboxes. Never fails.
 */
void s0__engine_watch_forget(s0__engine_watch *w, const char *sandbox_id);

/* The engine's epoch: 16 lowercase hex characters, fixed for the registry's life (borrowed). */
const char *s0__engine_watch_epoch(const s0__engine_watch *w);

/*
 * Call fn(arg, …) on every bump of sandbox_id from now until unsubscribed.
 * *out receives the subscription (the caller's; end it with
 * s0__engine_watch_unsubscribe). Returns S0_OK, or S0_ENOMEM (no
 * subscription made). A sandbox that does not exist may be watched: its
 * claim, if it ever comes, is a bump.
 */
int s0__engine_watch_subscribe(s0__engine_watch *w, const char *sandbox_id,
                               s0__engine_watch_fn fn, void *arg, s0__engine_watch_sub **out);

/* ---- file changes (file watches, docs/wire.md §8.2) ---- */

/*
 * A file change callback: event "create", "write", "remove", "rename" or
 * "chmod" of canonical path in the sandbox, or "invalidate" (changes were lost:
 * every watch re-reads; any path). Same rules as
 * s0__engine_watch_fn (the watch's lock held: flag and return).
 */
typedef void (*s0__engine_watch_files_fn)(void *arg, const char *event, const char *path);

/* Call fn on every file change of sandbox_id until unsubscribed
 * (s0__engine_watch_unsubscribe). S0_OK or S0_ENOMEM. */
int s0__engine_watch_files_subscribe(s0__engine_watch *w, const char *sandbox_id,
                                     s0__engine_watch_files_fn fn, void *arg,
                                     s0__engine_watch_sub **out);

/* Announce a file change (the runtime seam's files_changed; arg is the watch). */
void s0__engine_watch_files_event(void *w, const char *sandbox_id, const char *event,
                                  const char *path);
/* Whether sandbox_id has a file subscriber now (the seam's files_watched; arg is the watch). */
bool s0__engine_watch_files_wanted(void *w, const char *sandbox_id);

/* End a subscription and free it; NULL-safe. After it returns, fn no longer runs. */
void s0__engine_watch_unsubscribe(s0__engine_watch *w, s0__engine_watch_sub *sub);

/* ---- one-shot and blocking forms (watch_once.c): in-process waits ---- */

typedef struct s0__engine_watch_arm s0__engine_watch_arm;

/* A one-shot callback: arg as given to s0__engine_watch_arm (same rules as
 * s0__engine_watch_fn: short, no locks, no calls back into the watch). */
typedef void (*s0__engine_watch_once_fn)(void *arg);

/*
 * Call fn(arg) once, when the version of sandbox_id passes `since` (at once,
 * on this thread, when it already has). The in-process transport arms one
 * per wait sleep (client/transport.h watch_arm). Returns the arming (end it
 * with s0__engine_watch_disarm, fired or not), or NULL when out of memory
 * (the caller then just sleeps its backoff).
 */
s0__engine_watch_arm *s0__engine_watch_arm_once(s0__engine_watch *w, const char *sandbox_id,
                                                uint64_t since, s0__engine_watch_once_fn fn,
                                                void *arg);

/* End an arming and free it; NULL-safe. After it returns fn is not running
 * and never runs. */
void s0__engine_watch_disarm(s0__engine_watch *w, s0__engine_watch_arm *a);

/*
 * Block until the version of sandbox_id passes `since`, timeout_ms passes on
 * the engine clock (a manual clock: until it is advanced that far;
 * S0_TIMEOUT_INFINITE: no limit) or cancel (nullable) fires. Returns S0_OK
 * (*version_out, nullable, receives the version), S0_ETIMEDOUT,
 * S0_ECANCELED, or S0_ENOMEM (nothing waited). No error detail.
 */
int s0__engine_watch_wait(s0__engine *e, const char *sandbox_id, uint64_t since,
                          int64_t timeout_ms, struct s0_cancel_token *cancel,
                          uint64_t *version_out);

#endif
