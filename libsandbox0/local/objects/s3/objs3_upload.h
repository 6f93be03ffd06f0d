/*
 * Private to the S3 backend's batches: the batch state shared by
 * objs3_batch.c (begin, put, has, commit, abort) and objs3_upload.c (the
 * pack PUTs: the streamer that PUTs packs while the batch is being written,
 * and the commit's rounds).
 */
#ifndef S0_OBJS3_UPLOAD_H
#define S0_OBJS3_UPLOAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "local/objects/idmap.h"
#include "local/objects/s3/objs3_impl.h"

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

/**
 * Set the error of a failed access (what: "create", "write", "read") to
 * b's temp file from errno value e; returns S0_ENOSPACE for ENOSPC, else
 * S0_EIO.
 */
int s0__s3b_io_err(s0_error **err, int e, const char *what, const s3_batch *b);

/**
 * PUT packs p[0, n) together (all in flight at once; the test hook of
 * s0__objs3_fail_after() counts each); their objects enter the read cache
 * from a thread meanwhile. Row r of the batch is rows[r - row0] (the
 * caller's copy, or b->rows once no put runs). Blocks for the PUTs and
 * their retries; safe beside puts and another PUT group of the batch.
 * @return S0_OK, S0_EUNAVAILABLE / S0_EAUTH from the endpoint, S0_EIO
 *         reading the temp file, S0_ENOMEM.
 */
int s0__s3b_put_packs(s3_batch *b, const plan *p, size_t n, const s0__objrow *rows, size_t row0,
                      s0_error **err);

/**
 * Add (on) or remove the marks upload/<seq>.<pack> of packs p[0, n): a
 * crash leaves them for the next open, which deletes the packs no index
 * lists (objs3.c). Removing skips those with keep[i] true (keep nullable).
 */
void s0__s3b_mark_packs(s3_batch *b, const plan *p, size_t n, bool on, const bool *keep);

/**
 * After a put's record is written (b->mu held): extend the written rows
 * and wake, or start, the streamer when a pack's worth is ready.
 */
void s0__s3b_advance(s3_batch *b);

/**
 * Stop the streamer (b->mu not held): no pack is cut after this; the PUTs
 * in flight finish. *sent_out: rows [0, *sent_out) are in streamed packs.
 * @return whether the streamer was started (then join it).
 */
bool s0__s3b_close_streamer(s3_batch *b, size_t *sent_out);

/**
 * Wait for the streamer closed by s0__s3b_close_streamer() (started: its
 * answer). Returns its first failure, moving the error to *err (nullable).
 */
int s0__s3b_join_streamer(s3_batch *b, bool started, s0_error **err);

#endif
