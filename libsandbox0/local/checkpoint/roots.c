/* GC roots of retained memory images (ckpt.h s0__ckpt_image_roots). */
#include "local/checkpoint/ckpt_int.h"
#include "local/blocks/bstore.h"

static int emit_blob(const s0__mf_blob *b, int (*emit)(void *, int, const s0__objid *), void *ctx)
{
	for (uint32_t i = 0; i < b->nparts; i++) {
		int rc = emit(ctx, S0__GC_ROOT_OBJECT, &b->ids[i]);
		if (rc < 0)
			return rc;
	}
	return S0_OK;
}

int s0__ckpt_image_roots(s0__ckpt *c, const s0__objid *image,
                         int (*emit)(void *emit_ctx, int kind, const s0__objid *id),
                         void *emit_ctx, s0_error **err)
{
	s0__manifest m;
	int rc = s0__manifest_load(c, image, &m, err);
	if (rc < 0)
		return rc;
	rc = emit(emit_ctx, S0__GC_ROOT_OBJECT, image);
	const s0__mf_blob *b[3] = {&m.state, &m.tmpfs, &m.sessions};
	for (int i = 0; rc == S0_OK && i < 3; i++)
		rc = emit_blob(b[i], emit, emit_ctx);
	for (size_t i = 0; rc == S0_OK && i < m.nheaps; i++)
		for (size_t k = 0; rc == S0_OK && k < m.heaps[i].n; k++)
			if (!s0__objid_is_zero(&m.heaps[i].ids[k]))
				rc = emit(emit_ctx, S0__GC_ROOT_OBJECT, &m.heaps[i].ids[k]);
	s0__manifest_clear(&m);
	return rc < 0 ? s0__error_set(err, rc, NULL, "GC roots of a memory image: emit failed") : rc;
}
