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

/*
 * `e2fsck -fn` of the image file (fsck.c): the check a template image with
 * content passes before it is imported, so the host kernel's ext4 never
 * mounts inconsistent metadata (docs/security.md SEC-74). Blocks until
 * e2fsck exits (tens of milliseconds for a template).
 * @retval S0_EIO reason `fsck_failed`: e2fsck found problems or could not
 *         run; its status and output in the message.
 */
int s0__rfs_run_e2fsck(const char *image, s0_error **err);

/* Spawn argv[0] (absolute) with env, stdin /dev/null, stdout and stderr on
 * out_fd; wait for it. 0 and *status, or an errno of the spawn. */
int s0__rfs_spawn_wait(char *const argv[], char **env, int out_fd, int *status);
/* The first 4 KiB of what a child wrote to the memfd fd, newlines as
 * spaces (malloc'd; NULL without memory). */
char *s0__rfs_slurp(int fd);

#endif
