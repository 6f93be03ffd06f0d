#include "crashrig.h"

#include <check.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *program_path(const s0_crashrig *rig)
{
	const char *env = getenv(rig->env);
	if (env && *env)
		return strdup(env);
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	ck_assert_int_gt(n, 0);
	self[n] = '\0';
	char *p = NULL;
	ck_assert_int_ge(asprintf(&p, "%s/%s", dirname(self), rig->name), 0);
	return p;
}

int s0_crashrig_run(const s0_crashrig *rig, const char *crash_at, const char *const *args)
{
	size_t n = 0;
	while (args[n])
		n++;
	char *exe = program_path(rig);
	char **argv = calloc(n + 2, sizeof *argv);
	ck_assert_ptr_nonnull(exe);
	ck_assert_ptr_nonnull(argv);
	argv[0] = exe;
	for (size_t i = 0; i < n; i++)
		argv[i + 1] = (char *)args[i]; /* execv does not write them */
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (crash_at)
			setenv("S0_CRASH_AT", crash_at, 1);
		else
			unsetenv("S0_CRASH_AT");
		execv(exe, argv);
		_exit(127);
	}
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	free(argv);
	free(exe);
	return status;
}

void s0_crashrig_assert_killed(int status, const char *crash_at)
{
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	              "S0_CRASH_AT=%s was never reached (status %d, exit %d)", crash_at, status,
	              WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

void s0_crashrig_assert_exited(int status, int code, const char *what)
{
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == code,
	              "%s: want exit %d (status %d, exit %d)", what, code, status,
	              WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}
