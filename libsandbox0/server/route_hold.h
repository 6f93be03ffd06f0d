/* The bound on handler threads one public route holds at once (docs/wire.md
 * "Public routes", docs/threading.md). */
#ifndef S0_SERVER_ROUTE_HOLD_H
#define S0_SERVER_ROUTE_HOLD_H

#include <stdbool.h>

/* Requests one public id may have in the proxy at once (waking, connecting,
 * starting the service, sending the body, waiting for the head); past it a
 * request answers 503 `unavailable` with Retry-After at once, so the API
 * keeps its handler threads (the default pool is 256). */
#define S0__ROUTE_HOLD_MAX 32

/**
 * Take one of the S0__ROUTE_HOLD_MAX places of public id @p id (a
 * NUL-terminated string, copied). False when they are all taken (or out of
 * memory): the caller answers 503 and does not call s0__route_hold_drop.
 * Never blocks. Any thread.
 */
bool s0__route_hold_take(const char *id);

/** Give back the place s0__route_hold_take(@p id) took. Any thread. */
void s0__route_hold_drop(const char *id);

/** The places of public id @p id taken now (0 when none; inspection and tests). Any thread. */
int s0__route_hold_count(const char *id);

#endif
