/*
 * The runtime seam (docs/architecture.md "Runtime"): what the lifecycle
 * engine needs from a carrier, as a driver vtable. The engine owns the
 * durable transaction (leases, the attached RootFS branch, the pause and
 * resume steps, faults); a driver owns what runs on that branch — one
 * runtime *generation* per start — and proves it gone.
 *
 * Drivers are registered in one table (registry.c: name → driver) and
 * chosen by name from s0_local_options.runtime (NULL = "sim"). Adding a
 * runtime is one folder under local/runtime/ plus one row of that table.
 *
 * Capabilities (s0__rt_caps) are asked, never assumed: the engine offers
 * memory pauses only with S0__RT_CAP_MEMORY, moves guest time only with
 * S0__RT_CAP_VIRTUAL_TIME, and so on.
 *
 * Generation lifecycle: start() → ready() → (commands, files, network,
 * capture…) → stop() → terminal_proof(). A handle is one generation; it is
 * freed by stop() and never reused. terminal_proof() then answers for the
 * runtime id from the resources themselves (what the generation held —
 * processes, mounts, devices, cgroups — is absent).
 *
 * Execution images (memory checkpoints, image.h): capture() hands the
 * checkpoint engine an image source (memory regions as chunks, a state
 * blob, the tmpfs) of a fenced generation, stored with a compatibility
 * fingerprint (s0__rt_fp: fingerprint() plus procd_version());
 * image_restore() rebuilds what the checkpoint engine read into a
 * s0__rt_image that start() continues. A driver without S0__RT_CAP_MEMORY
 * answers both with S0_EUNAVAILABLE `memory_unsupported`.
 *
 * Crash-safety duties of a driver: nothing it creates may outlive the
 * engine's knowledge of it — start() that fails leaves nothing behind;
 * stop() is idempotent in effect (a generation whose processes already died
 * stops cleanly); terminal_proof() checks the resources themselves, not a
 * record of them.
 *
 * @threadsafety a host is safe from any thread. Calls on one generation
 * may come from several threads (files, contexts and sessions requests
 * pinned by the engine); a driver serialises what it must. stop() is
 * called once, after the engine fenced the generation and every pinned
 * request finished.
 */
#ifndef S0_RUNTIME_RUNTIME_H
#define S0_RUNTIME_RUNTIME_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"
#include "local/fsview/router.h"
#include "local/rootfs/rootfs.h"
#include "local/runtime/image.h"
#include "local/runtime/netpolicy.h"
#include "sandbox0/clock.h"

/** Capability flags of a driver (s0__rt_driver.caps). */
enum s0__rt_caps {
	S0__RT_CAP_MEMORY = 1u << 0,         /**< execution images: memory pause, resume, fork */
	S0__RT_CAP_VIRTUAL_TIME = 1u << 1,   /**< guest time moves only through clock_sync() */
	S0__RT_CAP_NETWORK = 1u << 2,        /**< network policies are enforced */
	S0__RT_CAP_CONTEXTS = 1u << 3,       /**< contexts (docs/wire.md §8.1) through procs() */
	S0__RT_CAP_SESSIONS = 1u << 4,       /**< supervised sessions (docs/wire.md §8) */
	S0__RT_CAP_REAL_PROCESSES = 1u << 5, /**< programs run as host-kernel-backed processes */
	/**
	 * The driver mounts the RootFS branch in the kernel (s0__rt_start.dev)
	 * and owns its bytes while a generation runs: the engine keeps its
	 * libext2fs handle closed from before start() until stop() returned,
	 * and stops the generation before it publishes the branch.
	 */
	S0__RT_CAP_KERNEL_FS = 1u << 6,
};

/** Names of the capability flags, for inspection (NULL-terminated, bit order). */
extern const char *const s0__rt_cap_names[];

/**
 * Compatibility fingerprint of an execution image and of a destination
 * (docs/decisions.md "Restore of memory"). The driver fills the first three
 * and procd_version; the engine fills the sandbox's template and resources.
 */
typedef struct s0__rt_fp {
	char runtime_version[64];  /**< runtime build (e.g. "s0-sim/1", a runsc version) */
	char platform[64];         /**< e.g. "linux/x86_64" (and a runsc platform) */
	char cpu_features[256];    /**< comma-separated CPU feature set */
	char template_image[256];  /**< the sandbox's template image id */
	int64_t cpu_millis;        /**< resources: CPU */
	int64_t memory_bytes;      /**< resources: memory */
	char procd_version[64];    /**< recorded, not compared (MEM-11) */
} s0__rt_fp;

/**
 * Fill @p out with this host's platform ("linux/x86_64", from uname(2))
 * and CPU features (from the CPU), runtime_version from @p runtime_version
 * (copied, truncated), everything else zero.
 * @threadsafety safe
 */
void s0__rt_fp_host(s0__rt_fp *out, const char *runtime_version);

struct s0__sessions;

/**
 * A driver's restored execution image (image_restore()): processes and
 * tmpfs rebuilt and not yet running, for start() to continue. Opaque.
 */
typedef struct s0__rt_image s0__rt_image;

/** Contexts (docs/wire.md §8.1) and supervised sessions (§8.3) calls of proc_call(). */
enum s0__rt_proc_op {
	S0__RT_CTX_CREATE = 0, /**< body: the create request; 201 */
	S0__RT_CTX_LIST,       /**< 200 */
	S0__RT_CTX_GET,        /**< id; 200 */
	S0__RT_CTX_DELETE,     /**< id; 200 */
	S0__RT_CTX_RESTART,    /**< id; body must be empty; 200 */
	S0__RT_CTX_INPUT,      /**< id, body; 200 */
	S0__RT_CTX_EXEC,       /**< id, body; 200 */
	S0__RT_CTX_SIGNAL,     /**< id, body; 200 */
	S0__RT_CTX_RESIZE,     /**< id, body; 200 */
	S0__RT_CTX_STREAM,     /**< id, body `{cursor, max}`: output after a cursor for the
	                            context WebSocket (docs/wire.md §8.2; the sim's contexts.h
	                            s0__ctx_stream_json gives the shape); 200 */
	S0__RT_SES_CREATE,     /**< body, idempotency_key; 201 (200 for a replayed key) */
	S0__RT_SES_LIST,       /**< 200 */
	S0__RT_SES_GET,        /**< id; 200 */
	S0__RT_SES_DELETE,     /**< id; 200 */
	S0__RT_SES_DESIRED,    /**< id, body; 200 */
	S0__RT_SES_SIGNAL,     /**< id, body; 202 */
	S0__RT_SES_EVENTS,     /**< id, after, limit; 200 */
	S0__RT_SES_REPLACE,    /**< id, body; 200 */
	S0__RT_SES_ATTEMPT,    /**< id, body (nullable); 201 */
	S0__RT_SES_INPUT,      /**< id, body; 202 */
	S0__RT_SES_TERMINAL,   /**< id, body; 200 */
};

/** One proc_call(). Every pointer borrowed for the call; unused ones NULL. */
typedef struct s0__rt_proc_call {
	int op;                        /**< s0__rt_proc_op */
	const char *id;                /**< the context or session id */
	const cJSON *body;             /**< the request body */
	const char *idempotency_key;   /**< S0__RT_SES_CREATE */
	const char *after, *limit;     /**< S0__RT_SES_EVENTS query values */
	struct s0__sessions *sessions; /**< the sandbox's registry (S0__RT_SES_*; required) */
} s0__rt_proc_call;

typedef struct s0__rt_host s0__rt_host; /**< a driver opened for one engine */
typedef struct s0__rt_gen s0__rt_gen;   /**< one runtime generation */

/** Options of s0__rt_driver.open(). */
typedef struct s0__rt_host_opts {
	const s0_clock *clock; /**< engine clock (copied); file times and timestamps follow it */
	const char *state_dir; /**< (nullable) a directory the driver may keep state in */
	bool no_memory;        /**< the deployment turns memory checkpoints off */
} s0__rt_host_opts;

/** What s0__rt_driver.start() starts. Every pointer is borrowed for the call. */
typedef struct s0__rt_start {
	const char *sandbox_id;
	const char *runtime_id;      /**< the engine's id of this generation (unique) */
	int64_t generation;          /**< runtime_generation of the sandbox it becomes */
	s0__rootfs *rootfs;          /**< the attached writable branch; outlives the generation
	                                  (NULL for a S0__RT_CAP_KERNEL_FS driver) */
	const s0__blockdev *dev;     /**< (nullable) the branch as a block device, for a
	                                  S0__RT_CAP_KERNEL_FS driver; valid until stop()
	                                  returned (the engine's) */
	const char *const *ephemeral;/**< runtime-only mounts of the template (paths) */
	const uint64_t *ephemeral_limits; /**< their size limits in bytes (0 = none); n_ephemeral */
	size_t n_ephemeral;
	const cJSON *env_vars;       /**< (nullable) object of strings: the sandbox's env_vars */
	int64_t cpu_millis;          /**< CPU lease (millicores) */
	int64_t memory_bytes;        /**< memory lease (bytes) */
	s0__rt_image *image;         /**< (nullable, transfer full: freed by start() in every
	                                  case) a restored image to continue; NULL = fresh
	                                  processes and tmpfs */
	/**
	 * (nullable) Told of every change of the generation's files — the files
	 * view's and the guest's own writes alike — for file watches (docs/wire.md
	 * §8.2): event "create", "write", "remove", "rename" (the source; its
	 * destination as "create") or "chmod", path canonical; or "invalidate"
	 * (any path) when the driver lost changes (every watch re-reads). Called after the
	 * change, on the changing thread, with no files lock held, until stop();
	 * it must be quick. A driver that cannot see guest writes tells what it
	 * sees and says so in its description.
	 */
	void (*files_changed)(void *arg, const char *sandbox_id, const char *event,
	                      const char *path);
	/** (nullable) Whether files_changed has a listener for the sandbox now
	 * (a driver may skip work that only events need when it has none). */
	bool (*files_watched)(void *arg, const char *sandbox_id);
	void *files_changed_arg;
} s0__rt_start;

/** A runtime driver. Every function pointer is set (no optional entries). */
typedef struct s0__rt_driver {
	const char *name;        /**< registry name ("sim") */
	const char *description; /**< one line for inspection (node.runtime.description) */

	/**
	 * Whether this driver can run here. @return S0_OK, or S0_EUNAVAILABLE
	 * `runtime_unavailable` naming the missing piece.
	 */
	int (*probe)(s0_error **err);
	/** Open the driver for one engine. @param[out] out (transfer full) close(). */
	int (*open)(const s0__rt_host_opts *o, s0__rt_host **out, s0_error **err);
	/** Close a host: every generation must be stopped. NULL-safe. */
	void (*close)(s0__rt_host *h);
	/** Capability flags (s0__rt_caps) of this host. */
	uint32_t (*caps)(s0__rt_host *h);
	/**
	 * The root tree the engine builds its "default" template from when it
	 * makes one (a new data directory): what this runtime's programs need
	 * to start (a shell). Blocks while the tree is made (once).
	 * @param[out] dir_out (transfer full) a directory, or NULL for the
	 *             standard empty tree.
	 * @retval S0_EUNAVAILABLE the tree cannot be made here (named).
	 */
	int (*root_tree)(s0__rt_host *h, char **dir_out, s0_error **err);
	/**
	 * The destination fingerprint of a new generation on this host (no
	 * template or resources: the engine adds them).
	 */
	void (*fingerprint)(s0__rt_host *h, s0__rt_fp *out);

	/**
	 * Start a generation on an attached RootFS: runtime-only mounts, the
	 * process host (procd as PID 1), the files view. With req->image, the
	 * image's processes and tmpfs continue instead.
	 * @param[out] out (transfer full) end with stop().
	 * @retval S0_EINVAL a bad ephemeral mount path or env_vars.
	 * @retval S0_EUNAVAILABLE the runtime cannot start (reason names it).
	 * @retval S0_ENOMEM  Nothing stays behind on failure.
	 */
	int (*start)(s0__rt_host *h, const s0__rt_start *req, s0__rt_gen **out, s0_error **err);
	/**
	 * Readiness proof: procd answers (a first command really runs).
	 * @retval S0_EUNAVAILABLE `procd_not_ready`.
	 */
	int (*ready)(s0__rt_gen *g, s0_error **err);
	/**
	 * (nullable) Whether the generation ended without a stop(): its init
	 * is gone (the sandbox killed from outside, or its loader killed it on
	 * a damaged lazily restored chunk). The engine then runs its runtime
	 * failure recovery (docs/memory-gvisor.md). Non-blocking; thread-safe
	 * against the generation's own calls; not during stop().
	 */
	bool (*exited)(s0__rt_gen *g);
	/**
	 * Stop the generation: procd first, then its children (SES-04); drop
	 * its processes, tmpfs and mounts; free @p g. The RootFS branch stays
	 * (the engine's); a S0__RT_CAP_KERNEL_FS driver has put every byte its
	 * programs wrote on s0__rt_start.dev and unmounted it when this
	 * returns. NULL-safe.
	 */
	void (*stop)(s0__rt_gen *g);
	/**
	 * Terminal proof of a stopped generation: every resource it held is
	 * absent. @retval S0_EUNAVAILABLE `resource_leak` naming what remains.
	 */
	int (*terminal_proof)(s0__rt_host *h, const char *runtime_id, s0_error **err);

	/**
	 * A consistent cut of a running generation's filesystem (snapshots and
	 * forks of a running sandbox): make what its programs wrote be on the
	 * RootFS branch and keep it unchanged while @p fn(@p arg) runs (it
	 * publishes the branch), then let the programs continue. A driver
	 * whose writes always go through the engine's RootFS handle just
	 * calls @p fn. Blocks for @p fn.
	 * @return @p fn's result, or S0_EUNAVAILABLE (reason named) when the
	 *         generation could not be quiesced (@p fn not called).
	 */
	int (*cut)(s0__rt_gen *g, int (*fn)(void *arg, s0_error **err), void *arg, s0_error **err);
	/** The files view of a running generation (valid until stop()). @return (transfer none) */
	const s0__files_ns *(*files)(s0__rt_gen *g);
	/**
	 * Apply a compiled network policy, replacing the previous one.
	 * @param policy (transfer full, nullable) NULL takes the network down.
	 */
	int (*network_apply)(s0__rt_gen *g, s0__netpolicy *policy, s0_error **err);
	/**
	 * Virtual time (S0__RT_CAP_VIRTUAL_TIME): catch the guest up with the
	 * engine clock at @p now_ms (engine clock, ms); earlier values are
	 * ignored. A no-op for drivers on real time.
	 */
	void (*clock_sync)(s0__rt_gen *g, int64_t now_ms);
	/** Inspection of a generation. @return (transfer full) object, NULL when OOM. */
	cJSON *(*inspect)(s0__rt_gen *g);

	/**
	 * A contexts or sessions call (docs/wire.md §8), with the wire's JSON in and
	 * out and its procd error codes.
	 * @param[out] data_out (transfer full) the reply's data on success.
	 * @param[out] status_out the success status (201, 200, 202).
	 * @retval S0_EUNAVAILABLE `unsupported`: no S0__RT_CAP_CONTEXTS /
	 *         S0__RT_CAP_SESSIONS. Other errors as docs/wire.md §8 defines.
	 */
	int (*proc_call)(s0__rt_gen *g, const s0__rt_proc_call *call, cJSON **data_out,
	                 int *status_out, s0_error **err);
	/**
	 * Hand the sandbox's sessions registry to this generation: restored
	 * attempts continue after a memory restore (SES-06), else they follow
	 * runtime_recovery (SES-01..05).
	 */
	void (*sessions_adopt)(s0__rt_gen *g, struct s0__sessions *s, bool restored);
	/** A new empty sessions registry. @param[out] out (transfer full) */
	int (*sessions_new)(s0__rt_host *h, int64_t generation, struct s0__sessions **out,
	                    s0_error **err);
	/** Free a registry. NULL-safe. */
	void (*sessions_free)(struct s0__sessions *s);
	/** Serialise a registry. @param[out] buf (transfer full) free(). */
	int (*sessions_save)(struct s0__sessions *s, void **buf, size_t *len, s0_error **err);
	/**
	 * Rebuild a registry, its runtime generation set to @p generation
	 * (0: the one saved). @retval S0_ECORRUPT damaged.
	 */
	int (*sessions_load)(s0__rt_host *h, const void *buf, size_t len, int64_t generation,
	                     struct s0__sessions **out, s0_error **err);

	/**
	 * The image source of a fenced generation for the checkpoint engine
	 * (image.h; valid until the generation is stopped, or, when the source
	 * sets release(), until released).
	 * @retval S0_EUNAVAILABLE `memory_unsupported` (no S0__RT_CAP_MEMORY).
	 */
	int (*capture)(s0__rt_gen *g, s0__rt_image_src *out, s0_error **err);
	/** procd's version in this generation (kept by a restore). @return (transfer none) */
	const char *(*procd_version)(s0__rt_gen *g);
	/**
	 * Rebuild an image the checkpoint engine read (its regions lazy on
	 * data->pager) for start().
	 * @param[out] out (transfer full) give to start() or image_free().
	 * @retval S0_ECORRUPT the state or tmpfs blob is damaged.
	 * @retval S0_EUNAVAILABLE `memory_unsupported`.
	 */
	int (*image_restore)(s0__rt_host *h, const s0__rt_image_data *data,
	                     const s0__rt_restore_opts *o, s0__rt_image **out, s0_error **err);
	/** Free a restored image start() did not take. NULL-safe. */
	void (*image_free)(s0__rt_image *img);
	/**
	 * Connect to TCP @p port inside the generation (public routes, docs/wire.md
	 * "Public routes"). NULL: the runtime cannot (routes answer `unsupported`).
	 * @param[out] fd_out a connected stream socket, the caller's to close().
	 * @retval S0_EUNAVAILABLE `port_not_listening` when nothing listens there.
	 * Blocks for the connect only; any thread while the generation is pinned.
	 */
	int (*connect_port)(s0__rt_gen *g, int port, int *fd_out, s0_error **err);
} s0__rt_driver;

/**
 * The runtime "auto" stands for: the first registered driver other than
 * "sim" whose probe passes, else "sim". @p why (nullable, @p why_len
 * bytes) gets why the others cannot run here ("" when one can).
 * @threadsafety safe (probes only look at the host).
 */
void s0__rt_driver_auto(const s0__rt_driver **out, char *why, size_t why_len);

/**
 * The driver registered as @p name; NULL or "" is "sim", "auto" is
 * s0__rt_driver_auto()'s choice.
 * @retval S0_EINVAL `invalid_request` "unknown runtime NAME" (the names
 *         registered listed in the message).
 */
int s0__rt_driver_find(const char *name, const s0__rt_driver **out, s0_error **err);

/** Every registered driver, in registration order; *n_out their number. */
const s0__rt_driver *const *s0__rt_drivers(size_t *n_out);

/** Capabilities as a JSON array of names. @return (transfer full) or NULL when OOM. */
cJSON *s0__rt_caps_json(uint32_t caps);

#endif
