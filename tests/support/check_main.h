/*
 * Shared runner for check suites: runs every suite given, prints check's
 * closing line, returns the process exit status. CK_FORK defaults to yes so
 * a crash stays inside its test.
 */
#ifndef S0_CHECK_MAIN_H
#define S0_CHECK_MAIN_H

#include <check.h>

typedef Suite *(*s0_suite_fn)(void);

int s0_test_run_suites(const s0_suite_fn *suites, int n);

/* Iteration counts for randomised and long tests: the environment's
 * S0_TEST_ITERATIONS, or def (multiplied by 20 when S0_LONG_TESTS=1). */
long s0_test_iterations(long def);

/* A fresh temporary directory (mkdtemp under $TMPDIR or /tmp); caller frees. */
char *s0_test_tmpdir(const char *tag);
/* rm -rf of a test directory. */
void s0_test_rmrf(const char *path);

#define S0_TEST_MAIN(...)                                                    \
	int main(void)                                                           \
	{                                                                        \
		static const s0_suite_fn suites_[] = {__VA_ARGS__};                  \
		return s0_test_run_suites(suites_, (int)(sizeof suites_ / sizeof suites_[0])); \
	}

#endif
