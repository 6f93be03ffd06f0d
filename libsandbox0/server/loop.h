/*
 * The server's event loop for held-open connections (docs/threading.md
 * "Parked connections"): one thread of ours on epoll that holds parked
 * long-polls (their socket watched for a hang-up, a deadline, a wake from the
 * engine) and the sockets of upgraded connections, so none of them keeps a
 * request thread. A limit on the sources it holds at once makes a
 * refusal clear instead of a slow exhaustion of connections.
 */
#ifndef S0_SERVER_LOOP_H
#define S0_SERVER_LOOP_H

#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"

typedef struct s0__loop s0__loop;
typedef struct s0__loop_src s0__loop_src;

/* Events given to a source's callback (bits). */
enum {
	S0__LOOP_IN = 1,      /* the socket is readable */
	S0__LOOP_OUT = 2,     /* the socket is writable */
	S0__LOOP_HUP = 4,     /* the peer closed or the socket failed */
	S0__LOOP_TIMEOUT = 8, /* the source's deadline passed */
	S0__LOOP_SIGNAL = 16, /* s0__loop_signal() was called */
	S0__LOOP_STOP = 32,   /* the loop is stopping: remove the source now */
};

/*
 * A source's callback: runs on the loop thread with the events that
 * happened since its last run. It may call s0__loop_set() and
 * s0__loop_remove() on its own source; after STOP it must remove it.
 * It must not block (hand slow work to another thread).
 */
typedef void (*s0__loop_fn)(s0__loop_src *src, unsigned events, void *arg);

/*
 * A loop holding at most max_sources sources at once, its thread running.
 * Returns S0_OK, or S0_ENOMEM / S0_EIO (epoll, eventfd or thread creation
 * failed; nothing is left then).
 */
int s0__loop_new(size_t max_sources, s0__loop **out, s0_error **err);

/*
 * Stop: every source's callback runs with S0__LOOP_STOP, later adds are
 * refused, and this returns when the thread has ended (after every source
 * removed itself). Idempotent. Any thread but the loop's.
 */
void s0__loop_stop(s0__loop *l);

/* Stop (if not yet) and free; NULL-safe. */
void s0__loop_free(s0__loop *l);

/*
 * Add a source: fd (or -1 for none; borrowed, never closed here) watched for
 * interest (S0__LOOP_IN/OUT/HUP bits; a hang-up and an error are always
 * reported for an fd), deadline_ms on the real monotonic clock
 * (s0__real_monotonic_ms(); 0 = none). *out receives the source before the
 * callback can first run. Any thread. Returns S0_OK; S0_EUNAVAILABLE
 * (reason too_many_streams) when max_sources are held or the loop is
 * stopping; S0_ENOMEM. On failure nothing was added.
 */
int s0__loop_add(s0__loop *l, int fd, unsigned interest, int64_t deadline_ms, s0__loop_fn fn,
                 void *arg, s0__loop_src **out);

/*
 * Wake a source: its callback runs soon with S0__LOOP_SIGNAL. Any thread; the
 * caller makes sure the source is not removed meanwhile (hold the lock its
 * callback takes before removing it).
 */
void s0__loop_signal(s0__loop_src *src);

/* Loop thread only: change what a source waits for (same units as add). */
void s0__loop_set(s0__loop_src *src, unsigned interest, int64_t deadline_ms);

/* Loop thread only: remove and free the source; its callback never runs again. */
void s0__loop_remove(s0__loop_src *src);

/* Sources held now (any thread; a snapshot). */
size_t s0__loop_count(s0__loop *l);

#endif
