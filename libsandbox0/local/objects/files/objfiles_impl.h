/*
 * Private state of the files backend, shared by objfiles.c (open, reads,
 * listing, accounting) and objfiles_batch.c (batches, commit, delete).
 */
#ifndef S0_OBJFILES_IMPL_H
#define S0_OBJFILES_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "local/objects/files/objfiles.h"

/** Length of an object's name relative to the root: "NN/" + 64 hex. */
#define S0__OBJFILES_REL_BYTES (3 + S0__OBJID_HEX_BYTES)

typedef struct s0__objfiles {
	char *dir;
	int root_fd; /* <dir> */
	int tmp_fd;  /* <dir>/tmp */
	int lock_fd;
	pthread_mutex_t mu;  /* renames, unlinks and the counters below */
	uint64_t objects;    /* committed objects */
	uint64_t bytes;      /* their sealed bytes */
	uint64_t next_batch; /* temp name prefix of the next batch */
	atomic_int sync;     /* s0__objfiles_sync */
} s0__objfiles;

/** "NN/<64 hex>": id's file relative to root_fd. */
void s0__objfiles_rel(const s0__objid *id, char out[S0__OBJFILES_REL_BYTES]);

/**
 * Make n names in dir_fd durable (names: n NUL-terminated strings of stride
 * bytes each): files by fdatasync(), directories (dirs) by fsync(); under
 * SYNC_FS one syncfs() instead, under SYNC_PARALLEL on several threads.
 * S0_EIO / S0_ENOSPACE naming the first failure.
 */
int s0__objfiles_sync_names(s0__objfiles *of, int dir_fd, const char *names, size_t stride,
                            size_t n, bool dirs, s0_error **err);

/** s0__objfiles_sync_names() of the fan-out directories flagged in dirs
 * (256 flags, by first id byte). */
int s0__objfiles_sync_dirs(s0__objfiles *of, const bool dirs[256], s0_error **err);

int s0__objfiles_begin(void *ctx, void **batch_out, s0_error **err);
int s0__objfiles_put(void *ctx, void *batch, const s0__objid *id, const void *sealed,
                     size_t len, bool *stored_out, s0_error **err);
int s0__objfiles_commit(void *ctx, void *batch, s0_error **err);
void s0__objfiles_abort(void *ctx, void *batch);
/** Whether id was put in batch (not yet committed). */
bool s0__objfiles_batch_has(void *batch, const s0__objid *id);
int s0__objfiles_del(void *ctx, const s0__objid *ids, size_t n, uint64_t *freed_objects,
                     uint64_t *freed_bytes, s0_error **err);

#endif
