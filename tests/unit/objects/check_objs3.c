/* The S3 backend (objects/s3/) against a real S3 server (scripts/test s3):
 * invisible batches and a second node reading through the bucket, packs
 * (ranged reads, read-ahead, a flipped byte, a missing pack, an upload
 * failing mid-way, GC of packs), refused and missing credentials (never in a message), an
 * unreachable endpoint, the bounded read cache, URL errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "local/objects/backends.h"
#include "local/objects/s3/objs3.h"
#include "objenv.h"
#include "objtest.h"

/* Open the store at url with local dir dir (key byte 1); the error code,
 * the store in *out on success, the message in msg (cap bytes). */
static int open_url(const char *url, const char *dir, s0__objstore **out, char *msg, size_t cap)
{
	uint8_t key[32];
	memset(key, 1, sizeof key);
	s0_error *err = NULL;
	*out = NULL;
	int rc = s0__objstore_open_backend(url, dir, key, NULL, out, &err);
	if (msg)
		snprintf(msg, cap, "%s: %s", err ? s0_error_reason(err) : "",
		         err ? s0_error_message(err) : "");
	s0_error_free(err);
	return rc;
}

/* objenv_s3_url(dir), asserted (the s3 part sets S0_TEST_S3_URL). */
static char *s3_url(const char *dir)
{
	char *url = objenv_s3_url(dir);
	ck_assert_msg(url, "S0_TEST_S3_URL is unset (scripts/test s3 sets it)");
	return url;
}

/* A second local dir beside dir (another node's). */
static char *node_b_dir(const char *dir)
{
	char *b;
	ck_assert_int_ge(asprintf(&b, "%s/node-b", dir), 0);
	return b;
}

START_TEST(test_s3_batch_invisible_then_other_node_reads)
{
	char *dir;
	s0__objstore *a = objtest_open(&dir, 1);
	char *url = s3_url(dir), *bdir = node_b_dir(dir), msg[512];
	s0__objstore *b;
	ck_assert_msg(open_url(url, bdir, &b, msg, sizeof msg) == S0_OK, "%s", msg);
	char data[5000];
	objtest_fill(data, sizeof data, 3);
	s0__objctx *cx;
	s0__objbatch *bt;
	s0__objid id;
	ck_assert_int_eq(s0__objstore_ctx_new(a, &cx, NULL), S0_OK);
	ck_assert_int_eq(s0__objstore_begin(a, &bt, NULL), S0_OK);
	ck_assert_int_eq(s0__objstore_put(a, cx, bt, data, sizeof data, &id, NULL), S0_OK);
	bool have = true;
	ck_assert_int_eq(s0__objstore_has(b, NULL, &id, &have, NULL), S0_OK);
	ck_assert(!have); /* not in the bucket before the commit */
	ck_assert_int_eq(objtest_get_code(b, &id, true), S0_ENOTFOUND);
	ck_assert_int_eq(s0__objstore_commit(a, bt, NULL), S0_OK);
	/* node B has no cache entry: it reads through the bucket */
	char out[5000];
	size_t n = 0;
	ck_assert_int_eq(s0__objstore_get(b, cx, &id, out, sizeof out, &n, NULL), S0_OK);
	ck_assert_uint_eq(n, sizeof data);
	ck_assert_mem_eq(out, data, n);
	ck_assert_uint_gt(s0__objs3_cache_bytes(s0__objstore_backend(b)), 0);
	s0__objstore_usage_info u;
	ck_assert_int_eq(s0__objstore_usage(b, &u, NULL), S0_OK);
	ck_assert_uint_eq(u.objects, 1);
	/* an aborted batch never reaches the bucket */
	ck_assert_int_eq(s0__objstore_begin(a, &bt, NULL), S0_OK);
	data[0] ^= 1;
	ck_assert_int_eq(s0__objstore_put(a, cx, bt, data, sizeof data, &id, NULL), S0_OK);
	s0__objstore_abort(a, bt);
	ck_assert_int_eq(s0__objstore_has(b, NULL, &id, &have, NULL), S0_OK);
	ck_assert(!have);
	s0__objctx_free(cx);
	s0__objstore_free(b);
	s0__objstore_free(a);
	s0_test_rmrf(dir);
	free(bdir);
	free(url);
	free(dir);
}
END_TEST

/* n objects of len bytes in one batch (one commit); ids into ids. */
static void put_batch(s0__objstore *os, s0__objid *ids, int n, size_t len, uint64_t seed)
{
	s0__objctx *cx;
	s0__objbatch *bt;
	char *buf = malloc(len);
	ck_assert_int_eq(s0__objstore_ctx_new(os, &cx, NULL), S0_OK);
	ck_assert_int_eq(s0__objstore_begin(os, &bt, NULL), S0_OK);
	for (int i = 0; i < n; i++) {
		for (size_t j = 0; j < len; j++) /* incompressible: sealed ~ len */
			buf[j] = (char)(rand() ^ (int)seed);
		ck_assert_int_eq(s0__objstore_put(os, cx, bt, buf, len, &ids[i], NULL), S0_OK);
	}
	ck_assert_int_eq(s0__objstore_commit(os, bt, NULL), S0_OK);
	s0__objctx_free(cx);
	free(buf);
}

/* Keys below the store's prefix + sub. */
static uint64_t keys(s0__objstore *os, const char *sub)
{
	uint64_t n = 0;
	ck_assert_int_eq(s0__objs3_count_keys(s0__objstore_backend(os), sub, &n, NULL), S0_OK);
	return n;
}

/* A get's code and message. */
static int get_msg(s0__objstore *os, const s0__objid *id, char *msg, size_t cap)
{
	s0__objctx *cx;
	ck_assert_int_eq(s0__objstore_ctx_new(os, &cx, NULL), S0_OK);
	void *data = NULL;
	size_t len = 0;
	s0_error *err = NULL;
	int rc = s0__objstore_get_alloc(os, cx, id, &data, &len, &err);
	snprintf(msg, cap, "%s: %s", err ? s0_error_reason(err) : "",
	         err ? s0_error_message(err) : "");
	s0_error_free(err);
	free(data);
	s0__objctx_free(cx);
	return rc;
}

/* A batch's objects share one pack; another node reads the pack's first
 * 64 KiB with its index (ids[0..2] enter its cache), then one object past
 * them with a ranged GET, and the records after it enter its cache too
 * (read-ahead). */
START_TEST(test_s3_pack_ranged_reads_and_readahead)
{
	char *dir;
	s0__objstore *a = objtest_open(&dir, 1);
	char *url = s3_url(dir), *bdir = node_b_dir(dir), msg[512];
	enum { N = 8, LEN = 20000 };
	s0__objid ids[N];
	put_batch(a, ids, N, LEN, 1);
	ck_assert_uint_eq(keys(a, "p/"), 1);
	ck_assert_uint_eq(keys(a, "x/"), 1);
	s0__objstore *b;
	ck_assert_msg(open_url(url, bdir, &b, msg, sizeof msg) == S0_OK, "%s", msg);
	ck_assert_int_eq(get_msg(b, &ids[5], msg, sizeof msg), S0_OK);
	/* the head with the index, the records after ids[5] with its GET */
	ck_assert_uint_ge(s0__objs3_cache_bytes(s0__objstore_backend(b)), (N - 2) * (uint64_t)LEN);
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(get_msg(b, &ids[i], msg, sizeof msg), S0_OK);
	s0__objstore_counters c;
	s0__objstore_counters_get(b, &c);
	ck_assert_uint_eq(c.objects_read, N + 1); /* ids[5] twice */
	/* a second batch of the same bytes stores nothing on the node that
	 * knows them */
	s0__objstore_usage_info u;
	ck_assert_int_eq(s0__objstore_usage(b, &u, NULL), S0_OK);
	ck_assert_uint_eq(u.objects, N);
	s0__objstore_free(b);
	s0__objstore_free(a);
	s0_test_rmrf(dir);
	free(bdir);
	free(url);
	free(dir);
}
END_TEST

/* A node that never read the store finds objects in every pack: the
 * newest first, a few indexes at a time, then older ones. */
START_TEST(test_s3_other_node_finds_every_pack)
{
	char *dir;
	s0__objstore *a = objtest_open(&dir, 1);
	char *url = s3_url(dir), *bdir = node_b_dir(dir), msg[512];
	enum { PACKS = 7 };
	s0__objid ids[PACKS][2];
	for (int i = 0; i < PACKS; i++)
		put_batch(a, ids[i], 2, 500, (uint64_t)i);
	ck_assert_uint_eq(keys(a, "x/"), PACKS);
	s0__objstore *b;
	ck_assert_msg(open_url(url, bdir, &b, msg, sizeof msg) == S0_OK, "%s", msg);
	ck_assert_int_eq(get_msg(b, &ids[PACKS - 1][1], msg, sizeof msg), S0_OK);
	ck_assert_int_eq(get_msg(b, &ids[0][0], msg, sizeof msg), S0_OK);
	for (int i = 0; i < PACKS; i++)
		ck_assert_msg(get_msg(b, &ids[i][1], msg, sizeof msg) == S0_OK, "%d: %s", i, msg);
	s0__objstore_usage_info u;
	ck_assert_int_eq(s0__objstore_usage(b, &u, NULL), S0_OK);
	ck_assert_uint_eq(u.objects, 2 * PACKS);
	s0__objid absent;
	memset(&absent, 0x5a, sizeof absent);
	ck_assert_int_eq(get_msg(b, &absent, msg, sizeof msg), S0_ENOTFOUND);
	ck_assert_msg(strstr(msg, "object_missing"), "%s", msg);
	s0__objstore_free(b);
	s0__objstore_free(a);
	s0_test_rmrf(dir);
	free(bdir);
	free(url);
	free(dir);
}
END_TEST

/* A flipped byte in a pack (sealed bytes or a record header), or another
 * object's bytes in a record, reads S0_ECORRUPT, never wrong bytes; the
 * pack's other objects still read. */
START_TEST(test_s3_pack_flipped_byte_reads_corrupt)
{
	char *dir;
	s0__objstore *a = objtest_open(&dir, 1);
	char *url = s3_url(dir), *bdir = node_b_dir(dir), msg[512];
	enum { N = 4, LEN = 3000 };
	s0__objid ids[N];
	put_batch(a, ids, N, LEN, 2);
	void *be = s0__objstore_backend(a);
	char *key;
	uint64_t off, len;
	s0__buf pack = S0__BUF_INIT;
	long st;
	ck_assert_int_eq(s0__objs3_locate(be, &ids[1], &key, &off, &len, NULL), S0_OK);
	ck_assert_int_eq(s0__objs3_raw(be, "GET", key, NULL, 0, &pack, &st, NULL), S0_OK);
	ck_assert_int_eq(st, 200);
	ck_assert_uint_ge(pack.len, off + len);
	pack.data[off + len / 2] ^= 0x10; /* inside id 1's sealed bytes */
	uint64_t off3, len3;
	char *key3;
	ck_assert_int_eq(s0__objs3_locate(be, &ids[3], &key3, &off3, &len3, NULL), S0_OK);
	ck_assert_str_eq(key, key3);
	pack.data[off3 - 20] ^= 0x01; /* inside id 3's record header (its id) */
	/* id 0's record holds id 2's sealed bytes (same length: incompressible) */
	uint64_t off0, len0, off2, len2;
	char *k0, *k2;
	ck_assert_int_eq(s0__objs3_locate(be, &ids[0], &k0, &off0, &len0, NULL), S0_OK);
	ck_assert_int_eq(s0__objs3_locate(be, &ids[2], &k2, &off2, &len2, NULL), S0_OK);
	ck_assert_uint_eq(len0, len2);
	memcpy(pack.data + off0, pack.data + off2, len2);
	free(k0);
	free(k2);
	ck_assert_int_eq(s0__objs3_raw(be, "PUT", key, pack.data, pack.len, NULL, &st, NULL),
	                 S0_OK);
	ck_assert_int_eq(st, 200);
	s0__objstore *b; /* a node without cache entries */
	ck_assert_msg(open_url(url, bdir, &b, msg, sizeof msg) == S0_OK, "%s", msg);
	ck_assert_int_eq(get_msg(b, &ids[1], msg, sizeof msg), S0_ECORRUPT);
	ck_assert_int_eq(get_msg(b, &ids[3], msg, sizeof msg), S0_ECORRUPT);
	ck_assert_msg(strstr(msg, "object_corrupt") && strstr(msg, key), "%s", msg);
	ck_assert_int_eq(get_msg(b, &ids[0], msg, sizeof msg), S0_ECORRUPT);
	ck_assert_int_eq(get_msg(b, &ids[2], msg, sizeof msg), S0_OK);
	s0__buf_free(&pack);
	free(key);
	free(key3);
	s0__objstore_free(b);
	s0__objstore_free(a);
	s0_test_rmrf(dir);
	free(bdir);
	free(url);
	free(dir);
}
END_TEST

/* A pack gone from the bucket is a clear error naming it. */
START_TEST(test_s3_pack_missing_is_clear_error)
{
	char *dir;
	s0__objstore *a = objtest_open(&dir, 1);
	char *url = s3_url(dir), *bdir = node_b_dir(dir), msg[512];
	s0__objid ids[2];
	put_batch(a, ids, 2, 1000, 3);
	char *key;
	uint64_t off, len;
	long st;
	void *be = s0__objstore_backend(a);
	ck_assert_int_eq(s0__objs3_locate(be, &ids[0], &key, &off, &len, NULL), S0_OK);
	ck_assert_int_eq(s0__objs3_raw(be, "DELETE", key, NULL, 0, NULL, &st, NULL), S0_OK);
	s0__objstore *b;
	ck_assert_msg(open_url(url, bdir, &b, msg, sizeof msg) == S0_OK, "%s", msg);
	ck_assert_int_eq(get_msg(b, &ids[0], msg, sizeof msg), S0_ENOTFOUND);
	ck_assert_msg(strstr(msg, "object_missing") && strstr(msg, key) && strstr(msg, "missing"),
	              "%s", msg);
	free(key);
	s0__objstore_free(b);
	s0__objstore_free(a);
	s0_test_rmrf(dir);
	free(bdir);
	free(url);
	free(dir);
}
END_TEST

/* A commit whose pack upload fails mid-way returns the error: none of its
 * objects is visible on this node or another, no pack without its index
 * is left; the same batch then commits. Round 0 fails the commit's own
 * PUT (the first pack was streamed while the puts went on), round 1 the
 * streamed one, round 2 aborts after a pack was streamed. */
START_TEST(test_s3_pack_upload_fails_midway)
{
	char *dir;
	s0__objstore *a = objtest_open(&dir, 1);
	char *url = s3_url(dir), *bdir = node_b_dir(dir), msg[512];
	void *be = s0__objstore_backend(a);
	enum { N = 80, LEN = 65536 }; /* 5 MiB: two packs */
	s0__objid ids[N];
	char *buf = malloc(LEN);
	s0__objctx *cx;
	s0__objbatch *bt;
	ck_assert_int_eq(s0__objstore_ctx_new(a, &cx, NULL), S0_OK);
	for (int round = 0; round < 4; round++) {
		srand(7);
		s0__objs3_fail_after(be, round == 0 ? 1 : round == 1 ? 0 : -1);
		ck_assert_int_eq(s0__objstore_begin(a, &bt, NULL), S0_OK);
		for (int i = 0; i < N; i++) {
			for (size_t j = 0; j < LEN; j++)
				buf[j] = (char)rand();
			ck_assert_int_eq(s0__objstore_put(a, cx, bt, buf, LEN, &ids[i], NULL), S0_OK);
		}
		if (round == 2) {
			s0__objstore_abort(a, bt);
		} else {
			s0_error *err = NULL;
			int rc = s0__objstore_commit(a, bt, &err);
			if (round == 3) {
				ck_assert_int_eq(rc, S0_OK);
				break;
			}
			ck_assert_int_eq(rc, S0_EUNAVAILABLE);
			s0_error_free(err);
		}
		bool have = true;
		ck_assert_int_eq(s0__objstore_has(a, NULL, &ids[0], &have, NULL), S0_OK);
		ck_assert(!have);
		ck_assert_int_eq(objtest_get_code(a, &ids[0], true), S0_ENOTFOUND);
		ck_assert_uint_eq(keys(a, "p/"), 0); /* the pack PUT was deleted */
		ck_assert_uint_eq(keys(a, "x/"), 0);
		s0__objstore *b;
		ck_assert_msg(open_url(url, bdir, &b, msg, sizeof msg) == S0_OK, "%s", msg);
		s0__objstore_usage_info u;
		ck_assert_int_eq(s0__objstore_usage(b, &u, NULL), S0_OK);
		ck_assert_uint_eq(u.objects, 0);
		ck_assert_int_eq(objtest_get_code(b, &ids[N - 1], true), S0_ENOTFOUND);
		s0__objstore_free(b);
	}
	ck_assert_uint_eq(keys(a, "p/"), 2);
	ck_assert_uint_eq(keys(a, "x/"), 2);
	s0__objstore *b;
	ck_assert_msg(open_url(url, bdir, &b, msg, sizeof msg) == S0_OK, "%s", msg);
	for (int i = 0; i < N; i += 7)
		ck_assert_int_eq(objtest_get_code(b, &ids[i], true), S0_OK);
	s0__objstore_free(b);
	s0__objctx_free(cx);
	free(buf);
	s0__objstore_free(a);
	s0_test_rmrf(dir);
	free(bdir);
	free(url);
	free(dir);
}
END_TEST

/* A crash during a commit leaves a pack without its index and the pack's
 * mark in upload/: the next open deletes that pack; a marked pack whose
 * index was PUT is kept (GC's to judge). */
START_TEST(test_s3_interrupted_commit_pack_removed_at_open)
{
	char *dir;
	s0__objstore *a = objtest_open(&dir, 1);
	void *be = s0__objstore_backend(a);
	s0__objid ids[1];
	put_batch(a, ids, 1, 100, 6);
	char *kept;
	uint64_t off, len;
	long st;
	ck_assert_int_eq(s0__objs3_locate(be, &ids[0], &kept, &off, &len, NULL), S0_OK);
	ck_assert_int_eq(s0__objs3_raw(be, "PUT", "p/0000000000000abc", "S0PK", 4, NULL, &st, NULL),
	                 S0_OK);
	ck_assert_int_eq(st, 200);
	ck_assert_uint_eq(keys(a, "p/"), 2);
	s0__objstore_free(a);
	char mark[4096];
	snprintf(mark, sizeof mark, "%s/upload/7.0000000000000abc", dir);
	FILE *f = fopen(mark, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	snprintf(mark, sizeof mark, "%s/upload/7.%s", dir, kept + 2);
	f = fopen(mark, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	a = objtest_reopen(dir, 1);
	ck_assert_uint_eq(keys(a, "p/"), 1);
	ck_assert_int_eq(objtest_get_code(a, &ids[0], true), S0_OK);
	ck_assert_int_eq(access(mark, F_OK), -1); /* settled */
	s0__objstore_free(a);
	free(kept);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

/* GC of packs: a pack stays while one of its objects is live and leaves
 * the bucket with its index once none is; a deleted id stored again
 * reads back. */
START_TEST(test_s3_pack_gc)
{
	char *dir;
	s0__objstore *a = objtest_open(&dir, 1);
	enum { N = 4 };
	s0__objid one[N], two[N];
	put_batch(a, one, N, 2000, 4);
	put_batch(a, two, N, 2000, 5);
	ck_assert_uint_eq(keys(a, "p/"), 2);
	uint64_t gone = 0, freed = 0;
	ck_assert_int_eq(s0__objstore_delete(a, one, N - 1, &gone, &freed, NULL), S0_OK);
	ck_assert_uint_eq(gone, N - 1);
	ck_assert_uint_gt(freed, (N - 1) * 2000u);
	ck_assert_uint_eq(keys(a, "p/"), 2); /* one[N-1] keeps its pack */
	ck_assert_int_eq(objtest_get_code(a, &one[0], true), S0_ENOTFOUND);
	ck_assert_int_eq(objtest_get_code(a, &one[N - 1], true), S0_OK);
	ck_assert_int_eq(s0__objstore_delete(a, &one[N - 1], 1, &gone, NULL, NULL), S0_OK);
	ck_assert_uint_eq(keys(a, "p/"), 1);
	ck_assert_uint_eq(keys(a, "x/"), 1);
	s0__objstore_usage_info u;
	ck_assert_int_eq(s0__objstore_usage(a, &u, NULL), S0_OK);
	ck_assert_uint_eq(u.objects, N);
	ck_assert_int_eq(s0__objstore_maintain(a, NULL), S0_OK);
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(objtest_get_code(a, &two[i], true), S0_OK);
	ck_assert_int_eq(s0__objstore_delete(a, two, N, &gone, NULL, NULL), S0_OK);
	ck_assert_uint_eq(keys(a, "p/"), 0);
	ck_assert_uint_eq(keys(a, "x/"), 0);
	/* reopened (catalog kept), nothing comes back */
	s0__objstore_free(a);
	a = objtest_reopen(dir, 1);
	ck_assert_int_eq(s0__objstore_usage(a, &u, NULL), S0_OK);
	ck_assert_uint_eq(u.objects, 0);
	s0__objstore_free(a);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

/* Another node's store on the bucket and prefix of dir's store (its own
 * local dir dir/sub), with gc_grace_s=grace (-1: the test URL's). */
static s0__objstore *node(const char *dir, const char *sub, int grace)
{
	char *url = s3_url(dir), *ndir, *full, msg[512];
	ck_assert_int_ge(asprintf(&ndir, "%s/%s", dir, sub), 0);
	if (grace >= 0)
		ck_assert_int_ge(asprintf(&full, "%s&gc_grace_s=%d", url, grace), 0);
	else
		full = strdup(url);
	s0__objstore *os;
	ck_assert_msg(open_url(full, ndir, &os, msg, sizeof msg) == S0_OK, "%s", msg);
	free(full);
	free(ndir);
	free(url);
	return os;
}

/* Put data into a new batch of os (dedup through has()); the batch. */
static s0__objbatch *put_one(s0__objstore *os, const void *data, size_t len, s0__objid *id,
                             bool *stored)
{
	s0__objctx *cx;
	s0__objbatch *bt;
	ck_assert_int_eq(s0__objstore_ctx_new(os, &cx, NULL), S0_OK);
	ck_assert_int_eq(s0__objstore_begin(os, &bt, NULL), S0_OK);
	s0__objstore_counters c0, c1;
	s0__objstore_counters_get(os, &c0);
	ck_assert_int_eq(s0__objstore_put(os, cx, bt, data, len, id, NULL), S0_OK);
	s0__objstore_counters_get(os, &c1);
	*stored = c1.puts_deduped == c0.puts_deduped;
	s0__objctx_free(cx);
	return bt;
}

/* Node A's GC deletes an object node B knows (its pack leaves the bucket):
 * B's next batch reads A's tombstone before has() trusts its catalog, so
 * B stores the object again and a third, fresh node reads every object
 * of B's generation. */
START_TEST(test_s3_gc_on_one_node_seen_by_another)
{
	char *dir;
	s0__objstore *a = objtest_open(&dir, 1);
	s0__objstore *b = node(dir, "node-b", -1);
	char data[3000];
	objtest_fill(data, sizeof data, 41);
	s0__objid id = objtest_put1(a, data, sizeof data);
	ck_assert_int_eq(objtest_get_code(b, &id, true), S0_OK); /* B learns it */
	uint64_t gone = 0;
	ck_assert_int_eq(s0__objstore_delete(a, &id, 1, &gone, NULL, NULL), S0_OK);
	ck_assert_uint_eq(gone, 1);
	ck_assert_uint_eq(keys(a, "p/"), 0); /* A's GC deleted the pack */
	ck_assert_uint_eq(keys(a, "d/"), 1); /* after its tombstone */
	bool stored = false;
	s0__objid again;
	s0__objbatch *bt = put_one(b, data, sizeof data, &again, &stored);
	ck_assert(s0__objid_eq(&again, &id));
	ck_assert_msg(stored, "node B deduplicated against a deleted object");
	ck_assert_int_eq(s0__objstore_commit(b, bt, NULL), S0_OK);
	s0__objstore *c = node(dir, "node-c", -1);
	ck_assert_int_eq(objtest_get_code(c, &id, true), S0_OK);
	s0__objstore_free(c);
	s0__objstore_free(b);
	s0__objstore_free(a);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

/* The race: B's batch reuses the object (has() true), then A's GC deletes
 * it, then B commits: the commit fails retryably (S0_EUNAVAILABLE) and
 * names the object; the retry stores it and a fresh node reads it. */
START_TEST(test_s3_gc_during_commit_fails_it_retryably)
{
	char *dir;
	s0__objstore *a = objtest_open(&dir, 1);
	s0__objstore *b = node(dir, "node-b", -1);
	char data[3000];
	objtest_fill(data, sizeof data, 42);
	s0__objid id = objtest_put1(a, data, sizeof data);
	ck_assert_int_eq(objtest_get_code(b, &id, true), S0_OK);
	bool stored = true;
	s0__objid again;
	s0__objbatch *bt = put_one(b, data, sizeof data, &again, &stored);
	ck_assert(!stored); /* reused: A has not deleted it yet */
	uint64_t gone = 0;
	ck_assert_int_eq(s0__objstore_delete(a, &id, 1, &gone, NULL, NULL), S0_OK);
	ck_assert_uint_eq(gone, 1);
	s0_error *err = NULL;
	ck_assert_int_eq(s0__objstore_commit(b, bt, &err), S0_EUNAVAILABLE);
	ck_assert_str_eq(s0_error_reason(err), "object_store");
	ck_assert_ptr_nonnull(strstr(s0_error_message(err), "deleted by garbage collection"));
	s0_error_free(err);
	bt = put_one(b, data, sizeof data, &again, &stored);
	ck_assert(stored);
	ck_assert_int_eq(s0__objstore_commit(b, bt, NULL), S0_OK);
	s0__objstore *c = node(dir, "node-c", -1);
	ck_assert_int_eq(objtest_get_code(c, &id, true), S0_OK);
	s0__objstore_free(c);
	s0__objstore_free(b);
	s0__objstore_free(a);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

/* The GC grace: objects of a pack younger than gc_grace_s are not deleted
 * (another node may not have published the generation naming them yet);
 * a bad gc_grace_s is a clear URL error. */
START_TEST(test_s3_gc_spares_young_packs)
{
	char *dir;
	s0__objstore *a = objtest_open(&dir, 1);
	s0__objstore *g = node(dir, "node-g", 3600);
	char data[3000];
	objtest_fill(data, sizeof data, 43);
	s0__objid id = objtest_put1(g, data, sizeof data);
	uint64_t gone = 7;
	ck_assert_int_eq(s0__objstore_delete(g, &id, 1, &gone, NULL, NULL), S0_OK);
	ck_assert_uint_eq(gone, 0);
	ck_assert_uint_eq(keys(g, "p/"), 1);
	ck_assert_uint_eq(keys(g, "d/"), 0);
	ck_assert_int_eq(objtest_get_code(g, &id, true), S0_OK);
	/* a node without grace deletes it */
	ck_assert_int_eq(objtest_get_code(a, &id, true), S0_OK);
	ck_assert_int_eq(s0__objstore_delete(a, &id, 1, &gone, NULL, NULL), S0_OK);
	ck_assert_uint_eq(gone, 1);
	ck_assert_uint_eq(keys(a, "p/"), 0);
	s0__objstore_free(g);
	char *url = s3_url(dir), *bad, msg[512];
	ck_assert_int_ge(asprintf(&bad, "%s&gc_grace_s=soon", url), 0);
	s0__objstore *x;
	ck_assert_int_eq(open_url(bad, dir, &x, msg, sizeof msg), S0_EINVAL);
	ck_assert_ptr_nonnull(strstr(msg, "gc_grace_s"));
	free(bad);
	free(url);
	s0__objstore_free(a);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

static int count_cb(const s0__objid *id, uint64_t sealed, void *payload)
{
	(void)id;
	(void)sealed;
	(*(uint64_t *)payload)++;
	return 0;
}

/* GC listing then delete, as s0__bstore_gc() calls them. */
static uint64_t gc_delete(s0__objstore *os, const s0__objid *id)
{
	uint64_t n = 0, gone = 9;
	ck_assert_int_eq(s0__objstore_list(os, count_cb, &n, NULL), S0_OK);
	ck_assert_int_eq(s0__objstore_delete(os, id, 1, &gone, NULL, NULL), S0_OK);
	return gone;
}

/* Deletion in two steps with a GC grace (several nodes): the first GC
 * dooms the object (tombstone; has() false everywhere, reads still work),
 * a GC listing more than the grace later deletes it; node B, which reused
 * nothing doomed, stored its own copy, which a fresh node reads after the
 * pack is gone. */
START_TEST(test_s3_gc_two_steps_with_grace)
{
	char *dir;
	s0__objstore *a0 = objtest_open(&dir, 1);
	s0__objstore *a = node(dir, "node-a", 60), *b = node(dir, "node-b", 60);
	char data[3000];
	objtest_fill(data, sizeof data, 44);
	s0__objid id = objtest_put1(a, data, sizeof data);
	ck_assert_int_eq(objtest_get_code(b, &id, true), S0_OK);
	ck_assert_uint_eq(gc_delete(a, &id), 0); /* young pack: spared */
	ck_assert_uint_eq(keys(a, "d/"), 0);
	s0__objs3_clock_shift(s0__objstore_backend(a), 61000);
	ck_assert_uint_eq(gc_delete(a, &id), 0); /* doomed, not deleted */
	ck_assert_uint_eq(keys(a, "d/"), 1);
	bool have = true;
	ck_assert_int_eq(s0__objstore_has(a, NULL, &id, &have, NULL), S0_OK);
	ck_assert(!have);
	ck_assert_int_eq(objtest_get_code(a, &id, true), S0_OK);
	bool stored = false;
	s0__objid again;
	s0__objbatch *bt = put_one(b, data, sizeof data, &again, &stored);
	ck_assert(stored); /* B read the tombstone at begin */
	ck_assert_int_eq(s0__objstore_commit(b, bt, NULL), S0_OK);
	ck_assert_uint_eq(gc_delete(a, &id), 0); /* the grace has not passed */
	ck_assert_uint_eq(keys(a, "p/"), 2);
	s0__objs3_clock_shift(s0__objstore_backend(a), 61000);
	ck_assert_uint_eq(gc_delete(a, &id), 1);
	ck_assert_uint_eq(keys(a, "p/"), 1); /* A's pack went, B's copy stays */
	s0__objstore *c = node(dir, "node-c", -1);
	ck_assert_int_eq(objtest_get_code(c, &id, true), S0_OK);
	s0__objstore_free(c);
	s0__objstore_free(b);
	s0__objstore_free(a);
	s0__objstore_free(a0);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

START_TEST(test_s3_wrong_secret_fails_clearly)
{
	char *dir = s0_test_tmpdir("objects");
	char *url = s3_url(dir), msg[1024];
	const char *real = getenv("AWS_SECRET_ACCESS_KEY");
	const char *keyid = getenv("AWS_ACCESS_KEY_ID");
	ck_assert_ptr_nonnull(real);
	static const char wrong[] = "wrong-secret-4a1f9c";
	setenv("AWS_SECRET_ACCESS_KEY", wrong, 1);
	s0__objstore *os;
	int rc = open_url(url, dir, &os, msg, sizeof msg);
	ck_assert_msg(rc == S0_EAUTH, "got %d: %s", rc, msg);
	ck_assert_msg(strstr(msg, "object_store_auth") && strstr(msg, "AWS_SECRET_ACCESS_KEY"), "%s",
	              msg);
	ck_assert_msg(!strstr(msg, wrong) && !strstr(msg, keyid), "credentials in: %s", msg);
	/* missing credentials */
	unsetenv("AWS_SECRET_ACCESS_KEY");
	rc = open_url(url, dir, &os, msg, sizeof msg);
	ck_assert_int_eq(rc, S0_EINVAL);
	ck_assert_msg(strstr(msg, "object_store_credentials"), "%s", msg);
	s0_test_rmrf(dir);
	free(url);
	free(dir);
}
END_TEST

START_TEST(test_s3_unreachable_endpoint_is_unavailable)
{
	char *dir = s0_test_tmpdir("objects"), msg[1024];
	s0__objstore *os;
	/* the open succeeds (a node may start during an outage) */
	int rc = open_url("s3://s0test?endpoint=http://127.0.0.1:9", dir, &os, msg, sizeof msg);
	ck_assert_msg(rc == S0_OK, "got %d: %s", rc, msg);
	s0__objid id;
	memset(&id, 7, sizeof id);
	/* has() answers from this node's catalog; a commit needs the endpoint */
	bool have = true;
	ck_assert_int_eq(s0__objstore_has(os, NULL, &id, &have, NULL), S0_OK);
	ck_assert(!have);
	s0__objctx *cx;
	s0__objbatch *bt;
	ck_assert_int_eq(s0__objstore_ctx_new(os, &cx, NULL), S0_OK);
	ck_assert_int_eq(s0__objstore_begin(os, &bt, NULL), S0_OK);
	ck_assert_int_eq(s0__objstore_put(os, cx, bt, "abc", 3, &id, NULL), S0_OK);
	s0__objctx_free(cx);
	s0_error *err = NULL;
	rc = s0__objstore_commit(os, bt, &err);
	snprintf(msg, sizeof msg, "%s: %s", err ? s0_error_reason(err) : "",
	         err ? s0_error_message(err) : "");
	s0_error_free(err);
	ck_assert_msg(rc == S0_EUNAVAILABLE, "got %d: %s", rc, msg);
	ck_assert_msg(strstr(msg, "object_store: ") && strstr(msg, "unreachable"), "%s", msg);
	ck_assert_int_eq(objtest_get_code(os, &id, false), S0_EUNAVAILABLE);
	s0__objstore_free(os);
	ck_assert(!strstr(msg, getenv("AWS_SECRET_ACCESS_KEY")));
	ck_assert(!strstr(msg, getenv("AWS_ACCESS_KEY_ID")));
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

START_TEST(test_s3_cache_is_bounded)
{
	char *dir = s0_test_tmpdir("objects"), msg[512];
	char *base = s3_url(dir), *url;
	ck_assert_int_ge(asprintf(&url, "%s&cache_mb=1", base), 0);
	s0__objstore *os;
	ck_assert_msg(open_url(url, dir, &os, msg, sizeof msg) == S0_OK, "%s", msg);
	enum { N = 40, LEN = 65536 };
	s0__objid ids[N];
	char *buf = malloc(LEN);
	for (int i = 0; i < N; i++) {
		for (size_t j = 0; j < LEN; j++)
			buf[j] = (char)rand();
		ids[i] = objtest_put1(os, buf, LEN);
		ck_assert_uint_le(s0__objs3_cache_bytes(s0__objstore_backend(os)), 1u << 20);
	}
	for (int i = 0; i < N; i++) /* evicted ones come back from the bucket */
		ck_assert_int_eq(objtest_get_code(os, &ids[i], false), S0_OK);
	ck_assert_uint_le(s0__objs3_cache_bytes(s0__objstore_backend(os)), 1u << 20);
	s0__objstore_free(os);
	/* reopened after a clean close, the cache is kept; after a crash it
	 * would be emptied (s3cache.h) */
	ck_assert_msg(open_url(url, dir, &os, msg, sizeof msg) == S0_OK, "%s", msg);
	ck_assert_uint_gt(s0__objs3_cache_bytes(s0__objstore_backend(os)), 0);
	s0__objstore_free(os);
	free(buf);
	s0_test_rmrf(dir);
	free(url);
	free(base);
	free(dir);
}
END_TEST

START_TEST(test_s3_bad_urls_and_reopen_without_url)
{
	char *dir = s0_test_tmpdir("objects"), msg[512];
	static const char *bad[] = {
		"s3://",                                        /* no bucket */
		"s3://b",                                       /* no endpoint */
		"s3://b?endpoint=ftp://127.0.0.1:1",            /* not http */
		"s3://b?endpoint=http://127.0.0.1:1&colour=red", /* unknown parameter */
		"s3://b/a%20b?endpoint=http://127.0.0.1:1",     /* prefix needs escaping */
		"s3://b?endpoint=http://127.0.0.1:1&cache_mb=0",
	};
	s0__objstore *os;
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		int rc = open_url(bad[i], dir, &os, msg, sizeof msg);
		ck_assert_msg(rc == S0_EINVAL && strstr(msg, "object_store_url"), "%s: %d %s", bad[i],
		              rc, msg);
	}
	char *url = s3_url(dir);
	ck_assert_msg(open_url(url, dir, &os, msg, sizeof msg) == S0_OK, "%s", msg);
	s0__objstore_free(os);
	/* the directory records s3: opening it by name alone or with no name
	 * needs the URL; another backend is refused */
	ck_assert_int_eq(open_url(NULL, dir, &os, msg, sizeof msg), S0_EINVAL);
	ck_assert_msg(strstr(msg, "object_store_url_needed"), "%s", msg);
	ck_assert_int_eq(open_url("files", dir, &os, msg, sizeof msg), S0_EINVAL);
	ck_assert_msg(strstr(msg, "object_store_mismatch"), "%s", msg);
	s0_test_rmrf(dir);
	free(url);
	free(dir);
}
END_TEST

TCase *objtest_s3_tcase(void)
{
	TCase *tc = tcase_create("s3");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_s3_batch_invisible_then_other_node_reads);
	tcase_add_test(tc, test_s3_pack_ranged_reads_and_readahead);
	tcase_add_test(tc, test_s3_other_node_finds_every_pack);
	tcase_add_test(tc, test_s3_pack_flipped_byte_reads_corrupt);
	tcase_add_test(tc, test_s3_pack_missing_is_clear_error);
	tcase_add_test(tc, test_s3_pack_upload_fails_midway);
	tcase_add_test(tc, test_s3_interrupted_commit_pack_removed_at_open);
	tcase_add_test(tc, test_s3_pack_gc);
	tcase_add_test(tc, test_s3_gc_on_one_node_seen_by_another);
	tcase_add_test(tc, test_s3_gc_during_commit_fails_it_retryably);
	tcase_add_test(tc, test_s3_gc_spares_young_packs);
	tcase_add_test(tc, test_s3_gc_two_steps_with_grace);
	tcase_add_test(tc, test_s3_wrong_secret_fails_clearly);
	tcase_add_test(tc, test_s3_unreachable_endpoint_is_unavailable);
	tcase_add_test(tc, test_s3_cache_is_bounded);
	tcase_add_test(tc, test_s3_bad_urls_and_reopen_without_url);
	return tc;
}
