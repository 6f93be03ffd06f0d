/* S3 object store: batches (one temp file of pack records), packs PUT while
 * the batch is still being written (the streamer), commit (the remaining
 * packs and every index PUT in parallel, then catalogued). */
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
/* The streamer PUTs at most this many packs together. */
#define STREAM_GROUP 4

/* One pack of a commit: rows [first, first + n) of the batch, records
 * [from, to) of the temp file. */
typedef struct plan {
	uint64_t id;
	size_t first, n;
	uint64_t from, to;
} plan;

typedef struct s3_batch {
	s0__objs3 *s;
	uint64_t seq;
	pthread_mutex_t mu; /* everything below */
	pthread_cond_t cv;  /* the streamer waits on it: a record done, or closing */
	int fd;             /* upload/<seq>: the records, -1 until the first put */
	uint64_t end;       /* next free offset in it */
	s0__idmap index;    /* id -> row */
	s0__objrow *rows;   /* loc.off: the record's offset in the temp file */
	size_t n, cap;
	bool untrusting;    /* the tombstone sync at begin failed: has() from the batch only */
	s0__objrow *reused; /* catalog hits of has(): checked again at commit */
	size_t n_reused, cap_reused;
	/* The streamer: rows [0, ready) are written and contiguous from offset
	 * 0 (records [0, ready_end)); packs cut from them are PUT by a thread
	 * while the batch is still being filled, so a commit finds most of its
	 * bytes already in the bucket. Rows [0, sent) are in streamed packs. */
	bool *done;             /* per row: its record is written */
	size_t ready, sent;
	uint64_t ready_end;
	plan *streamed;         /* the packs the streamer cut, PUT or attempted */
	size_t n_streamed, cap_streamed;
	bool streaming;         /* the thread was started (joined by close) */
	bool closing;           /* commit or abort: the streamer stops */
	bool stalled;           /* a hole in the records: no more streaming */
	int stream_rc;          /* the streamer's first failure */
	s0_error *stream_err;
	pthread_t streamer;
} s3_batch;

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

static int io_err(s0_error **err, int e, const char *what, const s3_batch *b)
{
	return s0__error_set(err, e == ENOSPC ? S0_ENOSPACE : S0_EIO, "store_io",
	                     "%s upload/%" PRIu64 ": %s", what, b->seq, strerror(e));
}

static int put_packs(s3_batch *b, const plan *p, size_t n, const s0__objrow *rows,
                     size_t row0, s0_error **err);
static void mark_packs(s3_batch *b, const plan *p, size_t n, bool on, const bool *keep);

/* Cut the next pack of the streamer from rows [sent, ready), as
 * make_plans() would: whether there are enough written bytes for one
 * (under mu). */
static bool next_streamed(s3_batch *b, plan *q)
{
	if (b->sent >= b->ready)
		return false;
	uint64_t from = b->rows[b->sent].loc.off;
	if (b->ready_end - from < S0__S3PACK_TARGET)
		return false;
	size_t i = b->sent;
	uint64_t to = from;
	do {
		to = b->rows[i].loc.off + s0__pack_rec_span(b->rows[i].loc.len);
		i++;
	} while (i < b->ready && to - from < S0__S3PACK_TARGET);
	*q = (plan){s0__s3pack_new_id(), b->sent, i - b->sent, from, to};
	return true;
}

/* The streamer's thread: PUT the packs cut from the written records as
 * soon as there are some (those ready together in flight together, up to
 * STREAM_GROUP), until the batch closes or a PUT fails. A pack's index
 * waits for the commit (an index never names a pack not yet stored, and
 * no node sees a pack without one). */
static void *streamer(void *arg)
{
	s3_batch *b = arg;
	pthread_mutex_lock(&b->mu);
	while (!b->closing && b->stream_rc == S0_OK) {
		size_t k = 0, from = b->n_streamed;
		plan q;
		while (k < STREAM_GROUP && next_streamed(b, &q)) {
			if (b->n_streamed == b->cap_streamed) {
				size_t nc = b->cap_streamed ? b->cap_streamed * 2 : 8;
				plan *nv = realloc(b->streamed, nc * sizeof *nv);
				if (!nv)
					break; /* the commit PUTs the rest */
				b->streamed = nv;
				b->cap_streamed = nc;
			}
			b->streamed[b->n_streamed++] = q;
			b->sent = q.first + q.n;
			k++;
		}
		if (!k) {
			pthread_cond_wait(&b->cv, &b->mu);
			continue;
		}
		/* copies: the arrays may grow (move) under mu while the PUTs go */
		plan group[STREAM_GROUP];
		memcpy(group, b->streamed + from, k * sizeof *group);
		size_t row0 = group[0].first, nrows = group[k - 1].first + group[k - 1].n - row0;
		s0__objrow *rows = malloc(nrows * sizeof *rows);
		if (rows)
			memcpy(rows, b->rows + row0, nrows * sizeof *rows);
		pthread_mutex_unlock(&b->mu);
		mark_packs(b, group, k, true, NULL);
		s0_error *e = NULL;
		int rc = rows ? put_packs(b, group, k, rows, row0, &e) : s0__error_nomem(&e);
		free(rows);
		pthread_mutex_lock(&b->mu);
		if (rc < 0) {
			b->stream_rc = rc;
			b->stream_err = e;
		}
	}
	pthread_mutex_unlock(&b->mu);
	return NULL;
}

/* Extend the written, contiguous rows after a put and wake (or start) the
 * streamer when a pack's worth is ready (under mu). */
static void advance(s3_batch *b)
{
	while (!b->stalled && b->ready < b->n && b->done[b->ready]) {
		const s0__objrow *r = &b->rows[b->ready];
		if (r->loc.off != b->ready_end) {
			b->stalled = true; /* a failed write's hole: the commit cuts the rest */
			break;
		}
		b->ready_end += s0__pack_rec_span(r->loc.len);
		b->ready++;
	}
	if (b->stalled || b->closing || b->sent >= b->ready ||
	    b->ready_end - b->rows[b->sent].loc.off < S0__S3PACK_TARGET)
		return;
	if (b->streaming)
		pthread_cond_signal(&b->cv);
	else
		b->streaming = pthread_create(&b->streamer, NULL, streamer, b) == 0;
}

/* Tell the streamer to stop (it finishes the PUTs in flight); returns
 * whether it runs, and the rows it took (all streamed packs are cut). */
static bool close_streamer(s3_batch *b, size_t *sent_out)
{
	pthread_mutex_lock(&b->mu);
	b->closing = true;
	bool started = b->streaming;
	*sent_out = b->sent;
	pthread_cond_signal(&b->cv);
	pthread_mutex_unlock(&b->mu);
	return started;
}

/* Wait for the streamer closed by close_streamer(); its first failure. */
static int join_streamer(s3_batch *b, bool started, s0_error **err)
{
	if (started)
		pthread_join(b->streamer, NULL);
	if (b->stream_rc < 0 && err) {
		*err = b->stream_err;
		b->stream_err = NULL;
	}
	return b->stream_rc;
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
		return io_err(err, e, "write", b);
	}
	pthread_mutex_lock(&b->mu);
	uint64_t row = 0;
	if (s0__idmap_get(&b->index, id, &row)) {
		b->done[row] = true;
		advance(b);
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

/* The read-cache entries of packs whose bodies are going up, written by a
 * thread while the PUTs go (a failed commit or an abort drops them): row r
 * of the batch is rows[r - row0]. */
typedef struct cache_job {
	s3_batch *b;
	const plan *p;
	const s0__buf *body;
	size_t n;
	const s0__objrow *rows;
	size_t row0;
} cache_job;

static void *cache_packs(void *arg)
{
	cache_job *j = arg;
	for (size_t i = 0; i < j->n; i++)
		for (size_t r = j->p[i].first; r < j->p[i].first + j->p[i].n; r++) {
			const s0__objrow *row = &j->rows[r - j->row0];
			s0__s3cache_put(j->b->s->cache, &row->id,
			                j->body[i].data + S0__PACK_HDR_BYTES + (row->loc.off - j->p[i].from) +
			                    S0__PACK_REC_BYTES,
			                row->loc.len);
		}
	return NULL;
}

/* PUT packs p[0, n) together (every pack of a round in flight at once);
 * their objects enter the read cache meanwhile (row r is rows[r - row0]). */
static int put_packs(s3_batch *b, const plan *p, size_t n, const s0__objrow *rows,
                     size_t row0, s0_error **err)
{
	s0__s3req *rq = calloc(n, sizeof *rq);
	s0__buf *body = calloc(n, sizeof *body);
	char(*keys)[S0__S3PACK_KEY_BYTES] = calloc(n, sizeof *keys);
	int rc = rq && body && keys ? S0_OK : s0__error_nomem(err);
	size_t ok_packs = n;
	for (size_t i = 0; rc == S0_OK && i < n; i++) {
		rc = pack_body(b, &p[i], &body[i], err);
		s0__s3pack_key('p', p[i].id, keys[i]);
		rq[i] = (s0__s3req){.method = "PUT", .key = keys[i], .body = body[i].data,
		                    .len = body[i].len, .unsigned_body = true};
		if (rc == S0_OK && ok_packs == n && hook_fails(b->s))
			ok_packs = i;
	}
	cache_job job = {b, p, body, n, rows, row0};
	pthread_t writer;
	bool threaded = rc == S0_OK && pthread_create(&writer, NULL, cache_packs, &job) == 0;
	if (rc == S0_OK && !threaded)
		cache_packs(&job);
	if (rc == S0_OK)
		rc = s0__s3_run(b->s->s3, rq, ok_packs, err);
	if (threaded)
		pthread_join(writer, NULL);
	for (size_t i = 0; rc == S0_OK && i < ok_packs; i++)
		rc = s0__s3_check(b->s->s3, &rq[i], err);
	if (rc == S0_OK && ok_packs < n)
		rc = s0__error_set(err, S0_EUNAVAILABLE, "object_store",
		                   "S3 PUT %s failed (test hook)", keys[ok_packs]);
	for (size_t i = 0; body && i < n; i++)
		s0__buf_free(&body[i]);
	free(rq);
	free(body);
	free(keys);
	return rc;
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
		mark_packs(b, p, np, false, keep);
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
	bool started = close_streamer(b, &sent);
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
		mark_packs(b, rest, n_rest, true, NULL);
	while (rc == S0_OK && done < n_rest) {
		size_t k = 1;
		uint64_t bytes = rest[done].to - rest[done].from;
		while (done + k < n_rest &&
		       bytes + (rest[done + k].to - rest[done + k].from) <= ROUND_BYTES) {
			bytes += rest[done + k].to - rest[done + k].from;
			k++;
		}
		rc = put_packs(b, rest + done, k, b->rows, 0, err);
		if (rc == S0_OK)
			done += k;
	}
	s0_error *serr = NULL;
	int src = join_streamer(b, started, &serr);
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
		mark_packs(b, p, np, false, NULL);
	free(p);
	batch_free(b);
	return rc;
}

void s0__objs3_abort(void *ctx, void *batch)
{
	(void)ctx;
	s3_batch *b = batch;
	size_t sent;
	join_streamer(b, close_streamer(b, &sent), NULL);
	undo(b, b->streamed, b->n_streamed);
	batch_free(b);
}
