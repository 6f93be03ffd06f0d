/*
 * The per-test fixture of the unit-cli suites: a fresh temporary home the
 * s0 runs' environment points into (cli_harness.h h_env_reset), paths in
 * it, and the exit-status assertion the suites share. Not thread-safe: one
 * test at a time per process, as check runs them.
 */
#ifndef S0_CLI_FIXTURE_H
#define S0_CLI_FIXTURE_H

#include "cli_harness.h"

/* A NULL-terminated argv of string literals. */
#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

/* The test's home directory (owned by the fixture), NULL between tests. */
extern char *h_home;

/* For tcase_add_checked_fixture: make h_home (asserts) and reset the
 * environment to it; remove it and its contents afterwards. */
void h_home_setup(void);
void h_home_teardown(void);

/* "<h_home>/<rest>" (the caller frees it). */
char *h_path_in(const char *rest);

/* Assert that run r exited with want; the message shows its output. */
void h_expect_exit(const cli_run *r, int want);

/* Run `s0 <args…>` into transcript t (a variable in scope), assert its exit
 * status is want, free the run. */
#define H_RUN(want, ...)                                                               \
	do {                                                                           \
		cli_run r_ = t_cmd(t, A(__VA_ARGS__));                                 \
		h_expect_exit(&r_, want);                                              \
		h_run_free(&r_);                                                       \
	} while (0)

#endif
