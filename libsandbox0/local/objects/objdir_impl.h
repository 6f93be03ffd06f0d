/*
 * Private state of the directory object store, shared by objdir.c (open,
 * batches, reads) and objdir_gc.c (delete, maintain, orphan cleanup).
 */
#ifndef S0_OBJDIR_IMPL_H
#define S0_OBJDIR_IMPL_H

#include <pthread.h>
#include <stdint.h>

#include "local/objects/catalog.h"
#include "local/objects/objdir.h"
#include "local/objects/pack.h"

/** Packs smaller than this are merged by maintain() once there are many. */
#define S0__OBJDIR_SMALL_PACK ((uint64_t)4 << 20)
/** How many small packs trigger a merge. */
#define S0__OBJDIR_SMALL_PACKS 16
/** A compaction output pack is closed at this size and a new one begun. */
#define S0__OBJDIR_PACK_TARGET ((uint64_t)256 << 20)

typedef struct s0__objdir {
	char *dir;
	char *packdir;
	int packdir_fd;
	int lock_fd;
	s0__objcat *cat;
	s0__packcache fds;
	pthread_mutex_t mu; /* next_pack */
	uint64_t next_pack;
} s0__objdir;

/** Allocate a fresh pack id. */
uint64_t s0__objdir_next_pack(s0__objdir *od);

/** fsync the packs directory; S0_EIO on failure. */
int s0__objdir_sync_dir(s0__objdir *od, s0_error **err);

/** Unlink the files of packs (already without catalog rows). */
void s0__objdir_unlink_packs(s0__objdir *od, const uint64_t *packs, size_t n);

/** Delete pack files that have no catalog row; sets next_pack past all. */
int s0__objdir_clean_orphans(s0__objdir *od, s0_error **err);

/** The del op. */
int s0__objdir_del(void *ctx, const s0__objid *ids, size_t n, uint64_t *freed_objects,
                   uint64_t *freed_bytes, s0_error **err);

/** The maintain op. */
int s0__objdir_maintain(void *ctx, s0_error **err);

#endif
