/*
 * SEC-74: a template image with content (mke2fs -d of a directory, e.g. an
 * extracted tar or a root tree) passes `e2fsck -fn` before it is imported,
 * so the kernel's ext4 never mounts metadata e2fsck rejects. A build whose
 * mke2fs leaves an inconsistent image (here a wrapper that runs the real
 * mke2fs, then edits an inode's link count with debugfs, checksums kept
 * valid) fails with `fsck_failed` and nothing reaches the device; a good
 * tree passes and the check's cost is printed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rt_support.h"

static char *make_src(const char *tmp)
{
	char *src = s0__asprintf("%s/src", tmp);
	char *etc = s0__asprintf("%s/etc", src);
	char *host = s0__asprintf("%s/etc/hostname", src);
	ck_assert_int_eq(mkdir(src, 0755), 0);
	ck_assert_int_eq(mkdir(etc, 0755), 0);
	FILE *f = fopen(host, "w");
	ck_assert_ptr_nonnull(f);
	fputs("fsck-template\n", f);
	fclose(f);
	free(etc);
	free(host);
	return src;
}

/* A "mke2fs" that makes the image, then breaks /etc/hostname's link count. */
static char *bad_mke2fs(const char *tmp)
{
	char *p = s0__asprintf("%s/bad-mke2fs", tmp);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs("#!/bin/sh\n"
	      "/sbin/mke2fs \"$@\" || exit $?\n"
	      "eval img=\\${$(($# - 1))}\n"
	      "/sbin/debugfs -w -R 'sif /etc/hostname links_count 7' \"$img\" >/dev/null 2>&1\n",
	      f);
	fclose(f);
	ck_assert_int_eq(chmod(p, 0755), 0);
	return p;
}

START_TEST(test_inconsistent_image_refused)
{
	char *tmp = s0_test_tmpdir("fsck");
	char *src = make_src(tmp);
	char *mk = bad_mke2fs(tmp);
	s0__blockdev dev;
	ck_assert_int_eq(td_new(16 * MiB, &dev), 0);
	s0__rootfs_image_opts o = {.source_dir = src, .size_bytes = 16 * MiB, .mke2fs_path = mk};
	s0_error *e = NULL;
	int rc = s0__rootfs_template_build(&o, tmp, &dev, NULL, &e);
	ck_assert_msg(rc == S0_EIO, "build of an inconsistent image: %s", s0_code_name(rc));
	ck_assert_str_eq(s0_error_reason(e), "fsck_failed");
	ck_assert_msg(strstr(s0_error_message(e), "e2fsck -fn exited 4"), "%s",
	              s0_error_message(e));
	s0_error_free(e);
	ck_assert_uint_eq(td_allocated_chunks(&dev), 0); /* nothing imported */

	/* The real mke2fs: the same tree passes, the check timed. */
	struct timespec a, b;
	o.mke2fs_path = NULL;
	clock_gettime(CLOCK_MONOTONIC, &a);
	e = NULL;
	rc = s0__rootfs_template_build(&o, tmp, &dev, NULL, &e);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ck_assert_msg(rc == S0_OK, "build: %s", s0_error_message(e));
	ck_assert_uint_gt(td_allocated_chunks(&dev), 0);
	fprintf(stderr, "template build with the e2fsck check: %.1f ms\n",
	        (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6);
	td_free(&dev);
	free(mk);
	free(src);
	s0_test_rmrf(tmp);
	free(tmp);
}
END_TEST

static Suite *fsck_suite(void)
{
	Suite *s = suite_create("rootfs_fsck");
	TCase *tc = tcase_create("fsck");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_inconsistent_image_refused);
	suite_add_tcase(s, tc);
	return s;
}

S0_TEST_MAIN(fsck_suite)
