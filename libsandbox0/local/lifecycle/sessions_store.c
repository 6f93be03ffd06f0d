/*
 * Keeping each sandbox's sessions registry (its driver's, runtime/runtime.h) in the
 * metadata store, so supervised sessions — "a stable, sandbox-owned process
 * identity with a durable event journal" (docs/wire.md §8) — outlive a backend
 * restart. The blob is saved when a session is created, deleted or
 * re-specified, when a pause commits and when the backend closes; a
 * registry this process does not hold is loaded on first use. Journal
 * events after the last save are lost with an unplanned exit, like writes
 * after the last committed head (REC-01..REC-09).
 */
#include <stdlib.h>

#include "local/lifecycle/engine_internal.h"

void s0__engine_sessions_save(s0__engine *e, const char *id)
{
	struct s0__sessions *s = s0__engine_sessions_held(e, id);
	void *blob = NULL;
	size_t len = 0;
	if (s && e->rt_drv->sessions_save(s, &blob, &len, NULL) == S0_OK)
		s0__meta_sessions_put(e->meta, id, blob, len, NULL); /* best effort */
	free(blob);
}

struct s0__sessions *s0__engine_sessions_load(s0__engine *e, const char *id)
{
	void *blob = NULL;
	size_t len = 0;
	struct s0__sessions *s = NULL;
	if (s0__meta_sessions_get(e->meta, id, &blob, &len, NULL) == S0_OK) {
		if (e->rt_drv->sessions_load(e->rt_host, blob, len, 0 /* the blob's generation */,
		                             &s, NULL) < 0)
			s = NULL; /* a damaged blob: start without sessions */
	}
	free(blob);
	return s;
}

void s0__engine_sessions_save_all(s0__engine *e)
{
	pthread_mutex_lock(&e->mu);
	size_t n = 0;
	for (s0__sesreg *r = e->sesregs; r; r = r->next)
		n++;
	char (*ids)[S0__ID_MAX] = n ? calloc(n, sizeof *ids) : NULL;
	size_t k = 0;
	for (s0__sesreg *r = e->sesregs; ids && r; r = r->next)
		s0__strlcpy(ids[k++], r->id, sizeof ids[0]);
	pthread_mutex_unlock(&e->mu);
	for (size_t i = 0; i < k; i++)
		s0__engine_sessions_save(e, ids[i]);
	free(ids);
}
