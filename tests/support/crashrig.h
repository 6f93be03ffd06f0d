/*
 * Shared harness of the crash tests: run a crasher (a separate program,
 * fork + exec, so the test process must not have started threads) with
 * S0_CRASH_AT armed or not, and check how it ended. Reopening what the
 * crasher left is the caller's part.
 */
#ifndef S0_CRASHRIG_H
#define S0_CRASHRIG_H

/* A crasher program: the path in the environment variable `env`, else
 * the program `name` next to the test executable. */
typedef struct s0_crashrig {
	const char *env;
	const char *name;
} s0_crashrig;

/* Run the crasher with args (NULL-terminated, after argv[0]) and
 * S0_CRASH_AT=crash_at, or unset when crash_at is NULL; returns the raw
 * wait status. */
int s0_crashrig_run(const s0_crashrig *rig, const char *crash_at, const char *const *args);

/* Assert the crasher died by SIGKILL at crash_at. */
void s0_crashrig_assert_killed(int status, const char *crash_at);

/* Assert the crasher exited with code; what names the step in the message. */
void s0_crashrig_assert_exited(int status, int code, const char *what);

#endif
