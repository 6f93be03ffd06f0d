/*
 * The copy-on-write block store (docs/architecture.md "Storage"; docs/decisions.md).
 *
 * A *volume* is a virtual block device of fixed size, cut into chunks of
 * chunk_bytes (a store option, 64 KiB by default).
 * A *generation* is an immutable state of a volume: a descriptor object
 * naming a map, a persistent radix tree of 4 KiB map pages (128 entries of
 * 32-byte object ids each; leaves hold chunk ids). All-zero chunks and
 * subtrees are the zero id and cost nothing. Descriptors, pages and chunks
 * are all objects of the object store (objstore.h), so a generation id is
 * the id of its descriptor.
 *
 * A *branch* is a writable view of a generation. Dirty chunks live in the
 * branch: a table chunk index -> slot in an anonymous spill file (O_TMPFILE
 * in scratch_dir, so a crash leaves nothing behind and memory stays bounded
 * by the page cache); a chunk overwritten entirely with zeros is a "zero"
 * mark without a slot. Reads go branch -> base generation's map (pages
 * fetched lazily through a bounded page cache) -> chunk object (fetched
 * lazily, verified, kept in a bounded chunk cache). Writes whose content
 * equals the base chunk are elided (compared in memory for partial writes,
 * by keyed hash against the base id for whole chunks), and again at publish.
 *
 * Publishing fences the branch (further writes: S0_ECONFLICT), then stores
 * only its dirty chunks (hashed, compressed and encrypted in parallel, one
 * codec context per thread) and path-copies only the map pages above them:
 * O(dirty) work plus a constant, never O(volume size); a lookup walks a
 * fixed depth of pages (3 up to 128^3 chunks) whatever the history length
 * and, below that, the volume size. Everything goes into
 * one object-store batch, committed (durable) before the generation id is
 * returned: a generation is visible only once all its objects are durable.
 * Branches are scratch: after a crash they are gone and a volume reopens at
 * whichever published generation its owner recorded.
 *
 * References. The block store keeps no durable references: heads,
 * snapshots, forks and memory checkpoints are the lifecycle's (SQLite),
 * reported to GC by the roots provider. In memory, the store pins: every
 * generation returned by publish/create (until the caller unrefs it, after
 * recording it durably), every branch's base, every s0__bstore_ref(), and
 * the objects of every publication in flight. GC frees objects reachable
 * from none of these and runs concurrently with publishing and attaching.
 *
 * Thread safety: s0__bstore functions are safe from any thread. A branch
 * may be read and written from several threads (writes serialise); seal,
 * publish, fork and free must not race with its own free.
 */
#ifndef S0_BSTORE_H
#define S0_BSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"
#include "local/blocks/blockdev.h"
#include "local/objects/objstore.h"

/** Default chunk size in bytes. */
#define S0__BSTORE_CHUNK_DEFAULT 65536u
/** Smallest and largest chunk sizes (powers of two). */
#define S0__BSTORE_CHUNK_MIN 1024u
#define S0__BSTORE_CHUNK_MAX (4u << 20)
/** Largest volume: 2^50 bytes (1 PiB). */
#define S0__BSTORE_SIZE_MAX ((uint64_t)1 << 50)
/** Map page fan-out (entries per 4 KiB page). */
#define S0__MAP_FANOUT 128u
#define S0__MAP_PAGE_BYTES (S0__MAP_FANOUT * S0__OBJID_BYTES)
/** Fewest map levels: lookups cost the same on every volume below 128^3 chunks. */
#define S0__MAP_MIN_DEPTH 3u

/** A generation id: the object id of its descriptor. */
typedef s0__objid s0__genid;

typedef struct s0__bstore s0__bstore;
typedef struct s0__branch s0__branch;

/** Kinds of GC roots (see s0__gc_emit_fn). */
enum s0__gc_root_kind {
	S0__GC_ROOT_GENERATION = 1, /**< a generation and everything it references */
	S0__GC_ROOT_OBJECT = 2,     /**< one object kept as is (e.g. a memory image chunk) */
};

/**
 * Report one live root to GC. Returns 0, or S0_ENOMEM.
 * @param kind  an s0__gc_root_kind.
 */
typedef int (*s0__gc_emit_fn)(void *emit_ctx, int kind, const s0__objid *id);

/**
 * GC-roots provider: call emit for every durable reference — heads,
 * snapshots, forks' bases, memory images' objects, publications recorded
 * but not yet unref'd may be left out (they are pinned). Called once per GC
 * on the GC's thread, after the store's in-memory pins have been read, so a
 * caller that records a generation durably *before* unref'ing it is never
 * missed.
 * @return 0, or a negative s0_code (GC then deletes nothing).
 */
typedef int (*s0__gc_roots_fn)(void *payload, s0__gc_emit_fn emit, void *emit_ctx,
                               s0_error **err);

/** Options of s0__bstore_open(); zero fields mean the default. */
typedef struct s0__bstore_options {
	uint32_t chunk_bytes;      /**< chunk size of new volumes; default 64 KiB */
	uint64_t cache_bytes;      /**< decoded chunk cache bound; default 64 MiB */
	uint64_t page_cache_bytes; /**< map page / descriptor cache bound; default 16 MiB */
	uint32_t threads;          /**< publish threads incl. the caller; default online CPUs (max 8) */
	const char *scratch_dir;   /**< spill files (borrowed); default $TMPDIR or /tmp */
	s0__gc_roots_fn roots;     /**< (nullable) GC roots provider; none: only pins are roots */
	void *roots_payload;       /**< passed to roots */
} s0__bstore_options;

/** Facts about a generation (from its descriptor). */
typedef struct s0__gen_info {
	uint64_t size_bytes;     /**< volume size */
	uint32_t chunk_bytes;    /**< chunk size */
	uint32_t depth;          /**< map levels (pages on a lookup path) */
	uint64_t seq;            /**< 0 for a new volume, parent's + 1 */
	uint64_t nonzero_chunks; /**< chunks that are not all zero */
	s0__genid parent;        /**< generation it was published from; zero for a new volume */
	s0__objid root;          /**< root map page; zero when the volume is all zero */
} s0__gen_info;

/** Store-wide counters since open (monotonic). */
typedef struct s0__bstore_counters {
	uint64_t publications;     /**< generations published (incl. create) */
	uint64_t objects_written;  /**< chunk, page and descriptor objects stored */
	uint64_t bytes_written;    /**< their plaintext bytes (sealed: objstore counters) */
	uint64_t chunks_stored;    /**< chunk objects stored */
	uint64_t chunks_deduped;   /**< dirty chunks whose content was already stored */
	uint64_t chunks_elided;    /**< dirty chunks equal to the base at publish */
	uint64_t pages_stored;     /**< map page objects stored */
	uint64_t chunks_fetched;   /**< chunk objects read from the object store */
	uint64_t chunk_bytes_fetched; /**< their plaintext bytes */
	uint64_t pages_fetched;    /**< map pages and descriptors read from the object store */
	uint64_t cache_hits;       /**< chunk reads served by the chunk cache */
	uint64_t page_cache_hits;  /**< page reads served by the page cache */
	uint64_t gc_runs;          /**< completed GCs */
	uint64_t gc_objects_deleted; /**< objects deleted by GC */
	uint64_t gc_bytes_freed;   /**< sealed bytes deleted by GC */
} s0__bstore_counters;

/** Per-branch counters (COST-01..04). */
typedef struct s0__branch_counters {
	uint64_t dirty_chunks;   /**< chunks dirty now (incl. zeroed ones) */
	uint64_t chunks_fetched; /**< chunk objects this branch read from the object store */
	uint64_t bytes_fetched;  /**< their plaintext bytes */
	uint64_t cache_hits;     /**< chunk reads served by the cache */
	uint64_t writes_elided;  /**< chunk writes dropped: content equal to the base */
	uint64_t published_chunks; /**< chunk objects stored by this branch's last publish */
	uint64_t published_objects; /**< all objects stored by it (chunks, pages, descriptor) */
	uint64_t published_bytes;   /**< plaintext bytes of those objects */
} s0__branch_counters;

/** GC result. */
typedef struct s0__gc_stats {
	uint64_t roots;          /**< generations walked */
	uint64_t objects_listed; /**< objects in the store when GC began */
	uint64_t objects_live;   /**< objects found reachable */
	uint64_t objects_deleted;
	uint64_t bytes_freed;    /**< sealed bytes */
} s0__gc_stats;

/** Flags of s0__branch_publish(). */
enum {
	/** After publishing, rebase the branch on the new generation and accept
	 * writes again (a snapshot of a running sandbox). */
	S0__PUBLISH_CONTINUE = 1u,
};

/**
 * Open a block store over an object store.
 * @param os    (transfer none) must outlive the block store.
 * @param opts  (nullable) options, copied.
 * @param[out] out  (transfer full) close with s0__bstore_close().
 * @retval S0_EINVAL  bad chunk size (not a power of two in range).
 */
int s0__bstore_open(s0__objstore *os, const s0__bstore_options *opts, s0__bstore **out,
                    s0_error **err);

/** Close; every branch must be freed first. NULL is a no-op. */
void s0__bstore_close(s0__bstore *bs);

/** The object store underneath (transfer none). */
s0__objstore *s0__bstore_objects(s0__bstore *bs);

/**
 * Publish the first generation of a new all-zero volume (only a
 * descriptor; durable on return).
 * @param size_bytes  1 .. S0__BSTORE_SIZE_MAX; need not be a chunk multiple.
 * @param[out] out    its id, pinned for the caller: s0__bstore_unref() once
 *                    recorded.
 * @retval S0_EINVAL  size out of range.
 */
int s0__bstore_create(s0__bstore *bs, uint64_t size_bytes, s0__genid *out, s0_error **err);

/**
 * Read a generation's descriptor.
 * @retval S0_ENOTFOUND  no such generation.
 * @retval S0_ECORRUPT   its descriptor is damaged.
 */
int s0__bstore_gen_info(s0__bstore *bs, const s0__genid *gen, s0__gen_info *out,
                        s0_error **err);

/**
 * Pin a generation in memory (a GC root until unref'd).
 * @retval S0_ENOTFOUND  no such generation (nothing pinned).
 */
int s0__bstore_ref(s0__bstore *bs, const s0__genid *gen, s0_error **err);

/** Drop one pin (unknown ids are ignored). */
void s0__bstore_unref(s0__bstore *bs, const s0__genid *gen);

/**
 * A new writable branch on a generation: resume (attach the head), restore,
 * or fork (any number of branches may share a generation). O(1): reads the
 * descriptor only; map pages and chunks are fetched on first use. The branch
 * pins gen until freed.
 * @param[out] out  (transfer full) free with s0__branch_free().
 * @retval S0_ENOTFOUND  unknown generation.
 * @retval S0_ECORRUPT   damaged descriptor.
 * @retval S0_EIO        the spill file cannot be created.
 */
int s0__bstore_attach(s0__bstore *bs, const s0__genid *gen, s0__branch **out, s0_error **err);

/**
 * Run GC: delete every object not reachable from the roots provider's
 * roots, the pins, or a publication in flight; then let the object store
 * reclaim space. One GC at a time (a second caller waits). Safe to run
 * concurrently with publish, attach and reads.
 * @param[out] stats  (nullable)
 * @retval S0_ECORRUPT  a root's descriptor or a reachable page is missing or
 *                      damaged; nothing was deleted.
 * @retval S0_EIO
 */
int s0__bstore_gc(s0__bstore *bs, s0__gc_stats *stats, s0_error **err);

/** What a generation occupies in the object store (s0__bstore_gen_usage). */
typedef struct s0__gen_usage {
	uint64_t objects; /**< stored objects reachable from it (descriptor, pages, chunks) */
	uint64_t bytes;   /**< their sealed bytes; objects shared with others count too */
} s0__gen_usage;

/**
 * Sum the sealed bytes of every stored object reachable from @p gen, each
 * counted once (usage.c). Lists the object store and walks the map: cost
 * proportional to the store and the generation's map, for inspection only.
 * Blocking; safe with concurrent publishes and GC (a racing GC may make the
 * answer S0_ECORRUPT or miss objects being deleted).
 * @retval S0_ENOTFOUND  no such generation. S0_ECORRUPT a damaged page.
 */
int s0__bstore_gen_usage(s0__bstore *bs, const s0__genid *gen, s0__gen_usage *out,
                         s0_error **err);

/** Snapshot of the store counters. */
void s0__bstore_counters_get(s0__bstore *bs, s0__bstore_counters *out);

/**
 * Test/bench entry point: drop every unreferenced cache entry (chunks and
 * pages), as after a restart.
 */
void s0__bstore_drop_caches(s0__bstore *bs);

/**
 * A new branch with the current content of b (its base plus a copy of its
 * dirty chunks: O(dirty)). Works on a sealed branch too; the copy is
 * writable.
 * @param[out] out  (transfer full) free with s0__branch_free().
 */
int s0__branch_fork(s0__branch *b, s0__branch **out, s0_error **err);

/** Abandon a branch (dirty data discarded, base unpinned). NULL is a no-op. */
void s0__branch_free(s0__branch *b);

/** Volume size in bytes. */
uint64_t s0__branch_size(const s0__branch *b);

/** Chunk size in bytes. */
uint32_t s0__branch_chunk_bytes(const s0__branch *b);

/** The generation the branch is based on. */
void s0__branch_base(const s0__branch *b, s0__genid *out);

/**
 * Read len bytes at byte offset off (any alignment).
 * @retval S0_EINVAL     off + len beyond the volume (nothing read).
 * @retval S0_ENOTFOUND / S0_ECORRUPT  a chunk or page of the base is
 *                       missing or damaged (message names its id).
 */
int s0__branch_read(s0__branch *b, uint64_t off, void *buf, size_t len, s0_error **err);

/**
 * Write len bytes at byte offset off (any alignment). A partial write of a
 * clean chunk fetches it first.
 * @retval S0_EINVAL     beyond the volume (nothing written).
 * @retval S0_ECONFLICT  the branch is sealed (reason "branch_sealed").
 * @retval S0_ENOTFOUND / S0_ECORRUPT  as read, for the fetched base chunk.
 * @retval S0_EIO        spill file write failed.
 */
int s0__branch_write(s0__branch *b, uint64_t off, const void *buf, size_t len, s0_error **err);

/**
 * Write zeros over [off, off + len) cheaply: whole chunks become zero marks.
 * Errors as s0__branch_write().
 */
int s0__branch_zero(s0__branch *b, uint64_t off, uint64_t len, s0_error **err);

/** Fence writes: afterwards they fail with S0_ECONFLICT. Idempotent. */
int s0__branch_seal(s0__branch *b, s0_error **err);

/** Whether the branch is sealed. */
bool s0__branch_sealed(s0__branch *b);

/**
 * Seal (if not yet) and publish the branch as a new generation of its
 * volume. Stores only dirty chunks that differ from the base (zero chunks
 * as zero entries) and the map pages above them; shares everything else
 * with the base. Durable before return.
 *
 * Without S0__PUBLISH_CONTINUE the branch stays sealed (still readable);
 * with it, the branch is rebased on the new generation, emptied of dirty
 * chunks and writable again.
 *
 * @param flags  0 or S0__PUBLISH_CONTINUE.
 * @param[out] out  the new generation, pinned for the caller:
 *                  s0__bstore_unref() it once recorded durably.
 * @retval S0_ECONFLICT  already published, or a publish is running on it.
 * @retval S0_ENOTFOUND / S0_ECORRUPT  a base page/chunk needed is bad.
 * @retval S0_EIO / S0_ENOSPACE  storage failed; nothing became visible and
 *                  the branch stays sealed with its data: retry or free.
 */
int s0__branch_publish(s0__branch *b, uint32_t flags, s0__genid *out, s0_error **err);

/** Snapshot of the branch counters. */
void s0__branch_counters_get(s0__branch *b, s0__branch_counters *out);

/**
 * View a branch as an s0__blockdev (rootfs runs libext2fs on it). The
 * device borrows b; flush is a no-op (publish is the durability point).
 */
void s0__branch_blockdev(s0__branch *b, s0__blockdev *out);

#endif
