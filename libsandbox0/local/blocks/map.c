/* The generation map: a persistent radix tree of 4 KiB pages of ids. */
#include "local/blocks/bstore_impl.h"

#include <stdlib.h>
#include <string.h>

#define BITS 7 /* log2(S0__MAP_FANOUT) */
_Static_assert(1u << BITS == S0__MAP_FANOUT, "fan-out");

int s0__map_walk(s0__bstore *bs, const s0__gen_info *g, int level, uint64_t index,
                 s0__objid *out, s0_error **err)
{
	s0__objid node = g->root;
	for (int lvl = (int)g->depth - 1; lvl > level; lvl--) {
		if (s0__objid_is_zero(&node))
			break;
		s0__centry *e;
		int rc = s0__bstore_page_get(bs, &node, S0__MAP_PAGE_BYTES, &e, err);
		if (rc < 0)
			return rc;
		unsigned shift = BITS * (unsigned)(lvl - level - 1);
		size_t slot = (size_t)(index >> shift) & (S0__MAP_FANOUT - 1);
		memcpy(node.b, (const uint8_t *)s0__centry_data(e) + slot * S0__OBJID_BYTES,
		       S0__OBJID_BYTES);
		s0__cache_release(bs->pages, e);
	}
	*out = node;
	return S0_OK;
}

/* One page to rebuild at some level. */
typedef struct page_job {
	uint64_t page;   /* page index at this level */
	size_t first, n; /* its updates */
	s0__objid old_id, new_id;
} page_job;

typedef struct build_ctx {
	s0__bstore *bs;
	s0__branch *br;
	const s0__gen_info *g;
	s0__pubrec *pub;
	s0__objbatch *b;
	int level;
	const s0__map_update *ups;
	page_job *jobs;
} build_ctx;

/* Store a new page (hash, pin for GC, put, cache). */
static int store_page(build_ctx *c, s0__objctx *cx, uint8_t *page, s0__objid *id,
                      s0_error **err)
{
	s0__bstore *bs = c->bs;
	s0__objstore_hash(bs->os, page, S0__MAP_PAGE_BYTES, id);
	bool stored = false;
	int rc = s0__bstore_pub_touch(bs, c->pub, id, err);
	if (rc == S0_OK)
		rc = s0__objstore_put_hashed(bs->os, cx, c->b, id, page, S0__MAP_PAGE_BYTES, &stored,
		                             err);
	if (rc < 0)
		return rc;
	if (stored) {
		atomic_fetch_add(&bs->c[S0__BC_PAGES_STORED], 1);
		atomic_fetch_add(&bs->c[S0__BC_OBJW], 1);
		atomic_fetch_add(&bs->c[S0__BC_BYTESW], S0__MAP_PAGE_BYTES);
		if (c->br) {
			atomic_fetch_add(&c->br->c[S0__BR_PUB_OBJECTS], 1);
			atomic_fetch_add(&c->br->c[S0__BR_PUB_BYTES], S0__MAP_PAGE_BYTES);
		}
	}
	void *copy = malloc(S0__MAP_PAGE_BYTES);
	if (copy) {
		memcpy(copy, page, S0__MAP_PAGE_BYTES);
		s0__centry *e = s0__cache_put(bs->pages, id, copy, S0__MAP_PAGE_BYTES);
		if (e)
			s0__cache_release(bs->pages, e);
	}
	return S0_OK;
}

static int build_page(void *arg, size_t i, s0__objctx *cx, s0_error **err)
{
	build_ctx *c = arg;
	page_job *j = &c->jobs[i];
	uint8_t page[S0__MAP_PAGE_BYTES];
	int rc = s0__map_walk(c->bs, c->g, c->level, j->page, &j->old_id, err);
	if (rc < 0)
		return rc;
	if (s0__objid_is_zero(&j->old_id)) {
		memset(page, 0, sizeof page);
	} else {
		s0__centry *e;
		if ((rc = s0__bstore_page_get(c->bs, &j->old_id, S0__MAP_PAGE_BYTES, &e, err)) < 0)
			return rc;
		memcpy(page, s0__centry_data(e), sizeof page);
		s0__cache_release(c->bs->pages, e);
	}
	bool changed = false;
	for (size_t k = j->first; k < j->first + j->n; k++) {
		uint8_t *slot = page + (c->ups[k].index & (S0__MAP_FANOUT - 1)) * S0__OBJID_BYTES;
		changed |= memcmp(slot, c->ups[k].id.b, S0__OBJID_BYTES) != 0;
		memcpy(slot, c->ups[k].id.b, S0__OBJID_BYTES);
	}
	if (!changed)
		j->new_id = j->old_id;
	else if (s0__is_zero(page, sizeof page))
		memset(&j->new_id, 0, sizeof j->new_id);
	else
		return store_page(c, cx, page, &j->new_id, err);
	return S0_OK;
}

/* Group sorted updates by page; jobs has room for n. */
static size_t group(const s0__map_update *ups, size_t n, page_job *jobs)
{
	size_t k = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		uint64_t page = ups[i].index >> BITS;
		while (j < n && ups[j].index >> BITS == page)
			j++;
		jobs[k++] = (page_job){.page = page, .first = i, .n = j - i};
		i = j;
	}
	return k;
}

int s0__map_build(s0__bstore *bs, s0__branch *br, const s0__gen_info *g, s0__pubrec *pub,
                  s0__objbatch *b, s0__map_update *ups, size_t n, s0__objid *root_out,
                  s0_error **err)
{
	page_job *jobs = malloc((n ? n : 1) * sizeof *jobs);
	if (!jobs)
		return s0__error_nomem(err);
	build_ctx c = {bs, br, g, pub, b, 0, ups, jobs};
	int rc = S0_OK;
	s0__objid root = g->root;
	for (int level = 0; level < (int)g->depth && n; level++) {
		size_t nj = group(ups, n, jobs);
		c.level = level;
		if ((rc = s0__par_run(bs, nj, build_page, &c, err)) < 0)
			break;
		/* The changed pages are the next level's updates. */
		n = 0;
		for (size_t i = 0; i < nj; i++)
			if (!s0__objid_eq(&jobs[i].old_id, &jobs[i].new_id))
				ups[n++] = (s0__map_update){jobs[i].page, jobs[i].new_id};
		if (level == (int)g->depth - 1 && n)
			root = ups[0].id;
	}
	free(jobs);
	if (rc == S0_OK)
		*root_out = root;
	return rc;
}
