#include "common/buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int s0__buf_grow(s0__buf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return 0;
	if (extra > SIZE_MAX / 2 - b->len)
		return -1;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->len + extra + 1)
		cap *= 2;
	char *d = realloc(b->data, cap);
	if (!d)
		return -1;
	d[b->len] = '\0'; /* keep the invariant for a buffer allocated here first */
	b->data = d;
	b->cap = cap;
	return 0;
}

int s0__buf_put(s0__buf *b, const void *data, size_t len)
{
	if (s0__buf_grow(b, len) < 0)
		return -1;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int s0__buf_puts(s0__buf *b, const char *s)
{
	return s0__buf_put(b, s, strlen(s));
}

int s0__buf_printf(s0__buf *b, const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || s0__buf_grow(b, (size_t)n) < 0) {
		va_end(ap2);
		return -1;
	}
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	b->len += (size_t)n;
	return 0;
}

char *s0__buf_detach(s0__buf *b, size_t *len_out)
{
	if (!b->data && s0__buf_grow(b, 0) < 0)
		return NULL;
	char *d = b->data;
	if (len_out)
		*len_out = b->len;
	b->data = NULL;
	b->len = b->cap = 0;
	return d;
}

void s0__buf_reset(s0__buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void s0__buf_free(s0__buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}
