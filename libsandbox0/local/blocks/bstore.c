/* Block store: open/close, pins and in-flight publications, attach. */
#include "local/blocks/bstore_impl.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_CACHE ((uint64_t)64 << 20)
#define DEFAULT_PAGE_CACHE ((uint64_t)16 << 20)

static bool pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

int s0__bstore_open(s0__objstore *os, const s0__bstore_options *opts, s0__bstore **out,
                    s0_error **err)
{
	s0__bstore_options o = {0};
	if (opts)
		o = *opts;
	if (!o.chunk_bytes)
		o.chunk_bytes = S0__BSTORE_CHUNK_DEFAULT;
	if (!pow2(o.chunk_bytes) || o.chunk_bytes < S0__BSTORE_CHUNK_MIN ||
	    o.chunk_bytes > S0__BSTORE_CHUNK_MAX)
		return s0__error_set(err, S0_EINVAL, "bad_chunk_size",
		                     "chunk size %u is not a power of two in [%u, %u]", o.chunk_bytes,
		                     S0__BSTORE_CHUNK_MIN, S0__BSTORE_CHUNK_MAX);
	if (!o.threads) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		o.threads = n < 1 ? 1 : n > 8 ? 8 : (uint32_t)n;
	}
	const char *tmp = getenv("TMPDIR");
	const char *scratch = o.scratch_dir ? o.scratch_dir : tmp && *tmp ? tmp : "/tmp";
	s0__bstore *bs = calloc(1, sizeof *bs);
	if (!bs)
		return s0__error_nomem(err);
	bs->os = os;
	bs->chunk_bytes = o.chunk_bytes;
	bs->threads = o.threads;
	bs->roots = o.roots;
	bs->roots_payload = o.roots_payload;
	bs->scratch = s0__strdup(scratch);
	bs->chunks = s0__cache_new(o.cache_bytes ? o.cache_bytes : DEFAULT_CACHE);
	bs->pages = s0__cache_new(o.page_cache_bytes ? o.page_cache_bytes : DEFAULT_PAGE_CACHE);
	pthread_mutex_init(&bs->ctx_mu, NULL);
	pthread_mutex_init(&bs->pin_mu, NULL);
	pthread_mutex_init(&bs->gc_mu, NULL);
	if (!bs->scratch || !bs->chunks || !bs->pages) {
		s0__bstore_close(bs);
		return s0__error_nomem(err);
	}
	*out = bs;
	return S0_OK;
}

void s0__bstore_close(s0__bstore *bs)
{
	if (!bs)
		return;
	for (size_t i = 0; i < bs->n_ctx_free; i++)
		s0__objctx_free(bs->ctx_free[i]);
	free(bs->ctx_free);
	s0__cache_free(bs->chunks);
	s0__cache_free(bs->pages);
	s0__idmap_free(&bs->pins);
	s0__idmap_free(&bs->gc_keep);
	pthread_mutex_destroy(&bs->ctx_mu);
	pthread_mutex_destroy(&bs->pin_mu);
	pthread_mutex_destroy(&bs->gc_mu);
	free(bs->scratch);
	free(bs);
}

s0__objstore *s0__bstore_objects(s0__bstore *bs)
{
	return bs->os;
}

int s0__bstore_pin(s0__bstore *bs, const s0__genid *gen, s0_error **err)
{
	uint64_t n = 0;
	pthread_mutex_lock(&bs->pin_mu);
	s0__idmap_get(&bs->pins, gen, &n);
	int rc = s0__idmap_put(&bs->pins, gen, n + 1, NULL);
	pthread_mutex_unlock(&bs->pin_mu);
	return rc < 0 ? s0__error_nomem(err) : S0_OK;
}

int s0__bstore_ref(s0__bstore *bs, const s0__genid *gen, s0_error **err)
{
	s0__gen_info g;
	int rc = s0__gen_load(bs, gen, &g, err);
	if (rc < 0)
		return rc;
	return s0__bstore_pin(bs, gen, err);
}

void s0__bstore_unref(s0__bstore *bs, const s0__genid *gen)
{
	uint64_t n = 0;
	pthread_mutex_lock(&bs->pin_mu);
	if (s0__idmap_get(&bs->pins, gen, &n)) {
		if (n > 1)
			s0__idmap_put(&bs->pins, gen, n - 1, NULL);
		else
			s0__idmap_del(&bs->pins, gen);
	}
	pthread_mutex_unlock(&bs->pin_mu);
}

s0__pubrec *s0__bstore_pub_begin(s0__bstore *bs, s0_error **err)
{
	s0__pubrec *p = calloc(1, sizeof *p);
	if (!p) {
		s0__error_nomem(err);
		return NULL;
	}
	pthread_mutex_lock(&bs->pin_mu);
	p->next = bs->inflight;
	if (bs->inflight)
		bs->inflight->prev = p;
	bs->inflight = p;
	pthread_mutex_unlock(&bs->pin_mu);
	return p;
}

int s0__bstore_pub_touch(s0__bstore *bs, s0__pubrec *pub, const s0__objid *id, s0_error **err)
{
	pthread_mutex_lock(&bs->pin_mu);
	int rc = s0__idmap_put(&pub->touched, id, 0, NULL);
	pthread_mutex_unlock(&bs->pin_mu);
	return rc < 0 ? s0__error_nomem(err) : S0_OK;
}

/* Under pin_mu: keep pub's ids safe from the GC that is running. */
static int keep_for_gc(s0__bstore *bs, const s0__pubrec *pub)
{
	size_t pos = 0;
	const s0__idmap_slot *s;
	while ((s = s0__idmap_next(&pub->touched, &pos)))
		if (s0__idmap_put(&bs->gc_keep, &s->id, 0, NULL) < 0)
			return -1;
	return 0;
}

int s0__bstore_pub_end(s0__bstore *bs, s0__pubrec *pub, const s0__genid *gen, s0_error **err)
{
	int rc = S0_OK;
	uint64_t n = 0;
	pthread_mutex_lock(&bs->pin_mu);
	if (gen) {
		s0__idmap_get(&bs->pins, gen, &n);
		if (s0__idmap_put(&bs->pins, gen, n + 1, NULL) < 0 ||
		    (bs->gc_active && keep_for_gc(bs, pub) < 0))
			rc = S0_ENOMEM;
	}
	if (rc == S0_OK) {
		if (pub->prev)
			pub->prev->next = pub->next;
		else
			bs->inflight = pub->next;
		if (pub->next)
			pub->next->prev = pub->prev;
	}
	pthread_mutex_unlock(&bs->pin_mu);
	if (rc < 0)
		return s0__error_nomem(err); /* pub stays registered: its ids stay safe */
	s0__idmap_free(&pub->touched);
	free(pub);
	return S0_OK;
}

int s0__bstore_gen_info(s0__bstore *bs, const s0__genid *gen, s0__gen_info *out,
                        s0_error **err)
{
	return s0__gen_load(bs, gen, out, err);
}

int s0__bstore_attach(s0__bstore *bs, const s0__genid *gen, s0__branch **out, s0_error **err)
{
	s0__gen_info g;
	int rc = s0__gen_load(bs, gen, &g, err);
	if (rc < 0)
		return rc;
	if ((rc = s0__bstore_pin(bs, gen, err)) < 0)
		return rc;
	rc = s0__branch_new(bs, gen, &g, out, err);
	if (rc < 0)
		s0__bstore_unref(bs, gen);
	return rc;
}

void s0__bstore_counters_get(s0__bstore *bs, s0__bstore_counters *out)
{
	uint64_t *f = (uint64_t *)out;
	_Static_assert(sizeof *out == S0__BC_COUNT * sizeof(uint64_t), "counter layout");
	for (int i = 0; i < S0__BC_COUNT; i++)
		f[i] = atomic_load(&bs->c[i]);
}

void s0__bstore_drop_caches(s0__bstore *bs)
{
	s0__cache_clear(bs->chunks);
	s0__cache_clear(bs->pages);
}
