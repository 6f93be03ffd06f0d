/* Hostile conditions for the carrier: a device whose reads or writes fail
 * (EIO, never a hang), and paths a sandbox could have planted (symlinks,
 * "..") opened by the backend. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cartest.h"
#include "local/blocks/blockdev.h"

#define MiB (1024ull * 1024)

/* A device whose reads fail: the FUSE server answers EIO, the loop and
 * ext4 pass it on, the reader gets EIO (no hang); detach still works. */
typedef struct faildev {
	s0__blockdev inner;
	int fail;       /* atomic: reads fail while set */
	int fail_write; /* atomic: writes fail while set */
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
	if (__atomic_load_n(&f->fail_write, __ATOMIC_SEQ_CST)) {
		__atomic_fetch_add(&f->failed, 1, __ATOMIC_SEQ_CST);
		return s0__error_set(err, S0_EIO, NULL, "faildev: injected write error");
	}
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


/* A device whose writes fail: sync reports S0_EIO, detach still removes
 * the mounts and the loop device (its own sync error reported). */
START_TEST(test_write_error_fails_sync)
{
	ct t;
	ct_open(&t, 32 * MiB);
	s0__branch *b = NULL;
	CT_OK(carenv_branch(&t.env, &b, &err_));
	faildev f = {0};
	s0__branch_blockdev(b, &f.inner);
	s0__blockdev dev = {&faildev_ops, &f};
	s0__carrier_opts o = {.dev = &dev, .state_dir = t.state, .id = "weio"};
	s0__carrier *c = NULL;
	CT_OK(s0__carrier_attach(&o, &c, &err_));
	__atomic_store_n(&f.fail_write, 1, __ATOMIC_SEQ_CST);
	char *p = ct_path(c, "/workspace/lost.txt");
	ct_put(p, "lost\n", 5); /* buffered: the error comes at writeback */
	free(p);
	s0_error *se = NULL;
	ck_assert_int_eq(s0__carrier_sync(c, &se), S0_EIO);
	ck_assert_msg(strstr(s0_error_message(se), "injected write error") != NULL, "%s",
	              s0_error_message(se));
	s0_error_free(se);
	s0__carrier_stats cs;
	s0__carrier_stats_get(c, &cs);
	ck_assert_uint_gt(cs.io_errors, 0);
	s0_error *e = NULL;
	int rc = s0__carrier_detach(c, &e);
	ck_assert_msg(rc == S0_OK || rc == S0_EIO, "detach: %s", s0_code_name(rc));
	s0_error_free(e);
	CT_OK(s0__carrier_detach(c, &err_)); /* done: idempotent */
	s0__carrier_free(c);
	__atomic_store_n(&f.fail_write, 0, __ATOMIC_SEQ_CST);
	char what[512];
	ck_assert_msg(ct_leftovers(t.state, what, sizeof what) == 0, "left:%s", what);
	char rec[4096];
	snprintf(rec, sizeof rec, "%s/weio.carrier", t.state);
	ck_assert_int_ne(access(rec, F_OK), 0);
	s0__branch_free(b);
	ct_close(&t);
}
END_TEST

/* s0__carrier_open resolves as inside the sandbox: an absolute symlink
 * made in the tree and ".." stay in the tree. */
START_TEST(test_open_stays_inside)
{
	ct t;
	ct_open(&t, 32 * MiB);
	s0__branch *b = NULL;
	CT_OK(carenv_branch(&t.env, &b, &err_));
	s0__carrier *c = ct_attach(&t, b, "open");
	char *p = ct_path(c, "/workspace/evil");
	ck_assert_int_eq(symlink("/etc/hostname", p), 0);
	free(p);
	int fd = s0__carrier_open(c, "/workspace/evil", O_RDONLY, 0);
	ck_assert_int_ge(fd, 0);
	char buf[128] = {0};
	ck_assert_int_gt(read(fd, buf, sizeof buf - 1), 0);
	ck_assert_str_eq(buf, CARENV_HOSTNAME); /* the template's, not the host's */
	close(fd);
	fd = s0__carrier_open(c, "../../../../etc/hostname", O_RDONLY, 0);
	ck_assert_int_ge(fd, 0);
	memset(buf, 0, sizeof buf);
	ck_assert_int_gt(read(fd, buf, sizeof buf - 1), 0);
	ck_assert_str_eq(buf, CARENV_HOSTNAME);
	close(fd);
	ck_assert_int_eq(s0__carrier_open(c, "/proc/self/root/etc/hostname", O_RDONLY, 0), -ENOENT);
	fd = s0__carrier_open(c, "workspace/new.txt", O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "n", 1), 1);
	close(fd);
	CT_OK(s0__carrier_detach(c, &err_));
	ck_assert_int_eq(s0__carrier_open(c, "/etc/hostname", O_RDONLY, 0), -EBADF);
	s0__carrier_free(c);
	char *got = ct_rootfs_read(b, "/workspace/new.txt", NULL);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, "n");
	free(got);
	s0__branch_free(b);
	ct_close(&t);
}
END_TEST

Suite *carrier_hostile_suite(void)
{
	Suite *s = suite_create("carrier-hostile");
	TCase *tc = tcase_create("hostile");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_read_error_is_eio);
	tcase_add_test(tc, test_write_error_fails_sync);
	tcase_add_test(tc, test_open_stays_inside);
	suite_add_tcase(s, tc);
	return s;
}
