/*
 * The simulated guest of one runtime generation (docs/architecture.md "Runtime
 * and checkpoints"): a PID space whose PID 1 is procd (with a recorded
 * version), a process table, virtual time, the contexts of docs/wire.md §8.1
 * (contexts.h) and the processes of supervised session attempts
 * (sessions.h). The simulation says so: no host process exists. Processes
 * run the built-in shell (shell.h) whose commands act on the sandbox's real
 * RootFS and tmpfs through the files namespace bound with
 * s0__guest_bind_files().
 *
 * Process table: pid, ppid, argv, state (`created`, `starting`, `running`,
 * `paused`, `stopped`, `killed`, `crashed` — procd's names), exit code,
 * variables and environment, cwd, a heap (heap.h), open file descriptors
 * 0..9 (pipes to the process's own buffers, or files of the namespace with
 * offsets), and listening sockets. Sockets never survive a checkpoint: a
 * memory image drops them (MEM-10) and counts them.
 *
 * Virtual time: `sleep` never blocks a thread. A foreground command (a
 * REPL exec, a `wait_until_done` create) advances the guest's virtual
 * clock, running every background process that becomes due on the way; a
 * background process (job, cmd context, session attempt) that sleeps
 * yields until virtual time reaches its wake-up. s0__guest_advance() moves
 * virtual time from outside (the lead calls it when wall time passes).
 *
 * Deadlines: a process may carry a maximum lifetime (ends when virtual
 * time reaches start + ttl) and an idle timeout (ends when it reaches last
 * activity + timeout), both in virtual time and both kept by a memory
 * image. Activity is: creation, output written to its pipes, a signal,
 * input queued through s0__guest_write_input(), and a context's exec,
 * input and resize (contexts.h). A process busy
 * in a foreground exec is never idle; the exec's end is activity. At a
 * deadline the process gets its expiry signal (KILL unless the owner chose
 * another; it is in the signal log) and s0__proc_info.expired says why.
 * A deadline is met exactly: advancing to deadline - 1 leaves the process
 * alone, reaching the deadline ends it before anything else due then runs.
 * An expiry signal of TERM is a stop: when the process survives it (its
 * shell ignores TERM: `trap '' TERM`, shell.h) it gets KILL once its
 * grace period (s0__spawn_req.stop_grace_ms; 0: at once) has passed in
 * virtual time; s0__guest_stop() is the same stop on request. While a
 * stop's grace runs, its KILL is the process's only deadline.
 *
 * Errors use the wire reasons of include/sandbox0/error.h.
 *
 * @threadsafety every function is safe from any thread: one mutex per
 * guest, held for one call. Callbacks run with it held and must not call
 * back into the guest.
 */
#ifndef S0_RUNTIME_SIM_GUEST_H
#define S0_RUNTIME_SIM_GUEST_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/internal.h"
#include "local/objects/objid.h"
#include "local/runtime/heap.h"
#include "local/runtime/image.h"

struct s0__files_ns;
typedef struct s0__guest s0__guest;

/** Process states, in procd's words (s0__proc_state_name()). */
enum s0__proc_state {
	S0__PS_CREATED = 0,
	S0__PS_STARTING = 1,
	S0__PS_RUNNING = 2,
	S0__PS_PAUSED = 3,
	S0__PS_STOPPED = 4,
	S0__PS_KILLED = 5,
	S0__PS_CRASHED = 6,
};

/** procd's name of a process state ("running"…); "unknown" when out of range. */
const char *s0__proc_state_name(int state);

/** Options of s0__guest_new(); zero fields mean the default. */
typedef struct s0__guest_opts {
	const char *procd_version;   /**< recorded as PID 1's version; default "procd-sim/1" */
	const s0_clock *clock;       /**< wall clock for timestamps (copied); NULL: real */
	const cJSON *env_vars;       /**< (nullable) sandbox env_vars object, string values */
	uint64_t memory_limit_bytes; /**< heap bytes allowed in all processes; 0: none */
	uint32_t heap_chunk_bytes;   /**< heap chunk size; 0: S0__HEAP_CHUNK_DEFAULT */
	const char *cwd;             /**< default working directory; default "/workspace" */
	int64_t exec_timeout_ms;     /**< virtual time one REPL exec may take; 0: 30000 */
} s0__guest_opts;

/**
 * A fresh guest: procd (PID 1, state running) and nothing else.
 * @param o (nullable) options (strings copied).
 * @param[out] out (transfer full) free with s0__guest_free().
 * @retval S0_EINVAL bad chunk size or env_vars not an object of strings.
 * @retval S0_ENOMEM
 */
int s0__guest_new(const s0__guest_opts *o, s0__guest **out, s0_error **err);

/** Stop every background activity (prefetch) and free everything. NULL-safe. */
void s0__guest_free(s0__guest *g);

/**
 * Bind the files namespace shell commands act on (borrowed; must outlive
 * the guest or be rebound). Until bound, file commands fail with
 * "filesystem unavailable".
 */
void s0__guest_bind_files(s0__guest *g, const struct s0__files_ns *ns);

struct s0__netpolicy;

/**
 * Apply a network policy (netpolicy.h) to the guest's simulated network,
 * replacing the one applied before (freed). Until a policy is applied the
 * guest has no network: every outbound connection fails "Network is
 * unreachable". Resume applies it before the readiness proof (RTX-04, RTX-04); a config update
 * applies
 * it to the running generation at once. A memory image never carries it.
 * @param policy (transfer full, nullable) NULL takes the network down.
 */
void s0__guest_set_network(s0__guest *g, struct s0__netpolicy *policy);

/**
 * Callback for a heap chunk found damaged after the guest was reported
 * running (a lazily restored chunk failed verification): the process that
 * touched it has crashed (state `crashed`, exit 139), and the lead treats
 * the runtime as crashed (docs/decisions.md "Restore of memory"). Called with
 * the guest lock held, from the toucher's thread or the prefetch thread.
 * @param pid the process (0 when only the prefetch saw it).
 * @param err (transfer none) the verification error.
 */
typedef s0__rt_damage_fn s0__guest_damage_fn;

/** Install the damage callback (nullable). */
void s0__guest_set_damage_cb(s0__guest *g, s0__guest_damage_fn fn, void *payload);

/**
 * Advance virtual time by @p ms, running every background process that
 * becomes due, in wake-up order.
 * @retval S0_OK @retval S0_EINVAL negative @p ms.
 */
int s0__guest_advance(s0__guest *g, int64_t ms, s0_error **err);

/** Virtual time in ms since the guest's first generation started. */
int64_t s0__guest_vtime_ms(s0__guest *g);

/** The procd version recorded at creation (and kept by a restore). @return (transfer none) */
const char *s0__guest_procd_version(s0__guest *g);

/**
 * Graceful runtime shutdown (SES-04): procd is signalled (TERM) before its
 * children, then every other live process gets TERM in PID order; the
 * signal log records the order. Processes end `stopped`; nothing else
 * changes (sessions handle their own recovery).
 */
void s0__guest_shutdown(s0__guest *g);

/**
 * Signal names of contexts and sessions (docs/wire.md §8.1): parse INT, TERM, KILL, HUP, QUIT,
 * USR1, USR2, WINCH, STOP, CONT
 * (case-insensitive, optional SIG prefix) or a positive number (1..64).
 * @retval S0_EINVAL `invalid_request` "unsupported signal".
 */
int s0__signal_parse(const char *name, int *signo_out, s0_error **err);

/** What s0__guest_spawn() starts. */
typedef struct s0__spawn_req {
	const char *const *argv; /**< argv (copied); [sh|bash, -c, S] runs script S */
	size_t argc;             /**< >= 1 */
	const char *cwd;         /**< (nullable) default: the guest's */
	const cJSON *env;        /**< (nullable) object of extra exported variables */
	int owner;               /**< s0__proc_owner */
	int64_t ttl_ms;          /**< maximum lifetime, virtual ms (0: none) */
	int64_t idle_timeout_ms; /**< idle timeout, virtual ms (0: none) */
	int expire_signal;       /**< what a deadline sends (0: KILL) */
	int64_t stop_grace_ms;   /**< expire_signal TERM left it alive: KILL this much later,
	                              virtual ms (0: at once) */
} s0__spawn_req;

/** Why the guest ended a process (s0__proc_info.expired). */
enum s0__proc_expiry {
	S0__EXPIRY_NONE = 0,
	S0__EXPIRY_TTL = 1,  /**< its maximum lifetime passed */
	S0__EXPIRY_IDLE = 2, /**< its idle timeout passed */
};

/** Who owns a process (what reaps it). */
enum s0__proc_owner {
	S0__OWN_NONE = 0,    /**< reaped when it ends */
	S0__OWN_JOB = 1,     /**< a background job: reaped when it ends */
	S0__OWN_CONTEXT = 2, /**< kept until its context is deleted */
	S0__OWN_SESSION = 3, /**< kept until its session reaps it */
};

/**
 * Start a background process running argv (as the shell would) under
 * procd: it runs at once until it ends or sleeps.
 * @param[out] pid_out its PID.
 * @retval S0_EINVAL empty argv. @retval S0_ENOMEM
 */
int s0__guest_spawn(s0__guest *g, const s0__spawn_req *r, int32_t *pid_out, s0_error **err);

/** A process as seen from outside. */
typedef struct s0__proc_info {
	int32_t pid, ppid;
	int32_t state;     /**< @type s0__proc_state */
	bool ended;        /**< stopped, killed or crashed */
	int32_t exit_code; /**< valid when ended */
	uint64_t heap_bytes;
	uint32_t open_files; /**< file descriptors on files */
	uint32_t sockets;
	int32_t expired;   /**< @type s0__proc_expiry */
	size_t stdin_bytes;  /**< queued on stdin, not yet read */
	bool stdin_closed;   /**< stdin EOF queued */
} s0__proc_info;

/** @retval S0_ENOTFOUND no such PID (reaped or never existed). */
int s0__guest_proc_get(s0__guest *g, int32_t pid, s0__proc_info *out, s0_error **err);

/**
 * Send a signal (s0__signal_parse numbers) to a process (see shell.h for
 * the effect of each signal).
 * @retval S0_ENOTFOUND no such process. @retval S0_ECONFLICT
 * `process_not_running` it has ended. @retval S0_EFORBIDDEN PID 1.
 */
int s0__guest_signal(s0__guest *g, int32_t pid, int signo, s0_error **err);

/**
 * Stop a process: TERM; if it is still alive (it ignores TERM), KILL at
 * once when @p grace_ms is 0, else when virtual time reaches now +
 * @p grace_ms (a KILL already pending earlier stays). @p disown hands the
 * process to nobody, so it is reaped when it ends (a deleted session's).
 * @retval S0_ENOTFOUND @retval S0_EFORBIDDEN PID 1. An ended process is left alone.
 */
int s0__guest_stop(s0__guest *g, int32_t pid, int64_t grace_ms, bool disown, s0_error **err);

/**
 * Move what a process wrote to its pipes into @p out (stdout), @p errb
 * (stderr) and @p raw (both, in order) — each appended, each nullable
 * (discarded) — and empty the pipes.
 * @retval S0_ENOTFOUND @retval S0_ENOMEM (pipes unchanged)
 */
int s0__guest_take_output(s0__guest *g, int32_t pid, s0__buf *out, s0__buf *errb, s0__buf *raw,
                          s0_error **err);

/**
 * Queue bytes on a process's stdin (and close it with @p eof); a session
 * attempt whose `read` waits for input runs at once.
 * @retval S0_ENOTFOUND @retval S0_ECONFLICT `process_not_running` ended.
 */
int s0__guest_write_input(s0__guest *g, int32_t pid, const void *data, size_t len, bool eof,
                          s0_error **err);

/** Remove an ended process from the table (no-op for live or unknown PIDs). */
void s0__guest_reap(s0__guest *g, int32_t pid);

/**
 * The guest as JSON for inspection: procd version, virtual time,
 * processes (pid, ppid, argv, state, exit_code, heap, fds with offsets,
 * sockets), contexts, the signal log and heap/lazy-restore counters.
 * @return (transfer full) or NULL when out of memory.
 */
cJSON *s0__guest_inspect(s0__guest *g);

/**
 * Totals over every heap of the guest. `lazy` counts chunks still to be
 * paged in from a restored image: while it is not 0 the image's objects
 * must stay rooted (a GC of them would crash the guest on first touch).
 */
void s0__guest_heap_stats(s0__guest *g, s0__heap_stats *out);

/* ---- for the checkpoint engine (checkpoint/) ---- */

/** Take the guest lock around a capture (no other guest call may nest). */
void s0__guest_lock(s0__guest *g);
/** Drop the lock taken by s0__guest_lock(). */
void s0__guest_unlock(s0__guest *g);

/** One heap of a locked guest (s0__guest_heaps_locked): a region of its image. */
typedef s0__rt_region s0__guest_heapref;

/**
 * Every process heap, by PID.
 * @param[out] out (transfer full) array; unref each heap, then free().
 */
int s0__guest_heaps_locked(s0__guest *g, s0__guest_heapref **out, size_t *n_out,
                           s0_error **err);

/**
 * The small state (everything but heap bytes): PID space, procd version,
 * virtual time, processes with argv, env, cwd, shell state, fds with
 * offsets, script positions, pipe buffers, heap sizes, deadlines; contexts. Sockets
 * are left out and counted in *sockets_dropped.
 * @param[out] buf_out (transfer full) free().
 */
int s0__guest_state_locked(s0__guest *g, void **buf_out, size_t *len_out,
                           uint64_t *sockets_dropped, s0_error **err);

/**
 * Rebuild a guest from a state blob and lazy heaps: same PIDs, variables,
 * cwd, fds, contexts; heaps lazy on @p pager. The files namespace must be
 * bound afterwards. The procd version is the captured one (MEM-11).
 * @param o options for what the blob does not carry (clock, limits);
 *          procd_version is ignored.
 * @retval S0_ECORRUPT the blob is damaged or disagrees with @p heaps.
 * @retval S0_ENOMEM
 */
int s0__guest_restore(const void *state, size_t len, const s0__guest_opts *o,
                      const s0__heap_image *heaps, size_t nheaps, s0__pager *pager,
                      s0__guest **out, s0_error **err);

/**
 * Start a background thread that loads every lazy chunk of every heap
 * (first-touch order is not disturbed: touches still load on demand).
 * Damage found is reported through the damage callback. Stopped by
 * s0__guest_free(). A second call is a no-op.
 */
int s0__guest_prefetch_start(s0__guest *g, s0_error **err);

/** Wait for the prefetch thread to finish (tests, benchmarks). */
void s0__guest_prefetch_wait(s0__guest *g);

#endif
