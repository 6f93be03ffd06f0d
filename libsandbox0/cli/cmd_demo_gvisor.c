/*
 * `s0 demo` on the gvisor runtime (docs/local-backend.md "Runtime gvisor"):
 * the steps after the open when the backend runs real programs in runsc
 * sandboxes. A sandbox of the default template (the python3 root tree when
 * it was made) runs python3; a file written inside and one written through
 * the files API survive a filesystem-only pause, a background process and
 * /tmp do not; then the memory step (shared with sim), a snapshot, a
 * fork and a restore as on sim.
 */
#include <stdlib.h>
#include <string.h>

#include "demo.h"

/* Run @p cmd in a new REPL context; its stdout without trailing newlines
 * (malloc'd) or NULL after reporting the failure. */
static char *run_once(demo *d, const char *cmd)
{
	char ctx[128], *out = NULL;
	s0_error *err = NULL;
	if (new_repl(d, ctx) != STEP_OK)
		return NULL;
	int rc = ctx_run(d, ctx, cmd, &out, &err);
	s0_context_delete(d->client, d->sid, ctx, NULL);
	if (rc < 0) {
		char *what = xasprintf("exec %s", cmd);
		step_error(d, what, err, rc);
		free(what);
		return NULL;
	}
	chomp(out);
	return out;
}

static int gv_claim(demo *d)
{
	if (claim_running(d, "default",
	                  "running after claim (readiness: a first command really executed)") !=
	    STEP_OK)
		return STEP_FAILED;
	char *k = run_once(d, "uname -sr");
	if (!k)
		return STEP_FAILED;
	say(d, "uname -sr inside -> %s (gVisor's own kernel)", k);
	free(k);
	return STEP_OK;
}

static int gv_python(demo *d)
{
	char *has = run_once(d, "command -v python3 || echo none");
	if (!has)
		return STEP_FAILED;
	bool none = !strcmp(has, "none");
	free(has);
	if (none) {
		say(d, "no python3 in this root tree: make one with scripts/gvisor-python-tree.sh "
		            "/var/cache/libsandbox0/trees/python3 (scripts/demo does, as root)");
		return STEP_SKIPPED;
	}
	static const char prog[] = "import platform, sys\n"
	                           "print(platform.python_implementation(), platform.python_version(),"
	                           " sum(range(10)))\n";
	s0_error *err = NULL;
	int rc = s0_files_write(d->client, d->sid, "/workspace/hello.py", prog, sizeof prog - 1, &err);
	if (rc < 0)
		return step_error(d, "write /workspace/hello.py", err, rc);
	char *out = run_once(d, "python3 /workspace/hello.py");
	if (!out)
		return STEP_FAILED;
	say(d, "wrote /workspace/hello.py through the files API; python3 /workspace/hello.py -> %s",
	         out);
	expect(d, !strncmp(out, "CPython 3.", 10) && strstr(out, " 45"),
	            "python3 ran the script inside the sandbox");
	free(out);
	return STEP_OK;
}

static int gv_write(demo *d)
{
	s0_error *err = NULL;
	int rc;
	if ((rc = s0_files_write(d->client, d->sid, "/workspace/notes.md", "# kept\n", 7, &err)) < 0 ||
	    (rc = s0_files_write(d->client, d->sid, "/tmp/scratch", "scratch", 7, &err)) < 0)
		return step_error(d, "write", err, rc);
	/* the background job lives as long as its REPL context: this one stays
	 * open until the pause ends the generation (deleting a context ends its
	 * process group) */
	char *out = NULL;
	if (new_repl(d, d->bg_ctx) != STEP_OK)
		return STEP_FAILED;
	if ((rc = ctx_run(d, d->bg_ctx, "echo written inside > /workspace/inside.txt; "
	                                "sleep 100000 & echo $!", &out, &err)) < 0)
		return step_error(d, "exec sleep 100000 &", err, rc);
	chomp(out);
	say(d, "wrote /workspace/notes.md and /tmp/scratch through the files API, "
	            "/workspace/inside.txt from a shell inside; `sleep 100000 &` is PID %s",
	         out);
	free(out);
	out = run_once(d, "ps | grep -c 'sleep 10000[0]'");
	if (!out)
		return STEP_FAILED;
	expect(d, !strcmp(out, "1"), "the background sleep runs");
	free(out);
	return STEP_OK;
}

static int gv_pause(demo *d)
{
	if (pause_shown(d, "paused: runsc sandbox, processes, mount and loop device gone; RootFS "
	                   "committed") != STEP_OK)
		return STEP_FAILED;
	expect(d, file_is(d, d->sid, "/workspace/inside.txt", "written inside\n", 15),
	            "while paused, /workspace/inside.txt reads from the committed RootFS");
	return STEP_OK;
}

static int gv_resume(demo *d)
{
	if (resume_shown(d) != STEP_OK)
		return STEP_FAILED;
	char *out = run_once(d, "cat /workspace/notes.md /workspace/inside.txt");
	if (!out)
		return STEP_FAILED;
	expect(d, !strcmp(out, "# kept\nwritten inside"),
	            "both files survived (cat inside the new generation)");
	free(out);
	expect(d, file_missing(d, d->sid, "/tmp/scratch"),
	            "/tmp/scratch is gone (runtime tmpfs, not in the RootFS)");
	out = run_once(d, "ps | grep -c 'sleep 10000[0]'; true");
	if (!out)
		return STEP_FAILED;
	expect(d, !strcmp(out, "0"), "the background sleep is gone (a filesystem-only pause "
	                                  "keeps files, not processes)");
	free(out);
	return STEP_OK;
}

/* The steps after the open (cmd_demo.c runs the open, then these). The
 * memory step is the shared one: a REPL shell's variable, its background
 * job and a /tmp file survive a memory pause and resume (runsc checkpoint
 * and restore, docs/memory-gvisor.md). */
const demo_step demo_gvisor_steps[] = {
	{"open the embedded backend", step_open},
	{"claim a sandbox from \"default\" (a real root tree)", gv_claim},
	{"python3 inside the sandbox", gv_python},
	{"write files, start a background process", gv_write},
	{"pause (filesystem-only)", gv_pause},
	{"resume: files kept, processes gone", gv_resume},
	{"REPL context, memory pause and resume", step_memory},
	{"snapshot, change, fork", step_snapshot_fork},
	{"pause, restore, resume; resume the fork", step_restore},
	{"delete everything", step_cleanup},
};

const size_t demo_gvisor_nsteps = sizeof demo_gvisor_steps / sizeof demo_gvisor_steps[0];
