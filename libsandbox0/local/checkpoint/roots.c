/* Every object of a retained image: GC roots and counts (ckpt.h s0__ckpt_image_roots). */
#include "local/checkpoint/ckpt_int.h"
#include "local/blocks/bstore.h"

#include <stdlib.h>

typedef int (*emit_fn)(void *ctx, int kind, const s0__objid *id);

static int walk_blob(const s0__mf_blob *b, emit_fn fn, void *ctx)
{
	int rc = S0_OK;
	for (uint32_t i = 0; rc == S0_OK && i < b->nparts; i++)
		rc = fn(ctx, S0__GC_ROOT_OBJECT, &b->ids[i]);
	return rc;
}

/* One heap: its pages, and the non-zero chunk ids each holds. */
static int walk_heap(s0__ckpt *c, s0__objctx *cx, const s0__mf_heap *h, s0__objid *ids,
                     emit_fn fn, void *ctx, s0_error **err)
{
	int rc = S0_OK;
	for (size_t k = 0; rc == S0_OK && k < h->npages; k++) {
		size_t first = k * S0__HEAP_IDS_PER_PAGE, n = h->n - first;
		n = n < S0__HEAP_IDS_PER_PAGE ? n : S0__HEAP_IDS_PER_PAGE;
		rc = fn(ctx, S0__GC_ROOT_OBJECT, &h->pages[k]);
		if (rc == S0_OK)
			rc = s0__mf_read_page(c, cx, &h->pages[k], ids, n, err);
		for (size_t i = 0; rc == S0_OK && i < n; i++)
			if (!s0__objid_is_zero(&ids[i]))
				rc = fn(ctx, S0__GC_ROOT_OBJECT, &ids[i]);
	}
	return rc;
}

int s0__mf_walk(s0__ckpt *c, const s0__manifest *m, emit_fn fn, void *ctx, s0_error **err)
{
	const s0__mf_blob *b[3] = {&m->state, &m->tmpfs, &m->sessions};
	int rc = S0_OK;
	for (int i = 0; rc == S0_OK && i < 3; i++)
		rc = walk_blob(b[i], fn, ctx);
	s0__objid *ids = malloc(S0__HEAP_IDS_PER_PAGE * sizeof *ids);
	s0__objctx *cx = NULL;
	if (!ids)
		return s0__error_nomem(err);
	if (rc == S0_OK && m->nheaps)
		rc = s0__ckpt_ctx_get(c, &cx, err);
	for (size_t i = 0; rc == S0_OK && i < m->nheaps; i++)
		rc = walk_heap(c, cx, &m->heaps[i], ids, fn, ctx, err);
	if (cx)
		s0__ckpt_ctx_put(c, cx);
	free(ids);
	return rc;
}

int s0__ckpt_image_roots(s0__ckpt *c, const s0__objid *image, emit_fn emit, void *emit_ctx,
                         s0_error **err)
{
	s0__manifest m;
	int rc = s0__manifest_load(c, image, &m, err);
	if (rc < 0)
		return rc;
	s0_error *e = NULL;
	rc = emit(emit_ctx, S0__GC_ROOT_OBJECT, image);
	if (rc == S0_OK)
		rc = s0__mf_walk(c, &m, emit, emit_ctx, &e);
	s0__manifest_clear(&m);
	if (rc < 0 && !e)
		return s0__error_set(err, rc, NULL, "GC roots of a memory image: emit failed");
	return rc < 0 ? s0__error_put(err, e) : S0_OK;
}
