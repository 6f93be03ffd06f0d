/*
 * The RootFS over the real copy-on-write block store: a template imported
 * into a branch and published once, sandboxes branching from that
 * generation, flush-then-publish commits that are fsck-clean when attached
 * again, small commits storing only a handful of chunks, and writes after
 * the seal refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "rt_support.h"
#include "local/blocks/bstore.h"

#define P(s) (s), strlen(s)
#define VOL (128 * MiB)

typedef struct env {
	char *dir;
	s0__objstore *os;
	s0__bstore *bs;
} env;

static void env_open(env *e)
{
	e->dir = s0_test_tmpdir("rootfs-cow");
	char *objdir = s0__asprintf("%s/objects", e->dir);
	uint8_t key[32];
	memset(key, 0x3c, sizeof key);
	s0_error *err = NULL;
	int rc = s0__objstore_open_dir(objdir, key, NULL, &e->os, &err);
	ck_assert_msg(rc == S0_OK, "objstore: %s", s0_error_message(err));
	s0__bstore_options o = {.chunk_bytes = 64 * 1024, .scratch_dir = e->dir};
	rc = s0__bstore_open(e->os, &o, &e->bs, &err);
	ck_assert_msg(rc == S0_OK, "bstore: %s", s0_error_message(err));
	free(objdir);
}

static void env_close(env *e)
{
	s0__bstore_close(e->bs);
	s0__objstore_free(e->os);
	s0_test_rmrf(e->dir);
	free(e->dir);
}

/* A sandbox's writable RootFS: a branch of @p gen, as an rt_fs. */
static s0__branch *attach(env *e, const s0__genid *gen, rt_fs *t)
{
	s0__branch *b = NULL;
	ck_assert_int_eq(s0__bstore_attach(e->bs, gen, &b, NULL), S0_OK);
	memset(t, 0, sizeof *t);
	t->tmp = s0_test_tmpdir("rootfs-cow-sbx");
	s0__branch_blockdev(b, &t->dev);
	s0_error *err = NULL;
	int rc = s0__rootfs_open(&t->dev, 0, &t->fs, &err);
	ck_assert_msg(rc == S0_OK, "open: %s", s0_error_message(err));
	return b;
}

/* Pause: flush, then seal and publish (the commit protocol). */
static void commit(rt_fs *t, s0__branch *b, s0__genid *out, s0__branch_counters *c)
{
	ck_assert_int_eq(s0__rootfs_flush(t->fs, NULL), S0_OK);
	s0_error *err = NULL;
	int rc = s0__branch_publish(b, 0, out, &err);
	ck_assert_msg(rc == S0_OK, "publish: %s", s0_error_message(err));
	if (c)
		s0__branch_counters_get(b, c);
}

static void detach(rt_fs *t, s0__branch *b)
{
	s0__rootfs_discard(t->fs); /* already flushed and published */
	t->fs = NULL;
	s0__branch_free(b);
	s0_test_rmrf(t->tmp);
	free(t->tmp);
}

/* e2fsck of a generation through a fresh read-only view. */
static void fsck_gen(env *e, const s0__genid *gen)
{
	rt_fs t;
	s0__branch *b = attach(e, gen, &t);
	RT_ASSERT_FSCK(&t);
	detach(&t, b);
}

START_TEST(test_template_generation_and_sandboxes)
{
	env e;
	env_open(&e);
	s0__genid g0, tpl, ga, gb;
	ck_assert_int_eq(s0__bstore_create(e.bs, VOL, &g0, NULL), S0_OK);
	/* the template: imported once, published once */
	s0__branch *b0 = NULL;
	ck_assert_int_eq(s0__bstore_attach(e.bs, &g0, &b0, NULL), S0_OK);
	s0__blockdev dev;
	s0__branch_blockdev(b0, &dev);
	s0__rootfs_image_opts o = {.size_bytes = VOL};
	s0__image_stats st;
	ck_assert_int_eq(s0__rootfs_template_build(&o, e.dir, &dev, &st, NULL), S0_OK);
	s0__branch_counters bc;
	ck_assert_int_eq(s0__branch_publish(b0, 0, &tpl, NULL), S0_OK);
	s0__branch_counters_get(b0, &bc);
	ck_assert_uint_le(bc.published_chunks, st.chunks_written);
	ck_assert_uint_lt(bc.published_chunks, VOL / (64 * 1024) / 4); /* zero chunks cost nothing */
	s0__branch_free(b0);
	s0__bstore_unref(e.bs, &g0);
	/* two sandboxes claimed from the template generation */
	rt_fs a, b;
	s0__branch *ba = attach(&e, &tpl, &a), *bb = attach(&e, &tpl, &b);
	rt_write_str(&a, "/workspace/who", "sandbox A");
	char buf[1024];
	rt_fill(buf, sizeof buf, 1);
	rt_write(&a, "/workspace/small", buf, sizeof buf);
	rt_write_str(&b, "/workspace/who", "sandbox B");
	rt_mkdir_p(&b, "/var/tmp/bb");
	commit(&a, ba, &ga, &bc);
	ck_assert_uint_le(bc.published_chunks, 12); /* a small commit stores a few chunks */
	commit(&b, bb, &gb, NULL);
	/* after the seal the branch refuses writes; the error says why */
	s0_error *err = NULL;
	ck_assert_int_eq(s0__rootfs_write(a.fs, P("/workspace/late"), "x", 1, NULL, &err),
	                 S0_EINTERNAL);
	ck_assert_str_eq(s0_error_reason(err), "operation_failed");
	ck_assert_ptr_nonnull(s0_error_cause(err));
	ck_assert_int_eq(s0_error_code(s0_error_cause(err)), S0_ECONFLICT);
	s0_error_free(err);
	detach(&a, ba);
	detach(&b, bb);
	/* resume each from its own head, caches dropped (lazy fetch) */
	s0__bstore_drop_caches(e.bs);
	ba = attach(&e, &ga, &a);
	char *d = rt_read(&a, "/workspace/who", NULL);
	ck_assert_str_eq(d, "sandbox A");
	free(d);
	size_t n;
	d = rt_read(&a, "/workspace/small", &n);
	ck_assert_uint_eq(n, sizeof buf);
	ck_assert(memcmp(d, buf, n) == 0);
	free(d);
	s0__fileinfo *fi = NULL;
	ck_assert_int_eq(s0__rootfs_stat(a.fs, P("/var/tmp/bb"), NULL, &fi, NULL), S0_ENOTFOUND);
	detach(&a, ba);
	bb = attach(&e, &gb, &b);
	d = rt_read(&b, "/workspace/who", NULL);
	ck_assert_str_eq(d, "sandbox B");
	free(d);
	detach(&b, bb);
	fsck_gen(&e, &tpl);
	fsck_gen(&e, &ga);
	fsck_gen(&e, &gb);
	s0__bstore_unref(e.bs, &tpl);
	s0__bstore_unref(e.bs, &ga);
	s0__bstore_unref(e.bs, &gb);
	env_close(&e);
}
END_TEST

START_TEST(test_many_commits_and_fork)
{
	env e;
	env_open(&e);
	s0__genid g0, head;
	ck_assert_int_eq(s0__bstore_create(e.bs, VOL, &g0, NULL), S0_OK);
	s0__branch *b0 = NULL;
	ck_assert_int_eq(s0__bstore_attach(e.bs, &g0, &b0, NULL), S0_OK);
	s0__blockdev dev;
	s0__branch_blockdev(b0, &dev);
	s0__rootfs_image_opts o = {.size_bytes = VOL};
	ck_assert_int_eq(s0__rootfs_template_build(&o, e.dir, &dev, NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__branch_publish(b0, 0, &head, NULL), S0_OK);
	s0__branch_free(b0);
	s0__bstore_unref(e.bs, &g0);
	/* pause/resume cycles, each adding, renaming and deleting */
	long cycles = s0_test_iterations(8);
	for (long c = 0; c < cycles; c++) {
		rt_fs t;
		s0__branch *b = attach(&e, &head, &t);
		char p[64], q[64];
		for (int i = 0; i < 50; i++) {
			snprintf(p, sizeof p, "/workspace/c%ld/f%d", c, i);
			rt_write_str(&t, p, p);
		}
		if (c > 0) {
			snprintf(p, sizeof p, "/workspace/c%ld", c - 1);
			snprintf(q, sizeof q, "/workspace/old/c%ld", c - 1);
			ck_assert_int_eq(s0__rootfs_move(t.fs, P(p), P(q), NULL, NULL), S0_OK);
			snprintf(p, sizeof p, "/workspace/old/c%ld/f7", c - 1);
			ck_assert_int_eq(s0__rootfs_delete(t.fs, P(p), NULL, NULL), S0_OK);
		}
		s0__genid next;
		commit(&t, b, &next, NULL);
		detach(&t, b);
		s0__bstore_unref(e.bs, &head);
		head = next;
	}
	fsck_gen(&e, &head);
	/* a fork of a running sandbox: the branch copy sees the flushed state */
	rt_fs t;
	s0__branch *b = attach(&e, &head, &t);
	rt_write_str(&t, "/workspace/before-fork", "x");
	ck_assert_int_eq(s0__rootfs_flush(t.fs, NULL), S0_OK);
	s0__branch *fb = NULL;
	ck_assert_int_eq(s0__branch_fork(b, &fb, NULL), S0_OK);
	rt_fs f = {0};
	f.tmp = s0_test_tmpdir("rootfs-cow-fork");
	s0__branch_blockdev(fb, &f.dev);
	ck_assert_int_eq(s0__rootfs_open(&f.dev, 0, &f.fs, NULL), S0_OK);
	free(rt_read(&f, "/workspace/before-fork", NULL));
	char p[64];
	snprintf(p, sizeof p, "/workspace/old/c%ld/f3", cycles - 2 >= 0 ? cycles - 2 : 0);
	if (cycles >= 2)
		free(rt_read(&f, p, NULL));
	RT_ASSERT_FSCK(&f);
	s0__rootfs_close(f.fs, NULL);
	f.fs = NULL;
	s0__branch_free(fb);
	s0_test_rmrf(f.tmp);
	free(f.tmp);
	s0__rootfs_discard(t.fs);
	t.fs = NULL;
	s0__branch_free(b);
	s0_test_rmrf(t.tmp);
	free(t.tmp);
	s0__bstore_unref(e.bs, &head);
	env_close(&e);
}
END_TEST

/* The block store's own in-memory device works the same as the test one. */
START_TEST(test_on_blocks_memdev)
{
	rt_fs t = {0};
	t.tmp = s0_test_tmpdir("rootfs-memdev");
	ck_assert_int_eq(s0__memdev_new(64 * MiB, &t.dev, NULL), S0_OK);
	s0__rootfs_image_opts o = {.size_bytes = 64 * MiB};
	ck_assert_int_eq(s0__rootfs_template_build(&o, t.tmp, &t.dev, NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__rootfs_open(&t.dev, 0, &t.fs, NULL), S0_OK);
	char *buf = malloc(3 * MiB + 5);
	rt_fill(buf, 3 * MiB + 5, 11);
	rt_write(&t, "/workspace/m/big", buf, 3 * MiB + 5);
	rt_reopen(&t);
	size_t n;
	char *d = rt_read(&t, "/workspace/m/big", &n);
	ck_assert_uint_eq(n, 3 * MiB + 5);
	ck_assert(memcmp(d, buf, n) == 0);
	free(d);
	free(buf);
	RT_ASSERT_FSCK(&t);
	ck_assert_int_eq(s0__rootfs_close(t.fs, NULL), S0_OK);
	s0__memdev_free(&t.dev);
	s0_test_rmrf(t.tmp);
	free(t.tmp);
}
END_TEST

static Suite *cow_suite(void)
{
	Suite *s = suite_create("rootfs_cow");
	TCase *tc = tcase_create("cow");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_template_generation_and_sandboxes);
	tcase_add_test(tc, test_many_commits_and_fork);
	tcase_add_test(tc, test_on_blocks_memdev);
	suite_add_tcase(s, tc);
	return s;
}

S0_TEST_MAIN(cow_suite)
