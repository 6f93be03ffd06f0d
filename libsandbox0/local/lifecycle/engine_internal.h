/* Internal state of the lifecycle engine, shared by the lifecycle sources. */
#ifndef S0_ENGINE_INTERNAL_H
#define S0_ENGINE_INTERNAL_H

#include <pthread.h>

#include "local/lifecycle/engine.h"
#include "local/lifecycle/faults.h"
#include "local/lifecycle/node.h"
#include "local/lifecycle/optxn.h"
#include "local/lifecycle/storage.h"
#include "local/lifecycle/watch.h"
#include "local/meta/meta.h"

typedef struct s0__engine_options {
	s0_clock clock;
	int64_t node_cpu_millis, node_memory_bytes;
	int32_t warm_carriers, max_active_runtimes;
	uint64_t rootfs_size_bytes;
	bool manual_clock; /* time moves only when told: no periodic passes */
	bool no_memory;    /* no memory checkpoints in this deployment (MEM-02) */
	uint64_t memory_image_limit_bytes; /* per-image admission limit; 0 = default */
	int64_t run_limit_ms; /* longest continuous run of a generation; 0 = none (runlimit.c) */
	bool no_webhook_outbox; /* no durable webhook outbox (MFB-15) */
	const char *runtime;    /* runtime driver name (runtime/runtime.h), read by open
	                         * only; NULL = "sim" */
	const char *object_store; /* backend name (static, objects/backends.h), or a store URL
	                             (borrowed, read during the open only); NULL = recorded */
	const char *key_file;     /* installation key file (borrowed, read during the open
	                             only); NULL = <dir>/installation.key */
	const char *meta; /* metadata store URL (postgres://…), read by open only; NULL = SQLite */
	const char *advertise; /* this node's URL for other nodes (the engine's copy; NULL = none) */
	int64_t lease_ms;      /* node lease length (fence.c); 0 at open = 30000 */
} s0__engine_options;

/* A per-sandbox lifecycle lock (in memory; rebuilt on manager restart). */
typedef struct s0__sblock {
	char id[S0__ID_MAX];
	pthread_mutex_t mu;
	int refs;
	struct s0__sblock *next;
} s0__sblock;

/* A wake-up (auto-resume) in progress or its recent failure. */
typedef struct s0__wake {
	char id[S0__ID_MAX];
	bool running;        /* a wake thread is resuming the sandbox */
	int attempt;         /* number of the latest attempt */
	int failed_attempt;  /* number of the latest failed attempt */
	struct s0__wake *next;
} s0__wake;

/* The supervised sessions of one sandbox (made by the runtime driver,
 * runtime/runtime.h): kept by the engine across runtime generations, freed
 * with the sandbox. */
typedef struct s0__sesreg {
	char id[S0__ID_MAX];
	struct s0__sessions *s;
	struct s0__sesreg *next;
} s0__sesreg;

/* The node agent model (nodeagent.c; REC-04, REC-06). Under e->mu. */
typedef struct s0__ctld {
	int primary;              /* 0: instance "a" is primary, 1: "b" */
	int64_t epoch;            /* promotions ever (durable, kv "ctld_epoch") */
	int64_t promotions;       /* promotions by this process */
	int64_t journaled;        /* node operations recorded in the journal */
	int64_t journal_replays;  /* node operations answered from the journal */
	char uid[S0__ID_MAX];     /* durable node UID */
	int64_t incarnation;      /* boot incarnation (durable) */
	int64_t reboots, successor_boots, boot_rejections;
} s0__ctld;

typedef struct s0__memprep s0__memprep;
struct s0__ckpt;
struct s0__ckpt_budget;
struct s0__rt_fp;

/* This node's lease in the metadata store (fence.c; meta.h "nodes and
 * fencing"). mu orders acquisitions, renewals and claims (request threads
 * and the controller) and is never held with e->mu; the counters are
 * atomic so inspection reads them under e->mu without it. */
typedef struct s0__fence {
	pthread_mutex_t mu;
	_Atomic int64_t epoch; /* the held epoch, 0 before the first acquisition */
	int64_t renewed_mono;  /* monotonic ms of the last acquisition or renewal (mu) */
	_Atomic int64_t renewals, reacquisitions;
	/* monotonic ms until which the held lease is proven: the send time of
	 * the last acquisition or renewal the store answered, plus the lease */
	_Atomic int64_t valid_mono;
	_Atomic int64_t renew_failures;  /* renewals the store did not answer */
	_Atomic int64_t self_fenced;     /* runtimes halted for want of a renewal (lease.c) */
	_Atomic int64_t self_fenced_at;  /* wall ms of the latest such halt (0 = none) */
	_Atomic int64_t refused;         /* transactions the fencing check refused */
	/* the lease threads (lease.c): a renewer and a watchdog, stopped by stop */
	pthread_mutex_t tmu;
	pthread_cond_t tcv;
	bool stop, threads;
	pthread_t renewer, watchdog;
	int64_t scanned_mono;  /* monotonic ms of the last failover scan (controller only) */
	int64_t held_since_mono; /* monotonic ms of the last acquisition (mu) */
	int64_t takeovers;     /* sandboxes taken over from lapsed nodes (e->mu) */
	int64_t superseded;    /* runtimes here halted: another node took them over (e->mu) */
	int64_t reacq_seen;    /* reacquisitions the failover scan has handled (controller) */
} s0__fence;

struct s0__engine {
	char *dir;
	s0__meta *meta;
	s0__storage *storage;
	s0__faults *faults;
	s0__node node;
	s0__ctld ctld;
	s0__fence fence;
	s0__engine_options opt;

	pthread_mutex_t mu; /* node, locks, wakes, queue, counters */
	pthread_cond_t cv;  /* controller wake-ups and quiesce */
	s0__sblock *locks;
	s0__wake *wakes;
	pthread_t controller;
	bool controller_running, stopping;
	int kicks;  /* pending controller passes */
	int busy;   /* controller passes in progress */
	bool retry_pending; /* an operation is waiting on a fault or a retry */
	bool gc_wanted;     /* a delete freed blocks: collect on the next pass */
	int wake_threads;   /* detached auto-resume threads still running (close waits) */
	int64_t seq;
	s0__sesreg *sesregs; /* under mu */
	struct s0__ckpt *ckpt;          /* memory checkpoints (memory.c) */
	struct s0__ckpt_budget *budget; /* their upload reservation */
	bool budget_held;               /* upload_budget_hold applied (under mu) */
	s0__memprep *mempreps;          /* captures in flight (under mu) */
	struct s0__webhooks *webhooks;  /* webhook outbox (webhook.c) */
	const s0__rt_driver *rt_drv;    /* the runtime driver (runtime_start.c) */
	s0__rt_host *rt_host;           /* ... opened for this engine */
	uint32_t rt_caps;               /* its capabilities (s0__rt_caps) */
	bool rt_auto;                   /* chosen by "auto" (runtime_start.c) */
	char rt_why[512];               /* ... why not another: "" when none failed */
	s0__engine_watch *watch;        /* change notification (watch.h) */
};

/*
 * Open the runtime driver named by e->opt.runtime (runtime_start.c).
 * S0_EINVAL naming an unknown runtime; S0_EUNAVAILABLE when it cannot run
 * here (its probe's reason). Closing is NULL-safe and idempotent.
 */
int s0__engine_rt_open(s0__engine *e, s0_error **err);
void s0__engine_rt_close(s0__engine *e);

/* Time on the engine clock. */
int64_t s0__engine_now(s0__engine *e);

/* Per-sandbox lock: serialises lifecycle transitions of one sandbox. */
s0__sblock *s0__engine_lock(s0__engine *e, const char *id);
void s0__engine_unlock(s0__engine *e, s0__sblock *l);

/* Fresh ids: "sb_" + 12 random base32 chars, "rt_…", "snap_…". */
void s0__engine_new_id(const char *prefix, char *out, size_t n);

/* Ask the controller to run a pass soon (pending operations, TTLs). */
void s0__engine_kick(s0__engine *e);
/* One controller pass: run due TTLs and pending operations (any thread). */
void s0__engine_controller_pass(s0__engine *e);

/* Sandbox lookup by team: S0_ENOTFOUND with the wire message. */
int s0__engine_load(s0__engine *e, const char *team, const char *id, s0__sandbox_row *row,
                    s0_error **err);
/* s0__engine_load(), and S0_ENOTFOUND (the same wire message) for a
 * sandbox being deleted; row is filled either way when found (the caller
 * clears it). */
int s0__engine_load_live(s0__engine *e, const char *team, const char *id, s0__sandbox_row *row,
                         s0_error **err);
/* Persist a row (updated_at is set to now). */
int s0__engine_save(s0__engine *e, s0__sandbox_row *row, s0_error **err);

/*
 * Start a runtime for a sandbox row on its head (claim, resume, recovery):
 * carrier + capacity lease, attach, readiness; on success fills row's
 * runtime_id / generation+1 / status running and returns the runtime.
 * Nothing stays leased on failure (S0_EUNAVAILABLE with the reason).
 */
int s0__engine_start_runtime(s0__engine *e, s0__sandbox_row *row, const char *ephemeral_json,
                             s0__runtime **out, s0_error **err);
/*
 * The same, restoring the memory image mem_image (hex, nullable) when it
 * matches row's head and this carrier (*restored_out tells); an image that
 * cannot be used gives fresh processes. S0_ERESUME restore_failed: the
 * restore failed after its authorisation; the target was reclaimed and
 * row's generation consumed.
 */
int s0__engine_start_runtime_mem(s0__engine *e, s0__sandbox_row *row, const char *ephemeral_json,
                                 const char *mem_image, bool *restored_out, s0__runtime **out,
                                 s0_error **err);
/* (S0_ERESUME from it: a restore failed after its authorisation; *out is
 * the halted target, whose leases stay until its terminal proof.) */
/* Stop a runtime (volume dropped) and return its leases. */
void s0__engine_stop_runtime(s0__engine *e, s0__runtime *rt);
/*
 * Halt a runtime: fence it, let pinned requests finish, drop its process
 * state, tmpfs and writable branch (unpublished); its leases stay until
 * s0__engine_release_runtime() after the terminal proof. Idempotent;
 * returns true when this call halted it.
 */
bool s0__engine_halt_runtime(s0__engine *e, s0__runtime *rt);
/* Stop a fenced runtime's generation but keep its volume and leases: a
 * S0__RT_CAP_KERNEL_FS runtime before its branch is published (pause). */
void s0__engine_quiesce_runtime(s0__engine *e, s0__runtime *rt);
/* Return a halted runtime's leases and forget it (frees rt). */
void s0__engine_release_runtime(s0__engine *e, s0__runtime *rt);
/* JSON array of strings -> malloc'd vector (NULL/"" = empty); 0 or -1 (OOM/bad). */
int s0__strv_from_json(const char *json, char ***out, size_t *n);
void s0__strv_free(char **v, size_t n);
/* Template ephemeral mounts (mounts.c): paths and size limits (0 = none). */
typedef struct s0__mounts {
	char **paths;
	uint64_t *limits;
	size_t n;
} s0__mounts;
void s0__mounts_free(s0__mounts *m);
/* From a template spec object: ephemeral_mounts, ephemeralMounts or
 * pod.emptyDirMounts ([{mountPath, sizeLimit}]). S0_EINVAL bad_request. */
int s0__mounts_from_spec(const cJSON *spec, s0__mounts *out, s0_error **err);
/* From the stored JSON (strings or {path, size_limit_bytes}). S0_ECORRUPT
 * `corrupt` when the stored text is not such a list (damaged metadata),
 * S0_ENOMEM; *out is empty after a failure. */
int s0__mounts_from_json(const char *json, s0__mounts *out, s0_error **err);
/* To the stored JSON (malloc'd; NULL on OOM). */
char *s0__mounts_to_json(const s0__mounts *m);
/* Ephemeral mounts JSON of a template (malloc'd, "[]" when none). */
char *s0__engine_template_mounts(s0__engine *e, const char *template_id);

/* Pause executor: advance one durable pause operation as far as it goes. */
int s0__engine_run_pause(s0__engine *e, s0__op_row *op);
/* One pass of a pause operation with the sandbox lock held (resume joins it). */
int s0__engine_pause_step_locked(s0__engine *e, s0__op_row *op);
/* Replacement of a failed memory restore (resume.c, S0__OP_RESUME_FALLBACK). */
int s0__engine_run_fallback(s0__engine *e, s0__op_row *op);
int s0__engine_fallback_step_locked(s0__engine *e, s0__op_row *op);
/* Recovery executor (recover.c): advance a S0__OP_RECOVER operation. */
int s0__engine_run_recover(s0__engine *e, s0__op_row *op);
int s0__engine_recover_step_locked(s0__engine *e, s0__op_row *op);
/* The done step of a recovery or a fallback (recover.c): start a runtime
 * for next (a copy of the sandbox row) on its head, then commit next with
 * op done in one transaction; a failed commit stops the runtime again.
 * *placed tells whether the start succeeded (next's generation is consumed
 * either way). Sandbox lock held. */
int s0__engine_replace_runtime(s0__engine *e, s0__op_row *op, s0__sandbox_row *next,
                               bool *placed);
/* Crash the runtimes a `runtime_crash` fault names (controller pass). */
void s0__engine_crash_scan(s0__engine *e);
/* Reopen: recover a sandbox whose runtime died with the previous process. */
void s0__engine_recover_after_restart(s0__engine *e, const char *id);
/* How long a resume waits for an in-flight pause to commit (engine clock). */
#define S0__RESUME_WAIT_MS 45000
/* Delete executor: reclaim runtime and identity of a sandbox. */
int s0__engine_run_delete(s0__engine *e, s0__op_row *op);
/* Delete with an operation kind (S0__OP_DELETE, S0__OP_HARD_DELETE); team NULL = any. */
int s0__engine_delete_kind(s0__engine *e, const char *team, const char *id, s0__op_kind kind,
                           s0_error **err);
/* TTL scan: soft TTL pauses and hard TTL deletes that are due. */
void s0__engine_ttl_scan(s0__engine *e);
/* Record the soft timeout's planned filesystem pause of a running sandbox
 * (sandbox lock held; nothing when an operation is in flight). */
void s0__engine_request_timeout_pause(s0__engine *e, s0__sandbox_row *row);
/* The continuous-run limit: run each over-long generation's timeout action (runlimit.c). */
void s0__engine_run_limit_scan(s0__engine *e);
/* Inspection: "retained_bytes" of the committed head and of each snapshot
 * (as "snapshots": [{id, generation, retained_bytes}]) into s (inspect_usage.c). */
void s0__engine_inspect_usage(s0__engine *e, cJSON *s, const s0__sandbox_row *row);

/* Config validation and normalisation (claim and update). */
int s0__config_apply(const cJSON *cfg, bool update, s0__sandbox_row *row, int64_t now,
                     s0_error **err);

/* procs.c: the sessions registry of a sandbox (created on first use with
 * the given generation; NULL only when OOM), and its removal (delete). */
struct s0__sessions *s0__engine_sessions(s0__engine *e, const char *id, int64_t generation);
/* The registry if one exists, held or stored (loaded then); NULL otherwise. */
struct s0__sessions *s0__engine_sessions_find(s0__engine *e, const char *id);
/* The registry this process holds (never loads); NULL otherwise. */
struct s0__sessions *s0__engine_sessions_held(s0__engine *e, const char *id);
/* sessions_store.c (and s0__engine_sessions_save in engine.h): load a
 * stored registry (NULL when none or damaged); save every held one. */
struct s0__sessions *s0__engine_sessions_load(s0__engine *e, const char *id);
void s0__engine_sessions_save_all(s0__engine *e);
void s0__engine_sessions_drop(s0__engine *e, const char *id);
/* Replace a sandbox's registry (memory restore carried one); takes s. */
void s0__engine_sessions_set(s0__engine *e, const char *id, struct s0__sessions *s);
/* Free every registry (close, manager restart). */
void s0__engine_sessions_free_all(s0__engine *e);
/* network.c: compile config.network and apply it to a runtime generation
 * through its driver (fault `network_policy` → S0_EUNAVAILABLE, nothing
 * applied). */
int s0__engine_apply_network(s0__engine *e, const char *config_json, s0__runtime *rt,
                             s0_error **err);
/* Re-apply the stored policy to row's running generation, if any (update). */
void s0__engine_reapply_network(s0__engine *e, const s0__sandbox_row *row);
/* Catch the runtime's guest up with the engine clock (drivers with
 * S0__RT_CAP_VIRTUAL_TIME; a no-op otherwise and once halted). */
void s0__engine_guest_sync(s0__engine *e, s0__runtime *rt);

/* memory.c: checkpoint engine, budget, fault hooks, image GC roots. */
int s0__engine_mem_init(s0__engine *e, s0_error **err);
void s0__engine_mem_close(s0__engine *e);
/* The destination fingerprint of a sandbox on this node. */
void s0__engine_fingerprint(s0__engine *e, const s0__sandbox_row *row, struct s0__rt_fp *fp);
/* CPU and memory of a sandbox's resources. */
void s0__engine_resources(const s0__sandbox_row *row, int64_t *cpu, int64_t *mem);
/* Prepare and authorise a memory capture of rt (pause request). Errors:
 * S0_ECONFLICT image_too_large, S0_EUNAVAILABLE reservation_unavailable /
 * preparation_expired: nothing reserved. An authorisation failure is kept
 * and reported by the capture (S0_OK here). */
int s0__engine_mem_prepare(s0__engine *e, const char *id, s0__runtime *rt,
                           s0_cancel_token *cancel, s0_error **err);
/* Capture the fenced runtime's guest for op into an image matching gen;
 * S0_EMEMCAPTURE when it failed (or was uncertain): never retried. */
int s0__engine_mem_capture(s0__engine *e, const s0__op_row *op, s0__runtime *rt, const char *gen,
                           char *image_hex);
/* Memory facts for inspection: reservation usage, counters, retained images. */
struct cJSON *s0__engine_mem_inspect(s0__engine *e);
/* Capture a running fork parent for a memory fork (memory.c; MEM-13). */
int s0__engine_mem_fork_capture(s0__engine *e, const s0__sandbox_row *row, s0__runtime *rt,
                                char gen[S0__GEN_MAX], char *image_hex,
                                bool *recorded, s0_error **err);
/* Release the reservation of a sandbox's capture (after the terminal proof). */
void s0__engine_mem_finish(s0__engine *e, const char *id);
/* Before a memory pause stops rt (S0__RT_CAP_KERNEL_FS): the driver takes
 * the image now (image.h seal()); a failure fails the capture (MFB-07). */
void s0__engine_mem_seal(s0__engine *e, const char *id, s0__runtime *rt);

/* nodeagent.c: load or create the node identity and count a boot (open). */
int s0__ctld_init(s0__engine *e, s0_error **err);

/* ---- several nodes on one store (cluster.c) ---- */
/* This node's id from dir/node-id, made (durably) on the first open from
 * legacy (an id an older data directory kept; nullable) or at random.
 * S0_ECORRUPT when the file holds no node id; S0_EIO. */
int s0__engine_node_id_load(const char *dir, const char *legacy, char uid[S0__ID_MAX],
                            s0_error **err);
/* Record this node's advertised URL (kv "node:<id>:advertise") at open. */
int s0__engine_advertise_open(s0__engine *e, s0_error **err);
/* Wake this node's waiters on changes other nodes commit (the store's
 * change feed, s0__meta_listen); at open, after the store and the watch. */
int s0__engine_listen_open(s0__engine *e, s0_error **err);
/* Whether this node acts on the sandbox's operations: its generation is
 * this node's, released, or never claimed (false also when the store
 * cannot be read). */
bool s0__engine_acts_on(s0__engine *e, const char *sandbox_id);
/* An s0__op_step write: release this node's claim of op's sandbox. */
int s0__engine_release_claim(s0__engine *e, s0__op_row *op, void *ctx, s0_error **err);
/* Take over the sandboxes of nodes whose lease lapsed (controller; at most
 * every third of a lease). */
void s0__engine_failover_scan(s0__engine *e);
/* A lifecycle request's look at who holds id's generation (its lock
 * held; blocks on the store): S0_OK when it is this node's, released or
 * never claimed, or held by a node whose lease lapsed and taken over here
 * on the spot (the failover scan's takeover, same claim and fencing; only
 * by a node steady in its lease), and also when a live node holds it (its
 * claim then decides). S0_EUNAVAILABLE `unavailable` with a retry after
 * 1 s when the takeover cannot happen yet; a store error as is. */
int s0__engine_take_over_now(s0__engine *e, const char *id, s0_error **err);
/* recover.c's restart recovery of one sandbox, its lock held. */
void s0__engine_recover_locked(s0__engine *e, const char *id);

/* ---- the node's lease and generation claims (fence.c) ---- */
/* Take this node's lease (the node UID of ctld; a new epoch fences any
 * earlier holder). At open, after s0__ctld_init; fence.mu is initialised
 * with the engine and destroyed with it. */
int s0__engine_fence_open(s0__engine *e, s0_error **err);
/* Renew the lease now if a third of its time has passed (force: now); a
 * lease lost meanwhile is taken again. S0_OK or the store's error. Blocks
 * on the store; takes fence.mu. */
int s0__engine_fence_renew(s0__engine *e, bool force, s0_error **err);
/* The fencing check of a transaction that changes sandbox_id, inside it
 * (s0__meta_gen_check with this node's id and epoch; generation: the one
 * the step acts on). Counts refusals (node.identity.stale_refused). */
int s0__engine_fence_check(s0__engine *e, const char *sandbox_id, int64_t generation,
                           s0_error **err);
/* s0__engine_save in a transaction of its own behind the fencing check
 * (a resume's commit): S0_ECONFLICT node_lease_lost/generation_owned and
 * nothing written when this node no longer owns the sandbox. */
int s0__engine_save_fenced(s0__engine *e, s0__sandbox_row *row, int64_t generation,
                           s0_error **err);
/* The lease threads (lease.c): a renewer every third of the lease (more
 * often after a failure), and a watchdog that halts every running runtime
 * once the lease is no longer proven for a quarter of it (the fencing
 * rule, docs/scaling.md "Leases"). Start after s0__engine_fence_open; stop
 * is idempotent and joins both (before the metadata store closes). */
int s0__engine_lease_start(s0__engine *e, s0_error **err);
void s0__engine_lease_stop(s0__engine *e);
/* Whether the lease is proven now (the watchdog's rule). */
bool s0__engine_lease_valid(s0__engine *e);
/* The controller's half (failover scan): once the lease is proven again,
 * each runtime the watchdog halted is given up if another node took its
 * sandbox over, else recovered from its last committed head. */
void s0__engine_lease_recover(s0__engine *e);
/* Whether any runtime here was halted by the watchdog and awaits that. */
bool s0__engine_lease_fenced_any(s0__engine *e);
/* Lock a sandbox only if nobody holds it (NULL when busy or out of memory). */
s0__sblock *s0__engine_trylock(s0__engine *e, const char *id);
/* Claim generation of sandbox_id for this node before it starts: S0_OK,
 * or S0_ECONFLICT generation_owned (another node's) / the store's error.
 * A lease this node lost is taken again once (the data directory's lock
 * makes this process the node). */
int s0__engine_fence_claim(s0__engine *e, const char *sandbox_id, int64_t generation,
                           s0_error **err);
/* The node-operation journal: whether (op, step) is recorded (result
 * copied, nullable), and recording it. */
bool s0__ctld_journal_get(s0__engine *e, int64_t op_id, const char *step, char *result, size_t n);
int s0__ctld_journal_put(s0__engine *e, int64_t op_id, const char *step, const char *result);
/* Hit `ctld_primary_fail@step`: true when the primary died (the standby is
 * now promoted and the caller must retry). */
bool s0__ctld_primary_fails(s0__engine *e, const char *step);
/* Hit `node_reboot@step`: true when the node rebooted (old runtimes gone). */
bool s0__ctld_reboot_hit(s0__engine *e, const char *step);
/* The node rebooted and no authenticated successor has reconciled it. */
bool s0__ctld_node_down(s0__engine *e);
/* Inspection: node.ctld and node.identity (caller holds e->mu). */
void s0__ctld_json(s0__engine *e, struct cJSON *node);

/* Wake bookkeeping for auto-resume (under e->mu); NULL only when OOM. */
s0__wake *s0__engine_wake_get(s0__engine *e, const char *id);

/* The runtime pinned by a runtime access. */
s0__runtime *s0__runtime_access_runtime(s0__runtime_access *a);
/* The engine of a runtime access. */
s0__engine *s0__runtime_access_engine(s0__runtime_access *a);

#endif
