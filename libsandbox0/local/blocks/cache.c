/* Bounded LRU cache of object plaintext. */
#include "local/blocks/cache.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "local/objects/idmap.h"

struct s0__centry {
	s0__objid id;
	void *data;
	size_t size;
	int refs;
	bool forgotten; /* out of the index and list; freed on last release */
	struct s0__centry *prev, *next; /* LRU list; head = most recent */
};

struct s0__cache {
	pthread_mutex_t mu;
	s0__idmap index; /* id -> entry pointer */
	s0__centry *head, *tail;
	uint64_t bytes, cap;
};

s0__cache *s0__cache_new(uint64_t cap_bytes)
{
	s0__cache *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	pthread_mutex_init(&c->mu, NULL);
	c->cap = cap_bytes;
	return c;
}

static void unlink_entry(s0__cache *c, s0__centry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->tail = e->prev;
	e->prev = e->next = NULL;
}

static void push_front(s0__cache *c, s0__centry *e)
{
	e->prev = NULL;
	e->next = c->head;
	if (c->head)
		c->head->prev = e;
	c->head = e;
	if (!c->tail)
		c->tail = e;
}

static void drop(s0__cache *c, s0__centry *e)
{
	unlink_entry(c, e);
	s0__idmap_del(&c->index, &e->id);
	c->bytes -= e->size;
	free(e->data);
	free(e);
}

/* Evict unreferenced entries from the cold end until within the bound. */
static void evict(s0__cache *c, uint64_t bound)
{
	s0__centry *e = c->tail;
	while (e && c->bytes > bound) {
		s0__centry *prev = e->prev;
		if (!e->refs)
			drop(c, e);
		e = prev;
	}
}

void s0__cache_free(s0__cache *c)
{
	if (!c)
		return;
	while (c->head)
		drop(c, c->head);
	s0__idmap_free(&c->index);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

const void *s0__centry_data(const s0__centry *e)
{
	return e->data;
}

size_t s0__centry_size(const s0__centry *e)
{
	return e->size;
}

s0__centry *s0__cache_get(s0__cache *c, const s0__objid *id)
{
	uint64_t v;
	s0__centry *e = NULL;
	pthread_mutex_lock(&c->mu);
	if (s0__idmap_get(&c->index, id, &v)) {
		e = (s0__centry *)(uintptr_t)v;
		e->refs++;
		if (c->head != e) {
			unlink_entry(c, e);
			push_front(c, e);
		}
	}
	pthread_mutex_unlock(&c->mu);
	return e;
}

s0__centry *s0__cache_put(s0__cache *c, const s0__objid *id, void *data, size_t size)
{
	uint64_t v;
	pthread_mutex_lock(&c->mu);
	if (s0__idmap_get(&c->index, id, &v)) {
		s0__centry *e = (s0__centry *)(uintptr_t)v;
		e->refs++;
		pthread_mutex_unlock(&c->mu);
		free(data);
		return e;
	}
	s0__centry *e = calloc(1, sizeof *e);
	if (!e || s0__idmap_put(&c->index, id, (uint64_t)(uintptr_t)e, NULL) < 0) {
		pthread_mutex_unlock(&c->mu);
		free(e);
		free(data);
		return NULL;
	}
	e->id = *id;
	e->data = data;
	e->size = size;
	e->refs = 1;
	push_front(c, e);
	c->bytes += size;
	evict(c, c->cap);
	pthread_mutex_unlock(&c->mu);
	return e;
}

void s0__cache_forget(s0__cache *c, const s0__objid *id)
{
	uint64_t v;
	pthread_mutex_lock(&c->mu);
	if (s0__idmap_get(&c->index, id, &v)) {
		s0__centry *e = (s0__centry *)(uintptr_t)v;
		if (!e->refs) {
			drop(c, e);
		} else {
			unlink_entry(c, e);
			s0__idmap_del(&c->index, &e->id);
			c->bytes -= e->size;
			e->forgotten = true;
		}
	}
	pthread_mutex_unlock(&c->mu);
}

void s0__cache_release(s0__cache *c, s0__centry *e)
{
	pthread_mutex_lock(&c->mu);
	if (e->forgotten) {
		if (--e->refs == 0) {
			free(e->data);
			free(e);
		}
		pthread_mutex_unlock(&c->mu);
		return;
	}
	e->refs--;
	if (!e->refs && c->bytes > c->cap)
		evict(c, c->cap);
	pthread_mutex_unlock(&c->mu);
}

uint64_t s0__cache_capacity(const s0__cache *c)
{
	return c->cap;
}

bool s0__cache_has(s0__cache *c, const s0__objid *id)
{
	pthread_mutex_lock(&c->mu);
	bool in = s0__idmap_get(&c->index, id, NULL);
	pthread_mutex_unlock(&c->mu);
	return in;
}

void s0__cache_clear(s0__cache *c)
{
	pthread_mutex_lock(&c->mu);
	evict(c, 0);
	pthread_mutex_unlock(&c->mu);
}
