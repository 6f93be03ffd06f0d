/*
 * The libext2fs io_manager that runs ext4 over an s0__blockdev
 * with byte-exact reads and writes at the channel's
 * current block size (count < 0 means -count bytes), sub-block writes of
 * the superblock through write_byte, zeroout as plain zero writes, a
 * write-back block cache for single-block requests (iocache.h: metadata
 * stays in memory; writes reach the device at the flush), no threads.
 */
#ifndef S0_ROOTFS_EXT4IO_H
#define S0_ROOTFS_EXT4IO_H

#include <ext2fs/ext2fs.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/internal.h"
#include "local/blocks/blockdev.h"
#include "local/rootfs/iocache.h"

/** Private state of one channel (chan->private_data). */
typedef struct s0__ext4io {
	s0__blockdev dev;       /**< the device (descriptor copied, ctx borrowed) */
	bool rw;                /**< opened with IO_FLAG_RW */
	s0_error *dev_err;      /**< first device error not yet taken, owned */
	uint64_t reads;         /**< read calls reaching the device */
	uint64_t writes;        /**< write calls reaching the device */
	uint64_t bytes_read;
	uint64_t bytes_written;
	struct struct_io_stats stats; /**< returned by get_stats */
	s0__iocache *cache;     /**< single-block cache at the channel's block size, owned */
} s0__ext4io;

/** Blocks the channel caches (2 MiB at 4 KiB blocks, taken as used). */
#define S0__EXT4IO_CACHE_BLOCKS 512

/** Device name handed to ext2fs_open2 together with the manager. */
#define S0__EXT4IO_NAME "s0-blockdev"

/** The manager. Its open() binds to the device set by s0__ext4io_arm(). */
extern io_manager s0__ext4io_manager;

/**
 * Set the device the next open() of ::s0__ext4io_manager binds to. Call
 * with the process-wide rootfs lock held, immediately before ext2fs_open2;
 * open() consumes it (a second open without arming fails with
 * EXT2_ET_BAD_DEVICE_NAME).
 * @param dev borrowed until the open returns; copied into the channel.
 */
void s0__ext4io_arm(const s0__blockdev *dev);

/**
 * While @p slot is set (NULL: off), a channel that closes holding a device
 * error hands it to *slot (if empty; the caller frees it) instead of
 * dropping it: a failed ext2fs_open2 closes its channel before the caller
 * could take the error (e.g. a chunk the store refused). Under the rootfs
 * lock, like s0__ext4io_arm().
 */
void s0__ext4io_catch(s0_error **slot);

/**
 * File data past the cache: read count whole blocks at block straight from
 * the device, with any cached (newer) copies laid over them; write them
 * straight to the device, updating cached copies. Data blocks so never push
 * metadata out of the cache. @p chan is a channel of this manager.
 * @return 0, EIO (the device error is kept), EXT2_ET_LLSEEK_FAILED,
 *         EXT2_ET_SHORT_WRITE / EXT2_ET_RO_FILSYS (writes).
 */
errcode_t s0__ext4io_read_data(io_channel chan, uint64_t block, uint64_t count, void *data);
errcode_t s0__ext4io_write_data(io_channel chan, uint64_t block, uint64_t count,
                                const void *data);

/**
 * Take the first device error recorded since the last take.
 * @return (transfer full) the error or NULL.
 */
s0_error *s0__ext4io_take_error(s0__ext4io *io);

#endif
