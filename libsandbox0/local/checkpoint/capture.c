/*
 * The capture and commit phases (ckpt.h): plan the objects of an image
 * (dirty heap chunks, clean chunks to verify, blob parts), store them in
 * parallel into one batch, add the manifest, commit once.
 */
#include "local/checkpoint/ckpt_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

enum { IT_CHUNK = 1, IT_VERIFY, IT_PART };

typedef struct item {
	uint8_t kind;
	const uint8_t *data; /* IT_VERIFY: NULL when the chunk is lazy */
	size_t len;
	s0__objid *id;       /* in (VERIFY) / out */
	bool stored, deduped, zero;
} item;

typedef struct plan {
	s0__ckpt *c;
	s0__objbatch *batch;
	item *v;
	size_t n, cap;
	s0__manifest m;
	s0__rt_region *heaps;
	size_t nheaps;
	void *blobs[3];
	size_t blob_len[3];
} plan;

static int add(plan *pl, item it)
{
	if (pl->n == pl->cap) {
		size_t cap = pl->cap ? 2 * pl->cap : 256;
		item *v = realloc(pl->v, cap * sizeof *v);
		if (!v)
			return S0_ENOMEM;
		pl->v = v;
		pl->cap = cap;
	}
	pl->v[pl->n++] = it;
	return S0_OK;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	const uint64_t *w = (const uint64_t *)(const void *)p;
	for (size_t i = 0; i < n / 8; i++)
		if (w[i])
			return false;
	return true;
}

static int plan_blob(plan *pl, s0__mf_blob *b, const void *data, size_t len, s0_error **err)
{
	uint32_t chunk = pl->m.info.chunk_bytes;
	b->present = true;
	b->len = len;
	b->nparts = s0__mf_nparts(len, chunk);
	if (!(b->ids = calloc(b->nparts ? b->nparts : 1, sizeof *b->ids)))
		return s0__error_nomem(err);
	for (uint32_t i = 0; i < b->nparts; i++) {
		size_t off = (size_t)i * chunk, n = len - off < chunk ? len - off : chunk;
		if (add(pl, (item){.kind = IT_PART, .data = (const uint8_t *)data + off, .len = n,
		                   .id = &b->ids[i]}) < 0)
			return s0__error_nomem(err);
	}
	return S0_OK;
}

static int plan_heap(plan *pl, s0__mf_heap *mh, s0__heap *h, s0_error **err)
{
	s0__heap_chunkinfo *ci = NULL;
	size_t n = 0;
	int rc = s0__heap_snapshot(h, &ci, &n, err);
	if (rc < 0)
		return rc;
	mh->size = s0__heap_size(h);
	mh->n = n;
	if (!(mh->ids = calloc(n ? n : 1, sizeof *mh->ids)))
		rc = s0__error_nomem(err);
	uint32_t chunk = s0__heap_chunk_bytes(h);
	for (size_t k = 0; rc == S0_OK && k < n; k++) {
		item it = {.id = &mh->ids[k], .data = ci[k].data, .len = chunk};
		mh->ids[k] = ci[k].id;
		if (ci[k].state == S0__CHUNK_DAMAGED)
			rc = s0__error_set(err, S0_ECORRUPT, "chunk_damaged",
			                   "heap chunk %zu of process %d is damaged", k, (int)mh->pid);
		else if (!ci[k].dirty)
			it.kind = s0__objid_is_zero(&ci[k].id) ? 0 : IT_VERIFY;
		else
			it.kind = ci[k].data ? IT_CHUNK : 0;
		if (rc == S0_OK && ci[k].dirty && !ci[k].data)
			memset(&mh->ids[k], 0, sizeof mh->ids[k]);
		if (rc == S0_OK && it.kind && add(pl, it) < 0)
			rc = s0__error_nomem(err);
	}
	free(ci);
	return rc;
}

/* One object: store a chunk or part, or verify a clean chunk's object. */
static int run_item(void *arg, size_t i, s0__objctx *cx, s0_error **err)
{
	plan *pl = arg;
	item *it = &pl->v[i];
	s0__objstore *os = pl->c->os;
	if (it->kind == IT_VERIFY) {
		bool have = false;
		int rc = s0__objstore_has(os, NULL, it->id, &have, err);
		if (rc < 0 || have)
			return rc;
		if (!it->data) {
			char hex[S0__OBJID_HEX_BYTES];
			s0__objid_hex(it->id, hex);
			return s0__error_set(err, S0_ECORRUPT, "chunk_missing",
			                     "heap chunk object %s of the previous image is gone", hex);
		}
	} else if (it->kind == IT_CHUNK && all_zero(it->data, it->len)) {
		memset(it->id, 0, sizeof *it->id);
		it->zero = true;
		return S0_OK;
	} else if (it->kind == IT_CHUNK) {
		/* the object is the chunk without its zero tail (the pager pads it
		 * back): a chunk that is part data, part padding is hashed,
		 * compressed and encrypted for its data only */
		const uint64_t *w = (const uint64_t *)(const void *)it->data;
		size_t words = it->len / 8;
		while (words > 1 && !w[words - 1])
			words--;
		it->len = words * 8;
		s0__objstore_hash(os, it->data, it->len, it->id);
	} else {
		s0__objstore_hash(os, it->data, it->len, it->id);
	}
	bool stored = false;
	int rc = s0__objstore_put_hashed(os, cx, pl->batch, it->id, it->data, it->len, &stored, err);
	it->stored = stored;
	it->deduped = !stored;
	return rc;
}

static void plan_free(plan *pl)
{
	free(pl->v);
	s0__manifest_clear(&pl->m);
	for (size_t i = 0; i < pl->nheaps; i++)
		s0__heap_unref(pl->heaps[i].heap);
	free(pl->heaps);
	for (int i = 0; i < 3; i++)
		free(pl->blobs[i]);
}

/* Plan with the source locked: the state blob, every region, every blob. */
static int build_plan(plan *pl, const s0__rt_image_src *src, s0_error **err)
{
	int rc = src->state_locked(src->self, &pl->blobs[0], &pl->blob_len[0],
	                           &pl->m.info.sockets_dropped, err);
	if (rc == S0_OK)
		rc = src->regions_locked(src->self, &pl->heaps, &pl->nheaps, err);
	if (rc < 0)
		return rc;
	pl->m.info.chunk_bytes = pl->nheaps ? s0__heap_chunk_bytes(pl->heaps[0].heap)
	                                    : S0__HEAP_CHUNK_DEFAULT;
	if (!(pl->m.heaps = calloc(pl->nheaps ? pl->nheaps : 1, sizeof *pl->m.heaps)))
		return s0__error_nomem(err);
	for (size_t i = 0; rc == S0_OK && i < pl->nheaps; i++) {
		s0__mf_heap *mh = &pl->m.heaps[pl->m.nheaps++];
		mh->pid = pl->heaps[i].pid;
		rc = plan_heap(pl, mh, pl->heaps[i].heap, err);
		pl->m.info.logical_bytes += mh->size;
		pl->m.info.heap_chunks += mh->n;
	}
	s0__mf_blob *b[3] = {&pl->m.state, &pl->m.tmpfs, &pl->m.sessions};
	for (int i = 0; rc == S0_OK && i < 3; i++) {
		if (pl->blobs[i])
			rc = plan_blob(pl, b[i], pl->blobs[i], pl->blob_len[i], err);
		pl->m.info.logical_bytes += pl->blob_len[i];
	}
	return rc;
}

static int hook_error(int v, s0_error **err)
{
	return s0__error_set(err, S0_EMEMCAPTURE,
	                     v == S0__HOOK_UNCERTAIN ? "capture_uncertain" : "capture_failed",
	                     "memory capture %s", v == S0__HOOK_UNCERTAIN ? "outcome is uncertain"
	                                                                : "failed");
}

/* The chunk-table pages of every heap, into the batch. */
static int store_pages(plan *pl, s0_error **err)
{
	s0__objctx *cx = NULL;
	int rc = s0__ckpt_ctx_get(pl->c, &cx, err);
	for (size_t i = 0; rc == S0_OK && i < pl->m.nheaps; i++) {
		s0__mf_heap *h = &pl->m.heaps[i];
		h->npages = (h->n + S0__HEAP_IDS_PER_PAGE - 1) / S0__HEAP_IDS_PER_PAGE;
		if (!(h->pages = calloc(h->npages ? h->npages : 1, sizeof *h->pages)))
			rc = s0__error_nomem(err);
		for (size_t k = 0; rc == S0_OK && k < h->npages; k++) {
			size_t first = k * S0__HEAP_IDS_PER_PAGE, n = h->n - first;
			n = n < S0__HEAP_IDS_PER_PAGE ? n : S0__HEAP_IDS_PER_PAGE;
			rc = s0__objstore_put(pl->c->os, cx, pl->batch, h->ids + first, n * sizeof *h->ids,
			                      &h->pages[k], err);
		}
	}
	if (cx)
		s0__ckpt_ctx_put(pl->c, cx);
	return rc;
}

/* Milliseconds on the monotonic clock, and of the process's CPU time (the
 * phases' trace). */
static double mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double cpu_ms(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
	       (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

/* Store everything and commit; the guest is locked. With
 * $S0_GVISOR_MEM_TRACE set, where the time goes (bench/gvisor-memory). */
static int store(plan *pl, const char *sandbox_id, s0__objid *image, s0_error **err)
{
	s0__ckpt *c = pl->c;
	int v = s0__ckpt_hook(c, S0__CKPT_CAPTURE, sandbox_id);
	if (v == S0__HOOK_FAIL || v == S0__HOOK_UNCERTAIN)
		return hook_error(v, err);
	double t0 = mono_ms(), c0 = cpu_ms(), t1 = 0, c1 = 0;
	int rc = s0__objstore_begin(c->os, &pl->batch, err);
	if (rc == S0_OK)
		rc = s0__ckpt_par(c, pl->n, run_item, pl, err);
	t1 = mono_ms();
	c1 = cpu_ms();
	if (rc == S0_OK)
		rc = store_pages(pl, err);
	s0__buf mf = S0__BUF_INIT;
	if (rc == S0_OK)
		rc = s0__manifest_encode(&pl->m, &mf, err);
	s0__objctx *cx = NULL;
	if (rc == S0_OK && (rc = s0__ckpt_ctx_get(c, &cx, err)) == S0_OK) {
		rc = s0__objstore_put(c->os, cx, pl->batch, mf.data, mf.len, image, err);
		s0__ckpt_ctx_put(c, cx);
	}
	s0__buf_free(&mf);
	v = rc == S0_OK ? s0__ckpt_hook(c, S0__CKPT_COMMIT, sandbox_id) : S0__HOOK_PROCEED;
	if (v == S0__HOOK_FAIL || v == S0__HOOK_UNCERTAIN)
		rc = hook_error(v, err);
	if (rc < 0) {
		s0__objstore_abort(c->os, pl->batch);
		return rc;
	}
	rc = s0__objstore_commit(c->os, pl->batch, err);
	if (getenv("S0_GVISOR_MEM_TRACE"))
		fprintf(stderr, "checkpoint: %zu objects hashed, compressed, encrypted, packed in "
		        "%.0f ms on %u threads (%.0f ms CPU); commit and sync %.0f ms\n", pl->n,
		        t1 - t0, (unsigned)c->threads, c1 - c0, mono_ms() - t1);
	return rc;
}

static void fill_info(const plan *pl, const s0__objid *image, s0__ckpt_image_info *out)
{
	memset(out, 0, sizeof *out);
	out->image_id = *image;
	s0__objid_hex(image, out->image_hex);
	out->logical_bytes = pl->m.info.logical_bytes;
	out->heap_chunks = pl->m.info.heap_chunks;
	out->sockets_dropped = pl->m.info.sockets_dropped;
	uint64_t listed = 0;
	for (size_t i = 0; i < pl->n; i++) {
		const item *it = &pl->v[i];
		if (it->kind == IT_PART) {
			out->parts++;
		} else {
			listed++;
			out->chunks_zero += it->zero;
			out->chunks_written += it->stored;
			out->chunks_deduped += it->kind == IT_CHUNK && it->deduped;
			out->chunks_reused += it->kind == IT_VERIFY && !it->stored;
		}
		out->plain_bytes_written += it->stored ? it->len : 0;
	}
	out->chunks_zero += out->heap_chunks - listed; /* zero chunks never planned */
}

/* A failure of the capture phases as S0_EMEMCAPTURE with its cause. */
static int wrap(int rc, s0_error **err, s0_error *cause)
{
	if (rc == S0_EMEMCAPTURE || rc == S0_ENOMEM)
		return s0__error_put(err, cause);
	s0_error *e = s0__error_make(S0_EMEMCAPTURE, "capture_failed",
	                             cause ? s0_error_message(cause) : "memory capture failed");
	if (!e) {
		s0_error_free(cause);
		return s0__error_nomem(err);
	}
	s0__error_set_cause(e, cause);
	return s0__error_put(err, e);
}

static void fill_meta(plan *pl, const s0__ckpt_meta *meta)
{
	s0__ckpt_manifest_info *in = &pl->m.info;
	s0__strlcpy(in->sandbox_id, meta->sandbox_id ? meta->sandbox_id : "", sizeof in->sandbox_id);
	s0__strlcpy(in->rootfs_generation, meta->rootfs_generation ? meta->rootfs_generation : "",
	            sizeof in->rootfs_generation);
	in->runtime_generation = meta->runtime_generation;
	in->created_at_ms = s0__real_unix_ms();
	in->fingerprint = *meta->fingerprint;
}

int s0__ckpt_capture(s0__ckpt_prep *p, const s0__rt_image_src *src, const s0__ckpt_meta *meta,
                     s0__ckpt_image_info *out, s0_error **err)
{
	if (!p->authorized || !meta || !meta->fingerprint)
		return s0__error_set(err, S0_EINVAL, "invalid_request",
		                     "capture needs an authorized preparation and a fingerprint");
	plan pl = {.c = p->c};
	fill_meta(&pl, meta);
	s0_error *e = NULL;
	int rc = src->tmpfs_blob(src->self, &pl.blobs[1], &pl.blob_len[1], &e);
	if (rc == S0_OK && meta->sessions) {
		if ((pl.blobs[2] = malloc(meta->sessions_len ? meta->sessions_len : 1)))
			memcpy(pl.blobs[2], meta->sessions, meta->sessions_len);
		pl.blob_len[2] = meta->sessions_len;
		rc = pl.blobs[2] ? S0_OK : s0__error_nomem(&e);
	}
	s0__objid image;
	if (rc == S0_OK) {
		src->lock(src->self);
		rc = build_plan(&pl, src, &e);
		if (rc == S0_OK)
			rc = store(&pl, p->sandbox_id, &image, &e);
		for (size_t i = 0; rc == S0_OK && i < pl.nheaps; i++)
			s0__heap_commit_ids(pl.heaps[i].heap, pl.m.heaps[i].ids, pl.m.heaps[i].n);
		src->unlock(src->self);
	}
	if (rc == S0_OK) {
		fill_info(&pl, &image, out);
		out->upload_reserved = p->reserved;
		atomic_fetch_add(&p->c->captures, 1);
	}
	plan_free(&pl);
	return rc < 0 ? wrap(rc, err, e) : S0_OK;
}
