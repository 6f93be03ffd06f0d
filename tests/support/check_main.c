#include "check_main.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int s0_test_run_suites(const s0_suite_fn *suites, int n)
{
	setenv("CK_FORK", getenv("CK_FORK") ? getenv("CK_FORK") : "yes", 0);
	SRunner *sr = srunner_create(suites[0]());
	for (int i = 1; i < n; i++)
		srunner_add_suite(sr, suites[i]());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

long s0_test_iterations(long def)
{
	const char *v = getenv("S0_TEST_ITERATIONS");
	if (v && atol(v) > 0)
		return atol(v);
	const char *l = getenv("S0_LONG_TESTS");
	if (l && !strcmp(l, "1"))
		return def * 20;
	return def;
}

char *s0_test_tmpdir(const char *tag)
{
	const char *base = getenv("TMPDIR");
	char *p = NULL;
	if (asprintf(&p, "%s/s0-%s-XXXXXX", base && *base ? base : "/tmp", tag) < 0)
		return NULL;
	if (!mkdtemp(p)) {
		free(p);
		return NULL;
	}
	return p;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void s0_test_rmrf(const char *path)
{
	if (path)
		nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}
