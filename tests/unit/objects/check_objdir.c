/* Backend tests: encryption at rest and concurrent puts (every backend);
 * the pack backend's corruption, delete/compaction, orphans, recovery. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "local/objects/pack/objdir.h"
#include "objenv.h"
#include "objtest.h"

void objtest_flip_at(const char *path, uint64_t off)
{
	int fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	uint8_t c;
	ck_assert_int_eq(pread(fd, &c, 1, (off_t)off), 1);
	c ^= 0x40;
	ck_assert_int_eq(pwrite(fd, &c, 1, (off_t)off), 1);
	close(fd);
}

int objtest_get_code(s0__objstore *os, const s0__objid *id, bool want_id_in_msg)
{
	s0__objctx *cx;
	ck_assert_int_eq(s0__objstore_ctx_new(os, &cx, NULL), S0_OK);
	size_t cap = 1 << 20, n;
	void *buf = malloc(cap);
	s0_error *err = NULL;
	int rc = s0__objstore_get(os, cx, id, buf, cap, &n, &err);
	if (rc < 0 && want_id_in_msg) {
		char hex[S0__OBJID_HEX_BYTES];
		s0__objid_hex(id, hex);
		ck_assert_msg(strstr(s0_error_message(err), hex), "id missing in: %s",
		              s0_error_message(err));
	}
	s0_error_free(err);
	free(buf);
	s0__objctx_free(cx);
	return rc;
}

START_TEST(test_flip_truncate_delete)
{
	char *dir;
	s0__objstore *os = objtest_open(&dir, 3);
	/* Three packs (a reopen starts a new one): ids 0-2, 3-5, 6-7. */
	enum { N = 8 };
	s0__objid ids[N];
	static uint8_t data[N][20000];
	for (int i = 0; i < N; i++) {
		if (i == 3 || i == 6) {
			s0__objstore_free(os);
			os = objtest_reopen(dir, 3);
		}
		objtest_fill(data[i], sizeof data[i], 100 + (uint64_t)i);
		ids[i] = objtest_put1(os, data[i], sizeof data[i]);
	}
	void *be = s0__objstore_backend(os);
	char *path;
	uint64_t off, len;
	/* Flip a byte at several places of object 0's sealed bytes and header. */
	ck_assert_int_eq(s0__objdir_locate(be, &ids[0], &path, &off, &len, NULL), S0_OK);
	uint64_t spots[] = {off - 20, off, off + 10, off + 60, off + len / 2, off + len - 1};
	for (size_t i = 0; i < sizeof spots / sizeof *spots; i++) {
		objtest_flip_at(path, spots[i]);
		ck_assert_int_eq(objtest_get_code(os, &ids[0], true), S0_ECORRUPT);
		objtest_flip_at(path, spots[i]);
		ck_assert_int_eq(objtest_get_code(os, &ids[0], true), S0_OK);
	}
	free(path);
	/* Truncate the first pack inside its last object. */
	ck_assert_int_eq(s0__objdir_locate(be, &ids[2], &path, &off, &len, NULL), S0_OK);
	ck_assert_int_eq(truncate(path, (off_t)(off + len / 2)), 0);
	ck_assert_int_eq(objtest_get_code(os, &ids[2], true), S0_ECORRUPT);
	ck_assert_int_eq(objtest_get_code(os, &ids[1], true), S0_OK);
	free(path);
	/* Delete the second pack. */
	ck_assert_int_eq(s0__objdir_locate(be, &ids[4], &path, &off, &len, NULL), S0_OK);
	ck_assert_int_eq(unlink(path), 0);
	for (int i = 3; i < 6; i++)
		ck_assert_int_eq(objtest_get_code(os, &ids[i], true), S0_ENOTFOUND);
	free(path);
	/* The same after a reopen (recovery leaves damage alone). */
	s0__objstore_free(os);
	os = objtest_reopen(dir, 3);
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(objtest_get_code(os, &ids[i], true),
		                 i == 2 ? S0_ECORRUPT : i >= 3 && i < 6 ? S0_ENOTFOUND : S0_OK);
	/* maintain() leaves damaged packs alone. */
	ck_assert_int_eq(s0__objstore_delete(os, &ids[7], 1, NULL, NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__objstore_delete(os, &ids[0], 1, NULL, NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__objstore_maintain(os, NULL), S0_OK);
	ck_assert_int_eq(objtest_get_code(os, &ids[2], true), S0_ECORRUPT);
	ck_assert_int_eq(objtest_get_code(os, &ids[1], true), S0_OK);
	ck_assert_int_eq(objtest_get_code(os, &ids[6], true), S0_OK);
	/* Wrong installation key: every read is corrupt, never wrong bytes. */
	s0__objstore_free(os);
	os = objtest_reopen(dir, 4);
	ck_assert_int_eq(objtest_get_code(os, &ids[6], true), S0_ECORRUPT);
	s0__objstore_free(os);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

/* Whether needle occurs in any regular file under dir. */
static bool dir_contains(const char *dir, const void *needle, size_t n)
{
	DIR *d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	struct dirent *e;
	bool found = false;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char *p;
		ck_assert_int_ge(asprintf(&p, "%s/%s", dir, e->d_name), 0);
		struct stat st;
		if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
			found = dir_contains(p, needle, n);
		} else if (S_ISREG(st.st_mode) && st.st_size > 0) {
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

START_TEST(test_plaintext_never_stored)
{
	char *dir;
	s0__objstore *os = objtest_open(&dir, 5);
	static const char marker[] = "S0-PLAINTEXT-MARKER-7f3a";
	size_t len = 65536;
	char *buf = malloc(len);
	for (size_t i = 0; i < len; i += sizeof marker - 1)
		memcpy(buf + i, marker, i + sizeof marker - 1 <= len ? sizeof marker - 1 : len - i);
	objtest_put1(os, buf, len);
	objtest_put1(os, marker, sizeof marker - 1);
	/* Incompressible data with the marker embedded once. */
	for (size_t i = 0; i < len; i++)
		buf[i] = (char)rand();
	memcpy(buf + 1000, marker, sizeof marker - 1);
	objtest_put1(os, buf, len);
	s0__objstore_free(os);
	ck_assert(!dir_contains(dir, marker, sizeof marker - 1));
	ck_assert(!dir_contains(dir, "block store object", 18));
	free(buf);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

static int count_cb(const s0__objid *id, uint64_t sealed_bytes, void *payload)
{
	(*(size_t *)payload)++;
	return 0;
}

static size_t count_packs(const char *dir)
{
	char *p;
	ck_assert_int_ge(asprintf(&p, "%s/packs", dir), 0);
	DIR *d = opendir(p);
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += strstr(e->d_name, ".pack") != NULL;
	closedir(d);
	free(p);
	return n;
}

START_TEST(test_delete_and_compact)
{
	char *dir;
	s0__objstore *os = objtest_open(&dir, 6);
	s0__objctx *cx;
	ck_assert_int_eq(s0__objstore_ctx_new(os, &cx, NULL), S0_OK);
	enum { BATCHES = 20, PER = 30, N = BATCHES * PER };
	static s0__objid ids[N];
	static uint8_t buf[4096];
	for (int bi = 0; bi < BATCHES; bi++) {
		s0__objbatch *b;
		if (bi && bi % 4 == 0) { /* a restart seals the current pack */
			s0__objctx_free(cx);
			s0__objstore_free(os);
			os = objtest_reopen(dir, 6);
			ck_assert_int_eq(s0__objstore_ctx_new(os, &cx, NULL), S0_OK);
		}
		ck_assert_int_eq(s0__objstore_begin(os, &b, NULL), S0_OK);
		for (int j = 0; j < PER; j++) {
			objtest_fill(buf, sizeof buf, (uint64_t)(bi * PER + j) * 7919);
			ck_assert_int_eq(
				s0__objstore_put(os, cx, b, buf, sizeof buf, &ids[bi * PER + j], NULL), S0_OK);
		}
		ck_assert_int_eq(s0__objstore_commit(os, b, NULL), S0_OK);
	}
	ck_assert_uint_eq(count_packs(dir), BATCHES / 4);
	s0__objctx_free(cx);
	s0__objstore_free(os);
	os = objtest_reopen(dir, 6);
	ck_assert_int_eq(s0__objstore_ctx_new(os, &cx, NULL), S0_OK);
	/* Delete every object of the first 4 batches, and 2 of every 3 elsewhere. */
	static s0__objid del[N];
	size_t nd = 0;
	for (int i = 0; i < N; i++)
		if (i < 4 * PER || i % 3)
			del[nd++] = ids[i];
	uint64_t freed = 0;
	ck_assert_int_eq(s0__objstore_delete(os, del, nd, NULL, &freed, NULL), S0_OK);
	ck_assert_uint_gt(freed, 0);
	ck_assert_uint_eq(count_packs(dir), BATCHES / 4 - 1);
	s0__objstore_usage_info before, after;
	ck_assert_int_eq(s0__objstore_usage(os, &before, NULL), S0_OK);
	ck_assert_int_eq(s0__objstore_maintain(os, NULL), S0_OK);
	ck_assert_int_eq(s0__objstore_usage(os, &after, NULL), S0_OK);
	ck_assert_uint_eq(after.objects, before.objects);
	ck_assert_uint_lt(after.file_bytes, before.file_bytes / 2);
	ck_assert_uint_eq(count_packs(dir), 1);
	s0__objstore_free(os);
	os = objtest_reopen(dir, 6);
	size_t listed = 0;
	ck_assert_int_eq(s0__objstore_list(os, count_cb, &listed, NULL), S0_OK);
	ck_assert_uint_eq(listed, N - nd);
	for (int i = 0; i < N; i++) {
		bool dead = i < 4 * PER || i % 3;
		int rc = objtest_get_code(os, &ids[i], dead);
		ck_assert_int_eq(rc, dead ? S0_ENOTFOUND : S0_OK);
		if (!dead) {
			uint8_t back[4096];
			size_t n;
			objtest_fill(buf, sizeof buf, (uint64_t)i * 7919);
			s0__objctx *c2;
			ck_assert_int_eq(s0__objstore_ctx_new(os, &c2, NULL), S0_OK);
			ck_assert_int_eq(s0__objstore_get(os, c2, &ids[i], back, sizeof back, &n, NULL),
			                 S0_OK);
			ck_assert_mem_eq(back, buf, sizeof buf);
			s0__objctx_free(c2);
		}
	}
	s0__objctx_free(cx);
	s0__objstore_free(os);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

START_TEST(test_garbage_pack_removed)
{
	char *dir;
	s0__objstore *os = objtest_open(&dir, 8);
	s0__objid keep = objtest_put1(os, "keep", 4);
	s0__objstore_free(os);
	char *p;
	ck_assert_int_ge(asprintf(&p, "%s/packs/00000000000000ff.pack", dir), 0);
	FILE *f = fopen(p, "w");
	fputs("S0PK a pack whose batch never wrote a record", f);
	fclose(f);
	os = objtest_reopen(dir, 8);
	ck_assert_int_ne(access(p, F_OK), 0);
	ck_assert_int_eq(objtest_get_code(os, &keep, false), S0_OK);
	/* New packs are numbered past it. */
	objtest_put1(os, "next", 4);
	ck_assert_uint_eq(count_packs(dir), 2);
	free(p);
	s0__objstore_free(os);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

static void copy_file(const char *from, const char *to)
{
	FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
	ck_assert(a && b);
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, a)) > 0)
		ck_assert_uint_eq(fwrite(buf, 1, n, b), n);
	fclose(a);
	fclose(b);
}

static char *catalog_path(const char *dir, const char *suffix)
{
	char *p;
	ck_assert_int_ge(asprintf(&p, "%s/catalog.db%s", dir, suffix), 0);
	return p;
}

static void remove_catalog(const char *dir)
{
	const char *sfx[] = {"", "-wal", "-shm"};
	for (int i = 0; i < 3; i++) {
		char *p = catalog_path(dir, sfx[i]);
		unlink(p);
		free(p);
	}
}

/* Objects whose pack is durable survive the loss of their catalog rows. */
START_TEST(test_recovery_rebuilds_catalog)
{
	char *dir;
	s0__objstore *os = objtest_open(&dir, 2);
	enum { N = 30 };
	s0__objid ids[N];
	static uint8_t data[N][5000];
	for (int i = 0; i < N; i++) {
		if (i == 10) { /* an old catalog: objects 10.. are not in it */
			s0__objstore_free(os);
			char *db = catalog_path(dir, ""), *old = catalog_path(dir, ".old");
			copy_file(db, old);
			free(db);
			free(old);
			os = objtest_reopen(dir, 2);
		}
		objtest_fill(data[i], sizeof data[i], 300 + (uint64_t)i);
		ids[i] = objtest_put1(os, data[i], sizeof data[i]);
	}
	s0__objstore_free(os);
	/* Roll the catalog back (as if its last commits were lost). */
	remove_catalog(dir);
	char *db = catalog_path(dir, ""), *old = catalog_path(dir, ".old");
	ck_assert_int_eq(rename(old, db), 0);
	os = objtest_reopen(dir, 2);
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(objtest_get_code(os, &ids[i], false), S0_OK);
	s0__objstore_free(os);
	/* A torn record at the end of the last pack is skipped. */
	char *path;
	uint64_t off, len;
	os = objtest_reopen(dir, 2);
	ck_assert_int_eq(s0__objdir_locate(s0__objstore_backend(os), &ids[N - 1], &path, &off, &len,
	                                   NULL),
	                 S0_OK);
	s0__objstore_free(os);
	FILE *f = fopen(path, "ab");
	fwrite("S0R1\x80\x00\x00\x00torn record", 1, 20, f);
	fclose(f);
	/* Lose the whole catalog: opening with the wrong key finds nothing but
	 * destroys nothing; the right key recovers everything. */
	remove_catalog(dir);
	os = objtest_reopen(dir, 9);
	ck_assert_int_eq(objtest_get_code(os, &ids[0], false), S0_ENOTFOUND);
	s0__objstore_free(os);
	remove_catalog(dir);
	os = objtest_reopen(dir, 2);
	for (int i = 0; i < N; i++) {
		uint8_t back[5000];
		size_t n;
		s0__objctx *cx;
		ck_assert_int_eq(s0__objstore_ctx_new(os, &cx, NULL), S0_OK);
		ck_assert_int_eq(s0__objstore_get(os, cx, &ids[i], back, sizeof back, &n, NULL), S0_OK);
		ck_assert_mem_eq(back, data[i], sizeof back);
		s0__objctx_free(cx);
	}
	s0__objstore_usage_info u;
	ck_assert_int_eq(s0__objstore_usage(os, &u, NULL), S0_OK);
	ck_assert_uint_eq(u.objects, N);
	s0__objstore_free(os);
	free(path);
	free(db);
	free(old);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

static void snapshot_catalog(const char *dir, const char *tag, bool restore)
{
	const char *sfx[] = {"", "-wal"};
	for (int i = 0; i < 2; i++) {
		char *live = catalog_path(dir, sfx[i]), *copy = NULL;
		ck_assert_int_ge(asprintf(&copy, "%s%s", live, tag), 0);
		if (restore) {
			unlink(live);
			if (access(copy, F_OK) == 0)
				ck_assert_int_eq(rename(copy, live), 0);
		} else if (access(live, F_OK) == 0) {
			copy_file(live, copy);
		}
		free(live);
		free(copy);
	}
	if (restore) {
		char *shm = catalog_path(dir, "-shm");
		unlink(shm);
		free(shm);
	}
}

/* Two interleaved batches in one pack: the catalog state after B committed
 * but before A did must lead recovery back to A's records. */
START_TEST(test_recovery_interleaved_batches)
{
	char *dir;
	s0__objstore *os = objtest_open(&dir, 4);
	s0__objctx *cx;
	ck_assert_int_eq(s0__objstore_ctx_new(os, &cx, NULL), S0_OK);
	objtest_put1(os, "first", 5); /* the pack exists and is indexed */
	s0__objbatch *a, *b;
	s0__objid ida[3], idb[3];
	char buf[64];
	ck_assert_int_eq(s0__objstore_begin(os, &a, NULL), S0_OK);
	ck_assert_int_eq(s0__objstore_begin(os, &b, NULL), S0_OK);
	for (int i = 0; i < 3; i++) {
		snprintf(buf, sizeof buf, "batch A object %d", i);
		ck_assert_int_eq(s0__objstore_put(os, cx, a, buf, strlen(buf), &ida[i], NULL), S0_OK);
		snprintf(buf, sizeof buf, "batch B object %d", i);
		ck_assert_int_eq(s0__objstore_put(os, cx, b, buf, strlen(buf), &idb[i], NULL), S0_OK);
	}
	ck_assert_int_eq(s0__objstore_commit(os, b, NULL), S0_OK);
	snapshot_catalog(dir, ".snap", false); /* B indexed, A not yet */
	ck_assert_int_eq(s0__objstore_commit(os, a, NULL), S0_OK);
	s0__objctx_free(cx);
	s0__objstore_free(os);
	snapshot_catalog(dir, ".snap", true); /* as if A's catalog commit was lost */
	os = objtest_reopen(dir, 4);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(objtest_get_code(os, &ida[i], false), S0_OK);
		ck_assert_int_eq(objtest_get_code(os, &idb[i], false), S0_OK);
	}
	s0__objstore_free(os);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

typedef struct putter {
	s0__objstore *os;
	s0__objbatch *b;
	int base;
	s0__objid ids[200];
} putter;

static void *put_thread(void *arg)
{
	putter *p = arg;
	s0__objctx *cx;
	uint8_t buf[3000];
	if (s0__objstore_ctx_new(p->os, &cx, NULL) < 0)
		return NULL;
	for (int i = 0; i < 200; i++) {
		objtest_fill(buf, sizeof buf, (uint64_t)(p->base + i % 150));
		if (s0__objstore_put(p->os, cx, p->b, buf, sizeof buf, &p->ids[i], NULL) < 0)
			abort();
	}
	s0__objctx_free(cx);
	return NULL;
}

START_TEST(test_concurrent_puts_one_batch)
{
	char *dir;
	s0__objstore *os = objtest_open(&dir, 9);
	s0__objbatch *b;
	ck_assert_int_eq(s0__objstore_begin(os, &b, NULL), S0_OK);
	putter p[2] = {{os, b, 0, {{{0}}}}, {os, b, 100, {{{0}}}}};
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, put_thread, &p[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ck_assert_int_eq(s0__objstore_commit(os, b, NULL), S0_OK);
	s0__objstore_counters c;
	s0__objstore_counters_get(os, &c);
	ck_assert_uint_eq(c.objects_written, 250); /* seeds 0..249 */
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 200; i++)
			ck_assert_int_eq(objtest_get_code(os, &p[k].ids[i], false), S0_OK);
	s0__objstore_free(os);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

Suite *s0_objstore_backend_suite(void)
{
	Suite *s = suite_create(objenv_name("store"));
	TCase *tc = tcase_create("common");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_plaintext_never_stored);
	tcase_add_test(tc, test_concurrent_puts_one_batch);
	suite_add_tcase(s, tc);
	if (objenv_is("pack")) {
		tc = tcase_create("pack");
		tcase_set_timeout(tc, 60);
		tcase_add_test(tc, test_flip_truncate_delete);
		tcase_add_test(tc, test_delete_and_compact);
		tcase_add_test(tc, test_garbage_pack_removed);
		tcase_add_test(tc, test_recovery_rebuilds_catalog);
		tcase_add_test(tc, test_recovery_interleaved_batches);
		suite_add_tcase(s, tc);
	} else if (objenv_is("s3")) {
		suite_add_tcase(s, objtest_s3_tcase());
	} else {
		suite_add_tcase(s, objtest_files_tcase());
	}
	suite_add_tcase(s, objtest_choice_tcase());
	return s;
}
