/* The pack PUTs of the S3 backend's batches: the streamer, which PUTs packs
 * while a batch is being written, and the commit's groups (objs3_upload.h). */
#include "local/objects/s3/objs3_upload.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "local/objects/pack/pack.h"
#include "local/objects/s3/s3pack.h"

/* The streamer PUTs at most this many packs together. */
#define STREAM_GROUP 4

int s0__s3b_io_err(s0_error **err, int e, const char *what, const s3_batch *b)
{
	return s0__error_set(err, e == ENOSPC ? S0_ENOSPACE : S0_EIO, "store_io",
	                     "%s upload/%" PRIu64 ": %s", what, b->seq, strerror(e));
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
			return s0__s3b_io_err(err, r < 0 ? errno : EIO, "read", b);
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
int s0__s3b_put_packs(s3_batch *b, const plan *p, size_t n, const s0__objrow *rows,
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

/* Record pack ids of a commit in flight as empty files upload/<seq>.<16
 * hex>: a crash leaves them for the next open, which deletes the packs no
 * index lists (objs3.c). Removing: only those with keep[i] false (keep
 * nullable). */
void s0__s3b_mark_packs(s3_batch *b, const plan *p, size_t n, bool on, const bool *keep)
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
		s0__s3b_mark_packs(b, group, k, true, NULL);
		s0_error *e = NULL;
		int rc = rows ? s0__s3b_put_packs(b, group, k, rows, row0, &e) : s0__error_nomem(&e);
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
void s0__s3b_advance(s3_batch *b)
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
bool s0__s3b_close_streamer(s3_batch *b, size_t *sent_out)
{
	pthread_mutex_lock(&b->mu);
	b->closing = true;
	bool started = b->streaming;
	*sent_out = b->sent;
	pthread_cond_signal(&b->cv);
	pthread_mutex_unlock(&b->mu);
	return started;
}

/* Wait for the streamer closed by s0__s3b_close_streamer(); its first failure. */
int s0__s3b_join_streamer(s3_batch *b, bool started, s0_error **err)
{
	if (started)
		pthread_join(b->streamer, NULL);
	if (b->stream_rc < 0 && err) {
		*err = b->stream_err;
		b->stream_err = NULL;
	}
	return b->stream_rc;
}
