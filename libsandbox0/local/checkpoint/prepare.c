/* Capture preparation: estimate, admission, reservation, cancel, authorisation (ckpt.h). */
#include "local/checkpoint/ckpt_int.h"

#include <stdlib.h>
#include <string.h>

/* What the small state adds to an image, at most (estimate). */
#define STATE_ESTIMATE ((uint64_t)64 << 10)

/* Image bytes (every chunk that may hold data) and upload bytes (chunks to store). */
static int estimate(const s0__rt_image_src *src, uint64_t *image, uint64_t *upload,
                    s0_error **err)
{
	s0__rt_region *hv = NULL;
	size_t nh = 0;
	src->lock(src->self);
	int rc = src->regions_locked(src->self, &hv, &nh, err);
	src->unlock(src->self);
	uint64_t extra = STATE_ESTIMATE + src->tmpfs_bytes(src->self);
	*image = *upload = extra;
	for (size_t i = 0; rc == S0_OK && i < nh; i++) {
		s0__heap_chunkinfo *ci = NULL;
		size_t n = 0;
		uint64_t chunk = s0__heap_chunk_bytes(hv[i].heap);
		rc = s0__heap_snapshot(hv[i].heap, &ci, &n, err);
		for (size_t k = 0; rc == S0_OK && k < n; k++) {
			*image += ci[k].state != S0__CHUNK_ZERO ? chunk : 0;
			*upload += ci[k].dirty && ci[k].data ? chunk : 0;
		}
		free(ci);
	}
	for (size_t i = 0; i < nh; i++)
		s0__heap_unref(hv[i].heap);
	free(hv);
	return rc;
}

static int cancelled(s0__ckpt_prep *p, int verdict, s0_error **err)
{
	const char *id = p->sandbox_id ? p->sandbox_id : "";
	if (verdict == S0__HOOK_FAIL)
		return s0__error_set(err, S0_EUNAVAILABLE, "preparation_failed",
		                     "memory checkpoint preparation failed for %s", id);
	if (verdict == S0__HOOK_HOLD)
		return s0__error_set(err, S0_EUNAVAILABLE, "preparation_expired",
		                     "memory checkpoint preparation expired for %s", id);
	return s0__error_set(err, S0_EUNAVAILABLE, "reservation_unavailable",
	                     "memory checkpoint reservation unavailable (%llu bytes) for %s",
	                     (unsigned long long)p->upload_bytes, id);
}

/* Retry the hook and the reservation until both pass or the deadline. */
static int reserve(s0__ckpt_prep *p, const s0__ckpt_prepare_opts *o, s0_error **err)
{
	s0__ckpt *c = p->c;
	s0_clock clk;
	if (o->clock)
		clk = *o->clock;
	else
		s0_clock_real(&clk);
	int64_t step = o->retry_ms > 0 ? o->retry_ms : 100;
	for (;;) {
		int v = s0__ckpt_hook(c, S0__CKPT_PREPARE, p->sandbox_id);
		if (v == S0__HOOK_FAIL)
			return cancelled(p, v, err);
		if (v != S0__HOOK_HOLD && (!c->budget || s0__ckpt_budget_try(c->budget, p->upload_bytes))) {
			p->reserved = c->budget ? p->upload_bytes : 0;
			return S0_OK;
		}
		int64_t now = clk.monotonic_ms(clk.ctx);
		if (!o->deadline_ms || now >= o->deadline_ms)
			return cancelled(p, v, err);
		int64_t wait = o->deadline_ms - now < step ? o->deadline_ms - now : step;
		if (clk.sleep_ms(clk.ctx, wait, o->cancel) == S0_ECANCELED)
			return s0__error_set(err, S0_ECANCELED, NULL, "memory checkpoint preparation canceled");
	}
}

int s0__ckpt_prepare(s0__ckpt *c, const s0__rt_image_src *src, const s0__ckpt_prepare_opts *o,
                     s0__ckpt_prep **out, s0_error **err)
{
	s0__ckpt_prepare_opts d = {0};
	if (!o)
		o = &d;
	s0__ckpt_prep *p = calloc(1, sizeof *p);
	if (!p || (o->sandbox_id && !(p->sandbox_id = s0__strdup(o->sandbox_id)))) {
		free(p);
		return s0__error_nomem(err);
	}
	p->c = c;
	int rc = estimate(src, &p->image_bytes, &p->upload_bytes, err);
	if (rc == S0_OK && c->budget)
		rc = s0__ckpt_budget_admit(c->budget, p->image_bytes, p->upload_bytes, err);
	if (rc == S0_OK)
		rc = reserve(p, o, err);
	if (rc < 0) {
		free(p->sandbox_id);
		free(p);
		return rc;
	}
	*out = p;
	return S0_OK;
}

int s0__ckpt_cancel(s0__ckpt_prep *p, s0_error **err)
{
	if (p->authorized)
		return s0__error_set(err, S0_ECONFLICT, "capture_authorized",
		                     "capture is authorized; it cannot be canceled");
	s0__ckpt_finish(p);
	return S0_OK;
}

int s0__ckpt_authorize(s0__ckpt_prep *p, s0_error **err)
{
	p->authorized = true;
	int v = s0__ckpt_hook(p->c, S0__CKPT_AUTHORIZE, p->sandbox_id);
	if (v == S0__HOOK_FAIL || v == S0__HOOK_UNCERTAIN)
		return s0__error_set(err, S0_EMEMCAPTURE,
		                     v == S0__HOOK_FAIL ? "capture_failed" : "capture_uncertain",
		                     "memory capture %s after authorization",
		                     v == S0__HOOK_FAIL ? "failed" : "outcome is uncertain");
	return S0_OK;
}

void s0__ckpt_finish(s0__ckpt_prep *p)
{
	if (!p)
		return;
	if (p->reserved && p->c->budget)
		s0__ckpt_budget_put(p->c->budget, p->reserved);
	free(p->sandbox_id);
	free(p);
}

int s0__ckpt_capture_all(s0__ckpt *c, const s0__rt_image_src *src, const s0__ckpt_meta *meta,
                         const s0__ckpt_prepare_opts *po, s0__ckpt_image_info *out,
                         s0_error **err)
{
	s0__ckpt_prepare_opts o = po ? *po : (s0__ckpt_prepare_opts){0};
	if (!o.sandbox_id)
		o.sandbox_id = meta->sandbox_id;
	s0__ckpt_prep *p;
	int rc = s0__ckpt_prepare(c, src, &o, &p, err);
	if (rc < 0)
		return rc;
	rc = s0__ckpt_authorize(p, err);
	if (rc == S0_OK)
		rc = s0__ckpt_capture(p, src, meta, out, err);
	if (rc == S0_OK)
		out->upload_reserved = p->reserved;
	s0__ckpt_finish(p);
	return rc;
}
