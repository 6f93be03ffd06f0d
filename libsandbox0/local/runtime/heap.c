/*
 * Chunked process heaps with zero, resident, lazy and damaged chunks,
 * dirty bits and a shared pager (heap.h).
 */
#include "local/runtime/heap.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct s0__pager {
	s0__pager_fetch_fn fetch;
	s0__pager_ids_fn fetch_ids;
	void (*destroy)(void *ctx);
	void *ctx;
	atomic_int refs;
};

typedef struct slot {
	uint8_t *data; /* resident bytes (chunk bytes) or NULL */
	s0__objid id;
	uint8_t state;
	bool dirty;
	bool unresolved; /* LAZY with its id still in an unread table page */
} slot;

struct s0__heap {
	atomic_int refs;
	pthread_mutex_t mu;
	uint32_t chunk;
	uint64_t size;
	slot *slots;
	size_t n, cap;
	s0__pager *pager;
	s0__objid *pages;   /* chunk-table pages of a restored heap */
	size_t npages, paged; /* paged: chunks the pages cover */
	uint64_t fetched, prefetched;
	uint64_t zero_hash;
	bool have_zero_hash;
	void (*unmap)(void *ctx); /* a mapped heap (s0__heap_new_mapped): releases its bytes */
	void *unmap_ctx;
	bool mapped;              /* chunk bytes are the caller's: never freed, never written */
};

/* ---- pager ---- */

int s0__pager_new(s0__pager_fetch_fn fetch, s0__pager_ids_fn fetch_ids,
                  void (*destroy)(void *ctx), void *ctx, s0__pager **out, s0_error **err)
{
	s0__pager *p = calloc(1, sizeof *p);
	if (!p) {
		if (destroy)
			destroy(ctx);
		return s0__error_nomem(err);
	}
	p->fetch = fetch;
	p->fetch_ids = fetch_ids;
	p->destroy = destroy;
	p->ctx = ctx;
	atomic_init(&p->refs, 1);
	*out = p;
	return S0_OK;
}

s0__pager *s0__pager_ref(s0__pager *p)
{
	if (p)
		atomic_fetch_add(&p->refs, 1);
	return p;
}

void s0__pager_unref(s0__pager *p)
{
	if (!p || atomic_fetch_sub(&p->refs, 1) != 1)
		return;
	if (p->destroy)
		p->destroy(p->ctx);
	free(p);
}

int s0__pager_fetch(s0__pager *p, const s0__objid *id, void *buf, size_t len, s0_error **err)
{
	return p->fetch(p->ctx, id, buf, len, err);
}

int s0__pager_fetch_ids(s0__pager *p, const s0__objid *page, s0__objid *ids, size_t n,
                        s0_error **err)
{
	return p->fetch_ids(p->ctx, page, ids, n, err);
}

/* ---- life cycle ---- */

static bool chunk_ok(uint32_t c)
{
	return c >= S0__HEAP_CHUNK_MIN && c <= S0__HEAP_CHUNK_MAX && !(c & (c - 1));
}

static size_t chunks_for(uint64_t size, uint32_t chunk)
{
	return (size_t)((size + chunk - 1) / chunk);
}

int s0__heap_new(uint32_t chunk_bytes, s0__heap **out, s0_error **err)
{
	if (!chunk_ok(chunk_bytes))
		return s0__error_set(err, S0_EINVAL, "invalid_request",
		                     "heap chunk size %u is not a power of two in 4 KiB..16 MiB",
		                     chunk_bytes);
	s0__heap *h = calloc(1, sizeof *h);
	if (!h)
		return s0__error_nomem(err);
	atomic_init(&h->refs, 1);
	pthread_mutex_init(&h->mu, NULL);
	h->chunk = chunk_bytes;
	*out = h;
	return S0_OK;
}

static int reserve_slots(s0__heap *h, size_t n)
{
	if (n <= h->cap)
		return 0;
	size_t cap = h->cap ? h->cap : 16;
	while (cap < n)
		cap *= 2;
	slot *s = realloc(h->slots, cap * sizeof *s);
	if (!s)
		return -1;
	memset(s + h->cap, 0, (cap - h->cap) * sizeof *s);
	h->slots = s;
	h->cap = cap;
	return 0;
}

int s0__heap_new_lazy(uint32_t chunk_bytes, uint64_t size_bytes, const s0__objid *pages,
                      size_t npages, s0__pager *pager, s0__heap **out, s0_error **err)
{
	if (size_bytes > S0__HEAP_MAX_BYTES)
		return s0__error_set(err, S0_EINVAL, "invalid_request", "heap too large");
	size_t n = chunks_for(size_bytes, chunk_bytes);
	if (npages != (n + S0__HEAP_IDS_PER_PAGE - 1) / S0__HEAP_IDS_PER_PAGE || (n && !pager))
		return s0__error_set(err, S0_EINVAL, "invalid_request",
		                     "lazy heap of %zu chunks with %zu table pages%s", n, npages,
		                     pager ? "" : " and no pager");
	s0__heap *h;
	int rc = s0__heap_new(chunk_bytes, &h, err);
	if (rc < 0)
		return rc;
	if (reserve_slots(h, n) < 0 || !(h->pages = calloc(npages ? npages : 1, sizeof *h->pages))) {
		s0__heap_unref(h);
		return s0__error_nomem(err);
	}
	if (npages) /* an empty heap may come with no table (pages NULL) */
		memcpy(h->pages, pages, npages * sizeof *pages);
	for (size_t i = 0; i < n; i++) {
		h->slots[i].state = S0__CHUNK_LAZY;
		h->slots[i].unresolved = true;
	}
	h->n = h->paged = n;
	h->npages = npages;
	h->size = size_bytes;
	h->pager = s0__pager_ref(pager);
	*out = h;
	return S0_OK;
}

s0__heap *s0__heap_ref(s0__heap *h)
{
	if (h)
		atomic_fetch_add(&h->refs, 1);
	return h;
}

void s0__heap_unref(s0__heap *h)
{
	if (!h || atomic_fetch_sub(&h->refs, 1) != 1)
		return;
	for (size_t i = 0; i < h->n && !h->mapped; i++)
		free(h->slots[i].data);
	if (h->unmap)
		h->unmap(h->unmap_ctx);
	free(h->slots);
	free(h->pages);
	s0__pager_unref(h->pager);
	pthread_mutex_destroy(&h->mu);
	free(h);
}

uint64_t s0__heap_size(const s0__heap *h)
{
	return h->size;
}

uint32_t s0__heap_chunk_bytes(const s0__heap *h)
{
	return h->chunk;
}

size_t s0__heap_nchunks(const s0__heap *h)
{
	s0__heap *m = (s0__heap *)h; /* the mutex guards n against a concurrent grow */
	pthread_mutex_lock(&m->mu);
	size_t n = m->n;
	pthread_mutex_unlock(&m->mu);
	return n;
}

/* ---- the chunk state machine (h->mu held) ---- */

static int damaged_error(const slot *s, size_t i, s0_error **err)
{
	char hex[S0__OBJID_HEX_BYTES];
	s0__objid_hex(&s->id, hex);
	return s0__error_set(err, S0_ECORRUPT, "chunk_damaged",
	                     "heap chunk %zu (object %s) failed to load", i, hex);
}

/* Read the table page of chunk i: every chunk of it gets its id (zero ones
 * become zero chunks). On failure they all become damaged. */
static int resolve(s0__heap *h, size_t i, s0_error **err)
{
	size_t pg = i / S0__HEAP_IDS_PER_PAGE, first = pg * S0__HEAP_IDS_PER_PAGE;
	size_t n = h->paged - first < S0__HEAP_IDS_PER_PAGE ? h->paged - first : S0__HEAP_IDS_PER_PAGE;
	s0__objid *ids = malloc(n * sizeof *ids);
	if (!ids)
		return s0__error_nomem(err);
	s0_error *e = NULL;
	int rc = h->pager->fetch_ids(h->pager->ctx, &h->pages[pg], ids, n, &e);
	for (size_t k = 0; k < n; k++) {
		slot *s = &h->slots[first + k];
		if (!s->unresolved)
			continue;
		s->unresolved = false;
		s->id = rc == S0_OK ? ids[k] : h->pages[pg];
		s->state = rc < 0 ? S0__CHUNK_DAMAGED
		           : s0__objid_is_zero(&ids[k]) ? S0__CHUNK_ZERO : S0__CHUNK_LAZY;
	}
	free(ids);
	if (rc == S0_ENOMEM)
		return s0__error_put(err, e);
	s0_error_free(e);
	return rc < 0 ? damaged_error(&h->slots[i], i, err) : S0_OK;
}

/* Load a lazy chunk; on failure the chunk becomes damaged. */
static int load(s0__heap *h, size_t i, s0_error **err)
{
	slot *s = &h->slots[i];
	uint8_t *buf = malloc(h->chunk);
	if (!buf)
		return s0__error_nomem(err);
	s0_error *e = NULL;
	int rc = h->pager->fetch(h->pager->ctx, &s->id, buf, h->chunk, &e);
	if (rc < 0) {
		free(buf);
		if (rc == S0_ENOMEM)
			return s0__error_put(err, e);
		s->state = S0__CHUNK_DAMAGED;
		s0_error_free(e);
		return damaged_error(s, i, err);
	}
	s->data = buf;
	s->state = S0__CHUNK_RESIDENT;
	return S0_OK;
}

/*
 * The bytes of chunk i for reading: *data NULL means all zero. Lazy chunks
 * are loaded (on-touch accounting).
 */
static int chunk_read(s0__heap *h, size_t i, const uint8_t **data, s0_error **err)
{
	pthread_mutex_lock(&h->mu);
	slot *s = &h->slots[i];
	int rc = s->unresolved ? resolve(h, i, err) : S0_OK;
	if (rc == S0_OK && s->state == S0__CHUNK_LAZY && (rc = load(h, i, err)) == S0_OK)
		h->fetched++;
	else if (rc == S0_OK && s->state == S0__CHUNK_DAMAGED)
		rc = damaged_error(s, i, err);
	*data = rc == S0_OK ? s->data : NULL;
	pthread_mutex_unlock(&h->mu);
	return rc;
}

/* The bytes of chunk i for writing: made resident and dirty. */
static int chunk_write(s0__heap *h, size_t i, uint8_t **data, s0_error **err)
{
	if (h->mapped)
		return s0__error_set(err, S0_EINVAL, "invalid_request", "a mapped heap is read-only");
	pthread_mutex_lock(&h->mu);
	slot *s = &h->slots[i];
	int rc = s->unresolved ? resolve(h, i, err) : S0_OK;
	if (rc < 0) {
		pthread_mutex_unlock(&h->mu);
		return rc;
	}
	if (s->state == S0__CHUNK_LAZY) {
		if ((rc = load(h, i, err)) == S0_OK)
			h->fetched++;
	} else if (s->state == S0__CHUNK_DAMAGED) {
		rc = damaged_error(s, i, err);
	} else if (s->state == S0__CHUNK_ZERO) {
		if (!(s->data = calloc(1, h->chunk)))
			rc = s0__error_nomem(err);
		else
			s->state = S0__CHUNK_RESIDENT;
	}
	if (rc == S0_OK)
		s->dirty = true;
	*data = rc == S0_OK ? s->data : NULL;
	pthread_mutex_unlock(&h->mu);
	return rc;
}

int s0__heap_prefetch(s0__heap *h, size_t chunk, bool *loaded, s0_error **err)
{
	*loaded = false;
	pthread_mutex_lock(&h->mu);
	int rc = chunk < h->n && h->slots[chunk].unresolved ? resolve(h, chunk, err) : S0_OK;
	if (rc == S0_OK && chunk < h->n && h->slots[chunk].state == S0__CHUNK_LAZY) {
		if ((rc = load(h, chunk, err)) == S0_OK) {
			h->prefetched++;
			*loaded = true;
		}
	}
	pthread_mutex_unlock(&h->mu);
	return rc;
}

/* ---- byte access ---- */

/* Apply fn to each chunk piece of [off, off+len). */
typedef int (*piece_fn)(s0__heap *h, size_t chunk, size_t at, size_t n, size_t done, void *arg,
                        s0_error **err);

static int for_pieces(s0__heap *h, uint64_t off, uint64_t len, piece_fn fn, void *arg,
                      s0_error **err)
{
	uint64_t done = 0;
	while (done < len) {
		uint64_t pos = off + done;
		size_t c = (size_t)(pos / h->chunk), at = (size_t)(pos % h->chunk);
		size_t n = h->chunk - at;
		if (n > len - done)
			n = (size_t)(len - done);
		int rc = fn(h, c, at, n, (size_t)done, arg, err);
		if (rc < 0)
			return rc;
		done += n;
	}
	return S0_OK;
}

static int piece_read(s0__heap *h, size_t c, size_t at, size_t n, size_t done, void *arg,
                      s0_error **err)
{
	const uint8_t *d;
	int rc = chunk_read(h, c, &d, err);
	if (rc == S0_OK) {
		if (d)
			memcpy((uint8_t *)arg + done, d + at, n);
		else
			memset((uint8_t *)arg + done, 0, n);
	}
	return rc;
}

static int piece_write(s0__heap *h, size_t c, size_t at, size_t n, size_t done, void *arg,
                       s0_error **err)
{
	uint8_t *d;
	int rc = chunk_write(h, c, &d, err);
	if (rc == S0_OK)
		memcpy(d + at, (const uint8_t *)arg + done, n);
	return rc;
}

/* Heap-like content of a piece: stream seed mixed with the absolute offset. */
static int piece_fill(s0__heap *h, size_t c, size_t at, size_t n, size_t done, void *arg,
                      s0_error **err)
{
	(void)done;
	uint8_t *d;
	int rc = chunk_write(h, c, &d, err);
	if (rc == S0_OK) {
		uint64_t seed = *(uint64_t *)arg ^ (((uint64_t)c * h->chunk + at) * 0x9e3779b97f4a7c15ull);
		s0__heapgen_fill(d + at, n, seed);
	}
	return rc;
}

static int range_check(const s0__heap *h, uint64_t off, uint64_t len, s0_error **err)
{
	if (off > h->size || len > h->size - off)
		return s0__error_set(err, S0_EINVAL, "invalid_request",
		                     "heap range %llu+%llu outside %llu bytes", (unsigned long long)off,
		                     (unsigned long long)len, (unsigned long long)h->size);
	return S0_OK;
}

int s0__heap_read(s0__heap *h, uint64_t off, void *buf, size_t len, s0_error **err)
{
	int rc = range_check(h, off, len, err);
	return rc < 0 ? rc : for_pieces(h, off, len, piece_read, buf, err);
}

int s0__heap_write(s0__heap *h, uint64_t off, const void *buf, size_t len, s0_error **err)
{
	int rc = range_check(h, off, len, err);
	return rc < 0 ? rc : for_pieces(h, off, len, piece_write, (void *)buf, err);
}

int s0__heap_fill(s0__heap *h, uint64_t off, uint64_t len, uint64_t seed, s0_error **err)
{
	if (off > h->size)
		return range_check(h, off, 0, err);
	if (len > h->size - off)
		len = h->size - off;
	return for_pieces(h, off, len, piece_fill, &seed, err);
}

int s0__heap_grow(s0__heap *h, uint64_t n, uint64_t seed, s0_error **err)
{
	if (h->mapped)
		return s0__error_set(err, S0_EINVAL, "invalid_request", "a mapped heap is read-only");
	if (n > S0__HEAP_MAX_BYTES || h->size > S0__HEAP_MAX_BYTES - n)
		return s0__error_set(err, S0_EINVAL, "invalid_request",
		                     "heap would exceed %llu bytes",
		                     (unsigned long long)S0__HEAP_MAX_BYTES);
	size_t want = chunks_for(h->size + n, h->chunk);
	pthread_mutex_lock(&h->mu);
	int r = reserve_slots(h, want);
	pthread_mutex_unlock(&h->mu);
	if (r < 0)
		return s0__error_nomem(err);
	uint64_t old = h->size;
	size_t old_n = h->n;
	pthread_mutex_lock(&h->mu);
	h->n = want; /* new slots are zero chunks (zeroed by reserve_slots) */
	for (size_t i = old_n; i < want; i++)
		h->slots[i].dirty = true;
	pthread_mutex_unlock(&h->mu);
	h->size = old + n;
	int rc = seed ? s0__heap_fill(h, old, n, seed, err) : S0_OK;
	if (rc < 0) {
		pthread_mutex_lock(&h->mu);
		size_t tail = (size_t)(old % h->chunk);
		if (tail && h->slots[old_n - 1].data) /* keep bytes past the size zero */
			memset(h->slots[old_n - 1].data + tail, 0, h->chunk - tail);
		for (size_t i = old_n; i < want; i++) {
			free(h->slots[i].data);
			memset(&h->slots[i], 0, sizeof h->slots[i]);
		}
		h->n = old_n;
		pthread_mutex_unlock(&h->mu);
		h->size = old;
	}
	return rc;
}

/* ---- fingerprint, snapshot, counters ---- */

int s0__heap_hash(s0__heap *h, uint64_t *out, s0_error **err)
{
	uint64_t acc = 0xcbf29ce484222325ull ^ h->size;
	for (size_t i = 0; i < h->n; i++) {
		const uint8_t *d;
		int rc = chunk_read(h, i, &d, err);
		if (rc < 0)
			return rc;
		uint64_t ch;
		if (d) {
			ch = s0__heap_chunk_hash(d, h->chunk);
		} else {
			if (!h->have_zero_hash) {
				uint8_t *z = calloc(1, h->chunk);
				if (!z)
					return s0__error_nomem(err);
				h->zero_hash = s0__heap_chunk_hash(z, h->chunk);
				h->have_zero_hash = true;
				free(z);
			}
			ch = h->zero_hash;
		}
		acc = (acc ^ ch) * 0x100000001b3ull;
		acc ^= acc >> 29;
	}
	*out = acc;
	return S0_OK;
}

int s0__heap_snapshot(s0__heap *h, s0__heap_chunkinfo **out, size_t *n_out, s0_error **err)
{
	pthread_mutex_lock(&h->mu);
	size_t n = h->n;
	int rc = S0_OK;
	for (size_t i = 0; rc == S0_OK && i < n; i += S0__HEAP_IDS_PER_PAGE)
		if (h->slots[i].unresolved)
			rc = resolve(h, i, err);
	s0__heap_chunkinfo *v = rc == S0_OK ? calloc(n ? n : 1, sizeof *v) : NULL;
	if (!v) {
		pthread_mutex_unlock(&h->mu);
		return rc < 0 ? rc : s0__error_nomem(err);
	}
	for (size_t i = 0; i < n; i++) {
		v[i].state = h->slots[i].state;
		v[i].dirty = h->slots[i].dirty;
		v[i].id = h->slots[i].id;
		v[i].data = h->slots[i].data;
	}
	pthread_mutex_unlock(&h->mu);
	*out = v;
	*n_out = n;
	return S0_OK;
}

void s0__heap_commit_ids(s0__heap *h, const s0__objid *ids, size_t n)
{
	pthread_mutex_lock(&h->mu);
	for (size_t i = 0; i < n && i < h->n; i++) {
		h->slots[i].id = ids[i];
		h->slots[i].dirty = false;
	}
	pthread_mutex_unlock(&h->mu);
}

void s0__heap_stats_get(s0__heap *h, s0__heap_stats *out)
{
	memset(out, 0, sizeof *out);
	pthread_mutex_lock(&h->mu);
	out->size_bytes = h->size;
	out->chunks = h->n;
	for (size_t i = 0; i < h->n; i++) {
		switch (h->slots[i].state) {
		case S0__CHUNK_ZERO: out->zero++; break;
		case S0__CHUNK_RESIDENT: out->resident++; break;
		case S0__CHUNK_LAZY: out->lazy++; break;
		default: out->damaged++; break;
		}
		out->dirty += h->slots[i].dirty;
	}
	out->fetched_on_touch = h->fetched;
	out->prefetched = h->prefetched;
	pthread_mutex_unlock(&h->mu);
}

int s0__heap_new_mapped(uint32_t chunk_bytes, const uint8_t *base, uint64_t size_bytes,
                        void (*unmap)(void *ctx), void *ctx, s0__heap **out, s0_error **err)
{
	s0__heap *h = NULL;
	int rc = size_bytes % chunk_bytes || size_bytes > S0__HEAP_MAX_BYTES
	             ? s0__error_set(err, S0_EINVAL, "invalid_request",
	                             "mapped heap of %llu bytes is not whole chunks of %u",
	                             (unsigned long long)size_bytes, chunk_bytes)
	             : s0__heap_new(chunk_bytes, &h, err);
	size_t n = (size_t)(size_bytes / chunk_bytes);
	if (rc == S0_OK && reserve_slots(h, n) < 0)
		rc = s0__error_nomem(err);
	if (rc < 0) {
		s0__heap_unref(h);
		if (unmap)
			unmap(ctx);
		return rc;
	}
	h->mapped = true;
	h->unmap = unmap;
	h->unmap_ctx = ctx;
	h->n = n;
	h->size = size_bytes;
	for (size_t i = 0; i < n; i++)
		h->slots[i] = (slot){.data = (uint8_t *)(uintptr_t)(base + (size_t)i * chunk_bytes),
		                     .state = S0__CHUNK_RESIDENT, .dirty = true};
	*out = h;
	return S0_OK;
}
