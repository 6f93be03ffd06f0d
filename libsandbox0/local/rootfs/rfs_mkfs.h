/* Private to rootfs/: the mke2fs invocation behind template builds. */
#ifndef S0_ROOTFS_MKFS_H
#define S0_ROOTFS_MKFS_H

#include "local/rootfs/template.h"

/*
 * Run mke2fs on the existing (sized) file @p image with the options of
 * @p o (pinned feature list, 4 KiB blocks, 256-byte inodes, no journal,
 * lazy init off). Blocks until mke2fs exits.
 * @retval S0_EIO reason `mkfs_failed` with mke2fs's output in the message.
 */
int s0__rfs_run_mke2fs(const s0__rootfs_image_opts *o, const char *image, s0_error **err);

#endif
