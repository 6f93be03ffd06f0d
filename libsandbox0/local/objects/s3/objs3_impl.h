/*
 * Private state of the S3 backend, shared by objs3.c (open, reads,
 * listing, accounting, delete) and objs3_batch.c (batches, commit).
 */
#ifndef S0_OBJS3_IMPL_H
#define S0_OBJS3_IMPL_H

#include <pthread.h>
#include <stdint.h>

#include "local/objects/s3/objs3.h"
#include "local/objects/s3/s3cache.h"
#include "local/objects/s3/s3conf.h"
#include "local/objects/s3/s3http.h"

/** An object's key below the prefix: "o/" + 64 hex. */
#define S0__OBJS3_KEY_BYTES (2 + S0__OBJID_HEX_BYTES)

typedef struct s0__objs3 {
	char *dir;
	int tmp_fd; /* <dir>/upload */
	int lock_fd;
	s0__s3 *s3;
	s0__s3cache *cache;
	pthread_mutex_t mu;  /* next_batch */
	uint64_t next_batch; /* temp name prefix of the next batch */
} s0__objs3;

/** "o/<64 hex>": id's key below the prefix. */
void s0__objs3_key(const s0__objid *id, char out[S0__OBJS3_KEY_BYTES]);

int s0__objs3_begin(void *ctx, void **batch_out, s0_error **err);
int s0__objs3_put(void *ctx, void *batch, const s0__objid *id, const void *sealed, size_t len,
                  bool *stored_out, s0_error **err);
int s0__objs3_commit(void *ctx, void *batch, s0_error **err);
void s0__objs3_abort(void *ctx, void *batch);
/** Whether id was put in batch (not yet committed). */
bool s0__objs3_batch_has(void *batch, const s0__objid *id);

#endif
