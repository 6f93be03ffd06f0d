/*
 * Crash tests of the lifecycle engine (docs/behaviours.md PTX-05 and REC-05 at
 * real crash points, REC-03 for a kill during recovery): local_crasher, a
 * separate program (fork + exec; this test process has started no thread
 * when it forks), prepares a sandbox with a committed file A, then runs a
 * scenario with S0_CRASH_AT=<point> and must die by SIGKILL there. The test
 * then reopens the data directory — a manager and node crash together — and
 * checks:
 *   - the operation completed or rolled back as the product document says:
 *     a pause either kept the old head and the sandbox is not paused, or
 *     advanced the head and the sandbox is paused (PTX-05); deletes finish;
 *   - no sandbox claims a head that is not fully published: the head's
 *     files read back through the client after a resume, and e2fsck -fn of
 *     the head is clean;
 *   - nothing is left pending, GC succeeds and keeps the head readable.
 *
 * The memory table (mem_cases[], MEM-03/MEM-04, MFB-03..07) does the same for
 * a memory pause ({"memory": true}) killed at each durable step of its
 * capture and for a memory resume killed at each step of its restore; after
 * the reopen the sandbox is paused with a usable image (a memory resume
 * brings back the REPL variable and /tmp file), rolled back to or running
 * on its committed head with fresh processes, never in between.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "crashrig.h"
#include "lt.h"
#include "suites.h"

typedef enum outcome {
	ROLLED_BACK, /* running on the old head; the dirty tail B is gone */
	PAUSED_NEW,  /* paused on a new head holding A and B */
	DELETED,     /* 404 */
	PAUSED_OLD,  /* still paused on the old head (a resume that never committed) */
} outcome;

typedef struct crash_case {
	const char *kind;     /* prepare */
	const char *scenario; /* run */
	const char *point;
	outcome want;
} crash_case;

static const crash_case cases[] = {
	{"plain", "pause", "intent-recorded", ROLLED_BACK},
	{"plain", "pause", "publish.fenced", ROLLED_BACK},
	{"plain", "pause", "publish.chunks_stored", ROLLED_BACK},
	{"plain", "pause", "publish.pages_stored", ROLLED_BACK},
	{"plain", "pause", "objects.pack_written", ROLLED_BACK},
	{"plain", "pause", "objects.pack_synced", ROLLED_BACK},
	{"plain", "pause", "objects.catalog_committed", ROLLED_BACK},
	{"plain", "pause", "publish.visible", ROLLED_BACK},
	{"plain", "pause", "published", PAUSED_NEW},
	{"plain", "pause", "committed", PAUSED_NEW},
	/* the last durable step (paused and operation done in one transaction):
	 * what a reopen finds is the finished pause */
	{"plain", "pause", "released", PAUSED_NEW},
	{"ttl", "ttl", "intent-recorded", ROLLED_BACK},
	{"ttl", "ttl", "publish.visible", ROLLED_BACK},
	{"ttl", "ttl", "published", PAUSED_NEW},
	{"ttl", "ttl", "committed", PAUSED_NEW},
	{"ttl", "ttl", "released", PAUSED_NEW},
	{"plain", "delete", "delete-recorded", DELETED},
	{"plain", "delete", "delete-reclaimed", DELETED},
	{"hard", "hard", "delete-recorded", DELETED},
	{"hard", "hard", "delete-reclaimed", DELETED},
	{"plain", "resume", "resume-ready", PAUSED_OLD},
	/* "end": killed right after the resume's running commit; the runtime
	 * goes with the process, so the reopen recovers from the old head */
	{"plain", "resume", "end", ROLLED_BACK},
	{"plain", "crash", "recover-recorded", ROLLED_BACK},
	{"plain", "crash", "recover-released", ROLLED_BACK},
	/* killed right after the recovery's replacement commit: recovered again */
	{"plain", "crash", "end", ROLLED_BACK},
};

/* The object store's commit points above are the pack backend's; a run on
 * the files backend (unit-local-files) kills at its points of the same
 * stage instead: bytes written, bytes synced, first object renamed. */
static const char *backend_point(const char *point)
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
	const char *be = getenv("S0_TEST_OBJECT_STORE");
	for (size_t i = 0; be && !strcmp(be, "files") && i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(point, map[i][0]))
			return map[i][1];
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

/* What the crasher recorded (local_crasher.c "prepare"; ctx may be
 * appended by the run). */
typedef struct crash_state {
	char id[256], head[256], ctx[256];
	long long gen;
} crash_state;

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

/* Prepare kind, run scenario killed at point; st what the crasher recorded. */
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

/* Background work after the reopen, until the sandbox has nothing pending. */
static void settle(lt *t, const char *id)
{
	lt_quiesce(t);
	for (int i = 0; i < 50 && lt_pending_ops(t, id) > 0; i++) {
		lt_advance(t, 200);
		lt_quiesce(t);
	}
	ck_assert_int_eq(lt_pending_ops(t, NULL), 0);
}

static void verify(lt *t, const char *id, const char *old_head, const crash_case *k)
{
	settle(t, id);
	if (k->want == DELETED) {
		s0_sandbox_info *sb = NULL;
		s0_error *err = NULL;
		LT_EXPECT(s0_sandbox_get(t->c, id, &sb, &err), err, S0_ENOTFOUND, NULL);
		ck_assert_int_eq(lt_runtimes_of(t, id), 0);
		LT_OK(s0_local_gc(t->local, &e_));
		return;
	}
	char *head = lt_head(t, id);
	s0_sandbox_info *sb = lt_get(t, id);
	int st = s0_sandbox_info_status(sb);
	bool paused = s0_sandbox_info_paused(sb);
	s0_sandbox_info_free(sb);
	/* PTX-05: old head and not paused, or new head and paused */
	if (!strcmp(head, old_head))
		ck_assert_msg(k->want == ROLLED_BACK || k->want == PAUSED_OLD,
		              "%s@%s: head did not advance", k->scenario, k->point);
	else
		ck_assert_msg(k->want == PAUSED_NEW, "%s@%s: head advanced", k->scenario, k->point);
	switch (k->want) {
	case ROLLED_BACK:
		ck_assert_msg(st == S0_STATUS_RUNNING && !paused, "%s@%s: status %s paused %d",
		              k->scenario, k->point, s0_status_name(st), paused);
		break;
	case PAUSED_NEW:
	case PAUSED_OLD:
		lt_assert_paused(t, id);
		break;
	default:
		break;
	}
	/* the head is fully published: fsck-clean, and readable through the client */
	ck_assert_int_eq(lt_fsck_generation(t, head), 0);
	char *a = lt_gen_cat(t, head, "/workspace/A");
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(a, "committed before the crash");
	free(a);
	char *b = lt_gen_cat(t, head, "/workspace/B");
	ck_assert_int_eq(b != NULL, k->want == PAUSED_NEW);
	free(b);
	LT_OK(s0_local_gc(t->local, &e_));
	if (paused)
		lt_resume(t, id);
	ck_assert(lt_file_is(t, id, "/workspace/A", "committed before the crash"));
	ck_assert_int_eq(lt_stat_rc(t, id, "/workspace/B"),
	                 k->want == PAUSED_NEW ? S0_OK : S0_ENOTFOUND);
	ck_assert_int_eq(lt_runtimes_of(t, id), 1);
	/* and the sandbox keeps working: another full cycle */
	lt_write(t, id, "/workspace/C", "after recovery");
	lt_pause(t, id);
	char *h2 = lt_head(t, id);
	ck_assert_int_eq(lt_fsck_generation(t, h2), 0);
	lt_resume(t, id);
	ck_assert(lt_file_is(t, id, "/workspace/C", "after recovery"));
	free(h2);
	free(head);
}

static void run_case(const crash_case *k)
{
	char *dir = s0_test_tmpdir("localcrash");
	char *state = NULL;
	ck_assert_int_ge(asprintf(&state, "%s.state", dir), 0);
	crash_state st;
	crash_run(dir, state, k->kind, k->scenario, backend_point(k->point), &st);
	lt t;
	lt_open_dir(&t, dir);
	verify(&t, st.id, st.head, k);
	lt_close(&t);
	s0_test_rmrf(dir);
	unlink(state);
	free(state);
	free(dir);
}

/* ---- the memory table ---- */

typedef enum mem_outcome {
	MEM_ROLLED_BACK,     /* running on the old head, fresh processes, no image, B gone */
	MEM_PAUSED_NEW,      /* paused on a new head (A, B) with its image: the REPL is back */
	MEM_PAUSED_OLD,      /* still paused on the old head with its image: the REPL is back */
	MEM_RUNNING_FRESH,   /* running on the old head with fresh processes, image kept */
	MEM_CAPTURE_FAILED,  /* failed, paused true, old head, no image (MFB-07) */
} mem_outcome;

/*
 * Kind "plain" + scenario "mempause": a filesystem-paused sandbox resumes,
 * writes B, starts a REPL (x=42, /tmp/x) and is memory-paused. Kind "mem"
 * (memory-paused with that REPL) + "memresume" / "memfallback": a memory
 * resume, the second with the fault `restore` failing it after its
 * authorisation. Why each outcome:
 *   - up to the operation's `published` record nothing names the new
 *     generation or the image (docs/behaviours.md PTX-05): the runtime died
 *     with the process, so the unpublished pause is superseded by a
 *     recovery from the old head (REC-05) and whatever the capture stored
 *     (pages and chunks written, synced, or even committed as an image) is
 *     unreferenced garbage; no image is retained (MFB-07/08: never claimed
 *     as retention);
 *   - from `published` on the operation holds the generation and the image,
 *     and the reopen finishes commit and release: paused with the image of
 *     that head (MEM-03, MEM-04);
 *   - a restore is authorised and run without any durable record; killed
 *     at `resume-ready` (the target restored, running not yet committed)
 *     the sandbox is still the paused one with its image (PTX-05's "old
 *     head and paused" for a resume that never committed);
 *   - killed at `fallback-recorded` the filesystem-only replacement's
 *     intent is durable (MFB-06): the reopen reclaims the lost target and
 *     starts exactly one replacement from the committed head, at g+2
 *     (MFB-04), with fresh processes (MFB-03);
 *   - killed at "end" of a memory resume or of a fallback (right after
 *     the running commit of the restored target or of the replacement) the
 *     runtime goes with the process: the reopen recovers from the committed
 *     head with fresh processes (REC-05), one generation further;
 *   - in all three running outcomes the image stays retained with its head,
 *     as after any memory resume (MEM-03), until the next pause replaces it;
 *   - a failed capture is recorded (`capture_failed`) before the release:
 *     killed there (the proof held, "end") or at the release's own record
 *     (`released`), the reopen ends the pause `failed` with `paused` true,
 *     `runtime_id` "" and no image, the old head kept; a memory resume
 *     recovers filesystem-only with fresh processes (MFB-07).
 * A restore's authorisation writes nothing durable (the checkpoint engine
 * authorises in memory, then reads the image): there is no point between
 * it and `resume-ready` at which a kill leaves anything else.
 */
typedef struct mem_case {
	const char *kind, *scenario, *point;
	mem_outcome want;
	int gen_plus; /* runtime generation after the reopen: prepare's + this; 0 unchecked */
} mem_case;

static const mem_case mem_cases[] = {
	{"plain", "mempause", "intent-recorded", MEM_ROLLED_BACK, 0},
	{"plain", "mempause", "publish.pages_stored", MEM_ROLLED_BACK, 0},
	{"plain", "mempause", "publish.visible", MEM_ROLLED_BACK, 0},
	{"plain", "mempause", "objects.pack_written:2", MEM_ROLLED_BACK, 0},
	{"plain", "mempause", "objects.pack_synced:2", MEM_ROLLED_BACK, 0},
	{"plain", "mempause", "objects.catalog_committed:2", MEM_ROLLED_BACK, 0},
	{"plain", "mempause", "published", MEM_PAUSED_NEW, 0},
	{"plain", "mempause", "committed", MEM_PAUSED_NEW, 0},
	{"plain", "mempause", "released", MEM_PAUSED_NEW, 0},
	{"mem", "memresume", "resume-ready", MEM_PAUSED_OLD, 0},
	{"mem", "memresume", "end", MEM_RUNNING_FRESH, 2},
	{"mem", "memfallback", "fallback-recorded", MEM_RUNNING_FRESH, 2},
	{"mem", "memfallback", "end", MEM_RUNNING_FRESH, 3},
	{"plain", "capfail-held", "end", MEM_CAPTURE_FAILED, 0},
	{"plain", "capfail", "released", MEM_CAPTURE_FAILED, 0},
};

/* Retained images of a sandbox; the last one's rootfs generation into gen. */
static int retained_images(lt *t, const char *id, char *gen, size_t n)
{
	cJSON *j = lt_inspect(t, NULL);
	const cJSON *arr = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "memory"), "retained_images");
	int count = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, arr)
	{
		if (strcmp(cJSON_GetObjectItem(it, "sandbox_id")->valuestring, id))
			continue;
		count++;
		snprintf(gen, n, "%s", cJSON_GetObjectItem(it, "rootfs_generation")->valuestring);
	}
	cJSON_Delete(j);
	return count;
}

/* Whether the REPL ctx of the crasher is back: variable and /tmp file. */
static bool repl_restored(lt *t, const char *id, const char *ctx)
{
	char *out = NULL;
	s0_error *err = NULL;
	if (s0_context_get(t->c, id, ctx, &out, &err) < 0) {
		s0_error_free(err);
		return false;
	}
	s0_free(out);
	char *v = lt_sh(t, id, ctx, "echo \"x=$x\"", NULL);
	bool ok = !strcmp(v, "x=42");
	free(v);
	return ok && lt_file_is(t, id, "/tmp/x", "kept\n");
}

/* Fresh processes: the REPL ctx and /tmp/x are gone. */
static bool repl_gone(lt *t, const char *id, const char *ctx)
{
	char *out = NULL;
	s0_error *err = NULL;
	int rc = s0_context_get(t->c, id, ctx, &out, &err);
	s0_error_free(err);
	s0_free(out);
	return rc == S0_ENOTFOUND && lt_stat_rc(t, id, "/tmp/x") == S0_ENOTFOUND;
}

static void verify_mem(lt *t, const crash_state *st, const mem_case *k)
{
	const char *id = st->id;
	settle(t, id);
	char *head = lt_head(t, id);
	bool new_head = strcmp(head, st->head) != 0;
	ck_assert_msg(new_head == (k->want == MEM_PAUSED_NEW), "%s@%s: head %s", k->scenario,
	              k->point, new_head ? "advanced" : "did not advance");
	bool paused = k->want == MEM_PAUSED_NEW || k->want == MEM_PAUSED_OLD;
	if (paused) {
		lt_assert_paused(t, id);
	} else if (k->want == MEM_CAPTURE_FAILED) {
		s0_sandbox_info *sb = lt_get(t, id);
		ck_assert_str_eq(s0_status_name(s0_sandbox_info_status(sb)), "failed");
		ck_assert(s0_sandbox_info_paused(sb));
		ck_assert_str_eq(s0_sandbox_info_runtime_id(sb), "");
		s0_sandbox_info_free(sb);
	} else {
		lt_assert_running(t, id);
	}
	/* an image is retained, matching the head, only where one was captured
	 * and committed (kept through a later resume, see above) */
	char img_gen[256] = "";
	bool image = paused || k->want == MEM_RUNNING_FRESH;
	ck_assert_int_eq(retained_images(t, id, img_gen, sizeof img_gen), image);
	if (image)
		ck_assert_str_eq(img_gen, head);
	/* the head is fully published: fsck-clean, A always, B when it advanced */
	ck_assert_int_eq(lt_fsck_generation(t, head), 0);
	char *a = lt_gen_cat(t, head, "/workspace/A");
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(a, "committed before the crash");
	free(a);
	char *b = lt_gen_cat(t, head, "/workspace/B");
	ck_assert_int_eq(b != NULL, new_head);
	free(b);
	/* GC keeps what the head and the retained image need */
	LT_OK(s0_local_gc(t->local, &e_));
	ck_assert_str_ne(st->ctx, "");
	if (k->gen_plus)
		ck_assert_int_eq(lt_generation(t, id), st->gen + k->gen_plus);
	if (paused || k->want == MEM_CAPTURE_FAILED) {
		LT_OK(lt_wait_rc(t, id, false, S0_BOOL_TRUE, &e_));
		lt_assert_running(t, id);
	}
	if (paused)
		ck_assert_msg(repl_restored(t, id, st->ctx), "%s@%s: the image did not restore",
		              k->scenario, k->point);
	else
		ck_assert_msg(repl_gone(t, id, st->ctx), "%s@%s: processes not fresh", k->scenario,
		              k->point);
	ck_assert(lt_file_is(t, id, "/workspace/A", "committed before the crash"));
	ck_assert_int_eq(lt_stat_rc(t, id, "/workspace/B"), new_head ? S0_OK : S0_ENOTFOUND);
	ck_assert_int_eq(lt_runtimes_of(t, id), 1);
	/* and the sandbox keeps working: another memory cycle */
	char *ctx = lt_repl(t, id);
	free(lt_sh(t, id, ctx, "y=7", NULL));
	lt_write(t, id, "/workspace/C", "after recovery");
	LT_OK(lt_wait_rc(t, id, true, S0_BOOL_TRUE, &e_));
	lt_quiesce(t);
	lt_assert_paused(t, id);
	char *h2 = lt_head(t, id);
	ck_assert_int_eq(lt_fsck_generation(t, h2), 0);
	ck_assert_int_eq(retained_images(t, id, img_gen, sizeof img_gen), 1);
	ck_assert_str_eq(img_gen, h2);
	LT_OK(s0_local_gc(t->local, &e_));
	LT_OK(lt_wait_rc(t, id, false, S0_BOOL_TRUE, &e_));
	lt_assert_running(t, id);
	char *y = lt_sh(t, id, ctx, "echo \"y=$y\"", NULL);
	ck_assert_str_eq(y, "y=7");
	ck_assert(lt_file_is(t, id, "/workspace/C", "after recovery"));
	free(y);
	free(ctx);
	free(h2);
	free(head);
}

static void run_mem_case(const mem_case *k)
{
	char *dir = s0_test_tmpdir("localcrash");
	char *state = NULL;
	ck_assert_int_ge(asprintf(&state, "%s.state", dir), 0);
	crash_state st;
	crash_run(dir, state, k->kind, k->scenario, backend_point(k->point), &st);
	lt t;
	lt_open_dir(&t, dir);
	verify_mem(&t, &st, k);
	lt_close(&t);
	s0_test_rmrf(dir);
	unlink(state);
	free(state);
	free(dir);
}

/* MEM-03/04, MFB-03..07 at crash points: one case per loop index. */
START_TEST(mem_kill_at_every_capture_and_restore_step)
{
	const mem_case *k = &mem_cases[_i];
	fprintf(stderr, "[row MEM-04/MFB-06] %s at %s\n", k->scenario, backend_point(k->point));
	long reps = s0_test_iterations(1);
	for (long r = 0; r < reps; r++)
		run_mem_case(k);
}
END_TEST

/* PTX-05, REC-05 (and REC-03 for the crash scenario): one case per loop
 * index; S0_LONG_TESTS repeats every case. */
START_TEST(ptx05_rec05_kill_at_every_crash_point)
{
	const crash_case *k = &cases[_i];
	fprintf(stderr, "[row PTX-05/REC-05] %s at %s\n", k->scenario, backend_point(k->point));
	long reps = s0_test_iterations(1);
	for (long r = 0; r < reps; r++)
		run_case(k);
}
END_TEST

Suite *s0_local_crash_suite(void)
{
	Suite *s = suite_create("local-crash");
	TCase *tc = tcase_create("crash");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, ptx05_rec05_kill_at_every_crash_point, 0,
	                    (int)(sizeof cases / sizeof cases[0]));
	tcase_add_loop_test(tc, mem_kill_at_every_capture_and_restore_step, 0,
	                    (int)(sizeof mem_cases / sizeof mem_cases[0]));
	suite_add_tcase(s, tc);
	return s;
}
