/*
 * Shared steps of the lifecycle crash tables (check_crash.c, the lifecycle
 * rows; check_crash_mem.c, the memory rows): run local_crasher (a separate
 * program, fork + exec, so the test process must not have started threads)
 * to prepare a sandbox and to run a scenario killed at a crash point, read
 * what it recorded, and let the reopened backend settle.
 */
#ifndef S0_LOCAL_CRASHCASE_H
#define S0_LOCAL_CRASHCASE_H

#include "lt.h"

/* What the crasher recorded (local_crasher.c "prepare"; the run may append
 * ctx). gen: the runtime generation of the prepared (paused) sandbox. */
typedef struct crash_state {
	char id[256], head[256], ctx[256];
	long long gen;
} crash_state;

/* The point to arm on the object store under test (S0_TEST_OBJECT_STORE):
 * the pack backend's commit points as given, the files backend's points of
 * the same stage instead. Returns a static string or point itself. */
const char *crash_backend_point(const char *point);

/* Checks of one reopened case: t is the backend reopened on the crashed
 * data directory, st what the crasher recorded, ctx the caller's row. */
typedef void (*crash_verify_fn)(lt *t, const crash_state *st, const void *ctx);

/* One case in a fresh data directory: run the crasher's prepare of kind,
 * then its scenario with S0_CRASH_AT at point (mapped by
 * crash_backend_point), asserting it dies by SIGKILL there; reopen the
 * directory, call verify, close and remove everything. Asserts (check) on
 * every failure. */
void crash_run_case(const char *kind, const char *scenario, const char *point,
                    crash_verify_fn verify, const void *ctx);

/* Let background work after the reopen finish (on the manual clock) until
 * sandbox id has no operation pending; asserts none is left at all. */
void crash_settle(lt *t, const char *id);

#endif
