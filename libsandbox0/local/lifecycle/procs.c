/*
 * Processes of a runtime (design.md §5 "Runtime and checkpoints"): each
 * runtime generation has a simulated guest (runtime/guest.h) bound to its
 * files namespace; each sandbox has one sessions registry
 * (runtime/sessions.h) that the engine keeps across runtime generations,
 * so a filesystem-only replacement keeps session identities and journals
 * (seed "TTL And Auto Resume"). Registries live on the node side: a
 * manager restart keeps them; the metadata store keeps a copy for a
 * reopened backend (sessions_store.c).
 */
#include <stdlib.h>
#include <string.h>

#include "local/lifecycle/engine_internal.h"
#include "local/runtime/guest.h"
#include "local/runtime/sessions.h"

static s0__sesreg *find_locked(s0__engine *e, const char *id)
{
	for (s0__sesreg *r = e->sesregs; r; r = r->next)
		if (!strcmp(r->id, id))
			return r;
	return NULL;
}

s0__sessions *s0__engine_sessions_held(s0__engine *e, const char *id)
{
	pthread_mutex_lock(&e->mu);
	s0__sesreg *r = find_locked(e, id);
	s0__sessions *s = r ? r->s : NULL;
	pthread_mutex_unlock(&e->mu);
	return s;
}

/* Insert a loaded registry unless another thread did first; the one in use. */
static s0__sessions *adopt(s0__engine *e, const char *id, s0__sessions *loaded)
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
	s0__sessions *s = r ? r->s : NULL;
	pthread_mutex_unlock(&e->mu);
	s0__sessions_free(loaded);
	return s;
}

s0__sessions *s0__engine_sessions_find(s0__engine *e, const char *id)
{
	s0__sessions *s = s0__engine_sessions_held(e, id);
	if (s)
		return s;
	s0__sessions *loaded = s0__engine_sessions_load(e, id);
	return loaded ? adopt(e, id, loaded) : NULL;
}

s0__sessions *s0__engine_sessions(s0__engine *e, const char *id, int64_t generation)
{
	s0__engine_sessions_find(e, id); /* a stored registry first */
	pthread_mutex_lock(&e->mu);
	s0__sesreg *r = find_locked(e, id);
	if (!r && (r = calloc(1, sizeof *r))) {
		s0__sessions_opts o = {.clock = &e->opt.clock, .generation = generation};
		if (s0__sessions_new(&o, &r->s, NULL) < 0) {
			free(r);
			r = NULL;
		} else {
			s0__strlcpy(r->id, id, sizeof r->id);
			r->next = e->sesregs;
			e->sesregs = r;
		}
	}
	s0__sessions *s = r ? r->s : NULL;
	pthread_mutex_unlock(&e->mu);
	return s;
}

void s0__engine_sessions_set(s0__engine *e, const char *id, s0__sessions *s)
{
	s0__sessions *old = NULL;
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
	s0__sessions_free(old);
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
		s0__sessions_free(gone->s);
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
		s0__sessions_free(r->s);
		free(r);
		r = next;
	}
}

int s0__engine_guest_new(s0__engine *e, const s0__sandbox_row *row, s0__guest **out,
                         s0_error **err)
{
	cJSON *cfg = cJSON_Parse(row->rec.config_json ? row->rec.config_json : "{}");
	const cJSON *env = cJSON_GetObjectItemCaseSensitive(cfg, "env_vars");
	s0__guest_opts o = {.clock = &e->opt.clock, .env_vars = cJSON_IsObject(env) ? env : NULL};
	int rc = s0__guest_new(&o, out, err);
	cJSON_Delete(cfg);
	return rc;
}

void s0__engine_guest_sync(s0__engine *e, s0__runtime *rt)
{
	int64_t now = s0__engine_now(e);
	pthread_mutex_lock(&e->mu);
	int64_t d = rt->guest ? now - rt->guest_synced_ms : 0;
	if (d > 0)
		rt->guest_synced_ms = now;
	s0__guest *g = rt->guest;
	pthread_mutex_unlock(&e->mu);
	if (d > 0)
		s0__guest_advance(g, d, NULL);
}
