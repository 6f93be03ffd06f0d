/*
 * Private structures of the block store, shared by its .c files:
 *   bstore.c   open/close, pins, create, attach, counters
 *   fetch.c    codec context pool, cached chunk/page/descriptor reads
 *   gen.c      descriptor encoding
 *   map.c      radix map walk and path-copy build
 *   par.c      parallel-for over publish work
 *   branch.c   branch reads, writes, fork, free   (spill.c: its spill file;
 *              prefetch.c: parallel fetch for reads of many chunks)
 *   publish.c  seal and publish
 *   gc.c       mark and sweep
 */
#ifndef S0_BSTORE_IMPL_H
#define S0_BSTORE_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "local/blocks/bstore.h"
#include "local/blocks/cache.h"
#include "local/blocks/u64map.h"
#include "local/objects/idmap.h"

/** Counter slots of s0__bstore (s0__bstore_counters field order). */
enum {
	S0__BC_PUBS,
	S0__BC_OBJW,
	S0__BC_BYTESW,
	S0__BC_CHUNKS_STORED,
	S0__BC_CHUNKS_DEDUP,
	S0__BC_CHUNKS_ELIDED,
	S0__BC_PAGES_STORED,
	S0__BC_CHUNKS_FETCHED,
	S0__BC_CHUNK_BYTES_FETCHED,
	S0__BC_PAGES_FETCHED,
	S0__BC_CACHE_HITS,
	S0__BC_PAGE_CACHE_HITS,
	S0__BC_GC_RUNS,
	S0__BC_GC_DELETED,
	S0__BC_GC_FREED,
	S0__BC_COUNT
};

/** A publication in flight: the ids it stores or reuses beyond its base. */
typedef struct s0__pubrec {
	s0__idmap touched;
	struct s0__pubrec *prev, *next;
} s0__pubrec;

struct s0__bstore {
	s0__objstore *os;
	uint32_t chunk_bytes;
	uint32_t threads;
	char *scratch;
	s0__gc_roots_fn roots;
	void *roots_payload;
	s0__cache *chunks;
	s0__cache *pages;

	pthread_mutex_t ctx_mu; /* codec context pool */
	s0__objctx **ctx_free;
	size_t n_ctx_free, cap_ctx_free;

	pthread_mutex_t pin_mu; /* pins, in-flight publications, GC epoch */
	s0__idmap pins;         /* generation -> pin count */
	s0__pubrec *inflight;
	bool gc_active;
	s0__idmap gc_keep; /* ids of publications finished during this GC */

	pthread_mutex_t gc_mu; /* one GC at a time */
	atomic_uint_fast64_t c[S0__BC_COUNT];
};

/** Counter slots of s0__branch (s0__branch_counters field order). */
enum {
	S0__BR_DIRTY,
	S0__BR_FETCHED,
	S0__BR_BYTES_FETCHED,
	S0__BR_CACHE_HITS,
	S0__BR_ELIDED,
	S0__BR_PUB_CHUNKS,
	S0__BR_PUB_OBJECTS,
	S0__BR_PUB_BYTES,
	S0__BR_COUNT
};

/** Dirty-table value of a chunk that is all zeros (no slot). */
#define S0__SLOT_ZERO UINT64_MAX

struct s0__branch {
	s0__bstore *bs;
	uint64_t size;     /* immutable: a volume's size and chunk size never */
	uint32_t cs;       /* change, so these are read without the lock */
	s0__genid base_id; /* base_id and base change on rebase: under lock */
	s0__gen_info base;
	pthread_rwlock_t lock; /* dirty table, spill slots, state */
	bool sealed;
	bool publishing;
	bool published;
	s0__u64map dirty; /* chunk index -> slot or S0__SLOT_ZERO */
	int spill_fd;
	uint64_t next_slot;
	uint64_t *free_slots;
	size_t n_free, cap_free;
	uint8_t *tmp; /* chunk-sized scratch, under the write lock */
	atomic_uint_fast64_t c[S0__BR_COUNT];
};

/* ---- bstore.c ---- */

/** Add one pin on gen (no existence check). S0_ENOMEM. */
int s0__bstore_pin(s0__bstore *bs, const s0__genid *gen, s0_error **err);

/** Register / finish a publication in flight (see publish.c). */
s0__pubrec *s0__bstore_pub_begin(s0__bstore *bs, s0_error **err);
/** Record id as used by pub (before checking whether it is stored). */
int s0__bstore_pub_touch(s0__bstore *bs, s0__pubrec *pub, const s0__objid *id, s0_error **err);
/** End pub; when gen is non-NULL, pin it for the caller first (atomically). */
int s0__bstore_pub_end(s0__bstore *bs, s0__pubrec *pub, const s0__genid *gen, s0_error **err);

/* ---- fetch.c ---- */

/** A codec context from the pool (make one if empty). */
int s0__bstore_ctx_get(s0__bstore *bs, s0__objctx **out, s0_error **err);
/** Return a context to the pool. */
void s0__bstore_ctx_put(s0__bstore *bs, s0__objctx *cx);

/**
 * A chunk's plaintext (chunk_bytes long) through the chunk cache.
 * @param br  (nullable) branch to charge fetch/hit counters to.
 * @param[out] out  reference; s0__cache_release(bs->chunks, ...).
 * @retval S0_ENOTFOUND / S0_ECORRUPT (also when the size is wrong)
 */
int s0__bstore_chunk_get(s0__bstore *bs, s0__branch *br, const s0__objid *id,
                         uint32_t chunk_bytes, s0__centry **out, s0_error **err);

/**
 * A map page (S0__MAP_PAGE_BYTES) or descriptor through the page cache.
 * @param size  expected plaintext size.
 * @param[out] out  reference; s0__cache_release(bs->pages, ...).
 */
int s0__bstore_page_get(s0__bstore *bs, const s0__objid *id, size_t size, s0__centry **out,
                        s0_error **err);

/* ---- gen.c ---- */

/** Bytes of an encoded descriptor. */
#define S0__GEN_BYTES 128

/** Encode a descriptor. */
void s0__gen_encode(const s0__gen_info *g, uint8_t out[S0__GEN_BYTES]);

/**
 * Decode and validate a descriptor.
 * @retval S0_ENOTFOUND  the object is not a descriptor.
 * @retval S0_ECORRUPT   a descriptor with impossible fields or not in its
 *                       canonical encoding (reserved word, zero tail set).
 */
int s0__gen_decode(const s0__genid *id, const uint8_t *buf, size_t len, s0__gen_info *out,
                   s0_error **err);

/** Load a descriptor (page cache). S0_ENOTFOUND names the generation. */
int s0__gen_load(s0__bstore *bs, const s0__genid *id, s0__gen_info *out, s0_error **err);

/** Map depth for a volume of nchunks chunks (>= S0__MAP_MIN_DEPTH). */
uint32_t s0__map_depth(uint64_t nchunks);

/* ---- map.c ---- */

/**
 * The id at (level, index) of g's map: level -1 gives chunk index's chunk
 * id, level L >= 0 the id of the level-L page with that index (leaves are
 * level 0, the root is level depth-1). Zero when that subtree is all zero.
 */
int s0__map_walk(s0__bstore *bs, const s0__gen_info *g, int level, uint64_t index,
                 s0__objid *out, s0_error **err);

/** One map change: entry index at some level becomes id. */
typedef struct s0__map_update {
	uint64_t index;
	s0__objid id;
} s0__map_update;

/**
 * Path-copy g's map with chunk updates (sorted by index, unique, each
 * different from g's entry), storing new pages in batch b. Pages are built
 * in parallel.
 * @param[out] root_out  the new root id.
 */
int s0__map_build(s0__bstore *bs, s0__branch *br, const s0__gen_info *g, s0__pubrec *pub,
                  s0__objbatch *b, s0__map_update *ups, size_t n, s0__objid *root_out,
                  s0_error **err);

/* ---- par.c ---- */

/** Work item i with the calling thread's codec context. */
typedef int (*s0__par_fn)(void *arg, size_t i, s0__objctx *cx, s0_error **err);

/**
 * Run fn for i in [0, n) on up to bs->threads threads (the caller is one);
 * stops at the first error, which is returned.
 */
int s0__par_run(s0__bstore *bs, size_t n, s0__par_fn fn, void *arg, s0_error **err);

/* ---- spill.c ---- */

/** Create the branch's spill file. S0_EIO. */
int s0__spill_open(s0__branch *b, s0_error **err);
/** A free slot (reused or new). S0_ENOMEM. */
int s0__spill_alloc(s0__branch *b, uint64_t *slot, s0_error **err);
/** A slot never written since the spill file was last reset: where it is
 * not written it reads as zeros (a hole or past the end). Never fails. */
void s0__spill_alloc_fresh(s0__branch *b, uint64_t *slot);
/** Give a slot back. */
void s0__spill_release(s0__branch *b, uint64_t slot);
/** Write / read len bytes at in_off of slot. S0_EIO. */
int s0__spill_write(s0__branch *b, uint64_t slot, uint32_t in_off, const void *buf, size_t len,
                    s0_error **err);
int s0__spill_read(const s0__branch *b, uint64_t slot, uint32_t in_off, void *buf, size_t len,
                   s0_error **err);
/** Forget every slot and truncate the file. */
void s0__spill_reset(s0__branch *b);

/* ---- branch.c ---- */

/** A new branch on an already pinned generation (pin passes to it). */
int s0__branch_new(s0__bstore *bs, const s0__genid *id, const s0__gen_info *g,
                   s0__branch **out, s0_error **err);

/**
 * Under b's lock: fetch the missing base chunks of [first, first + n) in
 * parallel into the chunk cache (best effort; skipped when they would not
 * fit in half the cache or there is one thread).
 */
void s0__branch_prefetch(s0__branch *b, uint64_t first, uint64_t n);

/** Whether len bytes are all zero. */
bool s0__is_zero(const void *buf, size_t len);

#endif
