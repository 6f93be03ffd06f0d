/* The unit-cli per-test fixture (cli_fixture.h). */
#include "cli_fixture.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_main.h"

char *h_home;

void h_home_setup(void)
{
	h_home = s0_test_tmpdir("cli");
	ck_assert_ptr_nonnull(h_home);
	h_env_reset(h_home);
}

void h_home_teardown(void)
{
	s0_test_rmrf(h_home);
	free(h_home);
	h_home = NULL;
}

char *h_path_in(const char *rest)
{
	char *p = NULL;
	ck_assert_int_ge(asprintf(&p, "%s/%s", h_home, rest), 0);
	return p;
}

void h_expect_exit(const cli_run *r, int want)
{
	ck_assert_msg(r->status == want, "exit %d (want %d)\nstdout: %s\nstderr: %s", r->status,
	              want, r->out, r->err);
}
