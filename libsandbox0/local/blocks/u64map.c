/* Open-addressing uint64 -> uint64 map. */
#include "local/blocks/u64map.h"

#include <stdlib.h>
#include <string.h>

static size_t home(const s0__u64map *m, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (m->cap - 1);
}

static size_t find(const s0__u64map *m, uint64_t key, bool *found)
{
	size_t i = home(m, key);
	while (m->used[i]) {
		if (m->keys[i] == key) {
			*found = true;
			return i;
		}
		i = (i + 1) & (m->cap - 1);
	}
	*found = false;
	return i;
}

static int resize(s0__u64map *m, size_t ncap)
{
	s0__u64map n = {calloc(ncap, 8), calloc(ncap, 8), calloc(ncap, 1), ncap, 0};
	if (!n.keys || !n.vals || !n.used) {
		free(n.keys);
		free(n.vals);
		free(n.used);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (m->used[i]) {
			bool f;
			size_t j = find(&n, m->keys[i], &f);
			n.keys[j] = m->keys[i];
			n.vals[j] = m->vals[i];
			n.used[j] = 1;
			n.count++;
		}
	}
	s0__u64map_free(m);
	*m = n;
	return 0;
}

int s0__u64map_put(s0__u64map *m, uint64_t key, uint64_t val)
{
	if ((m->count + 1) * 4 > m->cap * 3 && resize(m, m->cap ? m->cap * 2 : 64) < 0)
		return -1;
	bool f;
	size_t i = find(m, key, &f);
	if (!f) {
		m->keys[i] = key;
		m->used[i] = 1;
		m->count++;
	}
	m->vals[i] = val;
	return 0;
}

bool s0__u64map_get(const s0__u64map *m, uint64_t key, uint64_t *val)
{
	if (!m->count)
		return false;
	bool f;
	size_t i = find(m, key, &f);
	if (f && val)
		*val = m->vals[i];
	return f;
}

bool s0__u64map_del(s0__u64map *m, uint64_t key)
{
	if (!m->count)
		return false;
	bool f;
	size_t i = find(m, key, &f);
	if (!f)
		return false;
	size_t j = i;
	for (;;) {
		m->used[i] = 0;
		for (;;) {
			j = (j + 1) & (m->cap - 1);
			if (!m->used[j])
				goto done;
			size_t k = home(m, m->keys[j]);
			if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
				continue;
			break;
		}
		m->keys[i] = m->keys[j];
		m->vals[i] = m->vals[j];
		m->used[i] = 1;
		i = j;
	}
done:
	m->count--;
	return true;
}

bool s0__u64map_next(const s0__u64map *m, size_t *pos, uint64_t *key, uint64_t *val)
{
	while (*pos < m->cap) {
		size_t i = (*pos)++;
		if (m->used[i]) {
			*key = m->keys[i];
			*val = m->vals[i];
			return true;
		}
	}
	return false;
}

int s0__u64map_copy(s0__u64map *dst, const s0__u64map *src)
{
	if (!src->cap)
		return 0;
	s0__u64map n = {malloc(src->cap * 8), malloc(src->cap * 8), malloc(src->cap), src->cap,
	                src->count};
	if (!n.keys || !n.vals || !n.used) {
		free(n.keys);
		free(n.vals);
		free(n.used);
		return -1;
	}
	memcpy(n.keys, src->keys, src->cap * 8);
	memcpy(n.vals, src->vals, src->cap * 8);
	memcpy(n.used, src->used, src->cap);
	*dst = n;
	return 0;
}

void s0__u64map_free(s0__u64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof *m);
}
