/*
 * Host processes of the gvisor driver (gvisor.h): runsc invocations run to
 * their end with their output captured, and long-lived ones (a REPL's
 * `runsc exec` of a shell) kept with pipes to their stdin, stdout and
 * stderr. Every child is started with a clean environment of our choosing,
 * its other descriptors closed, in its own process group; the server is a
 * child subreaper (s0__gv_subreaper), so what runsc leaves behind is ours
 * to reap.
 *
 * @threadsafety every function is safe from any thread; one s0__gv_child
 * is used by one thread at a time (its owner serialises).
 */
#ifndef S0_RUNTIME_GVISOR_GV_PROC_H
#define S0_RUNTIME_GVISOR_GV_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/internal.h"

/** What a finished command gave. Buffers are NUL-terminated (possibly empty). */
typedef struct s0__gv_result {
	int status;    /**< waitpid(2) status */
	s0__buf out;   /**< stdout */
	s0__buf err;   /**< stderr */
} s0__gv_result;

/** Free the buffers of @p r. */
void s0__gv_result_clear(s0__gv_result *r);

/** The exit code of a wait status: the code, or 128+signal. */
int s0__gv_exit_code(int status);

/**
 * Run @p argv (argv[0] an absolute path) to its end, feeding @p in (may be
 * NULL) to its stdin and collecting stdout and stderr into @p res (caller
 * clears). Blocks until the child exits or @p timeout_ms passes (then the
 * child's group gets SIGKILL and S0_ETIMEDOUT is returned, res filled with
 * what came).
 * @retval S0_EIO the child could not be started (errno in the message).
 */
int s0__gv_run(char *const *argv, const void *in, size_t in_len, int64_t timeout_ms,
               s0__gv_result *res, s0_error **err);

/**
 * Run @p argv to its end with stdin and stdout on /dev/null and stderr
 * into the file @p err_path (truncated): for commands that leave daemons
 * behind holding their stdio (`runsc run --detach`), so the end of the
 * command is its exit, not the end of its pipes. Blocks up to
 * @p timeout_ms (then SIGKILL to its group, S0_ETIMEDOUT).
 * @param[out] status its wait status.
 * @retval S0_EIO it could not be started.
 */
int s0__gv_run_detached(char *const *argv, const char *err_path, int64_t timeout_ms,
                        int *status, s0_error **err);

/**
 * s0__gv_run_detached(), the child first calling @p pre(@p arg) after fork
 * and before exec (async-signal-safe only; nonzero: the child exits 127).
 */
int s0__gv_run_detached_pre(char *const *argv, const char *err_path, int64_t timeout_ms,
                            int (*pre)(const void *arg), const void *arg, int *status,
                            s0_error **err);

/**
 * s0__gv_run_detached_pre() with the child's stdin on @p in_fd and stdout
 * on @p out_fd (borrowed; -1: /dev/null): the channel of a sandbox's init
 * (gv_procd.h) handed to `runsc run --detach`.
 */
int s0__gv_run_detached_io(char *const *argv, int in_fd, int out_fd, const char *err_path,
                           int64_t timeout_ms, int (*pre)(const void *arg), const void *arg,
                           int *status, s0_error **err);

/** A child kept running with pipes (a REPL's shell). */
typedef struct s0__gv_child {
	pid_t pid;
	int in_fd;  /**< its stdin (write end; -1 once closed) */
	int out_fd; /**< its stdout (read end, non-blocking) */
	int err_fd; /**< its stderr (read end, non-blocking) */
	bool reaped;
	int status; /**< once reaped */
} s0__gv_child;

/**
 * Start @p argv with pipes. @param[out] c filled; end with s0__gv_child_end().
 * @retval S0_EIO
 */
int s0__gv_child_start(char *const *argv, s0__gv_child *c, s0_error **err);

/**
 * Whether the child has exited (reaps it without blocking). Once true,
 * c->status holds its wait status.
 */
bool s0__gv_child_exited(s0__gv_child *c);

/**
 * Read what is available on the child's stdout and stderr, waiting up to
 * @p wait_ms (0: no wait) for the first byte. @return bytes read in all;
 * 0 when nothing came (EOF on both when the child ended).
 */
size_t s0__gv_child_read(s0__gv_child *c, s0__buf *out, s0__buf *err, int wait_ms);

/** Kill (SIGKILL) the child's group if running, reap it and close the pipes. NULL-safe. */
void s0__gv_child_end(s0__gv_child *c);

/**
 * Make this process a child subreaper (prctl PR_SET_CHILD_SUBREAPER): what
 * runsc daemonises re-parents to us, not to a PID 1 that never reaps.
 * Idempotent.
 */
void s0__gv_subreaper(void);

/** Reap every exited child that no one waits for by pid (runsc's daemons). */
void s0__gv_reap_orphans(void);

#endif
