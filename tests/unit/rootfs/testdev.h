/*
 * A sparse in-memory s0__blockdev for the rootfs tests and benchmark
 * (64 KiB pages, untouched pages read as zero), with write accounting:
 * which 64 KiB chunks were written since a mark, and which of them really
 * changed (what a store with write elision would upload). Not thread-safe
 * on its own; the rootfs lock serialises its use.
 */
#ifndef S0_TEST_ROOTFS_TESTDEV_H
#define S0_TEST_ROOTFS_TESTDEV_H

#include <stdbool.h>
#include <stdint.h>

#include "local/blocks/blockdev.h"

#define TD_CHUNK (64u * 1024)

/* Make a device of size_bytes (multiple of TD_CHUNK). Returns 0 or -1. */
int td_new(uint64_t size_bytes, s0__blockdev *out);
void td_free(s0__blockdev *d);

/* Start a new accounting window: forget dirty chunks and counters. */
void td_mark(s0__blockdev *d);
/* Chunks written since the mark. */
uint64_t td_dirty_chunks(const s0__blockdev *d);
/* Chunks whose content differs from what they held at the mark. */
uint64_t td_changed_chunks(const s0__blockdev *d);
/* Write calls and bytes since the mark. */
uint64_t td_write_calls(const s0__blockdev *d);
uint64_t td_write_bytes(const s0__blockdev *d);
/* Pages holding memory (chunks ever written with non-zero data). */
uint64_t td_allocated_chunks(const s0__blockdev *d);
/* FNV-1a hash of the whole content (zero pages included by index). */
uint64_t td_hash(const s0__blockdev *d);
/* Make the next n writes fail with S0_EIO (fault injection). */
void td_fail_writes(s0__blockdev *d, int n);
/* Copy of the content into a new device of the same size (a "fork"). */
int td_clone(const s0__blockdev *src, s0__blockdev *out);

#endif
