/* The RootFS name cache (dcache.h): chained hash of (dir, name) entries. */
#include "local/rootfs/dcache.h"

#include <stdlib.h>
#include <string.h>

typedef struct dentry {
	struct dentry *next;
	uint32_t dir, ino;
	uint16_t len;
	char name[];
} dentry;

struct s0__dcache {
	dentry **buckets;
	size_t nbuckets, count, max;
};

s0__dcache *s0__dcache_new(size_t max_entries)
{
	s0__dcache *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->max = max_entries ? max_entries : 1;
	c->nbuckets = 1;
	while (c->nbuckets < c->max)
		c->nbuckets <<= 1;
	if (!(c->buckets = calloc(c->nbuckets, sizeof *c->buckets))) {
		free(c);
		return NULL;
	}
	return c;
}

void s0__dcache_clear(s0__dcache *c)
{
	if (!c || !c->count)
		return;
	for (size_t i = 0; i < c->nbuckets; i++) {
		for (dentry *d = c->buckets[i], *n; d; d = n) {
			n = d->next;
			free(d);
		}
		c->buckets[i] = NULL;
	}
	c->count = 0;
}

void s0__dcache_free(s0__dcache *c)
{
	if (!c)
		return;
	s0__dcache_clear(c);
	free(c->buckets);
	free(c);
}

static size_t slot_of(const s0__dcache *c, uint32_t dir, const char *name, size_t len)
{
	uint64_t h = 1469598103934665603ull ^ dir; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 1099511628211ull;
	return (size_t)(h ^ (h >> 29)) & (c->nbuckets - 1);
}

static dentry **find(s0__dcache *c, uint32_t dir, const char *name, size_t len)
{
	dentry **p = &c->buckets[slot_of(c, dir, name, len)];
	for (; *p; p = &(*p)->next)
		if ((*p)->dir == dir && (*p)->len == len && !memcmp((*p)->name, name, len))
			break;
	return p;
}

bool s0__dcache_get(s0__dcache *c, uint32_t dir, const char *name, size_t len, uint32_t *ino)
{
	if (!c || !c->count)
		return false;
	dentry *d = *find(c, dir, name, len);
	if (!d)
		return false;
	*ino = d->ino;
	return true;
}

static void put(s0__dcache *c, uint32_t dir, const char *name, size_t len, uint32_t ino,
                bool replace)
{
	if (!c)
		return;
	if (len > UINT16_MAX) {
		s0__dcache_clear(c);
		return;
	}
	dentry **p = find(c, dir, name, len);
	if (*p) {
		if (replace)
			(*p)->ino = ino;
		return;
	}
	if (c->count >= c->max) {
		s0__dcache_clear(c);
		p = find(c, dir, name, len);
	}
	dentry *d = malloc(sizeof *d + len);
	if (!d) /* not recorded: it had no entry either */
		return;
	d->next = NULL;
	d->dir = dir;
	d->ino = ino;
	d->len = (uint16_t)len;
	memcpy(d->name, name, len);
	*p = d;
	c->count++;
}

void s0__dcache_put(s0__dcache *c, uint32_t dir, const char *name, size_t len, uint32_t ino)
{
	put(c, dir, name, len, ino, true);
}

void s0__dcache_add(s0__dcache *c, uint32_t dir, const char *name, size_t len, uint32_t ino)
{
	put(c, dir, name, len, ino, false);
}

/* The "complete" mark of a directory is an entry with the empty name, which
 * no directory entry can have. */
bool s0__dcache_complete(s0__dcache *c, uint32_t dir)
{
	uint32_t ino;
	return s0__dcache_get(c, dir, "", 0, &ino);
}

void s0__dcache_set_complete(s0__dcache *c, uint32_t dir)
{
	s0__dcache_put(c, dir, "", 0, 0);
}

size_t s0__dcache_count(const s0__dcache *c)
{
	return c ? c->count : 0;
}

size_t s0__dcache_capacity(const s0__dcache *c)
{
	return c ? c->max : 0;
}
