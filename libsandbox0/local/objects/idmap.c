/* Open-addressing id map. */
#include "local/objects/idmap.h"

#include <stdlib.h>
#include <string.h>

static size_t home(const s0__idmap *m, const s0__objid *id)
{
	return (size_t)(s0__objid_hash64(id) * 0x9e3779b97f4a7c15ull >> 17) & (m->cap - 1);
}

static size_t find(const s0__idmap *m, const s0__objid *id, bool *found)
{
	size_t i = home(m, id);
	while (m->slots[i].used) {
		if (s0__objid_eq(&m->slots[i].id, id)) {
			*found = true;
			return i;
		}
		i = (i + 1) & (m->cap - 1);
	}
	*found = false;
	return i;
}

static int grow(s0__idmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 16;
	s0__idmap_slot *ns = calloc(ncap, sizeof *ns);
	if (!ns)
		return -1;
	s0__idmap old = *m;
	m->slots = ns;
	m->cap = ncap;
	m->count = 0;
	for (size_t i = 0; i < old.cap; i++) {
		if (old.slots[i].used) {
			bool f;
			size_t j = find(m, &old.slots[i].id, &f);
			m->slots[j] = old.slots[i];
			m->count++;
		}
	}
	free(old.slots);
	return 0;
}

int s0__idmap_put(s0__idmap *m, const s0__objid *id, uint64_t val, bool *existed)
{
	bool f = false;
	size_t i = m->cap ? find(m, id, &f) : 0;
	if (!f && (m->count + 1) * 4 > m->cap * 3) {
		if (grow(m) < 0)
			return -1;
		i = find(m, id, &f);
	}
	if (existed)
		*existed = f;
	if (!f) {
		m->slots[i].id = *id;
		m->slots[i].used = true;
		m->count++;
	}
	m->slots[i].val = val;
	return 0;
}

bool s0__idmap_get(const s0__idmap *m, const s0__objid *id, uint64_t *val)
{
	if (!m->count)
		return false;
	bool f;
	size_t i = find(m, id, &f);
	if (f && val)
		*val = m->slots[i].val;
	return f;
}

bool s0__idmap_del(s0__idmap *m, const s0__objid *id)
{
	if (!m->count)
		return false;
	bool f;
	size_t i = find(m, id, &f);
	if (!f)
		return false;
	/* Backward-shift deletion keeps every probe chain unbroken. */
	size_t j = i;
	for (;;) {
		m->slots[i].used = false;
		for (;;) {
			j = (j + 1) & (m->cap - 1);
			if (!m->slots[j].used)
				goto done;
			size_t k = home(m, &m->slots[j].id);
			/* Move j back to i unless its home lies cyclically in (i, j]. */
			if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
				continue;
			break;
		}
		m->slots[i] = m->slots[j];
		i = j;
	}
done:
	m->count--;
	return true;
}

size_t s0__idmap_count(const s0__idmap *m)
{
	return m->count;
}

const s0__idmap_slot *s0__idmap_next(const s0__idmap *m, size_t *pos)
{
	while (*pos < m->cap) {
		const s0__idmap_slot *s = &m->slots[(*pos)++];
		if (s->used)
			return s;
	}
	return NULL;
}

void s0__idmap_clear(s0__idmap *m)
{
	if (m->slots)
		memset(m->slots, 0, m->cap * sizeof *m->slots);
	m->count = 0;
}

void s0__idmap_free(s0__idmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->count = 0;
}
