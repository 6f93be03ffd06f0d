/*
 * A memory region of an execution image (runtime.h, image.h) — in the
 * simulated runtime, the memory of one process: a byte array split into fixed-size
 * chunks (the checkpoint unit, 1 MiB by default — the baseline measurements:
 * 1 MiB blocks compress fastest with the best ratio, and lazily fetched
 * 1 MiB chunks keep the object count low).
 *
 * Every chunk is in one of four states:
 *  - zero:     never written; reads as zeros; costs no memory and no object;
 *  - resident: bytes in memory;
 *  - lazy:     restored from an image and not yet touched: the bytes are the
 *              object named by the chunk's id, fetched through the heap's
 *              pager on first touch (s0__heap_read/write/hash/grow) or by a
 *              background prefetch (s0__heap_prefetch). The ids themselves
 *              come in pages (S0__HEAP_IDS_PER_PAGE ids per page object),
 *              loaded with the first touch of a chunk of the page, so that
 *              a restore reads nothing per chunk before the guest runs;
 *  - damaged:  a fetch failed verification; every touch fails S0_ECORRUPT.
 * Each chunk also has an id (the object holding its bytes as of the last
 * capture or restore; all-zero for a zero chunk) and a dirty bit: set by
 * every write, cleared by s0__heap_commit_ids() after a capture stored it.
 * A capture rewrites dirty chunks only and reuses the id of every other.
 *
 * Bytes past the heap size inside the last chunk are always zero, so
 * chunk objects are always whole chunks.
 *
 * Heaps are reference-counted so a prefetch thread can keep one alive after
 * its process exits.
 *
 * @threadsafety mutations (grow, write, fill) and reads of one heap must be
 * serialised by the caller (the guest lock); the chunk state machine has
 * its own mutex, so s0__heap_prefetch(), s0__heap_snapshot() and
 * s0__heap_stats() may run on other threads at the same time.
 */
#ifndef S0_RUNTIME_HEAP_H
#define S0_RUNTIME_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"
#include "local/objects/objid.h"

/** Default chunk size in bytes (1 MiB). */
#define S0__HEAP_CHUNK_DEFAULT (1u << 20)
/** Smallest and largest chunk sizes accepted (4 KiB .. 16 MiB, powers of two). */
#define S0__HEAP_CHUNK_MIN (4u << 10)
#define S0__HEAP_CHUNK_MAX (16u << 20)
/** Chunk ids per page of a restored heap's chunk table (32 KiB pages). */
#define S0__HEAP_IDS_PER_PAGE 1024u
/** Largest heap, bytes (64 GiB). */
#define S0__HEAP_MAX_BYTES ((uint64_t)64 << 30)

/** Chunk states (see the file comment). */
enum s0__heap_chunk_state {
	S0__CHUNK_ZERO = 0,
	S0__CHUNK_RESIDENT = 1,
	S0__CHUNK_LAZY = 2,
	S0__CHUNK_DAMAGED = 3,
};

/**
 * Where lazy chunks come from (the checkpoint engine's image reader).
 * Shared by every heap of a restored guest and reference-counted.
 */
typedef struct s0__pager s0__pager;

/**
 * Fetch one chunk: fill @p buf (@p len bytes, the chunk size) with the
 * object @p id. Called with the heap's mutex held, from the toucher's
 * thread or the prefetch thread; must be thread-safe.
 * @retval S0_ECORRUPT / S0_ENOTFOUND / S0_EIO  the chunk is unusable.
 */
typedef int (*s0__pager_fetch_fn)(void *ctx, const s0__objid *id, void *buf, size_t len,
                                  s0_error **err);

/**
 * Fetch one page of a chunk table: fill @p ids with the @p n chunk ids held
 * by the object @p page. Same calling rules as s0__pager_fetch_fn.
 * @retval S0_ECORRUPT / S0_ENOTFOUND / S0_EIO  the page is unusable.
 */
typedef int (*s0__pager_ids_fn)(void *ctx, const s0__objid *page, s0__objid *ids, size_t n,
                                s0_error **err);

/**
 * Make a pager.
 * @param ctx      passed to @p fetch and @p fetch_ids; released by
 *                 @p destroy (nullable) when the last reference goes.
 * @param[out] out (transfer full) one reference; drop with s0__pager_unref().
 * @retval S0_ENOMEM (ctx is then destroyed)
 */
int s0__pager_new(s0__pager_fetch_fn fetch, s0__pager_ids_fn fetch_ids,
                  void (*destroy)(void *ctx), void *ctx, s0__pager **out, s0_error **err);
/** Take one more reference. @return @p p. */
s0__pager *s0__pager_ref(s0__pager *p);
/** Drop a reference; the last one destroys ctx. NULL-safe. */
void s0__pager_unref(s0__pager *p);
/**
 * Fetch one chunk through the pager, outside any heap (a driver serving an
 * image's bytes itself, e.g. gvisor's pages file): the pager's fetch with
 * its verification. Same errors as s0__pager_fetch_fn; thread-safe.
 */
int s0__pager_fetch(s0__pager *p, const s0__objid *id, void *buf, size_t len, s0_error **err);
/** Fetch one chunk-table page through the pager (as s0__pager_ids_fn); thread-safe. */
int s0__pager_fetch_ids(s0__pager *p, const s0__objid *page, s0__objid *ids, size_t n,
                        s0_error **err);

typedef struct s0__heap s0__heap;

/**
 * An empty heap.
 * @param chunk_bytes power of two in [S0__HEAP_CHUNK_MIN, S0__HEAP_CHUNK_MAX].
 * @param[out] out (transfer full) one reference; drop with s0__heap_unref().
 * @retval S0_EINVAL bad chunk size. @retval S0_ENOMEM
 */
int s0__heap_new(uint32_t chunk_bytes, s0__heap **out, s0_error **err);

/**
 * A heap restored from an image: @p size_bytes long, every chunk lazy,
 * its id in page i / S0__HEAP_IDS_PER_PAGE of @p pages (zero ids make zero
 * chunks once the page is read); nothing dirty.
 * @param pages  ceil(chunks / S0__HEAP_IDS_PER_PAGE) page object ids (copied).
 * @param pager  (nullable only for an empty heap) a reference is taken.
 * @retval S0_EINVAL bad sizes, a page count that does not match, no pager.
 */
int s0__heap_new_lazy(uint32_t chunk_bytes, uint64_t size_bytes, const s0__objid *pages,
                      size_t npages, s0__pager *pager, s0__heap **out, s0_error **err);

/**
 * A heap over bytes the caller mapped (zero-copy capture of a file): every
 * chunk resident at @p base + i * @p chunk_bytes and dirty, nothing
 * allocated for the bytes. The heap is read-only: every write, fill or grow
 * fails S0_EINVAL and leaves it unchanged.
 * @param base        @p size_bytes readable bytes, kept mapped until @p unmap.
 * @param size_bytes  a whole number of chunks, at most S0__HEAP_MAX_BYTES.
 * @param unmap       (nullable) called with @p ctx once, when the last
 *                    reference goes — or before returning an error.
 * @param[out] out (transfer full) one reference; drop with s0__heap_unref().
 * @retval S0_EINVAL bad chunk size or size. @retval S0_ENOMEM
 */
int s0__heap_new_mapped(uint32_t chunk_bytes, const uint8_t *base, uint64_t size_bytes,
                        void (*unmap)(void *ctx), void *ctx, s0__heap **out, s0_error **err);

/** Take a reference. @return @p h. */
s0__heap *s0__heap_ref(s0__heap *h);
/** Drop a reference; the last frees the memory. NULL-safe. */
void s0__heap_unref(s0__heap *h);

/** Logical size in bytes. */
uint64_t s0__heap_size(const s0__heap *h);
/** Chunk size in bytes. */
uint32_t s0__heap_chunk_bytes(const s0__heap *h);
/** Number of chunks (ceil(size / chunk)). */
size_t s0__heap_nchunks(const s0__heap *h);

/**
 * Grow by @p n bytes of heap-like content (s0__heapgen_fill with @p seed).
 * @retval S0_EINVAL past S0__HEAP_MAX_BYTES. @retval S0_ENOMEM
 * @retval S0_ECORRUPT the last chunk was lazy and failed to load.
 * On failure the size is unchanged.
 */
int s0__heap_grow(s0__heap *h, uint64_t n, uint64_t seed, s0_error **err);

/**
 * Overwrite [off, off+len) (clamped to the size) with fresh heap-like
 * content from @p seed; the chunks touched become dirty.
 * @retval S0_EINVAL @p off past the end. @retval S0_ECORRUPT @retval S0_ENOMEM
 */
int s0__heap_fill(s0__heap *h, uint64_t off, uint64_t len, uint64_t seed, s0_error **err);

/** Copy @p len bytes at @p off into @p buf (range must be inside the size). */
int s0__heap_read(s0__heap *h, uint64_t off, void *buf, size_t len, s0_error **err);
/** Write @p len bytes at @p off (range must be inside the size). */
int s0__heap_write(s0__heap *h, uint64_t off, const void *buf, size_t len, s0_error **err);

/**
 * The heap's fingerprint (`memhash`): a 64-bit hash of its size and bytes,
 * independent of which chunks are zero, resident or lazy. Touches (and so
 * fetches) every lazy chunk.
 * @retval S0_ECORRUPT a chunk failed to load (message names it).
 */
int s0__heap_hash(s0__heap *h, uint64_t *out, s0_error **err);

/**
 * Load one lazy chunk in the background (prefetch accounting). A chunk
 * that is not lazy is left alone (*loaded false).
 * @retval S0_ECORRUPT the chunk is damaged now.
 */
int s0__heap_prefetch(s0__heap *h, size_t chunk, bool *loaded, s0_error **err);

/** What a capture needs of one chunk (s0__heap_snapshot). */
typedef struct s0__heap_chunkinfo {
	uint8_t state;        /**< s0__heap_chunk_state */
	bool dirty;           /**< changed since the last capture */
	s0__objid id;         /**< id as of the last capture/restore (zero: zero chunk) */
	const uint8_t *data;  /**< resident bytes (chunk_bytes), else NULL; valid while the
	                           caller keeps mutations out (guest lock) */
} s0__heap_chunkinfo;

/**
 * Describe every chunk (reading the chunk-table pages not read yet).
 * @param[out] out (transfer full) array of s0__heap_nchunks() entries, free().
 * @retval S0_ECORRUPT a chunk-table page failed to load.
 */
int s0__heap_snapshot(s0__heap *h, s0__heap_chunkinfo **out, size_t *n_out, s0_error **err);

/**
 * After a capture stored the heap as @p ids (from the same snapshot, with
 * no mutation in between): remember the ids and clear the dirty bits.
 */
void s0__heap_commit_ids(s0__heap *h, const s0__objid *ids, size_t n);

/** Counters of one heap. */
typedef struct s0__heap_stats {
	uint64_t size_bytes;
	uint64_t chunks, zero, resident, lazy, damaged, dirty;
	uint64_t fetched_on_touch; /**< lazy chunks loaded because something touched them */
	uint64_t prefetched;       /**< lazy chunks loaded by s0__heap_prefetch */
} s0__heap_stats;

/** Read the counters. */
void s0__heap_stats_get(s0__heap *h, s0__heap_stats *out);

/* ---- content helpers (heapgen.c) ---- */

/**
 * Fill @p buf with deterministic heap-like bytes: 64-byte "objects" with
 * small reference counts, type pointers, short text, neighbour pointers,
 * small numbers, zero padding and repeats. zstd level 1 compresses it
 * about 4.6:1 at a speed close to a real CPython heap (the baseline measurements: 6:1). @p
 * seed selects the stream.
 */
void s0__heapgen_fill(void *buf, size_t len, uint64_t seed);

/** 64-bit hash of @p len bytes (@p len a multiple of 8). */
uint64_t s0__heap_chunk_hash(const void *buf, size_t len);

#endif
