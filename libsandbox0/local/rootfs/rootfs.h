/*
 * A sandbox RootFS: an ext4 filesystem on an s0__blockdev, read and
 * written in-process through libext2fs with a custom io_manager (no mount,
 * no root privileges).
 *
 * Locking model: libext2fs is single-writer and keeps process-global
 * state, so every libext2fs call in the process runs under ONE recursive
 * mutex (s0__rootfs_lock). Each files-API operation, open, flush and close
 * takes it for its own duration only, so sandboxes interleave at operation
 * granularity and no sandbox stalls another for longer than one operation.
 * Handles may be shared between threads; calls on them are serialised.
 *
 * Commit protocol: call s0__rootfs_flush() (ext2fs_flush2 + device flush)
 * and only then seal the device's branch. Intermediate states are not
 * consistent (no journal).
 */
#ifndef S0_ROOTFS_H
#define S0_ROOTFS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/internal.h"
#include "local/blocks/blockdev.h"
#include "sandbox0/clock.h"

typedef struct s0__rootfs s0__rootfs;

/** s0__rootfs_open() flag: open read-only (no bitmaps, no writes). */
#define S0__ROOTFS_RDONLY 1u

/**
 * Open the ext4 filesystem stored on @p dev.
 *
 * A read-write open refuses a filesystem whose `needs_recovery` flag is set
 * (an un-replayed journal, e.g. a crash snapshot of a guest that had the
 * filesystem mounted) or whose state says errors were detected, and loads
 * the allocation bitmaps. A read-only open accepts both.
 *
 * @param[in] dev   the device; the struct is copied, @p dev->ctx is
 *                  borrowed and must outlive the handle. The device must
 *                  not be written by anyone else while the handle is open.
 * @param[in] flags 0 or ::S0__ROOTFS_RDONLY.
 * @param[out] out  (transfer full) the handle; close with
 *                  s0__rootfs_close(). Untouched on failure.
 * @retval S0_OK
 * @retval S0_ECONFLICT reason `needs_recovery` (journal needs replay; run
 *         `e2fsck -E journal_only`) or `fs_has_errors`; read-write only.
 * @retval S0_ECORRUPT  reason `not_ext4`: no valid ext4 superblock, or
 *         features libext2fs cannot handle.
 * @retval S0_EIO       the device failed (its error is the cause).
 * @retval S0_ENOMEM
 * @threadsafety safe; takes the process-wide lock for the open.
 */
int s0__rootfs_open(const s0__blockdev *dev, unsigned flags, s0__rootfs **out,
                    s0_error **err);

/**
 * Write every cached change (bitmaps, group descriptors, superblock) to the
 * device, then flush the device. After S0_OK the device holds a consistent,
 * `e2fsck -fn`-clean filesystem and may be sealed. A no-op for read-only
 * handles and when nothing changed since the last flush.
 *
 * @retval S0_EIO the device or libext2fs failed; the handle stays usable
 *         but the device content is not a consistent commit point.
 * @threadsafety safe; takes the process-wide lock.
 */
int s0__rootfs_flush(s0__rootfs *fs, s0_error **err);

/**
 * Flush (as s0__rootfs_flush) and free the handle. The handle is freed
 * even when the flush fails. NULL is a no-op returning S0_OK.
 * @retval S0_EIO the final flush failed; the device is not a commit point.
 * @threadsafety safe; takes the process-wide lock.
 */
int s0__rootfs_close(s0__rootfs *fs, s0_error **err);

/**
 * Free the handle WITHOUT flushing (a simulated writer crash, or dropping
 * a branch that will be discarded). NULL-safe.
 * @threadsafety safe; takes the process-wide lock.
 */
void s0__rootfs_discard(s0__rootfs *fs);

/** Whether the handle was opened read-write. */
bool s0__rootfs_is_writable(const s0__rootfs *fs);

/**
 * Use a fixed clock for every timestamp this handle writes (inode times,
 * superblock write time), for reproducible template images and tests.
 * @param unix_sec seconds since the epoch; 0 returns to the real clock.
 * @threadsafety safe; takes the process-wide lock.
 */
void s0__rootfs_set_fixed_time(s0__rootfs *fs, int64_t unix_sec);

/**
 * Read the time for every timestamp this handle writes (inode times,
 * superblock write time) from @p clock's now_unix_ms, e.g. the engine's
 * (possibly manual) clock. A fixed time (s0__rootfs_set_fixed_time) still
 * wins over the clock.
 * @param clock (nullable) copied; its ctx must outlive the handle. NULL
 *        returns to the real clock (CLOCK_REALTIME).
 * @threadsafety safe; takes the process-wide lock.
 */
void s0__rootfs_set_clock(s0__rootfs *fs, const s0_clock *clock);

/** Space figures of an open filesystem. */
typedef struct s0__rootfs_usage {
	uint64_t block_size_bytes;   /**< ext4 block size */
	uint64_t total_bytes;        /**< blocks_count * block size */
	uint64_t free_bytes;         /**< free blocks * block size */
	uint64_t total_inodes;
	uint64_t free_inodes;
} s0__rootfs_usage;

/**
 * Read the usage figures of @p fs.
 * @threadsafety safe; takes the process-wide lock.
 */
void s0__rootfs_get_usage(s0__rootfs *fs, s0__rootfs_usage *out);

/**
 * The process-wide libext2fs lock (recursive). Every function of rootfs/
 * takes it internally; take it yourself only to group several calls into
 * one critical section, and keep such sections short: every sandbox of
 * the process waits for it. Initialises libext2fs error tables on first
 * use.
 */
void s0__rootfs_lock(void);
/** Release one level of s0__rootfs_lock(). */
void s0__rootfs_unlock(void);

#endif
