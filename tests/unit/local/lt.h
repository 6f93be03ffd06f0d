/*
 * Test support for the lifecycle-engine suites (issue #6): a backend on a
 * fresh data directory with a manual clock, an in-process client, and
 * small helpers over the public client API and s0_local_inspect().
 *
 * Every helper asserts with check (ck_assert), so call them from the test
 * thread only; helper threads use the lt_bg_* functions, which never
 * assert.
 */
#ifndef S0_LT_H
#define S0_LT_H

#include <check.h>
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "sandbox0/local.h"
#include "sandbox0/sandbox0.h"

typedef struct lt {
	char *dir;
	s0_local *local;
	s0_client *c;
	s0_local_options opts;
	bool keep_dir; /* crash tests reuse a directory the crasher made */
	char *meta;    /* the metadata URL of a PostgreSQL run (pgtest.h), or NULL */
} lt;

/* Open a manual-clock backend on a fresh directory (opts nullable). */
/* The runtime of a parametrised run: $S0_TEST_RUNTIME ("sim", "gvisor"), or
 * NULL when unset (the library's default, sim). lt_open() and friends use it
 * when the options name no runtime (docs/behaviours.md "Runtimes"). */
const char *lt_test_runtime(void);
/* The check tag of the test cases that run on every runtime: the
 * registration unit-local-gvisor runs only those (CK_INCLUDE_TAGS). */
#define LT_TAG_RUNTIMES "runtimes"
/* Whether the parametrised run is on the simulated runtime (unset or "sim"). */
bool lt_runtime_is_sim(void);
void lt_open(lt *t, const s0_local_options *opts);
/* Open on an existing directory (manual clock). */
void lt_open_dir(lt *t, const char *dir);
/* Close the backend and client; the directory stays. */
void lt_shutdown(lt *t);
/* Close and reopen on the same directory ("process restart"). */
void lt_reopen(lt *t);
/* Close everything and remove the directory. */
void lt_close(lt *t);

/* ---- sandboxes ---- */

/* Claim (template NULL = "default"); returns the malloc'd id. */
char *lt_claim(lt *t, const char *tmpl, const s0_sandbox_config *cfg);
s0_sandbox_info *lt_get(lt *t, const char *id);
int lt_status(lt *t, const char *id);
int64_t lt_generation(lt *t, const char *id);
/* The current runtime_id (malloc'd, "" while paused). */
char *lt_runtime_id(lt *t, const char *id);
/* pause_and_wait / resume_and_wait with a 60 s virtual budget; assert success. */
void lt_pause(lt *t, const char *id);
void lt_resume(lt *t, const char *id);
/* The same, returning the code (err optional). */
int lt_pause_rc(lt *t, const char *id, s0_error **err);
/* pause_and_wait (pause) or resume_and_wait with wait option memory (S0_BOOL_*). */
int lt_wait_rc(lt *t, const char *id, bool pause, int32_t memory, s0_error **err);
int lt_resume_rc(lt *t, const char *id, s0_error **err);
/* Assert the paused state (status paused, paused true, runtime_id ""). */
void lt_assert_paused(lt *t, const char *id);
/* Assert running with a non-empty runtime_id and paused false. */
void lt_assert_running(lt *t, const char *id);
/* Wait for background work (s0_local_quiesce, 10 s real). */
void lt_quiesce(lt *t);
void lt_advance(lt *t, int64_t ms);

/* ---- files ---- */

void lt_write(lt *t, const char *id, const char *path, const char *text);
void lt_write_bytes(lt *t, const char *id, const char *path, const void *data, size_t len);
/* 1 when the file reads back exactly text. */
bool lt_file_is(lt *t, const char *id, const char *path, const char *text);
/* Read a file (asserts success); malloc'd, NUL-terminated. */
char *lt_read(lt *t, const char *id, const char *path, size_t *len);
/* s0_files_stat's code (S0_OK, S0_ENOTFOUND…). */
int lt_stat_rc(lt *t, const char *id, const char *path);
/* Entries in a directory (asserts the list succeeds). */
size_t lt_list_len(lt *t, const char *id, const char *path);

/* ---- inspection ---- */

/* s0_local_inspect parsed (sandbox_id nullable); free with cJSON_Delete. */
cJSON *lt_inspect(lt *t, const char *sandbox_id);
/* A number at a dotted path ("node.cpu_used_millis"); asserts presence. */
double lt_num(const cJSON *j, const char *path);
/* A string at a dotted path ("sandbox.head"); NULL when absent. */
const char *lt_str(const cJSON *j, const char *path);
/* Shortcut: one number of a fresh inspection. */
double lt_inum(lt *t, const char *sandbox_id, const char *path);
/* The committed head generation of a sandbox (malloc'd). */
char *lt_head(lt *t, const char *id);
/* Runtimes of a sandbox currently on the node. */
int lt_runtimes_of(lt *t, const char *id);
/* Operations (pending) of a sandbox in the inspection. */
int lt_pending_ops(lt *t, const char *id);

/* ---- generations on disk ---- */

/* Export a generation as an ext4 image and run e2fsck -fn: 0 = clean. */
int lt_fsck_generation(lt *t, const char *gen);
/* Read a file of a generation's image through debugfs (malloc'd, NULL if absent). */
char *lt_gen_cat(lt *t, const char *gen, const char *path);

/* A digest (FNV-1a 64) of a generation's exported image. */
uint64_t lt_gen_digest(lt *t, const char *gen);
/* Output of a debugfs request on a generation's image (malloc'd). */
char *lt_gen_debugfs(lt *t, const char *gen, const char *request);
/* Names in a directory of a generation, "." and ".." excluded. */
int lt_gen_dir_entries(lt *t, const char *gen, const char *dir);

/* ---- errors ---- */

/* Assert rc == code and, when reason is non-NULL, the error's reason; frees err. */
void lt_expect_err(int rc, s0_error *err, int code, const char *reason, const char *where);
#define LT_EXPECT(call_rc, err, code, reason)                                  \
	do {                                                                       \
		int rx_ = (call_rc);                                               \
		lt_expect_err(rx_, (err), (code), (reason), #call_rc);             \
		(err) = NULL;                                                      \
	} while (0)
/* Assert success; prints the error otherwise; frees *errp (read after the call). */
void lt_ok(int rc, s0_error **errp, const char *where);
#define LT_OK(call) do { s0_error *e_ = NULL; int r_ = (call); lt_ok(r_, &e_, #call); } while (0)

/* ---- helper threads ---- */

/* A client call run on a helper thread: fn(t, arg) -> code. */
typedef int (*lt_bg_fn)(lt *t, void *arg, s0_error **err);
typedef struct lt_bg {
	pthread_t th;
	lt *t;
	lt_bg_fn fn;
	void *arg;
	int rc;
	s0_error *err;
	volatile int done;
} lt_bg;
void lt_bg_start(lt_bg *b, lt *t, lt_bg_fn fn, void *arg);
/* Join; returns the code (err kept in b->err; free it with lt_bg_free). */
int lt_bg_join(lt_bg *b);
void lt_bg_free(lt_bg *b);
/* Advance the clock by step_ms every few real ms until b is done or max_steps. */
void lt_advance_until_done(lt *t, lt_bg *b, int64_t step_ms, int max_steps);
/* Wait (real time, <= 10 s) until the named fault point has been hit n times. */
void lt_wait_fault_hits(lt *t, const char *name, int64_t n);

/* One raw request through the in-process transport (bodies the public
 * client never sends; body nullable, sent as JSON); returns the HTTP
 * status, *reply (nullable, malloc'd) the body. */
int lt_raw(lt *t, const char *method, const char *path, const char *body, char **reply);

/* A context made from a create body (sandbox0/contexts.h); its id (malloc'd). */
char *lt_context(lt *t, const char *id, const char *body);
/* A REPL context in the sandbox; its id (malloc'd). */
char *lt_repl(lt *t, const char *id);
/* Exec cmd in context ctx; its stdout (malloc'd, one trailing newline cut);
 * err_out (nullable) gets stderr the same way. A REPL keeps running, so
 * read a command's status with `echo $?`. */
char *lt_sh(lt *t, const char *id, const char *ctx, const char *cmd, char **err_out);

/* Real-time pause between polls of an observable condition (never a wait
 * for the engine itself: that is lt_quiesce). */
void lt_nap_ms(int ms);

/* Row id of the behaviour a test covers, printed in the test log. */
#define LT_ROW(id) fprintf(stderr, "[row %s] %s\n", id, __func__)

#endif
