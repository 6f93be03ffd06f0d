/* Heap-like content and the chunk hash behind `alloc` and `memhash` (heap.h). */
#include "local/runtime/heap.h"

#include <string.h>

static const char *const words[32] = {
	"the ",   "self.",    "return ", "value",   "import ", "data",     "key",     "None",
	"True",   "list",     "dict",    "name",    "index",   "count",    "result",  "buffer",
	"item",   "error",    "json",    "http",    "user_id", "timestamp", "payload", "status",
	"\"id\": ", "config", "node",    "value_",  "token",   "session",  "file",    "path"};

static uint64_t xs(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* 48 bytes of words after a small length field. */
static void text_obj(uint64_t o[8], uint64_t r, uint64_t *s)
{
	char t[48];
	size_t k = 0;
	uint64_t q = r >> 9;
	while (k < sizeof t) {
		const char *w = words[q & 31];
		q >>= 5;
		if (!q)
			q = xs(s);
		size_t wl = strlen(w);
		if (wl > sizeof t - k)
			wl = sizeof t - k;
		memcpy(t + k, w, wl);
		k += wl;
	}
	memcpy(&o[2], t, sizeof t);
	o[2] = (o[2] & ~(uint64_t)0xff) | ((r >> 20) & 0xff);
}

static void one_obj(uint8_t *p, size_t i, uint64_t *s, uint64_t base)
{
	uint64_t r = xs(s), o[8];
	unsigned kind = (unsigned)(r >> 6) & 7;
	if (kind >= 6 && i >= 512) { /* a repeat of a recent object */
		memmove(p + i, p + i - 64 * (1 + ((r >> 9) & 7)), 64);
		p[i] = (uint8_t)(1 + (r & 3));
		return;
	}
	o[0] = 1 + (r & 3);
	o[1] = 0x000055d0c8a01000ull + ((r >> 2) & 15) * 0x140;
	if (kind < 2) {
		text_obj(o, r, s);
	} else if (kind < 4) {
		for (int j = 2; j < 8; j++) {
			uint64_t q = xs(s);
			o[j] = (q & 1) ? base + ((uint64_t)i + ((q >> 8) & 31) * 64) : 0;
		}
	} else if (kind < 6) {
		for (int j = 2; j < 8; j++) {
			uint64_t q = xs(s);
			o[j] = (q & 3) ? (q >> 40) & 0x3f : 0x4000000000000000ull | ((q >> 20) & 0x3f) << 44;
		}
	} else {
		memset(&o[2], 0, 48);
		o[2] = (r >> 10) & 0xffffff;
	}
	memcpy(p + i, o, 64);
}

void s0__heapgen_fill(void *buf, size_t len, uint64_t seed)
{
	uint8_t *p = buf;
	uint64_t s = seed * 0x9e3779b97f4a7c15ull | 1;
	uint64_t base = 0x00007f3a10000000ull + ((seed & 0xff) << 20);
	size_t i = 0;
	for (; i + 64 <= len; i += 64)
		one_obj(p, i, &s, base);
	for (; i < len; i++)
		p[i] = (uint8_t)(xs(&s) & 0x0f);
}

static uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static uint64_t load64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

uint64_t s0__heap_chunk_hash(const void *buf, size_t len)
{
	const uint64_t P1 = 0x9e3779b185ebca87ull, P2 = 0xc2b2ae3d27d4eb4full;
	const uint8_t *p = buf;
	uint64_t a = P1, b = P2, c = 0x165667b19e3779f9ull, d = 0x27d4eb2f165667c5ull;
	size_t i = 0;
	for (; i + 32 <= len; i += 32) {
		a = rotl(a + load64(p + i) * P2, 31) * P1;
		b = rotl(b + load64(p + i + 8) * P2, 31) * P1;
		c = rotl(c + load64(p + i + 16) * P2, 31) * P1;
		d = rotl(d + load64(p + i + 24) * P2, 31) * P1;
	}
	for (; i + 8 <= len; i += 8)
		a = rotl(a ^ load64(p + i) * P2, 27) * P1;
	uint64_t h = rotl(a, 1) + rotl(b, 7) + rotl(c, 12) + rotl(d, 18) + len;
	h ^= h >> 33;
	h *= P2;
	h ^= h >> 29;
	return h;
}
