/* Lazy attach and dirty accounting on a 1 GiB RootFS (COST-02-like
 * figures for the carrier): a fresh attach fetches only the chunks the mount
 * and the files read need; a small write dirties a handful of chunks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cartest.h"

#define MiB (1024ull * 1024)

START_TEST(test_lazy_1gib)
{
	ct t;
	ct_open(&t, 1024 * MiB);
	s0__gen_info gi;
	CT_OK(s0__bstore_gen_info(t.env.bs, &t.env.gen, &gi, &err_));
	uint64_t total = gi.size_bytes / gi.chunk_bytes;
	s0__bstore_drop_caches(t.env.bs); /* as after a restart: nothing cached */
	s0__branch *b = NULL;
	CT_OK(carenv_branch(&t.env, &b, &err_));
	s0__carrier *c = ct_attach(&t, b, "lazy");
	s0__branch_counters bc;
	s0__branch_counters_get(b, &bc);
	uint64_t at_mount = bc.chunks_fetched;
	char *p = ct_path(c, "/etc/hostname");
	char *got = ct_get(p, NULL);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, CARENV_HOSTNAME);
	free(got);
	free(p);
	s0__branch_counters_get(b, &bc);
	uint64_t after_read = bc.chunks_fetched;
	s0__branch_counters_get(b, &bc);
	uint64_t dirty_mount = bc.dirty_chunks;

	p = ct_path(c, "/workspace/small.txt");
	char data[4096];
	carenv_fill(data, sizeof data, 9);
	ct_put(p, data, sizeof data);
	free(p);
	CT_OK(s0__carrier_sync(c, &err_));
	s0__branch_counters_get(b, &bc);
	s0__carrier_stats st;
	s0__carrier_stats_get(c, &st);
	printf("lazy 1 GiB: %llu chunks, %llu non-zero; fetched %llu at mount, %llu after a read; "
	       "dirty %llu after mount, %llu after a 4 KiB write + sync; attach %lld us\n",
	       (unsigned long long)total, (unsigned long long)gi.nonzero_chunks,
	       (unsigned long long)at_mount, (unsigned long long)after_read,
	       (unsigned long long)dirty_mount, (unsigned long long)bc.dirty_chunks,
	       (long long)st.attach_us);
	/* a mount and a read touch a few metadata chunks, never the volume */
	ck_assert_uint_le(after_read, 32);
	ck_assert_uint_lt(after_read * 100, total);
	ck_assert_uint_ge(bc.dirty_chunks, 1);
	ck_assert_uint_le(bc.dirty_chunks, 12);
	CT_OK(s0__carrier_detach(c, &err_));
	s0__carrier_free(c);
	got = ct_rootfs_read(b, "/workspace/small.txt", NULL);
	ck_assert_ptr_nonnull(got);
	ck_assert(memcmp(got, data, sizeof data) == 0);
	free(got);
	s0__genid gen;
	CT_OK(s0__branch_publish(b, 0, &gen, &err_));
	s0__branch_counters_get(b, &bc);
	printf("lazy 1 GiB: publish stored %llu chunks\n", (unsigned long long)bc.published_chunks);
	ck_assert_int_eq(ct_fsck(&t, &gen), 0);
	s0__bstore_unref(t.env.bs, &gen);
	s0__branch_free(b);
	ct_close(&t);
}
END_TEST

Suite *carrier_lazy_suite(void)
{
	Suite *s = suite_create("carrier-lazy");
	TCase *tc = tcase_create("lazy");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_lazy_1gib);
	suite_add_tcase(s, tc);
	return s;
}
