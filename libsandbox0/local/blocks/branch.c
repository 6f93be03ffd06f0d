/* Branches: byte-addressed reads and writes over dirty chunks + base map. */
#include "local/blocks/bstore_impl.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool s0__is_zero(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	while (len && ((uintptr_t)p & 7)) {
		if (*p++)
			return false;
		len--;
	}
	const uint64_t *q = (const uint64_t *)(const void *)p;
	for (; len >= 64; len -= 64, q += 8)
		if (q[0] | q[1] | q[2] | q[3] | q[4] | q[5] | q[6] | q[7])
			return false;
	p = (const uint8_t *)q;
	while (len--)
		if (*p++)
			return false;
	return true;
}

int s0__branch_new(s0__bstore *bs, const s0__genid *id, const s0__gen_info *g,
                   s0__branch **out, s0_error **err)
{
	s0__branch *b = calloc(1, sizeof *b);
	if (!b)
		return s0__error_nomem(err);
	b->bs = bs;
	b->size = g->size_bytes;
	b->cs = g->chunk_bytes;
	b->base_id = *id;
	b->base = *g;
	b->spill_fd = -1;
	pthread_rwlock_init(&b->lock, NULL);
	b->tmp = malloc(g->chunk_bytes);
	int rc = b->tmp ? s0__spill_open(b, err) : s0__error_nomem(err);
	if (rc < 0) {
		free(b->tmp);
		pthread_rwlock_destroy(&b->lock);
		free(b);
		return rc;
	}
	*out = b;
	return S0_OK;
}

void s0__branch_free(s0__branch *b)
{
	if (!b)
		return;
	if (b->spill_fd >= 0)
		close(b->spill_fd);
	s0__u64map_free(&b->dirty);
	free(b->free_slots);
	free(b->tmp);
	s0__bstore_unref(b->bs, &b->base_id);
	pthread_rwlock_destroy(&b->lock);
	free(b);
}

uint64_t s0__branch_size(const s0__branch *b)
{
	return b->size;
}

uint32_t s0__branch_chunk_bytes(const s0__branch *b)
{
	return b->cs;
}

void s0__branch_base(const s0__branch *b, s0__genid *out)
{
	s0__branch *m = (s0__branch *)b;
	pthread_rwlock_rdlock(&m->lock);
	*out = b->base_id;
	pthread_rwlock_unlock(&m->lock);
}

static int check_range(const s0__branch *b, uint64_t off, uint64_t len, s0_error **err)
{
	uint64_t size = b->size;
	if (off > size || len > size - off)
		return s0__error_set(err, S0_EINVAL, "out_of_range",
		                     "range of %llu bytes at %llu is outside the %llu-byte volume",
		                     (unsigned long long)len, (unsigned long long)off,
		                     (unsigned long long)size);
	return S0_OK;
}

/* Copy n bytes at in of the base's chunk idx into dst; *zero (nullable)
 * tells whether the base chunk is all zeros (unwritten). */
static int base_read_z(s0__branch *b, uint64_t idx, uint32_t in, void *dst, size_t n,
                       bool *zero, s0_error **err)
{
	s0__objid id;
	int rc = s0__map_walk(b->bs, &b->base, -1, idx, &id, err);
	if (rc < 0)
		return rc;
	if (zero)
		*zero = s0__objid_is_zero(&id);
	if (s0__objid_is_zero(&id)) {
		memset(dst, 0, n);
		return S0_OK;
	}
	s0__centry *e;
	if ((rc = s0__bstore_chunk_get(b->bs, b, &id, b->cs, &e, err)) < 0)
		return rc;
	memcpy(dst, (const uint8_t *)s0__centry_data(e) + in, n);
	s0__cache_release(b->bs->chunks, e);
	return S0_OK;
}

static int base_read(s0__branch *b, uint64_t idx, uint32_t in, void *dst, size_t n,
                     s0_error **err)
{
	return base_read_z(b, idx, in, dst, n, NULL, err);
}

static int read_chunk(s0__branch *b, uint64_t idx, uint32_t in, void *dst, size_t n,
                      s0_error **err)
{
	uint64_t slot;
	if (!s0__u64map_get(&b->dirty, idx, &slot))
		return base_read(b, idx, in, dst, n, err);
	if (slot == S0__SLOT_ZERO) {
		memset(dst, 0, n);
		return S0_OK;
	}
	return s0__spill_read(b, slot, in, dst, n, err);
}

int s0__branch_read(s0__branch *b, uint64_t off, void *buf, size_t len, s0_error **err)
{
	int rc = check_range(b, off, len, err);
	if (rc < 0 || !len)
		return rc;
	uint32_t cs = b->cs;
	uint8_t *dst = buf;
	pthread_rwlock_rdlock(&b->lock);
	s0__branch_prefetch(b, off / cs, (off + len - 1) / cs - off / cs + 1);
	while (len && rc == S0_OK) {
		uint32_t in = (uint32_t)(off % cs);
		size_t n = cs - in < len ? cs - in : len;
		uint64_t slot;
		if (s0__u64map_get(&b->dirty, off / cs, &slot) && slot != S0__SLOT_ZERO) {
			/* later chunks in the next slots: one read for the run */
			uint64_t k = 1, next;
			while (n < len && s0__u64map_get(&b->dirty, off / cs + k, &next) &&
			       next == slot + k) {
				n += cs < len - n ? cs : len - n;
				k++;
			}
			rc = s0__spill_read(b, slot, in, dst, n, err);
		} else {
			rc = read_chunk(b, off / cs, in, dst, n, err);
		}
		off += n;
		dst += n;
		len -= n;
	}
	pthread_rwlock_unlock(&b->lock);
	return rc;
}

/* Bytes of chunk idx inside the volume (the last chunk may be short). */
static uint32_t valid_bytes(const s0__branch *b, uint64_t idx)
{
	uint64_t start = idx * b->cs, rest = b->size - start;
	return rest < b->cs ? (uint32_t)rest : b->cs;
}

/* Whether the whole-chunk content buf equals the base chunk id. */
static bool same_as_base_buf(s0__branch *b, const s0__objid *id, const uint8_t *buf)
{
	s0__centry *e = s0__cache_get(b->bs->chunks, id);
	if (e) {
		bool same = s0__centry_size(e) == b->cs &&
		            memcmp(s0__centry_data(e), buf, b->cs) == 0;
		s0__cache_release(b->bs->chunks, e);
		return same;
	}
	s0__objid h;
	s0__objstore_hash(b->bs->os, buf, b->cs, &h);
	return s0__objid_eq(&h, id);
}

static bool same_as_base(s0__branch *b, const s0__objid *id)
{
	return same_as_base_buf(b, id, b->tmp);
}

/* A whole chunk of new bytes src (no copy through b->tmp): elided when
 * equal to the base, a zero mark when all zeros, else its slot rewritten. */
static int write_full_chunk(s0__branch *b, uint64_t idx, bool had, uint64_t slot,
                            const uint8_t *src, s0_error **err)
{
	s0__objid base;
	int rc = s0__map_walk(b->bs, &b->base, -1, idx, &base, err);
	if (rc < 0)
		return rc;
	bool zero = s0__is_zero(src, b->cs);
	bool elided = s0__objid_is_zero(&base) ? zero : !zero && same_as_base_buf(b, &base, src);
	if (elided) {
		if (had) {
			if (slot != S0__SLOT_ZERO)
				s0__spill_release(b, slot);
			s0__u64map_del(&b->dirty, idx);
		}
		atomic_fetch_add(&b->c[S0__BR_ELIDED], 1);
		return S0_OK;
	}
	if (zero) {
		if (had && slot != S0__SLOT_ZERO)
			s0__spill_release(b, slot);
		slot = S0__SLOT_ZERO;
	} else {
		if (!had || slot == S0__SLOT_ZERO)
			rc = s0__spill_alloc(b, &slot, err);
		if (rc == S0_OK)
			rc = s0__spill_write(b, slot, 0, src, b->cs, err);
	}
	if (rc == S0_OK && s0__u64map_put(&b->dirty, idx, slot) < 0)
		rc = s0__error_nomem(err);
	return rc;
}

/* Record chunk idx as dirty with the content of b->tmp. */
static int set_dirty(s0__branch *b, uint64_t idx, bool had, uint64_t slot, s0_error **err)
{
	int rc = S0_OK;
	if (s0__is_zero(b->tmp, b->cs)) {
		if (had && slot != S0__SLOT_ZERO)
			s0__spill_release(b, slot);
		slot = S0__SLOT_ZERO;
	} else {
		if (!had || slot == S0__SLOT_ZERO)
			rc = s0__spill_alloc(b, &slot, err);
		if (rc == S0_OK)
			rc = s0__spill_write(b, slot, 0, b->tmp, b->cs, err);
	}
	if (rc == S0_OK && s0__u64map_put(&b->dirty, idx, slot) < 0)
		rc = s0__error_nomem(err);
	return rc;
}

/* The whole new content in b->tmp equals the base chunk: drop idx from the
 * dirty set. Returns whether it did. */
static int elide_if_base(s0__branch *b, uint64_t idx, bool had, uint64_t slot, bool *elided,
                         s0_error **err)
{
	s0__objid base;
	int rc = s0__map_walk(b->bs, &b->base, -1, idx, &base, err);
	if (rc < 0)
		return rc;
	bool zero = s0__is_zero(b->tmp, b->cs);
	*elided = s0__objid_is_zero(&base) ? zero : !zero && same_as_base(b, &base);
	if (*elided && had) {
		if (slot != S0__SLOT_ZERO)
			s0__spill_release(b, slot);
		s0__u64map_del(&b->dirty, idx);
	}
	return S0_OK;
}

/* Zero all of chunk idx: a zero mark, or nothing when the base is zero. */
static int zero_chunk(s0__branch *b, uint64_t idx, bool had, uint64_t slot, s0_error **err)
{
	s0__objid base;
	int rc = s0__map_walk(b->bs, &b->base, -1, idx, &base, err);
	if (rc < 0)
		return rc;
	if (had && slot != S0__SLOT_ZERO)
		s0__spill_release(b, slot);
	if (s0__objid_is_zero(&base)) {
		if (had)
			s0__u64map_del(&b->dirty, idx);
		else
			atomic_fetch_add(&b->c[S0__BR_ELIDED], 1);
		return S0_OK;
	}
	return s0__u64map_put(&b->dirty, idx, S0__SLOT_ZERO) < 0 ? s0__error_nomem(err) : S0_OK;
}

/* Write n bytes at in of chunk idx (src NULL: zeros). Under the write lock. */
static int write_chunk(s0__branch *b, uint64_t idx, uint32_t in, const uint8_t *src, size_t n,
                       s0_error **err)
{
	uint32_t cs = b->cs;
	uint64_t slot = 0;
	bool had = s0__u64map_get(&b->dirty, idx, &slot);
	bool full = in == 0 && n >= valid_bytes(b, idx);
	int rc = S0_OK;
	if (full && !src)
		return zero_chunk(b, idx, had, slot, err);
	if (full && n == cs)
		return write_full_chunk(b, idx, had, slot, src, err);
	if (had && slot != S0__SLOT_ZERO && !full) {
		if (!src)
			memset(b->tmp, 0, n);
		return s0__spill_write(b, slot, in, src ? src : b->tmp, n, err);
	}
	/* The chunk's current content into tmp (nothing to load when full). */
	bool base_zero = false;
	if (full || had)
		memset(b->tmp, 0, cs);
	else if ((rc = base_read_z(b, idx, 0, b->tmp, cs, &base_zero, err)) < 0)
		return rc;
	if (!full && (src ? !memcmp(b->tmp + in, src, n) : s0__is_zero(b->tmp + in, n))) {
		atomic_fetch_add(&b->c[S0__BR_ELIDED], 1);
		return S0_OK;
	}
	if (!full && !had && base_zero && src) {
		/* First write into a chunk of zeros: only the written bytes go to
		 * a fresh slot, whose other bytes read as zeros (no 64 KiB copy
		 * for a 4 KiB write). */
		uint64_t slot_new;
		s0__spill_alloc_fresh(b, &slot_new);
		rc = s0__spill_write(b, slot_new, in, src, n, err);
		if (rc == S0_OK && s0__u64map_put(&b->dirty, idx, slot_new) < 0)
			rc = s0__error_nomem(err);
		if (rc < 0)
			s0__spill_release(b, slot_new);
		return rc;
	}
	if (src)
		memcpy(b->tmp + in, src, n);
	else
		memset(b->tmp + in, 0, n);
	if (full) {
		bool elided = false;
		if ((rc = elide_if_base(b, idx, had, slot, &elided, err)) < 0)
			return rc;
		if (elided) {
			atomic_fetch_add(&b->c[S0__BR_ELIDED], 1);
			return S0_OK;
		}
	}
	return set_dirty(b, idx, had, slot, err);
}

static int write_range(s0__branch *b, uint64_t off, const void *buf, uint64_t len,
                       s0_error **err)
{
	int rc = check_range(b, off, len, err);
	if (rc < 0 || !len)
		return rc;
	uint32_t cs = b->cs;
	const uint8_t *src = buf;
	pthread_rwlock_wrlock(&b->lock);
	if (b->sealed)
		rc = s0__error_set(err, S0_ECONFLICT, "branch_sealed",
		                   "the branch is sealed; writes are fenced");
	while (len && rc == S0_OK) {
		uint32_t in = (uint32_t)(off % cs);
		size_t n = cs - in < len ? cs - in : (size_t)len;
		rc = write_chunk(b, off / cs, in, src, n, err);
		off += n;
		len -= n;
		if (src)
			src += n;
	}
	pthread_rwlock_unlock(&b->lock);
	return rc;
}

int s0__branch_write(s0__branch *b, uint64_t off, const void *buf, size_t len, s0_error **err)
{
	if (!buf && len)
		return s0__error_set(err, S0_EINVAL, NULL, "NULL buffer");
	return write_range(b, off, len ? buf : "", len, err);
}

int s0__branch_zero(s0__branch *b, uint64_t off, uint64_t len, s0_error **err)
{
	return write_range(b, off, NULL, len, err);
}

int s0__branch_seal(s0__branch *b, s0_error **err)
{
	pthread_rwlock_wrlock(&b->lock);
	b->sealed = true;
	pthread_rwlock_unlock(&b->lock);
	return S0_OK;
}

bool s0__branch_sealed(s0__branch *b)
{
	pthread_rwlock_rdlock(&b->lock);
	bool s = b->sealed;
	pthread_rwlock_unlock(&b->lock);
	return s;
}

/* Copy b's dirty chunks into child. Under b's read lock. */
static int copy_dirty(s0__branch *b, s0__branch *child, s0_error **err)
{
	size_t pos = 0;
	uint64_t idx, slot;
	int rc = S0_OK;
	if (s0__u64map_copy(&child->dirty, &b->dirty) < 0)
		return s0__error_nomem(err);
	while (rc == S0_OK && s0__u64map_next(&b->dirty, &pos, &idx, &slot)) {
		if (slot == S0__SLOT_ZERO)
			continue;
		uint64_t cslot;
		if ((rc = s0__spill_alloc(child, &cslot, err)) < 0 ||
		    (rc = s0__spill_read(b, slot, 0, child->tmp, b->cs, err)) < 0 ||
		    (rc = s0__spill_write(child, cslot, 0, child->tmp, b->cs, err)) < 0)
			break;
		if (s0__u64map_put(&child->dirty, idx, cslot) < 0)
			rc = s0__error_nomem(err);
	}
	return rc;
}

int s0__branch_fork(s0__branch *b, s0__branch **out, s0_error **err)
{
	s0__branch *child = NULL;
	pthread_rwlock_rdlock(&b->lock);
	int rc = s0__bstore_pin(b->bs, &b->base_id, err);
	if (rc == S0_OK) {
		rc = s0__branch_new(b->bs, &b->base_id, &b->base, &child, err);
		if (rc < 0)
			s0__bstore_unref(b->bs, &b->base_id);
	}
	if (rc == S0_OK && (rc = copy_dirty(b, child, err)) < 0) {
		s0__branch_free(child);
		child = NULL;
	}
	pthread_rwlock_unlock(&b->lock);
	if (rc == S0_OK)
		*out = child;
	return rc;
}

void s0__branch_counters_get(s0__branch *b, s0__branch_counters *out)
{
	uint64_t *f = (uint64_t *)out;
	_Static_assert(sizeof *out == S0__BR_COUNT * sizeof(uint64_t), "counter layout");
	for (int i = 0; i < S0__BR_COUNT; i++)
		f[i] = atomic_load(&b->c[i]);
	pthread_rwlock_rdlock(&b->lock);
	out->dirty_chunks = b->dirty.count;
	pthread_rwlock_unlock(&b->lock);
}
