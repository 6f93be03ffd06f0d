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
 * The memory capture and restore steps have their table in
 * check_crash_mem.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "crashcase.h"
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

static void verify(lt *t, const char *id, const char *old_head, const crash_case *k)
{
	crash_settle(t, id);
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

static void verify_case(lt *t, const crash_state *st, const void *ctx)
{
	verify(t, st->id, st->head, ctx);
}

static void run_case(const crash_case *k)
{
	crash_run_case(k->kind, k->scenario, k->point, verify_case, k);
}

/* PTX-05, REC-05 (and REC-03 for the crash scenario): one case per loop
 * index; S0_LONG_TESTS repeats every case. */
START_TEST(ptx05_rec05_kill_at_every_crash_point)
{
	const crash_case *k = &cases[_i];
	fprintf(stderr, "[row PTX-05/REC-05] %s at %s\n", k->scenario, crash_backend_point(k->point));
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
	suite_add_tcase(s, tc);
	return s;
}
