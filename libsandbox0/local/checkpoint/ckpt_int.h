/*
 * Internals of the checkpoint engine (ckpt.h): the engine record, its
 * per-thread codec contexts and parallel-for, and the manifest.
 *
 * @threadsafety as stated per function.
 */
#ifndef S0_CHECKPOINT_CKPT_INT_H
#define S0_CHECKPOINT_CKPT_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "local/checkpoint/ckpt.h"

/** Codec contexts kept for reuse. */
#define S0__CKPT_POOL 16

struct s0__ckpt {
	s0__objstore *os;
	int level;
	uint32_t threads;
	s0__ckpt_budget *budget;
	s0__ckpt_hook_fn hook;
	void *hook_payload;
	pthread_mutex_t mu;
	s0__objctx *pool[S0__CKPT_POOL];
	size_t npool;
	atomic_uint_fast64_t captures, restores, fetched, fetched_bytes, parts_fetched;
};

struct s0__ckpt_prep {
	s0__ckpt *c;
	char *sandbox_id;
	uint64_t image_bytes, upload_bytes, reserved;
	bool authorized;
};

/** A codec context at the engine's level (from the pool). @threadsafety safe */
int s0__ckpt_ctx_get(s0__ckpt *c, s0__objctx **out, s0_error **err);
/** Give a context back. @threadsafety safe */
void s0__ckpt_ctx_put(s0__ckpt *c, s0__objctx *cx);

/** Work item i of a parallel run, with the worker's codec context. */
typedef int (*s0__ckpt_par_fn)(void *arg, size_t i, s0__objctx *cx, s0_error **err);
/**
 * Run fn for i in [0, n) on the caller plus up to threads-1 helpers; the
 * first failure stops the rest and is returned.
 */
int s0__ckpt_par(s0__ckpt *c, size_t n, s0__ckpt_par_fn fn, void *arg, s0_error **err);

/** Call the hook (PROCEED without one). */
int s0__ckpt_hook(s0__ckpt *c, int phase, const char *sandbox_id);

/* ---- manifest.c ---- */

/** A blob stored as parts. */
typedef struct s0__mf_blob {
	bool present;
	uint64_t len;
	uint32_t nparts;
	s0__objid *ids;
} s0__mf_blob;

/** One process heap. */
typedef struct s0__mf_heap {
	int32_t pid;
	uint64_t size;
	size_t n;          /**< ceil(size / chunk_bytes) */
	s0__objid *ids;    /**< capture only: the chunk ids (zero id: zero chunk) */
	size_t npages;     /**< ceil(n / S0__HEAP_IDS_PER_PAGE) */
	s0__objid *pages;  /**< chunk-table page objects: the ids, 32 bytes each */
} s0__mf_heap;

typedef struct s0__manifest {
	s0__ckpt_manifest_info info;
	s0__mf_blob state, tmpfs, sessions;
	s0__mf_heap *heaps;
	size_t nheaps;
} s0__manifest;

/** Encode (format "S0MIMG01", rtser.h). @retval S0_ENOMEM */
int s0__manifest_encode(const s0__manifest *m, s0__buf *out, s0_error **err);
/** Decode and validate. @retval S0_ECORRUPT @retval S0_ENOMEM */
int s0__manifest_decode(const void *buf, size_t len, s0__manifest *out, s0_error **err);
/** Free what encode's input or decode's output owns. */
void s0__manifest_clear(s0__manifest *m);
/**
 * Read and decode an image's manifest.
 * @retval S0_ENOTFOUND @retval S0_ECORRUPT
 */
int s0__manifest_load(s0__ckpt *c, const s0__objid *image, s0__manifest *out, s0_error **err);

/** Parts of chunk_bytes each for a blob of @p len bytes. */
uint32_t s0__mf_nparts(uint64_t len, uint32_t chunk_bytes);

/**
 * Read one chunk-table page: @p n ids.
 * @retval S0_ENOTFOUND / S0_ECORRUPT (also when its size is not n ids).
 */
int s0__mf_read_page(s0__ckpt *c, s0__objctx *cx, const s0__objid *page, s0__objid *ids,
                     size_t n, s0_error **err);

/**
 * Call @p fn (kind S0__GC_ROOT_OBJECT) for every object an image needs but
 * its manifest: blob parts, chunk-table pages and the non-zero chunk ids
 * they hold (pages are read; repeats are reported again).
 * @retval S0_ENOTFOUND / S0_ECORRUPT a page cannot be read.
 */
int s0__mf_walk(s0__ckpt *c, const s0__manifest *m,
                int (*fn)(void *ctx, int kind, const s0__objid *id), void *ctx, s0_error **err);

#endif
