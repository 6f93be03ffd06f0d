/*
 * Routing between the RootFS and the runtime tmpfs: runtime-only paths
 * never reach the RootFS (nor its device bytes, snapshots or forks),
 * everything else persists in it, and symlinks cross correctly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "rt_support.h"
#include "local/fsview/router.h"

#define P(s) (s), strlen(s)
#define EXPECT(code, reason, expr)                                                       \
	do {                                                                             \
		s0_error *xe = NULL;                                                     \
		int rc_ = (expr);                                                        \
		rt_expect(rc_, xe, code, reason);                                        \
	} while (0)

static const char *const eph[] = {"/workspace/cache"};

typedef struct sbx {
	rt_fs fs;
	s0__tmpfs *tmp;
	s0__files_ns ns;
} sbx;

/* A sandbox: template with the ephemeral mount, a fresh runtime tmpfs. */
static void sbx_open(sbx *s)
{
	memset(s, 0, sizeof *s);
	s->fs.tmp = s0_test_tmpdir("router");
	ck_assert_int_eq(td_new(64 * MiB, &s->fs.dev), 0);
	s0__rootfs_image_opts o = {.size_bytes = 64 * MiB, .ephemeral_mounts = eph,
	                           .n_ephemeral_mounts = 1};
	ck_assert_int_eq(s0__rootfs_template_build(&o, s->fs.tmp, &s->fs.dev, NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__rootfs_open(&s->fs.dev, 0, &s->fs.fs, NULL), S0_OK);
	ck_assert_int_eq(s0__tmpfs_new_runtime(eph, 1, &s->tmp, NULL), S0_OK);
	ck_assert_int_eq(s0__files_ns_init(&s->ns, s->fs.fs, s->tmp, eph, 1, NULL), S0_OK);
}

static void sbx_close(sbx *s)
{
	s0__files_ns_clear(&s->ns);
	s0__tmpfs_free(s->tmp);
	rt_close(&s->fs);
}

static void put(sbx *s, const char *p, const char *data)
{
	s0_error *e = NULL;
	int rc = s0__files_write(&s->ns, P(p), data, strlen(data), &e);
	ck_assert_msg(rc == S0_OK, "write %s: %s", p, s0_error_message(e));
}

static char *get(sbx *s, const char *p)
{
	void *d = NULL;
	size_t n;
	s0_error *e = NULL;
	int rc = s0__files_read(&s->ns, P(p), 0, -1, &d, &n, &e);
	ck_assert_msg(rc == S0_OK, "read %s: %s", p, s0_error_message(e));
	return d;
}

static bool in_rootfs(sbx *s, const char *p)
{
	s0__fileinfo *fi = NULL;
	int rc = s0__rootfs_stat(s->fs.fs, P(p), NULL, &fi, NULL);
	s0__fileinfo_free(fi);
	return rc == S0_OK;
}

static bool in_tmpfs(sbx *s, const char *p)
{
	s0__fileinfo *fi = NULL;
	int rc = s0__tmpfs_stat(s->tmp, P(p), NULL, &fi, NULL);
	s0__fileinfo_free(fi);
	return rc == S0_OK;
}

/* Whether @p marker occurs anywhere in the flushed device bytes. */
static bool on_device(sbx *s, const char *marker)
{
	ck_assert_int_eq(s0__rootfs_flush(s->fs.fs, NULL), S0_OK);
	uint64_t size = s0__blockdev_size(&s->fs.dev);
	char *buf = malloc(TD_CHUNK + 64);
	bool found = false;
	size_t ml = strlen(marker);
	for (uint64_t off = 0; off < size && !found; off += TD_CHUNK) {
		size_t n = TD_CHUNK + (off + TD_CHUNK < size ? ml : 0);
		ck_assert_int_eq(s0__blockdev_read(&s->fs.dev, off, buf, n, NULL), S0_OK);
		found = memmem(buf, n, marker, ml) != NULL;
	}
	free(buf);
	return found;
}

START_TEST(test_runtime_paths_stay_off_rootfs)
{
	sbx s;
	sbx_open(&s);
	put(&s, "/tmp/z", "MARKER-tmp-0f3c9a");
	put(&s, "/workspace/cache/c", "MARKER-cache-77ad1");
	put(&s, "/var/tmp/x", "MARKER-vartmp-51be");
	put(&s, "/workspace/y", "MARKER-workspace-9e02");
	put(&s, "y2", "relative goes to the workspace");
	ck_assert(in_tmpfs(&s, "/tmp/z") && !in_rootfs(&s, "/tmp/z"));
	ck_assert(in_tmpfs(&s, "/workspace/cache/c") && !in_rootfs(&s, "/workspace/cache/c"));
	ck_assert(in_rootfs(&s, "/var/tmp/x") && !in_tmpfs(&s, "/var/tmp/x"));
	ck_assert(in_rootfs(&s, "/workspace/y") && in_rootfs(&s, "/workspace/y2"));
	ck_assert(!on_device(&s, "MARKER-tmp-0f3c9a"));
	ck_assert(!on_device(&s, "MARKER-cache-77ad1"));
	ck_assert(on_device(&s, "MARKER-vartmp-51be"));
	ck_assert(on_device(&s, "MARKER-workspace-9e02"));
	/* the RootFS keeps only the empty mount points */
	s0__filelist *l = NULL;
	const char *mps[] = {"/tmp", "/proc", "/dev", "/sys", "/workspace/cache"};
	for (size_t i = 0; i < 5; i++) {
		ck_assert_int_eq(s0__rootfs_list(s.fs.fs, P(mps[i]), NULL, &l, NULL), S0_OK);
		ck_assert_uint_eq(l->len, 0);
		s0__filelist_free(l);
	}
	/* the routed listing of /workspace shows both worlds' names */
	ck_assert_int_eq(s0__files_list(&s.ns, P("/workspace/"), &l, NULL), S0_OK);
	ck_assert_uint_eq(l->len, 3);
	ck_assert_str_eq(l->items[0].name, "cache");
	ck_assert_str_eq(l->items[0].path, "/workspace/cache");
	s0__filelist_free(l);
	ck_assert_int_eq(s0__files_list(&s.ns, P("cache"), &l, NULL), S0_OK);
	ck_assert_uint_eq(l->len, 1);
	ck_assert_str_eq(l->items[0].path, "/workspace/cache/c");
	s0__filelist_free(l);
	/* pause: flush and "seal"; resume filesystem-only: a new tmpfs */
	RT_ASSERT_FSCK(&s.fs);
	s0__files_ns_clear(&s.ns);
	s0__tmpfs_free(s.tmp);
	rt_reopen(&s.fs);
	ck_assert_int_eq(s0__tmpfs_new_runtime(eph, 1, &s.tmp, NULL), S0_OK);
	ck_assert_int_eq(s0__files_ns_init(&s.ns, s.fs.fs, s.tmp, eph, 1, NULL), S0_OK);
	EXPECT(S0_ENOTFOUND, "file_not_found", s0__files_stat(&s.ns, P("/tmp/z"), NULL, &xe));
	ck_assert_int_eq(s0__files_list(&s.ns, P("/tmp"), &l, NULL), S0_OK);
	ck_assert_uint_eq(l->len, 0);
	s0__filelist_free(l);
	ck_assert_int_eq(s0__files_list(&s.ns, P("/workspace/cache"), &l, NULL), S0_OK);
	ck_assert_uint_eq(l->len, 0);
	s0__filelist_free(l);
	char *d = get(&s, "/var/tmp/x");
	ck_assert_str_eq(d, "MARKER-vartmp-51be");
	free(d);
	d = get(&s, "/workspace/y");
	ck_assert_str_eq(d, "MARKER-workspace-9e02");
	free(d);
	sbx_close(&s);
}
END_TEST

START_TEST(test_snapshot_fork_and_memory_image)
{
	sbx s;
	sbx_open(&s);
	put(&s, "/tmp/z", "runtime only");
	put(&s, "/workspace/cache/c", "ephemeral");
	put(&s, "/var/tmp/keep", "persistent");
	ck_assert_int_eq(s0__rootfs_flush(s.fs.fs, NULL), S0_OK);
	/* a fork / snapshot is a copy of the committed device */
	s0__blockdev fork;
	ck_assert_int_eq(td_clone(&s.fs.dev, &fork), 0);
	s0__rootfs *ffs = NULL;
	ck_assert_int_eq(s0__rootfs_open(&fork, 0, &ffs, NULL), S0_OK);
	s0__fileinfo *fi = NULL;
	EXPECT(S0_ENOTFOUND, "file_not_found", s0__rootfs_stat(ffs, P("/tmp/z"), NULL, &fi, &xe));
	EXPECT(S0_ENOTFOUND, "file_not_found",
	       s0__rootfs_stat(ffs, P("/workspace/cache/c"), NULL, &fi, &xe));
	ck_assert_int_eq(s0__rootfs_stat(ffs, P("/var/tmp/keep"), NULL, &fi, NULL), S0_OK);
	s0__fileinfo_free(fi);
	ck_assert_int_eq(s0__rootfs_close(ffs, NULL), S0_OK);
	td_free(&fork);
	/* a memory checkpoint carries the tmpfs */
	void *img = NULL;
	size_t n = 0;
	ck_assert_int_eq(s0__tmpfs_serialize(s.tmp, &img, &n, NULL), S0_OK);
	s0__files_ns_clear(&s.ns);
	s0__tmpfs_free(s.tmp);
	ck_assert_int_eq(s0__tmpfs_deserialize(img, n, &s.tmp, NULL), S0_OK);
	free(img);
	ck_assert_int_eq(s0__files_ns_init(&s.ns, s.fs.fs, s.tmp, eph, 1, NULL), S0_OK);
	char *d = get(&s, "/tmp/z");
	ck_assert_str_eq(d, "runtime only");
	free(d);
	RT_ASSERT_FSCK(&s.fs);
	sbx_close(&s);
}
END_TEST

START_TEST(test_symlinks_cross)
{
	sbx s;
	sbx_open(&s);
	/* RootFS link into /tmp: the data lands in the tmpfs */
	ck_assert_int_eq(s0__files_symlink(&s.ns, P("/tmp"), P("/workspace/t"), NULL), S0_OK);
	put(&s, "/workspace/t/a", "via rootfs link");
	ck_assert(in_tmpfs(&s, "/tmp/a") && !in_rootfs(&s, "/tmp/a"));
	char *d = get(&s, "/workspace/t/a");
	ck_assert_str_eq(d, "via rootfs link");
	free(d);
	ck_assert_int_eq(s0__files_mkdir(&s.ns, P("/workspace/t/newdir/x"), true, NULL), S0_OK);
	ck_assert(in_tmpfs(&s, "/tmp/newdir/x") && !in_rootfs(&s, "/tmp/newdir"));
	/* relative climb to the mount point */
	ck_assert_int_eq(s0__files_symlink(&s.ns, P("../tmp"), P("/var/t2"), NULL), S0_OK);
	put(&s, "/var/t2/b", "relative");
	ck_assert(in_tmpfs(&s, "/tmp/b"));
	/* tmpfs link back into the RootFS */
	ck_assert_int_eq(s0__files_symlink(&s.ns, P("/workspace"), P("/tmp/w"), NULL), S0_OK);
	put(&s, "/tmp/w/back", "via tmpfs link");
	ck_assert(in_rootfs(&s, "/workspace/back") && !in_tmpfs(&s, "/tmp/w/back"));
	s0__filelist *l = NULL;
	ck_assert_int_eq(s0__files_list(&s.ns, P("/tmp/w"), &l, NULL), S0_OK);
	ck_assert_str_eq(l->items[0].path, "/tmp/w/back");
	s0__filelist_free(l);
	s0__fileinfo *fi = NULL;
	ck_assert_int_eq(s0__files_stat(&s.ns, P("/tmp/w/back"), &fi, NULL), S0_OK);
	ck_assert_str_eq(fi->path, "/tmp/w/back");
	ck_assert_str_eq(fi->name, "back");
	s0__fileinfo_free(fi);
	ck_assert_int_eq(s0__files_stat(&s.ns, P("/tmp/w"), &fi, NULL), S0_OK);
	ck_assert(fi->is_link);
	ck_assert_str_eq(fi->link_target, "/workspace");
	s0__fileinfo_free(fi);
	/* a loop spanning both filesystems */
	ck_assert_int_eq(s0__files_symlink(&s.ns, P("/tmp/l2"), P("/workspace/l1"), NULL), S0_OK);
	ck_assert_int_eq(s0__files_symlink(&s.ns, P("/workspace/l1"), P("/tmp/l2"), NULL), S0_OK);
	EXPECT(S0_EINVAL, "invalid_request", s0__files_write(&s.ns, P("/tmp/l2/x"), "1", 1, &xe));
	/* moves: same fs through links fine, across refused like EXDEV */
	ck_assert_int_eq(s0__files_move(&s.ns, P("/workspace/t/a"), P("/tmp/a2"), NULL), S0_OK);
	ck_assert(in_tmpfs(&s, "/tmp/a2"));
	ck_assert_int_eq(s0__files_move(&s.ns, P("/tmp/w/back"), P("/var/back"), NULL), S0_OK);
	ck_assert(in_rootfs(&s, "/var/back"));
	EXPECT(S0_EINTERNAL, "operation_failed",
	       s0__files_move(&s.ns, P("/tmp/a2"), P("/workspace/a2"), &xe));
	EXPECT(S0_EINTERNAL, "operation_failed",
	       s0__files_move(&s.ns, P("/var/back"), P("/workspace/t/back"), &xe));
	EXPECT(S0_EFORBIDDEN, "permission_denied", s0__files_delete(&s.ns, P("/tmp"), &xe));
	EXPECT(S0_EFORBIDDEN, "permission_denied", s0__files_delete(&s.ns, P("/"), &xe));
	EXPECT(S0_EFORBIDDEN, "permission_denied", s0__files_write(&s.ns, P("/proc/x"), "1", 1, &xe));
	EXPECT(S0_EINVAL, "invalid_request",
	       s0__files_read(&s.ns, P("/tmp/../.."), 0, -1, NULL, NULL, &xe));
	ck_assert_int_eq(s0__files_chmod(&s.ns, P("/workspace/t/b"), 0600, NULL), S0_OK);
	ck_assert_int_eq(s0__tmpfs_stat(s.tmp, P("/tmp/b"), NULL, &fi, NULL), S0_OK);
	ck_assert_int_eq(fi->mode, 0600);
	s0__fileinfo_free(fi);
	ck_assert_int_eq(s0__files_delete(&s.ns, P("/workspace/t/newdir"), NULL), S0_OK);
	ck_assert(!in_tmpfs(&s, "/tmp/newdir"));
	/* nothing of it reached the RootFS's own /tmp */
	ck_assert_int_eq(s0__rootfs_list(s.fs.fs, P("/tmp"), NULL, &l, NULL), S0_OK);
	ck_assert_uint_eq(l->len, 0);
	s0__filelist_free(l);
	RT_ASSERT_FSCK(&s.fs);
	sbx_close(&s);
}
END_TEST

static Suite *router_suite(void)
{
	Suite *s = suite_create("rootfs_router");
	TCase *tc = tcase_create("router");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_runtime_paths_stay_off_rootfs);
	tcase_add_test(tc, test_snapshot_fork_and_memory_image);
	tcase_add_test(tc, test_symlinks_cross);
	suite_add_tcase(s, tc);
	return s;
}

S0_TEST_MAIN(router_suite)
