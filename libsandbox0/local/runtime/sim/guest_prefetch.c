/* Background prefetch of lazily restored heap chunks (guest.h). */
#include "local/runtime/sim/guest_impl.h"

#include <stdlib.h>

static void report(s0__guest *g, int32_t pid, const s0_error *e)
{
	pthread_mutex_lock(&g->mu);
	if (g->on_damage)
		g->on_damage(g->damage_payload, pid, e);
	pthread_mutex_unlock(&g->mu);
}

static void *prefetch_main(void *arg)
{
	s0__guest *g = arg;
	s0__guest_heapref *v = NULL;
	size_t n = 0;
	pthread_mutex_lock(&g->mu);
	int rc = s0__guest_heaps_locked(g, &v, &n, NULL);
	pthread_mutex_unlock(&g->mu);
	if (rc < 0)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t chunks = s0__heap_nchunks(v[i].heap);
		for (size_t c = 0; c < chunks && !atomic_load(&g->prefetch_stop); c++) {
			bool loaded;
			s0_error *e = NULL;
			if (s0__heap_prefetch(v[i].heap, c, &loaded, &e) == S0_ECORRUPT)
				report(g, v[i].pid, e);
			s0_error_free(e);
		}
		s0__heap_unref(v[i].heap);
	}
	free(v);
	return NULL;
}

int s0__guest_prefetch_start(s0__guest *g, s0_error **err)
{
	pthread_mutex_lock(&g->mu);
	int rc = S0_OK;
	if (!g->prefetch_started) {
		atomic_store(&g->prefetch_stop, false);
		if (pthread_create(&g->prefetch_thr, NULL, prefetch_main, g) != 0)
			rc = s0__error_set(err, S0_ERROR, NULL, "cannot start the prefetch thread");
		else
			g->prefetch_started = true;
	}
	pthread_mutex_unlock(&g->mu);
	return rc;
}

void s0__guest_prefetch_wait(s0__guest *g)
{
	pthread_mutex_lock(&g->mu);
	bool started = g->prefetch_started;
	g->prefetch_started = false;
	pthread_mutex_unlock(&g->mu);
	if (started)
		pthread_join(g->prefetch_thr, NULL);
}
