/* String helpers, the live-object counter and the real clocks. */
#include "common/internal.h"

#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static atomic_llong live_objects;

void s0__obj_inc(void)
{
	atomic_fetch_add(&live_objects, 1);
}

void s0__obj_dec(void)
{
	atomic_fetch_sub(&live_objects, 1);
}

int64_t s0_live_objects(void)
{
	return (int64_t)atomic_load(&live_objects);
}

void s0_free(void *ptr)
{
	free(ptr);
}

char *s0__strdup(const char *s)
{
	return s ? s0__strndup(s, strlen(s)) : NULL;
}

char *s0__strndup(const char *s, size_t n)
{
	if (!s)
		return NULL;
	char *d = malloc(n + 1);
	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *s0__vasprintf(const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return NULL;
	char *d = malloc((size_t)n + 1);
	if (d)
		vsnprintf(d, (size_t)n + 1, fmt, ap);
	return d;
}

char *s0__asprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *d = s0__vasprintf(fmt, ap);
	va_end(ap);
	return d;
}

bool s0__is_blank(const char *s)
{
	if (!s)
		return true;
	for (; *s; s++)
		if (!isspace((unsigned char)*s))
			return false;
	return true;
}

void s0__strlcpy(char *dst, const char *src, size_t n)
{
	if (!n)
		return;
	size_t l = src ? strlen(src) : 0;
	if (l >= n)
		l = n - 1;
	if (l)
		memcpy(dst, src, l);
	dst[l] = '\0';
}

int64_t s0__real_monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t s0__real_unix_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int s0_version_number(void)
{
	return S0_VERSION_NUMBER;
}

const char *s0_version_string(void)
{
	return S0_VERSION_STRING;
}
