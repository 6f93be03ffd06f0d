/*
 * Internals of the gvisor driver (gvisor.h): the host, a generation, the
 * runsc command line, the OCI bundle, cgroups, the root tree and contexts.
 * Used by the files of this folder only.
 *
 * Layout of the driver's state directory (<state_dir>/gvisor, or a private
 * temporary directory when the engine gives none):
 *   runsc/               runsc --root: its records of our sandboxes
 *   bundles/<runtime_id> the OCI bundle (config.json) of one generation
 *   roots/<sandbox_id>   the root tree of a sandbox (plain-directory root)
 *   template/            the busybox template tree roots are copied from
 *   net/<runtime_id>     a generation's network record (gv_net.h: s0__gv_net_prepare()
 *                        is also the restore hook re-making its namespace)
 * and every generation's cgroup is /sys/fs/cgroup/<controller>/s0-gvisor/<runtime_id>.
 */
#ifndef S0_RUNTIME_GVISOR_GV_INT_H
#define S0_RUNTIME_GVISOR_GV_INT_H

#include <pthread.h>

#include "local/runtime/carrier/carrier.h"
#include "local/runtime/gvisor/gv_net.h"
#include "local/runtime/gvisor/gv_mem.h"
#include "local/runtime/gvisor/gv_proc.h"
#include "local/runtime/gvisor/gv_procd.h"
#include "local/runtime/gvisor/gvisor.h"
#include "local/runtime/runtime.h"

/** Parent of every generation's cgroup, under each controller. */
#define S0__GV_CGROUP_PARENT "s0-gvisor"

/** Longest runtime or sandbox id the driver accepts (runsc container ids). */
#define S0__GV_ID_MAX 100

struct s0__gv_ctxs;
struct s0__gv_ses;
struct s0__sessions;
typedef struct s0__gv_watch s0__gv_watch;


/** The files view of a running generation (gv_files.c). */
typedef struct s0__gv_files {
	s0__files_ns ns;  /**< served by the ops of gv_files.c */
	int root_fd;      /**< the root tree */
	char **mounts;    /**< runtime mount points ("/tmp", ephemeral paths) */
	int *fds;         /**< the host directory serving each */
	size_t n;
	s0__gv_watch *watch; /**< (nullable, borrowed) the guest-change watcher (gv_watch.c) */
} s0__gv_files;

/**
 * Start the watcher of generation @p g's guest file changes (gv_watch.c): a
 * thread holding host inotify marks on g->files' directories while
 * g->files_watched says the sandbox has a file subscriber, telling each
 * change to g->files_changed (set, as g->files open) as a sandbox path.
 * @retval S0_EIO no inotify, fence directory or thread. @retval S0_ENOMEM
 */
int s0__gv_watch_start(s0__rt_gen *g, s0__gv_watch **out, s0_error **err);
/** End the thread and remove every mark (before the files view closes and the
 * carrier detaches: nothing of the tree stays held). NULL-safe. Blocks until joined. */
void s0__gv_watch_stop(s0__gv_watch *w);
/**
 * A files API change of @p a (and @p b, nullable: a move's destination) is about to
 * run: arm the marks now if the sandbox has a subscriber, and drop the marks' events
 * on these paths (parents and children included) until s0__gv_watch_fence() of the
 * returned number — the files API tells its own changes (gv_files.c).
 * @return the fence number; 0 when @p w is NULL or unarmed (nothing to fence).
 * @threadsafety safe
 */
uint64_t s0__gv_watch_own(s0__gv_watch *w, const char *a, const char *b);
/** The change of @p seq (s0__gv_watch_own()) is done: a fence queued after its events. */
void s0__gv_watch_fence(s0__gv_watch *w, uint64_t seq);

/**
 * Open the files view: @p root, and @p n runtime mount points each served
 * by the host directory @p dirs[i]. @retval S0_EIO
 */
int s0__gv_files_open(s0__gv_files *v, const char *root, const char *const *mounts,
                      const char *const *dirs, size_t n, s0_error **err);
/** Close it. */
void s0__gv_files_close(s0__gv_files *v);

struct s0__rt_host {
	s0_clock clock;
	char *runsc;      /**< the runsc binary (absolute) */
	char *version;    /**< its version line */
	char *dir;        /**< <state_dir>/gvisor */
	char *runsc_root; /**< dir/runsc */
	char *carriers;   /**< dir/carriers: the carriers' records and mount points */
	bool own_dir;     /**< dir is a private temporary directory (removed at close) */
	pthread_mutex_t mu;
	int live;         /**< generations started and not stopped */
	s0__gv_hub *hub;  /**< the sandboxes' network hub (gv_net.h; records in dir/net) */
	char *procd;      /**< the procd binary (s0__gv_procd_find) */
	bool no_memory;   /**< memory checkpoints turned off (s0__rt_host_opts) */
	bool images_ok;   /**< the image directory exists (gv_mem.h) */
	int images_users; /**< holds of the image tmpfs (gv_mem.h), under mu */
	struct s0__gv_fin *fins; /**< stops finishing in the background (gv_stop.c), under mu */
};

/* ---- gv_stop.c: the fast stop, its background half, the trace ---- */

/** Whether $S0_GVISOR_TRACE is set (read once). */
bool s0__gv_tracing(void);
/** CLOCK_MONOTONIC in microseconds. */
int64_t s0__gv_now_us(void);
/** One trace line "s0 gvisor trace: <id> <printf>" on stderr when tracing. */
void s0__gv_trace(const char *id, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/**
 * SIGKILL every process of the generation's cgroup (runsc's sandbox, gofer
 * and stubs) and wait, through pidfds, until each has exited (its files
 * and mount namespace released), round after round until the cgroup lists
 * none. Blocks up to @p timeout_ms (ms).
 * @return 0 (none left, or no cgroup), -ETIMEDOUT.
 */
int s0__gv_kill_wait(const char *id, int timeout_ms);
/**
 * Run @p fn(@p arg) in a thread of its own, registered under runtime @p id
 * (copied) until s0__gv_fin_wait() joins it; without a thread it runs here.
 */
void s0__gv_fin_start(s0__rt_host *h, const char *id, void (*fn)(void *arg), void *arg);
/** Join every background finisher of runtime @p id (none: returns at once). */
void s0__gv_fin_wait(s0__rt_host *h, const char *id);
/**
 * Remove the tree @p dir in this process (no `rm` started): depth first,
 * symlinks not followed, nothing on another filesystem (a mount point
 * left makes its parent fail).
 * @return 0 (also when @p dir is absent), or -errno of a failure.
 */
int s0__gv_rm_tree(const char *dir);
/** Join every background finisher of @p h (before it closes). */
void s0__gv_fin_wait_all(s0__rt_host *h);

struct s0__rt_gen {
	s0__rt_host *h;
	char *id;          /**< runtime id = runsc container id */
	char *sandbox_id;
	int64_t generation;
	char *root;        /**< the root tree (absolute) */
	char *bundle;      /**< the bundle directory */
	char **env;        /**< KEY=VALUE of the sandbox's env_vars (NULL-terminated) */
	int64_t started_ms;
	struct s0__gv_ctxs *ctxs;
	char **rt_paths;   /**< runtime-only mount points inside ("/tmp", ephemeral) */
	char **rt_dirs;    /**< the host tmpfs serving each */
	size_t n_rt;
	s0__gv_files files;
	bool files_open;
	/* the engine's file-watch seam (s0__rt_start.files_changed), nullable */
	void (*files_changed)(void *arg, const char *sandbox_id, const char *event,
	                      const char *path);
	bool (*files_watched)(void *arg, const char *sandbox_id);
	void *files_changed_arg;
	s0__carrier *carrier; /**< (nullable) the RootFS branch mounted as the root tree */
	s0__gv_net *net;      /**< its network namespace (gv_net.h; a restore makes it with
	                           s0__gv_net_prepare() and the slot recorded at capture) */
	char *procd_dir;      /**< <bundle>/procd: procd's binary, bound at S0__GV_PROCD_DIR */
	char procd_build[24]; /**< the staged binary's build (s0__gv_procd_build()) */
	s0__gv_pd *procd;     /**< (nullable until started) the channel to procd, PID 1 */
	struct s0__gv_ses *ses; /**< the session attempts run by procd (gv_sessions.c) */
	s0__gv_ckpt *ck;      /**< (nullable) its capture state (gv_mem.h), under h->mu */
};

/** The session attempts of @p g (none yet). NULL when OOM. */
struct s0__gv_ses *s0__gv_ses_new(s0__rt_gen *g);
/** End the supervisor thread, SIGKILL every attempt still running, free the table. NULL-safe. */
void s0__gv_ses_free(struct s0__gv_ses *t);
/**
 * Bind registry @p s to this generation (its attempts run by procd, a
 * supervisor thread reconciling it until s0__gv_ses_free(): @p s must
 * outlive the generation) and apply runtime_recovery (SES-01..05) — or,
 * @p restored (a memory restore), keep the attempts s0__gv_ses_restore()
 * took over (an attempt missing from them is recovered).
 */
void s0__gv_ses_adopt(struct s0__gv_ses *t, struct s0__sessions *s, bool restored);
/**
 * The attempts' processes still running, as text for a memory image
 * (procd's id, PID, deadlines). NULL when out of memory.
 * @return (transfer full) free().
 */
char *s0__gv_ses_save(struct s0__gv_ses *t);
/**
 * After a restore, take over the attempts of @p saved (s0__gv_ses_save(),
 * nullable: none) on g->procd (s0__gv_pp_adopt()), before the registry is
 * bound. @retval S0_ECORRUPT a damaged record. @retval S0_EUNAVAILABLE `procd_gone`.
 */
int s0__gv_ses_restore(struct s0__gv_ses *t, const char *saved, s0_error **err);
/** A sessions call (runtime.h proc_call, S0__RT_SES_* only) on call->sessions (bound as by
 * s0__gv_ses_adopt(), without the recovery). */
int s0__gv_ses_call(struct s0__gv_ses *t, const s0__rt_proc_call *call, cJSON **data_out,
                    int *status_out, s0_error **err);

/**
 * connect_port (runtime.h) of generation @p g (gv_port.c): a TCP socket made
 * in the hub and connected to the sandbox's address on @p port (1..65535).
 * @retval S0_EUNAVAILABLE `port_not_listening` (refused, or no answer in 3 s).
 */
int s0__gv_connect_port(s0__rt_gen *g, int port, int *fd_out, s0_error **err);

/** Where procd's directory is bound inside a sandbox (read-only), and its file name. */
#define S0__GV_PROCD_DIR "/dev/.s0"
#define S0__GV_PROCD_NAME "s0-procd"

/**
 * Stage procd's binary in g->procd_dir (gv_init.c) and record its build in
 * g->procd_build: @p from (borrowed, nullable) — a restore's retained
 * binary (s0__gv_image_procd()) — or, NULL, the host's current procd.
 * @retval S0_EIO
 */
int s0__gv_init_stage(s0__rt_gen *g, const char *from, s0_error **err);

/**
 * The build of the procd binary at @p path (borrowed): "pd-" and the first
 * 6 bytes of its BLAKE2b in hex, read now; "pd-unknown" when unreadable.
 * Written to @p out (@p n bytes, 13 or more; truncated). @threadsafety safe
 */
void s0__gv_procd_build(const char *path, char *out, size_t n);

/**
 * `runsc @p args` (a `run --detach`, or a `restore --detach` when
 * @p restored) with procd's channel as the container's stdio (fresh
 * pipes), then wait for procd's hello — or, @p restored, attach to the
 * procd of the image (s0__gv_pd_attach()) — g->procd set.
 * @retval S0_EUNAVAILABLE runsc failed, or `procd_not_ready`.
 */
int s0__gv_init_run(s0__rt_gen *g, const char *const *args, bool restored, s0_error **err);

/**
 * Run `runsc --root R <global flags> ARGS…` to its end (timeout in ms),
 * output in @p res (caller clears).
 * @retval S0_EUNAVAILABLE `runtime_unavailable` when runsc fails (exit code
 *         and stderr in the message) unless @p may_fail.
 */
int s0__gv_runsc(s0__rt_host *h, const char *const *args, int64_t timeout_ms, bool may_fail,
                 s0__gv_result *res, s0_error **err);

/**
 * s0__gv_runsc() with `run` started in carrier @p in's mount namespace
 * (nullable: the host's), where the root tree is mounted.
 */
int s0__gv_runsc_in(s0__rt_host *h, const s0__carrier *in, const char *const *args,
                    int64_t timeout_ms, bool may_fail, s0__gv_result *res, s0_error **err);

/**
 * s0__gv_runsc_in() with `run`'s stdin on @p in_fd and stdout on @p out_fd
 * (borrowed; -1: /dev/null): the container's init gets them (gv_procd.h).
 */
int s0__gv_runsc_io(s0__rt_host *h, const s0__carrier *in, const char *const *args, int in_fd,
                    int out_fd, int64_t timeout_ms, bool may_fail, s0__gv_result *res,
                    s0_error **err);

/**
 * The argv (NULL-terminated; free with s0__gv_argv_free) of `runsc exec` of
 * @p cmd in generation @p g, with @p cwd (nullable) and @p env (KEY=VALUE,
 * nullable, NULL-terminated) added to the sandbox's env_vars.
 */
char **s0__gv_exec_argv(s0__rt_gen *g, const char *cwd, char *const *env, char *const *cmd);
void s0__gv_argv_free(char **v);

/** Check the ephemeral mount paths of @p r. @retval S0_EINVAL naming a bad one. */
int s0__gv_bundle_check(const s0__rt_start *r, s0_error **err);

/**
 * Write generation @p g's OCI bundle (config.json) for start request @p r.
 * @retval S0_EINVAL a bad ephemeral path. @retval S0_EIO
 */
int s0__gv_bundle_write(s0__rt_gen *g, const s0__rt_start *r, s0_error **err);

/**
 * Mount a host tmpfs for /tmp and each ephemeral mount of @p r under
 * <bundle>/rt (g->rt_*). On failure what was mounted stays listed for
 * s0__gv_tmpfs_drop(). @retval S0_EIO
 */
int s0__gv_tmpfs_make(s0__rt_gen *g, const s0__rt_start *r, s0_error **err);
/** Unmount and forget them. */
void s0__gv_tmpfs_drop(s0__rt_gen *g);
/** Whether a mount point at or under @p prefix exists; @p what names it. */
bool s0__gv_mount_under(const char *prefix, char *what, size_t n);

/** Whether any cgroup of runtime @p id is present; @p what names the first found. */
bool s0__gv_cgroup_present(const char *id, char *what, size_t n);
/** Remove the cgroups of runtime @p id (killing what is left in them). */
void s0__gv_cgroup_remove(const char *id);
/** Remove the empty parent cgroups (S0__GV_CGROUP_PARENT); busy ones stay. */
void s0__gv_cgroup_parent_remove(void);

/**
 * The root tree of sandbox @p sandbox_id: <dir>/roots/<id>, made on first
 * use from the template tree. @param[out] out (transfer full) its path.
 * @retval S0_EIO
 */
int s0__gv_root_attach(s0__rt_host *h, const char *sandbox_id, char **out, s0_error **err);

/** Flush what the root tree holds to its storage (syncfs). */
int s0__gv_root_sync(const char *root, s0_error **err);

/** A new contexts table of @p g. NULL when OOM. */
struct s0__gv_ctxs *s0__gv_ctxs_new(s0__rt_gen *g);
/** End every context's process and free the table. NULL-safe. */
void s0__gv_ctxs_free(struct s0__gv_ctxs *t);
/** A contexts call (runtime.h proc_call, S0__RT_CTX_* only). */
int s0__gv_ctx_call(struct s0__gv_ctxs *t, const s0__rt_proc_call *call, cJSON **data_out,
                    int *status_out, s0_error **err);
/**
 * The S0__RT_CTX_STREAM answer for a context whose output is @p out and
 * @p err (gv_ctx_stream.c), after the request @p body's cursor. A cursor
 * is a byte offset counted from the first byte ever written: the buffers
 * hold the bytes from @p base (base[0] stdout, base[1] stderr) on; a
 * cursor before a base skips to it, one past the end starts again at the
 * base. NULL @p base: both 0.
 * @return (transfer full) or NULL when out of memory.
 */
cJSON *s0__gv_ctx_stream_render(const s0__buf *out, const s0__buf *err, const int64_t *base,
                                const cJSON *body, bool ended, int exit_code, const char *state);
/**
 * Append @p len bytes of @p data to a REPL's stream transcript @p log
 * (gv_ctx_stream.c), keeping its last 1 MiB: the oldest bytes dropped (at
 * a UTF-8 character start) move @p *base past them.
 * @return S0_OK, or S0_ENOMEM (the transcript unchanged).
 */
int s0__gv_ctx_log_add(s0__buf *log, int64_t *base, const char *data, size_t len);
/** Whether a REPL @p alias ("python", "python3") runs the Python REPL (gv_ctx_py.c). */
bool s0__gv_ctx_py_alias(const char *alias);
/** The Python REPL's argv (static; NULL-terminated). */
char *const *s0__gv_ctx_py_argv(void);
/**
 * One exec of @p code for the Python REPL, framed by the marker line
 * @p mark (no newline inside) before and after it.
 * @return (transfer full) or NULL when out of memory.
 */
char *s0__gv_ctx_py_block(const char *code, const char *mark);
/**
 * The table as text for a memory image (gv_checkpoint.c): every context
 * whose process runs, with procd's id and PID of it. NULL when a contexts
 * call holds the table (never waits: those contexts are then not carried)
 * or out of memory. @return (transfer full) free().
 */
char *s0__gv_ctxs_save(struct s0__gv_ctxs *t);
/**
 * Re-create the contexts of @p saved (s0__gv_ctxs_save(), nullable: none)
 * after a restore, each bound to its process procd still runs
 * (s0__gv_pp_adopt() on g->procd): same ids, a REPL's shell with its state.
 * @retval S0_ECORRUPT a damaged record. @retval S0_EUNAVAILABLE `procd_gone`.
 */
int s0__gv_ctxs_adopt(struct s0__gv_ctxs *t, const char *saved, s0_error **err);
/**
 * Number of contexts whose process runs (inspection, called under the
 * engine's lock): -1 while a contexts call holds the table (never waits).
 */
int s0__gv_ctxs_running(struct s0__gv_ctxs *t);

#endif
