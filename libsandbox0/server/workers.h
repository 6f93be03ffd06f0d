/*
 * The threads that run request handlers (docs/threading.md "Parked
 * connections"): libmicrohttpd's own threads only parse and send, and hand
 * each complete request to one of these. Threads are made on demand up to a
 * maximum (the connection limit: each connection has at most one request in a
 * handler) and kept until the pool is freed, so a handler that blocks (a wake
 * waits up to 45 s) never holds up another request.
 */
#ifndef S0_SERVER_WORKERS_H
#define S0_SERVER_WORKERS_H

#include <stddef.h>

#include "common/internal.h"

typedef struct s0__workers s0__workers;

/* A pool of at most max_threads threads (none made yet); S0_ENOMEM. */
int s0__workers_new(size_t max_threads, s0__workers **out, s0_error **err);

/*
 * Run fn(arg) on a pool thread: an idle one, a new one while under the
 * maximum, else the first to finish. Never blocks. Any thread. Returns S0_OK,
 * or S0_ENOMEM (fn will not run).
 */
int s0__workers_submit(s0__workers *w, void (*fn)(void *arg), void *arg);

/* Run everything submitted, join the threads and free; NULL-safe. Not from a pool thread. */
void s0__workers_free(s0__workers *w);

#endif
