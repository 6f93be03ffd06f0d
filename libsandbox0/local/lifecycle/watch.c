/* The engine's change notification: per-sandbox versions and subscribers (watch.h). */
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "local/lifecycle/watch.h"
#include "local/meta/records.h" /* S0__ID_MAX */

#define BUCKETS 256

typedef struct entry {
	struct entry *next;
	uint64_t version;
	char id[S0__ID_MAX];
} entry;

struct s0__engine_watch_sub {
	s0__engine_watch_sub *next;
	s0__engine_watch_fn fn;             /* version bumps, or */
	s0__engine_watch_files_fn files_fn; /* file changes */
	void *arg;
	char id[S0__ID_MAX];
};

struct s0__engine_watch {
	pthread_mutex_t mu;
	uint64_t counter;
	uint64_t floor; /* version of every id without an entry: ≥ any forgotten one's */
	entry *buckets[BUCKETS];
	s0__engine_watch_sub *subs; /* few at a time: one per parked long-poll or stream */
	size_t files_subs;          /* how many of them are file subscribers */
	char epoch[17];
};

static unsigned bucket_of(const char *id)
{
	unsigned h = 2166136261u;
	for (const unsigned char *p = (const unsigned char *)id; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h % BUCKETS;
}

s0__engine_watch *s0__engine_watch_new(void)
{
	s0__engine_watch *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	pthread_mutex_init(&w->mu, NULL);
	unsigned char rnd[8];
	randombytes_buf(rnd, sizeof rnd);
	for (size_t i = 0; i < sizeof rnd; i++)
		snprintf(w->epoch + 2 * i, 3, "%02x", rnd[i]);
	return w;
}

void s0__engine_watch_free(s0__engine_watch *w)
{
	if (!w)
		return;
	for (int b = 0; b < BUCKETS; b++)
		while (w->buckets[b]) {
			entry *e = w->buckets[b];
			w->buckets[b] = e->next;
			free(e);
		}
	while (w->subs) { /* a leak of the caller's, reclaimed */
		s0__engine_watch_sub *s = w->subs;
		w->subs = s->next;
		free(s);
	}
	pthread_mutex_destroy(&w->mu);
	free(w);
}

static entry *find(s0__engine_watch *w, const char *id)
{
	for (entry *e = w->buckets[bucket_of(id)]; e; e = e->next)
		if (!strcmp(e->id, id))
			return e;
	return NULL;
}

void s0__engine_watch_bump(s0__engine_watch *w, const char *sandbox_id)
{
	if (!w || !sandbox_id || strlen(sandbox_id) >= S0__ID_MAX)
		return;
	pthread_mutex_lock(&w->mu);
	uint64_t v = ++w->counter;
	entry *e = find(w, sandbox_id);
	if (!e && (e = calloc(1, sizeof *e))) {
		s0__strlcpy(e->id, sandbox_id, sizeof e->id);
		unsigned b = bucket_of(sandbox_id);
		e->next = w->buckets[b];
		w->buckets[b] = e;
	}
	if (e)
		e->version = v;
	for (s0__engine_watch_sub *s = w->subs; s; s = s->next)
		if (s->fn && !strcmp(s->id, sandbox_id))
			s->fn(s->arg, sandbox_id, v);
	pthread_mutex_unlock(&w->mu);
}

size_t s0__engine_watch_subscribers(s0__engine_watch *w)
{
	size_t n = 0;
	pthread_mutex_lock(&w->mu);
	for (s0__engine_watch_sub *s = w->subs; s; s = s->next)
		n++;
	pthread_mutex_unlock(&w->mu);
	return n;
}

uint64_t s0__engine_watch_version(s0__engine_watch *w, const char *sandbox_id)
{
	if (!w || !sandbox_id)
		return 0;
	pthread_mutex_lock(&w->mu);
	entry *e = find(w, sandbox_id);
	uint64_t v = e ? e->version : w->floor;
	pthread_mutex_unlock(&w->mu);
	return v;
}

void s0__engine_watch_forget(s0__engine_watch *w, const char *sandbox_id)
{
	if (!w || !sandbox_id || strlen(sandbox_id) >= S0__ID_MAX)
		return;
	s0__engine_watch_bump(w, sandbox_id); /* waiters on it wake (to a 404) */
	pthread_mutex_lock(&w->mu);
	unsigned b = bucket_of(sandbox_id);
	for (entry **p = &w->buckets[b]; *p; p = &(*p)->next)
		if (!strcmp((*p)->id, sandbox_id)) {
			entry *e = *p;
			*p = e->next;
			free(e);
			break;
		}
	w->floor = w->counter; /* past every version it had: no reader sees it go back */
	/* every id without an entry now reports the new floor: tell its watchers */
	for (s0__engine_watch_sub *s = w->subs; s; s = s->next)
		if (s->fn && !find(w, s->id))
			s->fn(s->arg, s->id, w->floor);
	pthread_mutex_unlock(&w->mu);
}

const char *s0__engine_watch_epoch(const s0__engine_watch *w)
{
	return w ? w->epoch : "";
}

int s0__engine_watch_subscribe(s0__engine_watch *w, const char *sandbox_id,
                               s0__engine_watch_fn fn, void *arg, s0__engine_watch_sub **out)
{
	if (!w || !sandbox_id || !fn || !out || strlen(sandbox_id) >= S0__ID_MAX)
		return S0_EINVAL;
	s0__engine_watch_sub *s = calloc(1, sizeof *s);
	if (!s)
		return S0_ENOMEM;
	s->fn = fn;
	s->arg = arg;
	s0__strlcpy(s->id, sandbox_id, sizeof s->id);
	pthread_mutex_lock(&w->mu);
	s->next = w->subs;
	w->subs = s;
	pthread_mutex_unlock(&w->mu);
	*out = s;
	return S0_OK;
}

int s0__engine_watch_files_subscribe(s0__engine_watch *w, const char *sandbox_id,
                                     s0__engine_watch_files_fn fn, void *arg,
                                     s0__engine_watch_sub **out)
{
	if (!w || !sandbox_id || !fn || !out || strlen(sandbox_id) >= S0__ID_MAX)
		return S0_EINVAL;
	s0__engine_watch_sub *s = calloc(1, sizeof *s);
	if (!s)
		return S0_ENOMEM;
	s->files_fn = fn;
	s->arg = arg;
	s0__strlcpy(s->id, sandbox_id, sizeof s->id);
	pthread_mutex_lock(&w->mu);
	s->next = w->subs;
	w->subs = s;
	w->files_subs++;
	pthread_mutex_unlock(&w->mu);
	*out = s;
	return S0_OK;
}

void s0__engine_watch_files_event(void *arg, const char *sandbox_id, const char *event,
                                  const char *path)
{
	s0__engine_watch *w = arg;
	if (!w || !sandbox_id)
		return;
	pthread_mutex_lock(&w->mu);
	for (s0__engine_watch_sub *s = w->files_subs ? w->subs : NULL; s; s = s->next)
		if (s->files_fn && !strcmp(s->id, sandbox_id))
			s->files_fn(s->arg, event, path);
	pthread_mutex_unlock(&w->mu);
}

bool s0__engine_watch_files_wanted(void *arg, const char *sandbox_id)
{
	s0__engine_watch *w = arg;
	bool any = false;
	pthread_mutex_lock(&w->mu);
	for (s0__engine_watch_sub *s = w->files_subs ? w->subs : NULL; s && !any; s = s->next)
		any = s->files_fn && !strcmp(s->id, sandbox_id);
	pthread_mutex_unlock(&w->mu);
	return any;
}

void s0__engine_watch_unsubscribe(s0__engine_watch *w, s0__engine_watch_sub *sub)
{
	if (!w || !sub)
		return;
	pthread_mutex_lock(&w->mu);
	for (s0__engine_watch_sub **p = &w->subs; *p; p = &(*p)->next)
		if (*p == sub) {
			*p = sub->next;
			if (sub->files_fn)
				w->files_subs--;
			break;
		}
	pthread_mutex_unlock(&w->mu);
	free(sub);
}
