/*
 * Garbage collection: mark from the roots, sweep the rest.
 *
 * Safety against concurrent publications (which may *reuse* an existing
 * object by finding it stored): every publication records each id it
 * stores or reuses in its s0__pubrec before asking the object store whether
 * the id exists (s0__bstore_pub_touch), and GC deletes only under pin_mu
 * after filtering out every id recorded by a publication in flight, or by
 * one that finished while this GC ran (gc_keep). So either the publication
 * recorded the id first (GC skips it) or GC deleted it first (the
 * publication then sees it absent and stores it again). Objects a
 * publication shares with its base are reachable from the base, which its
 * branch pins. Pins are read before the roots provider is called, so a
 * generation recorded durably before its pin is dropped is always seen.
 */
#include "local/blocks/bstore_impl.h"

#include <stdlib.h>
#include <string.h>

#include "local/objects/crash.h"

#define SWEEP_BATCH 1024

typedef struct gc_run {
	s0__bstore *bs;
	s0__genid *gens;
	size_t n_gens, cap_gens;
	s0__idmap live;
	s0__objid *listed;
	size_t n_listed, cap_listed;
} gc_run;

static int push_id(s0__objid **v, size_t *n, size_t *cap, const s0__objid *id)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		s0__objid *nv = realloc(*v, nc * sizeof *nv);
		if (!nv)
			return S0_ENOMEM;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = *id;
	return S0_OK;
}

static int emit(void *ctx, int kind, const s0__objid *id)
{
	gc_run *r = ctx;
	if (kind == S0__GC_ROOT_GENERATION)
		return push_id(&r->gens, &r->n_gens, &r->cap_gens, id);
	if (kind == S0__GC_ROOT_OBJECT)
		return s0__idmap_put(&r->live, id, 0, NULL) < 0 ? S0_ENOMEM : S0_OK;
	return S0_EINVAL;
}

static int list_cb(const s0__objid *id, uint64_t sealed_bytes, void *payload)
{
	gc_run *r = payload;
	return push_id(&r->listed, &r->n_listed, &r->cap_listed, id) < 0;
}

static int mark_page(gc_run *r, const s0__objid *page, int level, s0_error **err)
{
	bool seen = false;
	if (s0__idmap_put(&r->live, page, 0, &seen) < 0)
		return s0__error_nomem(err);
	if (seen)
		return S0_OK;
	s0__centry *e;
	int rc = s0__bstore_page_get(r->bs, page, S0__MAP_PAGE_BYTES, &e, err);
	if (rc < 0)
		return rc;
	s0__objid ids[S0__MAP_FANOUT];
	memcpy(ids, s0__centry_data(e), sizeof ids);
	s0__cache_release(r->bs->pages, e);
	for (size_t i = 0; i < S0__MAP_FANOUT && rc == S0_OK; i++) {
		if (s0__objid_is_zero(&ids[i]))
			continue;
		if (level > 0)
			rc = mark_page(r, &ids[i], level - 1, err);
		else if (s0__idmap_put(&r->live, &ids[i], 0, NULL) < 0)
			rc = s0__error_nomem(err);
	}
	return rc;
}

static int mark_gen(gc_run *r, const s0__genid *gen, s0_error **err)
{
	if (s0__idmap_get(&r->live, gen, NULL))
		return S0_OK;
	s0__gen_info g;
	s0_error *e = NULL;
	int rc = s0__gen_load(r->bs, gen, &g, &e);
	if (rc == S0_OK && s0__idmap_put(&r->live, gen, 0, NULL) < 0)
		rc = s0__error_nomem(&e);
	if (rc == S0_OK && !s0__objid_is_zero(&g.root))
		rc = mark_page(r, &g.root, (int)g.depth - 1, &e);
	if (rc < 0) {
		char hex[S0__OBJID_HEX_BYTES];
		s0__objid_hex(gen, hex);
		rc = s0__error_set(err, rc == S0_ENOMEM ? S0_ENOMEM : S0_ECORRUPT, "gc_root_damaged",
		                   "GC stopped, nothing deleted: root generation %s: %s", hex,
		                   e ? s0_error_message(e) : "error");
		s0_error_free(e);
	}
	return rc;
}

/* Under pin_mu: whether a publication in flight or finished during this
 * GC uses id. */
static bool in_use(s0__bstore *bs, const s0__objid *id)
{
	if (s0__idmap_get(&bs->gc_keep, id, NULL) || s0__idmap_get(&bs->pins, id, NULL))
		return true;
	for (s0__pubrec *p = bs->inflight; p; p = p->next)
		if (s0__idmap_get(&p->touched, id, NULL))
			return true;
	return false;
}

static int sweep(gc_run *r, s0__gc_stats *st, s0_error **err)
{
	s0__bstore *bs = r->bs;
	s0__objid *cand = malloc(SWEEP_BATCH * sizeof *cand);
	if (!cand)
		return s0__error_nomem(err);
	int rc = S0_OK;
	for (size_t i = 0; i < r->n_listed && rc == S0_OK;) {
		size_t k = 0;
		pthread_mutex_lock(&bs->pin_mu);
		for (; i < r->n_listed && k < SWEEP_BATCH; i++)
			if (!s0__idmap_get(&r->live, &r->listed[i], NULL) && !in_use(bs, &r->listed[i]))
				cand[k++] = r->listed[i];
		uint64_t freed = 0, deleted = 0;
		rc = s0__objstore_delete(bs->os, cand, k, &deleted, &freed, err);
		pthread_mutex_unlock(&bs->pin_mu);
		for (size_t j = 0; rc == S0_OK && j < k; j++) {
			s0__cache_forget(bs->chunks, &cand[j]);
			s0__cache_forget(bs->pages, &cand[j]);
		}
		st->objects_deleted += deleted;
		st->bytes_freed += freed;
	}
	free(cand);
	return rc;
}

static int run(gc_run *r, s0__gc_stats *st, s0_error **err)
{
	s0__bstore *bs = r->bs;
	int rc = S0_OK;
	/* 1. Pins first, then the provider (see the comment at the top). */
	pthread_mutex_lock(&bs->pin_mu);
	bs->gc_active = true;
	s0__idmap_clear(&bs->gc_keep);
	size_t pos = 0;
	const s0__idmap_slot *s;
	while (rc == S0_OK && (s = s0__idmap_next(&bs->pins, &pos)))
		rc = push_id(&r->gens, &r->n_gens, &r->cap_gens, &s->id);
	pthread_mutex_unlock(&bs->pin_mu);
	if (rc < 0)
		return s0__error_nomem(err);
	if (bs->roots && (rc = bs->roots(bs->roots_payload, emit, r, err)) < 0)
		return rc;
	/* 2. What is stored now; anything committed later is not a candidate. */
	if ((rc = s0__objstore_list(bs->os, list_cb, r, err)) < 0)
		return rc;
	s0__crash_point("gc.listed");
	for (size_t i = 0; i < r->n_gens && rc == S0_OK; i++)
		rc = mark_gen(r, &r->gens[i], err);
	if (rc < 0)
		return rc;
	s0__crash_point("gc.marked");
	st->roots = r->n_gens;
	st->objects_listed = r->n_listed;
	st->objects_live = s0__idmap_count(&r->live);
	if ((rc = sweep(r, st, err)) < 0)
		return rc;
	s0__crash_point("gc.swept");
	return S0_OK;
}

int s0__bstore_gc(s0__bstore *bs, s0__gc_stats *stats, s0_error **err)
{
	gc_run r = {.bs = bs};
	s0__gc_stats st = {0};
	pthread_mutex_lock(&bs->gc_mu);
	int rc = run(&r, &st, err);
	pthread_mutex_lock(&bs->pin_mu);
	bs->gc_active = false;
	s0__idmap_clear(&bs->gc_keep);
	pthread_mutex_unlock(&bs->pin_mu);
	if (rc == S0_OK)
		rc = s0__objstore_maintain(bs->os, err);
	if (rc == S0_OK)
		s0__crash_point("gc.done");
	pthread_mutex_unlock(&bs->gc_mu);
	free(r.gens);
	free(r.listed);
	s0__idmap_free(&r.live);
	atomic_fetch_add(&bs->c[S0__BC_GC_DELETED], st.objects_deleted);
	atomic_fetch_add(&bs->c[S0__BC_GC_FREED], st.bytes_freed);
	if (rc == S0_OK) {
		atomic_fetch_add(&bs->c[S0__BC_GC_RUNS], 1);
		if (stats)
			*stats = st;
	}
	return rc;
}
