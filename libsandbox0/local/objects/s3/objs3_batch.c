/* S3 object store: batches (one temp file of pack records), commit (packs
 * and their indexes PUT in parallel, then catalogued). */
#include "local/objects/s3/objs3_impl.h"

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

typedef struct s3_batch {
	s0__objs3 *s;
	uint64_t seq;
	pthread_mutex_t mu; /* everything below */
	int fd;             /* upload/<seq>: the records, -1 until the first put */
	uint64_t end;       /* next free offset in it */
	s0__idmap index;    /* id -> row */
	s0__objrow *rows;   /* loc.off: the record's offset in the temp file */
	size_t n, cap;
	bool untrusting;    /* the tombstone sync at begin failed: has() from the batch only */
	s0__objrow *reused; /* catalog hits of has(): checked again at commit */
	size_t n_reused, cap_reused;
} s3_batch;

/* One pack of a commit: rows [first, first + n) of the batch, records
 * [from, to) of the temp file. */
typedef struct plan {
	uint64_t id;
	size_t first, n;
	uint64_t from, to;
} plan;

int s0__objs3_begin(void *ctx, void **batch_out, s0_error **err)
{
	s0__objs3 *s = ctx;
	s3_batch *b = calloc(1, sizeof *b);
	if (!b)
		return s0__error_nomem(err);
	b->s = s;
	b->fd = -1;
	pthread_mutex_init(&b->mu, NULL);
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
	free(b->reused);
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

static int io_err(s0_error **err, int e, const char *what, const s3_batch *b)
{
	return s0__error_set(err, e == ENOSPC ? S0_ENOSPACE : S0_EIO, "store_io",
	                     "%s upload/%" PRIu64 ": %s", what, b->seq, strerror(e));
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
			rc = io_err(err, errno, "create", b);
	}
	if (rc == S0_OK && !existed && b->n == b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 64;
		s0__objrow *nv = realloc(b->rows, nc * sizeof *nv);
		if (nv) {
			b->rows = nv;
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
		if (row < b->n)
			s0__idmap_put(&b->index, &b->rows[row].id, row, NULL);
		pthread_mutex_unlock(&b->mu);
		return io_err(err, e, "write", b);
	}
	return S0_OK;
}

static int cmp_off(const void *a, const void *b)
{
	const s0__objrow *x = a, *y = b;
	return x->loc.off < y->loc.off ? -1 : x->loc.off > y->loc.off;
}

/* Cut b's rows (sorted by offset) into packs of about S0__S3PACK_TARGET. */
static int make_plans(s3_batch *b, plan **out, size_t *n_out, s0_error **err)
{
	size_t cap = 8, n = 0;
	plan *p = malloc(cap * sizeof *p);
	for (size_t i = 0; p && i < b->n;) {
		if (n == cap) {
			plan *np = realloc(p, (cap *= 2) * sizeof *np);
			if (!np) {
				free(p);
				p = NULL;
				break;
			}
			p = np;
		}
		plan *q = &p[n++];
		q->id = s0__s3pack_new_id();
		q->first = i;
		q->from = b->rows[i].loc.off;
		do {
			q->to = b->rows[i].loc.off + s0__pack_rec_span(b->rows[i].loc.len);
			i++;
		} while (i < b->n && b->rows[i].loc.off == q->to && q->to - q->from < S0__S3PACK_TARGET);
		q->n = i - q->first;
	}
	if (!p)
		return s0__error_nomem(err);
	*out = p;
	*n_out = n;
	return S0_OK;
}

/* Read pack q's body (header and records) from the temp file into out. */
static int pack_body(s3_batch *b, const plan *q, s0__buf *out, s0_error **err)
{
	size_t len = S0__PACK_HDR_BYTES + (size_t)(q->to - q->from), got = 0;
	s0__buf_reset(out);
	if (s0__buf_grow(out, len) < 0)
		return s0__error_nomem(err);
	s0__pack_header(q->id, (uint8_t *)out->data);
	got = S0__PACK_HDR_BYTES;
	while (got < len) {
		ssize_t r = pread(b->fd, out->data + got, len - got,
		                  (off_t)(q->from + got - S0__PACK_HDR_BYTES));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return io_err(err, r < 0 ? errno : EIO, "read", b);
		got += (size_t)r;
	}
	out->len = len;
	return S0_OK;
}

/* The test hook of s0__objs3_fail_after(): whether this pack PUT must fail. */
static bool hook_fails(s0__objs3 *s)
{
	pthread_mutex_lock(&s->mu);
	bool fail = s->fail_after == 0;
	if (s->fail_after > 0)
		s->fail_after--;
	pthread_mutex_unlock(&s->mu);
	return fail;
}

/* The read-cache entries of a round's packs, written by a thread while the
 * packs go up (a failed commit drops them again). */
typedef struct cache_job {
	s3_batch *b;
	const plan *p;
	const s0__buf *body;
	size_t n;
} cache_job;

static void *cache_round(void *arg)
{
	cache_job *j = arg;
	for (size_t i = 0; i < j->n; i++)
		for (size_t r = j->p[i].first; r < j->p[i].first + j->p[i].n; r++)
			s0__s3cache_put(j->b->s->cache, &j->b->rows[r].id,
			                j->body[i].data + j->b->rows[r].loc.off + S0__PACK_REC_BYTES,
			                j->b->rows[r].loc.len);
	return NULL;
}

/* PUT packs p[0, n): the packs together, then their indexes together
 * (an index never names a pack not yet stored). Rows get their pack
 * places; the packs enter the read cache meanwhile. */
static int put_round(s3_batch *b, plan *p, size_t n, s0_error **err)
{
	s0__s3req *rq = calloc(2 * n, sizeof *rq);
	s0__buf *body = calloc(2 * n, sizeof *body);
	char(*keys)[S0__S3PACK_KEY_BYTES] = calloc(2 * n, sizeof *keys);
	int rc = rq && body && keys ? S0_OK : s0__error_nomem(err);
	size_t ok_packs = n;
	for (size_t i = 0; rc == S0_OK && i < n; i++) {
		rc = pack_body(b, &p[i], &body[i], err);
		for (size_t r = p[i].first; rc == S0_OK && r < p[i].first + p[i].n; r++) {
			b->rows[r].loc.pack = p[i].id;
			b->rows[r].loc.off += S0__PACK_HDR_BYTES - p[i].from;
		}
		if (rc == S0_OK)
			rc = s0__s3pack_index_encode(p[i].id, body[i].len, b->rows + p[i].first, p[i].n,
			                             &body[n + i], err);
		s0__s3pack_key('p', p[i].id, keys[i]);
		s0__s3pack_key('x', p[i].id, keys[n + i]);
		rq[i] = (s0__s3req){.method = "PUT", .key = keys[i], .body = body[i].data,
		                    .len = body[i].len, .unsigned_body = true};
		rq[n + i] = (s0__s3req){.method = "PUT", .key = keys[n + i], .body = body[n + i].data,
		                        .len = body[n + i].len};
		if (rc == S0_OK && ok_packs == n && hook_fails(b->s))
			ok_packs = i;
	}
	cache_job job = {b, p, body, n};
	pthread_t writer;
	bool threaded = rc == S0_OK && pthread_create(&writer, NULL, cache_round, &job) == 0;
	if (rc == S0_OK && !threaded)
		cache_round(&job);
	if (rc == S0_OK)
		rc = s0__s3_run(b->s->s3, rq, ok_packs, err);
	if (threaded)
		pthread_join(writer, NULL);
	for (size_t i = 0; rc == S0_OK && i < ok_packs; i++)
		rc = s0__s3_check(b->s->s3, &rq[i], err);
	if (rc == S0_OK && ok_packs < n)
		rc = s0__error_set(err, S0_EUNAVAILABLE, "object_store",
		                   "S3 PUT %s failed (test hook)", keys[ok_packs]);
	if (rc == S0_OK)
		rc = s0__s3_run(b->s->s3, rq + n, n, err);
	for (size_t i = 0; rc == S0_OK && i < n; i++)
		rc = s0__s3_check(b->s->s3, &rq[n + i], err);
	for (size_t i = 0; body && i < 2 * n; i++)
		s0__buf_free(&body[i]);
	free(rq);
	free(body);
	free(keys);
	return rc;
}

/* Record pack ids of a commit in flight as empty files upload/<seq>.<16
 * hex>: a crash leaves them for the next open, which deletes the packs no
 * index lists (objs3.c). Removing: only those with keep[i] false (keep
 * nullable). */
static void mark_packs(s3_batch *b, const plan *p, size_t n, bool on, const bool *keep)
{
	for (size_t i = 0; i < n; i++) {
		if (!on && keep && keep[i])
			continue;
		char name[48];
		snprintf(name, sizeof name, "%" PRIu64 ".%016" PRIx64, b->seq, p[i].id);
		if (on) {
			int fd = openat(b->s->tmp_fd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
			if (fd >= 0)
				close(fd);
		} else {
			unlinkat(b->s->tmp_fd, name, 0);
		}
	}
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

int s0__objs3_commit(void *ctx, void *batch, s0_error **err)
{
	s0__objs3 *s = ctx;
	s3_batch *b = batch;
	int rc = S0_OK;
	plan *p = NULL;
	size_t np = 0, done = 0;
	if (b->n) {
		s0__crash_point("objects.s3_written");
		qsort(b->rows, b->n, sizeof *b->rows, cmp_off);
		rc = make_plans(b, &p, &np, err);
	}
	if (rc == S0_OK)
		mark_packs(b, p, np, true, NULL);
	while (rc == S0_OK && done < np) {
		size_t k = 1;
		uint64_t bytes = p[done].to - p[done].from;
		while (done + k < np && bytes + (p[done + k].to - p[done + k].from) <= ROUND_BYTES) {
			bytes += p[done + k].to - p[done + k].from;
			k++;
		}
		rc = put_round(b, p + done, k, err);
		if (rc == S0_OK) {
			done += k;
			s0__crash_point("objects.s3_put");
		}
	}
	if (rc == S0_OK)
		rc = check_reused(b, err);
	/* every pack and index answered: the batch is durable in the bucket;
	 * now visible here */
	for (size_t i = 0; rc == S0_OK && i < np; i++)
		rc = s0__s3pack_catalogue(s, p[i].id, S0__PACK_HDR_BYTES + p[i].to - p[i].from,
		                          b->rows + p[i].first, p[i].n, err);
	if (rc == S0_OK && b->n)
		s0__crash_point("objects.s3_committed");
	bool *keep = NULL;
	if (rc < 0 && np && (keep = calloc(np, sizeof *keep))) {
		drop_unindexed(b, p, np, keep);
		for (size_t i = 0; i < np; i++)
			keep[i] = !keep[i];
	}
	if (rc < 0)
		for (size_t i = 0; i < b->n; i++)
			s0__s3cache_drop(s->cache, &b->rows[i].id);
	/* out of memory for keep: every mark stays for the next open */
	if (rc == S0_OK || keep)
		mark_packs(b, p, np, false, keep);
	free(keep);
	free(p);
	batch_free(b);
	return rc;
}

void s0__objs3_abort(void *ctx, void *batch)
{
	(void)ctx;
	batch_free(batch);
}
