/*
 * A hash map from uint64_t keys to uint64_t values (open addressing, linear
 * probing, backward-shift deletion): a branch's dirty table, chunk index ->
 * spill slot.
 *
 * Thread safety: none; callers lock.
 */
#ifndef S0_U64MAP_H
#define S0_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct s0__u64map {
	uint64_t *keys;
	uint64_t *vals;
	uint8_t *used;
	size_t cap; /* power of two or 0 */
	size_t count;
} s0__u64map;

#define S0__U64MAP_INIT {0, 0, 0, 0, 0}

/** Insert or overwrite; 0, or -1 when out of memory (map unchanged). */
int s0__u64map_put(s0__u64map *m, uint64_t key, uint64_t val);

/** Whether key is present; its value in *val (nullable). */
bool s0__u64map_get(const s0__u64map *m, uint64_t key, uint64_t *val);

/** Remove key; whether it was present. */
bool s0__u64map_del(s0__u64map *m, uint64_t key);

/**
 * Iterate: *pos = 0 first; returns false at the end. The map must not
 * change meanwhile.
 */
bool s0__u64map_next(const s0__u64map *m, size_t *pos, uint64_t *key, uint64_t *val);

/** Copy src into an empty dst; 0 or -1. */
int s0__u64map_copy(s0__u64map *dst, const s0__u64map *src);

/** Remove every entry and free the table. */
void s0__u64map_free(s0__u64map *m);

#endif
