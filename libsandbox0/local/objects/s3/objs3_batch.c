/* S3 object store: batches (one temp file of pack records), packs PUT while
 * the batch is still being written (the streamer), commit (the remaining
 * packs and every index PUT in parallel, then catalogued). */
#include "local/objects/s3/objs3_upload.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "local/objects/crash.h"
#include "local/objects/idmap.h"
#include "local/objects/pack/pack.h"
#include "local/objects/s3/s3pack.h"
#include "local/objects/s3/s3tomb.h"

/* A commit PUTs its packs in rounds of at most ROUND_BYTES of records (at
 * least one pack), every pack of a round in flight together. */
#define ROUND_BYTES ((uint64_t)32 << 20)

int s0__objs3_begin(void *ctx, void **batch_out, s0_error **err)
{
	s0__objs3 *s = ctx;
	s3_batch *b = calloc(1, sizeof *b);
	if (!b)
		return s0__error_nomem(err);
	b->s = s;
	b->fd = -1;
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	pthread_mutex_lock(&s->mu);
	b->seq = s->next_batch++;
	pthread_mutex_unlock(&s->mu);
	/* deletions of other nodes before has() trusts the catalog; without
	 * them everything is uploaded again (the commit fails anyway while the
	 * endpoint is down) */
	b->untrusting = s0__s3tomb_sync(s, NULL) != S0_OK;
	*batch_out = b;
	return S0_OK;
}

static void batch_name(const s3_batch *b, char out[32])
{
	snprintf(out, 32, "%" PRIu64, b->seq);
}

/* Remove b's temp file and free it. */
static void batch_free(s3_batch *b)
{
	if (b->fd >= 0) {
		char name[32];
		batch_name(b, name);
		unlinkat(b->s->tmp_fd, name, 0);
		close(b->fd);
	}
	s0__idmap_free(&b->index);
	free(b->rows);
	free(b->done);
	free(b->reused);
	free(b->streamed);
	s0_error_free(b->stream_err);
	pthread_cond_destroy(&b->cv);
	pthread_mutex_destroy(&b->mu);
	free(b);
}

int s0__objs3_batch_has(s0__objs3 *s, void *batch, const s0__objid *id, bool *out,
                        s0_error **err)
{
	s3_batch *b = batch;
	pthread_mutex_lock(&b->mu);
	*out = s0__idmap_get(&b->index, id, NULL);
	bool trust = !b->untrusting;
	pthread_mutex_unlock(&b->mu);
	if (*out || !trust)
		return S0_OK;
	s0__objloc loc;
	bool trusted = false;
	int rc = s0__objs3_trusted(s, id, &loc, &trusted, err);
	if (rc < 0 || !trusted)
		return rc;
	pthread_mutex_lock(&b->mu);
	if (b->n_reused == b->cap_reused) {
		size_t nc = b->cap_reused ? b->cap_reused * 2 : 64;
		s0__objrow *nv = realloc(b->reused, nc * sizeof *nv);
		if (nv) {
			b->reused = nv;
			b->cap_reused = nc;
		}
	}
	/* out of memory: answer absent (the object is stored again) */
	if (b->n_reused < b->cap_reused) {
		b->reused[b->n_reused++] = (s0__objrow){*id, loc};
		*out = true;
	}
	pthread_mutex_unlock(&b->mu);
	return S0_OK;
}

/* After the packs are up: no tombstone removed an object this batch reuses
 * (another node's GC deleted it after has() answered); else the commit
 * fails retryably and its retry uploads the object. */
static int check_reused(s3_batch *b, s0_error **err)
{
	if (!b->n_reused)
		return S0_OK;
	int rc = s0__s3tomb_sync(b->s, err);
	for (size_t i = 0; rc == S0_OK && i < b->n_reused; i++) {
		s0__objloc loc;
		bool trusted = false;
		int lr = s0__objs3_trusted(b->s, &b->reused[i].id, &loc, &trusted, err);
		if (lr < 0)
			return lr;
		if (trusted && loc.pack == b->reused[i].loc.pack)
			continue;
		char hex[S0__OBJID_HEX_BYTES];
		s0__objid_hex(&b->reused[i].id, hex);
		rc = s0__error_set(err, S0_EUNAVAILABLE, "object_store",
		                   "object %s this generation reuses was deleted by garbage collection "
		                   "meanwhile; retry (it is then stored again)", hex);
	}
	return rc;
}

int s0__objs3_put(void *ctx, void *batch, const s0__objid *id, const void *sealed, size_t len,
                  bool *stored_out, s0_error **err)
{
	(void)ctx;
	s3_batch *b = batch;
	pthread_mutex_lock(&b->mu);
	int rc = S0_OK;
	bool existed = s0__idmap_get(&b->index, id, NULL);
	if (!existed && b->fd < 0) {
		char name[32];
		batch_name(b, name);
		b->fd = openat(b->s->tmp_fd, name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (b->fd < 0)
			rc = s0__s3b_io_err(err, errno, "create", b);
	}
	if (rc == S0_OK && !existed && b->n == b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 64;
		s0__objrow *nv = realloc(b->rows, nc * sizeof *nv);
		if (nv)
			b->rows = nv;
		bool *nd = nv ? realloc(b->done, nc * sizeof *nd) : NULL;
		if (nd) {
			b->done = nd;
			b->cap = nc;
		} else {
			rc = s0__error_nomem(err);
		}
	}
	/* Claim the row and its space first so a concurrent put of the same id
	 * is a no-op; the record is complete before commit (puts finish
	 * before it). */
	if (rc == S0_OK && !existed && s0__idmap_put(&b->index, id, b->n, NULL) < 0)
		rc = s0__error_nomem(err);
	uint64_t off = b->end;
	if (rc == S0_OK && !existed) {
		b->done[b->n] = false;
		b->rows[b->n++] = (s0__objrow){*id, {0, off, (uint32_t)len}};
		b->end += s0__pack_rec_span((uint32_t)len);
	}
	int fd = b->fd;
	pthread_mutex_unlock(&b->mu);
	if (rc < 0)
		return rc;
	*stored_out = !existed;
	if (existed)
		return S0_OK;
	int e = s0__pack_write_rec(fd, off, id, sealed, (uint32_t)len);
	if (e) {
		/* Forget the row so the batch never names a missing record (its
		 * space stays a hole no pack row points into). */
		pthread_mutex_lock(&b->mu);
		uint64_t row = 0;
		s0__idmap_get(&b->index, id, &row);
		s0__idmap_del(&b->index, id);
		b->rows[row] = b->rows[--b->n];
		b->done[row] = b->done[b->n];
		if (row < b->n)
			s0__idmap_put(&b->index, &b->rows[row].id, row, NULL);
		pthread_mutex_unlock(&b->mu);
		return s0__s3b_io_err(err, e, "write", b);
	}
	pthread_mutex_lock(&b->mu);
	uint64_t row = 0;
	if (s0__idmap_get(&b->index, id, &row)) {
		b->done[row] = true;
		s0__s3b_advance(b);
	}
	pthread_mutex_unlock(&b->mu);
	return S0_OK;
}

static int cmp_off(const void *a, const void *b)
{
	const s0__objrow *x = a, *y = b;
	return x->loc.off < y->loc.off ? -1 : x->loc.off > y->loc.off;
}

/* Cut b's rows [i, n) (sorted by offset) into packs of about
 * S0__S3PACK_TARGET, appended to *p (*n_io packs, capacity *cap_io). */
static int make_plans(s3_batch *b, size_t i, plan **p, size_t *n_io, size_t *cap_io,
                      s0_error **err)
{
	size_t n = *n_io;
	while (i < b->n) {
		if (n == *cap_io) {
			size_t nc = *cap_io ? *cap_io * 2 : 8;
			plan *np = realloc(*p, nc * sizeof *np);
			if (!np)
				return s0__error_nomem(err);
			*p = np;
			*cap_io = nc;
		}
		plan *q = &(*p)[n++];
		*n_io = n;
		q->id = s0__s3pack_new_id();
		q->first = i;
		q->from = b->rows[i].loc.off;
		do {
			q->to = b->rows[i].loc.off + s0__pack_rec_span(b->rows[i].loc.len);
			i++;
		} while (i < b->n && b->rows[i].loc.off == q->to && q->to - q->from < S0__S3PACK_TARGET);
		q->n = i - q->first;
	}
	return S0_OK;
}

/* Give rows their pack places, then PUT the indexes of packs p[0, n)
 * together (every pack is stored by then). */
static int put_indexes(s3_batch *b, const plan *p, size_t n, s0_error **err)
{
	s0__s3req *rq = calloc(n, sizeof *rq);
	s0__buf *body = calloc(n, sizeof *body);
	char(*keys)[S0__S3PACK_KEY_BYTES] = calloc(n, sizeof *keys);
	int rc = rq && body && keys ? S0_OK : s0__error_nomem(err);
	for (size_t i = 0; rc == S0_OK && i < n; i++) {
		for (size_t r = p[i].first; r < p[i].first + p[i].n; r++) {
			b->rows[r].loc.pack = p[i].id;
			b->rows[r].loc.off += S0__PACK_HDR_BYTES - p[i].from;
		}
		rc = s0__s3pack_index_encode(p[i].id, S0__PACK_HDR_BYTES + p[i].to - p[i].from,
		                             b->rows + p[i].first, p[i].n, &body[i], err);
		s0__s3pack_key('x', p[i].id, keys[i]);
		rq[i] = (s0__s3req){.method = "PUT", .key = keys[i], .body = body[i].data,
		                    .len = body[i].len};
	}
	if (rc == S0_OK)
		rc = s0__s3_run(b->s->s3, rq, n, err);
	for (size_t i = 0; rc == S0_OK && i < n; i++)
		rc = s0__s3_check(b->s->s3, &rq[i], err);
	for (size_t i = 0; body && i < n; i++)
		s0__buf_free(&body[i]);
	free(rq);
	free(body);
	free(keys);
	return rc;
}

/* After a failed commit: delete the packs of p[0, n) no index lists yet
 * (those with an index are whole orphans GC deletes); resolved[i] says
 * whether pack i's fate is known (its mark may go). The first pack whose
 * fate the endpoint cannot tell (it is down: the usual reason the commit
 * failed) ends the attempt: the rest keep their marks for the next open,
 * so a failed commit costs one request's retries, not one per pack (the
 * caller's thread also renews the node's lease). */
static void drop_unindexed(s3_batch *b, const plan *p, size_t n, bool *resolved)
{
	bool reachable = true;
	for (size_t i = 0; i < n; i++)
		resolved[i] = reachable && (reachable = s0__objs3_drop_unindexed(b->s, p[i].id));
}

/* Undo a batch that will not commit: drop its cache entries, delete the
 * packs of p[0, np) no index lists (their marks go once their fate is
 * known; out of memory: every mark stays for the next open). */
static void undo(s3_batch *b, const plan *p, size_t np)
{
	bool *keep = np ? calloc(np, sizeof *keep) : NULL;
	if (keep) {
		drop_unindexed(b, p, np, keep);
		for (size_t i = 0; i < np; i++)
			keep[i] = !keep[i];
		s0__s3b_mark_packs(b, p, np, false, keep);
	}
	free(keep);
	for (size_t i = 0; i < b->n; i++)
		s0__s3cache_drop(b->s->cache, &b->rows[i].id);
}

/* The plans of the streamed packs followed by rest[0, n_rest) (all
 * streamed rows come first); NULL when out of memory. */
static plan *all_plans(s3_batch *b, const plan *rest, size_t n_rest, size_t *n_out)
{
	size_t n = b->n_streamed + n_rest;
	plan *p = malloc((n ? n : 1) * sizeof *p);
	if (p) {
		if (b->n_streamed)
			memcpy(p, b->streamed, b->n_streamed * sizeof *p);
		if (n_rest)
			memcpy(p + b->n_streamed, rest, n_rest * sizeof *p);
		*n_out = n;
	}
	return p;
}

int s0__objs3_commit(void *ctx, void *batch, s0_error **err)
{
	s0__objs3 *s = ctx;
	s3_batch *b = batch;
	size_t sent = 0;
	bool started = s0__s3b_close_streamer(b, &sent);
	/* the rows the streamer did not take go up meanwhile, as before */
	int rc = S0_OK;
	plan *rest = NULL;
	size_t n_rest = 0, cap = 0, done = 0;
	if (b->n)
		s0__crash_point("objects.s3_written");
	if (b->n > sent) {
		/* rows [0, sent) are sorted and below every other offset */
		qsort(b->rows + sent, b->n - sent, sizeof *b->rows, cmp_off);
		rc = make_plans(b, sent, &rest, &n_rest, &cap, err);
	}
	if (rc == S0_OK)
		s0__s3b_mark_packs(b, rest, n_rest, true, NULL);
	while (rc == S0_OK && done < n_rest) {
		size_t k = 1;
		uint64_t bytes = rest[done].to - rest[done].from;
		while (done + k < n_rest &&
		       bytes + (rest[done + k].to - rest[done + k].from) <= ROUND_BYTES) {
			bytes += rest[done + k].to - rest[done + k].from;
			k++;
		}
		rc = s0__s3b_put_packs(b, rest + done, k, b->rows, 0, err);
		if (rc == S0_OK)
			done += k;
	}
	s0_error *serr = NULL;
	int src = s0__s3b_join_streamer(b, started, &serr);
	if (rc == S0_OK)
		rc = src;
	if (err && !*err)
		*err = serr;
	else
		s0_error_free(serr);
	size_t np = 0;
	plan *p = all_plans(b, rest, n_rest, &np);
	free(rest);
	if (!p) {
		/* the marks stay for the next open */
		if (rc == S0_OK)
			rc = s0__error_nomem(err);
		for (size_t i = 0; i < b->n; i++)
			s0__s3cache_drop(s->cache, &b->rows[i].id);
		batch_free(b);
		return rc;
	}
	if (rc == S0_OK)
		rc = put_indexes(b, p, np, err);
	if (rc == S0_OK && np)
		s0__crash_point("objects.s3_put");
	if (rc == S0_OK)
		rc = check_reused(b, err);
	/* every pack and index answered: the batch is durable in the bucket;
	 * now visible here */
	for (size_t i = 0; rc == S0_OK && i < np; i++)
		rc = s0__s3pack_catalogue(s, p[i].id, S0__PACK_HDR_BYTES + p[i].to - p[i].from,
		                          b->rows + p[i].first, p[i].n, err);
	if (rc == S0_OK && b->n)
		s0__crash_point("objects.s3_committed");
	if (rc < 0)
		undo(b, p, np);
	else
		s0__s3b_mark_packs(b, p, np, false, NULL);
	free(p);
	batch_free(b);
	return rc;
}

void s0__objs3_abort(void *ctx, void *batch)
{
	(void)ctx;
	s3_batch *b = batch;
	size_t sent;
	s0__s3b_join_streamer(b, s0__s3b_close_streamer(b, &sent), NULL);
	undo(b, b->streamed, b->n_streamed);
	batch_free(b);
}
