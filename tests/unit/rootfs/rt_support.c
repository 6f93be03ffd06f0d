/* Shared helpers of the rootfs tests (see rt_support.h). */
#include "rt_support.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

void rt_open_fresh(rt_fs *t, uint64_t size)
{
	memset(t, 0, sizeof *t);
	t->tmp = s0_test_tmpdir("rootfs");
	ck_assert_ptr_nonnull(t->tmp);
	ck_assert_int_eq(td_new(size, &t->dev), 0);
	s0__rootfs_image_opts o = {.size_bytes = size};
	s0_error *e = NULL;
	int rc = s0__rootfs_template_build(&o, t->tmp, &t->dev, NULL, &e);
	ck_assert_msg(rc == S0_OK, "template: %s", s0_error_message(e));
	rc = s0__rootfs_open(&t->dev, 0, &t->fs, &e);
	ck_assert_msg(rc == S0_OK, "open: %s", s0_error_message(e));
}

void rt_reopen(rt_fs *t)
{
	s0_error *e = NULL;
	ck_assert_int_eq(s0__rootfs_close(t->fs, &e), S0_OK);
	t->fs = NULL;
	int rc = s0__rootfs_open(&t->dev, 0, &t->fs, &e);
	ck_assert_msg(rc == S0_OK, "reopen: %s", s0_error_message(e));
}

void rt_close(rt_fs *t)
{
	if (t->fs)
		ck_assert_int_eq(s0__rootfs_close(t->fs, NULL), S0_OK);
	t->fs = NULL;
	td_free(&t->dev);
	s0_test_rmrf(t->tmp);
	free(t->tmp);
	t->tmp = NULL;
}

int rt_run(const char *const argv[], char **out)
{
	int fd = memfd_create("rt-run", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, 1);
	posix_spawn_file_actions_adddup2(&fa, fd, 2);
	pid_t pid;
	int st = -1;
	if (posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ) == 0) {
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	posix_spawn_file_actions_destroy(&fa);
	if (out) {
		off_t n = lseek(fd, 0, SEEK_END);
		*out = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
		if (*out && n > 0)
			pread(fd, *out, (size_t)n, 0);
	}
	close(fd);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int rt_fsck(rt_fs *t)
{
	s0_error *e = NULL;
	ck_assert_int_eq(s0__rootfs_flush(t->fs, &e), S0_OK);
	char *img = s0__asprintf("%s/fsck.img", t->tmp);
	int rc = s0__rootfs_image_export(&t->dev, img, NULL, &e);
	ck_assert_msg(rc == S0_OK, "export: %s", s0_error_message(e));
	const char *argv[] = {"/sbin/e2fsck", "-fn", img, NULL};
	char *out = NULL;
	int st = rt_run(argv, &out);
	if (st != 0 || getenv("RT_SHOW_FSCK"))
		fprintf(stderr, "e2fsck exit %d:\n%s\n", st, out ? out : "");
	free(out);
	unlink(img);
	free(img);
	return st;
}

uint64_t rt_dev_hash(rt_fs *t)
{
	ck_assert_int_eq(s0__rootfs_flush(t->fs, NULL), S0_OK);
	return td_hash(&t->dev);
}

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 1099511628211ull;
	return h;
}

static uint64_t hash_dir(rt_fs *t, const char *dir, uint64_t h, int depth)
{
	s0__filelist *l = NULL;
	s0_error *e = NULL;
	int rc = s0__rootfs_list(t->fs, dir, strlen(dir), NULL, &l, &e);
	ck_assert_msg(rc == S0_OK, "list %s: %s", dir, s0_error_message(e));
	for (size_t i = 0; i < l->len; i++) {
		s0__fileinfo *fi = &l->items[i];
		h = mix(h, fi->path, strlen(fi->path) + 1);
		h = mix(h, &fi->type, sizeof fi->type);
		h = mix(h, &fi->size_bytes, sizeof fi->size_bytes);
		h = mix(h, &fi->mode, sizeof fi->mode);
		h = mix(h, &fi->mod_time_unix_ns, sizeof fi->mod_time_unix_ns);
		if (fi->type == S0_FILE_TYPE_FILE) {
			size_t n;
			char *d = rt_read(t, fi->path, &n);
			h = mix(h, d, n);
			free(d);
		} else if (fi->type == S0_FILE_TYPE_DIR && depth < 200) {
			h = hash_dir(t, fi->path, h, depth + 1);
		} else if (fi->type == S0_FILE_TYPE_SYMLINK) {
			s0__fileinfo *st = NULL;
			ck_assert_int_eq(s0__rootfs_stat(t->fs, fi->path, strlen(fi->path), NULL, &st, NULL),
			                 S0_OK);
			h = mix(h, st->link_target, strlen(st->link_target));
			s0__fileinfo_free(st);
		}
	}
	s0__filelist_free(l);
	return h;
}

uint64_t rt_tree_hash(rt_fs *t)
{
	return hash_dir(t, "/", 1469598103934665603ull, 0);
}

void rt_write(rt_fs *t, const char *path, const void *data, size_t len)
{
	s0_error *e = NULL;
	int rc = s0__rootfs_write(t->fs, path, strlen(path), data, len, NULL, &e);
	ck_assert_msg(rc == S0_OK, "write %s: %s", path, s0_error_message(e));
}

void rt_write_str(rt_fs *t, const char *path, const char *s)
{
	rt_write(t, path, s, strlen(s));
}

void rt_mkdir_p(rt_fs *t, const char *path)
{
	s0_error *e = NULL;
	int rc = s0__rootfs_mkdir(t->fs, path, strlen(path), true, NULL, &e);
	ck_assert_msg(rc == S0_OK, "mkdir %s: %s", path, s0_error_message(e));
}

char *rt_read(rt_fs *t, const char *path, size_t *len)
{
	void *d = NULL;
	size_t n = 0;
	s0_error *e = NULL;
	int rc = s0__rootfs_read(t->fs, path, strlen(path), 0, -1, NULL, &d, &n, &e);
	ck_assert_msg(rc == S0_OK, "read %s: %s", path, s0_error_message(e));
	if (len)
		*len = n;
	return d;
}

void rt_expect(int rc, s0_error *e, int code, const char *reason)
{
	ck_assert_msg(rc == code, "expected %s, got %d (%s: %s)", s0_code_name(code), rc,
	              s0_error_reason(e), s0_error_message(e));
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(s0_error_reason(e), reason);
	s0_error_free(e);
}

void rt_fill(void *buf, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
	unsigned char *p = buf;
	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)x;
	}
}
