/*
 * Processes of a runtime (docs/architecture.md "Runtime"): each
 * runtime generation has its driver's process host (runtime/runtime.h
 * procs()) bound to its files view; each sandbox has one sessions registry
 * (made and freed by the driver) that the engine keeps across runtime generations,
 * so a filesystem-only replacement keeps session identities and journals
 * (TTL-05..TTL-11). Registries live on the node side: a
 * manager restart keeps them; the metadata store keeps a copy for a
 * reopened backend (sessions_store.c).
 */
#include <stdlib.h>
#include <string.h>

#include "local/lifecycle/engine_internal.h"

static s0__sesreg *find_locked(s0__engine *e, const char *id)
{
	for (s0__sesreg *r = e->sesregs; r; r = r->next)
		if (!strcmp(r->id, id))
			return r;
	return NULL;
}

struct s0__sessions *s0__engine_sessions_held(s0__engine *e, const char *id)
{
	pthread_mutex_lock(&e->mu);
	s0__sesreg *r = find_locked(e, id);
	struct s0__sessions *s = r ? r->s : NULL;
	pthread_mutex_unlock(&e->mu);
	return s;
}

/* Insert a loaded registry unless another thread did first; the one in use. */
static struct s0__sessions *adopt(s0__engine *e, const char *id, struct s0__sessions *loaded)
{
	pthread_mutex_lock(&e->mu);
	s0__sesreg *r = find_locked(e, id);
	if (!r && (r = calloc(1, sizeof *r))) {
		s0__strlcpy(r->id, id, sizeof r->id);
		r->s = loaded;
		loaded = NULL;
		r->next = e->sesregs;
		e->sesregs = r;
	}
	struct s0__sessions *s = r ? r->s : NULL;
	pthread_mutex_unlock(&e->mu);
	e->rt_drv->sessions_free(loaded);
	return s;
}

struct s0__sessions *s0__engine_sessions_find(s0__engine *e, const char *id)
{
	struct s0__sessions *s = s0__engine_sessions_held(e, id);
	if (s)
		return s;
	struct s0__sessions *loaded = s0__engine_sessions_load(e, id);
	return loaded ? adopt(e, id, loaded) : NULL;
}

struct s0__sessions *s0__engine_sessions(s0__engine *e, const char *id, int64_t generation)
{
	s0__engine_sessions_find(e, id); /* a stored registry first */
	pthread_mutex_lock(&e->mu);
	s0__sesreg *r = find_locked(e, id);
	if (!r && (r = calloc(1, sizeof *r))) {
		if (e->rt_drv->sessions_new(e->rt_host, generation, &r->s, NULL) < 0) {
			free(r);
			r = NULL;
		} else {
			s0__strlcpy(r->id, id, sizeof r->id);
			r->next = e->sesregs;
			e->sesregs = r;
		}
	}
	struct s0__sessions *s = r ? r->s : NULL;
	pthread_mutex_unlock(&e->mu);
	return s;
}

void s0__engine_sessions_set(s0__engine *e, const char *id, struct s0__sessions *s)
{
	struct s0__sessions *old = NULL;
	pthread_mutex_lock(&e->mu);
	s0__sesreg *r = find_locked(e, id);
	if (!r && (r = calloc(1, sizeof *r))) {
		s0__strlcpy(r->id, id, sizeof r->id);
		r->next = e->sesregs;
		e->sesregs = r;
	}
	if (r) {
		old = r->s;
		r->s = s;
	} else {
		old = s;
	}
	pthread_mutex_unlock(&e->mu);
	e->rt_drv->sessions_free(old);
}

void s0__engine_sessions_drop(s0__engine *e, const char *id)
{
	s0__sesreg *gone = NULL;
	pthread_mutex_lock(&e->mu);
	for (s0__sesreg **p = &e->sesregs; *p; p = &(*p)->next)
		if (!strcmp((*p)->id, id)) {
			gone = *p;
			*p = gone->next;
			break;
		}
	pthread_mutex_unlock(&e->mu);
	if (gone) {
		e->rt_drv->sessions_free(gone->s);
		free(gone);
	}
	s0__meta_sessions_delete(e->meta, id, NULL);
}

void s0__engine_sessions_free_all(s0__engine *e)
{
	pthread_mutex_lock(&e->mu);
	s0__sesreg *r = e->sesregs;
	e->sesregs = NULL;
	pthread_mutex_unlock(&e->mu);
	while (r) {
		s0__sesreg *next = r->next;
		e->rt_drv->sessions_free(r->s);
		free(r);
		r = next;
	}
}

void s0__engine_guest_sync(s0__engine *e, s0__runtime *rt)
{
	if (!(e->rt_caps & S0__RT_CAP_VIRTUAL_TIME))
		return;
	int64_t now = s0__engine_now(e);
	pthread_mutex_lock(&e->mu);
	s0__rt_gen *g = rt->halted ? NULL : rt->gen;
	pthread_mutex_unlock(&e->mu);
	if (g) /* the caller's pin or lock keeps the generation */
		rt->drv->clock_sync(g, now);
}
