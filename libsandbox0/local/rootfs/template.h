/*
 * Template images for the RootFS (docs/architecture.md "Storage"): build a base
 * ext4 image from a directory (mke2fs -d) or empty, give it the directory
 * layout every sandbox needs, import it into a block device chunk by chunk
 * (all-zero chunks are skipped, so the block store stores nothing for
 * them), and export any device view back to a raw image (for e2fsck,
 * debugfs or a loop mount). The lifecycle seals and publishes the imported
 * device once and reuses that generation for every sandbox of the template.
 *
 * All functions block (process spawn, file I/O) and are thread-safe; the
 * ones that open the filesystem take the process-wide rootfs lock for each
 * filesystem operation only.
 */
#ifndef S0_ROOTFS_TEMPLATE_H
#define S0_ROOTFS_TEMPLATE_H

#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"
#include "local/blocks/blockdev.h"
#include "local/rootfs/rootfs.h"

/** Chunk size of import/export and of the block store. */
#define S0__ROOTFS_CHUNK_BYTES (64u * 1024)
/** ext4 block size of every template. */
#define S0__ROOTFS_BLOCK_BYTES 4096u
/** Smallest template size accepted. */
#define S0__ROOTFS_MIN_BYTES (8ull * 1024 * 1024)

/** How to build a template image. Zero/NULL fields take the default. */
typedef struct s0__rootfs_image_opts {
	/** (nullable) directory whose tree becomes the filesystem content
	 *  (`mke2fs -d`); NULL builds an empty filesystem. Borrowed. */
	const char *source_dir;
	/** Filesystem size in bytes: a multiple of 4096, at least
	 *  ::S0__ROOTFS_MIN_BYTES. Required. */
	uint64_t size_bytes;
	/** (nullable) template ephemeral mount points, created as empty
	 *  directories (mode 0777) like /tmp; borrowed. */
	const char *const *ephemeral_mounts;
	size_t n_ephemeral_mounts;
	/** Bytes per inode (`mke2fs -i`); 0 means 16384. */
	uint32_t inode_ratio;
	/** (nullable) fixed filesystem UUID (also the directory hash seed),
	 *  for reproducible, dedupable images. */
	const char *uuid;
	/** Non-zero: timestamps mke2fs writes (E2FSPROGS_FAKE_TIME), seconds. */
	int64_t fake_time_unix;
	/** (nullable) mke2fs program; default "/sbin/mke2fs". */
	const char *mke2fs_path;
} s0__rootfs_image_opts;

/** Counters of an import or export. */
typedef struct s0__image_stats {
	uint64_t chunks_total;    /**< chunks covered by the image */
	uint64_t chunks_written;  /**< non-zero chunks copied */
	uint64_t chunks_zero;     /**< all-zero chunks skipped */
	uint64_t bytes_written;   /**< bytes copied */
} s0__image_stats;

/**
 * Build a sparse raw ext4 image at @p image_path (created or truncated):
 * `mke2fs -t ext4 -O <pinned features, no journal> -b 4096 -I 256 -m 0
 * -E lazy_itable_init=0,lazy_journal_init=0 [-d DIR]`, then the layout of
 * s0__rootfs_layout_ensure().
 * @retval S0_EINVAL    bad options (size, paths); `invalid_request`.
 * @retval S0_ENOTFOUND `directory_not_found`: source_dir is not a directory.
 * @retval S0_EIO       reason `mkfs_failed` (mke2fs output in the message;
 *                      e.g. the tree does not fit) or file I/O failed;
 *                      reason `fsck_failed`: with a source_dir, the finished
 *                      image failed `e2fsck -fn` (its output in the message).
 * On failure the image file may remain, partially written.
 * @threadsafety safe
 */
int s0__rootfs_image_build(const s0__rootfs_image_opts *opts, const char *image_path,
                           s0_error **err);

/**
 * Give an open read-write filesystem the directory layout a template must
 * have: /workspace, /var/tmp (1777) as directories (kept if present, a
 * non-directory there is replaced), and /tmp (1777), /proc (0555), /dev
 * (0755), /sys (0555) plus each ephemeral mount (0777) as EMPTY directories
 * (whatever was there is removed: those trees are runtime-only).
 * @retval S0_EINVAL `invalid_request`: a bad ephemeral mount path.
 * @retval others as the files operations (e.g. no space).
 */
int s0__rootfs_layout_ensure(s0__rootfs *fs, const char *const *ephemeral_mounts,
                             size_t n_ephemeral_mounts, s0_error **err);

/**
 * Copy the raw image at @p image_path onto @p dev, one
 * ::S0__ROOTFS_CHUNK_BYTES chunk at a time, skipping holes and all-zero
 * chunks (the device must read as zeros there, e.g. a fresh branch), then
 * flush the device.
 * @param[out] stats (nullable) counters.
 * @retval S0_EINVAL the image is larger than the device.
 * @retval S0_EIO    the file or the device failed (device error as cause).
 */
int s0__rootfs_image_import(const char *image_path, const s0__blockdev *dev,
                            s0__image_stats *stats, s0_error **err);

/**
 * Write the whole content of @p dev (e.g. a view of a committed generation,
 * or a flushed writable branch) to a sparse raw image at @p image_path
 * (created or truncated, size = device size; zero chunks become holes).
 * @param[out] stats (nullable) counters.
 * @retval S0_EIO the file or the device failed.
 */
int s0__rootfs_image_export(const s0__blockdev *dev, const char *image_path,
                            s0__image_stats *stats, s0_error **err);

/**
 * build + import in one step: the image is built in a temporary file under
 * @p tmp_dir (NULL: $TMPDIR or /tmp), imported into @p dev, then removed.
 * @retval as s0__rootfs_image_build() and s0__rootfs_image_import().
 */
int s0__rootfs_template_build(const s0__rootfs_image_opts *opts, const char *tmp_dir,
                              const s0__blockdev *dev, s0__image_stats *stats, s0_error **err);

/**
 * A block device over a raw image file (pread/pwrite), of the file's size
 * at open. Used to finish images and by tests and tools.
 * @param[in] path image file; opened read-write unless @p read_only.
 * @param[out] out device; release with s0__filedev_close().
 * @retval S0_ENOTFOUND `file_not_found` @retval S0_EIO
 */
int s0__filedev_open(const char *path, bool read_only, s0__blockdev *out, s0_error **err);
/** Close a device made by s0__filedev_open(); NULL-safe. */
void s0__filedev_close(s0__blockdev *dev);

#endif
