/* Sparse in-memory block device with write accounting (see testdev.h). */
#include "testdev.h"

#include <stdlib.h>
#include <string.h>

typedef struct td {
	uint64_t size;
	size_t npages;
	char **pages;     /* NULL: all zero */
	char **orig;      /* content at the mark of chunks dirtied since */
	bool *dirty;
	uint64_t ndirty, calls, bytes;
	int fail;
} td;

static const char zero_page[TD_CHUNK];

static int td_read(void *ctx, uint64_t off, void *buf, size_t len, s0_error **err)
{
	td *t = ctx;
	if (off > t->size || len > t->size - off)
		return s0__error_set(err, S0_EINVAL, "out_of_range", "read past the end");
	char *out = buf;
	while (len) {
		size_t pg = (size_t)(off / TD_CHUNK), po = (size_t)(off % TD_CHUNK);
		size_t n = TD_CHUNK - po < len ? TD_CHUNK - po : len;
		memcpy(out, t->pages[pg] ? t->pages[pg] + po : zero_page, n);
		out += n;
		off += n;
		len -= n;
	}
	return S0_OK;
}

static int touch(td *t, size_t pg)
{
	if (!t->dirty[pg]) {
		t->dirty[pg] = true;
		t->ndirty++;
		if (t->pages[pg]) {
			t->orig[pg] = malloc(TD_CHUNK);
			if (!t->orig[pg])
				return -1;
			memcpy(t->orig[pg], t->pages[pg], TD_CHUNK);
		}
	}
	if (!t->pages[pg] && !(t->pages[pg] = calloc(1, TD_CHUNK)))
		return -1;
	return 0;
}

static int td_write(void *ctx, uint64_t off, const void *buf, size_t len, s0_error **err)
{
	td *t = ctx;
	if (off > t->size || len > t->size - off)
		return s0__error_set(err, S0_EINVAL, "out_of_range", "write past the end");
	if (t->fail > 0) {
		t->fail--;
		return s0__error_set(err, S0_EIO, "io_error", "injected write failure");
	}
	t->calls++;
	t->bytes += len;
	const char *in = buf;
	while (len) {
		size_t pg = (size_t)(off / TD_CHUNK), po = (size_t)(off % TD_CHUNK);
		size_t n = TD_CHUNK - po < len ? TD_CHUNK - po : len;
		if (touch(t, pg) < 0)
			return s0__error_nomem(err);
		memcpy(t->pages[pg] + po, in, n);
		in += n;
		off += n;
		len -= n;
	}
	return S0_OK;
}

static int td_flush(void *ctx, s0_error **err)
{
	(void)ctx;
	(void)err;
	return S0_OK;
}

static uint64_t td_size(void *ctx)
{
	return ((td *)ctx)->size;
}

static const s0__blockdev_ops td_ops = {td_read, td_write, td_flush, td_size};

int td_new(uint64_t size, s0__blockdev *out)
{
	td *t = calloc(1, sizeof *t);
	if (!t || size % TD_CHUNK) {
		free(t);
		return -1;
	}
	t->size = size;
	t->npages = (size_t)(size / TD_CHUNK);
	t->pages = calloc(t->npages, sizeof *t->pages);
	t->orig = calloc(t->npages, sizeof *t->orig);
	t->dirty = calloc(t->npages, sizeof *t->dirty);
	if (!t->pages || !t->orig || !t->dirty) {
		free(t->pages);
		free(t->orig);
		free(t->dirty);
		free(t);
		return -1;
	}
	out->ops = &td_ops;
	out->ctx = t;
	return 0;
}

void td_mark(s0__blockdev *d)
{
	td *t = d->ctx;
	for (size_t i = 0; i < t->npages; i++) {
		free(t->orig[i]);
		t->orig[i] = NULL;
		t->dirty[i] = false;
	}
	t->ndirty = t->calls = t->bytes = 0;
}

void td_free(s0__blockdev *d)
{
	if (!d || !d->ctx)
		return;
	td *t = d->ctx;
	td_mark(d);
	for (size_t i = 0; i < t->npages; i++)
		free(t->pages[i]);
	free(t->pages);
	free(t->orig);
	free(t->dirty);
	free(t);
	d->ctx = NULL;
}

uint64_t td_dirty_chunks(const s0__blockdev *d)
{
	return ((td *)d->ctx)->ndirty;
}

uint64_t td_changed_chunks(const s0__blockdev *d)
{
	td *t = d->ctx;
	uint64_t n = 0;
	for (size_t i = 0; i < t->npages; i++)
		if (t->dirty[i] && memcmp(t->pages[i], t->orig[i] ? t->orig[i] : zero_page, TD_CHUNK))
			n++;
	return n;
}

uint64_t td_write_calls(const s0__blockdev *d)
{
	return ((td *)d->ctx)->calls;
}

uint64_t td_write_bytes(const s0__blockdev *d)
{
	return ((td *)d->ctx)->bytes;
}

uint64_t td_allocated_chunks(const s0__blockdev *d)
{
	td *t = d->ctx;
	uint64_t n = 0;
	for (size_t i = 0; i < t->npages; i++)
		n += t->pages[i] && memcmp(t->pages[i], zero_page, TD_CHUNK) != 0;
	return n;
}

uint64_t td_hash(const s0__blockdev *d)
{
	td *t = d->ctx;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < t->npages; i++) {
		if (!t->pages[i] || !memcmp(t->pages[i], zero_page, TD_CHUNK))
			continue;
		h = (h ^ i) * 1099511628211ull;
		for (size_t j = 0; j < TD_CHUNK; j += 8) {
			uint64_t w;
			memcpy(&w, t->pages[i] + j, 8);
			h = (h ^ w) * 1099511628211ull;
		}
	}
	return h;
}

void td_fail_writes(s0__blockdev *d, int n)
{
	((td *)d->ctx)->fail = n;
}

int td_clone(const s0__blockdev *src, s0__blockdev *out)
{
	td *s = src->ctx;
	if (td_new(s->size, out) < 0)
		return -1;
	td *t = out->ctx;
	for (size_t i = 0; i < s->npages; i++) {
		if (!s->pages[i])
			continue;
		if (!(t->pages[i] = malloc(TD_CHUNK))) {
			td_free(out);
			return -1;
		}
		memcpy(t->pages[i], s->pages[i], TD_CHUNK);
	}
	return 0;
}
