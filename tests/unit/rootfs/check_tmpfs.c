/* The runtime tmpfs: files semantics, mounts, limits, redirects, images. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "rt_support.h"
#include "local/fsview/tmpfs.h"

#define P(s) (s), strlen(s)
#define EXPECT(code, reason, expr)                                                       \
	do {                                                                             \
		s0_error *xe = NULL;                                                     \
		int rc_ = (expr);                                                        \
		rt_expect(rc_, xe, code, reason);                                        \
	} while (0)

static s0__tmpfs *fresh(void)
{
	const char *eph[] = {"/workspace/cache", "/scratch"};
	s0__tmpfs *t = NULL;
	ck_assert_int_eq(s0__tmpfs_new_runtime(eph, 2, &t, NULL), S0_OK);
	return t;
}

static void put(s0__tmpfs *t, const char *p, const char *s)
{
	s0_error *e = NULL;
	int rc = s0__tmpfs_write(t, P(p), s, strlen(s), NULL, &e);
	ck_assert_msg(rc == S0_OK, "write %s: %s", p, s0_error_message(e));
}

static char *get(s0__tmpfs *t, const char *p)
{
	void *d = NULL;
	size_t n = 0;
	s0_error *e = NULL;
	int rc = s0__tmpfs_read(t, P(p), 0, -1, NULL, &d, &n, &e);
	ck_assert_msg(rc == S0_OK, "read %s: %s", p, s0_error_message(e));
	return d;
}

static size_t count(s0__tmpfs *t, const char *dir)
{
	s0__filelist *l = NULL;
	ck_assert_int_eq(s0__tmpfs_list(t, P(dir), NULL, &l, NULL), S0_OK);
	size_t n = l->len;
	s0__filelist_free(l);
	return n;
}

static uint64_t image_hash(s0__tmpfs *t)
{
	void *buf = NULL;
	size_t n = 0;
	ck_assert_int_eq(s0__tmpfs_serialize(t, &buf, &n, NULL), S0_OK);
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((unsigned char *)buf)[i]) * 1099511628211ull;
	free(buf);
	return h;
}

START_TEST(test_runtime_layout)
{
	s0__tmpfs *t = fresh();
	const char *dirs[] = {"/tmp", "/proc", "/dev", "/sys", "/workspace/cache", "/scratch"};
	for (size_t i = 0; i < 6; i++) {
		s0__fileinfo *fi = NULL;
		ck_assert_int_eq(s0__tmpfs_stat(t, P(dirs[i]), NULL, &fi, NULL), S0_OK);
		ck_assert_int_eq(fi->type, S0_FILE_TYPE_DIR);
		s0__fileinfo_free(fi);
		ck_assert_uint_eq(count(t, dirs[i]), 0);
	}
	s0__fileinfo *fi = NULL;
	ck_assert_int_eq(s0__tmpfs_stat(t, P("/tmp"), NULL, &fi, NULL), S0_OK);
	ck_assert_int_eq(fi->mode, 01777);
	cJSON *j = s0__fileinfo_to_json(fi);
	ck_assert_str_eq(cJSON_GetObjectItem(j, "mode")->valuestring, "1777");
	cJSON_Delete(j);
	s0__fileinfo_free(fi);
	/* read-only virtual trees */
	EXPECT(S0_EFORBIDDEN, "permission_denied", s0__tmpfs_write(t, P("/proc/x"), "1", 1, NULL, &xe));
	EXPECT(S0_EFORBIDDEN, "permission_denied", s0__tmpfs_mkdir(t, P("/sys/a"), true, NULL, &xe));
	EXPECT(S0_EFORBIDDEN, "permission_denied",
	       s0__tmpfs_symlink(t, P("x"), P("/dev/null2"), NULL, &xe));
	/* the runtime populates /proc, then seals it */
	ck_assert_int_eq(s0__tmpfs_set_readonly(t, P("/proc"), false, NULL), S0_OK);
	put(t, "/proc/1/cmdline", "init");
	ck_assert_int_eq(s0__tmpfs_set_readonly(t, P("/proc"), true, NULL), S0_OK);
	EXPECT(S0_EFORBIDDEN, "permission_denied", s0__tmpfs_delete(t, P("/proc/1"), NULL, &xe));
	char *d = get(t, "/proc/1/cmdline");
	ck_assert_str_eq(d, "init");
	free(d);
	/* mount points themselves stay */
	EXPECT(S0_EFORBIDDEN, "permission_denied", s0__tmpfs_delete(t, P("/tmp"), NULL, &xe));
	EXPECT(S0_EFORBIDDEN, "permission_denied",
	       s0__tmpfs_move(t, P("/tmp"), P("/tmp2"), NULL, &xe));
	/* outside every mount: not ours */
	EXPECT(S0_EINVAL, "invalid_request", s0__tmpfs_write(t, P("/workspace/x"), "1", 1, NULL, &xe));
	EXPECT(S0_EINVAL, "invalid_request", s0__tmpfs_list(t, P("/"), NULL, NULL, &xe));
	s0__tmpfs_free(t);
}
END_TEST

START_TEST(test_files_semantics)
{
	s0__tmpfs *t = fresh();
	put(t, "/tmp/a/b/c.txt", "hello");
	char *d = get(t, "/tmp/a/b/c.txt");
	ck_assert_str_eq(d, "hello");
	free(d);
	void *r = NULL;
	size_t n = 0;
	ck_assert_int_eq(s0__tmpfs_read(t, P("/tmp/a/b/c.txt"), 1, 3, NULL, &r, &n, NULL), S0_OK);
	ck_assert_uint_eq(n, 3);
	ck_assert(memcmp(r, "ell", 3) == 0);
	free(r);
	ck_assert_int_eq(s0__tmpfs_read(t, P("/tmp/a/b/c.txt"), 99, -1, NULL, &r, &n, NULL), S0_OK);
	ck_assert_uint_eq(n, 0);
	free(r);
	put(t, "/tmp/a/b/c.txt", "replaced");
	ck_assert_uint_eq(s0__tmpfs_used_bytes(t), 8);
	EXPECT(S0_ECONFLICT, "path_not_file", s0__tmpfs_read(t, P("/tmp/a"), 0, -1, NULL, &r, &n, &xe));
	EXPECT(S0_ECONFLICT, "path_not_file", s0__tmpfs_write(t, P("/tmp/a"), "x", 1, NULL, &xe));
	EXPECT(S0_ECONFLICT, "path_not_directory",
	       s0__tmpfs_write(t, P("/tmp/a/b/c.txt/x"), "x", 1, NULL, &xe));
	EXPECT(S0_ENOTFOUND, "file_not_found", s0__tmpfs_read(t, P("/tmp/no"), 0, -1, NULL, &r, &n, &xe));
	EXPECT(S0_ENOTFOUND, "directory_not_found", s0__tmpfs_list(t, P("/tmp/no"), NULL, NULL, &xe));
	EXPECT(S0_ECONFLICT, "path_not_directory",
	       s0__tmpfs_list(t, P("/tmp/a/b/c.txt"), NULL, NULL, &xe));
	EXPECT(S0_ECONFLICT, "path_exists", s0__tmpfs_mkdir(t, P("/tmp/a"), false, NULL, &xe));
	EXPECT(S0_ENOTFOUND, "directory_not_found", s0__tmpfs_mkdir(t, P("/tmp/x/y"), false, NULL, &xe));
	EXPECT(S0_ECONFLICT, "path_not_directory",
	       s0__tmpfs_mkdir(t, P("/tmp/a/b/c.txt"), true, NULL, &xe));
	ck_assert_int_eq(s0__tmpfs_mkdir(t, P("/tmp/a"), true, NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__tmpfs_mkdir(t, P("/tmp/p/q/r"), true, NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__tmpfs_symlink(t, P("a/b"), P("/tmp/lnk"), NULL, NULL), S0_OK);
	s0__filelist *l = NULL;
	ck_assert_int_eq(s0__tmpfs_list(t, P("/tmp/lnk"), NULL, &l, NULL), S0_OK);
	ck_assert_uint_eq(l->len, 1);
	ck_assert_str_eq(l->items[0].path, "/tmp/lnk/c.txt");
	s0__filelist_free(l);
	s0__fileinfo *fi = NULL;
	ck_assert_int_eq(s0__tmpfs_stat(t, P("/tmp/lnk"), NULL, &fi, NULL), S0_OK);
	ck_assert(fi->is_link);
	ck_assert_str_eq(fi->link_target, "a/b");
	s0__fileinfo_free(fi);
	ck_assert_int_eq(s0__tmpfs_chmod(t, P("/tmp/lnk/c.txt"), 0600, NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__tmpfs_stat(t, P("/tmp/a/b/c.txt"), NULL, &fi, NULL), S0_OK);
	ck_assert_int_eq(fi->mode, 0600);
	s0__fileinfo_free(fi);
	/* moves: file, directory into a new parent, onto an empty dir, errors */
	ck_assert_int_eq(s0__tmpfs_move(t, P("/tmp/a/b/c.txt"), P("/tmp/m/n/c2"), NULL, NULL), S0_OK);
	d = get(t, "/tmp/m/n/c2");
	ck_assert_str_eq(d, "replaced");
	free(d);
	ck_assert_int_eq(s0__tmpfs_move(t, P("/tmp/m"), P("/tmp/p/q/r"), NULL, NULL), S0_OK);
	d = get(t, "/tmp/p/q/r/n/c2");
	free(d);
	EXPECT(S0_EINVAL, "invalid_request", s0__tmpfs_move(t, P("/tmp/p"), P("/tmp/p/q/z"), NULL, &xe));
	EXPECT(S0_ENOTFOUND, "file_not_found", s0__tmpfs_move(t, P("/tmp/none"), P("/tmp/z"), NULL, &xe));
	EXPECT(S0_EINTERNAL, "operation_failed",
	       s0__tmpfs_move(t, P("/tmp/p"), P("/scratch/p"), NULL, &xe));
	EXPECT(S0_EINTERNAL, "operation_failed",
	       s0__tmpfs_move(t, P("/tmp/p"), P("/scratch"), NULL, &xe));
	/* delete: tree, missing */
	ck_assert_int_eq(s0__tmpfs_delete(t, P("/tmp/p"), NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__tmpfs_delete(t, P("/tmp/p"), NULL, NULL), S0_OK);
	ck_assert_uint_eq(s0__tmpfs_used_bytes(t), 0);
	/* hostile paths */
	EXPECT(S0_EINVAL, "invalid_request", s0__tmpfs_write(t, P("/tmp/../../x"), "1", 1, NULL, &xe));
	EXPECT(S0_EINVAL, "invalid_request", s0__tmpfs_write(t, "/tmp/a\0b", 8, "1", 1, NULL, &xe));
	ck_assert_int_eq(s0__tmpfs_symlink(t, P("gone/away"), P("/tmp/dl"), NULL, NULL), S0_OK);
	EXPECT(S0_ENOTFOUND, "directory_not_found", s0__tmpfs_write(t, P("/tmp/dl/x"), "1", 1, NULL, &xe));
	EXPECT(S0_ENOTFOUND, "directory_not_found", s0__tmpfs_mkdir(t, P("/tmp/dl/x"), true, NULL, &xe));
	ck_assert_int_eq(s0__tmpfs_mkdir(t, P("/tmp/real"), false, NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__tmpfs_symlink(t, P("real"), P("/tmp/rl"), NULL, NULL), S0_OK);
	put(t, "/tmp/rl/new/deeper/f", "below a live link is fine");
	ck_assert_int_eq(s0__tmpfs_symlink(t, P("l2"), P("/tmp/l1"), NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__tmpfs_symlink(t, P("l1"), P("/tmp/l2"), NULL, NULL), S0_OK);
	EXPECT(S0_EINVAL, "invalid_request", s0__tmpfs_read(t, P("/tmp/l1"), 0, -1, NULL, &r, &n, &xe));
	s0__tmpfs_free(t);
}
END_TEST

START_TEST(test_limit_and_redirects)
{
	s0__tmpfs *t = NULL;
	ck_assert_int_eq(s0__tmpfs_new(&t, NULL), S0_OK);
	ck_assert_int_eq(s0__tmpfs_add_mount(t, P("/small"), 0755, 0, 10, NULL), S0_OK);
	EXPECT(S0_ECONFLICT, "path_exists", s0__tmpfs_add_mount(t, P("/small"), 0755, 0, 0, &xe));
	put(t, "/small/a", "12345");
	uint64_t h = image_hash(t);
	EXPECT(S0_EINTERNAL, "operation_failed",
	       s0__tmpfs_write(t, P("/small/deep/b"), "123456", 6, NULL, &xe));
	ck_assert_uint_eq(image_hash(t), h); /* not even the parent was created */
	put(t, "/small/a", "1234567890");
	/* symlinks that leave: reported with the canonical path */
	ck_assert_int_eq(s0__tmpfs_symlink(t, P("/workspace/data"), P("/small/out"), NULL, NULL),
	                 S0_OK);
	ck_assert_int_eq(s0__tmpfs_symlink(t, P("../.."), P("/small/up"), NULL, NULL), S0_OK);
	s0__files_route rt = {0};
	ck_assert_int_eq(s0__tmpfs_write(t, P("/small/out/f"), "x", 1, &rt, NULL), S0__FILES_REDIRECT);
	ck_assert_str_eq(rt.redirect[0], "/workspace/data/f");
	s0__files_route_reset(&rt);
	void *d = NULL;
	size_t n;
	ck_assert_int_eq(s0__tmpfs_read(t, P("/small/up/etc/passwd"), 0, -1, &rt, &d, &n, NULL),
	                 S0__FILES_REDIRECT);
	ck_assert_str_eq(rt.redirect[0], "/etc/passwd");
	s0__files_route_reset(&rt);
	ck_assert_int_eq(s0__tmpfs_move(t, P("/small/a"), P("/small/out/a"), &rt, NULL),
	                 S0__FILES_REDIRECT);
	ck_assert_str_eq(rt.redirect[0], "/small/a");
	ck_assert_str_eq(rt.redirect[1], "/workspace/data/a");
	s0__files_route_reset(&rt);
	ck_assert_uint_eq(image_hash(t) != h, 1);
	s0__tmpfs_free(t);
}
END_TEST

/* Build a varied tree: nested dirs, files with binary data, links. */
static void varied(s0__tmpfs *t, int n)
{
	char p[128], data[300];
	for (int i = 0; i < n; i++) {
		snprintf(p, sizeof p, "/tmp/d%d/sub%d/f%d.bin", i % 7, i % 3, i);
		rt_fill(data, (size_t)(i * 7) % sizeof data, (uint64_t)i);
		ck_assert_int_eq(s0__tmpfs_write(t, P(p), data, (size_t)(i * 7) % sizeof data, NULL, NULL),
		                 S0_OK);
	}
	ck_assert_int_eq(s0__tmpfs_symlink(t, P("d1/sub1"), P("/tmp/link"), NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__tmpfs_chmod(t, P("/tmp/d2"), 0700, NULL, NULL), S0_OK);
	put(t, "/workspace/cache/c", "cached");
	ck_assert_int_eq(s0__tmpfs_set_readonly(t, P("/proc"), false, NULL), S0_OK);
	put(t, "/proc/self/status", "State: R");
	ck_assert_int_eq(s0__tmpfs_set_readonly(t, P("/proc"), true, NULL), S0_OK);
}

START_TEST(test_serialize_roundtrip)
{
	s0__tmpfs *t = fresh();
	varied(t, 300);
	void *buf = NULL;
	size_t n = 0;
	ck_assert_int_eq(s0__tmpfs_serialize(t, &buf, &n, NULL), S0_OK);
	s0__tmpfs *u = NULL;
	ck_assert_int_eq(s0__tmpfs_deserialize(buf, n, &u, NULL), S0_OK);
	ck_assert_uint_eq(image_hash(u), image_hash(t));
	ck_assert_uint_eq(s0__tmpfs_used_bytes(u), s0__tmpfs_used_bytes(t));
	char *d = get(u, "/tmp/link/f1.bin");
	free(d);
	d = get(u, "/workspace/cache/c");
	ck_assert_str_eq(d, "cached");
	free(d);
	/* flags survive: /proc is still read-only, mounts still mounts */
	EXPECT(S0_EFORBIDDEN, "permission_denied", s0__tmpfs_write(u, P("/proc/x"), "1", 1, NULL, &xe));
	EXPECT(S0_EFORBIDDEN, "permission_denied", s0__tmpfs_delete(u, P("/scratch"), NULL, &xe));
	s0__mountset m = {0};
	ck_assert_int_eq(s0__tmpfs_mounts(u, &m, NULL), S0_OK);
	ck_assert_uint_eq(m.n, 6);
	s0__mountset_clear(&m);
	/* every truncation is rejected; random damage never crashes */
	for (size_t cut = 0; cut < n; cut += (cut < 64 ? 1 : 97)) {
		s0__tmpfs *bad = NULL;
		s0_error *e = NULL;
		ck_assert_int_eq(s0__tmpfs_deserialize(buf, cut, &bad, &e), S0_ECORRUPT);
		ck_assert_str_eq(s0_error_reason(e), "corrupt");
		s0_error_free(e);
	}
	unsigned char *copy = malloc(n);
	long rounds = s0_test_iterations(300);
	for (long i = 0; i < rounds; i++) {
		memcpy(copy, buf, n);
		uint64_t x = (uint64_t)i * 2654435761u + 17;
		for (int k = 0; k < 1 + (int)(i % 4); k++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			copy[(x >> 20) % n] ^= (unsigned char)(1u << ((x >> 8) % 8));
		}
		s0__tmpfs *bad = NULL;
		int rc = s0__tmpfs_deserialize(copy, n, &bad, NULL);
		ck_assert(rc == S0_OK || rc == S0_ECORRUPT);
		if (rc == S0_OK) {
			s0__filelist *l = NULL;
			s0__tmpfs_list(bad, P("/tmp"), NULL, &l, NULL);
			s0__filelist_free(l);
			s0__tmpfs_free(bad);
		}
	}
	free(copy);
	free(buf);
	s0__tmpfs_free(u);
	s0__tmpfs_free(t);
}
END_TEST

START_TEST(test_deep_tree_no_recursion)
{
	s0__tmpfs *t = fresh();
	/* deeper than any path: build by moving a chain into itself's tail */
	long rounds = s0_test_iterations(200);
	put(t, "/tmp/chain/leaf", "x");
	char *p = calloc(1, 4096);
	for (long i = 0; i < rounds; i++) {
		ck_assert_int_eq(s0__tmpfs_mkdir(t, P("/tmp/top"), false, NULL, NULL), S0_OK);
		ck_assert_int_eq(s0__tmpfs_move(t, P("/tmp/chain"), P("/tmp/top/chain"), NULL, NULL),
		                 S0_OK);
		ck_assert_int_eq(s0__tmpfs_move(t, P("/tmp/top"), P("/tmp/chain"), NULL, NULL), S0_OK);
	}
	free(p);
	void *buf = NULL;
	size_t n = 0;
	ck_assert_int_eq(s0__tmpfs_serialize(t, &buf, &n, NULL), S0_OK);
	s0__tmpfs *u = NULL;
	ck_assert_int_eq(s0__tmpfs_deserialize(buf, n, &u, NULL), S0_OK);
	free(buf);
	ck_assert_int_eq(s0__tmpfs_delete(u, P("/tmp/chain"), NULL, NULL), S0_OK);
	s0__tmpfs_free(u);
	s0__tmpfs_free(t);
}
END_TEST

static void *hammer(void *arg)
{
	s0__tmpfs *t = ((void **)arg)[0];
	long id = (long)((void **)arg)[1];
	char p[64];
	for (int i = 0; i < 500; i++) {
		snprintf(p, sizeof p, "/tmp/t%ld/f%d", id, i % 50);
		if (s0__tmpfs_write(t, P(p), p, strlen(p), NULL, NULL) != S0_OK)
			return (void *)1;
		if (i % 10 == 9 && s0__tmpfs_delete(t, P(p), NULL, NULL) != S0_OK)
			return (void *)1;
	}
	return NULL;
}

START_TEST(test_threads)
{
	s0__tmpfs *t = fresh();
	pthread_t th[4];
	void *args[4][2];
	for (long i = 0; i < 4; i++) {
		args[i][0] = t;
		args[i][1] = (void *)i;
		pthread_create(&th[i], NULL, hammer, args[i]);
	}
	for (int i = 0; i < 4; i++) {
		void *r;
		pthread_join(th[i], &r);
		ck_assert_ptr_null(r);
	}
	ck_assert_uint_eq(count(t, "/tmp"), 4);
	s0__tmpfs_free(t);
}
END_TEST

static int64_t tmtime(s0__tmpfs *t, const char *path)
{
	s0__fileinfo *fi = NULL;
	ck_assert_int_eq(s0__tmpfs_stat(t, P(path), NULL, &fi, NULL), S0_OK);
	int64_t ns = fi->mod_time_unix_ns;
	s0__fileinfo_free(fi);
	return ns;
}

/* Modification times come from the tmpfs's clock; images keep theirs. */
START_TEST(test_clock)
{
	const int64_t start_ms = 1700000000123, ns = 1000000;
	s0_manual_clock *mc = NULL;
	ck_assert_int_eq(s0_manual_clock_new(start_ms, 0, &mc, NULL), S0_OK);
	s0_clock c;
	s0_manual_clock_get(mc, &c);
	s0__tmpfs *t = NULL;
	ck_assert_int_eq(s0__tmpfs_new_runtime_clock(&c, NULL, 0, &t, NULL), S0_OK);
	ck_assert_int_eq(tmtime(t, "/tmp"), start_ms * ns);
	s0_manual_clock_advance(mc, 1000);
	put(t, "/tmp/f", "x");
	ck_assert_int_eq(tmtime(t, "/tmp/f"), (start_ms + 1000) * ns);
	ck_assert_int_eq(tmtime(t, "/tmp"), (start_ms + 1000) * ns);
	s0_manual_clock_advance(mc, 2500);
	put(t, "/tmp/f", "yy");
	ck_assert_int_eq(tmtime(t, "/tmp/f"), (start_ms + 3500) * ns);
	s0_manual_clock_advance(mc, 500);
	ck_assert_int_eq(s0__tmpfs_mkdir(t, P("/tmp/a/b"), true, NULL, NULL), S0_OK);
	ck_assert_int_eq(tmtime(t, "/tmp/a/b"), (start_ms + 4000) * ns);
	ck_assert_int_eq(tmtime(t, "/tmp/a"), (start_ms + 4000) * ns);
	s0_manual_clock_advance(mc, 500);
	ck_assert_int_eq(s0__tmpfs_symlink(t, P("f"), P("/tmp/l"), NULL, NULL), S0_OK);
	ck_assert_int_eq(tmtime(t, "/tmp/l"), (start_ms + 4500) * ns);
	s0_manual_clock_advance(mc, 500);
	ck_assert_int_eq(s0__tmpfs_move(t, P("/tmp/f"), P("/tmp/a/f"), NULL, NULL), S0_OK);
	ck_assert_int_eq(tmtime(t, "/tmp/a"), (start_ms + 5000) * ns);
	s0_manual_clock_advance(mc, 500);
	ck_assert_int_eq(s0__tmpfs_delete(t, P("/tmp/l"), NULL, NULL), S0_OK);
	ck_assert_int_eq(tmtime(t, "/tmp"), (start_ms + 5500) * ns);
	/* an image keeps its recorded times, whatever the new tmpfs's clock */
	void *buf = NULL;
	size_t n = 0;
	ck_assert_int_eq(s0__tmpfs_serialize(t, &buf, &n, NULL), S0_OK);
	s0__tmpfs *u = NULL;
	ck_assert_int_eq(s0__tmpfs_deserialize(buf, n, &u, NULL), S0_OK);
	free(buf);
	s0_manual_clock_advance(mc, 100000);
	s0__tmpfs_set_clock(u, &c);
	ck_assert_int_eq(tmtime(u, "/tmp/a/f"), (start_ms + 3500) * ns);
	ck_assert_int_eq(tmtime(u, "/tmp"), (start_ms + 5500) * ns);
	put(u, "/tmp/g", "g");
	ck_assert_int_eq(tmtime(u, "/tmp/g"), (start_ms + 105500) * ns);
	/* the real clock without one, and after NULL */
	s0__tmpfs_set_clock(u, NULL);
	put(u, "/tmp/h", "h");
	ck_assert_int_gt(tmtime(u, "/tmp/h"), (int64_t)1750000000 * 1000000000);
	s0__tmpfs *r = fresh();
	ck_assert_int_gt(tmtime(r, "/tmp"), (int64_t)1750000000 * 1000000000);
	s0__tmpfs_free(r);
	s0__tmpfs_free(u);
	s0__tmpfs_free(t);
	s0_manual_clock_free(mc);
}
END_TEST

static Suite *tmpfs_suite(void)
{
	Suite *s = suite_create("tmpfs");
	TCase *tc = tcase_create("tmpfs");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_runtime_layout);
	tcase_add_test(tc, test_files_semantics);
	tcase_add_test(tc, test_limit_and_redirects);
	tcase_add_test(tc, test_serialize_roundtrip);
	tcase_add_test(tc, test_deep_tree_no_recursion);
	tcase_add_test(tc, test_threads);
	tcase_add_test(tc, test_clock);
	suite_add_tcase(s, tc);
	return s;
}

S0_TEST_MAIN(tmpfs_suite)
