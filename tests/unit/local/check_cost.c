/*
 * Growth and cost properties (docs/behaviours.md COST-01..COST-04) through the
 * storage and per-runtime counters of s0_local_inspect(): chunks stored by
 * a pause, chunks fetched after a resume, object bytes written and read,
 * stored bytes before and after s0_local_gc(). No wall-clock time is
 * asserted (timings belong to bench/). COST-05 (memory images) belongs to
 * the checkpoint issue.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "lt.h"
#include "suites.h"

#define CHUNK (64 * 1024)

/* Incompressible bytes from a seed. */
static void *noise(size_t len, uint32_t seed)
{
	unsigned char *p = malloc(len);
	uint64_t x = 0x9e3779b97f4a7c15ull ^ seed;
	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)x;
	}
	return p;
}

static void write_noise(lt *t, const char *id, const char *path, size_t len, uint32_t seed)
{
	void *d = noise(len, seed);
	lt_write_bytes(t, id, path, d, len);
	free(d);
}

static bool noise_is(lt *t, const char *id, const char *path, size_t len, uint32_t seed)
{
	size_t n = 0;
	char *got = lt_read(t, id, path, &n);
	void *want = noise(len, seed);
	bool ok = n == len && !memcmp(got, want, len);
	free(want);
	free(got);
	return ok;
}

static double stored_by_pause(lt *t, const char *id, const char *counter)
{
	double before = lt_inum(t, NULL, counter);
	lt_pause(t, id);
	return lt_inum(t, NULL, counter) - before;
}

static void build(lt *t, const char *name, uint64_t size)
{
	s0_template_options o = S0_TEMPLATE_OPTIONS_INIT;
	o.size_bytes = size;
	LT_OK(s0_local_template_build(t->local, name, NULL, &o, &e_));
}

/* COST-01: a pause publishes only the blocks written since the last
 * committed generation, whatever the RootFS size. */
START_TEST(cost01_pause_publishes_only_dirty_blocks)
{
	LT_ROW("COST-01");
	lt t;
	lt_open(&t, NULL);
	build(&t, "small", 256u << 20);
	build(&t, "big", 4ull << 30);
	double delta[2][2];
	const char *tmpl[] = {"small", "big"};
	for (int s = 0; s < 2; s++) {
		char *id = lt_claim(&t, tmpl[s], NULL);
		lt_pause(&t, id); /* the first pause commits the claim's own state */
		lt_resume(&t, id);
		write_noise(&t, id, "/workspace/k4", 4 * CHUNK, 1);
		delta[s][0] = stored_by_pause(&t, id, "storage.chunks_stored");
		lt_resume(&t, id);
		write_noise(&t, id, "/workspace/k32", 32 * CHUNK, 2);
		delta[s][1] = stored_by_pause(&t, id, "storage.chunks_stored");
		free(id);
	}
	for (int s = 0; s < 2; s++) {
		ck_assert_double_ge(delta[s][0], 4);
		ck_assert_double_le(delta[s][0], 4 + 8); /* plus a few metadata chunks */
		ck_assert_double_ge(delta[s][1], 32);
		ck_assert_double_le(delta[s][1], 32 + 8);
		ck_assert_double_le(delta[s][1] - delta[s][0], 28 + 4);
	}
	/* 16x the RootFS, the same publication */
	ck_assert_double_le(delta[1][1] - delta[0][1], 4);
	ck_assert_double_ge(delta[1][1] - delta[0][1], -4);
	lt_close(&t);
}
END_TEST

static double runtime_fetched(lt *t, const char *id)
{
	cJSON *j = lt_inspect(t, id);
	cJSON *rt = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "node"), "runtimes"),
	                               0);
	double v = lt_num(rt, "chunks_fetched");
	cJSON_Delete(j);
	return v;
}

/* COST-02: resume attaches lazily: right after it only the readiness
 * proof's blocks were fetched; reading a file fetches its blocks then
 * (from the object store, in a process that did not publish them). */
START_TEST(cost02_resume_fetches_on_first_read)
{
	LT_ROW("COST-02");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	size_t len = 10u << 20;
	write_noise(&t, id, "/workspace/ten.bin", len, 3);
	lt_pause(&t, id);
	/* a new process: the pausing one kept what it published in its chunk
	 * cache (a resume on the same node reads that), this one has only the
	 * object store */
	lt_reopen(&t);
	lt_resume(&t, id);
	double at_resume = runtime_fetched(&t, id);
	ck_assert_double_lt(at_resume, 16); /* superblock, group descriptors, root… */
	ck_assert(noise_is(&t, id, "/workspace/ten.bin", len, 3));
	double after = runtime_fetched(&t, id);
	ck_assert_double_ge(after - at_resume, (double)len / CHUNK);
	ck_assert_double_le(after - at_resume, (double)len / CHUNK + 8);
	free(id);
	lt_close(&t);
}
END_TEST

/* COST-03: object-store bytes written by a pause and read after a resume
 * do not grow with total RootFS size (8x apart, equal dirty/read sets). */
START_TEST(cost03_no_work_proportional_to_rootfs_size)
{
	LT_ROW("COST-03");
	lt t;
	lt_open(&t, NULL);
	build(&t, "small", 256u << 20);
	build(&t, "big", 2ull << 30);
	const char *tmpl[] = {"small", "big"};
	double wrote[2], read[2];
	for (int s = 0; s < 2; s++) {
		char *id = lt_claim(&t, tmpl[s], NULL);
		lt_pause(&t, id);
		lt_resume(&t, id);
		write_noise(&t, id, "/workspace/set.bin", 1u << 20, 4);
		wrote[s] = stored_by_pause(&t, id, "storage.object_bytes_written");
		double r0 = lt_inum(&t, NULL, "storage.object_bytes_read");
		lt_resume(&t, id);
		ck_assert(noise_is(&t, id, "/workspace/set.bin", 1u << 20, 4));
		read[s] = lt_inum(&t, NULL, "storage.object_bytes_read") - r0;
		LT_OK(s0_sandbox_delete(t.c, id, &e_));
		free(id);
	}
	ck_assert_double_ge(wrote[0], 1u << 20);
	ck_assert_double_le(wrote[1] - wrote[0], 4 * CHUNK);
	ck_assert_double_ge(wrote[1] - wrote[0], -4.0 * CHUNK);
	ck_assert_double_le(read[1] - read[0], 4 * CHUNK);
	ck_assert_double_ge(read[1] - read[0], -4.0 * CHUNK);
	ck_assert_double_le(read[1], (1u << 20) + 16 * CHUNK);
	lt_close(&t);
}
END_TEST

/* COST-04: cycles grow storage by the changed blocks only; GC keeps what
 * heads, snapshots, forks and in-flight publications need, and frees
 * what only a deleted sandbox needed. */
START_TEST(cost04_growth_and_gc)
{
	LT_ROW("COST-04");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_pause(&t, id);
	enum { N = 6 };
	size_t per = 256u << 10;
	for (int i = 0; i < N; i++) {
		lt_resume(&t, id);
		char path[64];
		snprintf(path, sizeof path, "/workspace/c%d.bin", i);
		write_noise(&t, id, path, per, 10 + (uint32_t)i);
		double before = lt_inum(&t, NULL, "storage.stored_bytes");
		lt_pause(&t, id);
		double grew = lt_inum(&t, NULL, "storage.stored_bytes") - before;
		ck_assert_double_ge(grew, per);
		ck_assert_double_le(grew, per + 6 * CHUNK);
	}
	/* a snapshot and a fork keep the data; the source goes */
	s0_snapshot_info *snap = NULL;
	LT_OK(s0_snapshot_create(t.c, id, NULL, NULL, 0, &snap, &e_));
	s0_sandbox_info *sb = NULL;
	LT_OK(s0_sandbox_fork(t.c, id, NULL, &sb, &e_));
	char *fork = strdup(s0_sandbox_info_id(sb));
	s0_sandbox_info_free(sb);
	LT_OK(s0_sandbox_delete(t.c, id, &e_));
	LT_OK(s0_local_gc(t.local, &e_));
	LT_OK(s0_sandbox_claim(t.c, "default", s0_snapshot_info_id(snap), NULL, &sb, &e_));
	char *from = strdup(s0_sandbox_info_id(sb));
	s0_sandbox_info_free(sb);
	lt_resume(&t, fork);
	for (int i = 0; i < N; i++) {
		char path[64];
		snprintf(path, sizeof path, "/workspace/c%d.bin", i);
		ck_assert(noise_is(&t, from, path, per, 10 + (uint32_t)i));
		ck_assert(noise_is(&t, fork, path, per, 10 + (uint32_t)i));
	}

	/* an in-flight publication survives a collection */
	write_noise(&t, fork, "/workspace/inflight.bin", per, 99);
	LT_OK(s0_local_fault_arm(t.local, "meta_store@commit", S0_FAULT_HOLD, 0, 0, &e_));
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_pause(t.c, fork, S0_BOOL_UNSET, &lr, &e_));
	s0_lifecycle_result_free(lr);
	lt_quiesce(&t);
	LT_OK(s0_local_gc(t.local, &e_));
	LT_OK(s0_local_restart_manager(t.local, &e_)); /* in-memory pins gone too */
	LT_OK(s0_local_gc(t.local, &e_));
	LT_OK(s0_local_fault_release(t.local, "meta_store@commit", &e_));
	lt_quiesce(&t);
	lt_resume(&t, fork);
	ck_assert(noise_is(&t, fork, "/workspace/inflight.bin", per, 99));

	/* blocks unique to a deleted sandbox are freed */
	char *lone = lt_claim(&t, NULL, NULL);
	write_noise(&t, lone, "/workspace/unique.bin", 2u << 20, 7);
	lt_pause(&t, lone);
	double with = lt_inum(&t, NULL, "storage.stored_bytes");
	LT_OK(s0_sandbox_delete(t.c, lone, &e_));
	LT_OK(s0_local_gc(t.local, &e_));
	double without = lt_inum(&t, NULL, "storage.stored_bytes");
	ck_assert_double_ge(with - without, 2u << 20);
	ck_assert(noise_is(&t, from, "/workspace/c0.bin", per, 10));

	/* and so are those of a publication whose pause a delete superseded */
	free(lone);
	lone = lt_claim(&t, NULL, NULL);
	write_noise(&t, lone, "/workspace/unique.bin", 2u << 20, 8);
	LT_OK(s0_local_fault_arm(t.local, "meta_store@commit", S0_FAULT_HOLD, 0, 0, &e_));
	LT_OK(s0_sandbox_pause(t.c, lone, S0_BOOL_UNSET, &lr, &e_));
	s0_lifecycle_result_free(lr);
	lt_quiesce(&t);
	with = lt_inum(&t, NULL, "storage.stored_bytes");
	LT_OK(s0_sandbox_delete(t.c, lone, &e_));
	LT_OK(s0_local_fault_release(t.local, "meta_store@commit", &e_));
	lt_quiesce(&t);
	LT_OK(s0_local_gc(t.local, &e_));
	without = lt_inum(&t, NULL, "storage.stored_bytes");
	ck_assert_double_ge(with - without, 2u << 20);
	free(lone);
	s0_snapshot_info_free(snap);
	free(from);
	free(fork);
	free(id);
	lt_close(&t);
}
END_TEST

Suite *s0_local_cost_suite(void)
{
	Suite *s = suite_create("local-cost");
	TCase *tc = tcase_create("cost");
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, cost01_pause_publishes_only_dirty_blocks);
	tcase_add_test(tc, cost02_resume_fetches_on_first_read);
	tcase_add_test(tc, cost03_no_work_proportional_to_rootfs_size);
	tcase_add_test(tc, cost04_growth_and_gc);
	suite_add_tcase(s, tc);
	return s;
}
