/*
 * The block cache of the ext4 io channel (ext4io.c): the filesystem's
 * metadata blocks (inode tables, directories, bitmaps, extent blocks) stay
 * in memory between files API calls, and their writes are held until the
 * channel is flushed (s0__rootfs_flush, the commit point) or evicted.
 *
 * Why: libext2fs reads and rewrites the same few blocks for every file
 * (the inode table block, the directory block, the bitmaps); without a
 * cache each one is a device call, which on the block store is a spill-file
 * pread/pwrite (bench/rootfs/README.md). Holding writes until the flush
 * keeps the commit rule of rootfs.h: the device is a consistent commit
 * point only after s0__rootfs_flush, and a writer that stops before it (a
 * crash, s0__rootfs_discard) leaves what an unflushed writer always left,
 * the previous commit point plus some of the later writes.
 *
 * Coherence is the channel's job: every read and write of the channel goes
 * through the cache (multi-block data runs bypass it but see and update the
 * cached copies), so a reader never sees a block older than the newest
 * write. Not thread-safe: the channel runs under the process-wide rootfs
 * lock.
 */
#ifndef S0_ROOTFS_IOCACHE_H
#define S0_ROOTFS_IOCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct s0__iocache s0__iocache;

/* Write count blocks starting at blk from data to the device: 0 or an
 * errcode_t. */
typedef long (*s0__iocache_wb_fn)(void *ctx, uint64_t blk, uint32_t count, const void *data);

/* A cache of up to max_blocks blocks of block_size bytes (memory is taken
 * as blocks are used). NULL when out of memory. */
s0__iocache *s0__iocache_new(size_t max_blocks, uint32_t block_size);
/* Free the cache; dirty blocks are dropped (write them back first). */
void s0__iocache_free(s0__iocache *c);
uint32_t s0__iocache_block_size(const s0__iocache *c);

/* The cached copy of blk (block_size bytes; valid until the next call), or
 * NULL. Marks it recently used. */
const void *s0__iocache_get(s0__iocache *c, uint64_t blk);

/*
 * Store data as the content of blk: dirty (held for write-back) or clean
 * (the device already holds it). Taking a slot may evict the least recently
 * used block, writing it back through wb when dirty. Returns 0 or wb's
 * error (then nothing was stored, and the evicted block stays cached);
 * ENOMEM when no slot could be made (the caller writes through instead).
 */
long s0__iocache_put(s0__iocache *c, uint64_t blk, const void *data, bool dirty,
                     s0__iocache_wb_fn wb, void *ctx);

/*
 * A write of count blocks at blk went to the device directly: cached
 * copies in the range take the new content (from data, count * block_size
 * bytes) and become clean.
 */
void s0__iocache_wrote(s0__iocache *c, uint64_t blk, uint64_t count, const void *data);

/* Copy cached blocks in [blk, blk + count) over buf (the device's bytes for
 * that range): the newest content wins. */
void s0__iocache_overlay(s0__iocache *c, uint64_t blk, uint64_t count, void *buf);

/*
 * Write every dirty block back in block order, contiguous runs in one call
 * each; written blocks become clean. Returns 0 or the first wb error (the
 * blocks not written stay dirty).
 */
long s0__iocache_writeback(s0__iocache *c, s0__iocache_wb_fn wb, void *ctx);

/* Write blk back when it is dirty, then forget it (a byte-addressed write
 * is about to overlap it). Returns 0 or wb's error (then it stays). */
long s0__iocache_evict(s0__iocache *c, uint64_t blk, s0__iocache_wb_fn wb, void *ctx);

/* Forget the blocks of [blk, blk + count) without writing them back (they
 * are being overwritten on the device). */
void s0__iocache_discard(s0__iocache *c, uint64_t blk, uint64_t count);

/* Forget every block (dirty ones included). */
void s0__iocache_drop_all(s0__iocache *c);

/* Counters for tests and benches. */
typedef struct s0__iocache_stats {
	uint64_t hits, misses, writebacks, evictions;
	size_t cached, dirty;
} s0__iocache_stats;
void s0__iocache_stats_get(const s0__iocache *c, s0__iocache_stats *out);

#endif
