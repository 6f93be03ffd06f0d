/*
 * A virtual block device: byte-addressed reads and writes of any size and
 * alignment over a fixed-size volume. The block store's writable branch is
 * one (blocks/), the RootFS (rootfs/) runs ext4 on one through a libext2fs
 * io_manager, and tests use the in-memory one below.
 */
#ifndef S0_BLOCKDEV_H
#define S0_BLOCKDEV_H

#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"

typedef struct s0__blockdev_ops {
	/* Read len bytes at off; reading past the end is S0_EINVAL. */
	int (*read)(void *ctx, uint64_t off, void *buf, size_t len, s0_error **err);
	/* Write len bytes at off; S0_ECONFLICT once the device is fenced. */
	int (*write)(void *ctx, uint64_t off, const void *buf, size_t len, s0_error **err);
	/* Make earlier writes visible to a following seal (no durability). */
	int (*flush)(void *ctx, s0_error **err);
	uint64_t (*size_bytes)(void *ctx);
} s0__blockdev_ops;

typedef struct s0__blockdev {
	const s0__blockdev_ops *ops;
	void *ctx;
} s0__blockdev;

static inline int s0__blockdev_read(const s0__blockdev *d, uint64_t off, void *buf, size_t len,
                                    s0_error **err)
{
	return d->ops->read(d->ctx, off, buf, len, err);
}
static inline int s0__blockdev_write(const s0__blockdev *d, uint64_t off, const void *buf,
                                     size_t len, s0_error **err)
{
	return d->ops->write(d->ctx, off, buf, len, err);
}
static inline int s0__blockdev_flush(const s0__blockdev *d, s0_error **err)
{
	return d->ops->flush(d->ctx, err);
}
static inline uint64_t s0__blockdev_size(const s0__blockdev *d)
{
	return d->ops->size_bytes(d->ctx);
}

/* In-memory device for tests (sparse: untouched 64 KiB pages read as zero). */
int s0__memdev_new(uint64_t size_bytes, s0__blockdev *out, s0_error **err);
void s0__memdev_free(s0__blockdev *d);

#endif
