/* Block store: volumes, branches, publish, elision, counters, bad input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blktest.h"
#include "objenv.h"
#include "check_main.h"

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

START_TEST(test_create_read_zero)
{
	blk_env e;
	blk_open(&e, 0);
	s0__genid g;
	OK(s0__bstore_create(e.bs, 1000000, &g, &err_));
	s0__gen_info gi;
	OK(s0__bstore_gen_info(e.bs, &g, &gi, &err_));
	ck_assert_uint_eq(gi.size_bytes, 1000000);
	ck_assert_uint_eq(gi.chunk_bytes, 65536);
	ck_assert_uint_eq(gi.seq, 0);
	ck_assert(s0__objid_is_zero(&gi.root));
	s0__branch *b;
	OK(s0__bstore_attach(e.bs, &g, &b, &err_));
	ck_assert_uint_eq(s0__branch_size(b), 1000000);
	uint8_t buf[5000];
	memset(buf, 0xff, sizeof buf);
	OK(s0__branch_read(b, 1000000 - 5000, buf, sizeof buf, &err_));
	for (size_t i = 0; i < sizeof buf; i++)
		ck_assert_int_eq(buf[i], 0);
	s0__branch_free(b);
	s0__bstore_unref(e.bs, &g);
	blk_close(&e);
}
END_TEST

START_TEST(test_write_publish_reattach)
{
	blk_env e;
	blk_open(&e, 4096);
	uint64_t size = 3 * 1024 * 1024 + 1234; /* not a chunk multiple */
	s0__genid g0, g1;
	OK(s0__bstore_create(e.bs, size, &g0, &err_));
	s0__branch *b;
	OK(s0__bstore_attach(e.bs, &g0, &b, &err_));
	uint8_t *img = calloc(1, size), *back = malloc(size);
	/* Unaligned writes across chunk boundaries, including the short tail. */
	struct { uint64_t off; size_t len; } w[] = {
		{0, 10}, {4090, 20}, {100000, 70000}, {size - 3000, 3000}, {2000000, 1}};
	for (size_t i = 0; i < sizeof w / sizeof *w; i++) {
		blk_fill(img + w[i].off, w[i].len, i + 1);
		OK(s0__branch_write(b, w[i].off, img + w[i].off, w[i].len, &err_));
	}
	OK(s0__branch_read(b, 0, back, size, &err_));
	ck_assert(memcmp(img, back, size) == 0);
	OK(s0__branch_publish(b, 0, &g1, &err_));
	/* Still readable after publishing; writes fenced. */
	OK(s0__branch_read(b, 0, back, size, &err_));
	ck_assert(memcmp(img, back, size) == 0);
	FAILS(S0_ECONFLICT, s0__branch_write(b, 0, "x", 1, &err_));
	FAILS(S0_ECONFLICT, s0__branch_publish(b, 0, &g1, &err_));
	s0__branch_free(b);
	s0__gen_info gi;
	OK(s0__bstore_gen_info(e.bs, &g1, &gi, &err_));
	ck_assert_uint_eq(gi.seq, 1);
	ck_assert(s0__objid_eq(&gi.parent, &g0));
	ck_assert_uint_eq(gi.depth, 3);
	blk_reopen(&e);
	OK(s0__bstore_attach(e.bs, &g1, &b, &err_));
	memset(back, 0xee, size);
	OK(s0__branch_read(b, 0, back, size, &err_));
	ck_assert(memcmp(img, back, size) == 0);
	s0__branch_free(b);
	free(img);
	free(back);
	blk_close(&e);
}
END_TEST

START_TEST(test_elision_and_zero_chunks)
{
	blk_env e;
	blk_open(&e, 0);
	uint32_t cs = 65536;
	s0__genid g0, g1, g2;
	OK(s0__bstore_create(e.bs, 64 * (uint64_t)cs, &g0, &err_));
	s0__branch *b;
	OK(s0__bstore_attach(e.bs, &g0, &b, &err_));
	uint8_t *chunk = malloc(cs), *zero = calloc(1, cs);
	blk_fill(chunk, cs, 7);
	OK(s0__branch_write(b, 0, chunk, cs, &err_));
	OK(s0__branch_write(b, cs, chunk, cs, &err_)); /* same content: one object */
	OK(s0__branch_write(b, 5 * (uint64_t)cs, zero, cs, &err_)); /* zeros over zeros */
	OK(s0__branch_write(b, 6 * (uint64_t)cs + 10, zero, 100, &err_));
	s0__branch_counters bc;
	s0__branch_counters_get(b, &bc);
	ck_assert_uint_eq(bc.dirty_chunks, 2);
	ck_assert_uint_eq(bc.writes_elided, 2);
	OK(s0__branch_publish(b, S0__PUBLISH_CONTINUE, &g1, &err_));
	s0__branch_counters_get(b, &bc);
	ck_assert_uint_eq(bc.published_chunks, 1);
	ck_assert_uint_eq(bc.dirty_chunks, 0);
	/* Rewriting committed content, whole or partial, is elided. */
	OK(s0__branch_write(b, 0, chunk, cs, &err_));
	OK(s0__branch_write(b, cs + 100, chunk + 100, 5000, &err_));
	s0__branch_counters_get(b, &bc);
	ck_assert_uint_eq(bc.dirty_chunks, 0);
	/* Dirty then restored: dropped again on a whole-chunk write, at publish otherwise. */
	OK(s0__branch_write(b, 0, "XYZ", 3, &err_));
	OK(s0__branch_write(b, 2 * (uint64_t)cs, "XYZ", 3, &err_));
	OK(s0__branch_write(b, 2 * (uint64_t)cs, zero, 3, &err_));
	OK(s0__branch_write(b, 0, chunk, cs, &err_));
	s0__branch_counters_get(b, &bc);
	ck_assert_uint_eq(bc.dirty_chunks, 1);
	/* Zeroing a committed chunk costs no object. */
	OK(s0__branch_zero(b, cs, cs, &err_));
	s0__bstore_counters c0, c1;
	s0__bstore_counters_get(e.bs, &c0);
	OK(s0__branch_publish(b, S0__PUBLISH_CONTINUE, &g2, &err_));
	s0__bstore_counters_get(e.bs, &c1);
	ck_assert_uint_eq(c1.chunks_stored - c0.chunks_stored, 0);
	ck_assert_uint_eq(c1.chunks_elided - c0.chunks_elided, 1);
	s0__gen_info gi;
	OK(s0__bstore_gen_info(e.bs, &g2, &gi, &err_));
	ck_assert_uint_eq(gi.nonzero_chunks, 1);
	uint8_t back[16];
	OK(s0__branch_read(b, cs, back, sizeof back, &err_));
	ck_assert_mem_eq(back, zero, sizeof back);
	OK(s0__branch_read(b, 0, back, sizeof back, &err_));
	ck_assert_mem_eq(back, chunk, sizeof back);
	s0__branch_free(b);
	free(chunk);
	free(zero);
	blk_close(&e);
}
END_TEST

/* COST-01/03: a publish stores the k written chunks plus a few pages, and
 * the same count on a small and a huge volume. */
static void publish_k(blk_env *e, uint64_t size, int k, uint64_t *objs, uint64_t *chunks,
                      uint64_t *bytes)
{
	s0__genid g0, g1;
	OK(s0__bstore_create(e->bs, size, &g0, &err_));
	s0__branch *b;
	OK(s0__bstore_attach(e->bs, &g0, &b, &err_));
	uint8_t buf[65536];
	for (int i = 0; i < k; i++) {
		blk_fill(buf, sizeof buf, (uint64_t)i + size);
		uint64_t off = (uint64_t)i * (size / (uint64_t)k) / 65536 * 65536;
		OK(s0__branch_write(b, off, buf, sizeof buf, &err_));
	}
	OK(s0__branch_publish(b, 0, &g1, &err_));
	s0__branch_counters bc;
	s0__branch_counters_get(b, &bc);
	*objs = bc.published_objects;
	*chunks = bc.published_chunks;
	*bytes = bc.published_bytes;
	s0__branch_free(b);
}

START_TEST(test_publish_cost_independent_of_size)
{
	blk_env e;
	blk_open(&e, 0);
	uint64_t o_small, c_small, b_small, o_big, c_big, b_big;
	publish_k(&e, 256ull << 20, 8, &o_small, &c_small, &b_small);
	publish_k(&e, 16ull << 30, 8, &o_big, &c_big, &b_big);
	ck_assert_uint_eq(c_small, 8);
	ck_assert_uint_eq(c_big, 8);
	/* 8 chunks, at most one page per level per chunk, the descriptor. */
	ck_assert_uint_le(o_small, 8 + 8 * 2 + 1);
	ck_assert_uint_le(o_big, 8 + 8 * 3 + 1);
	/* Bytes written differ by a few map pages only (64x more volume). */
	ck_assert_uint_le(b_big, b_small + b_small / 10);
	blk_close(&e);
}
END_TEST

/* COST-02: attach reads only the descriptor; a read fetches its path. */
START_TEST(test_attach_is_lazy)
{
	blk_env e;
	blk_open(&e, 0);
	s0__genid g0, g1;
	uint64_t size = 4ull << 30;
	OK(s0__bstore_create(e.bs, size, &g0, &err_));
	s0__branch *b;
	OK(s0__bstore_attach(e.bs, &g0, &b, &err_));
	uint8_t *buf = malloc(1 << 20);
	for (int i = 0; i < 64; i++) {
		blk_fill(buf, 1 << 20, (uint64_t)i);
		OK(s0__branch_write(b, (uint64_t)i * (size / 64), buf, 1 << 20, &err_));
	}
	OK(s0__branch_publish(b, 0, &g1, &err_));
	s0__branch_free(b);
	blk_reopen(&e);
	s0__bstore_counters c0, c1;
	s0__bstore_counters_get(e.bs, &c0);
	OK(s0__bstore_attach(e.bs, &g1, &b, &err_));
	s0__bstore_counters_get(e.bs, &c1);
	ck_assert_uint_eq(c1.pages_fetched - c0.pages_fetched, 1); /* the descriptor */
	ck_assert_uint_eq(c1.chunks_fetched, 0);
	OK(s0__branch_read(b, size / 64 * 5 + 100, buf, 4096, &err_));
	s0__bstore_counters_get(e.bs, &c1);
	ck_assert_uint_eq(c1.pages_fetched - c0.pages_fetched, 1 + 3); /* depth 3 */
	ck_assert_uint_eq(c1.chunks_fetched, 1);
	s0__branch_counters bc;
	s0__branch_counters_get(b, &bc);
	ck_assert_uint_eq(bc.chunks_fetched, 1);
	OK(s0__branch_read(b, size / 64 * 5 + 100, buf, 4096, &err_));
	s0__branch_counters_get(b, &bc);
	ck_assert_uint_eq(bc.chunks_fetched, 1);
	ck_assert_uint_eq(bc.cache_hits, 1);
	/* Reading a 1 MiB extent fetches its 16 chunks only. */
	OK(s0__branch_read(b, size / 64 * 9, buf, 1 << 20, &err_));
	s0__branch_counters_get(b, &bc);
	ck_assert_uint_eq(bc.chunks_fetched, 17);
	s0__branch_free(b);
	free(buf);
	blk_close(&e);
}
END_TEST

/* A map deeper than the minimum: 1 KiB chunks on a 4 GiB volume (2^22
 * chunks, depth 4), through publish, continue, GC and reattach. */
START_TEST(test_deep_map)
{
	blk_env e;
	blk_open(&e, 1024);
	uint64_t size = 4ull << 30;
	enum { N = 60 };
	uint64_t off[N];
	uint8_t data[N][700];
	s0__genid g0, g1, g2;
	OK(s0__bstore_create(e.bs, size, &g0, &err_));
	s0__gen_info gi;
	OK(s0__bstore_gen_info(e.bs, &g0, &gi, &err_));
	ck_assert_uint_eq(gi.depth, 4);
	s0__branch *b;
	OK(s0__bstore_attach(e.bs, &g0, &b, &err_));
	for (int i = 0; i < N; i++) {
		off[i] = i == N - 1 ? size - sizeof data[i] : (uint64_t)i * (size / N) + (uint64_t)i * 333;
		blk_fill(data[i], sizeof data[i], (uint64_t)i + 900);
		OK(s0__branch_write(b, off[i], data[i], sizeof data[i], &err_));
	}
	OK(s0__branch_publish(b, S0__PUBLISH_CONTINUE, &g1, &err_));
	for (int i = 0; i < N; i += 3) { /* rewrite a third */
		blk_fill(data[i], sizeof data[i], (uint64_t)i + 5000);
		OK(s0__branch_write(b, off[i], data[i], sizeof data[i], &err_));
	}
	OK(s0__branch_publish(b, 0, &g2, &err_));
	s0__branch_free(b);
	e.roots[e.n_roots++] = g2;
	s0__bstore_unref(e.bs, &g0);
	s0__bstore_unref(e.bs, &g1);
	s0__bstore_unref(e.bs, &g2);
	OK(s0__bstore_gc(e.bs, NULL, &err_));
	blk_reopen(&e);
	OK(s0__bstore_attach(e.bs, &g2, &b, &err_));
	uint8_t back[2048];
	for (int i = 0; i < N; i++) {
		OK(s0__branch_read(b, off[i], back, sizeof data[i], &err_));
		ck_assert_mem_eq(back, data[i], sizeof data[i]);
		if (off[i] >= 1000) { /* zeros just before */
			OK(s0__branch_read(b, off[i] - 1000, back, 1000, &err_));
			ck_assert(all_zero(back, 1000));
		}
	}
	s0__branch_free(b);
	FAILS(S0_ENOTFOUND, s0__bstore_attach(e.bs, &g1, &b, &err_));
	blk_close(&e);
}
END_TEST

START_TEST(test_bad_input)
{
	blk_env e;
	blk_open(&e, 0);
	s0__genid g, bogus;
	FAILS(S0_EINVAL, s0__bstore_create(e.bs, 0, &g, &err_));
	FAILS(S0_EINVAL, s0__bstore_create(e.bs, S0__BSTORE_SIZE_MAX + 1, &g, &err_));
	OK(s0__bstore_create(e.bs, 100000, &g, &err_));
	s0__branch *b;
	OK(s0__bstore_attach(e.bs, &g, &b, &err_));
	uint8_t buf[16] = {1};
	/* Zero-length operations anywhere up to the end are no-ops. */
	OK(s0__branch_read(b, 0, NULL, 0, &err_));
	OK(s0__branch_read(b, 100000, buf, 0, &err_));
	OK(s0__branch_write(b, 100000, NULL, 0, &err_));
	OK(s0__branch_zero(b, 5, 0, &err_));
	FAILS(S0_EINVAL, s0__branch_read(b, 100001, buf, 0, &err_));
	FAILS(S0_EINVAL, s0__branch_read(b, 99990, buf, 11, &err_));
	FAILS(S0_EINVAL, s0__branch_write(b, 99990, buf, 11, &err_));
	FAILS(S0_EINVAL, s0__branch_write(b, UINT64_MAX - 2, buf, 8, &err_));
	FAILS(S0_EINVAL, s0__branch_read(b, UINT64_MAX, buf, 1, &err_));
	FAILS(S0_EINVAL, s0__branch_zero(b, 1, UINT64_MAX, &err_));
	FAILS(S0_EINVAL, s0__branch_write(b, 0, NULL, 3, &err_));
	s0__branch_counters bc;
	s0__branch_counters_get(b, &bc);
	ck_assert_uint_eq(bc.dirty_chunks, 0);
	/* Fence. */
	OK(s0__branch_write(b, 10, buf, 4, &err_));
	OK(s0__branch_seal(b, &err_));
	OK(s0__branch_seal(b, &err_));
	ck_assert(s0__branch_sealed(b));
	s0_error *err = NULL;
	ck_assert_int_eq(s0__branch_write(b, 10, buf, 4, &err), S0_ECONFLICT);
	ck_assert_str_eq(s0_error_reason(err), "branch_sealed");
	s0_error_free(err);
	FAILS(S0_ECONFLICT, s0__branch_zero(b, 0, 10, &err_));
	OK(s0__branch_read(b, 10, buf, 4, &err_));
	s0__branch_free(b);
	/* Unknown generations. */
	memset(&bogus, 0x42, sizeof bogus);
	FAILS(S0_ENOTFOUND, s0__bstore_attach(e.bs, &bogus, &b, &err_));
	FAILS(S0_ENOTFOUND, s0__bstore_ref(e.bs, &bogus, &err_));
	s0__gen_info gi;
	FAILS(S0_ENOTFOUND, s0__bstore_gen_info(e.bs, &bogus, &gi, &err_));
	memset(&bogus, 0, sizeof bogus);
	FAILS(S0_ENOTFOUND, s0__bstore_attach(e.bs, &bogus, &b, &err_));
	s0__bstore_unref(e.bs, &bogus); /* ignored */
	/* A chunk id is not a generation. */
	OK(s0__bstore_attach(e.bs, &g, &b, &err_));
	uint8_t chunk[65536];
	blk_fill(chunk, sizeof chunk, 3);
	OK(s0__branch_write(b, 0, chunk, sizeof chunk, &err_));
	s0__genid g1;
	OK(s0__branch_publish(b, 0, &g1, &err_));
	s0__branch_free(b);
	s0__objid cid;
	s0__objstore_hash(e.os, chunk, sizeof chunk, &cid);
	FAILS(S0_ENOTFOUND, s0__bstore_attach(e.bs, &cid, &b, &err_));
	/* Bad chunk sizes. */
	s0__bstore *bs2;
	s0__bstore_options o = {.chunk_bytes = 3000};
	FAILS(S0_EINVAL, s0__bstore_open(e.os, &o, &bs2, &err_));
	o.chunk_bytes = 512;
	FAILS(S0_EINVAL, s0__bstore_open(e.os, &o, &bs2, &err_));
	blk_close(&e);
}
END_TEST

START_TEST(test_fork_and_continue)
{
	blk_env e;
	blk_open(&e, 4096);
	s0__genid g0, g1, g2;
	OK(s0__bstore_create(e.bs, 1 << 20, &g0, &err_));
	s0__branch *a, *c;
	OK(s0__bstore_attach(e.bs, &g0, &a, &err_));
	OK(s0__branch_write(a, 5000, "parent", 6, &err_));
	OK(s0__branch_fork(a, &c, &err_));
	OK(s0__branch_write(c, 5000, "child!", 6, &err_));
	OK(s0__branch_write(a, 9000, "more", 4, &err_));
	char buf[7] = {0};
	OK(s0__branch_read(a, 5000, buf, 6, &err_));
	ck_assert_str_eq(buf, "parent");
	OK(s0__branch_read(c, 5000, buf, 6, &err_));
	ck_assert_str_eq(buf, "child!");
	OK(s0__branch_read(c, 9000, buf, 4, &err_));
	ck_assert_int_eq(buf[0], 0);
	/* Publish with continue: writable again on the new base. */
	OK(s0__branch_publish(a, S0__PUBLISH_CONTINUE, &g1, &err_));
	s0__genid base;
	s0__branch_base(a, &base);
	ck_assert(s0__objid_eq(&base, &g1));
	ck_assert(!s0__branch_sealed(a));
	OK(s0__branch_write(a, 5000, "second", 6, &err_));
	OK(s0__branch_publish(a, S0__PUBLISH_CONTINUE, &g2, &err_));
	s0__branch *r;
	OK(s0__bstore_attach(e.bs, &g1, &r, &err_));
	OK(s0__branch_read(r, 5000, buf, 6, &err_));
	ck_assert_str_eq(buf, "parent");
	s0__branch_free(r);
	OK(s0__bstore_attach(e.bs, &g2, &r, &err_));
	OK(s0__branch_read(r, 5000, buf, 6, &err_));
	ck_assert_str_eq(buf, "second");
	OK(s0__branch_read(r, 9000, buf, 4, &err_));
	ck_assert_mem_eq(buf, "more", 4);
	s0__branch_free(r);
	/* Forking a sealed branch gives a writable copy. */
	OK(s0__branch_seal(c, &err_));
	OK(s0__branch_fork(c, &r, &err_));
	OK(s0__branch_write(r, 0, "w", 1, &err_));
	OK(s0__branch_read(r, 5000, buf, 6, &err_));
	ck_assert_str_eq(buf, "child!");
	s0__branch_free(r);
	s0__branch_free(c);
	s0__branch_free(a);
	blk_close(&e);
}
END_TEST

START_TEST(test_blockdev_views)
{
	s0__blockdev d;
	OK(s0__memdev_new(10ull << 30, &d, &err_));
	ck_assert_uint_eq(s0__blockdev_size(&d), 10ull << 30);
	uint8_t buf[100];
	OK(s0__blockdev_write(&d, (5ull << 30) - 50, "across a page boundary", 22, &err_));
	OK(s0__blockdev_read(&d, (5ull << 30) - 50, buf, 22, &err_));
	ck_assert_mem_eq(buf, "across a page boundary", 22);
	OK(s0__blockdev_read(&d, 7ull << 30, buf, 100, &err_));
	ck_assert_int_eq(buf[0] | buf[99], 0);
	FAILS(S0_EINVAL, s0__blockdev_read(&d, 10ull << 30, buf, 1, &err_));
	OK(s0__blockdev_flush(&d, &err_));
	s0__memdev_free(&d);
	blk_env e;
	blk_open(&e, 0);
	s0__genid g;
	OK(s0__bstore_create(e.bs, 1 << 20, &g, &err_));
	s0__branch *b;
	OK(s0__bstore_attach(e.bs, &g, &b, &err_));
	s0__branch_blockdev(b, &d);
	ck_assert_uint_eq(s0__blockdev_size(&d), 1 << 20);
	OK(s0__blockdev_write(&d, 1024, "superblock", 10, &err_));
	OK(s0__blockdev_flush(&d, &err_));
	OK(s0__blockdev_read(&d, 1024, buf, 10, &err_));
	ck_assert_mem_eq(buf, "superblock", 10);
	FAILS(S0_EINVAL, s0__blockdev_write(&d, 1 << 20, buf, 1, &err_));
	OK(s0__branch_seal(b, &err_));
	FAILS(S0_ECONFLICT, s0__blockdev_write(&d, 0, buf, 1, &err_));
	s0__branch_free(b);
	blk_close(&e);
}
END_TEST

Suite *s0_bstore_suite(void)
{
	Suite *s = suite_create(objenv_name("bstore"));
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_create_read_zero);
	tcase_add_test(tc, test_write_publish_reattach);
	tcase_add_test(tc, test_elision_and_zero_chunks);
	tcase_add_test(tc, test_publish_cost_independent_of_size);
	tcase_add_test(tc, test_attach_is_lazy);
	tcase_add_test(tc, test_deep_map);
	tcase_add_test(tc, test_bad_input);
	tcase_add_test(tc, test_fork_and_continue);
	tcase_add_test(tc, test_blockdev_views);
	suite_add_tcase(s, tc);
	return s;
}
