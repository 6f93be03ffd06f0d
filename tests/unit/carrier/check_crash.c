/*
 * kill -9 of a carrier's owner, then s0__carrier_reclaim in a fresh
 * process: `losetup -a` and every /proc/PID/mountinfo are clean afterwards.
 * With a process left inside the carrier's namespace (as a sandbox that
 * outlives its server would be), the dead FUSE server leaves a loop device
 * answering EIO and mounts alive: reclaim kills that process and detaches.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cartest.h"

/* mode: NULL, "child" or "detach"; point: S0_CRASH_AT for the crasher (it
 * then dies by itself inside attach or detach), or NULL: killed by us. */
static void crash_case(const char *mode, const char *point)
{
	bool with_child = mode && !strcmp(mode, "child");
	const char *crasher = getenv("S0_CARRIER_CRASHER");
	ck_assert_msg(crasher != NULL, "S0_CARRIER_CRASHER unset");
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/t.XXXXXX", ct_root);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char state[4200];
	snprintf(state, sizeof state, "%s/state", dir);
	/* the crasher's orphan comes back to this (forked) test process */
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		if (point)
			setenv("S0_CRASH_AT", point, 1);
		execl(crasher, crasher, "hold", dir, mode, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	char line[64] = {0};
	size_t got = 0;
	while (got < sizeof line - 1) {
		ssize_t n = read(p[0], line + got, 1);
		if (n <= 0 || line[got] == '\n')
			break;
		got++;
	}
	close(p[0]);
	int child = 0;
	if (point) {
		ck_assert_msg(got == 0, "crasher got past %s: \"%s\"", point, line);
	} else {
		ck_assert_msg(sscanf(line, "ready %d", &child) == 1, "crasher said \"%s\"", line);
		ck_assert_int_eq(kill(pid, SIGKILL), 0);
	}
	int ws;
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	ck_assert(WIFSIGNALED(ws));

	char what[1024];
	int before = ct_leftovers(state, what, sizeof what);
	printf("crash (%s, %s): before reclaim:%s\n", mode ? mode : "owner only",
	       point ? point : "kill -9", before ? what : " nothing");
	if (with_child) {
		ck_assert_int_gt(before, 0); /* the namespace lives on in the child */
		CT_FAILS(S0_EUNAVAILABLE, "resource_leak", s0__carrier_proof(state, "crash", &err_));
	}

	const char *argv[] = {crasher, "reclaim", state, NULL};
	char *out = NULL;
	int st = carenv_run(argv, &out);
	ck_assert_msg(st == 0, "reclaim: %d %s", st, out ? out : "");
	unsigned rec = 0, procs = 0, mounts = 0, loops = 0;
	ck_assert(sscanf(out, "records %u processes %u mounts %u loops %u", &rec, &procs, &mounts,
	                 &loops) == 4);
	printf("crash: reclaimed %s", out);
	free(out);
	ck_assert_uint_eq(rec, 1);
	ck_assert_uint_eq(procs, with_child ? 1 : 0);
	if (with_child) {
		/* we are the subreaper of the crasher's orphan */
		ck_assert_int_eq(waitpid(child, &ws, 0), child);
		ck_assert(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL);
	}
	ck_assert_msg(ct_leftovers(state, what, sizeof what) == 0, "left:%s", what);
	CT_OK(s0__carrier_proof(state, "crash", &err_));
	char rp[4300];
	snprintf(rp, sizeof rp, "%s/crash.carrier", state);
	ck_assert_int_ne(access(rp, F_OK), 0);
	/* a second reclaim finds nothing */
	out = NULL;
	ck_assert_int_eq(carenv_run(argv, &out), 0);
	ck_assert_ptr_nonnull(strstr(out, "records 0 processes 0 mounts 0 loops 0"));
	free(out);
}

START_TEST(test_crash_owner_killed)
{
	crash_case(NULL, NULL);
}
END_TEST

START_TEST(test_crash_namespace_outlives_owner)
{
	crash_case("child", NULL);
}
END_TEST

/* SIGKILL at each step of attach and detach (S0_CRASH_AT). */
static const char *const points[][2] = {
	{NULL, "carrier.fuse_mounted"},
	{NULL, "carrier.loop_bound"},
	{NULL, "carrier.mounted"},
	{"detach", "carrier.unmounted"},
};

START_TEST(test_crash_points)
{
	crash_case(points[_i][0], points[_i][1]);
}
END_TEST

Suite *carrier_crash_suite(void)
{
	Suite *s = suite_create("carrier-crash");
	TCase *tc = tcase_create("crash");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_crash_owner_killed);
	tcase_add_test(tc, test_crash_namespace_outlives_owner);
	tcase_add_loop_test(tc, test_crash_points, 0, (int)(sizeof points / sizeof points[0]));
	suite_add_tcase(s, tc);
	return s;
}
