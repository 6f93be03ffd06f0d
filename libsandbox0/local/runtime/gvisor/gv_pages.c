/*
 * pages.img cut by content into the chunks of an image's memory region
 * (gv_pages.h).
 */
#include "local/runtime/gvisor/gv_pages.h"

#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PAGE 4096u
/* A piece is between half a chunk and a whole one; a page ends it when
 * these bits of its hash are clear: 1 page in 64 up to 7/8 of a chunk, 1 in
 * 8 after (pieces fill 81 % of their chunks on the bench's pages.img, and
 * the wide window finds ends in content that repeats with the chunk's
 * period, where a narrow one cut at fixed lengths and never resynchronised:
 * docs/memory-gvisor.md "Recapture"). */
#define MASK_EARLY 63u
#define MASK_LATE 7u

/* A page's hash from 3 samples of 64 bytes (start, middle, end): a
 * deterministic function of its content, cheap enough for every page. */
static uint64_t page_hash(const uint8_t *p)
{
	static const unsigned char key[crypto_shorthash_KEYBYTES];
	uint8_t s[192];
	memcpy(s, p, 64);
	memcpy(s + 64, p + PAGE / 2, 64);
	memcpy(s + 128, p + PAGE - 64, 64);
	unsigned char h[crypto_shorthash_BYTES];
	crypto_shorthash(h, s, sizeof s, key);
	uint64_t v;
	memcpy(&v, h, sizeof v);
	return v;
}

int s0__gv_pages_cut(const uint8_t *data, uint64_t len, uint32_t chunk_bytes, uint32_t **lens,
                     size_t *n, s0_error **err)
{
	*lens = NULL;
	*n = 0;
	if (chunk_bytes < 16 * PAGE || (chunk_bytes & (chunk_bytes - 1)))
		return s0__error_set(err, S0_EINVAL, "invalid_request",
		                     "pages.img chunks of %u bytes: not a power of two >= 64 KiB",
		                     chunk_bytes);
	uint64_t pages = len / PAGE, max = chunk_bytes / PAGE, min = max / 2, late = max - max / 8;
	size_t cap = (size_t)(len / ((uint64_t)min * PAGE)) + 2;
	uint32_t *v = malloc(cap * sizeof *v);
	if (!v)
		return s0__error_nomem(err);
	uint64_t start = 0; /* first page of the piece being cut */
	while (start < pages) {
		uint64_t end = start + max < pages ? start + max : pages;
		for (uint64_t k = start + min - 1; k < end; k++) {
			uint64_t mask = k - start < late ? MASK_EARLY : MASK_LATE;
			if ((page_hash(data + k * PAGE) & mask) == 0) {
				end = k + 1;
				break;
			}
		}
		v[(*n)++] = (uint32_t)((end - start) * PAGE);
		start = end;
	}
	uint64_t tail = len % PAGE; /* a partial last page joins the last piece, or is one */
	if (tail && *n && v[*n - 1] + tail <= chunk_bytes)
		v[*n - 1] += (uint32_t)tail;
	else if (tail)
		v[(*n)++] = (uint32_t)tail;
	if (!*n) {
		free(v);
		v = NULL;
	}
	*lens = v;
	return S0_OK;
}

static void put_u32(s0__buf *out, uint32_t v, int *rc)
{
	uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
	if (*rc == 0 && s0__buf_put(out, b, 4) < 0)
		*rc = -1;
}

static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int s0__gv_pages_layout(const uint32_t *lens, size_t n, uint32_t chunk_bytes, s0__buf *out)
{
	int rc = 0;
	put_u32(out, chunk_bytes, &rc);
	put_u32(out, (uint32_t)n, &rc);
	for (size_t i = 0; i < n; i++)
		put_u32(out, lens[i], &rc);
	return rc;
}

typedef struct mapping {
	void *base;
	size_t bytes;
} mapping;

static void unmap(void *ctx)
{
	mapping *m = ctx;
	munmap(m->base, m->bytes);
	free(m);
}

static bool lens_match(const uint32_t *lens, size_t n, uint64_t len, uint32_t chunk_bytes)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++) {
		if (!lens[i] || lens[i] > chunk_bytes || (i + 1 < n && lens[i] % PAGE))
			return false;
		sum += lens[i];
	}
	return sum == len;
}

int s0__gv_pages_map(int fd, uint64_t len, const uint32_t *lens, size_t n, uint32_t chunk_bytes,
                     s0__heap **out, s0_error **err)
{
	if (!lens_match(lens, n, len, chunk_bytes))
		return s0__error_set(err, S0_EINVAL, "invalid_request",
		                     "pages.img pieces do not add up to its %llu bytes",
		                     (unsigned long long)len);
	mapping *m = calloc(1, sizeof *m);
	if (!m)
		return s0__error_nomem(err);
	m->bytes = n * (size_t)chunk_bytes;
	/* zeros everywhere (the padding), then each piece over its chunk's start */
	m->base = n ? mmap(NULL, m->bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
	                   -1, 0)
	            : NULL;
	int rc = n && m->base == MAP_FAILED ? -1 : 0;
	uint64_t off = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		size_t plen = (lens[i] + PAGE - 1) / PAGE * PAGE;
		void *at = (uint8_t *)m->base + i * (size_t)chunk_bytes;
		if (mmap(at, plen, PROT_READ, MAP_SHARED | MAP_FIXED, fd, (off_t)off) == MAP_FAILED)
			rc = -1;
		off += lens[i];
	}
	if (rc < 0) {
		int e = errno;
		if (m->base && m->base != MAP_FAILED)
			munmap(m->base, m->bytes);
		free(m);
		return s0__error_set(err, S0_EIO, "runtime_unavailable", "cannot map pages.img: %s",
		                     strerror(e));
	}
	return s0__heap_new_mapped(chunk_bytes, m->base, m->bytes, unmap, m, out, err);
}

int s0__gv_pages_copy(const uint8_t *data, const uint32_t *lens, size_t n, uint32_t chunk_bytes,
                      s0__heap **out, s0_error **err)
{
	s0__heap *h = NULL;
	int rc = s0__heap_new(chunk_bytes, &h, err);
	if (rc == S0_OK)
		rc = s0__heap_grow(h, n * (uint64_t)chunk_bytes, 0, err);
	uint64_t off = 0;
	for (size_t i = 0; rc == S0_OK && i < n; i++) {
		rc = s0__heap_write(h, i * (uint64_t)chunk_bytes, data + off, lens[i], err);
		off += lens[i];
	}
	if (rc < 0) {
		s0__heap_unref(h);
		return rc;
	}
	*out = h;
	return S0_OK;
}

int s0__gv_pages_slots(const void *rec, size_t rec_len, uint64_t heap_bytes, uint32_t chunk_bytes,
                       s0__gv_slot **out, size_t *n, uint64_t *file_bytes, s0_error **err)
{
	*out = NULL;
	*n = 0;
	*file_bytes = 0;
	size_t count = chunk_bytes ? (size_t)((heap_bytes + chunk_bytes - 1) / chunk_bytes) : 0;
	const uint8_t *p = rec;
	if (rec && (rec_len < 8 || get_u32(p) != chunk_bytes || get_u32(p + 4) != count ||
	            rec_len != 8 + 4 * (size_t)count || heap_bytes != count * (uint64_t)chunk_bytes))
		return s0__error_set(err, S0_ECORRUPT, "image_corrupt",
		                     "gvisor memory image: the pages layout does not match its region");
	s0__gv_slot *v = malloc((count ? count : 1) * sizeof *v);
	if (!v)
		return s0__error_nomem(err);
	uint64_t off = 0;
	for (size_t i = 0; i < count; i++) {
		uint64_t at = i * (uint64_t)chunk_bytes;
		uint32_t len = rec ? get_u32(p + 8 + 4 * i)
		                   : (uint32_t)(heap_bytes - at < chunk_bytes ? heap_bytes - at
		                                                              : chunk_bytes);
		if (!len || len > chunk_bytes || (rec && i + 1 < count && len % PAGE)) {
			free(v);
			return s0__error_set(err, S0_ECORRUPT, "image_corrupt",
			                     "gvisor memory image: piece %zu of pages.img has a bad length",
			                     i);
		}
		v[i] = (s0__gv_slot){.off = off, .len = len};
		off += len;
	}
	*out = v;
	*n = count;
	*file_bytes = off;
	return S0_OK;
}
