/*
 * Hostile input and hostile states: every case gets its documented error
 * and leaves the device byte-for-byte unchanged and fsck-clean.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt_support.h"

#define P(s) (s), strlen(s)

enum op { OP_READ, OP_WRITE, OP_MKDIR, OP_MKDIR_P, OP_DELETE, OP_STAT, OP_LIST, OP_MOVE_SRC,
          OP_MOVE_DST, OP_CHMOD, OP_SYMLINK, OP_N };

static const char *op_name[OP_N] = {"read", "write", "mkdir", "mkdir -p", "delete", "stat",
                                     "list", "move src", "move dst", "chmod", "symlink"};

/* Run one operation on (path, len); returns its code, error in *e. */
static int run_op(rt_fs *t, enum op op, const char *path, size_t len, s0_error **e)
{
	void *d = NULL;
	size_t n = 0;
	s0__fileinfo *fi = NULL;
	s0__filelist *l = NULL;
	int rc = S0_ERROR;
	switch (op) {
	case OP_READ:
		rc = s0__rootfs_read(t->fs, path, len, 0, -1, NULL, &d, &n, e);
		break;
	case OP_WRITE:
		rc = s0__rootfs_write(t->fs, path, len, "data", 4, NULL, e);
		break;
	case OP_MKDIR:
	case OP_MKDIR_P:
		rc = s0__rootfs_mkdir(t->fs, path, len, op == OP_MKDIR_P, NULL, e);
		break;
	case OP_DELETE:
		rc = s0__rootfs_delete(t->fs, path, len, NULL, e);
		break;
	case OP_STAT:
		rc = s0__rootfs_stat(t->fs, path, len, NULL, &fi, e);
		break;
	case OP_LIST:
		rc = s0__rootfs_list(t->fs, path, len, NULL, &l, e);
		break;
	case OP_MOVE_SRC:
		rc = s0__rootfs_move(t->fs, path, len, P("/workspace/moved"), NULL, e);
		break;
	case OP_MOVE_DST:
		rc = s0__rootfs_move(t->fs, P("/workspace/file"), path, len, NULL, e);
		break;
	case OP_CHMOD:
		rc = s0__rootfs_chmod(t->fs, path, len, 0600, NULL, e);
		break;
	case OP_SYMLINK:
		rc = s0__rootfs_symlink(t->fs, P("target"), path, len, NULL, e);
		break;
	default:
		break;
	}
	free(d);
	s0__fileinfo_free(fi);
	s0__filelist_free(l);
	return rc;
}

/* A tree with every kind of trap in it. */
static void populate(rt_fs *t)
{
	rt_write_str(t, "/workspace/file", "plain file");
	rt_write_str(t, "/workspace/secret", "inside the RootFS");
	rt_mkdir_p(t, "/workspace/dir/sub");
	rt_write_str(t, "/workspace/dir/sub/f", "f");
	struct {
		const char *target, *link;
	} links[] = {
		{"loop2", "/workspace/loop1"},
		{"loop1", "/workspace/loop2"},
		{"self/x", "/workspace/self"},
		{"../../../../../../workspace/secret", "/workspace/up"},
		{"/../../../../workspace/secret", "/workspace/abs_up"},
		{"/nonexistent/path", "/workspace/dangling"},
		{"file", "/workspace/to_file"},
		{"dir", "/workspace/to_dir"},
	};
	for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
		ck_assert_int_eq(s0__rootfs_symlink(t->fs, P(links[i].target), P(links[i].link), NULL,
		                                    NULL),
		                 S0_OK);
	char longc[400];
	memset(longc, 'a', 300);
	strcpy(longc + 300, "/x");
	ck_assert_int_eq(s0__rootfs_symlink(t->fs, P(longc), P("/workspace/longcomp"), NULL, NULL),
	                 S0_OK);
}

typedef struct hcase {
	enum op op;
	const char *path; /* NULL: use special bytes below */
	int special;
	int code;
	const char *reason;
} hcase;

/* special: 1 embedded NUL, 2 256-byte component, 3 4097-byte path,
 * 4 relative path that exceeds the limit only once joined to /workspace */
static char *special_path(int kind, size_t *len)
{
	char *p = calloc(1, 8192);
	switch (kind) {
	case 1:
		memcpy(p, "/workspace/fi\0le", 16);
		*len = 16;
		break;
	case 2:
		strcpy(p, "/workspace/");
		memset(p + strlen(p), 'n', 256);
		*len = strlen(p);
		break;
	case 3:
		for (int i = 0; i < 2049; i++)
			strcat(p, "/a");
		*len = 4097 < strlen(p) ? 4097 : strlen(p);
		break;
	default:
		for (int i = 0; i < 2046; i++)
			strcat(p, i ? "/a" : "a");
		*len = strlen(p);
		break;
	}
	return p;
}

static const hcase cases[] = {
	/* malformed paths: every operation says invalid_request */
	{OP_READ, "", 0, S0_EINVAL, "invalid_request"},
	{OP_WRITE, "", 0, S0_EINVAL, "invalid_request"},
	{OP_DELETE, "", 0, S0_EINVAL, "invalid_request"},
	{OP_READ, NULL, 1, S0_EINVAL, "invalid_request"},
	{OP_WRITE, NULL, 1, S0_EINVAL, "invalid_request"},
	{OP_MKDIR_P, NULL, 1, S0_EINVAL, "invalid_request"},
	{OP_DELETE, NULL, 1, S0_EINVAL, "invalid_request"},
	{OP_STAT, NULL, 1, S0_EINVAL, "invalid_request"},
	{OP_MOVE_DST, NULL, 1, S0_EINVAL, "invalid_request"},
	{OP_WRITE, NULL, 2, S0_EINVAL, "invalid_request"},
	{OP_MKDIR_P, NULL, 2, S0_EINVAL, "invalid_request"},
	{OP_WRITE, NULL, 3, S0_EINVAL, "invalid_request"},
	{OP_LIST, NULL, 3, S0_EINVAL, "invalid_request"},
	{OP_WRITE, NULL, 4, S0_EINVAL, "invalid_request"},
	{OP_READ, "/..", 0, S0_EINVAL, "invalid_request"},
	{OP_WRITE, "/../etc/passwd", 0, S0_EINVAL, "invalid_request"},
	{OP_DELETE, "/workspace/../../x", 0, S0_EINVAL, "invalid_request"},
	{OP_MKDIR_P, "../../escape", 0, S0_EINVAL, "invalid_request"},
	{OP_MOVE_SRC, "/a/../../b", 0, S0_EINVAL, "invalid_request"},
	{OP_MOVE_DST, "../../..", 0, S0_EINVAL, "invalid_request"},
	{OP_LIST, "../..", 0, S0_EINVAL, "invalid_request"},
	{OP_CHMOD, "/../x", 0, S0_EINVAL, "invalid_request"},
	{OP_SYMLINK, "/../x", 0, S0_EINVAL, "invalid_request"},
	/* symlink loops and bad targets */
	{OP_READ, "/workspace/loop1", 0, S0_EINVAL, "invalid_request"},
	{OP_WRITE, "/workspace/loop1/x", 0, S0_EINVAL, "invalid_request"},
	{OP_LIST, "/workspace/self", 0, S0_EINVAL, "invalid_request"},
	{OP_MKDIR_P, "/workspace/loop2/a/b", 0, S0_EINVAL, "invalid_request"},
	{OP_READ, "/workspace/longcomp", 0, S0_EINVAL, "invalid_request"},
	/* wrong kinds */
	{OP_READ, "/workspace/dir", 0, S0_ECONFLICT, "path_not_file"},
	{OP_READ, "/workspace/to_dir", 0, S0_ECONFLICT, "path_not_file"},
	{OP_WRITE, "/workspace/dir", 0, S0_ECONFLICT, "path_not_file"},
	{OP_WRITE, "/", 0, S0_ECONFLICT, "path_not_file"},
	{OP_WRITE, "/workspace/file/x", 0, S0_ECONFLICT, "path_not_directory"},
	{OP_WRITE, "/workspace/to_file/x/y", 0, S0_ECONFLICT, "path_not_directory"},
	{OP_READ, "/workspace/file/x", 0, S0_ECONFLICT, "path_not_directory"},
	{OP_LIST, "/workspace/file", 0, S0_ECONFLICT, "path_not_directory"},
	{OP_LIST, "/workspace/to_file", 0, S0_ECONFLICT, "path_not_directory"},
	{OP_STAT, "/workspace/file/x", 0, S0_ECONFLICT, "path_not_directory"},
	{OP_MKDIR, "/workspace/dir", 0, S0_ECONFLICT, "path_exists"},
	{OP_MKDIR, "/workspace/dangling", 0, S0_ECONFLICT, "path_exists"},
	{OP_MKDIR_P, "/workspace/file", 0, S0_ECONFLICT, "path_not_directory"},
	{OP_MKDIR_P, "/workspace/dangling", 0, S0_ECONFLICT, "path_not_directory"},
	{OP_SYMLINK, "/workspace/file", 0, S0_ECONFLICT, "path_exists"},
	{OP_MOVE_DST, "/workspace/dir", 0, S0_ECONFLICT, "path_not_file"},
	{OP_MOVE_SRC, "/", 0, S0_EINVAL, "invalid_request"},
	/* missing things */
	{OP_READ, "/workspace/none", 0, S0_ENOTFOUND, "file_not_found"},
	{OP_READ, "/workspace/dangling", 0, S0_ENOTFOUND, "file_not_found"},
	{OP_READ, "/workspace/none/deeper", 0, S0_ENOTFOUND, "file_not_found"},
	{OP_STAT, "/workspace/none", 0, S0_ENOTFOUND, "file_not_found"},
	{OP_LIST, "/workspace/none", 0, S0_ENOTFOUND, "directory_not_found"},
	{OP_LIST, "/workspace/dangling", 0, S0_ENOTFOUND, "directory_not_found"},
	{OP_MKDIR, "/workspace/none/x", 0, S0_ENOTFOUND, "directory_not_found"},
	/* a dangling symlink on the way is not created through */
	{OP_WRITE, "/workspace/dangling/x", 0, S0_ENOTFOUND, "directory_not_found"},
	{OP_MKDIR_P, "/workspace/dangling/x/y", 0, S0_ENOTFOUND, "directory_not_found"},
	{OP_MOVE_DST, "/workspace/dangling/x", 0, S0_ENOTFOUND, "directory_not_found"},
	{OP_SYMLINK, "/workspace/none/x", 0, S0_ENOTFOUND, "directory_not_found"},
	{OP_MOVE_SRC, "/workspace/none", 0, S0_ENOTFOUND, "file_not_found"},
	{OP_CHMOD, "/workspace/none", 0, S0_ENOTFOUND, "file_not_found"},
	{OP_CHMOD, "/workspace/dangling", 0, S0_ENOTFOUND, "file_not_found"},
	{OP_DELETE, "/", 0, S0_EFORBIDDEN, "permission_denied"},
};

START_TEST(test_hostile_paths)
{
	rt_fs t;
	rt_open_fresh(&t, 32 * MiB);
	populate(&t);
	RT_ASSERT_FSCK(&t);
	uint64_t dev = rt_dev_hash(&t), tree = rt_tree_hash(&t);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const hcase *c = &cases[i];
		size_t len = c->path ? strlen(c->path) : 0;
		char *sp = c->path ? NULL : special_path(c->special, &len);
		s0_error *e = NULL;
		int rc = run_op(&t, c->op, c->path ? c->path : sp, len, &e);
		ck_assert_msg(rc == c->code && e && !strcmp(s0_error_reason(e), c->reason),
		              "case %zu (%s %s): got %d %s (%s), want %s %s", i, op_name[c->op],
		              c->path ? c->path : "<special>", rc, s0_error_reason(e),
		              s0_error_message(e), s0_code_name(c->code), c->reason);
		s0_error_free(e);
		free(sp);
		ck_assert_msg(rt_dev_hash(&t) == dev, "case %zu changed the device", i);
	}
	ck_assert_uint_eq(rt_tree_hash(&t), tree);
	RT_ASSERT_FSCK(&t);
	rt_close(&t);
}
END_TEST

START_TEST(test_symlinks_confined)
{
	rt_fs t;
	rt_open_fresh(&t, 32 * MiB);
	populate(&t);
	/* targets that climb above / stay inside the filesystem */
	size_t n;
	char *d = rt_read(&t, "/workspace/up", &n);
	ck_assert_str_eq(d, "inside the RootFS");
	free(d);
	d = rt_read(&t, "/workspace/abs_up", &n);
	ck_assert_str_eq(d, "inside the RootFS");
	free(d);
	/* writing through an intermediate symlink lands inside the fs */
	ck_assert_int_eq(s0__rootfs_symlink(t.fs, P("/../../.."), P("/workspace/root"), NULL, NULL),
	                 S0_OK);
	rt_write_str(&t, "/workspace/root/etc/created", "through the link");
	d = rt_read(&t, "/etc/created", &n);
	ck_assert_str_eq(d, "through the link");
	free(d);
	/* ".." inside targets climbs from the link's directory */
	ck_assert_int_eq(s0__rootfs_symlink(t.fs, P("../../file"), P("/workspace/dir/sub/up"), NULL,
	                                    NULL),
	                 S0_OK);
	d = rt_read(&t, "/workspace/dir/sub/up", &n);
	ck_assert_str_eq(d, "plain file");
	free(d);
	ck_assert_int_eq(s0__rootfs_symlink(t.fs, P("../.."), P("/workspace/dir/sub/up2"), NULL, NULL),
	                 S0_OK);
	char *canon = NULL;
	ck_assert_int_eq(s0__rootfs_canon(t.fs, P("/workspace/dir/sub/up2/missing/deeper"), true, NULL,
	                                  &canon, NULL),
	                 S0_OK);
	ck_assert_str_eq(canon, "/workspace/missing/deeper");
	free(canon);
	ck_assert_int_eq(s0__rootfs_canon(t.fs, P("/workspace/dir/sub/up2/dir/sub"), true, NULL,
	                                  &canon, NULL),
	                 S0_OK);
	ck_assert_str_eq(canon, "/workspace/dir/sub");
	free(canon);
	/* below a live link, missing parents are created inside its target */
	rt_write_str(&t, "/workspace/to_dir/new/deeper/f", "below a live link");
	d = rt_read(&t, "/workspace/dir/new/deeper/f", &n);
	ck_assert_str_eq(d, "below a live link");
	free(d);
	/* the final component is not followed by write: the link is replaced */
	rt_write_str(&t, "/workspace/to_file", "replaced the link");
	d = rt_read(&t, "/workspace/file", &n);
	ck_assert_str_eq(d, "plain file");
	free(d);
	s0__fileinfo *fi = NULL;
	ck_assert_int_eq(s0__rootfs_stat(t.fs, P("/workspace/to_file"), NULL, &fi, NULL), S0_OK);
	ck_assert_int_eq(fi->type, S0_FILE_TYPE_FILE);
	s0__fileinfo_free(fi);
	/* delete and move do not follow the final link either */
	ck_assert_int_eq(s0__rootfs_delete(t.fs, P("/workspace/to_dir"), NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__rootfs_stat(t.fs, P("/workspace/dir/sub/f"), NULL, &fi, NULL), S0_OK);
	s0__fileinfo_free(fi);
	ck_assert_int_eq(s0__rootfs_move(t.fs, P("/workspace/dangling"), P("/workspace/dl2"), NULL,
	                                 NULL),
	                 S0_OK);
	ck_assert_int_eq(s0__rootfs_stat(t.fs, P("/workspace/dl2"), NULL, &fi, NULL), S0_OK);
	ck_assert_str_eq(fi->link_target, "/nonexistent/path");
	s0__fileinfo_free(fi);
	/* chmod follows */
	ck_assert_int_eq(s0__rootfs_symlink(t.fs, P("secret"), P("/workspace/to_secret"), NULL, NULL),
	                 S0_OK);
	ck_assert_int_eq(s0__rootfs_chmod(t.fs, P("/workspace/to_secret"), 0600, NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__rootfs_stat(t.fs, P("/workspace/secret"), NULL, &fi, NULL), S0_OK);
	ck_assert_int_eq(fi->mode, 0600);
	s0__fileinfo_free(fi);
	/* a long (slow) symlink target round-trips */
	char target[3000];
	memset(target, 'x', sizeof target - 1);
	target[sizeof target - 1] = '\0';
	for (size_t i = 200; i < sizeof target - 1; i += 200)
		target[i] = '/';
	ck_assert_int_eq(s0__rootfs_symlink(t.fs, P(target), P("/workspace/slow"), NULL, NULL), S0_OK);
	rt_reopen(&t);
	ck_assert_int_eq(s0__rootfs_stat(t.fs, P("/workspace/slow"), NULL, &fi, NULL), S0_OK);
	ck_assert_str_eq(fi->link_target, target);
	ck_assert_int_eq(fi->size_bytes, (int64_t)strlen(target));
	s0__fileinfo_free(fi);
	RT_ASSERT_FSCK(&t);
	rt_close(&t);
}
END_TEST

START_TEST(test_hostile_states)
{
	rt_fs t;
	rt_open_fresh(&t, 32 * MiB);
	populate(&t);
	uint64_t dev = rt_dev_hash(&t);
	s0_error *e = NULL;
	/* a directory moved into its own subtree, directly and through a link */
	ck_assert_int_eq(s0__rootfs_move(t.fs, P("/workspace/dir"), P("/workspace/dir/sub/x"), NULL, &e),
	                 S0_EINVAL);
	ck_assert_str_eq(s0_error_reason(e), "invalid_request");
	s0_error_free(e);
	e = NULL;
	ck_assert_int_eq(s0__rootfs_move(t.fs, P("/workspace/dir"), P("/workspace/to_dir/sub/y/z"),
	                                 NULL, &e),
	                 S0_EINVAL);
	s0_error_free(e);
	e = NULL;
	/* chmod with bits outside 07777 */
	ck_assert_int_eq(s0__rootfs_chmod(t.fs, P("/workspace/file"), 010644, NULL, &e), S0_EINVAL);
	s0_error_free(e);
	e = NULL;
	/* symlink targets: empty, NUL inside */
	ck_assert_int_eq(s0__rootfs_symlink(t.fs, "", 0, P("/workspace/l0"), NULL, &e), S0_EINVAL);
	s0_error_free(e);
	e = NULL;
	ck_assert_int_eq(s0__rootfs_symlink(t.fs, "a\0b", 3, P("/workspace/l1"), NULL, &e), S0_EINVAL);
	s0_error_free(e);
	e = NULL;
	/* more than one block of target */
	char big[5000];
	memset(big, 'y', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	ck_assert_int_eq(s0__rootfs_symlink(t.fs, P(big), P("/workspace/l2"), NULL, &e), S0_EINVAL);
	s0_error_free(e);
	e = NULL;
	ck_assert_uint_eq(rt_dev_hash(&t), dev);
	/* a read-only handle refuses every write */
	ck_assert_int_eq(s0__rootfs_close(t.fs, NULL), S0_OK);
	ck_assert_int_eq(s0__rootfs_open(&t.dev, S0__ROOTFS_RDONLY, &t.fs, NULL), S0_OK);
	ck_assert(!s0__rootfs_is_writable(t.fs));
	for (enum op op = OP_WRITE; op < OP_N; op++) {
		if (op == OP_STAT || op == OP_LIST)
			continue;
		e = NULL;
		ck_assert_int_eq(run_op(&t, op, P("/workspace/newthing"), &e), S0_EFORBIDDEN);
		ck_assert_str_eq(s0_error_reason(e), "permission_denied");
		s0_error_free(e);
	}
	free(rt_read(&t, "/workspace/file", NULL));
	ck_assert_uint_eq(td_hash(&t.dev), dev);
	rt_close(&t);
}
END_TEST

/* An image made by mke2fs directly (with a journal), tweaked by debugfs. */
static void journalled_image(rt_fs *t, const char *debugfs_cmd)
{
	memset(t, 0, sizeof *t);
	t->tmp = s0_test_tmpdir("rootfs-recov");
	char *src = s0__asprintf("%s/src", t->tmp), *img = s0__asprintf("%s/j.img", t->tmp);
	char *file = s0__asprintf("%s/hello.txt", src);
	ck_assert_int_eq(mkdir(src, 0755), 0);
	FILE *f = fopen(file, "w");
	fputs("hello from a crash snapshot\n", f);
	fclose(f);
	FILE *g = fopen(img, "w");
	ck_assert_int_eq(ftruncate(fileno(g), 32 * MiB), 0);
	fclose(g);
	const char *mk[] = {"/sbin/mke2fs", "-q", "-F", "-t", "ext4", "-b", "4096", "-d", src, img, NULL};
	ck_assert_int_eq(rt_run(mk, NULL), 0);
	const char *dbg[] = {"/sbin/debugfs", "-w", "-R", debugfs_cmd, img, NULL};
	char *out = NULL;
	ck_assert_msg(rt_run(dbg, &out) == 0, "debugfs: %s", out);
	free(out);
	ck_assert_int_eq(td_new(32 * MiB, &t->dev), 0);
	ck_assert_int_eq(s0__rootfs_image_import(img, &t->dev, NULL, NULL), S0_OK);
	free(src);
	free(img);
	free(file);
}

static void refused_but_readable(const char *debugfs_cmd, const char *reason)
{
	rt_fs t;
	journalled_image(&t, debugfs_cmd);
	uint64_t h = td_hash(&t.dev);
	s0_error *e = NULL;
	ck_assert_int_eq(s0__rootfs_open(&t.dev, 0, &t.fs, &e), S0_ECONFLICT);
	ck_assert_ptr_null(t.fs);
	ck_assert_str_eq(s0_error_reason(e), reason);
	ck_assert_ptr_nonnull(strstr(s0_error_message(e), "refusing to write"));
	s0_error_free(e);
	ck_assert_uint_eq(td_hash(&t.dev), h);
	/* a read-only open still works and reads the files */
	ck_assert_int_eq(s0__rootfs_open(&t.dev, S0__ROOTFS_RDONLY, &t.fs, NULL), S0_OK);
	size_t n;
	char *d = rt_read(&t, "/hello.txt", &n);
	ck_assert_str_eq(d, "hello from a crash snapshot\n");
	free(d);
	ck_assert_uint_eq(td_hash(&t.dev), h);
	rt_close(&t);
}

START_TEST(test_needs_recovery_refused)
{
	refused_but_readable("feature needs_recovery", "needs_recovery");
}
END_TEST

START_TEST(test_error_state_refused)
{
	refused_but_readable("ssv state 3", "fs_has_errors");
}
END_TEST

START_TEST(test_not_ext4)
{
	s0__blockdev dev;
	ck_assert_int_eq(td_new(8 * MiB, &dev), 0);
	char junk[8192];
	rt_fill(junk, sizeof junk, 5);
	ck_assert_int_eq(s0__blockdev_write(&dev, 0, junk, sizeof junk, NULL), S0_OK);
	s0__rootfs *fs = NULL;
	s0_error *e = NULL;
	ck_assert_int_eq(s0__rootfs_open(&dev, 0, &fs, &e), S0_ECORRUPT);
	ck_assert_str_eq(s0_error_reason(e), "not_ext4");
	s0_error_free(e);
	e = NULL;
	ck_assert_int_eq(s0__rootfs_open(&dev, S0__ROOTFS_RDONLY, &fs, &e), S0_ECORRUPT);
	s0_error_free(e);
	td_free(&dev);
}
END_TEST

START_TEST(test_device_write_error)
{
	rt_fs t;
	rt_open_fresh(&t, 32 * MiB);
	td_fail_writes(&t.dev, 1);
	s0_error *e = NULL;
	char buf[10000];
	rt_fill(buf, sizeof buf, 1);
	ck_assert_int_eq(s0__rootfs_write(t.fs, P("/workspace/x"), buf, sizeof buf, NULL, &e),
	                 S0_EINTERNAL);
	ck_assert_str_eq(s0_error_reason(e), "operation_failed");
	ck_assert_ptr_nonnull(s0_error_cause(e));
	ck_assert_int_eq(s0_error_code(s0_error_cause(e)), S0_EIO);
	s0_error_free(e);
	/* the writer "crashes": the branch is dropped, not flushed */
	s0__rootfs_discard(t.fs);
	t.fs = NULL;
	rt_close(&t);
}
END_TEST

static Suite *hostile_suite(void)
{
	Suite *s = suite_create("rootfs_hostile");
	TCase *tc = tcase_create("hostile");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_hostile_paths);
	tcase_add_test(tc, test_symlinks_confined);
	tcase_add_test(tc, test_hostile_states);
	tcase_add_test(tc, test_needs_recovery_refused);
	tcase_add_test(tc, test_error_state_refused);
	tcase_add_test(tc, test_not_ext4);
	tcase_add_test(tc, test_device_write_error);
	suite_add_tcase(s, tc);
	return s;
}

S0_TEST_MAIN(hostile_suite)
