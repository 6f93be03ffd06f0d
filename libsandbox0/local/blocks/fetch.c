/* Block store reads of objects: codec context pool and cached fetches. */
#include "local/blocks/bstore_impl.h"

#include <stdlib.h>

int s0__bstore_ctx_get(s0__bstore *bs, s0__objctx **out, s0_error **err)
{
	pthread_mutex_lock(&bs->ctx_mu);
	if (bs->n_ctx_free) {
		*out = bs->ctx_free[--bs->n_ctx_free];
		pthread_mutex_unlock(&bs->ctx_mu);
		return S0_OK;
	}
	pthread_mutex_unlock(&bs->ctx_mu);
	return s0__objstore_ctx_new(bs->os, out, err);
}

void s0__bstore_ctx_put(s0__bstore *bs, s0__objctx *cx)
{
	pthread_mutex_lock(&bs->ctx_mu);
	if (bs->n_ctx_free == bs->cap_ctx_free) {
		size_t cap = bs->cap_ctx_free ? bs->cap_ctx_free * 2 : 4;
		s0__objctx **v = cap <= 64 ? realloc(bs->ctx_free, cap * sizeof *v) : NULL;
		if (!v) {
			pthread_mutex_unlock(&bs->ctx_mu);
			s0__objctx_free(cx);
			return;
		}
		bs->ctx_free = v;
		bs->cap_ctx_free = cap;
	}
	bs->ctx_free[bs->n_ctx_free++] = cx;
	pthread_mutex_unlock(&bs->ctx_mu);
}

static int wrong_size(s0_error **err, const s0__objid *id, const char *what, size_t want)
{
	char hex[S0__OBJID_HEX_BYTES];
	s0__objid_hex(id, hex);
	if (want == S0__GEN_BYTES) /* a valid object, but not a generation */
		return s0__error_set(err, S0_ENOTFOUND, "generation_not_found",
		                     "object %s is not a generation", hex);
	return s0__error_set(err, S0_ECORRUPT, "object_corrupt",
	                     "object %s is not a %s (expected %zu bytes)", hex, what, want);
}

/* Fetch id (exactly size bytes) from the object store into the cache. */
static int fetch(s0__bstore *bs, s0__cache *cache, const s0__objid *id, size_t size,
                 const char *what, s0__centry **out, s0_error **err)
{
	s0__objctx *cx;
	int rc = s0__bstore_ctx_get(bs, &cx, err);
	if (rc < 0)
		return rc;
	void *buf = malloc(size);
	size_t n = 0;
	s0_error *e = NULL;
	if (!buf)
		rc = s0__error_nomem(err);
	else
		rc = s0__objstore_get(bs->os, cx, id, buf, size, &n, &e);
	s0__bstore_ctx_put(bs, cx);
	if (rc == S0_EINVAL || (rc == S0_OK && n != size)) {
		s0_error_free(e);
		free(buf);
		return wrong_size(err, id, what, size);
	}
	if (rc < 0) {
		free(buf);
		return e ? s0__error_put(err, e) : rc;
	}
	s0__centry *ce = s0__cache_put(cache, id, buf, size);
	if (!ce)
		return s0__error_nomem(err);
	*out = ce;
	return S0_OK;
}

int s0__bstore_chunk_get(s0__bstore *bs, s0__branch *br, const s0__objid *id,
                         uint32_t chunk_bytes, s0__centry **out, s0_error **err)
{
	s0__centry *e = s0__cache_get(bs->chunks, id);
	if (e && s0__centry_size(e) != chunk_bytes) {
		s0__cache_release(bs->chunks, e);
		return wrong_size(err, id, "chunk", chunk_bytes);
	}
	if (e) {
		atomic_fetch_add(&bs->c[S0__BC_CACHE_HITS], 1);
		if (br)
			atomic_fetch_add(&br->c[S0__BR_CACHE_HITS], 1);
		*out = e;
		return S0_OK;
	}
	int rc = fetch(bs, bs->chunks, id, chunk_bytes, "chunk", out, err);
	if (rc < 0)
		return rc;
	atomic_fetch_add(&bs->c[S0__BC_CHUNKS_FETCHED], 1);
	atomic_fetch_add(&bs->c[S0__BC_CHUNK_BYTES_FETCHED], chunk_bytes);
	if (br) {
		atomic_fetch_add(&br->c[S0__BR_FETCHED], 1);
		atomic_fetch_add(&br->c[S0__BR_BYTES_FETCHED], chunk_bytes);
	}
	return S0_OK;
}

int s0__bstore_page_get(s0__bstore *bs, const s0__objid *id, size_t size, s0__centry **out,
                        s0_error **err)
{
	s0__centry *e = s0__cache_get(bs->pages, id);
	if (e && s0__centry_size(e) != size) {
		s0__cache_release(bs->pages, e);
		return wrong_size(err, id, "map page", size);
	}
	if (e) {
		atomic_fetch_add(&bs->c[S0__BC_PAGE_CACHE_HITS], 1);
		*out = e;
		return S0_OK;
	}
	int rc = fetch(bs, bs->pages, id, size, size == S0__MAP_PAGE_BYTES ? "map page" : "descriptor",
	               out, err);
	if (rc == S0_OK)
		atomic_fetch_add(&bs->c[S0__BC_PAGES_FETCHED], 1);
	return rc;
}
