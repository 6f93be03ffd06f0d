/* Shared steps of the crash tables (crashcase.h). */
#include "crashcase.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "pgtest.h"
#include "crashrig.h"

/* The object store's commit points of the tables are the pack backend's; a
 * run on the files backend (unit-local-files) kills at its points of the
 * same stage instead: bytes written, bytes synced, first object renamed. */
const char *crash_backend_point(const char *point)
{
	/* ":2" is the second object batch of the run, a memory capture's (the
	 * first is the generation's publish): its whole commit is the point */
	static const char *const map[][2] = {{"objects.pack_written", "objects.files_written"},
	                                     {"objects.pack_synced", "objects.files_synced"},
	                                     {"objects.catalog_committed", "objects.files_renamed"},
	                                     {"objects.pack_written:2", "objects.files_written:2"},
	                                     {"objects.pack_synced:2", "objects.files_synced:2"},
	                                     {"objects.catalog_committed:2",
	                                      "objects.files_committed:2"}};
	/* s3: temp files written, the first group PUT, every PUT answered */
	static const char *const map_s3[][2] = {{"objects.pack_written", "objects.s3_written"},
	                                        {"objects.pack_synced", "objects.s3_put"},
	                                        {"objects.catalog_committed", "objects.s3_committed"},
	                                        {"objects.pack_written:2", "objects.s3_written:2"},
	                                        {"objects.pack_synced:2", "objects.s3_put:2"},
	                                        {"objects.catalog_committed:2",
	                                         "objects.s3_committed:2"}};
	const char *be = getenv("S0_TEST_OBJECT_STORE");
	for (size_t i = 0; be && !strcmp(be, "files") && i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(point, map[i][0]))
			return map[i][1];
	for (size_t i = 0; be && !strcmp(be, "s3") && i < sizeof map_s3 / sizeof map_s3[0]; i++)
		if (!strcmp(point, map_s3[i][0]))
			return map_s3[i][1];
	return point;
}

static const s0_crashrig rig = {"S0_LOCAL_CRASHER", "local_crasher"};

/* Run the crasher; returns the raw wait status. */
static int spawn(const char *mode, const char *dir, const char *state, const char *arg,
                 const char *crash_at)
{
	const char *args[] = {mode, dir, state, arg, NULL};
	return s0_crashrig_run(&rig, crash_at, args);
}

static void read_state(const char *state, crash_state *st)
{
	memset(st, 0, sizeof *st);
	FILE *f = fopen(state, "r");
	ck_assert_ptr_nonnull(f);
	char line[256];
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "id=", 3))
			snprintf(st->id, sizeof st->id, "%s", line + 3);
		else if (!strncmp(line, "head=", 5))
			snprintf(st->head, sizeof st->head, "%s", line + 5);
		else if (!strncmp(line, "ctx=", 4))
			snprintf(st->ctx, sizeof st->ctx, "%s", line + 4);
		else if (!strncmp(line, "gen=", 4))
			st->gen = atoll(line + 4);
	}
	fclose(f);
}

static void crash_run(const char *dir, const char *state, const char *kind,
                      const char *scenario, const char *point, crash_state *st)
{
	char what[64];
	snprintf(what, sizeof what, "prepare %s", kind);
	s0_crashrig_assert_exited(spawn("prepare", dir, state, kind, NULL), 0, what);
	read_state(state, st);
	ck_assert_str_ne(st->id, "");
	ck_assert_str_ne(st->head, "");
	s0_crashrig_assert_killed(spawn("run", dir, state, scenario, point), point);
	read_state(state, st);
}

void crash_settle(lt *t, const char *id)
{
	lt_quiesce(t);
	for (int i = 0; i < 50 && lt_pending_ops(t, id) > 0; i++) {
		lt_advance(t, 200);
		lt_quiesce(t);
	}
	ck_assert_int_eq(lt_pending_ops(t, NULL), 0);
}

void crash_run_case(const char *kind, const char *scenario, const char *point,
                    crash_verify_fn verify, const void *ctx)
{
	char *dir = s0_test_tmpdir("localcrash");
	char *state = NULL;
	ck_assert_int_ge(asprintf(&state, "%s.state", dir), 0);
	crash_state st;
	crash_run(dir, state, kind, scenario, crash_backend_point(point), &st);
	lt t;
	lt_open_dir(&t, dir);
	verify(&t, &st, ctx);
	lt_close(&t);
	s0_test_meta_drop(dir);
	s0_test_rmrf(dir);
	unlink(state);
	free(state);
	free(dir);
}
