/* The io channel's block cache (iocache.h): a hash of slots with an LRU list. */
#include "local/rootfs/iocache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NIL (-1)
#define RUN_MAX 16 /* blocks per write-back call */

typedef struct slot {
	uint64_t blk;
	uint8_t *data;
	int32_t hnext;      /* hash chain */
	int32_t prev, next; /* LRU list: head = most recent */
	bool used, dirty;
} slot;

struct s0__iocache {
	uint32_t bs;
	size_t max, nbuckets;
	slot *slots;
	int32_t *buckets;
	int32_t head, tail; /* LRU */
	size_t used;        /* slots handed out (slots[0..used) ever used) */
	int32_t free_list;  /* dropped slots (chained through hnext) */
	size_t dirty;
	s0__iocache_stats st;
};

s0__iocache *s0__iocache_new(size_t max_blocks, uint32_t block_size)
{
	s0__iocache *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->bs = block_size;
	c->max = max_blocks ? max_blocks : 1;
	c->nbuckets = 1;
	while (c->nbuckets < c->max * 2)
		c->nbuckets <<= 1;
	c->slots = calloc(c->max, sizeof *c->slots);
	c->buckets = malloc(c->nbuckets * sizeof *c->buckets);
	if (!c->slots || !c->buckets) {
		s0__iocache_free(c);
		return NULL;
	}
	for (size_t i = 0; i < c->nbuckets; i++)
		c->buckets[i] = NIL;
	c->head = c->tail = c->free_list = NIL;
	return c;
}

void s0__iocache_free(s0__iocache *c)
{
	if (!c)
		return;
	if (c->slots)
		for (size_t i = 0; i < c->used; i++)
			free(c->slots[i].data);
	free(c->slots);
	free(c->buckets);
	free(c);
}

uint32_t s0__iocache_block_size(const s0__iocache *c)
{
	return c->bs;
}

static size_t bucket(const s0__iocache *c, uint64_t blk)
{
	return (size_t)((blk * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (c->nbuckets - 1);
}

static int32_t find(const s0__iocache *c, uint64_t blk)
{
	for (int32_t i = c->buckets[bucket(c, blk)]; i != NIL; i = c->slots[i].hnext)
		if (c->slots[i].blk == blk)
			return i;
	return NIL;
}

static void lru_unlink(s0__iocache *c, int32_t i)
{
	slot *s = &c->slots[i];
	if (s->prev != NIL)
		c->slots[s->prev].next = s->next;
	else
		c->head = s->next;
	if (s->next != NIL)
		c->slots[s->next].prev = s->prev;
	else
		c->tail = s->prev;
	s->prev = s->next = NIL;
}

static void lru_front(s0__iocache *c, int32_t i)
{
	slot *s = &c->slots[i];
	s->prev = NIL;
	s->next = c->head;
	if (c->head != NIL)
		c->slots[c->head].prev = i;
	c->head = i;
	if (c->tail == NIL)
		c->tail = i;
}

static void hash_unlink(s0__iocache *c, int32_t i)
{
	for (int32_t *p = &c->buckets[bucket(c, c->slots[i].blk)]; *p != NIL;
	     p = &c->slots[*p].hnext)
		if (*p == i) {
			*p = c->slots[i].hnext;
			return;
		}
}

static void set_dirty(s0__iocache *c, slot *s, bool dirty)
{
	if (s->dirty != dirty)
		c->dirty += dirty ? 1 : (size_t)-1;
	s->dirty = dirty;
}

/* Remove slot i from the hash and the LRU list onto the free list. */
static void drop(s0__iocache *c, int32_t i)
{
	slot *s = &c->slots[i];
	hash_unlink(c, i);
	lru_unlink(c, i);
	set_dirty(c, s, false);
	s->used = false;
	s->hnext = c->free_list;
	c->free_list = i;
}

const void *s0__iocache_get(s0__iocache *c, uint64_t blk)
{
	int32_t i = find(c, blk);
	if (i == NIL) {
		c->st.misses++;
		return NULL;
	}
	c->st.hits++;
	if (c->head != i) {
		lru_unlink(c, i);
		lru_front(c, i);
	}
	return c->slots[i].data;
}

/* A slot to fill: a free one, a new one, or the LRU tail (written back
 * first when dirty). NIL with *ec set when none. */
static int32_t take_slot(s0__iocache *c, s0__iocache_wb_fn wb, void *ctx, long *ec)
{
	*ec = 0;
	if (c->free_list != NIL) {
		int32_t i = c->free_list;
		c->free_list = c->slots[i].hnext;
		return i;
	}
	if (c->used < c->max) {
		slot *s = &c->slots[c->used];
		if (!(s->data = malloc(c->bs))) {
			*ec = ENOMEM;
			return NIL;
		}
		return (int32_t)c->used++;
	}
	int32_t i = c->tail;
	slot *s = &c->slots[i];
	if (s->dirty) {
		if ((*ec = wb(ctx, s->blk, 1, s->data)) != 0)
			return NIL;
		c->st.writebacks++;
	}
	c->st.evictions++;
	drop(c, i);
	c->free_list = s->hnext; /* take it back off the free list */
	return i;
}

long s0__iocache_put(s0__iocache *c, uint64_t blk, const void *data, bool dirty,
                     s0__iocache_wb_fn wb, void *ctx)
{
	int32_t i = find(c, blk);
	if (i == NIL) {
		long ec;
		if ((i = take_slot(c, wb, ctx, &ec)) == NIL)
			return ec;
		slot *s = &c->slots[i];
		s->blk = blk;
		s->used = true;
		s->dirty = false;
		s->hnext = c->buckets[bucket(c, blk)];
		c->buckets[bucket(c, blk)] = i;
		lru_front(c, i);
	} else if (c->head != i) {
		lru_unlink(c, i);
		lru_front(c, i);
	}
	slot *s = &c->slots[i];
	if (s->data != data)
		memcpy(s->data, data, c->bs);
	set_dirty(c, s, dirty);
	return 0;
}

void s0__iocache_wrote(s0__iocache *c, uint64_t blk, uint64_t count, const void *data)
{
	if (!c->used)
		return;
	for (uint64_t k = 0; k < count; k++) {
		int32_t i = find(c, blk + k);
		if (i == NIL)
			continue;
		memcpy(c->slots[i].data, (const uint8_t *)data + k * c->bs, c->bs);
		set_dirty(c, &c->slots[i], false);
	}
}

void s0__iocache_overlay(s0__iocache *c, uint64_t blk, uint64_t count, void *buf)
{
	if (!c->used)
		return;
	for (uint64_t k = 0; k < count; k++) {
		int32_t i = find(c, blk + k);
		if (i != NIL)
			memcpy((uint8_t *)buf + k * c->bs, c->slots[i].data, c->bs);
	}
}

static int by_block(const void *a, const void *b, void *arg)
{
	const slot *s = arg;
	uint64_t x = s[*(const int32_t *)a].blk, y = s[*(const int32_t *)b].blk;
	return (x > y) - (x < y);
}

/* Slot indices by block number (shell sort; n is at most the cache size;
 * qsort has no context argument in C11). */
static void sort_dirty(s0__iocache *c, int32_t *v, size_t n)
{
	for (size_t gap = n / 2; gap > 0; gap /= 2)
		for (size_t i = gap; i < n; i++)
			for (size_t j = i; j >= gap && by_block(&v[j - gap], &v[j], c->slots) > 0; j -= gap) {
				int32_t t = v[j];
				v[j] = v[j - gap];
				v[j - gap] = t;
			}
}

long s0__iocache_writeback(s0__iocache *c, s0__iocache_wb_fn wb, void *ctx)
{
	if (!c->dirty)
		return 0;
	int32_t *v = malloc(c->dirty * sizeof *v);
	uint8_t *run = malloc((size_t)RUN_MAX * c->bs);
	long ec = 0;
	size_t n = 0;
	if (v)
		for (size_t i = 0; i < c->used; i++)
			if (c->slots[i].used && c->slots[i].dirty)
				v[n++] = (int32_t)i;
	if (v && run) {
		sort_dirty(c, v, n);
		for (size_t i = 0; i < n && !ec;) {
			size_t k = 1;
			while (i + k < n && k < RUN_MAX && c->slots[v[i + k]].blk == c->slots[v[i]].blk + k)
				k++;
			for (size_t j = 0; j < k; j++)
				memcpy(run + j * c->bs, c->slots[v[i + j]].data, c->bs);
			ec = wb(ctx, c->slots[v[i]].blk, (uint32_t)k, run);
			for (size_t j = 0; j < k && !ec; j++)
				set_dirty(c, &c->slots[v[i + j]], false);
			c->st.writebacks += ec ? 0 : k;
			i += k;
		}
	} else { /* no memory for the sort: one block at a time, any order */
		for (size_t i = 0; i < c->used && !ec; i++) {
			slot *s = &c->slots[i];
			if (s->used && s->dirty && !(ec = wb(ctx, s->blk, 1, s->data)))
				set_dirty(c, s, false);
		}
	}
	free(v);
	free(run);
	return ec;
}

long s0__iocache_evict(s0__iocache *c, uint64_t blk, s0__iocache_wb_fn wb, void *ctx)
{
	int32_t i = find(c, blk);
	if (i == NIL)
		return 0;
	if (c->slots[i].dirty) {
		long ec = wb(ctx, blk, 1, c->slots[i].data);
		if (ec)
			return ec;
		c->st.writebacks++;
	}
	drop(c, i);
	return 0;
}

void s0__iocache_discard(s0__iocache *c, uint64_t blk, uint64_t count)
{
	if (!c->used)
		return;
	for (uint64_t k = 0; k < count; k++) {
		int32_t i = find(c, blk + k);
		if (i != NIL)
			drop(c, i);
	}
}

void s0__iocache_drop_all(s0__iocache *c)
{
	for (size_t i = 0; i < c->used; i++)
		if (c->slots[i].used)
			drop(c, (int32_t)i);
}

void s0__iocache_stats_get(const s0__iocache *c, s0__iocache_stats *out)
{
	*out = c->st;
	out->dirty = c->dirty;
	size_t n = 0;
	for (size_t i = 0; i < c->used; i++)
		n += c->slots[i].used;
	out->cached = n;
}
