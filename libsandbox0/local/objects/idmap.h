/*
 * A hash map from object id to a 64-bit value (open addressing, linear
 * probing, backward-shift deletion). Used for sets of ids (GC marks, pins,
 * batch indexes) and small id-keyed tables.
 *
 * Thread safety: none; callers lock.
 */
#ifndef S0_IDMAP_H
#define S0_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "local/objects/objid.h"

typedef struct s0__idmap_slot {
	s0__objid id;
	uint64_t val;
	bool used;
} s0__idmap_slot;

typedef struct s0__idmap {
	s0__idmap_slot *slots;
	size_t cap; /* power of two or 0 */
	size_t count;
} s0__idmap;

#define S0__IDMAP_INIT {0, 0, 0}

/**
 * Insert id with val, or overwrite the value of an existing id (which
 * never allocates, so never fails).
 * @param[out] existed  (nullable) whether id was already present.
 * @return 0, or -1 when out of memory (map unchanged).
 */
int s0__idmap_put(s0__idmap *m, const s0__objid *id, uint64_t val, bool *existed);

/** Whether id is present; its value in *val (nullable) when it is. */
bool s0__idmap_get(const s0__idmap *m, const s0__objid *id, uint64_t *val);

/** Remove id; returns whether it was present. */
bool s0__idmap_del(s0__idmap *m, const s0__objid *id);

/** Number of entries. */
size_t s0__idmap_count(const s0__idmap *m);

/**
 * Iterate: start with *pos = 0; returns the next slot or NULL at the end.
 * The map must not change during the iteration.
 */
const s0__idmap_slot *s0__idmap_next(const s0__idmap *m, size_t *pos);

/** Remove every entry, keeping the allocation. */
void s0__idmap_clear(s0__idmap *m);

/** Free the table (the struct itself is the caller's). */
void s0__idmap_free(s0__idmap *m);

#endif
