/* The image manifest: encode, decode, load (ckpt_int.h; format "S0MIMG01"). */
#include "local/checkpoint/ckpt_int.h"
#include "local/runtime/rtser.h"

#include <stdlib.h>
#include <string.h>

#define MAGIC "S0MIMG01"
#define MAX_HEAPS 65536u
#define MAX_LEN ((uint64_t)1 << 40)

uint32_t s0__mf_nparts(uint64_t len, uint32_t chunk_bytes)
{
	return (uint32_t)((len + chunk_bytes - 1) / chunk_bytes);
}

static void put_fp(s0__ser *w, const s0__ckpt_fp *f)
{
	s0__ser_str(w, f->runtime_version);
	s0__ser_str(w, f->platform);
	s0__ser_str(w, f->cpu_features);
	s0__ser_str(w, f->template_image);
	s0__ser_i64(w, f->cpu_millis);
	s0__ser_i64(w, f->memory_bytes);
	s0__ser_str(w, f->procd_version);
}

static void put_blob(s0__ser *w, const s0__mf_blob *b)
{
	s0__ser_u8(w, b->present);
	s0__ser_u64(w, b->len);
	s0__ser_u32(w, b->nparts);
	for (uint32_t i = 0; i < b->nparts; i++)
		s0__ser_raw(w, b->ids[i].b, S0__OBJID_BYTES);
}

int s0__manifest_encode(const s0__manifest *m, s0__buf *out, s0_error **err)
{
	const s0__ckpt_manifest_info *in = &m->info;
	s0__ser w = {0};
	s0__ser_raw(&w, MAGIC, 8);
	s0__ser_str(&w, in->sandbox_id);
	s0__ser_str(&w, in->rootfs_generation);
	s0__ser_i64(&w, in->runtime_generation);
	s0__ser_i64(&w, in->created_at_ms);
	put_fp(&w, &in->fingerprint);
	s0__ser_u32(&w, in->chunk_bytes);
	s0__ser_u64(&w, in->logical_bytes);
	s0__ser_u64(&w, in->sockets_dropped);
	put_blob(&w, &m->state);
	put_blob(&w, &m->tmpfs);
	put_blob(&w, &m->sessions);
	s0__ser_u32(&w, (uint32_t)m->nheaps);
	for (size_t i = 0; i < m->nheaps; i++) {
		s0__ser_u32(&w, (uint32_t)m->heaps[i].pid);
		s0__ser_u64(&w, m->heaps[i].size);
		for (size_t k = 0; k < m->heaps[i].npages; k++)
			s0__ser_raw(&w, m->heaps[i].pages[k].b, S0__OBJID_BYTES);
	}
	if (w.oom) {
		s0__buf_free(&w.buf);
		return s0__error_nomem(err);
	}
	*out = w.buf;
	return S0_OK;
}

static void get_fixed(s0__de *d, char *out, size_t cap)
{
	size_t n;
	const char *p = s0__de_bytes(d, cap - 1, &n);
	out[0] = 0;
	if (p && !memchr(p, 0, n)) {
		memcpy(out, p, n);
		out[n] = 0;
	} else if (p) {
		s0__de_fail(d);
	}
}

static void get_fp(s0__de *d, s0__ckpt_fp *f)
{
	get_fixed(d, f->runtime_version, sizeof f->runtime_version);
	get_fixed(d, f->platform, sizeof f->platform);
	get_fixed(d, f->cpu_features, sizeof f->cpu_features);
	get_fixed(d, f->template_image, sizeof f->template_image);
	f->cpu_millis = s0__de_i64(d);
	f->memory_bytes = s0__de_i64(d);
	get_fixed(d, f->procd_version, sizeof f->procd_version);
}

/* n ids into a new array (bounded by what is left to read). */
static s0__objid *get_ids(s0__de *d, uint64_t n, bool *oom)
{
	if (n > d->left / S0__OBJID_BYTES) {
		s0__de_fail(d);
		return NULL;
	}
	s0__objid *v = calloc(n ? n : 1, sizeof *v);
	if (!v) {
		*oom = true;
		return NULL;
	}
	for (uint64_t i = 0; i < n; i++)
		s0__de_raw(d, v[i].b, S0__OBJID_BYTES);
	return v;
}

static void get_blob(s0__de *d, s0__mf_blob *b, uint32_t chunk, bool *oom)
{
	uint8_t present = s0__de_u8(d); /* 0 or 1 as put_blob writes it, nothing else */
	b->present = present != 0;
	b->len = s0__de_u64(d);
	b->nparts = s0__de_u32(d);
	if (present > 1 || b->len > MAX_LEN || b->nparts != s0__mf_nparts(b->len, chunk) || (!b->present && b->len))
		s0__de_fail(d);
	if (!d->bad)
		b->ids = get_ids(d, b->nparts, oom);
}

static void get_heaps(s0__de *d, s0__manifest *m, bool *oom)
{
	uint32_t n = s0__de_u32(d), chunk = m->info.chunk_bytes;
	if (n > MAX_HEAPS || !(m->heaps = calloc(n ? n : 1, sizeof *m->heaps))) {
		if (n > MAX_HEAPS)
			s0__de_fail(d);
		else
			*oom = true;
		return;
	}
	for (uint32_t i = 0; i < n && !d->bad && !*oom; i++) {
		s0__mf_heap *h = &m->heaps[m->nheaps++];
		h->pid = (int32_t)s0__de_u32(d);
		h->size = s0__de_u64(d);
		if (h->size > S0__HEAP_MAX_BYTES || h->pid <= 0 || (i && h->pid <= h[-1].pid)) {
			s0__de_fail(d);
			break;
		}
		h->n = s0__mf_nparts(h->size, chunk);
		h->npages = (h->n + S0__HEAP_IDS_PER_PAGE - 1) / S0__HEAP_IDS_PER_PAGE;
		h->pages = get_ids(d, h->npages, oom);
		m->info.heap_chunks += h->n;
	}
}

int s0__manifest_decode(const void *buf, size_t len, s0__manifest *out, s0_error **err)
{
	memset(out, 0, sizeof *out);
	s0__de d;
	s0__de_init(&d, buf, len);
	bool oom = false;
	char magic[8];
	s0__de_raw(&d, magic, 8);
	if (memcmp(magic, MAGIC, 8))
		s0__de_fail(&d);
	s0__ckpt_manifest_info *in = &out->info;
	get_fixed(&d, in->sandbox_id, sizeof in->sandbox_id);
	get_fixed(&d, in->rootfs_generation, sizeof in->rootfs_generation);
	in->runtime_generation = s0__de_i64(&d);
	in->created_at_ms = s0__de_i64(&d);
	get_fp(&d, &in->fingerprint);
	in->chunk_bytes = s0__de_u32(&d);
	uint32_t c = in->chunk_bytes;
	if (c < S0__HEAP_CHUNK_MIN || c > S0__HEAP_CHUNK_MAX || (c & (c - 1)))
		s0__de_fail(&d);
	in->logical_bytes = s0__de_u64(&d);
	in->sockets_dropped = s0__de_u64(&d);
	if (!d.bad)
		get_blob(&d, &out->state, c, &oom);
	if (!d.bad && !oom)
		get_blob(&d, &out->tmpfs, c, &oom);
	if (!d.bad && !oom)
		get_blob(&d, &out->sessions, c, &oom);
	if (!d.bad && !oom)
		get_heaps(&d, out, &oom);
	if (!out->state.present)
		s0__de_fail(&d);
	int rc = oom ? s0__error_nomem(err) : s0__de_done(&d, true, "memory image manifest", err);
	if (rc < 0)
		s0__manifest_clear(out);
	return rc;
}

void s0__manifest_clear(s0__manifest *m)
{
	free(m->state.ids);
	free(m->tmpfs.ids);
	free(m->sessions.ids);
	for (size_t i = 0; i < m->nheaps; i++) {
		free(m->heaps[i].ids);
		free(m->heaps[i].pages);
	}
	free(m->heaps);
	memset(m, 0, sizeof *m);
}

int s0__mf_read_page(s0__ckpt *c, s0__objctx *cx, const s0__objid *page, s0__objid *ids,
                     size_t n, s0_error **err)
{
	size_t got = 0;
	int rc = s0__objstore_get(c->os, cx, page, ids, n * sizeof *ids, &got, err);
	if (rc == S0_OK && got != n * sizeof *ids)
		rc = s0__error_set(err, S0_ECORRUPT, "corrupt",
		                   "chunk table page of %zu bytes, expected %zu", got, n * sizeof *ids);
	return rc;
}

int s0__manifest_load(s0__ckpt *c, const s0__objid *image, s0__manifest *out, s0_error **err)
{
	s0__objctx *cx;
	int rc = s0__ckpt_ctx_get(c, &cx, err);
	if (rc < 0)
		return rc;
	void *data = NULL;
	size_t len = 0;
	rc = s0__objstore_get_alloc(c->os, cx, image, &data, &len, err);
	s0__ckpt_ctx_put(c, cx);
	if (rc == S0_OK)
		rc = s0__manifest_decode(data, len, out, err);
	free(data);
	return rc;
}
