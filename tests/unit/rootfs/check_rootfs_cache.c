/*
 * The RootFS handle's caches (issue #22): the name cache (dcache.h) never
 * answers with a name that a delete, move, symlink or recreate changed, and
 * the metadata block cache (iocache.h) with data by extent runs (runs.c)
 * stays coherent when blocks move between file data and metadata, and the
 * metadata checksum (crc32c.h) is CRC32C. Every
 * workload ends with the content read back through a fresh handle and
 * `e2fsck -fn` of the device.
 */
#include <stdio.h>
#include <stdlib.h>

#include "local/rootfs/crc32c.h"
#include "local/rootfs/ext4io.h"
#include "rt_support.h"

#define P(s) (s), strlen(s)
#define NFILES (2 * S0__EXT4IO_CACHE_BLOCKS)

static int stat_rc(rt_fs *t, const char *path)
{
	s0__fileinfo *fi = NULL;
	s0_error *e = NULL;
	int rc = s0__rootfs_stat(t->fs, P(path), NULL, &fi, &e);
	s0__fileinfo_free(fi);
	s0_error_free(e);
	return rc;
}

static void expect_text(rt_fs *t, const char *path, const char *want)
{
	size_t n;
	char *got = rt_read(t, path, &n);
	ck_assert_uint_eq(n, strlen(want));
	ck_assert_mem_eq(got, want, n);
	free(got);
}

/* Names looked up (present and absent) before each change answer the new
 * state after it, on the same handle. */
START_TEST(test_names_follow_changes)
{
	rt_fs t;
	rt_open_fresh(&t, 64 * MiB);
	ck_assert_int_eq(stat_rc(&t, "/workspace/a/b"), S0_ENOTFOUND); /* remembered absent */
	rt_write_str(&t, "/workspace/a/b", "one");
	expect_text(&t, "/workspace/a/b", "one");
	rt_write_str(&t, "/workspace/a/b", "two"); /* replaced in place: a new inode */
	expect_text(&t, "/workspace/a/b", "two");

	/* recursive delete, then the same names again: inodes are reused */
	ck_assert_int_eq(s0__rootfs_delete(t.fs, P("/workspace/a"), NULL, NULL), S0_OK);
	ck_assert_int_eq(stat_rc(&t, "/workspace/a/b"), S0_ENOTFOUND);
	ck_assert_int_eq(stat_rc(&t, "/workspace/a"), S0_ENOTFOUND);
	rt_write_str(&t, "/workspace/a/c", "three");
	ck_assert_int_eq(stat_rc(&t, "/workspace/a/b"), S0_ENOTFOUND);
	expect_text(&t, "/workspace/a/c", "three");

	/* a move: old names gone, new ones there */
	ck_assert_int_eq(s0__rootfs_move(t.fs, P("/workspace/a"), P("/workspace/z"), NULL, NULL),
	                 S0_OK);
	ck_assert_int_eq(stat_rc(&t, "/workspace/a/c"), S0_ENOTFOUND);
	expect_text(&t, "/workspace/z/c", "three");

	/* a symlink where a name was known absent */
	ck_assert_int_eq(stat_rc(&t, "/workspace/l"), S0_ENOTFOUND);
	ck_assert_int_eq(s0__rootfs_symlink(t.fs, P("/workspace/z"), P("/workspace/l"), NULL, NULL),
	                 S0_OK);
	expect_text(&t, "/workspace/l/c", "three");

	/* a directory made by mkdir is complete and empty, then gains names */
	rt_mkdir_p(&t, "/workspace/m/n");
	ck_assert_int_eq(stat_rc(&t, "/workspace/m/n/x"), S0_ENOTFOUND);
	rt_write_str(&t, "/workspace/m/n/x", "four");
	expect_text(&t, "/workspace/m/n/x", "four");

	/* a file where a directory was (delete, write) and back */
	ck_assert_int_eq(s0__rootfs_delete(t.fs, P("/workspace/m"), NULL, NULL), S0_OK);
	rt_write_str(&t, "/workspace/m", "a file now");
	expect_text(&t, "/workspace/m", "a file now");
	ck_assert_int_eq(stat_rc(&t, "/workspace/m/n/x"), S0_ECONFLICT); /* parent not a dir */

	uint64_t before = rt_tree_hash(&t);
	rt_reopen(&t); /* a fresh handle, empty caches, sees the same tree */
	ck_assert_uint_eq(rt_tree_hash(&t), before);
	RT_ASSERT_FSCK(&t);
	rt_close(&t);
}
END_TEST

/* Blocks freed by file data become directory and inode blocks (cached
 * metadata) and then file data again; every byte reads back, also after a
 * reopen, and the held metadata writes reach the device at the flush. */
START_TEST(test_blocks_change_role)
{
	rt_fs t;
	rt_open_fresh(&t, 64 * MiB);
	size_t big = 6 * MiB + 123;
	char *buf = malloc(big), path[64];
	rt_fill(buf, big, 1);
	rt_write(&t, "/workspace/big1", buf, big);
	ck_assert_int_eq(s0__rootfs_delete(t.fs, P("/workspace/big1"), NULL, NULL), S0_OK);
	/* a directory block each: more dirty metadata than the block cache holds
	 * (S0__EXT4IO_CACHE_BLOCKS), so blocks are written back before the flush */
	for (int i = 0; i < NFILES; i++) {
		snprintf(path, sizeof path, "/workspace/d%04d/f%04d", i, i);
		rt_write_str(&t, path, path);
	}
	rt_fill(buf, big, 2);
	rt_write(&t, "/workspace/big2", buf, big);
	for (int i = 0; i < NFILES; i += 7) {
		snprintf(path, sizeof path, "/workspace/d%04d/f%04d", i, i);
		expect_text(&t, path, path);
	}
	size_t n;
	char *got = rt_read(&t, "/workspace/big2", &n);
	ck_assert_uint_eq(n, big);
	ck_assert(memcmp(got, buf, big) == 0);
	free(got);
	/* a range that starts and ends inside blocks */
	void *part = NULL;
	size_t pn = 0;
	ck_assert_int_eq(s0__rootfs_read(t.fs, P("/workspace/big2"), 4095, 8195, NULL, &part, &pn,
	                                 NULL),
	                 S0_OK);
	ck_assert_uint_eq(pn, 8195);
	ck_assert(memcmp(part, buf + 4095, pn) == 0);
	free(part);
	RT_ASSERT_FSCK(&t);
	rt_reopen(&t);
	got = rt_read(&t, "/workspace/big2", &n);
	ck_assert(n == big && memcmp(got, buf, big) == 0);
	free(got);
	for (int i = 1; i < NFILES; i += 7) {
		snprintf(path, sizeof path, "/workspace/d%04d/f%04d", i, i);
		expect_text(&t, path, path);
	}
	free(buf);
	rt_close(&t);
}
END_TEST

#ifdef S0__HAVE_CRC32C
/* The bitwise definition of the reflected CRC32C update (no inversion). */
static uint32_t crc_ref(uint32_t crc, const unsigned char *p, size_t len)
{
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
	}
	return crc;
}
#endif

/* The checksum libext2fs uses is CRC32C: the standard check value, every
 * length and alignment against the bitwise definition, and the call
 * libext2fs makes resolves to it. */
START_TEST(test_crc32c)
{
#ifdef S0__HAVE_CRC32C
	const unsigned char *v = (const unsigned char *)"123456789";
	ck_assert_uint_eq(~s0__crc32c_le(~0u, v, 9), 0xE3069283u);
	unsigned char buf[300];
	rt_fill(buf, sizeof buf, 9);
	for (size_t off = 0; off < 9; off++)
		for (size_t len = 0; off + len <= sizeof buf; len += 1 + len / 8) {
			uint32_t seed = (uint32_t)(off * 2654435761u + len);
			ck_assert_uint_eq(s0__crc32c_le(seed, buf + off, len), crc_ref(seed, buf + off, len));
		}
	ck_assert_uint_eq(ext2fs_crc32c_le(~0u, v, 9), s0__crc32c_le(~0u, v, 9));
	/* past the three-stream rounds (3 x 168 and 3 x 1360 bytes) and their edges */
	static unsigned char big[9008]; /* the longest length at the largest offset fits */
	rt_fill(big, sizeof big, 11);
	const size_t lens[] = {503, 504, 505, 1007, 1008, 1015, 4079, 4080, 4088, 4096, 4600, 8160, 8999};
	for (size_t off = 0; off < 3; off++)
		for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
			uint32_t seed = (uint32_t)(off * 40503u + lens[i]);
			ck_assert_uint_eq(s0__crc32c_le(seed, big + off, lens[i]),
			                  crc_ref(seed, big + off, lens[i]));
		}
#endif
}
END_TEST

static Suite *cache_suite(void)
{
	Suite *s = suite_create("rootfs-cache");
	TCase *tc = tcase_create("cache");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_names_follow_changes);
	tcase_add_test(tc, test_blocks_change_role);
	tcase_add_test(tc, test_crc32c);
	suite_add_tcase(s, tc);
	return s;
}

S0_TEST_MAIN(cache_suite)
