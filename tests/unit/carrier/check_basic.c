/* Carrier basics: files through the kernel, sync, detach, libext2fs sees
 * them, e2fsck clean; the namespace; bad input; busy; concurrency; EIO. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cartest.h"
#include "local/blocks/blockdev.h"

#define MiB (1024ull * 1024)

static bool host_mountinfo_mentions(const char *s)
{
	FILE *f = fopen("/proc/1/mountinfo", "re");
	char line[4096];
	bool hit = false;
	while (f && !hit && fgets(line, sizeof line, f))
		hit = strstr(line, s) != NULL;
	if (f)
		fclose(f);
	return hit;
}

/* Write and read files through the kernel's ext4, sync, detach: a
 * libext2fs reader of the same branch sees them, the published generation
 * is e2fsck-clean, and the template's files read back unchanged. */
START_TEST(test_roundtrip)
{
	ct t;
	ct_open(&t, 64 * MiB);
	s0__branch *b = NULL;
	CT_OK(carenv_branch(&t.env, &b, &err_));
	s0__carrier *c = ct_attach(&t, b, "rt");
	s0__carrier_stats st;
	s0__carrier_stats_get(c, &st);
	ck_assert_int_ge(st.loop_index, 0);
	ck_assert(st.direct_io);

	char *p = ct_path(c, "/etc/hostname");
	char *got = ct_get(p, NULL);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, CARENV_HOSTNAME);
	free(got);
	free(p);

	p = ct_path(c, "/workspace/sub");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	free(p);
	size_t big_len = 3 * MiB + 123;
	char *big = malloc(big_len);
	carenv_fill(big, big_len, 42);
	p = ct_path(c, "/workspace/sub/big.bin");
	ct_put(p, big, big_len);
	size_t n = 0;
	got = ct_get(p, &n);
	ck_assert_uint_eq(n, big_len);
	ck_assert(memcmp(got, big, big_len) == 0);
	free(got);
	free(p);
	p = ct_path(c, "/workspace/hello.txt");
	ct_put(p, "hello from the kernel\n", 22);
	free(p);
	CT_OK(s0__carrier_sync(c, &err_));
	s0__carrier_stats_get(c, &st);
	ck_assert_uint_gt(st.writes, 0);
	ck_assert_uint_eq(st.io_errors, 0);
	/* after sync, still mounted: the device already holds the files (a
	 * read-only libext2fs reader of the branch sees them) */
	got = ct_rootfs_read(b, "/workspace/hello.txt", &n);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, "hello from the kernel\n");
	free(got);

	CT_OK(s0__carrier_detach(c, &err_));
	CT_OK(s0__carrier_detach(c, &err_)); /* idempotent */
	CT_FAILS(S0_ECONFLICT, "carrier_detached", s0__carrier_sync(c, &err_));
	ck_assert_int_eq(s0__carrier_enter(c), -EBADF);
	s0__carrier_stats_get(c, &st);
	ck_assert_int_eq(st.loop_index, -1);
	printf("roundtrip: attach %lld us, detach %lld us, %llu writes\n", (long long)st.attach_us,
	       (long long)st.detach_us, (unsigned long long)st.writes);
	s0__carrier_free(c);

	got = ct_rootfs_read(b, "/workspace/hello.txt", &n);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, "hello from the kernel\n");
	free(got);
	got = ct_rootfs_read(b, "/workspace/sub/big.bin", &n);
	ck_assert_ptr_nonnull(got);
	ck_assert_uint_eq(n, big_len);
	ck_assert(memcmp(got, big, big_len) == 0);
	free(got);
	free(big);

	s0__genid gen;
	CT_OK(s0__branch_publish(b, 0, &gen, &err_));
	ck_assert_int_eq(ct_fsck(&t, &gen), 0);
	s0__bstore_unref(t.env.bs, &gen);
	s0__branch_free(b);
	char what[512];
	ck_assert_msg(ct_leftovers(t.state, what, sizeof what) == 0, "left:%s", what);
	ct_close(&t);
}
END_TEST

/* A forked child joins the namespace with s0__carrier_enter and sees the
 * mounted tree at s0__carrier_root; the host's mount table never shows it. */
START_TEST(test_enter_namespace)
{
	ct t;
	ct_open(&t, 32 * MiB);
	s0__branch *b = NULL;
	CT_OK(carenv_branch(&t.env, &b, &err_));
	s0__carrier *c = ct_attach(&t, b, "ns");
	const char *root = s0__carrier_root(c);
	ck_assert(!host_mountinfo_mentions(root));
	char path[4096];
	snprintf(path, sizeof path, "%s/etc/hostname", root);
	struct stat st;
	ck_assert_int_ne(stat(path, &st), 0); /* empty directory on the host */
	pid_t pid = fork();
	if (pid == 0) {
		if (s0__carrier_enter(c) != 0)
			_exit(2);
		int fd = open(path, O_RDONLY);
		char buf[64] = {0};
		if (fd < 0 || read(fd, buf, sizeof buf - 1) <= 0)
			_exit(3);
		_exit(strcmp(buf, CARENV_HOSTNAME) == 0 ? 0 : 4);
	}
	int ws;
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	ck_assert(WIFEXITED(ws));
	ck_assert_int_eq(WEXITSTATUS(ws), 0);
	CT_OK(s0__carrier_detach(c, &err_));
	s0__carrier_free(c);
	s0__branch_free(b);
	ct_close(&t);
}
END_TEST

/* Bad options are S0_EINVAL; a second carrier of the same id is
 * carrier_exists; a device without ext4 fails the attach and leaves
 * nothing behind. */
START_TEST(test_bad_input)
{
	ct t;
	ct_open(&t, 32 * MiB);
	s0__branch *b = NULL;
	CT_OK(carenv_branch(&t.env, &b, &err_));
	s0__blockdev dev;
	s0__branch_blockdev(b, &dev);
	s0__carrier *c = NULL;
	s0__carrier_opts o = {.dev = &dev, .state_dir = t.state, .id = "x"};
	o.dev = NULL;
	CT_FAILS(S0_EINVAL, "invalid_request", s0__carrier_attach(&o, &c, &err_));
	o.dev = &dev;
	o.state_dir = "relative/state";
	CT_FAILS(S0_EINVAL, "invalid_request", s0__carrier_attach(&o, &c, &err_));
	o.state_dir = t.state;
	const char *bad_ids[] = {"", ".", "..", "a/b", "sp ace",
	                         "0123456789012345678901234567890123456789012345678901234567890123456789"};
	for (size_t i = 0; i < sizeof bad_ids / sizeof bad_ids[0]; i++) {
		o.id = bad_ids[i];
		CT_FAILS(S0_EINVAL, "invalid_request", s0__carrier_attach(&o, &c, &err_));
	}
	o.id = NULL;
	CT_FAILS(S0_EINVAL, "invalid_request", s0__carrier_attach(&o, &c, &err_));
	ck_assert_ptr_null(c);

	o.id = "dup";
	CT_OK(s0__carrier_attach(&o, &c, &err_));
	s0__carrier *c2 = NULL;
	CT_FAILS(S0_ECONFLICT, "carrier_exists", s0__carrier_attach(&o, &c2, &err_));
	ck_assert_ptr_null(c2);
	CT_OK(s0__carrier_detach(c, &err_));
	s0__carrier_free(c);

	/* a device whose size is not a multiple of 512 bytes */
	s0__blockdev odd;
	CT_OK(s0__memdev_new(16 * MiB + 100, &odd, &err_));
	o.dev = &odd;
	o.id = "odd";
	CT_FAILS(S0_EINVAL, "invalid_request", s0__carrier_attach(&o, &c, &err_));
	s0__memdev_free(&odd);
	/* not ext4: an all-zero device */
	s0__blockdev zero;
	CT_OK(s0__memdev_new(16 * MiB, &zero, &err_));
	o.dev = &zero;
	o.id = "zero";
	c = NULL;
	CT_FAILS(S0_EIO, NULL, s0__carrier_attach(&o, &c, &err_));
	ck_assert_ptr_null(c);
	s0__memdev_free(&zero);
	char what[512];
	ck_assert_msg(ct_leftovers(t.state, what, sizeof what) == 0, "left:%s", what);
	char rec[4096];
	snprintf(rec, sizeof rec, "%s/zero.carrier", t.state);
	ck_assert_int_ne(access(rec, F_OK), 0);
	snprintf(rec, sizeof rec, "%s/zero.d", t.state);
	ck_assert_int_ne(access(rec, F_OK), 0);
	s0__branch_free(b);
	ct_close(&t);
}
END_TEST

/* Detach while a process (one that entered the namespace) still uses the
 * mount: carrier_busy, nothing undone; once it is gone, detach works. */
START_TEST(test_detach_busy)
{
	ct t;
	ct_open(&t, 32 * MiB);
	s0__branch *b = NULL;
	CT_OK(carenv_branch(&t.env, &b, &err_));
	s0__carrier *c = ct_attach(&t, b, "busy");
	int ready[2];
	ck_assert_int_eq(pipe(ready), 0);
	pid_t pid = fork();
	if (pid == 0) {
		if (s0__carrier_enter(c) != 0 || chdir(s0__carrier_root(c)) != 0)
			_exit(2);
		ssize_t w = write(ready[1], "r", 1);
		(void)w;
		pause();
		_exit(0);
	}
	char ch;
	ck_assert_int_eq(read(ready[0], &ch, 1), 1);
	CT_FAILS(S0_ECONFLICT, "carrier_busy", s0__carrier_detach(c, &err_));
	/* still attached and usable */
	char *p = ct_path(c, "/etc/hostname");
	char *got = ct_get(p, NULL);
	ck_assert_ptr_nonnull(got);
	free(got);
	free(p);
	CT_OK(s0__carrier_sync(c, &err_));
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	CT_OK(s0__carrier_detach(c, &err_));
	s0__carrier_free(c);
	close(ready[0]);
	close(ready[1]);
	s0__branch_free(b);
	char what[512];
	ck_assert_msg(ct_leftovers(t.state, what, sizeof what) == 0, "left:%s", what);
	ct_close(&t);
}
END_TEST

/* Three carriers of one template at once, each written; each branch holds
 * only its own file afterwards. */
START_TEST(test_concurrent)
{
	ct t;
	ct_open(&t, 32 * MiB);
	enum { N = 3 };
	s0__branch *b[N];
	s0__carrier *c[N];
	char id[16], name[64];
	for (int i = 0; i < N; i++) {
		CT_OK(carenv_branch(&t.env, &b[i], &err_));
		snprintf(id, sizeof id, "c%d", i);
		c[i] = ct_attach(&t, b[i], id);
	}
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof name, "/workspace/only-%d.txt", i);
		char *p = ct_path(c[i], name);
		ct_put(p, id, strlen(id));
		free(p);
	}
	for (int i = N - 1; i >= 0; i--) {
		CT_OK(s0__carrier_detach(c[i], &err_));
		s0__carrier_free(c[i]);
	}
	for (int i = 0; i < N; i++) {
		for (int j = 0; j < N; j++) {
			snprintf(name, sizeof name, "/workspace/only-%d.txt", j);
			char *got = ct_rootfs_read(b[i], name, NULL);
			ck_assert_msg((got != NULL) == (i == j), "branch %d file %d", i, j);
			free(got);
		}
		s0__branch_free(b[i]);
	}
	char what[512];
	ck_assert_msg(ct_leftovers(t.state, what, sizeof what) == 0, "left:%s", what);
	ct_close(&t);
}
END_TEST

/* A device whose reads fail: the FUSE server answers EIO, the loop and
 * ext4 pass it on, the reader gets EIO (no hang); detach still works. */
typedef struct faildev {
	s0__blockdev inner;
	int fail; /* atomic: reads fail while set */
	uint64_t failed;
} faildev;

static int fd_read(void *ctx, uint64_t off, void *buf, size_t len, s0_error **err)
{
	faildev *f = ctx;
	if (__atomic_load_n(&f->fail, __ATOMIC_SEQ_CST)) {
		__atomic_fetch_add(&f->failed, 1, __ATOMIC_SEQ_CST);
		return s0__error_set(err, S0_EIO, NULL, "faildev: injected read error");
	}
	return s0__blockdev_read(&f->inner, off, buf, len, err);
}
static int fd_write(void *ctx, uint64_t off, const void *buf, size_t len, s0_error **err)
{
	faildev *f = ctx;
	return s0__blockdev_write(&f->inner, off, buf, len, err);
}
static int fd_flush(void *ctx, s0_error **err)
{
	faildev *f = ctx;
	return s0__blockdev_flush(&f->inner, err);
}
static uint64_t fd_size(void *ctx)
{
	faildev *f = ctx;
	return s0__blockdev_size(&f->inner);
}
static const s0__blockdev_ops faildev_ops = {fd_read, fd_write, fd_flush, fd_size};

START_TEST(test_read_error_is_eio)
{
	ct t;
	ct_open(&t, 32 * MiB);
	s0__branch *b = NULL;
	CT_OK(carenv_branch(&t.env, &b, &err_));
	faildev f = {0};
	s0__branch_blockdev(b, &f.inner);
	s0__blockdev dev = {&faildev_ops, &f};
	s0__carrier_opts o = {.dev = &dev, .state_dir = t.state, .id = "eio"};
	s0__carrier *c = NULL;
	CT_OK(s0__carrier_attach(&o, &c, &err_));
	char *p = ct_path(c, "/usr/share/doc/carrier.txt");
	struct stat st;
	ck_assert_int_eq(stat(p, &st), 0); /* the inode is read before the fault */
	ck_assert_int_eq(st.st_size, CARENV_DOC_BYTES);
	__atomic_store_n(&f.fail, 1, __ATOMIC_SEQ_CST);
	int fd = open(p, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	char buf[4096];
	errno = 0;
	ck_assert_int_eq(read(fd, buf, sizeof buf), -1);
	ck_assert_int_eq(errno, EIO);
	close(fd);
	ck_assert_uint_gt(__atomic_load_n(&f.failed, __ATOMIC_SEQ_CST), 0);
	s0__carrier_stats cs;
	s0__carrier_stats_get(c, &cs);
	ck_assert_uint_gt(cs.io_errors, 0);
	__atomic_store_n(&f.fail, 0, __ATOMIC_SEQ_CST);
	free(p);
	CT_OK(s0__carrier_detach(c, &err_));
	s0__carrier_free(c);
	s0__branch_free(b);
	char what[512];
	ck_assert_msg(ct_leftovers(t.state, what, sizeof what) == 0, "left:%s", what);
	ct_close(&t);
}
END_TEST

Suite *carrier_basic_suite(void)
{
	Suite *s = suite_create("carrier");
	TCase *tc = tcase_create("basic");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_roundtrip);
	tcase_add_test(tc, test_enter_namespace);
	tcase_add_test(tc, test_bad_input);
	tcase_add_test(tc, test_detach_busy);
	tcase_add_test(tc, test_concurrent);
	tcase_add_test(tc, test_read_error_is_eio);
	suite_add_tcase(s, tc);
	return s;
}
