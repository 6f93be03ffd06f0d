/* Object store: codec, keys, ids, idmap, round trips, batches, dedupe. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "local/objects/codec.h"
#include "local/objects/idmap.h"
#include "local/objects/objkey.h"
#include "objenv.h"
#include "objtest.h"

s0__objstore *objtest_open(char **dir_out, uint8_t k)
{
	char *dir = s0_test_tmpdir("objects");
	ck_assert_ptr_nonnull(dir);
	*dir_out = dir;
	return objtest_reopen(dir, k);
}

s0__objstore *objtest_reopen(const char *dir, uint8_t k)
{
	uint8_t key[32];
	memset(key, k, sizeof key);
	s0__objstore *os = NULL;
	s0_error *err = NULL;
	int rc = objenv_open(dir, key, &os, &err);
	ck_assert_msg(rc == S0_OK, "open: %s", err ? s0_error_message(err) : "?");
	return os;
}

void objtest_fill(void *buf, size_t len, uint64_t seed)
{
	static const char *words[] = {"block ", "store ", "object ", "chunk ", "pack ", "zstd ",
	                              "sodium ", "ext4 ", "inode ", "extent "};
	uint8_t *p = buf;
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
	size_t i = 0;
	while (i < len) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		const char *w = words[x % 10];
		size_t wl = strlen(w);
		for (size_t j = 0; j < wl && i < len; j++)
			p[i++] = (uint8_t)w[j];
		if (i < len)
			p[i++] = (uint8_t)('0' + (x >> 20) % 10);
	}
}

s0__objid objtest_put1(s0__objstore *os, const void *data, size_t len)
{
	s0__objctx *cx;
	s0__objbatch *b;
	s0__objid id;
	ck_assert_int_eq(s0__objstore_ctx_new(os, &cx, NULL), S0_OK);
	ck_assert_int_eq(s0__objstore_begin(os, &b, NULL), S0_OK);
	ck_assert_int_eq(s0__objstore_put(os, cx, b, data, len, &id, NULL), S0_OK);
	ck_assert_int_eq(s0__objstore_commit(os, b, NULL), S0_OK);
	s0__objctx_free(cx);
	return id;
}

START_TEST(test_objid_hex)
{
	s0__objid id, back;
	for (int i = 0; i < 32; i++)
		id.b[i] = (uint8_t)(i * 37);
	char hex[S0__OBJID_HEX_BYTES];
	s0__objid_hex(&id, hex);
	ck_assert_int_eq(strlen(hex), 64);
	ck_assert_int_eq(s0__objid_parse(hex, &back, NULL), S0_OK);
	ck_assert(s0__objid_eq(&id, &back));
	s0_error *err = NULL;
	ck_assert_int_eq(s0__objid_parse("abc", &back, &err), S0_EINVAL);
	s0_error_free(err);
	hex[5] = 'g';
	ck_assert_int_eq(s0__objid_parse(hex, &back, NULL), S0_EINVAL);
	ck_assert(!s0__objid_is_zero(&id));
	memset(&id, 0, sizeof id);
	ck_assert(s0__objid_is_zero(&id));
}
END_TEST

START_TEST(test_idmap_model)
{
	s0__idmap m = S0__IDMAP_INIT;
	enum { N = 3000 };
	static uint64_t ref[N]; /* 0 = absent, else value */
	memset(ref, 0, sizeof ref);
	uint64_t x = 12345;
	for (int step = 0; step < 60000; step++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		int k = (int)(x % N);
		s0__objid id = {{0}};
		memcpy(id.b, &k, sizeof k);
		id.b[31] = (uint8_t)(k * 7); /* same low bits for neighbours: collisions */
		id.b[0] = (uint8_t)(k & 3);
		if ((x >> 32) % 3) {
			bool existed;
			ck_assert_int_eq(s0__idmap_put(&m, &id, x | 1, &existed), 0);
			ck_assert(existed == (ref[k] != 0));
			ref[k] = x | 1;
		} else {
			ck_assert(s0__idmap_del(&m, &id) == (ref[k] != 0));
			ref[k] = 0;
		}
		if (step % 5000 == 0) {
			size_t cnt = 0;
			for (int i = 0; i < N; i++) {
				s0__objid q = {{0}};
				memcpy(q.b, &i, sizeof i);
				q.b[31] = (uint8_t)(i * 7);
				q.b[0] = (uint8_t)(i & 3);
				uint64_t v = 0;
				ck_assert(s0__idmap_get(&m, &q, &v) == (ref[i] != 0));
				if (ref[i]) {
					ck_assert_uint_eq(v, ref[i]);
					cnt++;
				}
			}
			ck_assert_uint_eq(cnt, s0__idmap_count(&m));
		}
	}
	s0__idmap_free(&m);
}
END_TEST

START_TEST(test_codec_roundtrip)
{
	uint8_t key[32] = {1, 2, 3};
	s0__objkeys k;
	s0__objkeys_derive(key, &k);
	s0__objctx *cx;
	ck_assert_int_eq(s0__objctx_new(1, &cx, NULL), S0_OK);
	size_t sizes[] = {0, 1, 100, 4096, 65536, 1 << 20};
	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
		size_t n = sizes[i];
		uint8_t *data = malloc(n + 1), *back = malloc(n + 1);
		if (i % 2)
			objtest_fill(data, n, i);
		else
			for (size_t j = 0; j < n; j++)
				data[j] = (uint8_t)rand();
		s0__objid id;
		s0__obj_hash(&k, data, n, &id);
		s0__buf sealed = S0__BUF_INIT;
		ck_assert_int_eq(s0__obj_seal(cx, &k, &id, data, n, &sealed, NULL), S0_OK);
		ck_assert_uint_le(sealed.len, n + S0__OBJ_OVERHEAD);
		size_t got = 99;
		ck_assert_int_eq(s0__obj_open(cx, &k, &id, sealed.data, sealed.len, back, n, &got, NULL),
		                 S0_OK);
		ck_assert_uint_eq(got, n);
		ck_assert(n == 0 || memcmp(data, back, n) == 0);
		/* Every single-byte flip and every truncation fails to open. */
		for (size_t pos = 0; pos < sealed.len; pos += 1 + sealed.len / 64) {
			sealed.data[pos] ^= 0x20;
			s0_error *err = NULL;
			int rc = s0__obj_open(cx, &k, &id, sealed.data, sealed.len, back, n, &got, &err);
			ck_assert_int_eq(rc, S0_ECORRUPT);
			s0_error_free(err);
			sealed.data[pos] ^= 0x20;
		}
		for (size_t cut = 0; cut < sealed.len; cut += 1 + sealed.len / 16)
			ck_assert_int_eq(
				s0__obj_open(cx, &k, &id, sealed.data, cut, back, n, &got, NULL), S0_ECORRUPT);
		/* Moved to another id: fails. */
		s0__objid other = id;
		other.b[3] ^= 1;
		ck_assert_int_eq(s0__obj_open(cx, &k, &other, sealed.data, sealed.len, back, n, &got,
		                              NULL),
		                 S0_ECORRUPT);
		/* Another installation key: fails. */
		uint8_t key2[32] = {9};
		s0__objkeys k2;
		s0__objkeys_derive(key2, &k2);
		ck_assert_int_eq(s0__obj_open(cx, &k2, &id, sealed.data, sealed.len, back, n, &got,
		                              NULL),
		                 S0_ECORRUPT);
		if (n > 1)
			ck_assert_int_eq(s0__obj_open(cx, &k, &id, sealed.data, sealed.len, back, n - 1,
			                              &got, NULL),
			                 S0_EINVAL);
		s0__buf_free(&sealed);
		free(data);
		free(back);
	}
	s0__objctx_free(cx);
}
END_TEST

START_TEST(test_keyed_ids)
{
	uint8_t k1[32] = {1}, k2[32] = {2};
	s0__objkeys a, b;
	s0__objkeys_derive(k1, &a);
	s0__objkeys_derive(k2, &b);
	s0__objid x, y, z;
	s0__obj_hash(&a, "hello", 5, &x);
	s0__obj_hash(&b, "hello", 5, &y);
	s0__obj_hash(&a, "hello", 5, &z);
	ck_assert(!s0__objid_eq(&x, &y));
	ck_assert(s0__objid_eq(&x, &z));
}
END_TEST

START_TEST(test_key_file)
{
	char *dir = s0_test_tmpdir("objkey");
	char *path = NULL;
	ck_assert_int_ge(asprintf(&path, "%s/key", dir), 0);
	uint8_t a[32], b[32];
	bool created = false;
	ck_assert_int_eq(s0__objkey_load_or_create(path, a, &created, NULL), S0_OK);
	ck_assert(created);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(st.st_size, 32);
	ck_assert_int_eq(s0__objkey_load_or_create(path, b, &created, NULL), S0_OK);
	ck_assert(!created);
	ck_assert_mem_eq(a, b, 32);
	chmod(path, 0644);
	s0_error *err = NULL;
	ck_assert_int_eq(s0__objkey_load_or_create(path, b, NULL, &err), S0_EINVAL);
	s0_error_free(err);
	chmod(path, 0600);
	ck_assert_int_eq(truncate(path, 31), 0);
	err = NULL;
	ck_assert_int_eq(s0__objkey_load_or_create(path, b, NULL, &err), S0_ECORRUPT);
	s0_error_free(err);
	free(path);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

START_TEST(test_roundtrip_dedupe)
{
	char *dir;
	s0__objstore *os = objtest_open(&dir, 7);
	s0__objctx *cx;
	ck_assert_int_eq(s0__objstore_ctx_new(os, &cx, NULL), S0_OK);
	enum { N = 40 };
	static uint8_t data[N][8192];
	s0__objid ids[N];
	s0__objbatch *b;
	ck_assert_int_eq(s0__objstore_begin(os, &b, NULL), S0_OK);
	for (int i = 0; i < N; i++) {
		objtest_fill(data[i], sizeof data[i], (uint64_t)i % 30); /* 10 duplicates */
		ck_assert_int_eq(s0__objstore_put(os, cx, b, data[i], sizeof data[i], &ids[i], NULL),
		                 S0_OK);
	}
	/* Not visible before commit. */
	bool have = true;
	ck_assert_int_eq(s0__objstore_has(os, NULL, &ids[0], &have, NULL), S0_OK);
	ck_assert(!have);
	ck_assert_int_eq(s0__objstore_has(os, b, &ids[0], &have, NULL), S0_OK);
	ck_assert(have);
	ck_assert_int_eq(s0__objstore_commit(os, b, NULL), S0_OK);
	s0__objstore_counters c;
	s0__objstore_counters_get(os, &c);
	ck_assert_uint_eq(c.objects_written, 30);
	ck_assert_uint_eq(c.puts_deduped, 10);
	ck_assert_uint_eq(c.batches_committed, 1);
	/* Putting existing content again writes nothing. */
	objtest_put1(os, data[3], sizeof data[3]);
	s0__objstore_counters_get(os, &c);
	ck_assert_uint_eq(c.objects_written, 30);
	ck_assert_uint_eq(c.batches_committed, 1);
	s0__objstore_free(os);
	os = objtest_reopen(dir, 7);
	s0__objctx_free(cx);
	ck_assert_int_eq(s0__objstore_ctx_new(os, &cx, NULL), S0_OK);
	for (int i = 0; i < N; i++) {
		uint8_t back[8192];
		size_t n;
		ck_assert_int_eq(s0__objstore_get(os, cx, &ids[i], back, sizeof back, &n, NULL), S0_OK);
		ck_assert_uint_eq(n, sizeof back);
		ck_assert_mem_eq(back, data[i], n);
	}
	s0__objstore_usage_info u;
	ck_assert_int_eq(s0__objstore_usage(os, &u, NULL), S0_OK);
	ck_assert_uint_eq(u.objects, 30);
	s0__objctx_free(cx);
	s0__objstore_free(os);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

START_TEST(test_abort_and_missing)
{
	char *dir;
	s0__objstore *os = objtest_open(&dir, 1);
	s0__objctx *cx;
	s0__objbatch *b;
	s0__objid id;
	ck_assert_int_eq(s0__objstore_ctx_new(os, &cx, NULL), S0_OK);
	ck_assert_int_eq(s0__objstore_begin(os, &b, NULL), S0_OK);
	ck_assert_int_eq(s0__objstore_put(os, cx, b, "abc", 3, &id, NULL), S0_OK);
	s0__objstore_abort(os, b);
	s0_error *err = NULL;
	char buf[8], hex[S0__OBJID_HEX_BYTES];
	size_t n;
	ck_assert_int_eq(s0__objstore_get(os, cx, &id, buf, sizeof buf, &n, &err), S0_ENOTFOUND);
	s0__objid_hex(&id, hex);
	ck_assert_ptr_nonnull(strstr(s0_error_message(err), hex));
	s0_error_free(err);
	/* Empty batch commits fine; zero-length objects work. */
	ck_assert_int_eq(s0__objstore_begin(os, &b, NULL), S0_OK);
	ck_assert_int_eq(s0__objstore_commit(os, b, NULL), S0_OK);
	s0__objid e = objtest_put1(os, "", 0);
	ck_assert_int_eq(s0__objstore_get(os, cx, &e, buf, sizeof buf, &n, NULL), S0_OK);
	ck_assert_uint_eq(n, 0);
	/* A second opener is refused. */
	uint8_t key[32] = {1};
	s0__objstore *os2 = NULL;
	err = NULL;
	ck_assert_int_eq(objenv_open(dir, key, &os2, &err), S0_ECONFLICT);
	ck_assert_str_eq(s0_error_reason(err), "store_locked");
	s0_error_free(err);
	s0__objctx_free(cx);
	s0__objstore_free(os);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

Suite *s0_objects_suite(void)
{
	Suite *s = suite_create(objenv_name("objects"));
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_objid_hex);
	tcase_add_test(tc, test_idmap_model);
	tcase_add_test(tc, test_codec_roundtrip);
	tcase_add_test(tc, test_keyed_ids);
	tcase_add_test(tc, test_key_file);
	tcase_add_test(tc, test_roundtrip_dedupe);
	tcase_add_test(tc, test_abort_and_missing);
	suite_add_tcase(s, tc);
	return s;
}

S0_TEST_MAIN(s0_objects_suite, s0_objstore_backend_suite)
