/*
 * Private state of the directory object store, shared by objdir.c (open,
 * batches, reads), objdir_gc.c (delete, compaction) and objdir_recover.c.
 */
#ifndef S0_OBJDIR_IMPL_H
#define S0_OBJDIR_IMPL_H

#include <pthread.h>
#include <stdint.h>

#include "local/objects/pack/catalog.h"
#include "local/objects/pack/objdir.h"
#include "local/objects/pack/pack.h"

/** A pack stops taking new batches at this size. */
#define S0__OBJDIR_PACK_TARGET ((uint64_t)64 << 20)
/** Packs smaller than this are merged by maintain() once there are many. */
#define S0__OBJDIR_SMALL_PACK ((uint64_t)4 << 20)
/** How many small packs trigger a merge. */
#define S0__OBJDIR_SMALL_PACKS 16

typedef struct s0__odbatch s0__odbatch;

/** A pack open for appends: the current one, or one with batches in it. */
typedef struct s0__opack {
	uint64_t id;
	int fd;
	uint64_t end;          /* next free offset */
	s0__odbatch *batches;  /* batches with space reserved in it */
	struct s0__opack *next;
} s0__opack;

typedef struct s0__objdir {
	char *dir;
	char *packdir;
	int packdir_fd;
	int lock_fd;
	s0__objcat *cat;
	s0__packcache fds;
	pthread_mutex_t mu; /* next_pack, open packs, their batch lists */
	uint64_t next_pack;
	s0__opack *current; /* takes new batches; NULL until needed */
	s0__opack *open;    /* every open pack (incl. current) */
} s0__objdir;

/** Under od->mu: whether pack is open for appends (must not be deleted). */
bool s0__objdir_pack_busy(const s0__objdir *od, uint64_t pack);

/** Allocate a fresh pack id. */
uint64_t s0__objdir_next_pack(s0__objdir *od);

/** fsync the packs directory; S0_EIO on failure. */
int s0__objdir_sync_dir(s0__objdir *od, s0_error **err);

/** Unlink the files of packs (already without catalog rows). */
void s0__objdir_unlink_packs(s0__objdir *od, const uint64_t *packs, size_t n);

/**
 * Drop the rows and files of packs without live objects, except busy ones
 * and the n_keep listed in keep (nullable).
 */
int s0__objdir_drop_empty(s0__objdir *od, const uint64_t *keep, size_t n_keep, s0_error **err);

/** The recover op (objdir_recover.c). */
int s0__objdir_recover(void *ctx, s0__objverify_fn verify, void *vctx, s0_error **err);

/** The del op. */
int s0__objdir_del(void *ctx, const s0__objid *ids, size_t n, uint64_t *freed_objects,
                   uint64_t *freed_bytes, s0_error **err);

/** The maintain op. */
int s0__objdir_maintain(void *ctx, s0_error **err);

#endif
