/*
 * What generations occupy in the object store (UC-16 stand-in for storage
 * billing; bstore.h s0__bstore_gen_usage): the sealed bytes of every object
 * reachable from a generation — its descriptor, map pages and chunks — each
 * counted once, whether or not other generations share it. The same walk
 * as GC's mark (gc.c), read-only.
 */
#include "local/blocks/bstore_impl.h"

#include <string.h>

typedef struct usage_walk {
	s0__bstore *bs;
	const s0__idmap *sizes; /* every stored object -> sealed bytes */
	s0__idmap seen;
	s0__gen_usage u;
} usage_walk;

static int list_size(const s0__objid *id, uint64_t sealed_bytes, void *payload)
{
	return s0__idmap_put(payload, id, sealed_bytes, NULL) < 0;
}

/* Count id once (stored objects only). */
static int count(usage_walk *w, const s0__objid *id, bool *first)
{
	bool existed = false;
	if (s0__idmap_put(&w->seen, id, 0, &existed) < 0)
		return S0_ENOMEM;
	*first = !existed;
	uint64_t bytes = 0;
	if (!existed && s0__idmap_get(w->sizes, id, &bytes)) {
		w->u.objects++;
		w->u.bytes += bytes;
	}
	return S0_OK;
}

static int walk_page(usage_walk *w, const s0__objid *page, int level, s0_error **err)
{
	bool first;
	if (count(w, page, &first) < 0)
		return s0__error_nomem(err);
	if (!first)
		return S0_OK;
	s0__centry *e;
	int rc = s0__bstore_page_get(w->bs, page, S0__MAP_PAGE_BYTES, &e, err);
	if (rc < 0)
		return rc;
	s0__objid ids[S0__MAP_FANOUT];
	memcpy(ids, s0__centry_data(e), sizeof ids);
	s0__cache_release(w->bs->pages, e);
	for (size_t i = 0; i < S0__MAP_FANOUT && rc == S0_OK; i++) {
		if (s0__objid_is_zero(&ids[i]))
			continue;
		if (level > 0)
			rc = walk_page(w, &ids[i], level - 1, err);
		else if (count(w, &ids[i], &first) < 0)
			rc = s0__error_nomem(err);
	}
	return rc;
}

int s0__bstore_gen_usage(s0__bstore *bs, const s0__genid *gen, s0__gen_usage *out,
                         s0_error **err)
{
	memset(out, 0, sizeof *out);
	s0__idmap sizes = {0};
	usage_walk w = {.bs = bs, .sizes = &sizes};
	int rc = s0__objstore_list(bs->os, list_size, &sizes, err); /* < 0 also when out of memory */
	s0__gen_info g;
	if (rc == S0_OK)
		rc = s0__gen_load(bs, gen, &g, err);
	bool first;
	if (rc == S0_OK && count(&w, gen, &first) < 0) /* the descriptor */
		rc = s0__error_nomem(err);
	if (rc == S0_OK && !s0__objid_is_zero(&g.root))
		rc = walk_page(&w, &g.root, (int)g.depth - 1, err);
	if (rc == S0_OK)
		*out = w.u;
	s0__idmap_free(&w.seen);
	s0__idmap_free(&sizes);
	return rc;
}
