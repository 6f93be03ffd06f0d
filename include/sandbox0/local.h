/**
 * @file sandbox0/local.h
 * @brief The embedded local reference backend (docs/architecture.md; docs/decisions.md).
 *
 * An ::s0_local is a single-node, in-process implementation of the Sandbox0
 * server side described by the product document "Pause And Resume": a
 * durable lifecycle engine (SQLite), a copy-on-write block store holding
 * each sandbox's ext4 RootFS, a simulated runtime, TTLs, auto-resume,
 * snapshots, fork, restore and named fault points. Reach it through the
 * ordinary client API with s0_client_new_local(), or over HTTP with
 * `s0 serve` (sandbox0/server.h).
 *
 * The runtime is simulated and says so: processes, carriers and capacity
 * are modelled in memory; the RootFS, snapshots and durability are real.
 *
 * @threadsafety An ::s0_local is thread-safe. One process may open a data
 * directory at a time (docs/decisions.md "One opener per data directory").
 */
#ifndef SANDBOX0_LOCAL_H
#define SANDBOX0_LOCAL_H

#include <stdbool.h>
#include "sandbox0/client.h"
#include "sandbox0/clock.h"
#include "sandbox0/common.h"

/** @brief An open local backend. */
typedef struct s0_local s0_local;

/**
 * Backend options. Zero fields take the defaults given.
 * @options[version] S0_LOCAL_OPTIONS_VERSION
 * @options[init_function] s0_local_options_init
 */
typedef struct s0_local_options {
	uint32_t version; /**< S0_LOCAL_OPTIONS_VERSION */
	/**
	 * Non-zero: the backend runs on its own manual clock, starting at
	 * manual_clock_start_unix_ms (0 = now), or at the latest time the data
	 * directory recorded when that is later: a reopened backend's clock
	 * never goes back. Time then moves only through
	 * s0_local_clock_advance() and through waits of clients made by
	 * s0_client_new_local(), which advance it virtually (tests).
	 */
	int32_t manual_clock;
	int64_t manual_clock_start_unix_ms; /**< see manual_clock */
	/** Clock to use when manual_clock is 0; NULL = the real clock (copied). */
	const s0_clock *clock;
	int64_t node_cpu_millis;     /**< node CPU capacity in millicores; 0 = 8000 */
	int64_t node_memory_bytes;   /**< node memory capacity; 0 = 16 GiB */
	int32_t warm_carriers;       /**< warm carrier pool size; 0 = 16 */
	int32_t max_active_runtimes; /**< team quota of running sandboxes; 0 = 64 */
	/** Size of the default template's RootFS in bytes; 0 = 1 GiB (sparse). */
	uint64_t rootfs_size_bytes;
	/** Team of clients made by s0_client_new_local(); NULL = "team_local". */
	const char *team_id;
	/**
	 * Emit "0001-01-01T00:00:00Z" instead of null for unset expiries (the
	 * published Python SDK's requirement, docs/wire.md §3.0); 0 = null.
	 */
	int32_t zero_time_compat;
	/**
	 * Non-zero: a deployment without memory checkpoints (the checkpoint
	 * engine is off). A memory pause answers 503 `unavailable` ("memory
	 * unavailable") and leaves the sandbox running, untouched (MEM-02); a
	 * memory resume finds no retained image and is filesystem-only; a
	 * memory fork answers 503. 0 = memory checkpoints supported.
	 * @since 0.2
	 */
	int32_t disable_memory_checkpoints;
	/**
	 * Largest memory image admitted for capture, in bytes (the per-image
	 * limit of the upload reservation); a larger one is refused at once
	 * with 409 `conflict` (reason `image_too_large`, MFB-11). 0 = 2 GiB.
	 * @since 0.2
	 */
	uint64_t memory_image_limit_bytes;
	/**
	 * Non-zero: the webhook outbox is not durable (kept in memory only).
	 * Events of sandboxes with `config.webhook` are still posted, but a
	 * memory pause of such a sandbox answers 503 `unavailable` (reason
	 * `webhook_outbox_unavailable`) and the sandbox keeps running (MFB-15).
	 * 0 = durable outbox `<data_dir>/webhook-outbox.db`: a memory pause of a
	 * webhook sandbox records `sandbox.pausing` there and authorises capture
	 * only after every delivery of that sandbox is acknowledged (2xx).
	 * @since 0.2
	 */
	int32_t disable_webhook_outbox;
	/**
	 * Runtime that runs the sandboxes, by name (borrowed; read by
	 * s0_local_open() only). NULL or "sim" = the simulated runtime: a
	 * guest with a built-in shell and virtual time, no host processes,
	 * real RootFS and tmpfs data. "gvisor" = real programs in runsc
	 * sandboxes (as root). "auto" = gvisor where it can run, else sim; the
	 * reason the others could not run is reported by /healthz and the
	 * admin inspection (node.runtime: name, requested "auto", reason). A
	 * name no runtime is registered under makes s0_local_open() fail with
	 * S0_EINVAL naming it; a runtime that cannot run on this machine fails
	 * it with S0_EUNAVAILABLE naming the missing piece. The admin
	 * inspection reports the runtime and its capabilities (node.runtime).
	 * @since 0.2
	 */
	const char *runtime;
	/**
	 * Object store backend of `<data_dir>/objects` (borrowed for the call):
	 * `"pack"` (objects appended to pack files, an SQLite catalog) or
	 * `"files"` (one file per object), or an S3-compatible bucket by its URL,
	 * `"s3://BUCKET[/PREFIX]?endpoint=http://HOST:PORT[&region=R][&cache_mb=N]"`
	 * (credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, never
	 * in the URL; `<data_dir>/objects` then holds the local read cache, and
	 * every open of such a data directory names the URL again, else
	 * ::S0_EINVAL reason `object_store_url_needed`). NULL = the backend the
	 * data directory records, `"pack"` for a new one. A data directory keeps
	 * the backend it was created with: naming another makes s0_local_open()
	 * fail with ::S0_EINVAL, reason `object_store_mismatch`, and change
	 * nothing; an unknown name fails with reason `object_store_unknown`, a
	 * malformed URL with `object_store_url`, missing credentials with
	 * `object_store_credentials`; refused credentials fail the open with
	 * ::S0_EAUTH (reason `object_store_auth`), an unreachable endpoint with
	 * ::S0_EUNAVAILABLE (reason `object_store`).
	 * @since 0.2
	 */
	const char *object_store;
	/**
	 * Longest continuous run of one runtime generation, in milliseconds
	 * (the UCloud document's 24 h limit is 86,400,000); 0 = no limit (the
	 * Sandbox0 contract has none), negative = S0_EINVAL. When a generation
	 * has run this long without a pause, the sandbox's timeout action runs:
	 * the planned filesystem-only pause, or the delete of a sandbox whose
	 * timeout is a hard deadline (no soft TTL, a hard TTL: the UCloud-style
	 * lifecycle `on_timeout: "kill"`). A resume starts
	 * a new generation, so the count starts again. Checked by the
	 * controller's passes (on the manual clock: when it is advanced).
	 * @since 0.3
	 */
	int64_t continuous_run_limit_ms;
	/**
	 * Metadata store (borrowed; read by s0_local_open() only). NULL or ""
	 * = SQLite, `<data_dir>/meta.db`. A `postgres://` or `postgresql://`
	 * URL = that PostgreSQL database (libpq syntax; the password from the
	 * URL or the environment, `PGPASSWORD`/`~/.pgpass`, and never shown in
	 * messages or logs): every table of the backend lives there, created
	 * and migrated on open, and the data directory keeps the objects, the
	 * installation key and the per-node webhook outbox. Anything else fails
	 * the open with ::S0_EINVAL, reason `bad_meta_url`; a database that
	 * cannot be reached fails it with ::S0_EUNAVAILABLE, reason
	 * `meta_unavailable`. docs/postgres.md describes the deployment.
	 * @since 0.2
	 */
	const char *meta;
	/**
	 * Installation key file (borrowed for the call): the 32-byte secret
	 * every object's id and key derive from. NULL = `<data_dir>/installation.key`.
	 * Nodes that share one object store must all be pointed at one key
	 * file (a copy of the same bytes, mode 0600); it is created (random,
	 * 0600) when missing. A file of another size fails the open with
	 * ::S0_ECORRUPT, one readable by group or others with ::S0_EINVAL.
	 * @since 0.2
	 */
	const char *key_file;
	/**
	 * This node's URL for the other nodes of one metadata store (borrowed
	 * for the call), e.g. `http://10.0.0.5:8080`: a node that receives a
	 * call for a sandbox running here forwards it to this address over the
	 * node channel (docs/scaling.md "Several nodes"). NULL = none: calls
	 * for this node's sandboxes that reach another node answer 503.
	 * @since 0.2
	 */
	const char *advertise_url;
	/**
	 * Length of this node's lease in the metadata store, in ms; renewed
	 * every third of it. Another node takes this node's sandboxes over
	 * once it lapsed (after a crash). 0 = 30000; tests use a short one.
	 * @since 0.2
	 */
	int64_t node_lease_ms;
} s0_local_options;

/** Current version of ::s0_local_options. */
#define S0_LOCAL_OPTIONS_VERSION 1
/** Static initialiser. */
#define S0_LOCAL_OPTIONS_INIT {S0_LOCAL_OPTIONS_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

S0_BEGIN_DECLS

/**
 * Initialise @p opts with defaults.
 * @retval S0_EINVAL unknown version; @p opts untouched.
 * @since 0.1
 */
S0_API int s0_local_options_init(s0_local_options *opts, uint32_t version);

/**
 * Open (creating if needed) a backend on @p data_dir: metadata in SQLite
 * (WAL), the object and block stores, a 0600 installation key, and the
 * `default` template. Reopening continues exactly where the last opener
 * stopped, including unfinished operations; branches of runtimes that were
 * running when the process died are abandoned and those sandboxes recover
 * from their last committed head (REC-01..REC-09).
 *
 * @param[in] data_dir directory (created with mode 0700 when missing).
 * @param[in] opts (nullable) options.
 * @param[out] out (transfer full) the backend; close with s0_local_close().
 * @retval S0_ECONFLICT reason `data_dir_locked`: another process holds the
 *         directory (its pid is in the message); nothing changed.
 * @retval S0_EIO the directory or its stores cannot be used.
 * @retval S0_EINVAL bad options; reason `object_store_mismatch`: the data
 *         directory was created with another object store backend
 *         (s0_local_options.object_store); nothing changed.
 * @threadsafety safe
 * @since 0.1
 */
S0_API int s0_local_open(const char *data_dir, const s0_local_options *opts, s0_local **out,
                         s0_error **err);

/**
 * Stop background work, let in-flight operations reach a durable point and
 * close the backend. Runtimes end (they live in this process). NULL is a
 * no-op. No client made on it may be used afterwards.
 * @since 0.1
 */
S0_API void s0_local_close(s0_local *local);

/**
 * A client over the backend in process (no sockets): every endpoint, wait
 * and error behaves as over HTTP. The client uses the backend's clock.
 *
 * @param[in] opts (nullable) client options; base_url, token, TLS and
 *            timeout fields are ignored.
 * @param[out] out (transfer full) the client; free before closing @p local.
 * @retval S0_EINVAL bad options.
 * @since 0.1
 */
S0_API int s0_client_new_local(s0_local *local, const s0_client_options *opts, s0_client **out,
                               s0_error **err);

/**
 * Advance the backend's manual clock by @p ms and run the controllers that
 * became due (TTL pauses, hard-TTL deletes, snapshot expiry) before
 * returning. Operations they start run on the background controller; use
 * s0_local_quiesce() to wait for them.
 * @param ms milliseconds, >= 0 (0 only runs the due controllers).
 * @retval S0_EUNSUPPORTED the backend was not opened with manual_clock.
 * @retval S0_EINVAL @p ms is negative (reason `invalid_argument`); the
 *         clock is unchanged.
 * @since 0.1
 */
S0_API int s0_local_clock_advance(s0_local *local, int64_t ms, s0_error **err);

/** The backend clock's current time in ms since the epoch. @since 0.1 */
S0_API int64_t s0_local_now_unix_ms(s0_local *local);

/**
 * Wait (in real time, up to @p timeout_ms) until no background operation
 * is runnable: queued work has finished, and what remains is held by an
 * armed fault or waiting for a retry. Tests use it instead of sleeping.
 * @retval S0_ETIMEDOUT work was still running at the timeout.
 * @since 0.1
 */
S0_API int s0_local_quiesce(s0_local *local, int64_t timeout_ms, s0_error **err);

/**
 * Simulate a manager restart (REC-05: a manager
 * restart): drop every in-memory lifecycle state and reload it from the
 * metadata store, resuming unfinished operations, while runtimes and
 * branches (the node) survive.
 * @since 0.1
 */
S0_API int s0_local_restart_manager(s0_local *local, s0_error **err);

/** Fault modes for s0_local_fault_arm(). */
typedef enum s0_fault_mode {
	S0_FAULT_FAIL = 1,  /**< the next `count` hits fail */
	S0_FAULT_HOLD = 2,  /**< hits block (or stay pending) until released */
	S0_FAULT_DELAY = 3, /**< hits wait `delay_ms` on the backend clock */
	S0_FAULT_CRASH = 4  /**< the process raises SIGKILL at the point */
} s0_fault_mode;

/**
 * Arm a named fault point (docs/behaviours.md "Fault points"); `name@step`
 * narrows a point to one step, a plain `name` matches every step. These are
 * all the points there are: any other name, or a step a point does not
 * list, is refused with S0_EINVAL and a message naming it.
 *
 * - `node_channel` (`@pause` before the seal; `@resume` at placement): the
 *   node agent is unreachable. A pause is still accepted (202 in the
 *   in-process and 202-mode servers) and retried; a resume answers 503.
 * - `object_store` (`@after-seal`: the upload after guest writes are fenced
 *   and flushed; `@attach`: a resume's attach), `meta_store` (`@intent`:
 *   the pause intent cannot be recorded, the call fails; `@commit`: the
 *   head commit is retried).
 * - `carrier`, `capacity`, `nbd_device` (each with `@resume`): placement of
 *   a new runtime fails (503, nothing leased); `network_policy`: the
 *   sandbox's network policy cannot be applied to the new runtime (503,
 *   nothing leased, the generation not consumed); `procd_not_ready`: the
 *   readiness proof fails (the target is reclaimed and its generation
 *   consumed); `resume_delay`: held or delayed before the readiness proof;
 *   `carrier@fallback` holds only the filesystem-only replacement of a
 *   failed memory restore (its durable intent stays pending).
 * - Memory checkpoints: `prepare_stall`, `upload_budget_hold`,
 *   `capture@<authorize|after-authorize|commit>`, `capture_uncertain`,
 *   `restore`; `capture@before-record` holds a finished capture before its
 *   operation record; `carrier_fingerprint@<runtime_version|platform|
 *   cpu_features>` changes that field of the carriers' fingerprint while
 *   armed.
 * - `resource_leak:<kind>` (kind: runsc, writer, mount, network,
 *   alloc_dir, lease_cgroup): while armed, the terminal proof of stopped
 *   runtimes fails, so their capacity stays reserved and pauses, deletes
 *   and crash recoveries wait (the arming mode and count do not matter).
 * - `runtime_crash` or `runtime_crash@<sandbox_id>`: the next controller
 *   pass crashes running runtimes (one per count): the writer is fenced,
 *   the unpublished branch abandoned, and a durable recovery restarts the
 *   sandbox from its last committed head after the terminal proof. The
 *   sandbox reads `starting` (or `failed` while nothing can be placed),
 *   never paused.
 * - `driver_exit`: the stop call into the runtime never answers; the
 *   reconciler proves the stop from node state instead.
 *   `alloc_record_purge`: a planned stop leaves the allocation directory
 *   behind after the scheduler record is gone.
 * - `ctld_primary_fail@<publish|commit|release>`: the node agent's primary
 *   dies after journaling that step; the standby is promoted and finishes
 *   it. `node_reboot@release`: the node reboots before a release; nothing
 *   is proven until a successor boot.
 * - `webhook_ack_delay`: a delivered webhook's acknowledgement is held.
 * - `manager_restart@<point>` with S0_FAULT_CRASH: SIGKILL at a lifecycle
 *   crash point (intent-recorded, published, committed, released, fallback-recorded,
 *   delete-recorded, delete-reclaimed, resume-ready, recover-recorded,
 *   recover-released). Storage crash points (publish.*, objects.*) are
 *   reached with the S0_CRASH_AT environment variable instead.
 *
 * s0_local_inspect() lists armed points with their hit counts.
 *
 * @param[in] name fault point name, `name` or `name@step` (borrowed).
 * @param[in] mode ::s0_fault_mode.
 * @param[in] count hits affected (FAIL, DELAY); 0 = until released.
 * @param[in] delay_ms for S0_FAULT_DELAY, on the backend clock.
 * @retval S0_EINVAL a name or step not in the list above, a malformed
 *         name, a bad mode or a negative count or delay; nothing is armed.
 * @since 0.1
 */
S0_API int s0_local_fault_arm(s0_local *local, const char *name, int32_t mode, int64_t count,
                              int64_t delay_ms, s0_error **err);

/**
 * Disarm a fault point and release what it holds. Unknown names are fine.
 * @since 0.1
 */
S0_API int s0_local_fault_release(s0_local *local, const char *name, s0_error **err);

/**
 * Internal facts no public endpoint shows, as JSON (docs/decisions.md "Faults
 * and inspection"): node capacity and leases, carriers, operation records,
 * generations and object counts, runtimes and their logs; under "memory"
 * the upload reservation usage (MFB-12), checkpoint counters and the
 * retained images (sandbox, image, generation; MEM-04); under
 * "node"."runtime" the runtime's name and capabilities ("memory",
 * "virtual_time", "network", "contexts", "sessions", "real_processes");
 * each runtime's guest summary (processes, procd version, restored image).
 * @param[in] sandbox_id (nullable) restrict per-sandbox facts to one.
 * @param[out] json_out (transfer full) JSON text; free with s0_free().
 * @since 0.1
 */
S0_API int s0_local_inspect(s0_local *local, const char *sandbox_id, char **json_out,
                            s0_error **err);

/**
 * Collect garbage in the block and object stores: free every block no
 * head, snapshot, template, fork or in-flight publication needs (COST-04).
 * Safe while sandboxes run, pause and fork.
 * @retval S0_ECORRUPT a live generation is damaged; nothing was deleted.
 * @retval S0_EIO the stores failed.
 * @since 0.1
 */
S0_API int s0_local_gc(s0_local *local, s0_error **err);

/**
 * Template options.
 * @options[version] S0_TEMPLATE_OPTIONS_VERSION
 */
typedef struct s0_template_options {
	uint32_t version;       /**< S0_TEMPLATE_OPTIONS_VERSION */
	uint64_t size_bytes;    /**< RootFS size; 0 = the backend default */
	/** NULL-terminated list of runtime-only mount paths (`ephemeral_mounts`). */
	const char *const *ephemeral_mounts;
} s0_template_options;
/** Current version of ::s0_template_options. */
#define S0_TEMPLATE_OPTIONS_VERSION 1
/** Static initialiser. */
#define S0_TEMPLATE_OPTIONS_INIT {S0_TEMPLATE_OPTIONS_VERSION, 0, 0}

/**
 * Build (or rebuild) template @p name from a directory tree with mke2fs -d,
 * import it into the block store once and make it claimable. Rebuilding
 * never changes the committed heads of existing sandboxes.
 *
 * @param[in] name template id (lowercase, 1..255 chars, no '/').
 * @param[in] dir (nullable) source directory; NULL = an empty tree with the
 *            standard directories (/workspace, /tmp, /var/tmp, …).
 * @param[in] opts (nullable) options.
 * @retval S0_EINVAL bad name or options. S0_EIO mke2fs or the store failed.
 * @since 0.1
 */
S0_API int s0_local_template_build(s0_local *local, const char *name, const char *dir,
                                   const s0_template_options *opts, s0_error **err);

S0_END_DECLS

#endif
