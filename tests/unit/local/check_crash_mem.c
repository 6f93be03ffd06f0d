/*
 * The memory crash table (docs/behaviours.md MEM-03, MEM-04, MFB-03..07 at
 * real crash points): like check_crash.c, local_crasher prepares a sandbox
 * and runs a scenario killed at a point, and the test reopens the data
 * directory (a manager and node crash together). Here the scenario is a
 * memory pause ({"memory": true}) killed at each durable step of its
 * capture, or a memory resume killed at each step of its restore; after the
 * reopen the sandbox is paused with a usable image (a memory resume brings
 * back the REPL variable and /tmp file), or rolled back to / running on its
 * committed head with fresh processes, never in between; nothing is
 * pending, GC keeps what the head and the retained image need, the head is
 * e2fsck-clean, and another memory cycle works.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "crashcase.h"
#include "lt.h"
#include "suites.h"

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
	crash_settle(t, id);
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

static void verify_mem_case(lt *t, const crash_state *st, const void *ctx)
{
	verify_mem(t, st, ctx);
}

static void run_mem_case(const mem_case *k)
{
	crash_run_case(k->kind, k->scenario, k->point, verify_mem_case, k);
}

/* MEM-03/04, MFB-03..07 at crash points: one case per loop index. */
START_TEST(mem_kill_at_every_capture_and_restore_step)
{
	const mem_case *k = &mem_cases[_i];
	fprintf(stderr, "[row MEM-04/MFB-06] %s at %s\n", k->scenario, crash_backend_point(k->point));
	long reps = s0_test_iterations(1);
	for (long r = 0; r < reps; r++)
		run_mem_case(k);
}
END_TEST

Suite *s0_local_crash_mem_suite(void)
{
	Suite *s = suite_create("local-crash-mem");
	TCase *tc = tcase_create("crash-mem");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, mem_kill_at_every_capture_and_restore_step, 0,
	                    (int)(sizeof mem_cases / sizeof mem_cases[0]));
	suite_add_tcase(s, tc);
	return s;
}
