/*
 * Internal structures of the simulated guest shared by guest*.c, the
 * shell (sh_*.c, bi_*.c) and the contexts (ctx*.c). Not for other modules:
 * they use guest.h, contexts.h and sessions.h.
 *
 * @threadsafety everything here is used with the guest lock held.
 */
#ifndef S0_RUNTIME_SIM_GUEST_IMPL_H
#define S0_RUNTIME_SIM_GUEST_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "common/buf.h"
#include "local/runtime/sim/guest.h"
#include "local/runtime/sim/vars.h"

/** File descriptors per process (0..9). */
#define S0__NFD 10
/** Bytes kept per pipe buffer (older bytes are dropped first). */
#define S0__PIPE_CAP ((size_t)1 << 20)
/** Listening sockets per process. */
#define S0__MAX_SOCKETS 64
/** Deepest `sh -c` nesting. */
#define S0__SH_MAX_DEPTH 16
/** Longest context id, bytes with the NUL. */
#define S0__CTX_ID_MAX 40

/** Kinds of file descriptor. */
enum { S0__FD_CLOSED = 0, S0__FD_PIPE = 1, S0__FD_FILE = 2 };
/** File descriptor flags. */
enum { S0__FD_READ = 1, S0__FD_WRITE = 2, S0__FD_APPEND = 4 };

/** One file descriptor. */
typedef struct s0__fd {
	uint8_t kind;   /**< S0__FD_* */
	uint8_t flags;  /**< S0__FD_READ | WRITE | APPEND */
	char *path;     /**< FILE: canonical path (owned) */
	uint64_t offset;/**< FILE: next byte read or written */
} s0__fd;

/** wake_at of a session attempt's `read` waiting for a line (or EOF) on stdin. */
#define S0__WAKE_ON_INPUT INT64_MAX

/** Process kinds. */
enum { S0__PK_PROCD = 0, S0__PK_SHELL = 1, S0__PK_SCRIPT = 2 };

/** Output of a running command: stdout, stderr and both in order. */
typedef struct s0__shout {
	s0__buf out, err, raw;
	/** Bytes dropped from the front of each past S0__PIPE_CAP (not kept in
	 *  images): a stream's cursor is dropped + offset (ctx_stream.c). */
	uint64_t dropped_out, dropped_err, dropped_raw;
} s0__shout;

/** One simulated process. */
typedef struct s0__proc {
	int32_t pid, ppid;
	uint8_t kind, state, owner;
	bool ended;
	int32_t exit_code;
	char **argv;
	uint32_t argc;
	char *cwd;
	s0__vars vars;          /**< shell variables; exported = environment */
	int32_t last_status;    /**< $? */
	int32_t last_bg;        /**< $! (0: none) */
	uint64_t seed;          /**< next heap content stream (`alloc`, `memtouch`) */
	s0__heap *heap;
	s0__fd fd[S0__NFD];
	uint32_t *ports;        /**< listening sockets (ports) */
	size_t nports;
	char *script;           /**< SCRIPT: the program text */
	uint32_t pc_stmt, pc_cmd; /**< SCRIPT: where to resume */
	bool sleeping;          /**< SCRIPT: waiting for wake_at */
	int64_t wake_at;        /**< virtual ms; S0__WAKE_ON_INPUT: a `read` waits for stdin */
	s0__shout io;           /**< pipe output not yet taken */
	s0__buf in;             /**< stdin bytes not yet read */
	bool in_eof;
	bool busy;              /**< executing now (never re-entered) */
	int64_t kill_at;        /**< virtual ms the lifetime ends (0: none) */
	int64_t idle_ms;        /**< idle timeout, virtual ms (0: none) */
	int64_t active_vt;      /**< virtual ms of the last activity */
	uint8_t expire_sig;     /**< signal an expiry sends (0: KILL) */
	uint8_t expired;        /**< s0__proc_expiry: why the guest ended it */
	int64_t grace_ms;       /**< after an expiry signal that left it alive: KILL this much later (0: at once) */
	int64_t grace_kill_at;  /**< virtual ms a stop's grace period ends with KILL (0: no stop pending) */
	uint64_t sig_ignored;   /**< bit n: signal n ignored (`trap '' SIG`; never KILL or STOP) */
} s0__proc;

/** Context types. */
enum { S0__CTX_REPL = 1, S0__CTX_CMD = 2 };

/** One context (docs/wire.md §8.1); its process is pid. */
typedef struct s0__ctx {
	char id[S0__CTX_ID_MAX];
	uint8_t type;
	char *alias;
	char *cwd;
	s0__vars env_vars;  /**< as requested (rendered back) */
	char **command;     /**< CMD argv */
	uint32_t ncommand;
	int64_t created_at_ms;
	int32_t pid;
	bool pty;
	int32_t rows, cols;
	int32_t idle_timeout_sec, ttl_sec;
	s0__shout last;     /**< CMD: output of the finished command */
} s0__ctx;

struct s0__guest {
	pthread_mutex_t mu;
	s0_clock clock;
	char *procd_version;
	uint32_t chunk_bytes;
	uint64_t mem_limit;
	int64_t exec_timeout_ms;
	int32_t next_pid;
	s0__proc **procs;   /**< sorted by pid */
	size_t nprocs, capprocs;
	s0__ctx **ctxs;     /**< creation order */
	size_t nctxs, capctxs;
	int64_t vt;         /**< virtual ms */
	const struct s0__files_ns *ns;
	s0__vars base_env;  /**< sandbox env_vars (exported) */
	char *default_cwd;
	s0__pager *pager;
	s0__guest_damage_fn on_damage;
	void *damage_payload;
	int32_t (*siglog)[2]; /**< (pid, signo) in order */
	size_t nsig, capsig;
	uint64_t sockets_dropped;
	struct s0__netpolicy *net; /**< the applied network policy; NULL: no network yet */
	uint64_t net_allowed, net_denied; /**< outbound connections decided */
	int scheduling;     /**< advance() depth (no nested scheduling of one process) */
	pthread_t prefetch_thr;
	bool prefetch_started;
	atomic_bool prefetch_stop;
};

/* ---- guest.c ---- */
/** A guest with no processes: options applied (shared by new and restore). */
int s0__guest_alloc(const s0__guest_opts *o, s0__guest **out, s0_error **err);

/* ---- guest_proc.c ---- */
/** True when some process of the guest listens on TCP @p port. */
bool s0__gproc_port_listening(s0__guest *g, uint32_t port);
/** The process of @p pid, or NULL. */
s0__proc *s0__gproc_find(s0__guest *g, int32_t pid);
/**
 * A new process record in the table (state running, fds 0..2 pipes,
 * empty heap, no script).
 */
int s0__gproc_new(s0__guest *g, int kind, int32_t ppid, s0__proc **out, s0_error **err);
/** Free a record that is not (or no longer) in the table. */
void s0__gproc_free(s0__proc *p);
/** Remove @p p from the table and free it. */
void s0__gproc_remove(s0__guest *g, s0__proc *p);
/** End a process: state, exit code, fds closed, sockets dropped. */
void s0__gproc_end(s0__proc *p, int state, int exit_code);
/** Close one fd. */
void s0__fd_close(s0__fd *f);
/** Deep copy of an fd. @retval S0_OK @retval S0_ENOMEM */
int s0__fd_copy(s0__fd *dst, const s0__fd *src);
/** Append to a pipe buffer, dropping the oldest bytes past S0__PIPE_CAP;
 *  *dropped (nullable) counts what was dropped. */
int s0__pipe_put(s0__buf *b, uint64_t *dropped, const void *data, size_t len);
/** Free the three buffers of an output. */
void s0__shout_free(s0__shout *o);
/** Reap ended processes owned by nobody or by jobs. */
void s0__gproc_reap_orphans(s0__guest *g);
/** Arm the deadlines of @p p from now (see s0__spawn_req); 0 disables each. */
void s0__gproc_arm(s0__guest *g, s0__proc *p, int64_t ttl_ms, int64_t idle_ms, int signo,
                   int64_t grace_ms);
/**
 * A stop: TERM, then KILL at once when @p grace_ms is 0 and TERM left @p p
 * alive, else KILL when virtual time reaches now + @p grace_ms (an earlier
 * pending KILL stays). See s0__guest_stop().
 */
void s0__gproc_stop(s0__guest *g, s0__proc *p, int64_t grace_ms);
/** Apply a signal (guest lock held); see s0__guest_signal(). Activity. */
int s0__gproc_signal(s0__guest *g, s0__proc *p, int signo, s0_error **err);
/** Report heap damage met by @p p: crash it and call the damage callback. */
void s0__gproc_damaged(s0__guest *g, s0__proc *p, const s0_error *e);
/** Total heap bytes of every process. */
uint64_t s0__guest_heap_bytes(s0__guest *g);
/** Wall-clock now (ms). */
int64_t s0__guest_now_ms(s0__guest *g);

/* ---- guest_sched.c ---- */
/**
 * Advance virtual time to @p target_vt, running due background processes
 * (never @p skip, the foreground one) and ending processes whose lifetime
 * or idle deadline falls on the way (guest.h "Deadlines"). When @p skip
 * itself expires, time stops at its deadline: the caller sees it ended.
 */
void s0__sched_advance_to(s0__guest *g, int64_t target_vt, s0__proc *skip);
/**
 * Run a SCRIPT process from its resume point until it sleeps or ends;
 * output it writes counts as activity (p->active_vt).
 */
void s0__sched_run(s0__guest *g, s0__proc *p);
/** Make a SCRIPT process of argv (as spawn does) under @p parent. */
int s0__sched_spawn_argv(s0__guest *g, int32_t ppid, const char *const *argv, size_t argc,
                         const char *cwd, const s0__vars *vars, int owner, s0__proc **out,
                         s0_error **err);

/* ---- ctx.c ---- */
/** Free one context record (not its process). */
void s0__ctx_free(s0__ctx *c);

#endif
