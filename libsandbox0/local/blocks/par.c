/* Parallel-for over publish work on the shared object-store worker pool
 * (objects/objpar.h), one codec context per thread from the block store. */
#include "local/blocks/bstore_impl.h"
#include "local/objects/objpar.h"

static int ctx_get(void *owner, s0__objctx **cx, s0_error **err)
{
	return s0__bstore_ctx_get(owner, cx, err);
}

static void ctx_put(void *owner, s0__objctx *cx)
{
	s0__bstore_ctx_put(owner, cx);
}

int s0__par_run(s0__bstore *bs, size_t n, s0__par_fn fn, void *arg, s0_error **err)
{
	s0__objpar_ctxs ctxs = {bs, ctx_get, ctx_put};
	return s0__objpar_run(bs->threads, n, &ctxs, fn, arg, err);
}
