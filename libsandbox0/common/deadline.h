/* Absolute deadlines for pthread_cond_timedwait and friends. */
#ifndef S0_COMMON_DEADLINE_H
#define S0_COMMON_DEADLINE_H

#include <stdint.h>
#include <time.h>

/*
 * The time `ms` milliseconds from now on `clock` (CLOCK_MONOTONIC or
 * CLOCK_REALTIME: the clock the waiting condition variable runs on), with
 * tv_nsec normalised into [0, 1e9). A negative `ms` is taken as 0 (the
 * deadline is now). Never blocks; thread-safe (reads the clock only).
 */
struct timespec s0__deadline_after_ms(clockid_t clock, int64_t ms);

#endif
