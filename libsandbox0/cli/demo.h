/*
 * `s0 demo` (cmd_demo.c): its state, its steps and the helpers the steps
 * share; cmd_demo_gvisor.c holds the steps of the gvisor runtime.
 */
#ifndef S0_CLI_DEMO_H
#define S0_CLI_DEMO_H

#include <limits.h>
#include <sys/types.h>

#include <sandbox0/local.h>

#include "cli.h"

enum { STEP_OK, STEP_SKIPPED, STEP_FAILED };

typedef struct demo {
	cli *c;
	char *data_dir;
	bool temp_dir;
	const char *source;       /* tree the template is built from */
	dev_t source_dev;         /* its filesystem: the copy stays on it */
	char *stage;              /* the copied subset */
	long long tree_files, tree_bytes;
	char sample[PATH_MAX];    /* a file of the tree, path inside the sandbox */
	char sample_host[PATH_MAX];
	s0_local *local;
	s0_client *client;
	char sid[128], fork_id[128], snap_id[128];
	int64_t gen0;
	char rt0[128];
	char bg_ctx[128];         /* the REPL context holding a background job (gvisor) */
	int failures;
	double t0;
	const char *runtime;      /* asked for: --runtime, $S0_RUNTIME or auto */
	bool gvisor;              /* the backend runs real programs in runsc */
} demo;

typedef struct demo_step {
	const char *title;
	int (*run)(demo *d);
} demo_step;

/** One line of narration, indented under the step's title. */
void say(demo *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** "ok"/"FAIL" and @p what; a failure counts in d->failures. */
void expect(demo *d, bool ok, const char *what);
/** Report a library failure @p err (taken) of @p what; returns STEP_FAILED. */
int step_error(demo *d, const char *what, s0_error *err, int rc);
/** One line with the sandbox's status, paused, runtime_id and generation. */
void show(demo *d, const s0_sandbox_info *sb);
/** Wait options printing each observed state (memory: S0_BOOL_*). */
s0_wait_options wait_opts(demo *d, int32_t memory);
/** Whether file @p path of sandbox @p id holds exactly @p len bytes @p want. */
bool file_is(demo *d, const char *id, const char *path, const void *want, size_t len);
/** Whether @p path of sandbox @p id does not exist (stat answers not found). */
bool file_missing(demo *d, const char *id, const char *path);
/** Run @p input in context @p ctx of d->sid; *stdout_out (malloc'd) is its stdout. */
int ctx_run(demo *d, const char *ctx, const char *input, char **stdout_out,
                 s0_error **err);
/** @p text without trailing newlines (edited in place); returns @p text. */
const char *chomp(char *text);
/** Whether `ps` output @p ps lists PID @p pid on a line mentioning `sleep`. */
bool ps_lists(const char *ps, long pid);
/** A new REPL context of d->sid; its id in @p ctx. STEP_OK or STEP_FAILED. */
int new_repl(demo *d, char ctx[128]);

/**
 * Claim a sandbox of template @p tmpl into d->sid, show it as it runs now,
 * record its generation and runtime_id (d->gen0, d->rt0) and expect it
 * running (@p running says why). STEP_OK or STEP_FAILED (reported).
 */
int claim_running(demo *d, const char *tmpl, const char *running);
/** Pause d->sid and wait; show it; expect it paused with no runtime_id
 * (@p paused says what that means here). STEP_OK or STEP_FAILED (reported). */
int pause_shown(demo *d, const char *paused);
/** Resume d->sid and wait; show it; expect the generation one past d->gen0
 * and a runtime_id other than d->rt0. STEP_OK or STEP_FAILED (reported). */
int resume_shown(demo *d);

/* Steps both runtimes share (cmd_demo.c). */
int step_open(demo *d);
int step_memory(demo *d);
int step_snapshot_fork(demo *d);
int step_restore(demo *d);
int step_cleanup(demo *d);

/** The steps on the gvisor runtime after the open (cmd_demo_gvisor.c). */
extern const demo_step demo_gvisor_steps[];
extern const size_t demo_gvisor_nsteps;

#endif
