/*
 * Crash tests: run blk_crasher (a separate program, fork + exec; this test
 * process starts no threads) with S0_CRASH_AT at every step of publish, of
 * the object store backend's batch commit (pack or files: objenv.h), of GC
 * and of pack compaction; each must
 * die there by SIGKILL. Then blk_crasher verify reopens the store: every
 * recorded generation reads back exactly, GC leaves exactly the live
 * objects, and the store keeps working.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blktest.h"
#include "objenv.h"
#include "check_main.h"
#include "crashrig.h"

/* The crash points, with the backend they belong to (NULL: every one). */
static const struct {
	const char *point, *backend;
} all_points[] = {
	{"publish.fenced", NULL},
	{"publish.chunks_stored", NULL},
	{"publish.pages_stored", NULL},
	{"objects.pack_written", "pack"},
	{"objects.pack_synced", "pack"},
	{"objects.catalog_committed", "pack"},
	{"objects.files_written", "files"},
	{"objects.files_synced", "files"},
	{"objects.files_renamed", "files"},
	{"objects.files_committed", "files"},
	{"objects.s3_written", "s3"},
	{"objects.s3_put", "s3"},
	{"objects.s3_committed", "s3"},
	{"publish.visible", NULL},
	{"gc.listed", NULL},
	{"gc.marked", NULL},
	{"objects.deleted", NULL},
	{"gc.swept", NULL},
	{"objects.compact_written", "pack"},
	{"objects.compact_switched", "pack"},
	{"gc.done", NULL},
};

/* The points of the backend under test. */
static const char *points[sizeof all_points / sizeof *all_points];
static int n_points;

static void select_points(void)
{
	n_points = 0;
	for (size_t i = 0; i < sizeof all_points / sizeof *all_points; i++)
		if (!all_points[i].backend || objenv_is(all_points[i].backend))
			points[n_points++] = all_points[i].point;
}

static const s0_crashrig rig = {"S0_BLK_CRASHER", "blk_crasher"};

/* Run the crasher; returns the raw wait status. */
static int spawn(const char *mode, const char *dir, long seed, int steps, const char *crash_at)
{
	char seed_s[32], steps_s[16];
	snprintf(seed_s, sizeof seed_s, "%ld", seed);
	snprintf(steps_s, sizeof steps_s, "%d", steps);
	const char *args[] = {mode, dir, seed_s, steps_s, NULL};
	return s0_crashrig_run(&rig, crash_at, args);
}

static void crash_and_verify(const char *point, int nth, long seed, int steps)
{
	char at[96];
	snprintf(at, sizeof at, "%s:%d", point, nth);
	char *dir = s0_test_tmpdir("crash");
	s0_crashrig_assert_killed(spawn("run", dir, seed, steps, at), at);
	char what[160];
	snprintf(what, sizeof what, "verify after a crash at %s (seed %ld)", at, seed);
	s0_crashrig_assert_exited(spawn("verify", dir, seed, steps, NULL), 0, what);
	s0_test_rmrf(dir);
	free(dir);
}

START_TEST(test_crash_points)
{
	const char *s = getenv("S0_TEST_SEED");
	long seed = s && *s ? atol(s) : 4242;
	long rounds = s0_test_iterations(1);
	for (long r = 0; r < rounds; r++) {
		/* The first occurrence, then later ones (compaction is rarer). */
		bool rare = strstr(points[_i], "compact") != NULL;
		int nth = rare ? 1 + (int)(r % 3) : 1 + (int)(r % 4) * 2;
		int steps = 28 * nth * (rare ? 2 : 1);
		crash_and_verify(points[_i], nth, seed + r, steps < 190 ? steps : 190);
	}
}
END_TEST

START_TEST(test_no_crash_baseline)
{
	char *dir = s0_test_tmpdir("crash");
	s0_crashrig_assert_exited(spawn("run", dir, 7, 24, NULL), 0, "run without a crash point");
	s0_crashrig_assert_exited(spawn("verify", dir, 7, 24, NULL), 0, "verify without a crash");
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

Suite *s0_bstore_crash_suite(void)
{
	Suite *s = suite_create(objenv_name("bstore_crash"));
	TCase *tc = tcase_create("crash");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_no_crash_baseline);
	select_points();
	tcase_add_loop_test(tc, test_crash_points, 0, n_points);
	suite_add_tcase(s, tc);
	return s;
}
