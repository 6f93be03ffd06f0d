/* Reads spanning several chunks fetch the missing base chunks in parallel
 * (all cores, like publish) into the chunk cache before copying out. */
#include "local/blocks/bstore_impl.h"

#include <stdlib.h>

typedef struct prefetch {
	s0__branch *b;
	s0__objid *ids;
} prefetch;

static int fetch_job(void *arg, size_t i, s0__objctx *cx, s0_error **err)
{
	prefetch *p = arg;
	s0__centry *e;
	int rc = s0__bstore_chunk_get(p->b->bs, p->b, &p->ids[i], p->b->cs, &e, err);
	if (rc == S0_OK)
		s0__cache_release(p->b->bs->chunks, e);
	return rc;
}

void s0__branch_prefetch(s0__branch *b, uint64_t first, uint64_t n)
{
	s0__bstore *bs = b->bs;
	if (bs->threads < 2 || n < 2 || n * b->cs > s0__cache_capacity(bs->chunks) / 2)
		return;
	prefetch p = {b, malloc(n * sizeof *p.ids)};
	size_t k = 0;
	for (uint64_t idx = first; p.ids && idx < first + n; idx++) {
		if (s0__u64map_get(&b->dirty, idx, NULL))
			continue;
		if (s0__map_walk(bs, &b->base, -1, idx, &p.ids[k], NULL) < 0)
			break;
		if (!s0__objid_is_zero(&p.ids[k]) && !s0__cache_has(bs->chunks, &p.ids[k]))
			k++;
	}
	/* Best effort: a failure shows again, in order, when the read copies. */
	if (k >= 2)
		s0__par_run(bs, k, fetch_job, &p, NULL);
	free(p.ids);
}
