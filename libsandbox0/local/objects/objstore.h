/*
 * The object store: content-addressed, compressed, encrypted, batched.
 *
 * Two layers:
 *  - s0__objstore_ops, the backend vtable, stores opaque *sealed* bytes
 *    under ids (codec.h does the sealing, so every backend gets encryption at
 *    rest for free). Backends are chosen by name (backends.h): pack/objdir.h
 *    (pack files and a catalog) and files/objfiles.h (one file per object);
 *    an S3-compatible one implements the same ops without touching callers.
 *  - s0__objstore, what callers use: put/get plaintext, has, delete, list,
 *    batch begin/commit, counters.
 *
 * Durability is per batch: puts into a batch are neither visible nor
 * durable until s0__objstore_commit(), which makes all of them durable
 * together (pack: appended to a pack file, then one fdatasync; files: temp
 * files synced together after the last put, renames, touched directories
 * synced together) — never one fsync per object before the next put. A caller that publishes a descriptor naming these
 * objects does so only after the commit returns.
 *
 * What a backend owes (the suites tests/unit/objects and tests/unit/blocks,
 * crash points included, run against every backend to check it):
 *  - a batch's objects are invisible to has/get/list until its commit, and
 *    a commit that fails leaves none of them visible;
 *  - commit returns only once the objects are durable; it may sync once
 *    per batch (or per phase), never once per object before the next put;
 *  - after a crash (SIGKILL or power loss) at any point, each object is
 *    absent or whole: never torn, never another object's bytes (the front
 *    verifies every read anyway: damage reads S0_ECORRUPT). Objects of an
 *    interrupted commit may survive as whole orphans; GC deletes them.
 *    Whatever a crash leaves behind (temp files, unindexed records) is
 *    cleaned or re-indexed when the store is opened again (or by recover);
 *  - del is durable before it returns; its space is free by then or after
 *    maintain;
 *  - one process opens a store directory at a time (S0_ECONFLICT, reason
 *    "store_locked", for the second);
 *  - every op may be called from any thread; calls block on storage I/O.
 *
 * Thread safety: s0__objstore is safe to use from any number of threads;
 * one batch may receive puts from several threads at once, and must be
 * committed or aborted exactly once. s0__objctx is one thread at a time.
 */
#ifndef S0_OBJSTORE_H
#define S0_OBJSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/internal.h"
#include "local/objects/codec.h"
#include "local/objects/objid.h"

/**
 * Listing callback: called once per committed object with its sealed size in
 * bytes. Return 0 to go on, non-zero to stop (the listing then returns
 * S0_EUSER).
 */
typedef int (*s0__objlist_cb)(const s0__objid *id, uint64_t sealed_bytes, void *payload);

/**
 * Recovery check: whether sealed bytes found under id open cleanly
 * (authenticated, decompressed, hash equal to id) with the store's keys.
 */
typedef bool (*s0__objverify_fn)(void *vctx, const s0__objid *id, const void *sealed,
                                 size_t len);

/** Space accounting of a backend. */
typedef struct s0__objstore_usage_info {
	uint64_t objects;       /**< committed objects */
	uint64_t stored_bytes;  /**< sealed bytes of those objects */
	uint64_t file_bytes;    /**< bytes the backend occupies (incl. dead space) */
} s0__objstore_usage_info;

/**
 * Backend vtable. ctx is the backend's state. Every op may be called from
 * any thread. Errors: S0_EIO for storage failures (errno in the message),
 * S0_ENOMEM, and what each op lists.
 */
typedef struct s0__objstore_ops {
	/** Start a batch; *batch_out is the backend's handle. */
	int (*batch_begin)(void *ctx, void **batch_out, s0_error **err);
	/**
	 * Add sealed bytes under id to the batch (copied before return). A
	 * second put of an id already in this batch is a no-op (*stored_out
	 * false); an id already committed may be stored again (the backend keeps
	 * one copy).
	 */
	int (*put)(void *ctx, void *batch, const s0__objid *id, const void *sealed, size_t len,
	           bool *stored_out, s0_error **err);
	/**
	 * Make every object of the batch durable and visible, all together, then
	 * free the batch (also on failure, when none of them became visible).
	 */
	int (*batch_commit)(void *ctx, void *batch, s0_error **err);
	/** Discard a batch; none of its objects become visible. */
	void (*batch_abort)(void *ctx, void *batch);
	/** Whether id is committed, or put in batch (nullable). */
	int (*has)(void *ctx, void *batch, const s0__objid *id, bool *out, s0_error **err);
	/**
	 * Read the sealed bytes of a committed id into out (replacing its
	 * contents). S0_ENOTFOUND when it is not stored (or its file is gone);
	 * S0_ECORRUPT when the stored record is damaged (e.g. truncated).
	 */
	int (*get)(void *ctx, const s0__objid *id, s0__buf *out, s0_error **err);
	/**
	 * Delete ids (absent ones are skipped); durable before return. Space is
	 * reclaimed by maintain.
	 * @param[out] freed_objects  how many of ids were present and deleted.
	 * @param[out] freed_bytes    their sealed bytes.
	 */
	int (*del)(void *ctx, const s0__objid *ids, size_t n, uint64_t *freed_objects,
	           uint64_t *freed_bytes, s0_error **err);
	/** Call cb for every committed object (a snapshot taken at the call). */
	int (*list)(void *ctx, s0__objlist_cb cb, void *payload, s0_error **err);
	/** Reclaim space left by deletions (may move objects; crash-safe). */
	int (*maintain)(void *ctx, s0_error **err);
	/** Space accounting. */
	int (*usage)(void *ctx, s0__objstore_usage_info *out, s0_error **err);
	/**
	 * (nullable) Called once by s0__objstore_new(), before any other op:
	 * make findable again every object whose bytes are durable but whose
	 * index entry a crash lost, keeping only those verify accepts.
	 */
	int (*recover)(void *ctx, s0__objverify_fn verify, void *vctx, s0_error **err);
	/** Close the backend (no batch may be open). */
	void (*close)(void *ctx);
} s0__objstore_ops;

typedef struct s0__objstore s0__objstore;
typedef struct s0__objbatch s0__objbatch;

/** Options of s0__objstore_new(); zero fields mean defaults. */
typedef struct s0__objstore_options {
	int zstd_level; /**< sealing level; default 1 */
} s0__objstore_options;

/** Monotonic counters since open (COST-01..04 read them). */
typedef struct s0__objstore_counters {
	uint64_t objects_written;   /**< objects stored by committed batches */
	uint64_t bytes_written;     /**< sealed bytes of those objects */
	uint64_t plain_bytes_written; /**< their plaintext bytes */
	uint64_t puts_deduped;      /**< puts that found the id already stored */
	uint64_t objects_read;      /**< successful gets */
	uint64_t bytes_read;        /**< sealed bytes read by those gets */
	uint64_t objects_deleted;   /**< objects actually deleted */
	uint64_t batches_committed; /**< non-empty batches made durable */
} s0__objstore_counters;

/**
 * Wrap a backend and run its recovery (ops->recover). Takes ownership of
 * ctx (closed by s0__objstore_free, also when this call fails).
 * @param key  32-byte installation key (copied; keys are derived from it).
 * @param opts (nullable) options.
 * @param[out] out  (transfer full) free with s0__objstore_free().
 * @retval S0_ENOMEM
 * @retval S0_EIO  recovery failed.
 */
int s0__objstore_new(const s0__objstore_ops *ops, void *ctx, const uint8_t key[S0__OBJKEY_BYTES],
                     const s0__objstore_options *opts, s0__objstore **out, s0_error **err);

/**
 * Open the store at dir (created if missing) with the backend it records,
 * the pack backend (pack/objdir.h) for a new one: s0__objstore_open_backend()
 * (backends.h, which implements this) with no name.
 * @retval S0_ECONFLICT  another process has it open (reason "store_locked").
 * @retval S0_EINVAL  the record names an unknown backend.
 * @retval S0_EIO / S0_ECORRUPT  the store cannot be opened.
 */
int s0__objstore_open_dir(const char *dir, const uint8_t key[S0__OBJKEY_BYTES],
                          const s0__objstore_options *opts, s0__objstore **out, s0_error **err);

/** Close the store (no batch may be open); NULL is a no-op. */
void s0__objstore_free(s0__objstore *os);

/**
 * The backend's ctx (tests reach backend entry points through it, e.g.
 * s0__objdir_locate()).
 * @return (transfer none)
 */
void *s0__objstore_backend(s0__objstore *os);

/** The id data would be stored under (keyed BLAKE2b-256). */
void s0__objstore_hash(const s0__objstore *os, const void *data, size_t len, s0__objid *out);

/**
 * A codec context for this store (zstd level of the store); one per thread.
 * @param[out] out  (transfer full) free with s0__objctx_free().
 */
int s0__objstore_ctx_new(const s0__objstore *os, s0__objctx **out, s0_error **err);

/**
 * Start a batch.
 * @param[out] out  (transfer full) finish with commit or abort.
 */
int s0__objstore_begin(s0__objstore *os, s0__objbatch **out, s0_error **err);

/**
 * Store plaintext in a batch. If the id is already committed (or in this
 * batch) nothing is written (a cheap no-op counted as deduped).
 * @param cx  codec context of the calling thread.
 * @param len at most S0__OBJ_MAX_PLAIN.
 * @param[out] id_out  (nullable) the object's id.
 * @retval S0_EINVAL  too large.
 */
int s0__objstore_put(s0__objstore *os, s0__objctx *cx, s0__objbatch *b, const void *data,
                     size_t len, s0__objid *id_out, s0_error **err);

/**
 * Like s0__objstore_put() with the id already computed by
 * s0__objstore_hash() (lets callers hash, compare and decide first).
 * @param[out] stored_out  (nullable) whether bytes were written (false: dedupe).
 */
int s0__objstore_put_hashed(s0__objstore *os, s0__objctx *cx, s0__objbatch *b,
                            const s0__objid *id, const void *data, size_t len, bool *stored_out,
                            s0_error **err);

/**
 * Make every object put in b durable and visible together, then free b
 * (whatever the result).
 */
int s0__objstore_commit(s0__objstore *os, s0__objbatch *b, s0_error **err);

/** Discard b; NULL is a no-op. */
void s0__objstore_abort(s0__objstore *os, s0__objbatch *b);

/** Whether id is committed, or in b (nullable). */
int s0__objstore_has(s0__objstore *os, s0__objbatch *b, const s0__objid *id, bool *out,
                     s0_error **err);

/**
 * Read and verify an object into buf.
 * @param cap  capacity of buf in bytes.
 * @param[out] len_out  plaintext length.
 * @retval S0_ENOTFOUND  not stored (message names the id).
 * @retval S0_ECORRUPT   damaged (message names the id); never wrong bytes.
 * @retval S0_EINVAL     larger than cap.
 */
int s0__objstore_get(s0__objstore *os, s0__objctx *cx, const s0__objid *id, void *buf,
                     size_t cap, size_t *len_out, s0_error **err);

/**
 * Read and verify an object into a new allocation.
 * @param[out] data_out  (transfer full) plaintext, free() it.
 * @retval S0_ENOTFOUND / S0_ECORRUPT  as s0__objstore_get().
 */
int s0__objstore_get_alloc(s0__objstore *os, s0__objctx *cx, const s0__objid *id,
                           void **data_out, size_t *len_out, s0_error **err);

/**
 * Delete objects (durably; absent ids are skipped). Used by GC.
 * @param[out] deleted_out  (nullable) how many were present and deleted.
 * @param[out] freed_bytes  (nullable) their sealed bytes.
 */
int s0__objstore_delete(s0__objstore *os, const s0__objid *ids, size_t n, uint64_t *deleted_out,
                        uint64_t *freed_bytes, s0_error **err);

/** List committed objects (see s0__objlist_cb). */
int s0__objstore_list(s0__objstore *os, s0__objlist_cb cb, void *payload, s0_error **err);

/** Reclaim space after deletions. */
int s0__objstore_maintain(s0__objstore *os, s0_error **err);

/** Space accounting. */
int s0__objstore_usage(s0__objstore *os, s0__objstore_usage_info *out, s0_error **err);

/** Snapshot of the counters. */
void s0__objstore_counters_get(const s0__objstore *os, s0__objstore_counters *out);

#endif
