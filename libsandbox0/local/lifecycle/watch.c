/* Change notification of the engine (watch.h): versions and subscriptions. */
#include "local/lifecycle/watch.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/cancel.h"
#include "local/lifecycle/engine_internal.h"

#define WATCH_BUCKETS 256

typedef struct wentry {
	char id[S0__ID_MAX];
	uint64_t version;
	struct wentry *next;
} wentry;

typedef struct wsub {
	int handle;
	char id[S0__ID_MAX];
	uint64_t since;
	s0__engine_watch_fn fn;
	void *arg;
	struct wsub *next;
} wsub;

struct s0__watch {
	pthread_mutex_t mu;
	uint64_t seq;   /* last value handed out */
	uint64_t floor; /* version of an id without an entry */
	wentry *buckets[WATCH_BUCKETS];
	wsub *subs;
	int next_handle;
};

s0__watch *s0__watch_new(void)
{
	s0__watch *w = calloc(1, sizeof *w);
	if (w)
		pthread_mutex_init(&w->mu, NULL);
	return w;
}

void s0__watch_free(s0__watch *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < WATCH_BUCKETS; i++)
		for (wentry *x = w->buckets[i], *n; x; x = n) {
			n = x->next;
			free(x);
		}
	for (wsub *s = w->subs, *n; s; s = n) {
		n = s->next;
		free(s);
	}
	pthread_mutex_destroy(&w->mu);
	free(w);
}

static size_t bucket_of(const char *id)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (const unsigned char *p = (const unsigned char *)id; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h % WATCH_BUCKETS;
}

static wentry *find(s0__watch *w, const char *id)
{
	for (wentry *x = w->buckets[bucket_of(id)]; x; x = x->next)
		if (!strcmp(x->id, id))
			return x;
	return NULL;
}

static uint64_t version_locked(s0__watch *w, const char *id)
{
	wentry *x = find(w, id);
	return x ? x->version : w->floor;
}

/* Fire (and drop) every subscription whose sandbox's version now passes its since. */
static void fire_due(s0__watch *w)
{
	for (wsub **p = &w->subs; *p;) {
		wsub *s = *p;
		if (version_locked(w, s->id) > s->since) {
			*p = s->next;
			s->fn(s->arg);
			free(s);
		} else {
			p = &s->next;
		}
	}
}

uint64_t s0__engine_watch_version(s0__engine *e, const char *id)
{
	s0__watch *w = e->watch;
	pthread_mutex_lock(&w->mu);
	uint64_t v = version_locked(w, id ? id : "");
	pthread_mutex_unlock(&w->mu);
	return v;
}

static void bump_locked(s0__watch *w, const char *id)
{
	uint64_t v = ++w->seq;
	wentry *x = find(w, id);
	if (!x && strlen(id) < S0__ID_MAX && (x = calloc(1, sizeof *x))) {
		s0__strlcpy(x->id, id, sizeof x->id);
		size_t b = bucket_of(id);
		x->next = w->buckets[b];
		w->buckets[b] = x;
	}
	if (x)
		x->version = v;
	else /* no entry (OOM, overlong id): move every unknown id instead, never miss */
		w->floor = v;
}

void s0__engine_watch_bump(s0__engine *e, const char *id)
{
	if (!id)
		return;
	s0__watch *w = e->watch;
	pthread_mutex_lock(&w->mu);
	bump_locked(w, id);
	fire_due(w);
	pthread_mutex_unlock(&w->mu);
}

void s0__engine_watch_forget(s0__engine *e, const char *id)
{
	if (!id)
		return;
	s0__watch *w = e->watch;
	pthread_mutex_lock(&w->mu);
	bump_locked(w, id);
	for (wentry **p = &w->buckets[bucket_of(id)]; *p; p = &(*p)->next)
		if (!strcmp((*p)->id, id)) {
			wentry *x = *p;
			*p = x->next;
			free(x);
			break;
		}
	w->floor = w->seq; /* >= every version handed out */
	fire_due(w);
	pthread_mutex_unlock(&w->mu);
}

int s0__engine_watch_subscribe(s0__engine *e, const char *id, uint64_t since,
                               s0__engine_watch_fn fn, void *arg)
{
	if (!id || !fn)
		return 0;
	s0__watch *w = e->watch;
	wsub *s = calloc(1, sizeof *s);
	if (!s)
		return 0;
	s0__strlcpy(s->id, id, sizeof s->id);
	s->since = since;
	s->fn = fn;
	s->arg = arg;
	pthread_mutex_lock(&w->mu);
	s->handle = ++w->next_handle > 0 ? w->next_handle : (w->next_handle = 1);
	int handle = s->handle;
	if (version_locked(w, s->id) > since) {
		fn(arg);
		free(s);
	} else {
		s->next = w->subs;
		w->subs = s;
	}
	pthread_mutex_unlock(&w->mu);
	return handle;
}

void s0__engine_watch_unsubscribe(s0__engine *e, int sub)
{
	if (sub <= 0)
		return;
	s0__watch *w = e->watch;
	pthread_mutex_lock(&w->mu);
	for (wsub **p = &w->subs; *p; p = &(*p)->next)
		if ((*p)->handle == sub) {
			wsub *s = *p;
			*p = s->next;
			free(s);
			break;
		}
	pthread_mutex_unlock(&w->mu);
}

static void fire_token(void *arg)
{
	s0_cancel_token_cancel(arg);
}

int s0__engine_watch_wait(s0__engine *e, const char *id, uint64_t since, int64_t timeout_ms,
                          s0_cancel_token *cancel, uint64_t *version_out)
{
	if (!id)
		id = "";
	/* One token the clock's sleep observes: fired by cancel or by the change. */
	s0__cancel_link link;
	if (s0__cancel_link_init(&link, cancel, NULL, NULL) < 0)
		return S0_ENOMEM;
	int sub = s0__engine_watch_subscribe(e, id, since, fire_token, link.token);
	int rc = S0_OK;
	if (!sub) {
		rc = S0_ENOMEM;
	} else if (s0__engine_watch_version(e, id) <= since) {
		int64_t ms = timeout_ms < 0 ? INT64_MAX / 4 : timeout_ms;
		e->opt.clock.sleep_ms(e->opt.clock.ctx, ms, link.token);
	}
	s0__engine_watch_unsubscribe(e, sub);
	s0__cancel_link_free(&link);
	uint64_t v = s0__engine_watch_version(e, id);
	if (rc == S0_OK) {
		if (v > since) {
			if (version_out)
				*version_out = v;
		} else {
			rc = s0_cancel_token_is_canceled(cancel) ? S0_ECANCELED : S0_ETIMEDOUT;
		}
	}
	return rc;
}
