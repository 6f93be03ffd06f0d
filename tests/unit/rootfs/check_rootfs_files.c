/* Files API over the RootFS: round trips, scale, hostile paths and states. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/json.h"

#include "rt_support.h"

#define P(s) (s), strlen(s)
/* Run expr (which reports into &xe) and expect code and reason. */
#define EXPECT(code, reason, expr)                                             \
	do {                                                                   \
		s0_error *xe = NULL;                                           \
		int rc_ = (expr);                                              \
		rt_expect(rc_, xe, code, reason);                              \
	} while (0)

static void check_file(rt_fs *t, const char *path, const void *want, size_t n)
{
	size_t got_n;
	char *got = rt_read(t, path, &got_n);
	ck_assert_msg(got_n == n, "%s: %zu bytes, want %zu", path, got_n, n);
	ck_assert_msg(memcmp(got, want, n) == 0, "%s: content differs", path);
	free(got);
}

START_TEST(test_roundtrip_sizes)
{
	rt_fs t;
	rt_open_fresh(&t, 256 * MiB);
	static const size_t sizes[] = {0, 1, 59, 60, 4095, 4096, 4097, 65536, 1048579};
	size_t n = sizeof sizes / sizeof sizes[0];
	char *buf = malloc(2 * MiB);
	for (size_t i = 0; i < n; i++) {
		char path[64];
		snprintf(path, sizeof path, "/workspace/f%zu", sizes[i]);
		rt_fill(buf, sizes[i], i);
		rt_write(&t, path, buf, sizes[i]);
	}
	rt_reopen(&t);
	for (size_t i = 0; i < n; i++) {
		char path[64];
		snprintf(path, sizeof path, "/workspace/f%zu", sizes[i]);
		rt_fill(buf, sizes[i], i);
		check_file(&t, path, buf, sizes[i]);
		s0__fileinfo *fi = NULL;
		ck_assert_int_eq(s0__rootfs_stat(t.fs, P(path), NULL, &fi, NULL), S0_OK);
		ck_assert_int_eq(fi->size_bytes, (int64_t)sizes[i]);
		ck_assert_int_eq(fi->mode, 0644);
		ck_assert_int_eq(fi->type, S0_FILE_TYPE_FILE);
		ck_assert(!fi->is_link);
		ck_assert_ptr_null(fi->link_target);
		s0__fileinfo_free(fi);
	}
	/* relative paths resolve against /workspace */
	rt_fill(buf, 60, 3);
	check_file(&t, "f60", buf, 60);
	check_file(&t, "./sub/../f60", buf, 60);
	free(buf);
	RT_ASSERT_FSCK(&t);
	rt_close(&t);
}
END_TEST


START_TEST(test_range_read)
{
	rt_fs t;
	rt_open_fresh(&t, 64 * MiB);
	enum { n = 3 * 4096 + 123 };
	char *buf = malloc(n);
	rt_fill(buf, n, 7);
	rt_write(&t, "/workspace/r", buf, n);
	const struct {
		uint64_t off;
		int64_t len;
		size_t want;
	} cases[] = {{0, -1, 3 * 4096 + 123}, {0, 10, 10},  {4090, 20, 20},
	             {12000, -1, 3 * 4096 + 123 - 12000}, {n - 1, 100, 1}, {n, -1, 0},
	             {n + 5000, 10, 0}, {100, 0, 0}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		void *d = NULL;
		size_t got = 99;
		ck_assert_int_eq(s0__rootfs_read(t.fs, P("/workspace/r"), cases[i].off, cases[i].len, NULL,
		                                 &d, &got, NULL),
		                 S0_OK);
		ck_assert_uint_eq(got, cases[i].want);
		if (got)
			ck_assert(memcmp(d, buf + cases[i].off, got) == 0);
		free(d);
	}
	free(buf);
	rt_close(&t);
}
END_TEST

START_TEST(test_overwrite_frees_space)
{
	rt_fs t;
	rt_open_fresh(&t, 64 * MiB);
	s0__rootfs_usage u0, u1, u2;
	s0__rootfs_get_usage(t.fs, &u0);
	char *big = malloc(8 * MiB);
	rt_fill(big, 8 * MiB, 1);
	rt_write(&t, "/workspace/o", big, 8 * MiB);
	s0__rootfs_get_usage(t.fs, &u1);
	ck_assert_uint_ge(u0.free_bytes - u1.free_bytes, 8 * MiB);
	rt_write_str(&t, "/workspace/o", "small now");
	s0__rootfs_get_usage(t.fs, &u2);
	ck_assert_uint_le(u0.free_bytes - u2.free_bytes, 64 * 1024);
	ck_assert_uint_eq(u0.free_inodes - u2.free_inodes, 1);
	size_t n;
	char *d = rt_read(&t, "/workspace/o", &n);
	ck_assert_uint_eq(n, 9);
	ck_assert(memcmp(d, "small now", 9) == 0);
	free(d);
	free(big);
	RT_ASSERT_FSCK(&t);
	rt_close(&t);
}
END_TEST

/* A new file's blocks come as one free run with its inode; when no run
 * holds them (free space only in holes), ext2fs_fallocate spreads them, and
 * a write the space cannot hold fails without leaking blocks. */
START_TEST(test_write_into_fragmented_space)
{
	rt_fs t;
	rt_open_fresh(&t, 32 * MiB);
	char *chunk = malloc(64 * 1024), *big = malloc(MiB);
	rt_fill(chunk, 64 * 1024, 3);
	rt_fill(big, MiB, 4);
	char p[64];
	int n = 0;
	s0_error *e = NULL;
	rt_mkdir_p(&t, "/workspace/frag");
	for (; n < 1000; n++) { /* 64 KiB each until the blocks run out */
		snprintf(p, sizeof p, "/workspace/frag/f%04d", n);
		int rc = s0__rootfs_write(t.fs, p, strlen(p), chunk, 64 * 1024, NULL, &e);
		if (rc < 0) {
			/* the RootFS layer's full-disk error (errmap.c) */
			ck_assert_msg(strstr(s0_error_message(e), "no space left on device"), "file %d: %s",
			              n, s0_error_message(e));
			s0_error_free(e);
			e = NULL;
			break;
		}
	}
	ck_assert_int_lt(n, 1000);
	ck_assert_int_gt(n, 100);
	s0__rootfs_usage u0, u1, u2, u3;
	s0__rootfs_get_usage(t.fs, &u0);
	ck_assert_int_lt(s0__rootfs_write(t.fs, P("/workspace/frag/again"), chunk, 64 * 1024, NULL,
	                                  NULL),
	                 0);
	s0__rootfs_get_usage(t.fs, &u1);
	ck_assert_uint_eq(u1.free_bytes, u0.free_bytes); /* the failed write kept nothing */
	ck_assert_uint_eq(u1.free_inodes, u0.free_inodes);
	for (int i = 0; i < n; i += 2) { /* holes of 16 blocks: no run of 256 */
		snprintf(p, sizeof p, "/workspace/frag/f%04d", i);
		ck_assert_int_eq(s0__rootfs_delete(t.fs, p, strlen(p), NULL, NULL), S0_OK);
	}
	s0__rootfs_get_usage(t.fs, &u2);
	ck_assert_uint_ge(u2.free_bytes - u1.free_bytes, (uint64_t)(n / 2) * 64 * 1024);
	rt_write(&t, "/workspace/big", big, MiB);
	s0__rootfs_get_usage(t.fs, &u3);
	ck_assert_uint_ge(u2.free_bytes - u3.free_bytes, MiB);
	size_t got;
	char *d = rt_read(&t, "/workspace/big", &got);
	ck_assert_uint_eq(got, MiB);
	ck_assert(memcmp(d, big, MiB) == 0);
	free(d);
	for (int i = 1; i < n; i += 2) { /* the survivors are intact */
		snprintf(p, sizeof p, "/workspace/frag/f%04d", i);
		d = rt_read(&t, p, &got);
		ck_assert_uint_eq(got, 64 * 1024);
		ck_assert(memcmp(d, chunk, got) == 0);
		free(d);
	}
	RT_ASSERT_FSCK(&t);
	free(chunk);
	free(big);
	rt_close(&t);
}
END_TEST

START_TEST(test_dirs_list_delete)
{
	rt_fs t;
	rt_open_fresh(&t, 64 * MiB);
	rt_mkdir_p(&t, "/workspace/a/b/c");
	rt_write_str(&t, "/workspace/a/b/c/f", "x");
	rt_write_str(&t, "/workspace/a/z", "zz");
	rt_write_str(&t, "/workspace/a/m", "m");
	ck_assert_int_eq(s0__rootfs_symlink(t.fs, P("b/c"), P("/workspace/a/l"), NULL, NULL), S0_OK);
	s0__filelist *l = NULL;
	ck_assert_int_eq(s0__rootfs_list(t.fs, P("/workspace/a/"), NULL, &l, NULL), S0_OK);
	ck_assert_uint_eq(l->len, 4);
	const char *names[] = {"b", "l", "m", "z"};
	for (size_t i = 0; i < 4; i++) {
		ck_assert_str_eq(l->items[i].name, names[i]);
		char want[64];
		snprintf(want, sizeof want, "/workspace/a/%s", names[i]);
		ck_assert_str_eq(l->items[i].path, want);
	}
	ck_assert_int_eq(l->items[0].type, S0_FILE_TYPE_DIR);
	ck_assert_int_eq(l->items[0].mode, 0755);
	ck_assert_int_eq(l->items[1].type, S0_FILE_TYPE_SYMLINK);
	ck_assert(l->items[1].is_link);
	ck_assert_ptr_null(l->items[1].link_target);
	ck_assert_int_eq(l->items[3].size_bytes, 2);
	s0__filelist_free(l);
	/* list follows a symlink; stat does not */
	ck_assert_int_eq(s0__rootfs_list(t.fs, P("/workspace/a/l"), NULL, &l, NULL), S0_OK);
	ck_assert_uint_eq(l->len, 1);
	ck_assert_str_eq(l->items[0].path, "/workspace/a/l/f");
	s0__filelist_free(l);
	s0__fileinfo *fi = NULL;
	ck_assert_int_eq(s0__rootfs_stat(t.fs, P("/workspace/a/l"), NULL, &fi, NULL), S0_OK);
	ck_assert_int_eq(fi->type, S0_FILE_TYPE_SYMLINK);
	ck_assert_str_eq(fi->link_target, "b/c");
	ck_assert_str_eq(fi->name, "l");
	ck_assert_str_eq(fi->path, "/workspace/a/l");
	ck_assert_int_eq(fi->size_bytes, 3);
	s0__fileinfo_free(fi);
	/* empty dir lists as [] */
	rt_mkdir_p(&t, "/workspace/empty");
	ck_assert_int_eq(s0__rootfs_list(t.fs, P("/workspace/empty"), NULL, &l, NULL), S0_OK);
	ck_assert_uint_eq(l->len, 0);
	cJSON *j = s0__filelist_to_json(l);
	char *txt = cJSON_PrintUnformatted(j);
	ck_assert_str_eq(txt, "{\"entries\":[]}");
	free(txt);
	cJSON_Delete(j);
	s0__filelist_free(l);
	/* delete of a symlink removes the link, not the target */
	ck_assert_int_eq(s0__rootfs_delete(t.fs, P("/workspace/a/l"), NULL, NULL), S0_OK);
	free(rt_read(&t, "/workspace/a/b/c/f", NULL));
	/* recursive delete; missing is fine */
	ck_assert_int_eq(s0__rootfs_delete(t.fs, P("/workspace/a"), NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__rootfs_delete(t.fs, P("/workspace/a"), NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__rootfs_delete(t.fs, P("/workspace/nope/deeper"), NULL, NULL), S0_OK);
	EXPECT(S0_ENOTFOUND, "file_not_found",
	       s0__rootfs_stat(t.fs, P("/workspace/a"), NULL, &fi, &xe));
	RT_ASSERT_FSCK(&t);
	rt_close(&t);
}
END_TEST

START_TEST(test_mkdir_semantics)
{
	rt_fs t;
	rt_open_fresh(&t, 64 * MiB);
	ck_assert_int_eq(s0__rootfs_mkdir(t.fs, P("/workspace/d"), false, NULL, NULL), S0_OK);
	EXPECT(S0_ECONFLICT, "path_exists",
	       s0__rootfs_mkdir(t.fs, P("/workspace/d"), false, NULL, &xe));
	ck_assert_int_eq(s0__rootfs_mkdir(t.fs, P("/workspace/d"), true, NULL, NULL), S0_OK);
	EXPECT(S0_ENOTFOUND, "directory_not_found",
	       s0__rootfs_mkdir(t.fs, P("/workspace/x/y"), false, NULL, &xe));
	rt_write_str(&t, "/workspace/file", "f");
	EXPECT(S0_ECONFLICT, "path_not_directory",
	       s0__rootfs_mkdir(t.fs, P("/workspace/file"), true, NULL, &xe));
	EXPECT(S0_ECONFLICT, "path_exists",
	       s0__rootfs_mkdir(t.fs, P("/workspace/file"), false, NULL, &xe));
	EXPECT(S0_ECONFLICT, "path_not_directory",
	       s0__rootfs_mkdir(t.fs, P("/workspace/file/sub"), true, NULL, &xe));
	ck_assert_int_eq(s0__rootfs_symlink(t.fs, P("d"), P("/workspace/ld"), NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__rootfs_mkdir(t.fs, P("/workspace/ld"), true, NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__rootfs_mkdir(t.fs, P("/workspace/ld/in"), false, NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__rootfs_mkdir(t.fs, P("/"), true, NULL, NULL), S0_OK);
	EXPECT(S0_ECONFLICT, "path_exists",
	       s0__rootfs_mkdir(t.fs, P("/"), false, NULL, &xe));
	s0__fileinfo *fi = NULL;
	ck_assert_int_eq(s0__rootfs_stat(t.fs, P("/workspace/d/in"), NULL, &fi, NULL), S0_OK);
	ck_assert_int_eq(fi->type, S0_FILE_TYPE_DIR);
	s0__fileinfo_free(fi);
	ck_assert_int_eq(s0__rootfs_stat(t.fs, P("/"), NULL, &fi, NULL), S0_OK);
	ck_assert_str_eq(fi->name, "/");
	ck_assert_int_eq(fi->type, S0_FILE_TYPE_DIR);
	s0__fileinfo_free(fi);
	RT_ASSERT_FSCK(&t);
	rt_close(&t);
}
END_TEST

START_TEST(test_many_small_files)
{
	long n = s0_test_iterations(10000);
	uint64_t size = 256 * MiB;
	if ((uint64_t)n * 24 * 1024 > size) /* long runs: room for the inodes */
		size = ((uint64_t)n * 24 * 1024 + MiB - 1) / MiB * MiB;
	rt_fs t;
	rt_open_fresh(&t, size);
	long dirs = n / 100 > 0 ? n / 100 : 1;
	char path[64], data[64];
	for (long i = 0; i < n; i++) {
		snprintf(path, sizeof path, "/workspace/d%03ld/file-%05ld.txt", i % dirs, i);
		int len = snprintf(data, sizeof data, "content of file %ld\n", i);
		rt_write(&t, path, data, (size_t)len);
	}
	rt_reopen(&t);
	for (long i = 0; i < n; i += (i % 7) + 1) {
		snprintf(path, sizeof path, "/workspace/d%03ld/file-%05ld.txt", i % dirs, i);
		int len = snprintf(data, sizeof data, "content of file %ld\n", i);
		check_file(&t, path, data, (size_t)len);
	}
	size_t total = 0;
	for (long d = 0; d < dirs; d++) {
		s0__filelist *l = NULL;
		snprintf(path, sizeof path, "/workspace/d%03ld", d);
		ck_assert_int_eq(s0__rootfs_list(t.fs, P(path), NULL, &l, NULL), S0_OK);
		total += l->len;
		s0__filelist_free(l);
	}
	ck_assert_uint_eq(total, (size_t)n);
	RT_ASSERT_FSCK(&t);
	ck_assert_int_eq(s0__rootfs_delete(t.fs, P("/workspace"), NULL, NULL), S0_OK);
	s0__rootfs_usage u;
	s0__rootfs_get_usage(t.fs, &u);
	ck_assert_uint_ge(u.free_inodes, u.total_inodes - 20);
	RT_ASSERT_FSCK(&t);
	rt_close(&t);
}
END_TEST

START_TEST(test_big_file)
{
	rt_fs t;
	rt_open_fresh(&t, 256 * MiB);
	size_t n = (size_t)s0_test_iterations(64) * MiB;
	if (n > 100 * MiB)
		n = 100 * MiB;
	char *buf = malloc(n);
	rt_fill(buf, n, 64);
	rt_write(&t, "/workspace/big.bin", buf, n);
	rt_reopen(&t);
	check_file(&t, "/workspace/big.bin", buf, n);
	RT_ASSERT_FSCK(&t);
	/* the write cap */
	uint64_t h = rt_dev_hash(&t);
	EXPECT(S0_ETOOLARGE, "file_too_large",
	       s0__rootfs_write(t.fs, P("/workspace/huge"), buf, (size_t)S0__FILES_MAX_WRITE + 1,
	                           NULL, &xe));
	ck_assert_uint_eq(rt_dev_hash(&t), h);
	free(buf);
	rt_close(&t);
}
END_TEST

START_TEST(test_renames)
{
	rt_fs t;
	rt_open_fresh(&t, 64 * MiB);
	rt_write_str(&t, "/workspace/a/one", "1");
	rt_write_str(&t, "/workspace/a/two", "2");
	rt_mkdir_p(&t, "/workspace/a/sub/deeper");
	rt_write_str(&t, "/workspace/a/sub/deeper/f", "deep");
	/* file across directories, parents created */
	ck_assert_int_eq(s0__rootfs_move(t.fs, P("/workspace/a/one"), P("/workspace/b/c/one"), NULL,
	                                 NULL),
	                 S0_OK);
	/* file over file */
	ck_assert_int_eq(s0__rootfs_move(t.fs, P("/workspace/a/two"), P("/workspace/b/c/one"), NULL,
	                                 NULL),
	                 S0_OK);
	check_file(&t, "/workspace/b/c/one", "2", 1);
	/* directory across parents: ".." and link counts fixed */
	ck_assert_int_eq(s0__rootfs_move(t.fs, P("/workspace/a/sub"), P("/workspace/b/sub2"), NULL,
	                                 NULL),
	                 S0_OK);
	check_file(&t, "/workspace/b/sub2/deeper/f", "deep", 4);
	RT_ASSERT_FSCK(&t);
	/* directory over an empty directory */
	rt_mkdir_p(&t, "/workspace/emptyd");
	ck_assert_int_eq(s0__rootfs_move(t.fs, P("/workspace/b/sub2"), P("/workspace/emptyd"), NULL,
	                                 NULL),
	                 S0_OK);
	check_file(&t, "/workspace/emptyd/deeper/f", "deep", 4);
	/* directory within the same parent, and onto itself */
	ck_assert_int_eq(s0__rootfs_move(t.fs, P("/workspace/emptyd"), P("/workspace/renamed"), NULL,
	                                 NULL),
	                 S0_OK);
	ck_assert_int_eq(s0__rootfs_move(t.fs, P("/workspace/renamed"), P("/workspace/renamed"), NULL,
	                                 NULL),
	                 S0_OK);
	RT_ASSERT_FSCK(&t);
	/* errors */
	uint64_t h = rt_dev_hash(&t);
	EXPECT(S0_ENOTFOUND, "file_not_found",
	       s0__rootfs_move(t.fs, P("/workspace/none"), P("/workspace/x"), NULL, &xe));
	EXPECT(S0_EINVAL, "invalid_request",
	       s0__rootfs_move(t.fs, P("/workspace/renamed"), P("/workspace/renamed/deeper/in"),
	                          NULL, &xe));
	EXPECT(S0_ECONFLICT, "path_not_directory",
	       s0__rootfs_move(t.fs, P("/workspace/renamed"), P("/workspace/b/c/one"), NULL, &xe));
	EXPECT(S0_ECONFLICT, "path_not_file",
	       s0__rootfs_move(t.fs, P("/workspace/b/c/one"), P("/workspace/renamed"), NULL, &xe));
	EXPECT(S0_ECONFLICT, "path_exists",
	       s0__rootfs_move(t.fs, P("/workspace/b"), P("/workspace/renamed"), NULL, &xe));
	EXPECT(S0_EINVAL, "invalid_request",
	       s0__rootfs_move(t.fs, P("/"), P("/workspace/r"), NULL, &xe));
	EXPECT(S0_ECONFLICT, "path_not_directory",
	       s0__rootfs_move(t.fs, P("/workspace/b/c/one"), P("/workspace/b/c/one/x"), NULL, &xe));
	ck_assert_uint_eq(rt_dev_hash(&t), h);
	/* many renames back and forth across directories */
	long n = s0_test_iterations(200);
	for (long i = 0; i < n; i++) {
		char src[64], dst[64];
		snprintf(src, sizeof src, "/workspace/b/c/one");
		snprintf(dst, sizeof dst, "/workspace/r%ld/x%ld", i % 10, i);
		ck_assert_int_eq(s0__rootfs_move(t.fs, P(src), P(dst), NULL, NULL), S0_OK);
		ck_assert_int_eq(s0__rootfs_move(t.fs, P(dst), P(src), NULL, NULL), S0_OK);
	}
	check_file(&t, "/workspace/b/c/one", "2", 1);
	RT_ASSERT_FSCK(&t);
	rt_close(&t);
}
END_TEST

START_TEST(test_deep_tree)
{
	rt_fs t;
	rt_open_fresh(&t, 64 * MiB);
	long depth = s0_test_iterations(200);
	if (depth > 800)
		depth = 800;
	char *path = calloc(1, 8192);
	strcpy(path, "/workspace");
	for (long i = 0; i < depth; i++)
		sprintf(path + strlen(path), "/d%ld", i % 10);
	ck_assert_uint_lt(strlen(path), 4096);
	strcat(path, "/leaf");
	rt_write_str(&t, path, "bottom");
	rt_reopen(&t);
	check_file(&t, path, "bottom", 6);
	RT_ASSERT_FSCK(&t);
	ck_assert_int_eq(s0__rootfs_move(t.fs, P("/workspace/d0"), P("/workspace/moved"), NULL, NULL),
	                 S0_OK);
	ck_assert_int_eq(s0__rootfs_delete(t.fs, P("/workspace/moved"), NULL, NULL), S0_OK);
	RT_ASSERT_FSCK(&t);
	free(path);
	rt_close(&t);
}
END_TEST

START_TEST(test_unicode_names)
{
	rt_fs t;
	rt_open_fresh(&t, 64 * MiB);
	static const char *names[] = {"héllo wörld.txt", "日本語のファイル", "emoji-😀🚀",
	                              "Ελληνικά", "mixed ü/ñ/ç", "tab\there", "quote\"and'",
	                              "\xce\xa9mega", "back\\slash"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char path[256];
		snprintf(path, sizeof path, "/workspace/u/%s", names[i]);
		rt_write_str(&t, path, names[i]);
	}
	rt_reopen(&t);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char path[256];
		snprintf(path, sizeof path, "/workspace/u/%s", names[i]);
		check_file(&t, path, names[i], strlen(names[i]));
	}
	s0__filelist *l = NULL;
	ck_assert_int_eq(s0__rootfs_list(t.fs, P("/workspace/u/mixed ü"), NULL, &l, NULL), S0_OK);
	ck_assert_uint_eq(l->len, 1);
	ck_assert_str_eq(l->items[0].name, "ñ");
	s0__filelist_free(l);
	/* a name of exactly 255 bytes (multi-byte characters) */
	char name[512] = {0};
	for (int i = 0; i < 60; i++)
		strcat(name, "é€");
	name[255] = '\0';
	while (strlen(name) > 255)
		name[strlen(name) - 1] = '\0';
	char path[300];
	snprintf(path, sizeof path, "/workspace/%s", name);
	rt_write_str(&t, path, "long");
	check_file(&t, path, "long", 4);
	RT_ASSERT_FSCK(&t);
	rt_close(&t);
}
END_TEST


START_TEST(test_fileinfo_json)
{
	rt_fs t;
	rt_open_fresh(&t, 32 * MiB);
	rt_write_str(&t, "/workspace/j/file.txt", "12345");
	ck_assert_int_eq(s0__rootfs_symlink(t.fs, P("file.txt"), P("/workspace/j/ln"), NULL, NULL),
	                 S0_OK);
	ck_assert_int_eq(s0__rootfs_chmod(t.fs, P("/workspace/j"), 02750, NULL, NULL), S0_OK);
	s0__fileinfo *fi = NULL;
	ck_assert_int_eq(s0__rootfs_stat(t.fs, P("j/file.txt"), NULL, &fi, NULL), S0_OK);
	cJSON *o = s0__fileinfo_to_json(fi);
	ck_assert_str_eq(cJSON_GetObjectItem(o, "name")->valuestring, "file.txt");
	ck_assert_str_eq(cJSON_GetObjectItem(o, "path")->valuestring, "j/file.txt");
	ck_assert_str_eq(cJSON_GetObjectItem(o, "type")->valuestring, "file");
	ck_assert_int_eq((int)cJSON_GetObjectItem(o, "size")->valuedouble, 5);
	ck_assert_str_eq(cJSON_GetObjectItem(o, "mode")->valuestring, "0644");
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(o, "is_link")));
	ck_assert_ptr_null(cJSON_GetObjectItem(o, "link_target"));
	const char *mt = cJSON_GetObjectItem(o, "mod_time")->valuestring;
	int64_t ms = 0;
	ck_assert_int_eq(s0__time_parse_rfc3339(mt, &ms), 0);
	ck_assert_int_eq(ms, fi->mod_time_unix_ns / 1000000);
	ck_assert(llabs(ms - s0__real_unix_ms()) < 60000);
	ck_assert_int_eq(cJSON_GetArraySize(o), 7);
	cJSON_Delete(o);
	s0__fileinfo_free(fi);
	ck_assert_int_eq(s0__rootfs_stat(t.fs, P("/workspace/j/ln"), NULL, &fi, NULL), S0_OK);
	o = s0__fileinfo_to_json(fi);
	ck_assert_str_eq(cJSON_GetObjectItem(o, "type")->valuestring, "symlink");
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(o, "is_link")));
	ck_assert_str_eq(cJSON_GetObjectItem(o, "link_target")->valuestring, "file.txt");
	ck_assert_str_eq(cJSON_GetObjectItem(o, "mode")->valuestring, "0777");
	cJSON_Delete(o);
	s0__fileinfo_free(fi);
	s0__filelist *l = NULL;
	ck_assert_int_eq(s0__rootfs_list(t.fs, P("/workspace"), NULL, &l, NULL), S0_OK);
	o = s0__filelist_to_json(l);
	cJSON *e0 = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "entries"), 0);
	ck_assert_str_eq(cJSON_GetObjectItem(e0, "path")->valuestring, "/workspace/j");
	ck_assert_str_eq(cJSON_GetObjectItem(e0, "type")->valuestring, "dir");
	ck_assert_str_eq(cJSON_GetObjectItem(e0, "mode")->valuestring, "2750");
	cJSON_Delete(o);
	s0__filelist_free(l);
	ck_assert_int_eq(s0__rootfs_list(t.fs, P("/workspace/j"), NULL, &l, NULL), S0_OK);
	o = s0__filelist_to_json(l);
	cJSON *ln = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "entries"), 1);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(ln, "is_link")));
	ck_assert_ptr_null(cJSON_GetObjectItem(ln, "link_target")); /* stat only */
	cJSON_Delete(o);
	s0__filelist_free(l);
	RT_ASSERT_FSCK(&t);
	rt_close(&t);
}
END_TEST

/* Several sandboxes (each its own device) and one shared handle, hammered
 * from threads: the process-wide lock keeps libext2fs single-writer. */
typedef struct worker {
	rt_fs *fs;
	int id;
	int failures;
} worker;

static void *work(void *arg)
{
	worker *w = arg;
	char p[96], d[64];
	for (int i = 0; i < 300; i++) {
		snprintf(p, sizeof p, "/workspace/w%d/d%d/f%d", w->id, i % 5, i);
		int n = snprintf(d, sizeof d, "worker %d item %d", w->id, i);
		if (s0__rootfs_write(w->fs->fs, P(p), d, (size_t)n, NULL, NULL) != S0_OK)
			w->failures++;
		void *got = NULL;
		size_t gl = 0;
		if (s0__rootfs_read(w->fs->fs, P(p), 0, -1, NULL, &got, &gl, NULL) != S0_OK ||
		    gl != (size_t)n || memcmp(got, d, gl))
			w->failures++;
		free(got);
		if (i % 7 == 6 && s0__rootfs_delete(w->fs->fs, P(p), NULL, NULL) != S0_OK)
			w->failures++;
		if (i % 50 == 49 && s0__rootfs_flush(w->fs->fs, NULL) != S0_OK)
			w->failures++;
	}
	return NULL;
}

START_TEST(test_threads)
{
	enum { NFS = 3, PER = 2 };
	rt_fs fs[NFS];
	for (int i = 0; i < NFS; i++)
		rt_open_fresh(&fs[i], 32 * MiB);
	pthread_t th[NFS * PER];
	worker w[NFS * PER];
	for (int i = 0; i < NFS * PER; i++) {
		w[i] = (worker){&fs[i / PER], i, 0};
		ck_assert_int_eq(pthread_create(&th[i], NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < NFS * PER; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(w[i].failures, 0);
	}
	for (int i = 0; i < NFS; i++) {
		RT_ASSERT_FSCK(&fs[i]);
		rt_close(&fs[i]);
	}
}
END_TEST


START_TEST(test_large_directory)
{
	long n = s0_test_iterations(1500);
	if (n > 20000)
		n = 20000; /* linear directories: O(n) per create */
	rt_fs t;
	rt_open_fresh(&t, n > 2000 ? ((uint64_t)n * 24 * 1024 + MiB - 1) / MiB * MiB : 64 * MiB);
	char p[96];
	for (long i = 0; i < n; i++) {
		snprintf(p, sizeof p, "/workspace/flat/a-rather-long-file-name-to-fill-blocks-%06ld", i);
		rt_write_str(&t, p, p);
	}
	s0__fileinfo *fi = NULL;
	ck_assert_int_eq(s0__rootfs_stat(t.fs, P("/workspace/flat"), NULL, &fi, NULL), S0_OK);
	ck_assert_int_gt(fi->size_bytes, 8 * 4096); /* the directory grew block by block */
	s0__fileinfo_free(fi);
	RT_ASSERT_FSCK(&t);
	for (long i = 0; i < n; i += 2) {
		snprintf(p, sizeof p, "/workspace/flat/a-rather-long-file-name-to-fill-blocks-%06ld", i);
		ck_assert_int_eq(s0__rootfs_delete(t.fs, P(p), NULL, NULL), S0_OK);
	}
	rt_mkdir_p(&t, "/workspace/flat/sub");
	ck_assert_int_eq(s0__rootfs_move(t.fs, P("/workspace/flat/sub"), P("/workspace/flat2"), NULL,
	                                 NULL),
	                 S0_OK);
	s0__filelist *l = NULL;
	ck_assert_int_eq(s0__rootfs_list(t.fs, P("/workspace/flat"), NULL, &l, NULL), S0_OK);
	ck_assert_uint_eq(l->len, (size_t)(n / 2));
	s0__filelist_free(l);
	RT_ASSERT_FSCK(&t);
	rt_close(&t);
}
END_TEST

static int64_t mtime_of(rt_fs *t, const char *path)
{
	s0__fileinfo *fi = NULL;
	ck_assert_int_eq(s0__rootfs_stat(t->fs, P(path), NULL, &fi, NULL), S0_OK);
	int64_t ns = fi->mod_time_unix_ns;
	s0__fileinfo_free(fi);
	return ns;
}

/* With a clock set, every timestamp is that clock's now; a fixed time wins. */
START_TEST(test_clock)
{
	const int64_t start_ms = 1700000000123;
	s0_manual_clock *mc = NULL;
	ck_assert_int_eq(s0_manual_clock_new(start_ms, 0, &mc, NULL), S0_OK);
	s0_clock c;
	s0_manual_clock_get(mc, &c);
	rt_fs t;
	rt_open_fresh(&t, 64 * MiB);
	s0__rootfs_set_clock(t.fs, &c);
	rt_mkdir_p(&t, "/workspace/d");
	rt_write_str(&t, "/workspace/d/f", "x");
	ck_assert_int_eq(mtime_of(&t, "/workspace/d/f"), start_ms * 1000000);
	ck_assert_int_eq(mtime_of(&t, "/workspace/d"), start_ms * 1000000);
	s0_manual_clock_advance(mc, 60500);
	rt_write_str(&t, "/workspace/d/f", "yy");
	ck_assert_int_eq(mtime_of(&t, "/workspace/d/f"), (start_ms + 60500) * 1000000);
	s0_manual_clock_advance(mc, 1000);
	rt_write_str(&t, "/workspace/d/g", "z");
	ck_assert_int_eq(mtime_of(&t, "/workspace/d/g"), (start_ms + 61500) * 1000000);
	ck_assert_int_eq(mtime_of(&t, "/workspace/d"), (start_ms + 61500) * 1000000);
	/* the fixed time (templates) still wins; 0 returns to the clock */
	s0__rootfs_set_fixed_time(t.fs, 1600000000);
	rt_write_str(&t, "/workspace/d/f", "z");
	ck_assert_int_eq(mtime_of(&t, "/workspace/d/f"), (int64_t)1600000000 * 1000000000);
	s0__rootfs_set_fixed_time(t.fs, 0);
	rt_write_str(&t, "/workspace/d/f", "w");
	ck_assert_int_eq(mtime_of(&t, "/workspace/d/f"), (start_ms + 61500) * 1000000);
	/* NULL: back to real time */
	s0__rootfs_set_clock(t.fs, NULL);
	rt_write_str(&t, "/workspace/d/f", "v");
	ck_assert_int_gt(mtime_of(&t, "/workspace/d/f"), (int64_t)1750000000 * 1000000000);
	RT_ASSERT_FSCK(&t);
	rt_close(&t);
	s0_manual_clock_free(mc);
}
END_TEST

static Suite *files_suite(void)
{
	Suite *s = suite_create("rootfs_files");
	TCase *tc = tcase_create("roundtrip");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_roundtrip_sizes);
	tcase_add_test(tc, test_range_read);
	tcase_add_test(tc, test_overwrite_frees_space);
	tcase_add_test(tc, test_write_into_fragmented_space);
	tcase_add_test(tc, test_dirs_list_delete);
	tcase_add_test(tc, test_mkdir_semantics);
	tcase_add_test(tc, test_many_small_files);
	tcase_add_test(tc, test_big_file);
	tcase_add_test(tc, test_renames);
	tcase_add_test(tc, test_deep_tree);
	tcase_add_test(tc, test_unicode_names);
	tcase_add_test(tc, test_fileinfo_json);
	tcase_add_test(tc, test_threads);
	tcase_add_test(tc, test_large_directory);
	tcase_add_test(tc, test_clock);
	suite_add_tcase(s, tc);
	return s;
}

S0_TEST_MAIN(files_suite)
