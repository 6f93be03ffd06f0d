/* Helpers of the block store benchmark: clocks, data, caches, stats. */
#ifndef S0_BENCH_UTIL_H
#define S0_BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)

/* Monotonic time in milliseconds. */
double bu_now_ms(void);

/* CPU time of the process (all threads, user + system) in milliseconds. */
double bu_cpu_ms(void);

/* The 1-minute load average, or -1. */
double bu_loadavg(void);

/* Fill buf with realistic data (~2.5x compressible with zstd -1), seeded. */
void bu_fill(void *buf, size_t len, uint64_t seed);

/* xorshift PRNG. */
uint64_t bu_rand(uint64_t *state);

/* Drop the OS caches: level 1 = page cache, 3 = also dentries and inodes.
 * Needs root; returns false when not possible (the caller says so). */
bool bu_drop_caches(int level);

/* Median of n values (sorts v). */
double bu_median(double *v, int n);

/* Size in bytes of every regular file under dir (recursively). */
uint64_t bu_tree_bytes(const char *dir);

/* Run argv, waiting; returns the elapsed ms or -1 on failure. */
double bu_run(char *const argv[]);

/* rm -rf */
void bu_rmrf(const char *path);

#endif
