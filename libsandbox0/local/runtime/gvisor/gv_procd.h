/*
 * The driver's side of procd (procd/procd_proto.h): a generation's channel
 * to its init, and the processes started through it. A reader thread per
 * channel takes procd's frames into per-process buffers; callers wait on
 * them with a bound.
 *
 * When procd goes away (the sandbox died, or the channel broke) every
 * process of the channel counts as ended by SIGKILL and new spawns fail
 * with S0_EUNAVAILABLE `procd_gone`.
 *
 * @threadsafety every function is safe from any thread; a s0__gv_pp is
 * used by one thread at a time (its owner serialises), while the reader
 * thread fills it.
 */
#ifndef S0_RUNTIME_GVISOR_GV_PROCD_H
#define S0_RUNTIME_GVISOR_GV_PROCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/internal.h"

typedef struct s0__gv_pd s0__gv_pd; /**< one channel to one procd */
typedef struct s0__gv_pp s0__gv_pp; /**< one process procd started */

/**
 * The procd binary: $S0_PROCD, else this build's, else the installed one.
 * @param[out] out (transfer full) its absolute path.
 * @retval S0_EUNAVAILABLE `runtime_unavailable` naming the paths tried.
 */
int s0__gv_procd_find(char **out, s0_error **err);

/**
 * Take a channel: @p to_fd (procd's stdin, write end) and @p from_fd (its
 * stdout, read end), both owned from now on (closed by s0__gv_pd_close(),
 * also on failure). Waits up to @p timeout_ms for procd's hello.
 * @param[out] out (transfer full) end with s0__gv_pd_close().
 * @retval S0_EUNAVAILABLE `procd_not_ready` no hello in time (what procd
 *         wrote to @p log_path, nullable, in the message).
 */
int s0__gv_pd_open(int to_fd, int from_fd, int64_t timeout_ms, const char *log_path,
                   s0__gv_pd **out, s0_error **err);

/**
 * Take a channel to a procd that is already running — one a `runsc
 * restore` continued, reading its stdin from the pipe the restore handed
 * it — like s0__gv_pd_open() but without a hello (procd said it before the
 * checkpoint): a ping answered within @p timeout_ms proves the channel.
 * Processes procd started before the checkpoint keep running; this channel
 * knows none of them, and numbers its own from a random point of the id
 * space so that none collides with theirs. The version reads "restored".
 * @param[out] out (transfer full) end with s0__gv_pd_close().
 * @retval S0_EUNAVAILABLE `procd_not_ready` no answer in time, `procd_gone`.
 */
int s0__gv_pd_attach(int to_fd, int from_fd, int64_t timeout_ms, s0__gv_pd **out,
                     s0_error **err);

/**
 * Close the channel (procd then kills every process and exits), wait
 * (up to 10 s) until procd's stdout reaches end of file — every process
 * holding it, the runsc sandbox's too, is gone — join the reader thread
 * and free @p pd. Processes still held are freed too. NULL-safe.
 */
void s0__gv_pd_close(s0__gv_pd *pd);

/** Whether procd is gone (its channel ended). */
bool s0__gv_pd_gone(s0__gv_pd *pd);

/** procd's version from its hello. @return (transfer none) */
const char *s0__gv_pd_version(const s0__gv_pd *pd);

/**
 * One round trip to procd (a ping). Blocks up to @p timeout_ms.
 * @retval S0_EUNAVAILABLE `procd_gone` / `procd_not_ready` (no answer in time).
 */
int s0__gv_pd_ping(s0__gv_pd *pd, int64_t timeout_ms, s0_error **err);

/**
 * Start @p argv (argv[0] a path or a name looked up on PATH inside) in
 * its own session and process group, in @p cwd (nullable: "/"), with
 * @p env (KEY=VALUE, nullable, NULL-terminated) set over the sandbox's
 * environment; stdin a pipe when @p with_stdin, else /dev/null. Blocks
 * until procd answers (started or failed), up to @p timeout_ms.
 * @param[out] out (transfer full) free with s0__gv_pp_free().
 * @retval S0_EINVAL `command_failed` the program could not start (the
 *         error inside: not found, not executable, bad cwd).
 * @retval S0_EUNAVAILABLE `procd_gone`.
 */
int s0__gv_pp_spawn(s0__gv_pd *pd, char *const *argv, char *const *env, const char *cwd,
                    bool with_stdin, int64_t timeout_ms, s0__gv_pp **out, s0_error **err);

/** The process's PID inside the sandbox. */
int32_t s0__gv_pp_pid(const s0__gv_pp *pp);

/** The process's id on its channel (procd's name for it). */
uint32_t s0__gv_pp_id(const s0__gv_pp *pp);

/**
 * Take over process @p id (PID @p pid) that procd started for the channel
 * before a memory checkpoint, on the channel of the restored procd
 * (s0__gv_pd_attach()): its output and exit from now on reach the handle;
 * what it wrote while no channel read it is lost. @p with_stdin: its stdin
 * is a pipe still open.
 * @param[out] out (transfer full) free with s0__gv_pp_free().
 * @retval S0_EUNAVAILABLE `procd_gone` (also when @p id is already taken).
 */
int s0__gv_pp_adopt(s0__gv_pd *pd, uint32_t id, int32_t pid, bool with_stdin, s0__gv_pp **out,
                    s0_error **err);

/**
 * Move what the process wrote since the last call into @p out and @p err
 * (appended), waiting up to @p wait_ms (0: no wait) for output or the
 * exit. @return bytes moved.
 */
size_t s0__gv_pp_read(s0__gv_pp *pp, s0__buf *out, s0__buf *err, int wait_ms);

/**
 * Whether the process has exited (procd reaped it); then @p status_out
 * (nullable) gets its wait status. Output it wrote before is buffered.
 */
bool s0__gv_pp_exited(s0__gv_pp *pp, int *status_out);

/** Whether its stdin is open (a pipe, not closed, the process not ended); false for NULL. */
bool s0__gv_pp_stdin_open(const s0__gv_pp *pp);

/**
 * Queue @p len bytes for its stdin (procd never blocks on it).
 * @retval S0_EGONE `process_finished` ended or stdin closed (or @p pp is NULL).
 * @retval S0_EUNAVAILABLE `procd_gone`.
 */
int s0__gv_pp_write(s0__gv_pp *pp, const void *data, size_t len, s0_error **err);

/** Close its stdin (end of file once the queued bytes were read). Idempotent, NULL-safe. */
void s0__gv_pp_close_stdin(s0__gv_pp *pp);

/**
 * Send @p signo to the process's group.
 * @retval S0_ECONFLICT `process_not_running` it has exited (or @p pp is NULL).
 * @retval S0_EUNAVAILABLE `procd_gone`.
 */
int s0__gv_pp_signal(s0__gv_pp *pp, int signo, s0_error **err);

/**
 * Forget the process: SIGKILL to its group if it has not exited (procd
 * reaps it), then free @p pp. NULL-safe.
 */
void s0__gv_pp_free(s0__gv_pp *pp);

#endif
