/* Damaged, truncated and deleted objects under a volume: reads fail with
 * S0_ECORRUPT / S0_ENOTFOUND naming the object, never return wrong bytes;
 * and plaintext written through a volume never reaches the store's files. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blktest.h"
#include "objenv.h"
#include "check_main.h"

#define CS 65536u

static void flip(const char *path, uint64_t off)
{
	int fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	uint8_t c;
	ck_assert_int_eq(pread(fd, &c, 1, (off_t)off), 1);
	c ^= 1;
	ck_assert_int_eq(pwrite(fd, &c, 1, (off_t)off), 1);
	close(fd);
}

/* Read [off, off + len) of gen in a fresh branch with cold caches. */
static int read_cold(blk_env *e, const s0__genid *g, uint64_t off, size_t len, char **msg)
{
	s0__bstore_drop_caches(e->bs);
	s0__branch *b;
	uint8_t *buf = malloc(len);
	s0_error *err = NULL;
	int rc = s0__bstore_attach(e->bs, g, &b, &err);
	if (rc == S0_OK) {
		rc = s0__branch_read(b, off, buf, len, &err);
		s0__branch_free(b);
	}
	*msg = strdup(err ? s0_error_message(err) : "");
	s0_error_free(err);
	free(buf);
	return rc;
}

static void expect(blk_env *e, const s0__genid *g, uint64_t off, int code, const s0__objid *id)
{
	char *msg, hex[S0__OBJID_HEX_BYTES];
	int rc = read_cold(e, g, off, 4096, &msg);
	ck_assert_msg(rc == code, "got %s (%s), want %s", s0_code_name(rc), msg, s0_code_name(code));
	s0__objid_hex(id, hex);
	ck_assert_msg(strstr(msg, hex), "message lacks the object id: %s", msg);
	free(msg);
}

START_TEST(test_damaged_objects)
{
	blk_env e;
	blk_open(&e, 0);
	s0__genid g0, g1;
	OK(s0__bstore_create(e.bs, 256ull << 20, &g0, &err_));
	s0__branch *b;
	OK(s0__bstore_attach(e.bs, &g0, &b, &err_));
	uint8_t *chunk = malloc(CS);
	s0__objid ids[3];
	for (int i = 0; i < 3; i++) {
		blk_fill(chunk, CS, 50 + (uint64_t)i);
		s0__objstore_hash(e.os, chunk, CS, &ids[i]);
		OK(s0__branch_write(b, (uint64_t)i * (100ull << 20), chunk, CS, &err_));
	}
	OK(s0__branch_publish(b, 0, &g1, &err_));
	s0__branch_free(b);
	char *path;
	uint64_t off, len;
	/* A flipped byte anywhere in chunk 0's object. */
	OK(objenv_locate(e.os, &ids[0], &path, &off, &len, &err_));
	for (uint64_t at = off >= 8 ? off - 8 : 0; at < off + len; at += len / 7) {
		flip(path, at);
		expect(&e, &g1, 100, S0_ECORRUPT, &ids[0]);
		flip(path, at);
	}
	char *msg;
	ck_assert_int_eq(read_cold(&e, &g1, 100, 4096, &msg), S0_OK);
	free(msg);
	free(path);
	/* A damaged map page: the leaf above chunk 1. */
	s0__gen_info gi;
	OK(s0__bstore_gen_info(e.bs, &g1, &gi, &err_));
	OK(objenv_locate(e.os, &gi.root, &path, &off, &len, &err_));
	flip(path, off + len / 2);
	expect(&e, &g1, 100ull << 20, S0_ECORRUPT, &gi.root);
	flip(path, off + len / 2);
	free(path);
	/* A damaged descriptor: attach fails. */
	OK(objenv_locate(e.os, &g1, &path, &off, &len, &err_));
	flip(path, off + 3);
	expect(&e, &g1, 0, S0_ECORRUPT, &g1);
	flip(path, off + 3);
	free(path);
	if (objenv_is("pack")) {
		/* The pack truncated inside chunk 2, then deleted (a publish writes
		 * one pack: chunks, then pages, then the descriptor, which goes
		 * first). */
		OK(objenv_locate(e.os, &ids[2], &path, &off, &len, &err_));
		ck_assert_int_eq(truncate(path, (off_t)(off + len - 1)), 0);
		expect(&e, &g1, 200ull << 20, S0_ECORRUPT, &g1);
		ck_assert_int_eq(unlink(path), 0);
		free(path);
	} else {
		/* Chunk 2's file truncated, then it and the descriptor's deleted. */
		OK(objenv_locate(e.os, &ids[2], &path, &off, &len, &err_));
		ck_assert_int_eq(truncate(path, (off_t)(off + len - 1)), 0);
		expect(&e, &g1, 200ull << 20, S0_ECORRUPT, &ids[2]);
		ck_assert_int_eq(unlink(path), 0);
		free(path);
		if (objenv_is("s3")) { /* those were cache entries: delete from the bucket */
			s0__objid gone[2] = {ids[2], g1};
			OK(s0__objstore_delete(e.os, gone, 2, NULL, NULL, &err_));
		} else {
			OK(objenv_locate(e.os, &g1, &path, &off, &len, &err_));
			ck_assert_int_eq(unlink(path), 0);
			free(path);
		}
	}
	blk_reopen(&e);
	expect(&e, &g1, 0, S0_ENOTFOUND, &g1);
	free(chunk);
	blk_close(&e);
}
END_TEST

static bool tree_contains(const char *dir, const void *needle, size_t n)
{
	DIR *d = opendir(dir);
	if (!d)
		return false;
	bool found = false;
	struct dirent *e;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char *p;
		ck_assert_int_ge(asprintf(&p, "%s/%s", dir, e->d_name), 0);
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
			found = tree_contains(p, needle, n);
		} else if (S_ISREG(st.st_mode) && st.st_size) {
			FILE *f = fopen(p, "rb");
			char *buf = malloc((size_t)st.st_size);
			size_t got = fread(buf, 1, (size_t)st.st_size, f);
			fclose(f);
			found = memmem(buf, got, needle, n) != NULL;
			free(buf);
		}
		free(p);
	}
	closedir(d);
	return found;
}

START_TEST(test_plaintext_marker_not_stored)
{
	blk_env e;
	blk_open(&e, 0);
	static const char marker[] = "S0-VOLUME-MARKER-do-not-leak-9d1c";
	s0__genid g0, g1;
	OK(s0__bstore_create(e.bs, 64ull << 20, &g0, &err_));
	s0__branch *b;
	OK(s0__bstore_attach(e.bs, &g0, &b, &err_));
	uint8_t *chunk = malloc(CS);
	for (size_t i = 0; i + sizeof marker <= CS; i += sizeof marker - 1)
		memcpy(chunk + i, marker, sizeof marker - 1);
	for (int i = 0; i < 20; i++)
		OK(s0__branch_write(b, (uint64_t)i * 3 * CS + (uint64_t)i, chunk, CS, &err_));
	OK(s0__branch_write(b, 40ull << 20, marker, sizeof marker - 1, &err_));
	OK(s0__branch_publish(b, 0, &g1, &err_));
	s0__branch_free(b);
	OK(s0__bstore_gc(e.bs, NULL, &err_));
	blk_reopen(&e);
	OK(s0__bstore_attach(e.bs, &g1, &b, &err_));
	char back[sizeof marker];
	OK(s0__branch_read(b, 40ull << 20, back, sizeof marker - 1, &err_));
	ck_assert_mem_eq(back, marker, sizeof marker - 1);
	s0__branch_free(b);
	ck_assert(!tree_contains(e.objdir, marker, sizeof marker - 1));
	ck_assert(!tree_contains(e.dir, marker, sizeof marker - 1)); /* no scratch left either */
	free(chunk);
	blk_close(&e);
}
END_TEST

Suite *s0_bstore_corrupt_suite(void)
{
	Suite *s = suite_create(objenv_name("bstore_corrupt"));
	TCase *tc = tcase_create("corrupt");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_damaged_objects);
	tcase_add_test(tc, test_plaintext_marker_not_stored);
	suite_add_tcase(s, tc);
	return s;
}
