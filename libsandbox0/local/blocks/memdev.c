/* In-memory sparse block device for tests: 64 KiB pages allocated on first
 * write, in a two-level table (untouched pages read as zeros). */
#include "local/blocks/blockdev.h"

#include <stdlib.h>
#include <string.h>

#define PAGE_BITS 16
#define PAGE ((uint64_t)1 << PAGE_BITS)
#define DIR_BITS 10
#define DIR_N ((uint64_t)1 << DIR_BITS)

typedef struct memdev {
	uint64_t size;
	uint64_t ndirs;
	uint8_t ***dirs; /* dirs[d][p] -> page */
} memdev;

static uint8_t **page_slot(memdev *m, uint64_t page, bool create)
{
	uint64_t d = page >> DIR_BITS;
	if (!m->dirs[d]) {
		if (!create)
			return NULL;
		m->dirs[d] = calloc(DIR_N, sizeof **m->dirs);
		if (!m->dirs[d])
			return NULL;
	}
	return &m->dirs[d][page & (DIR_N - 1)];
}

static int check(const memdev *m, uint64_t off, size_t len, s0_error **err)
{
	if (off > m->size || len > m->size - off)
		return s0__error_set(err, S0_EINVAL, "out_of_range",
		                     "range of %zu bytes at %llu is outside the %llu-byte device", len,
		                     (unsigned long long)off, (unsigned long long)m->size);
	return S0_OK;
}

static int md_read(void *ctx, uint64_t off, void *buf, size_t len, s0_error **err)
{
	memdev *m = ctx;
	int rc = check(m, off, len, err);
	uint8_t *dst = buf;
	while (rc == S0_OK && len) {
		uint64_t in = off & (PAGE - 1);
		size_t n = PAGE - in < len ? (size_t)(PAGE - in) : len;
		uint8_t **slot = page_slot(m, off >> PAGE_BITS, false);
		if (slot && *slot)
			memcpy(dst, *slot + in, n);
		else
			memset(dst, 0, n);
		off += n;
		dst += n;
		len -= n;
	}
	return rc;
}

static int md_write(void *ctx, uint64_t off, const void *buf, size_t len, s0_error **err)
{
	memdev *m = ctx;
	int rc = check(m, off, len, err);
	const uint8_t *src = buf;
	while (rc == S0_OK && len) {
		uint64_t in = off & (PAGE - 1);
		size_t n = PAGE - in < len ? (size_t)(PAGE - in) : len;
		uint8_t **slot = page_slot(m, off >> PAGE_BITS, true);
		if (slot && !*slot)
			*slot = calloc(1, PAGE);
		if (!slot || !*slot)
			return s0__error_nomem(err);
		memcpy(*slot + in, src, n);
		off += n;
		src += n;
		len -= n;
	}
	return rc;
}

static int md_flush(void *ctx, s0_error **err)
{
	return S0_OK;
}

static uint64_t md_size(void *ctx)
{
	return ((memdev *)ctx)->size;
}

static const s0__blockdev_ops memdev_ops = {md_read, md_write, md_flush, md_size};

int s0__memdev_new(uint64_t size_bytes, s0__blockdev *out, s0_error **err)
{
	memdev *m = calloc(1, sizeof *m);
	if (!m)
		return s0__error_nomem(err);
	m->size = size_bytes;
	m->ndirs = ((size_bytes + PAGE - 1) >> PAGE_BITS) / DIR_N + 1;
	m->dirs = calloc(m->ndirs, sizeof *m->dirs);
	if (!m->dirs) {
		free(m);
		return s0__error_nomem(err);
	}
	out->ops = &memdev_ops;
	out->ctx = m;
	return S0_OK;
}

void s0__memdev_free(s0__blockdev *d)
{
	if (!d || !d->ctx)
		return;
	memdev *m = d->ctx;
	for (uint64_t i = 0; i < m->ndirs; i++) {
		if (!m->dirs[i])
			continue;
		for (uint64_t p = 0; p < DIR_N; p++)
			free(m->dirs[i][p]);
		free(m->dirs[i]);
	}
	free(m->dirs);
	free(m);
	d->ctx = NULL;
}
