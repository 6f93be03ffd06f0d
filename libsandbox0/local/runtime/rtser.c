/* Little-endian binary writer and bounds-checked reader (rtser.h). */
#include "local/runtime/rtser.h"

#include <stdlib.h>
#include <string.h>

void s0__ser_raw(s0__ser *s, const void *p, size_t n)
{
	if (s->oom || !n)
		return;
	if (s0__buf_put(&s->buf, p, n) < 0)
		s->oom = true;
}

void s0__ser_u8(s0__ser *s, uint8_t v)
{
	s0__ser_raw(s, &v, 1);
}

void s0__ser_u32(s0__ser *s, uint32_t v)
{
	uint8_t b[4];
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	s0__ser_raw(s, b, 4);
}

void s0__ser_u64(s0__ser *s, uint64_t v)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	s0__ser_raw(s, b, 8);
}

void s0__ser_i64(s0__ser *s, int64_t v)
{
	s0__ser_u64(s, (uint64_t)v);
}

void s0__ser_bytes(s0__ser *s, const void *p, size_t n)
{
	if (n > UINT32_MAX) {
		s->oom = true;
		return;
	}
	s0__ser_u32(s, (uint32_t)n);
	s0__ser_raw(s, p, n);
}

void s0__ser_str(s0__ser *s, const char *str)
{
	s0__ser_bytes(s, str ? str : "", str ? strlen(str) : 0);
}

void s0__de_init(s0__de *d, const void *p, size_t n)
{
	d->p = p;
	d->left = n;
	d->bad = false;
}

void s0__de_fail(s0__de *d)
{
	d->bad = true;
	d->left = 0;
}

static const uint8_t *take(s0__de *d, size_t n)
{
	if (d->bad || d->left < n) {
		s0__de_fail(d);
		return NULL;
	}
	const uint8_t *p = d->p;
	d->p += n;
	d->left -= n;
	return p;
}

uint8_t s0__de_u8(s0__de *d)
{
	const uint8_t *p = take(d, 1);
	return p ? p[0] : 0;
}

uint32_t s0__de_u32(s0__de *d)
{
	const uint8_t *p = take(d, 4);
	uint32_t v = 0;
	for (int i = 0; p && i < 4; i++)
		v |= (uint32_t)p[i] << (8 * i);
	return v;
}

uint64_t s0__de_u64(s0__de *d)
{
	const uint8_t *p = take(d, 8);
	uint64_t v = 0;
	for (int i = 0; p && i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

int64_t s0__de_i64(s0__de *d)
{
	return (int64_t)s0__de_u64(d);
}

void s0__de_raw(s0__de *d, void *out, size_t n)
{
	const uint8_t *p = take(d, n);
	if (p)
		memcpy(out, p, n);
	else
		memset(out, 0, n);
}

const void *s0__de_bytes(s0__de *d, size_t max, size_t *n_out)
{
	uint32_t n = s0__de_u32(d);
	*n_out = 0;
	if (n > max) {
		s0__de_fail(d);
		return NULL;
	}
	const uint8_t *p = take(d, n);
	if (p)
		*n_out = n;
	return p;
}

char *s0__de_str(s0__de *d, size_t max, bool *oom)
{
	size_t n;
	const char *p = s0__de_bytes(d, max, &n);
	if (!p)
		return NULL;
	if (memchr(p, 0, n)) {
		s0__de_fail(d);
		return NULL;
	}
	char *s = s0__strndup(p, n);
	if (!s && oom)
		*oom = true;
	return s;
}

int s0__de_done(const s0__de *d, bool exact, const char *what, s0_error **err)
{
	if (d->bad || (exact && d->left))
		return s0__error_set(err, S0_ECORRUPT, "corrupt", "%s is damaged or truncated", what);
	return S0_OK;
}
