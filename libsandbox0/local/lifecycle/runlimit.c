/*
 * The continuous-run limit (UC-14; docs/decisions.md "Continuous-run
 * limit"): a runtime generation that has run `run_limit_ms` without a pause
 * gets its sandbox's timeout action — the planned filesystem-only pause of
 * a soft TTL (TTL-05), or, for a sandbox whose timeout is a hard deadline
 * (no soft TTL, a hard one: the UCloud-style lifecycle `on_timeout:
 * "kill"` as the server and the facades translate it), the delete of a hard
 * TTL. A resume starts a new generation (a new runtime, started_at_ms = its
 * start), so the count starts again.
 */
#include <stdlib.h>
#include <string.h>

#include "local/lifecycle/engine_internal.h"

/* Whether the sandbox's timeout is a hard deadline (the kill action). */
static bool kills_on_timeout(const s0__sandbox_row *row)
{
	return row->rec.ttl_sec == 0 && row->rec.hard_ttl_sec > 0;
}

/* The ids of sandboxes whose current generation reached the limit (caller frees). */
static char **overdue(s0__engine *e, int64_t now, size_t *n)
{
	char **ids = NULL;
	size_t cap = 0;
	*n = 0;
	pthread_mutex_lock(&e->mu);
	for (s0__runtime *rt = e->node.runtimes; rt; rt = rt->next) {
		if (!rt->ready || rt->fenced || rt->halted || now - rt->started_at_ms < e->opt.run_limit_ms)
			continue;
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 8;
			char **v = realloc(ids, nc * sizeof *v);
			if (!v)
				break; /* the next pass tries again */
			ids = v;
			cap = nc;
		}
		if (!(ids[*n] = s0__strdup(rt->sandbox_id)))
			break;
		(*n)++;
	}
	pthread_mutex_unlock(&e->mu);
	return ids;
}

void s0__engine_run_limit_scan(s0__engine *e)
{
	if (e->opt.run_limit_ms <= 0)
		return;
	int64_t now = s0__engine_now(e);
	size_t n = 0;
	char **ids = overdue(e, now, &n);
	for (size_t i = 0; i < n; i++) {
		s0__sandbox_row row = {0};
		if (s0__meta_sandbox_get(e->meta, NULL, ids[i], &row, NULL) == S0_OK &&
		    row.rec.status == S0_STATUS_RUNNING && !row.rec.paused) {
			if (kills_on_timeout(&row)) {
				s0__engine_delete_kind(e, NULL, ids[i], S0__OP_HARD_DELETE, NULL);
			} else {
				s0__sblock *l = s0__engine_lock(e, ids[i]);
				s0__sandbox_row cur = {0}; /* again under the lock */
				if (s0__meta_sandbox_get(e->meta, NULL, ids[i], &cur, NULL) == S0_OK &&
				    !strcmp(cur.rec.runtime_id, row.rec.runtime_id))
					s0__engine_request_timeout_pause(e, &cur);
				s0__sandbox_rec_clear(&cur.rec);
				s0__engine_unlock(e, l);
			}
		}
		s0__sandbox_rec_clear(&row.rec);
		free(ids[i]);
	}
	free(ids);
}
