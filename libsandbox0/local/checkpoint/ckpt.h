/*
 * The checkpoint engine (docs/architecture.md "Runtime"; docs/decisions.md "Restore of
 * memory", "Memory pause acceptance"): captures the execution
 * image a runtime driver hands out (runtime/image.h s0__rt_image_src:
 * memory regions, a state blob, the runtime tmpfs) and (optionally) the
 * sessions registry's blob into the object store, and reads it back for
 * the driver to rebuild (runtime.h image_restore()). It never sees a
 * driver's types: the state blob is opaque to it.
 *
 * Image layout. Heaps are cut into their chunks (1 MiB by default,
 * the baseline measurements: best speed and ratio per core, and 1/16 of
 * the objects of 64 KiB); the small state, the tmpfs and the sessions are
 * blobs cut into parts of the same size. Every chunk and part is one
 * object: addressed by keyed BLAKE2b, compressed (zstd level -1 by
 * default: the baseline measurements, 0–24 % faster than level 1), encrypted
 * (objects/codec.h). All-zero chunks are no object at all. A manifest
 * object names them all with the matching RootFS generation, the source
 * runtime generation and a compatibility fingerprint; its id is the
 * image id. Chunks and manifest go in one object-store batch: one commit,
 * one batched sync (the baseline measurements), nothing visible before it.
 *
 * Incremental capture. A heap chunk not written since the sandbox's
 * previous capture (or restore) keeps the id it had then and is neither
 * read nor rewritten; only dirty chunks are hashed and stored, in
 * parallel on every core with one codec context per thread.
 *
 * Phases (MFB-07..MFB-12; docs/behaviours.md stand-ins
 * `prepare_stall`, `upload_budget_hold`, `capture@<phase>`,
 * `capture_uncertain`, `restore`):
 *   prepare   admission against the per-image limit, then a reservation
 *             of the upload in the budget, retried until the deadline;
 *             s0__ckpt_cancel() undoes it (nothing was captured);
 *   authorize the point of no return: from here cancel is forbidden and a
 *             failure is a failed (or uncertain) capture;
 *   capture   chunks and parts stored into the batch;
 *   commit    the manifest added, the batch committed;
 * then s0__ckpt_finish() returns the reservation once the lead knows the
 * source is physically terminal (MFB-12). A hook is called at each phase
 * (and at every preparation retry) so the lead can inject the faults.
 *
 * Restore verifies everything it reads: a damaged or missing manifest or
 * state part fails the restore cleanly (S0_ECORRUPT / S0_ENOTFOUND,
 * nothing built). Heaps are lazy: the guest is handed back as soon as its
 * small state is rebuilt — time to running does not grow with image size —
 * and each heap chunk is fetched and verified when first touched (an
 * optional background pass prefetches the rest). A chunk found damaged
 * after that crashes the process that touched it and is reported through
 * the damage callback; the lead treats it as a runtime crash.
 *
 * The procd version is recorded in the fingerprint, never compared
 * (MEM-11); everything else of the fingerprint must match.
 *
 * @threadsafety s0__ckpt is safe from any thread; a s0__ckpt_prep is one
 * thread at a time.
 */
#ifndef S0_CHECKPOINT_CKPT_H
#define S0_CHECKPOINT_CKPT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/internal.h"
#include "local/checkpoint/budget.h"
#include "local/objects/objstore.h"
#include "local/runtime/image.h"
#include "local/runtime/runtime.h"

/** Compatibility fingerprint of an image and of a destination (runtime.h). */
typedef s0__rt_fp s0__ckpt_fp;

/**
 * Whether an image may be restored on a destination.
 * @return NULL when compatible, else the name of the first field that
 *         differs ("runtime_version", "platform", "cpu_features",
 *         "template_image", "cpu_millis", "memory_bytes").
 */
const char *s0__ckpt_fp_mismatch(const s0__ckpt_fp *image, const s0__ckpt_fp *dest);

/** Phases passed to the hook. */
enum s0__ckpt_phase {
	S0__CKPT_PREPARE = 1,           /**< each preparation attempt */
	S0__CKPT_AUTHORIZE = 2,         /**< capture authorised */
	S0__CKPT_CAPTURE = 3,           /**< before chunks are stored */
	S0__CKPT_COMMIT = 4,            /**< before the batch is committed */
	S0__CKPT_RESTORE_AUTHORIZE = 5, /**< restore execution authorised */
	S0__CKPT_RESTORE = 6,           /**< before the guest is rebuilt */
};

/** "prepare", "authorize", "capture", "commit", "authorize-restore", "restore". */
const char *s0__ckpt_phase_name(int phase);

/** Hook verdicts. */
enum s0__ckpt_verdict {
	S0__HOOK_PROCEED = 0,   /**< go on */
	S0__HOOK_FAIL = 1,      /**< fail this phase */
	S0__HOOK_UNCERTAIN = 2, /**< capture/commit: outcome unknown (capture_uncertain) */
	S0__HOOK_HOLD = 3,      /**< prepare: not ready yet, retry until the deadline */
};

/**
 * Fault hook: called at each phase with the sandbox id of the operation.
 * Runs on the caller's thread with no engine lock held.
 * @return an s0__ckpt_verdict.
 */
typedef int (*s0__ckpt_hook_fn)(void *payload, int phase, const char *sandbox_id);

/** Options of s0__ckpt_new(); zero fields mean the default. */
typedef struct s0__ckpt_opts {
	int zstd_level;           /**< sealing level; 0: -1 */
	uint32_t threads;         /**< workers incl. the caller; 0: online CPUs (max 8) */
	s0__ckpt_budget *budget;  /**< (nullable, borrowed) reservation budget */
	s0__ckpt_hook_fn hook;    /**< (nullable) fault hook */
	void *hook_payload;
} s0__ckpt_opts;

typedef struct s0__ckpt s0__ckpt;

/**
 * An engine over an object store (borrowed; outlives the engine).
 * @param[out] out (transfer full) free with s0__ckpt_free().
 * @retval S0_ENOMEM
 */
int s0__ckpt_new(s0__objstore *os, const s0__ckpt_opts *o, s0__ckpt **out, s0_error **err);
/**
 * Free the engine. No capture may be in flight and no guest it restored
 * may still be alive (their lazy chunks are read through it). NULL-safe.
 */
void s0__ckpt_free(s0__ckpt *c);

/* ---- capture ---- */

/** Options of s0__ckpt_prepare(). */
typedef struct s0__ckpt_prepare_opts {
	const char *sandbox_id;  /**< for the hook and messages (borrowed) */
	const s0_clock *clock;   /**< deadline and retry clock; NULL: real */
	int64_t deadline_ms;     /**< monotonic time on @c clock; 0: one attempt only */
	int64_t retry_ms;        /**< pause between attempts; 0: 100 */
	s0_cancel_token *cancel; /**< (nullable) */
} s0__ckpt_prepare_opts;

/** A capture in progress (prepared, maybe authorised). */
typedef struct s0__ckpt_prep s0__ckpt_prep;

/**
 * Prepare a capture of @p src: estimate the image (regions, state, tmpfs)
 * and its upload, admit it, reserve the upload.
 * @param[out] out (transfer full) end with s0__ckpt_cancel() (before
 *             authorisation) or s0__ckpt_finish().
 * @retval S0_ECONFLICT `image_too_large`: over the per-image limit
 *         (MFB-11); nothing reserved.
 * @retval S0_EUNAVAILABLE `reservation_unavailable` ("memory checkpoint
 *         reservation unavailable"): the budget stayed full until the
 *         deadline (MFB-10); `preparation_expired`: the hook held
 *         preparation past the deadline (MFB-09); `preparation_failed`:
 *         the hook failed it. Nothing reserved or captured.
 * @retval S0_ECANCELED the cancel token fired.
 */
int s0__ckpt_prepare(s0__ckpt *c, const s0__rt_image_src *src, const s0__ckpt_prepare_opts *o,
                     s0__ckpt_prep **out, s0_error **err);

/**
 * Cancel a preparation that was not authorised: the reservation returns,
 * @p p is freed.
 * @retval S0_ECONFLICT already authorised (@p p untouched: resolve it
 *         with s0__ckpt_finish()).
 */
int s0__ckpt_cancel(s0__ckpt_prep *p, s0_error **err);

/**
 * Authorise the capture (point of no return).
 * @retval S0_EMEMCAPTURE `capture_failed` / `capture_uncertain`: the hook
 *         failed the phase; the capture may not be retried.
 */
int s0__ckpt_authorize(s0__ckpt_prep *p, s0_error **err);

/** What goes into an image besides the source's. */
typedef struct s0__ckpt_meta {
	const char *sandbox_id;        /**< recorded (borrowed) */
	const char *rootfs_generation; /**< the matching committed RootFS generation */
	int64_t runtime_generation;    /**< the source runtime generation */
	const s0__ckpt_fp *fingerprint;/**< the source carrier's (required) */
	const void *sessions;          /**< (nullable) the sessions registry's blob to carry */
	size_t sessions_len;
} s0__ckpt_meta;

/** Facts about one capture. */
typedef struct s0__ckpt_image_info {
	s0__objid image_id;       /**< the manifest's object id */
	char image_hex[S0__OBJID_HEX_BYTES];
	uint64_t logical_bytes;   /**< heaps + tmpfs + state + sessions */
	uint64_t heap_chunks;     /**< chunks in all heaps */
	uint64_t chunks_written;  /**< chunk objects stored by this capture */
	uint64_t chunks_reused;   /**< clean chunks: previous id, not read */
	uint64_t chunks_deduped;  /**< dirty chunks whose content was already stored */
	uint64_t chunks_zero;     /**< all-zero chunks: no object */
	uint64_t parts;           /**< state, tmpfs and session parts */
	uint64_t plain_bytes_written;  /**< plaintext of the objects stored */
	uint64_t sockets_dropped; /**< listening sockets left out (MEM-10) */
	uint64_t upload_reserved; /**< bytes reserved in the budget */
} s0__ckpt_image_info;

/**
 * Capture and commit an authorised preparation. The source is locked for
 * the whole capture (the lead has fenced it); on success every region
 * chunk captured is clean and remembers its id.
 * @param[out] out facts about the image (set on success only).
 * @retval S0_EMEMCAPTURE `capture_failed` (cause attached: object store,
 *         damaged chunk…) or `capture_uncertain` (hook): nothing of the
 *         image is visible; heaps keep their dirty bits.
 * @retval S0_EINVAL not authorised, or no fingerprint.
 */
int s0__ckpt_capture(s0__ckpt_prep *p, const s0__rt_image_src *src, const s0__ckpt_meta *meta,
                     s0__ckpt_image_info *out, s0_error **err);

/** Release the reservation and free @p p (after commit and physical source termination, or after a failure). NULL-safe. */
void s0__ckpt_finish(s0__ckpt_prep *p);

/**
 * prepare + authorize + capture + finish in one call (tests, benchmarks,
 * memory forks of a running parent).
 */
int s0__ckpt_capture_all(s0__ckpt *c, const s0__rt_image_src *src, const s0__ckpt_meta *meta,
                         const s0__ckpt_prepare_opts *po, s0__ckpt_image_info *out,
                         s0_error **err);

/* ---- reading and restoring ---- */

/** What a manifest says (s0__ckpt_image_read). */
typedef struct s0__ckpt_manifest_info {
	char sandbox_id[96];
	char rootfs_generation[128];
	int64_t runtime_generation;
	int64_t created_at_ms;
	s0__ckpt_fp fingerprint;
	uint32_t chunk_bytes;
	uint64_t logical_bytes;
	uint64_t heap_chunks;     /**< chunks named (zero ones included) */
	uint64_t objects;         /**< objects named (non-zero ids, repeats counted), manifest excluded */
	uint64_t sockets_dropped;
} s0__ckpt_manifest_info;

/**
 * Read and verify an image's manifest.
 * @retval S0_ENOTFOUND no such image. @retval S0_ECORRUPT damaged.
 */
int s0__ckpt_image_read(s0__ckpt *c, const s0__objid *image, s0__ckpt_manifest_info *out,
                        s0_error **err);

/** Options of s0__ckpt_restore(). */
typedef struct s0__ckpt_restore_opts {
	const char *sandbox_id;             /**< for the hook (borrowed) */
	const char *rootfs_generation;      /**< (nullable) the committed head it must match */
	const s0__ckpt_fp *dest;            /**< (nullable) destination fingerprint to check */
	bool sessions;                      /**< read the carried sessions blob, if any */
} s0__ckpt_restore_opts;

/**
 * What a restore read (each buffer owned; free with
 * s0__ckpt_restored_clear()): the image data a driver rebuilds
 * (runtime.h image_restore(); its regions lazy on data.pager, which keeps
 * reading through this engine), the sessions blob, the manifest.
 */
typedef struct s0__ckpt_restored {
	s0__rt_image_data data;
	void *sessions;           /**< (NULL unless carried and opts->sessions) */
	size_t sessions_len;
	s0__ckpt_manifest_info info;
} s0__ckpt_restored;

/**
 * Read and verify an image for a restore: the manifest, the fingerprint
 * and generation checks, the state and tmpfs blobs (eagerly, verified);
 * region chunks stay lazy. Nothing is rebuilt here.
 * @param[out] out set on success only; free with s0__ckpt_restored_clear().
 * @retval S0_ENOTFOUND image (or a part) missing.
 * @retval S0_ECORRUPT manifest or a blob damaged.
 * @retval S0_ECONFLICT `image_incompatible` (fingerprint; the message names
 *         the field) or `generation_mismatch` (the RootFS head moved).
 * @retval S0_ERESUME `restore_failed`: the hook failed a restore phase.
 */
int s0__ckpt_restore(s0__ckpt *c, const s0__objid *image, const s0__ckpt_restore_opts *o,
                     s0__ckpt_restored *out, s0_error **err);

/** Free what a restore handed back (drops its pager reference). NULL-safe. */
void s0__ckpt_restored_clear(s0__ckpt_restored *r);

/** Lazy-fetch counters of an engine (COST-05: restores read the image). */
typedef struct s0__ckpt_stats {
	uint64_t captures, restores;
	uint64_t chunks_fetched;      /**< heap chunks read by restored guests */
	uint64_t chunk_bytes_fetched; /**< their plaintext bytes */
	uint64_t parts_fetched;       /**< state / tmpfs / session parts read */
} s0__ckpt_stats;

/** Read the engine's counters. @threadsafety safe */
void s0__ckpt_stats_get(s0__ckpt *c, s0__ckpt_stats *out);

/* ---- garbage collection ---- */

/**
 * Report every object a retained image needs — the manifest and each
 * chunk and part — to a GC roots emitter (blocks/bstore.h
 * s0__gc_emit_fn with S0__GC_ROOT_OBJECT).
 * @param emit called once per object id: (emit_ctx, kind, id).
 * @retval S0_ENOTFOUND / S0_ECORRUPT the manifest cannot be read.
 */
int s0__ckpt_image_roots(s0__ckpt *c, const s0__objid *image,
                         int (*emit)(void *emit_ctx, int kind, const s0__objid *id),
                         void *emit_ctx, s0_error **err);

#endif
