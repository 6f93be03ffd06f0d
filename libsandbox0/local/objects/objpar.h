/*
 * Parallel-for over object-store work: the caller plus up to threads-1
 * helper threads, each with its own codec context (zstd and libsodium
 * state are per thread). Used by block-store publishes and memory-image
 * captures.
 */
#ifndef S0_OBJPAR_H
#define S0_OBJPAR_H

#include <stddef.h>

#include "common/internal.h"
#include "local/objects/objstore.h"

/* One item of work; a negative return stops the others (first error wins). */
typedef int (*s0__objpar_fn)(void *arg, size_t i, s0__objctx *cx, s0_error **err);

/* Where each worker borrows and returns its codec context. */
typedef struct s0__objpar_ctxs {
	void *owner;
	int (*get)(void *owner, s0__objctx **cx, s0_error **err);
	void (*put)(void *owner, s0__objctx *cx);
} s0__objpar_ctxs;

/*
 * Run fn for i in [0, n) on threads (1..8) threads including the caller.
 * Fewer helpers are used when threads cannot be created (still correct).
 * Returns S0_OK, or the first failure's code with its error in *err.
 */
int s0__objpar_run(size_t threads, size_t n, const s0__objpar_ctxs *ctxs, s0__objpar_fn fn,
                   void *arg, s0_error **err);

#endif
