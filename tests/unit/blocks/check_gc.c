/* Block store GC: roots, pins, branch bases, damaged roots, COST-04, and GC
 * running concurrently with publishing that reuses garbage content. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blktest.h"
#include "objenv.h"
#include "check_main.h"

#define CS 65536u

/* Publish a generation on parent with chunks [first, first + n) filled from seed. */
static s0__genid publish_on(blk_env *e, const s0__genid *parent, uint64_t first, int n,
                            uint64_t seed)
{
	s0__branch *b;
	s0__genid g;
	uint8_t *buf = malloc(CS);
	OK(s0__bstore_attach(e->bs, parent, &b, &err_));
	for (int i = 0; i < n; i++) {
		blk_fill(buf, CS, seed * 1000 + (uint64_t)i);
		OK(s0__branch_write(b, (first + (uint64_t)i) * CS, buf, CS, &err_));
	}
	OK(s0__branch_publish(b, 0, &g, &err_));
	s0__branch_free(b);
	free(buf);
	return g;
}

static void expect_chunks(blk_env *e, const s0__genid *g, uint64_t first, int n, uint64_t seed)
{
	s0__branch *b;
	uint8_t *buf = malloc(CS), *want = malloc(CS);
	OK(s0__bstore_attach(e->bs, g, &b, &err_));
	for (int i = 0; i < n; i++) {
		blk_fill(want, CS, seed * 1000 + (uint64_t)i);
		OK(s0__branch_read(b, (first + (uint64_t)i) * CS, buf, CS, &err_));
		ck_assert_msg(!memcmp(buf, want, CS), "chunk %llu differs",
		              (unsigned long long)(first + (uint64_t)i));
	}
	s0__branch_free(b);
	free(buf);
	free(want);
}

static uint64_t stored_objects(blk_env *e)
{
	s0__objstore_usage_info u;
	OK(s0__objstore_usage(e->os, &u, &err_));
	return u.objects;
}

START_TEST(test_gc_roots_and_pins)
{
	blk_env e;
	blk_open(&e, 0);
	s0__genid g0, g[5];
	OK(s0__bstore_create(e.bs, 64ull << 20, &g0, &err_));
	s0__genid prev = g0;
	for (int i = 0; i < 5; i++) {
		g[i] = publish_on(&e, &prev, (uint64_t)i * 4, 4, (uint64_t)i + 1); /* 4 new chunks each */
		prev = g[i];
	}
	s0__gc_stats st;
	/* Everything pinned: nothing deleted. */
	uint64_t before = stored_objects(&e);
	OK(s0__bstore_gc(e.bs, &st, &err_));
	ck_assert_uint_eq(st.objects_deleted, 0);
	ck_assert_uint_eq(stored_objects(&e), before);
	/* Drop the pins; keep g[4] (head) and g[1] (snapshot) as roots. */
	for (int i = 0; i < 5; i++)
		s0__bstore_unref(e.bs, &g[i]);
	s0__bstore_unref(e.bs, &g0);
	e.roots[e.n_roots++] = g[4];
	e.roots[e.n_roots++] = g[1];
	OK(s0__bstore_gc(e.bs, &st, &err_));
	ck_assert_uint_gt(st.objects_deleted, 0);
	/* g[4] has all 20 chunks (shared from its ancestors); g[1] its 8. */
	for (int i = 0; i < 5; i++)
		expect_chunks(&e, &g[4], (uint64_t)i * 4, 4, (uint64_t)i + 1);
	expect_chunks(&e, &g[1], 0, 4, 1);
	expect_chunks(&e, &g[1], 4, 4, 2);
	s0__branch *b;
	FAILS(S0_ENOTFOUND, s0__bstore_attach(e.bs, &g[2], &b, &err_));
	FAILS(S0_ENOTFOUND, s0__bstore_attach(e.bs, &g0, &b, &err_));
	/* A branch pins its base even with no roots; a pin too. */
	OK(s0__bstore_attach(e.bs, &g[1], &b, &err_));
	OK(s0__bstore_ref(e.bs, &g[4], &err_));
	e.n_roots = 0;
	OK(s0__bstore_gc(e.bs, &st, &err_));
	uint8_t buf[16];
	OK(s0__branch_read(b, 4 * CS, buf, sizeof buf, &err_));
	s0__branch_free(b);
	expect_chunks(&e, &g[4], 16, 4, 5);
	/* Nothing left: the store is empty. */
	s0__bstore_unref(e.bs, &g[4]);
	OK(s0__bstore_gc(e.bs, &st, &err_));
	ck_assert_uint_eq(stored_objects(&e), 0);
	blk_close(&e);
}
END_TEST

START_TEST(test_gc_damaged_root_deletes_nothing)
{
	blk_env e;
	blk_open(&e, 0);
	s0__genid g0, g1, bogus;
	OK(s0__bstore_create(e.bs, 8ull << 20, &g0, &err_));
	g1 = publish_on(&e, &g0, 0, 3, 9);
	s0__bstore_unref(e.bs, &g0);
	s0__bstore_unref(e.bs, &g1);
	memset(&bogus, 0x77, sizeof bogus);
	e.roots[e.n_roots++] = bogus;
	uint64_t before = stored_objects(&e);
	s0_error *err = NULL;
	ck_assert_int_eq(s0__bstore_gc(e.bs, NULL, &err), S0_ECORRUPT);
	ck_assert_ptr_nonnull(strstr(s0_error_message(err), "nothing deleted"));
	s0_error_free(err);
	ck_assert_uint_eq(stored_objects(&e), before);
	blk_close(&e);
}
END_TEST

/* COST-04: cycles grow storage by the changed chunks; after deleting the
 * source and collecting, a snapshot still reads fully and the source's own
 * chunks are freed. */
START_TEST(test_cycles_grow_by_changes)
{
	blk_env e;
	blk_open(&e, 0);
	s0__genid head;
	OK(s0__bstore_create(e.bs, 1ull << 30, &head, &err_));
	s0__bstore_unref(e.bs, &head);
	e.roots[0] = head;
	e.n_roots = 1;
	head = publish_on(&e, &head, 0, 16, 100);
	s0__bstore_unref(e.bs, &head);
	e.roots[0] = head;
	OK(s0__bstore_gc(e.bs, NULL, &err_));
	s0__objstore_usage_info u0, u1;
	OK(s0__objstore_usage(e.os, &u0, &err_));
	for (int cycle = 0; cycle < 10; cycle++) {
		s0__genid next = publish_on(&e, &head, (uint64_t)cycle * 1000 + 100, 2, 200 + (uint64_t)cycle);
		s0__bstore_unref(e.bs, &next);
		e.roots[0] = head = next; /* the head moves; nothing else kept */
		OK(s0__bstore_gc(e.bs, NULL, &err_));
	}
	OK(s0__objstore_usage(e.os, &u1, &err_));
	uint64_t grown = u1.stored_bytes - u0.stored_bytes;
	/* 20 chunks of ~compressible 64 KiB each plus a few pages per cycle. */
	ck_assert_uint_le(grown, 20 * CS);
	ck_assert_uint_ge(u1.objects - u0.objects, 20);
	ck_assert_uint_le(u1.objects - u0.objects, 20 + 10 * 2 + 4);
	/* Snapshot the head, then "delete" the source's later generation. */
	s0__genid snap = head;
	s0__genid src = publish_on(&e, &head, 500, 8, 300);
	s0__bstore_unref(e.bs, &src);
	e.roots[0] = snap;
	e.roots[1] = src;
	e.n_roots = 2;
	OK(s0__bstore_gc(e.bs, NULL, &err_));
	uint64_t with_src = stored_objects(&e);
	e.n_roots = 1; /* source deleted: only the snapshot remains */
	s0__gc_stats st;
	OK(s0__bstore_gc(e.bs, &st, &err_));
	ck_assert_uint_ge(st.objects_deleted, 8);
	ck_assert_uint_le(stored_objects(&e), with_src - 8);
	expect_chunks(&e, &snap, 0, 16, 100);
	for (int cycle = 0; cycle < 10; cycle++)
		expect_chunks(&e, &snap, (uint64_t)cycle * 1000 + 100, 2, 200 + (uint64_t)cycle);
	blk_close(&e);
}
END_TEST

/* ---- concurrent GC and publishing ---- */

typedef struct race {
	blk_env *e;
	pthread_mutex_t mu; /* roots */
	s0__genid roots[4];
	int n_roots;
	atomic_int stop;
	int gcs;
	int gc_rc;
} race;

static int race_roots(void *payload, s0__gc_emit_fn emit, void *emit_ctx, s0_error **err)
{
	race *r = payload;
	int rc = 0;
	pthread_mutex_lock(&r->mu);
	for (int i = 0; i < r->n_roots && !rc; i++)
		rc = emit(emit_ctx, S0__GC_ROOT_GENERATION, &r->roots[i]);
	pthread_mutex_unlock(&r->mu);
	return rc;
}

static void *gc_loop(void *arg)
{
	race *r = arg;
	while (!atomic_load(&r->stop)) {
		s0_error *err = NULL;
		int rc = s0__bstore_gc(r->e->bs, NULL, &err);
		if (rc < 0) {
			fprintf(stderr, "gc: %s\n", err ? s0_error_message(err) : "?");
			r->gc_rc = rc;
			s0_error_free(err);
			break;
		}
		r->gcs++;
	}
	return NULL;
}

START_TEST(test_gc_concurrent_with_publish)
{
	blk_env e;
	blk_open(&e, 4096);
	race r = {.e = &e};
	pthread_mutex_init(&r.mu, NULL);
	s0__bstore_close(e.bs);
	e.opts.roots = race_roots;
	e.opts.roots_payload = &r;
	OK(s0__bstore_open(e.os, &e.opts, &e.bs, &err_));
	enum { NCH = 64, PATTERNS = 6 };
	uint64_t size = NCH * 4096;
	uint8_t *model = calloc(1, size), *back = malloc(size), chunk[4096];
	s0__genid head;
	OK(s0__bstore_create(e.bs, size, &head, &err_));
	r.roots[0] = head;
	r.n_roots = 1;
	s0__bstore_unref(e.bs, &head);
	pthread_t t;
	pthread_create(&t, NULL, gc_loop, &r);
	long iters = s0_test_iterations(150);
	uint64_t x = 99;
	for (long it = 0; it < iters && !r.gc_rc; it++) {
		s0__branch *b;
		OK(s0__bstore_attach(e.bs, &head, &b, &err_));
		/* Rewrite a few chunks with one of a few patterns: content that was
		 * garbage a moment ago comes back and must be stored again or kept. */
		for (int k = 0; k < 4; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			uint64_t c = x % NCH;
			blk_fill(chunk, sizeof chunk, (x >> 8) % PATTERNS);
			memcpy(model + c * 4096, chunk, 4096);
			OK(s0__branch_write(b, c * 4096, chunk, 4096, &err_));
		}
		s0__genid next;
		OK(s0__branch_publish(b, 0, &next, &err_));
		s0__branch_free(b);
		pthread_mutex_lock(&r.mu);
		r.roots[0] = next; /* record durably ... */
		pthread_mutex_unlock(&r.mu);
		s0__bstore_unref(e.bs, &next); /* ... then drop the pin */
		head = next;
		OK(s0__bstore_attach(e.bs, &head, &b, &err_));
		OK(s0__branch_read(b, 0, back, size, &err_));
		ck_assert_msg(!memcmp(back, model, size), "iteration %ld read back wrong", it);
		s0__branch_free(b);
	}
	atomic_store(&r.stop, 1);
	pthread_join(t, NULL);
	ck_assert_int_eq(r.gc_rc, 0);
	ck_assert_int_gt(r.gcs, 0);
	s0__gc_stats st;
	OK(s0__bstore_gc(e.bs, &st, &err_));
	blk_reopen(&e);
	s0__branch *b;
	OK(s0__bstore_attach(e.bs, &head, &b, &err_));
	OK(s0__branch_read(b, 0, back, size, &err_));
	ck_assert(!memcmp(back, model, size));
	s0__branch_free(b);
	free(model);
	free(back);
	blk_close(&e);
}
END_TEST

/* ---- two publishers, a reader and GC, all at once ---- */

typedef struct pubber {
	race *r;
	int slot;
	s0__branch *b;
	uint8_t *model;
	uint64_t size;
	long iters;
	int rc;
} pubber;

static void *pub_loop(void *arg)
{
	pubber *p = arg;
	uint8_t chunk[4096];
	uint64_t x = 77 + (uint64_t)p->slot;
	for (long it = 0; it < p->iters && !p->rc; it++) {
		for (int k = 0; k < 3; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			uint64_t c = x % (p->size / 4096);
			blk_fill(chunk, sizeof chunk, (x >> 8) % 5);
			memcpy(p->model + c * 4096, chunk, 4096);
			if (s0__branch_write(p->b, c * 4096, chunk, 4096, NULL) < 0)
				p->rc = -1;
		}
		s0__genid g;
		if (s0__branch_publish(p->b, S0__PUBLISH_CONTINUE, &g, NULL) < 0) {
			p->rc = -2;
			break;
		}
		pthread_mutex_lock(&p->r->mu);
		p->r->roots[p->slot] = g;
		pthread_mutex_unlock(&p->r->mu);
		s0__bstore_unref(p->r->e->bs, &g);
	}
	return NULL;
}

static void *read_loop(void *arg)
{
	pubber *p = arg; /* two of them */
	uint8_t buf[10000];
	uint64_t x = 5;
	while (!atomic_load(&p[0].r->stop)) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		pubber *q = &p[x % 2];
		uint64_t off = (x >> 8) % (q->size - sizeof buf);
		if (s0__branch_read(q->b, off, buf, sizeof buf, NULL) < 0)
			q->rc = -3;
	}
	return NULL;
}

START_TEST(test_concurrent_publishers_reader_gc)
{
	blk_env e;
	blk_open(&e, 4096);
	race r = {.e = &e};
	pthread_mutex_init(&r.mu, NULL);
	s0__bstore_close(e.bs);
	e.opts.roots = race_roots;
	e.opts.roots_payload = &r;
	OK(s0__bstore_open(e.os, &e.opts, &e.bs, &err_));
	pubber p[2];
	r.n_roots = 2;
	for (int i = 0; i < 2; i++) {
		s0__genid g;
		p[i] = (pubber){.r = &r, .slot = i, .size = 48 * 4096, .iters = s0_test_iterations(60)};
		p[i].model = calloc(1, p[i].size);
		OK(s0__bstore_create(e.bs, p[i].size, &g, &err_));
		OK(s0__bstore_attach(e.bs, &g, &p[i].b, &err_));
		r.roots[i] = g;
		s0__bstore_unref(e.bs, &g);
	}
	pthread_t tp[2], tg, tr;
	pthread_create(&tg, NULL, gc_loop, &r);
	pthread_create(&tr, NULL, read_loop, p);
	for (int i = 0; i < 2; i++)
		pthread_create(&tp[i], NULL, pub_loop, &p[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(tp[i], NULL);
	atomic_store(&r.stop, 1);
	pthread_join(tg, NULL);
	pthread_join(tr, NULL);
	ck_assert_int_eq(r.gc_rc, 0);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(p[i].rc, 0);
		s0__branch_free(p[i].b);
	}
	OK(s0__bstore_gc(e.bs, NULL, &err_));
	blk_reopen(&e);
	uint8_t *back = malloc(p[0].size);
	for (int i = 0; i < 2; i++) {
		s0__branch *b;
		OK(s0__bstore_attach(e.bs, &r.roots[i], &b, &err_));
		OK(s0__branch_read(b, 0, back, p[i].size, &err_));
		ck_assert(!memcmp(back, p[i].model, p[i].size));
		s0__branch_free(b);
		free(p[i].model);
	}
	free(back);
	blk_close(&e);
}
END_TEST

Suite *s0_bstore_gc_suite(void)
{
	Suite *s = suite_create(objenv_name("bstore_gc"));
	TCase *tc = tcase_create("gc");
	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_gc_roots_and_pins);
	tcase_add_test(tc, test_gc_damaged_root_deletes_nothing);
	tcase_add_test(tc, test_cycles_grow_by_changes);
	tcase_add_test(tc, test_gc_concurrent_with_publish);
	tcase_add_test(tc, test_concurrent_publishers_reader_gc);
	suite_add_tcase(s, tc);
	return s;
}
