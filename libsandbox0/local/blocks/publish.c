/* Seal and publish: store dirty chunks and path-copied map pages in one
 * batch, then a descriptor; durable before the generation id is returned. */
#include "local/blocks/bstore_impl.h"

#include <stdlib.h>
#include <string.h>

#include "local/objects/crash.h"

/* The dirty set of a sealed branch, sorted by chunk index, and results. */
typedef struct chunk_work {
	s0__branch *b;
	s0__pubrec *pub;
	s0__objbatch *batch;
	size_t n;
	uint64_t *idx;
	uint64_t *slot;
	s0__objid *base; /* base generation's id of each chunk */
	s0__objid *id;   /* new id of each chunk (zero: all zero) */
} chunk_work;

static void count_stored(s0__bstore *bs, s0__branch *br, bool chunk, size_t plain)
{
	atomic_fetch_add(&bs->c[S0__BC_OBJW], 1);
	atomic_fetch_add(&bs->c[S0__BC_BYTESW], plain);
	if (chunk)
		atomic_fetch_add(&bs->c[S0__BC_CHUNKS_STORED], 1);
	if (br) {
		atomic_fetch_add(&br->c[S0__BR_PUB_OBJECTS], 1);
		atomic_fetch_add(&br->c[S0__BR_PUB_BYTES], plain);
		if (chunk)
			atomic_fetch_add(&br->c[S0__BR_PUB_CHUNKS], 1);
	}
}

/* Store the content of a dirty chunk (already hashed to id) in the batch. */
static int store_chunk(chunk_work *w, s0__objctx *cx, const s0__objid *id, const uint8_t *buf,
                       s0_error **err)
{
	s0__bstore *bs = w->b->bs;
	bool stored = false;
	int rc = s0__bstore_pub_touch(bs, w->pub, id, err);
	if (rc == S0_OK)
		rc = s0__objstore_put_hashed(bs->os, cx, w->batch, id, buf, w->b->cs, &stored, err);
	if (rc == S0_OK && stored)
		count_stored(bs, w->b, true, w->b->cs);
	else if (rc == S0_OK)
		atomic_fetch_add(&bs->c[S0__BC_CHUNKS_DEDUP], 1);
	return rc;
}

/* Dirty chunk i: its new id (zero when all zero), stored unless it equals
 * the base chunk (elided) or is stored already (dedupe). */
static int chunk_job(void *arg, size_t i, s0__objctx *cx, s0_error **err)
{
	chunk_work *w = arg;
	s0__branch *b = w->b;
	uint8_t *buf = NULL;
	int rc = s0__map_walk(b->bs, &b->base, -1, w->idx[i], &w->base[i], err);
	memset(&w->id[i], 0, sizeof w->id[i]);
	if (rc == S0_OK && w->slot[i] != S0__SLOT_ZERO) {
		if (!(buf = malloc(b->cs)))
			rc = s0__error_nomem(err);
		else if ((rc = s0__spill_read(b, w->slot[i], 0, buf, b->cs, err)) == S0_OK &&
		         !s0__is_zero(buf, b->cs))
			s0__objstore_hash(b->bs->os, buf, b->cs, &w->id[i]);
	}
	if (rc == S0_OK && s0__objid_eq(&w->id[i], &w->base[i]))
		atomic_fetch_add(&b->bs->c[S0__BC_CHUNKS_ELIDED], 1);
	else if (rc == S0_OK && !s0__objid_is_zero(&w->id[i]))
		rc = store_chunk(w, cx, &w->id[i], buf, err);
	if (rc == S0_OK && buf && !s0__objid_is_zero(&w->id[i]) &&
	    !s0__cache_has(b->bs->chunks, &w->id[i])) {
		/* The next runtime on this generation reads these chunks first
		 * (a resume right after the pause): keep them, as the content
		 * they are named by, instead of fetching them back from the
		 * object store. Best effort; the cache takes buf. */
		s0__centry *e = s0__cache_put(b->bs->chunks, &w->id[i], buf, b->cs);
		buf = NULL;
		if (e)
			s0__cache_release(b->bs->chunks, e);
	}
	free(buf);
	return rc;
}

static int cmp_u64pair(const void *a, const void *b)
{
	uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];
	return x < y ? -1 : x > y;
}

/* Collect the dirty table sorted by chunk index into w. */
static int collect_dirty(s0__branch *b, chunk_work *w, s0_error **err)
{
	size_t n = b->dirty.count, pos = 0, k = 0;
	uint64_t (*pairs)[2] = malloc((n ? n : 1) * sizeof *pairs);
	w->idx = malloc((n ? n : 1) * sizeof *w->idx);
	w->slot = malloc((n ? n : 1) * sizeof *w->slot);
	w->base = malloc((n ? n : 1) * sizeof *w->base);
	w->id = malloc((n ? n : 1) * sizeof *w->id);
	if (!pairs || !w->idx || !w->slot || !w->base || !w->id) {
		free(pairs);
		return s0__error_nomem(err);
	}
	uint64_t key, val;
	while (s0__u64map_next(&b->dirty, &pos, &key, &val)) {
		pairs[k][0] = key;
		pairs[k][1] = val;
		k++;
	}
	qsort(pairs, k, sizeof *pairs, cmp_u64pair);
	for (size_t i = 0; i < k; i++) {
		w->idx[i] = pairs[i][0];
		w->slot[i] = pairs[i][1];
	}
	w->n = k;
	free(pairs);
	return S0_OK;
}

static void free_work(chunk_work *w)
{
	free(w->idx);
	free(w->slot);
	free(w->base);
	free(w->id);
}

/* Store the descriptor of g and commit the batch; then end pub, pinning
 * the generation. On failure pub is still registered. */
static int finish_gen(s0__bstore *bs, s0__branch *br, s0__pubrec *pub, s0__objbatch *batch,
                      const s0__gen_info *g, s0__genid *out, s0_error **err)
{
	uint8_t desc[S0__GEN_BYTES];
	s0__genid id;
	s0__objctx *cx;
	bool stored = false;
	s0__gen_encode(g, desc);
	s0__objstore_hash(bs->os, desc, sizeof desc, &id);
	int rc = s0__bstore_pub_touch(bs, pub, &id, err);
	if (rc == S0_OK && (rc = s0__bstore_ctx_get(bs, &cx, err)) == S0_OK) {
		rc = s0__objstore_put_hashed(bs->os, cx, batch, &id, desc, sizeof desc, &stored, err);
		s0__bstore_ctx_put(bs, cx);
	}
	if (rc < 0) {
		s0__objstore_abort(bs->os, batch);
		return rc;
	}
	if (stored)
		count_stored(bs, br, false, sizeof desc);
	if ((rc = s0__objstore_commit(bs->os, batch, err)) < 0)
		return rc;
	/* Durable: make it visible (pinned for the caller, safe from a running GC). */
	if ((rc = s0__bstore_pub_end(bs, pub, &id, err)) < 0)
		return rc;
	atomic_fetch_add(&bs->c[S0__BC_PUBS], 1);
	s0__crash_point("publish.visible");
	*out = id;
	return S0_OK;
}

/* Build and store the new generation of a sealed branch. */
static int publish_gen(s0__branch *b, s0__genid *out, s0__gen_info *g_out, s0_error **err)
{
	s0__bstore *bs = b->bs;
	chunk_work w = {.b = b};
	s0__gen_info g = b->base;
	int rc = collect_dirty(b, &w, err);
	if (rc == S0_OK && !(w.pub = s0__bstore_pub_begin(bs, err)))
		rc = S0_ENOMEM;
	if (rc < 0) {
		free_work(&w);
		return rc;
	}
	if ((rc = s0__objstore_begin(bs->os, &w.batch, err)) == S0_OK)
		rc = s0__par_run(bs, w.n, chunk_job, &w, err);
	s0__crash_point("publish.chunks_stored");
	/* Changed chunks become map updates. */
	s0__map_update *ups = malloc((w.n ? w.n : 1) * sizeof *ups);
	size_t nu = 0;
	if (rc == S0_OK && !ups)
		rc = s0__error_nomem(err);
	for (size_t i = 0; rc == S0_OK && i < w.n; i++) {
		if (s0__objid_eq(&w.id[i], &w.base[i]))
			continue;
		g.nonzero_chunks += s0__objid_is_zero(&w.base[i]) ? 1 : 0;
		g.nonzero_chunks -= s0__objid_is_zero(&w.id[i]) ? 1 : 0;
		ups[nu++] = (s0__map_update){w.idx[i], w.id[i]};
	}
	if (rc == S0_OK)
		rc = s0__map_build(bs, b, &b->base, w.pub, w.batch, ups, nu, &g.root, err);
	s0__crash_point("publish.pages_stored");
	free(ups);
	free_work(&w);
	g.parent = b->base_id;
	g.seq = b->base.seq + 1;
	if (rc == S0_OK) {
		rc = finish_gen(bs, b, w.pub, w.batch, &g, out, err);
		w.batch = NULL; /* committed or aborted */
	}
	if (rc < 0) {
		s0__objstore_abort(bs->os, w.batch);
		s0__bstore_pub_end(bs, w.pub, NULL, NULL);
		return rc;
	}
	*g_out = g;
	return S0_OK;
}

/* After a publish with S0__PUBLISH_CONTINUE: the branch continues on gen.
 * Cannot fail: gen is pinned already, so pinning it again allocates
 * nothing. */
static void rebase(s0__branch *b, const s0__genid *gen, const s0__gen_info *g)
{
	s0__bstore_pin(b->bs, gen, NULL);
	s0__bstore_unref(b->bs, &b->base_id);
	b->base_id = *gen;
	b->base = *g;
	s0__u64map_free(&b->dirty);
	s0__spill_reset(b);
	b->sealed = false;
}

int s0__branch_publish(s0__branch *b, uint32_t flags, s0__genid *out, s0_error **err)
{
	int rc = S0_OK;
	pthread_rwlock_wrlock(&b->lock);
	if (b->publishing || b->published)
		rc = s0__error_set(err, S0_ECONFLICT, "already_published",
		                   b->publishing ? "a publish of this branch is running"
		                                 : "this branch was already published");
	b->sealed = true;
	if (rc == S0_OK)
		b->publishing = true;
	pthread_rwlock_unlock(&b->lock);
	if (rc < 0)
		return rc;
	s0__crash_point("publish.fenced");
	for (int i = S0__BR_PUB_CHUNKS; i <= S0__BR_PUB_BYTES; i++)
		atomic_store(&b->c[i], 0);
	s0__genid gen;
	s0__gen_info g;
	rc = publish_gen(b, &gen, &g, err);
	pthread_rwlock_wrlock(&b->lock);
	b->publishing = false;
	if (rc == S0_OK && (flags & S0__PUBLISH_CONTINUE))
		rebase(b, &gen, &g);
	else if (rc == S0_OK)
		b->published = true;
	pthread_rwlock_unlock(&b->lock);
	if (rc == S0_OK)
		*out = gen;
	return rc;
}

int s0__bstore_create(s0__bstore *bs, uint64_t size_bytes, s0__genid *out, s0_error **err)
{
	if (!size_bytes || size_bytes > S0__BSTORE_SIZE_MAX)
		return s0__error_set(err, S0_EINVAL, "bad_volume_size",
		                     "volume size %llu is outside [1, 2^50] bytes",
		                     (unsigned long long)size_bytes);
	s0__gen_info g = {.size_bytes = size_bytes, .chunk_bytes = bs->chunk_bytes};
	g.depth = s0__map_depth((size_bytes + g.chunk_bytes - 1) / g.chunk_bytes);
	s0__pubrec *pub = s0__bstore_pub_begin(bs, err);
	if (!pub)
		return S0_ENOMEM;
	s0__objbatch *batch;
	int rc = s0__objstore_begin(bs->os, &batch, err);
	if (rc == S0_OK)
		rc = finish_gen(bs, NULL, pub, batch, &g, out, err);
	if (rc < 0)
		s0__bstore_pub_end(bs, pub, NULL, NULL);
	return rc;
}
