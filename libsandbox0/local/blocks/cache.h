/*
 * A bounded LRU cache of verified object plaintext keyed by object id
 * (chunks in one instance, map pages and descriptors in another). Entries
 * are immutable; readers hold a reference while they copy out. Only
 * unreferenced entries are evicted, so the bound can be exceeded by what
 * readers hold at once.
 *
 * Thread safety: safe from any thread (one mutex).
 */
#ifndef S0_CACHE_H
#define S0_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "local/objects/objid.h"

typedef struct s0__cache s0__cache;
typedef struct s0__centry s0__centry;

/**
 * Make a cache holding up to cap_bytes of data.
 * @return (transfer full) or NULL when out of memory.
 */
s0__cache *s0__cache_new(uint64_t cap_bytes);

/** Free the cache; no entry may be held. NULL is a no-op. */
void s0__cache_free(s0__cache *c);

/** The data of an entry (valid while the reference is held). */
const void *s0__centry_data(const s0__centry *e);

/** The size of an entry's data in bytes. */
size_t s0__centry_size(const s0__centry *e);

/**
 * Look id up.
 * @return (transfer full) a reference — release with s0__cache_release() —
 *         or NULL when absent.
 */
s0__centry *s0__cache_get(s0__cache *c, const s0__objid *id);

/**
 * Insert data (malloc'd; ownership taken) under id. If id is already
 * present, data is freed and the existing entry returned.
 * @return (transfer full) a reference, or NULL when out of memory (data is
 *         freed).
 */
s0__centry *s0__cache_put(s0__cache *c, const s0__objid *id, void *data, size_t size);

/** Release a reference. */
void s0__cache_release(s0__cache *c, s0__centry *e);

/**
 * Forget id (its object was deleted): later lookups miss; a reference held
 * now stays valid until released.
 */
void s0__cache_forget(s0__cache *c, const s0__objid *id);

/** The bound in bytes. */
uint64_t s0__cache_capacity(const s0__cache *c);

/** Whether id is cached (no reference taken, LRU order unchanged). */
bool s0__cache_has(s0__cache *c, const s0__objid *id);

/** Evict every unreferenced entry. */
void s0__cache_clear(s0__cache *c);

#endif
