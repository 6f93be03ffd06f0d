/*
 * Restore (ckpt.h): verify the manifest and the small state, read the
 * blobs, and hand the driver lazy regions whose chunks a pager fetches
 * and verifies on first touch.
 */
#include "local/checkpoint/ckpt_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- the pager of a restored guest ---- */

typedef struct pager_ctx {
	s0__ckpt *c;
} pager_ctx;

static int fetch_chunk(void *ctx, const s0__objid *id, void *buf, size_t len, s0_error **err)
{
	pager_ctx *pc = ctx;
	s0__objctx *cx;
	int rc = s0__ckpt_ctx_get(pc->c, &cx, err);
	if (rc < 0)
		return rc;
	size_t got = 0;
	rc = s0__objstore_get(pc->c->os, cx, id, buf, len, &got, err);
	s0__ckpt_ctx_put(pc->c, cx);
	if (rc == S0_OK && (got > len || got == 0))
		rc = s0__error_set(err, S0_ECORRUPT, "corrupt", "heap chunk of %zu bytes, expected %zu",
		                   got, len);
	if (rc == S0_OK) /* stored without its zero tail (capture.c) */
		memset((uint8_t *)buf + got, 0, len - got);
	if (rc == S0_OK) {
		atomic_fetch_add(&pc->c->fetched, 1);
		atomic_fetch_add(&pc->c->fetched_bytes, len);
	}
	return rc;
}

static int fetch_ids(void *ctx, const s0__objid *page, s0__objid *ids, size_t n, s0_error **err)
{
	pager_ctx *pc = ctx;
	s0__objctx *cx;
	int rc = s0__ckpt_ctx_get(pc->c, &cx, err);
	if (rc < 0)
		return rc;
	rc = s0__mf_read_page(pc->c, cx, page, ids, n, err);
	s0__ckpt_ctx_put(pc->c, cx);
	return rc;
}

static int make_pager(s0__ckpt *c, s0__pager **out, s0_error **err)
{
	pager_ctx *pc = calloc(1, sizeof *pc);
	if (!pc)
		return s0__error_nomem(err);
	pc->c = c;
	return s0__pager_new(fetch_chunk, fetch_ids, free, pc, out, err);
}

/* ---- blobs ---- */

/* Read and join the parts of a blob (eager; small state). */
static int read_blob(s0__ckpt *c, const s0__mf_blob *b, void **out, s0_error **err)
{
	uint32_t chunk = 0;
	char *buf = malloc(b->len ? b->len : 1);
	if (!buf)
		return s0__error_nomem(err);
	s0__objctx *cx = NULL;
	int rc = s0__ckpt_ctx_get(c, &cx, err);
	uint64_t off = 0;
	for (uint32_t i = 0; rc == S0_OK && i < b->nparts; i++) {
		size_t got = 0;
		rc = s0__objstore_get(c->os, cx, &b->ids[i], buf + off, (size_t)(b->len - off), &got, err);
		if (rc == S0_OK && !chunk)
			chunk = (uint32_t)got;
		if (rc == S0_OK && (!got || (i + 1 < b->nparts && got != chunk)))
			rc = s0__error_set(err, S0_ECORRUPT, "corrupt", "image part %u has a bad size", i);
		off += got;
		atomic_fetch_add(&c->parts_fetched, 1);
	}
	if (rc == S0_OK && off != b->len)
		rc = s0__error_set(err, S0_ECORRUPT, "corrupt", "image blob is %llu bytes, expected %llu",
		                   (unsigned long long)off, (unsigned long long)b->len);
	if (cx)
		s0__ckpt_ctx_put(c, cx);
	if (rc < 0) {
		free(buf);
		return rc;
	}
	*out = buf;
	return S0_OK;
}

static int count_one(void *ctx, int kind, const s0__objid *id)
{
	(void)kind, (void)id;
	(*(uint64_t *)ctx)++;
	return 0;
}

int s0__ckpt_image_read(s0__ckpt *c, const s0__objid *image, s0__ckpt_manifest_info *out,
                        s0_error **err)
{
	s0__manifest m;
	int rc = s0__manifest_load(c, image, &m, err);
	uint64_t n = 0;
	if (rc == S0_OK)
		rc = s0__mf_walk(c, &m, count_one, &n, err);
	if (rc == S0_OK) {
		*out = m.info;
		out->objects = n;
	}
	s0__manifest_clear(&m);
	return rc;
}

/* Generation and fingerprint checks. */
static int check(const s0__manifest *m, const s0__ckpt_restore_opts *o, s0_error **err)
{
	const char *g = o->rootfs_generation;
	if (g && strcmp(g, m->info.rootfs_generation))
		return s0__error_set(err, S0_ECONFLICT, "generation_mismatch",
		                     "memory image is of RootFS generation %s, the head is %s",
		                     m->info.rootfs_generation, g);
	const char *f = o->dest ? s0__ckpt_fp_mismatch(&m->info.fingerprint, o->dest) : NULL;
	if (f)
		return s0__error_set(err, S0_ECONFLICT, "image_incompatible",
		                     "memory image is incompatible with the destination: %s differs", f);
	return S0_OK;
}

static int hook_fail(s0__ckpt *c, int phase, const char *id, s0_error **err)
{
	int v = s0__ckpt_hook(c, phase, id);
	if (v == S0__HOOK_PROCEED)
		return S0_OK;
	return s0__error_set(err, S0_ERESUME, "restore_failed", "memory restore failed at %s",
	                     s0__ckpt_phase_name(phase));
}

/* The regions' lazy chunk tables and their pager. */
static int regions(s0__ckpt *c, const s0__manifest *m, s0__ckpt_restored *r, s0_error **err)
{
	s0__heap_image *hi = calloc(m->nheaps ? m->nheaps : 1, sizeof *hi);
	s0__objid **pages = calloc(m->nheaps ? m->nheaps : 1, sizeof *pages);
	int rc = hi && pages ? make_pager(c, &r->data.pager, err) : s0__error_nomem(err);
	for (size_t i = 0; rc == S0_OK && i < m->nheaps; i++) {
		size_t np = m->heaps[i].npages;
		if (np && !(pages[i] = malloc(np * sizeof **pages))) {
			rc = s0__error_nomem(err);
			break;
		}
		if (np)
			memcpy(pages[i], m->heaps[i].pages, np * sizeof **pages);
		hi[i] = (s0__heap_image){.pid = m->heaps[i].pid, .size_bytes = m->heaps[i].size,
		                         .chunk_bytes = m->info.chunk_bytes, .pages = pages[i],
		                         .npages = np};
	}
	r->data.regions = hi;
	r->data.nregions = hi ? m->nheaps : 0;
	free(pages); /* each page table is owned through hi[i].pages */
	return rc;
}

/* Everything the driver rebuilds from: state, tmpfs, sessions, regions. */
static int rebuild(s0__ckpt *c, const s0__manifest *m, const s0__ckpt_restore_opts *o,
                   s0__ckpt_restored *r, s0_error **err)
{
	void *state = NULL, *tmp = NULL;
	int rc = read_blob(c, &m->state, &state, err);
	if (rc == S0_OK && m->tmpfs.present)
		rc = read_blob(c, &m->tmpfs, &tmp, err);
	if (rc == S0_OK && m->sessions.present && o->sessions)
		rc = read_blob(c, &m->sessions, &r->sessions, err);
	r->data.state = state;
	r->data.state_len = (size_t)m->state.len;
	r->data.tmpfs = tmp;
	r->data.tmpfs_len = tmp ? (size_t)m->tmpfs.len : 0;
	r->sessions_len = r->sessions ? (size_t)m->sessions.len : 0;
	if (rc == S0_OK)
		rc = regions(c, m, r, err);
	return rc;
}

int s0__ckpt_restore(s0__ckpt *c, const s0__objid *image, const s0__ckpt_restore_opts *o,
                     s0__ckpt_restored *out, s0_error **err)
{
	s0__ckpt_restore_opts d = {0};
	if (!o)
		o = &d;
	int rc = hook_fail(c, S0__CKPT_RESTORE_AUTHORIZE, o->sandbox_id, err);
	s0__manifest m = {0};
	if (rc == S0_OK)
		rc = s0__manifest_load(c, image, &m, err);
	if (rc == S0_OK)
		rc = check(&m, o, err);
	if (rc == S0_OK)
		rc = hook_fail(c, S0__CKPT_RESTORE, o->sandbox_id, err);
	s0__ckpt_restored r = {0};
	if (rc == S0_OK)
		rc = rebuild(c, &m, o, &r, err);
	r.info = m.info;
	s0__manifest_clear(&m);
	if (rc < 0) {
		s0__ckpt_restored_clear(&r);
		return rc;
	}
	atomic_fetch_add(&c->restores, 1);
	*out = r;
	return S0_OK;
}

void s0__ckpt_restored_clear(s0__ckpt_restored *r)
{
	if (!r)
		return;
	free((void *)r->data.state);
	free((void *)r->data.tmpfs);
	for (size_t i = 0; r->data.regions && i < r->data.nregions; i++)
		free((void *)r->data.regions[i].pages);
	free((void *)r->data.regions);
	s0__pager_unref(r->data.pager);
	free(r->sessions);
	memset(r, 0, sizeof *r);
}
