/*
 * Helpers shared by the rootfs test programs: fresh filesystems on test
 * devices, e2fsck of a device, state fingerprints for "unchanged" checks,
 * and asserting wrappers around the files operations.
 */
#ifndef S0_TEST_ROOTFS_SUPPORT_H
#define S0_TEST_ROOTFS_SUPPORT_H

#include <check.h>
#include <stdint.h>
#include <string.h>

#include "check_main.h"
#include "local/rootfs/files.h"
#include "local/rootfs/rootfs.h"
#include "local/rootfs/template.h"
#include "testdev.h"

#define MiB (1024ull * 1024)

/* A test filesystem: device + open read-write handle + scratch dir. */
typedef struct rt_fs {
	s0__blockdev dev;
	s0__rootfs *fs;
	char *tmp;
} rt_fs;

/* Fresh empty template filesystem of size_bytes (with the standard layout). */
void rt_open_fresh(rt_fs *t, uint64_t size_bytes);
/* Close (flush) the handle and reopen it read-write on the same device. */
void rt_reopen(rt_fs *t);
/* Close everything; removes the scratch dir. */
void rt_close(rt_fs *t);

/* Flush, export the device and run `e2fsck -fn`; returns its exit status
 * and prints its output when non-zero. */
int rt_fsck(rt_fs *t);
#define RT_ASSERT_FSCK(t) ck_assert_int_eq(rt_fsck(t), 0)

/* Flush and hash the device bytes (exact "unchanged" check). */
uint64_t rt_dev_hash(rt_fs *t);
/* Hash of the tree as seen through the files API (paths, types, sizes,
 * modes, mtimes, link targets, file contents). */
uint64_t rt_tree_hash(rt_fs *t);

/* Run argv (argv[0] absolute), capture stdout+stderr in *out (nullable),
 * return the exit status (or -1). */
int rt_run(const char *const argv[], char **out);

/* Asserting wrappers (path NUL-terminated). */
void rt_write(rt_fs *t, const char *path, const void *data, size_t len);
void rt_write_str(rt_fs *t, const char *path, const char *s);
void rt_mkdir_p(rt_fs *t, const char *path);
/* Read a whole file (asserts success); free() the result. */
char *rt_read(rt_fs *t, const char *path, size_t *len);
/* Expect an operation's error: code and reason, and free the error. */
void rt_expect(int rc, s0_error *e, int code, const char *reason);

/* Deterministic pseudo-random bytes. */
void rt_fill(void *buf, size_t len, uint64_t seed);

#endif
