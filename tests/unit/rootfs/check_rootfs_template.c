/*
 * Templates: images built from real directory trees read back exactly,
 * get the runtime layout, import without storing zero chunks, export back
 * byte-exact, and are reproducible with a fixed UUID and time.
 */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt_support.h"

#define P(s) (s), strlen(s)

static void write_host(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, n, f), n);
	fclose(f);
}

static char *join(const char *a, const char *b)
{
	return s0__asprintf("%s/%s", a, b);
}

/* A source tree with the awkward cases. */
static void make_tree(const char *root)
{
	const char *dirs[] = {"etc", "usr", "usr/lib", "usr/lib/deep", "usr/lib/deep/er", "empty",
	                      "tmp", "tmp/junkdir", "var", "home", "home/ünïcødé ✓"};
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		char *p = join(root, dirs[i]);
		ck_assert_int_eq(mkdir(p, 0755), 0);
		free(p);
	}
	static char big[3 * 1024 * 1024 + 17 + 16]; /* + room for the per-file offset */
	rt_fill(big, sizeof big, 99);
	const struct {
		const char *name;
		size_t len;
	} files[] = {{"etc/hostname", 8},
	             {"etc/empty.conf", 0},
	             {"usr/lib/big.bin", sizeof big - 16},
	             {"usr/lib/deep/er/x", 4097},
	             {"home/ünïcødé ✓/notes", 100},
	             {"tmp/junk", 10},
	             {"tmp/junkdir/more", 5},
	             {"proc", 3}};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char *p = join(root, files[i].name);
		write_host(p, big + i, files[i].len);
		free(p);
	}
	char *p = join(root, "etc/hostname");
	ck_assert_int_eq(chmod(p, 0600), 0);
	free(p);
	p = join(root, "usr/lib/deep/er/x");
	ck_assert_int_eq(chmod(p, 04755), 0);
	free(p);
	p = join(root, "etc/link");
	ck_assert_int_eq(symlink("../usr/lib/big.bin", p), 0);
	free(p);
	p = join(root, "etc/abs");
	ck_assert_int_eq(symlink("/etc/hostname", p), 0);
	free(p);
	/* two names for one inode */
	p = join(root, "etc/hostname");
	char *q = join(root, "home/hostname.hardlink");
	ck_assert_int_eq(link(p, q), 0);
	free(p);
	free(q);
	/* a sparse file: mostly a hole */
	p = join(root, "var/sparse");
	int fd = open(p, O_CREAT | O_WRONLY, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "end", 3, 20 * 1024 * 1024), 3);
	close(fd);
	free(p);
}

/* Compare one host entry with the filesystem's view of it. */
static rt_fs *cmp_fs;
static const char *cmp_root;
static long cmp_count;

static int compare_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)flag;
	(void)ftw;
	const char *rel = path + strlen(cmp_root);
	if (!*rel)
		return 0;
	if (!strncmp(rel, "/tmp", 4) || !strcmp(rel, "/proc"))
		return 0; /* runtime-only: emptied / replaced by the layout */
	s0__fileinfo *fi = NULL;
	s0_error *e = NULL;
	int rc = s0__rootfs_stat(cmp_fs->fs, P(rel), NULL, &fi, &e);
	ck_assert_msg(rc == S0_OK, "stat %s: %s", rel, s0_error_message(e));
	ck_assert_msg((fi->mode & 07777) == (st->st_mode & 07777), "%s: mode %o vs %o", rel, fi->mode,
	              st->st_mode & 07777);
	if (S_ISREG(st->st_mode)) {
		ck_assert_int_eq(fi->type, S0_FILE_TYPE_FILE);
		ck_assert_int_eq(fi->size_bytes, st->st_size);
		FILE *f = fopen(path, "rb");
		char *want = malloc((size_t)st->st_size + 1);
		ck_assert_uint_eq(fread(want, 1, (size_t)st->st_size, f), (size_t)st->st_size);
		fclose(f);
		size_t n;
		char *got = rt_read(cmp_fs, rel, &n);
		ck_assert_uint_eq(n, (size_t)st->st_size);
		ck_assert_msg(memcmp(got, want, n) == 0, "%s differs", rel);
		free(got);
		free(want);
	} else if (S_ISLNK(st->st_mode)) {
		char target[4096] = {0};
		ck_assert_int_gt(readlink(path, target, sizeof target - 1), 0);
		ck_assert_int_eq(fi->type, S0_FILE_TYPE_SYMLINK);
		ck_assert_str_eq(fi->link_target, target);
	} else if (S_ISDIR(st->st_mode)) {
		ck_assert_int_eq(fi->type, S0_FILE_TYPE_DIR);
	}
	s0__fileinfo_free(fi);
	cmp_count++;
	return 0;
}

static long compare_tree(rt_fs *t, const char *root)
{
	cmp_fs = t;
	cmp_root = root;
	cmp_count = 0;
	ck_assert_int_eq(nftw(root, compare_entry, 32, FTW_PHYS), 0);
	return cmp_count;
}

/* Build from @p src into a device of @p size; checks import accounting. */
static void build_into(rt_fs *t, const char *src, uint64_t size)
{
	memset(t, 0, sizeof *t);
	t->tmp = s0_test_tmpdir("template");
	ck_assert_int_eq(td_new(size, &t->dev), 0);
	s0__rootfs_image_opts o = {.source_dir = src, .size_bytes = size};
	s0__image_stats st;
	s0_error *e = NULL;
	int rc = s0__rootfs_template_build(&o, t->tmp, &t->dev, &st, &e);
	ck_assert_msg(rc == S0_OK, "template: %s", s0_error_message(e));
	ck_assert_uint_eq(st.chunks_total, size / TD_CHUNK);
	ck_assert_uint_eq(st.chunks_written + st.chunks_zero, st.chunks_total);
	/* nothing is stored for zero chunks */
	ck_assert_uint_eq(td_allocated_chunks(&t->dev), st.chunks_written);
	ck_assert_uint_lt(st.chunks_written, st.chunks_total);
	ck_assert_int_eq(s0__rootfs_open(&t->dev, 0, &t->fs, NULL), S0_OK);
}

static void check_layout(rt_fs *t)
{
	const struct {
		const char *p;
		uint32_t mode;
		bool empty;
	} want[] = {{"/workspace", 0, false}, {"/var/tmp", 01777, false}, {"/tmp", 01777, true},
	            {"/proc", 0555, true},    {"/dev", 0755, true},      {"/sys", 0555, true}};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		s0__filelist *l = NULL;
		s0_error *e = NULL;
		int rc = s0__rootfs_list(t->fs, P(want[i].p), NULL, &l, &e);
		ck_assert_msg(rc == S0_OK, "%s: %s", want[i].p, s0_error_message(e));
		if (want[i].empty)
			ck_assert_msg(l->len == 0, "%s is not empty", want[i].p);
		s0__filelist_free(l);
		s0__fileinfo *fi = NULL;
		ck_assert_int_eq(s0__rootfs_stat(t->fs, P(want[i].p), NULL, &fi, NULL), S0_OK);
		if (want[i].mode)
			ck_assert_int_eq(fi->mode, want[i].mode);
		s0__fileinfo_free(fi);
	}
}

START_TEST(test_generated_tree)
{
	char *src = s0_test_tmpdir("tsrc");
	make_tree(src);
	rt_fs t;
	build_into(&t, src, 64 * MiB);
	ck_assert_int_ge(compare_tree(&t, src), 15);
	check_layout(&t);
	RT_ASSERT_FSCK(&t);
	/* the template is an ordinary writable RootFS */
	rt_write_str(&t, "/workspace/new", "after claim");
	/* replacing or deleting one name of a hard-linked file keeps the other */
	size_t n1, n2;
	char *orig = rt_read(&t, "/etc/hostname", &n1);
	rt_write_str(&t, "/home/hostname.hardlink", "replaced");
	char *now = rt_read(&t, "/etc/hostname", &n2);
	ck_assert_uint_eq(n1, n2);
	ck_assert(memcmp(orig, now, n1) == 0);
	free(now);
	ck_assert_int_eq(s0__rootfs_move(t.fs, P("/etc/hostname"), P("/etc/hostname2"), NULL, NULL),
	                 S0_OK);
	ck_assert_int_eq(s0__rootfs_move(t.fs, P("/etc/hostname2"), P("/etc/hostname"), NULL, NULL),
	                 S0_OK);
	RT_ASSERT_FSCK(&t);
	/* restore the tree for the comparison below */
	ck_assert_int_eq(s0__rootfs_write(t.fs, P("/home/hostname.hardlink"), orig, n1, NULL, NULL),
	                 S0_OK);
	ck_assert_int_eq(s0__rootfs_chmod(t.fs, P("/home/hostname.hardlink"), 0600, NULL, NULL), S0_OK);
	free(orig);
	rt_reopen(&t);
	ck_assert_int_ge(compare_tree(&t, src), 15);
	RT_ASSERT_FSCK(&t);
	rt_close(&t);
	s0_test_rmrf(src);
	free(src);
}
END_TEST

START_TEST(test_real_tree)
{
	const char *src = "/usr/share/doc";
	struct stat st;
	if (stat(src, &st) < 0 || !S_ISDIR(st.st_mode))
		return; /* no documentation on this host: the generated tree covers it */
	rt_fs t;
	build_into(&t, src, 512 * MiB);
	long n = compare_tree(&t, src);
	ck_assert_int_gt(n, 10);
	check_layout(&t);
	RT_ASSERT_FSCK(&t);
	rt_close(&t);
}
END_TEST

START_TEST(test_empty_reproducible_roundtrip)
{
	s0__rootfs_image_opts o = {.size_bytes = 32 * MiB,
	                           .uuid = "6a1f3bb2-4c55-4e0f-9d7c-5b0a2f1e8c11",
	                           .fake_time_unix = 1700000000};
	s0__blockdev a, b, c;
	ck_assert_int_eq(td_new(32 * MiB, &a), 0);
	ck_assert_int_eq(td_new(32 * MiB, &b), 0);
	ck_assert_int_eq(td_new(64 * MiB, &c), 0);
	ck_assert_int_eq(s0__rootfs_template_build(&o, NULL, &a, NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__rootfs_template_build(&o, NULL, &b, NULL, NULL), S0_OK);
	ck_assert_uint_eq(td_hash(&a), td_hash(&b));
	/* export → import is byte-exact, into a bigger device too */
	char *dir = s0_test_tmpdir("export");
	char *img = join(dir, "x.img");
	s0__image_stats st;
	ck_assert_int_eq(s0__rootfs_image_export(&a, img, &st, NULL), S0_OK);
	ck_assert_uint_eq(st.chunks_written, td_allocated_chunks(&a));
	struct stat sb;
	ck_assert_int_eq(stat(img, &sb), 0);
	ck_assert_int_eq(sb.st_size, 32 * MiB);
	ck_assert_int_lt(sb.st_blocks * 512, 32 * MiB); /* sparse */
	ck_assert_int_eq(s0__rootfs_image_import(img, &c, NULL, NULL), S0_OK);
	ck_assert_uint_eq(td_hash(&c), td_hash(&a));
	/* the exported image is what e2fsck and debugfs read */
	const char *fsck[] = {"/sbin/e2fsck", "-fn", img, NULL};
	ck_assert_int_eq(rt_run(fsck, NULL), 0);
	const char *dbg[] = {"/sbin/debugfs", "-R", "ls -l /", img, NULL};
	char *out = NULL;
	ck_assert_int_eq(rt_run(dbg, &out), 0);
	ck_assert_ptr_nonnull(strstr(out, "workspace"));
	free(out);
	unlink(img);
	free(img);
	s0_test_rmrf(dir);
	free(dir);
	td_free(&a);
	td_free(&b);
	td_free(&c);
}
END_TEST

START_TEST(test_generation_reuse)
{
	rt_fs base;
	rt_open_fresh(&base, 64 * MiB);
	ck_assert_int_eq(s0__rootfs_close(base.fs, NULL), S0_OK);
	base.fs = NULL;
	uint64_t h = td_hash(&base.dev);
	/* two sandboxes claimed from the one published generation */
	rt_fs s1 = base, s2 = base;
	ck_assert_int_eq(td_clone(&base.dev, &s1.dev), 0);
	ck_assert_int_eq(td_clone(&base.dev, &s2.dev), 0);
	s1.tmp = s0_test_tmpdir("s1");
	s2.tmp = s0_test_tmpdir("s2");
	ck_assert_int_eq(s0__rootfs_open(&s1.dev, 0, &s1.fs, NULL), S0_OK);
	ck_assert_int_eq(s0__rootfs_open(&s2.dev, 0, &s2.fs, NULL), S0_OK);
	rt_write_str(&s1, "/workspace/who", "one");
	rt_write_str(&s2, "/workspace/who", "two");
	rt_mkdir_p(&s2, "/workspace/only-two");
	char *d = rt_read(&s1, "/workspace/who", NULL);
	ck_assert_str_eq(d, "one");
	free(d);
	d = rt_read(&s2, "/workspace/who", NULL);
	ck_assert_str_eq(d, "two");
	free(d);
	RT_ASSERT_FSCK(&s1);
	RT_ASSERT_FSCK(&s2);
	ck_assert_uint_eq(td_hash(&base.dev), h);
	rt_close(&s1);
	rt_close(&s2);
	rt_close(&base);
}
END_TEST

START_TEST(test_errors)
{
	s0__blockdev dev;
	ck_assert_int_eq(td_new(16 * MiB, &dev), 0);
	s0_error *e = NULL;
	s0__rootfs_image_opts o = {.size_bytes = 1 * MiB};
	ck_assert_int_eq(s0__rootfs_template_build(&o, NULL, &dev, NULL, &e), S0_EINVAL);
	s0_error_free(e);
	e = NULL;
	o.size_bytes = 16 * MiB + 100;
	ck_assert_int_eq(s0__rootfs_template_build(&o, NULL, &dev, NULL, &e), S0_EINVAL);
	s0_error_free(e);
	e = NULL;
	o.size_bytes = 16 * MiB;
	o.source_dir = "/nonexistent/source";
	ck_assert_int_eq(s0__rootfs_template_build(&o, NULL, &dev, NULL, &e), S0_ENOTFOUND);
	ck_assert_str_eq(s0_error_reason(e), "directory_not_found");
	s0_error_free(e);
	e = NULL;
	/* a tree that does not fit */
	char *src = s0_test_tmpdir("toobig");
	char *p = join(src, "big");
	int fd = open(p, O_CREAT | O_WRONLY, 0644);
	char *buf = malloc(MiB);
	rt_fill(buf, MiB, 3);
	for (int i = 0; i < 24; i++)
		ck_assert_int_eq(write(fd, buf, MiB), (ssize_t)MiB);
	close(fd);
	o.source_dir = src;
	ck_assert_int_eq(s0__rootfs_template_build(&o, NULL, &dev, NULL, &e), S0_EIO);
	ck_assert_str_eq(s0_error_reason(e), "mkfs_failed");
	s0_error_free(e);
	e = NULL;
	/* an image bigger than the device */
	s0__blockdev small;
	ck_assert_int_eq(td_new(8 * MiB, &small), 0);
	o.source_dir = NULL;
	ck_assert_int_eq(s0__rootfs_template_build(&o, NULL, &small, NULL, &e), S0_EINVAL);
	s0_error_free(e);
	td_free(&small);
	free(buf);
	free(p);
	s0_test_rmrf(src);
	free(src);
	td_free(&dev);
}
END_TEST

static Suite *template_suite(void)
{
	Suite *s = suite_create("rootfs_template");
	TCase *tc = tcase_create("template");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_generated_tree);
	tcase_add_test(tc, test_real_tree);
	tcase_add_test(tc, test_empty_reproducible_roundtrip);
	tcase_add_test(tc, test_generation_reuse);
	tcase_add_test(tc, test_errors);
	suite_add_tcase(s, tc);
	return s;
}

S0_TEST_MAIN(template_suite)
