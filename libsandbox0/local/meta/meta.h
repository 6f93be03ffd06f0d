/*
 * The metadata store of the local backend: SQLite in WAL mode in the data
 * directory, standing in for the product's PostgreSQL (design.md §5). Every
 * lifecycle step records its durable intent here before side effects and
 * commits its outcome in one transaction.
 *
 * Thread safety: one s0__meta may be used from several threads; calls are
 * serialised by an internal mutex (SQLite handles are not shared across
 * threads concurrently). s0__meta_begin/commit bracket multi-statement
 * transactions and hold that mutex between them (recursive).
 */
#ifndef S0_META_H
#define S0_META_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/internal.h"
#include "local/lifecycle/engine.h"

typedef struct s0__meta s0__meta;

/* Open (creating and migrating) <dir>/meta.db. S0_EIO on SQLite failure. */
int s0__meta_open(const char *dir, s0__meta **out, s0_error **err);
void s0__meta_close(s0__meta *m);

/* Transactions (BEGIN IMMEDIATE … COMMIT); rollback on failure paths. */
int s0__meta_begin(s0__meta *m, s0_error **err);
int s0__meta_commit(s0__meta *m, s0_error **err);
void s0__meta_rollback(s0__meta *m);

/* Prepared statement helpers: prepare with the mutex held (call inside
 * begin/commit, or use s0__meta_lock/unlock around single statements). */
void s0__meta_lock(s0__meta *m);
void s0__meta_unlock(s0__meta *m);
sqlite3 *s0__meta_db(s0__meta *m);
/* Map a SQLite failure to S0_EIO with context. */
int s0__meta_fail(s0__meta *m, s0_error **err, const char *what);

/* Extra sandbox columns the engine keeps beside the wire record. */
typedef struct s0__sandbox_row {
	s0__sandbox_rec rec;
	char head[128];    /* committed RootFS generation id */
	int64_t seq;       /* creation order */
	char image[64];    /* recorded template image id (RTX-02) */
	char mem_image[160];     /* retained memory image (hex object id), "" = none */
	char mem_image_gen[128]; /* the RootFS generation that image matches */
} s0__sandbox_row;

/* Sandboxes. team NULL = any team. S0_ENOTFOUND when absent. */
int s0__meta_sandbox_get(s0__meta *m, const char *team, const char *id, s0__sandbox_row *out,
                         s0_error **err);
int s0__meta_sandbox_put(s0__meta *m, const s0__sandbox_row *row, s0_error **err);
int s0__meta_sandbox_delete(s0__meta *m, const char *id, s0_error **err);
int s0__meta_sandbox_list(s0__meta *m, const char *team, const s0__list_filter *f,
                          s0__sandbox_rec **out, size_t *n, int64_t *count, s0_error **err);
/* Ids of sandboxes with a due expiry (expires_at or hard_expires_at <= now). */
int s0__meta_sandbox_due(s0__meta *m, int64_t now_ms, char ***ids, size_t *n, s0_error **err);
/* Every sandbox id (recovery). */
int s0__meta_sandbox_all(s0__meta *m, char ***ids, size_t *n, s0_error **err);
void s0__meta_free_ids(char **ids, size_t n);

/* Durable lifecycle operations (pause, ttl_pause, delete, …). */
typedef struct s0__op_row {
	int64_t id;
	char sandbox_id[S0__ID_MAX];
	char kind[32];   /* "pause", "ttl_pause", "delete", "hard_delete" */
	char state[32];  /* "intent", "published", "committed", "done", "failed" */
	bool memory;
	char runtime_id[S0__ID_MAX];
	int64_t generation;
	char new_head[128];
	int64_t created_at_ms, updated_at_ms;
	char image[160]; /* memory pause: the captured image (hex), once published */
} s0__op_row;

int s0__meta_op_insert(s0__meta *m, s0__op_row *op, s0_error **err); /* sets op->id */
int s0__meta_op_update(s0__meta *m, const s0__op_row *op, s0_error **err);
/* The unfinished (not done/failed) operation of a sandbox, S0_ENOTFOUND if none. */
int s0__meta_op_active(s0__meta *m, const char *sandbox_id, s0__op_row *out, s0_error **err);
/* All unfinished operations, oldest first. */
int s0__meta_op_pending(s0__meta *m, s0__op_row **out, size_t *n, s0_error **err);
int s0__meta_op_count(s0__meta *m, const char *sandbox_id, const char *kind, int64_t *out,
                      s0_error **err);

/* Every retained memory image (hex ids): committed on sandboxes, and
 * published by unfinished pause operations (GC roots). */
int s0__meta_mem_images(s0__meta *m, char ***ids, size_t *n, s0_error **err);
/* Retained images committed on sandboxes (inspection, MEM-04). */
typedef struct s0__mem_image_row {
	char sandbox_id[S0__ID_MAX];
	char image[160];
	char generation[128];
} s0__mem_image_row;
/* *out malloc'd (free()); *n rows. */
int s0__meta_mem_image_rows(s0__meta *m, s0__mem_image_row **out, size_t *n, s0_error **err);

/* Snapshots. */
typedef struct s0__snapshot_row {
	s0__snapshot_rec rec;
	char team_id[S0__ID_MAX];
	char generation[128];
} s0__snapshot_row;

int s0__meta_snapshot_put(s0__meta *m, const s0__snapshot_row *row, s0_error **err);
int s0__meta_snapshot_get(s0__meta *m, const char *team, const char *id, s0__snapshot_row *out,
                          s0_error **err);
int s0__meta_snapshot_delete(s0__meta *m, const char *id, s0_error **err);
int s0__meta_snapshot_list(s0__meta *m, const char *team, const char *sandbox_id,
                           s0__snapshot_rec **out, size_t *n, s0_error **err);
/* Delete snapshots whose expires_at has passed. */
int s0__meta_snapshot_expire(s0__meta *m, int64_t now_ms, s0_error **err);

/* Templates. */
typedef struct s0__template_row {
	char name[256];
	char generation[128];
	char *ephemeral_mounts_json; /* owned JSON array of mount paths */
	int64_t volume_bytes;
	char image[64];
} s0__template_row;

int s0__meta_template_get(s0__meta *m, const char *name, s0__template_row *out, s0_error **err);
int s0__meta_template_put(s0__meta *m, const s0__template_row *row, s0_error **err);
void s0__template_row_clear(s0__template_row *t);

/* Live generation ids for GC roots (heads, snapshots, templates, op heads). */
int s0__meta_live_generations(s0__meta *m, char ***ids, size_t *n, s0_error **err);

/* The latest time (unix ms) the store recorded (updates, claims,
 * operations, snapshots); 0 for an empty store. */
int64_t s0__meta_latest_time(s0__meta *m);

/* Small key/value settings (node uid, api keys…). *out malloc'd or NULL. */
int s0__meta_kv_get(s0__meta *m, const char *k, char **out, s0_error **err);
int s0__meta_kv_put(s0__meta *m, const char *k, const char *v, s0_error **err);

/*
 * The sessions blob of a sandbox (meta_sessions.c): get answers
 * S0_ENOTFOUND when none is stored (*blob malloc'd otherwise); put
 * replaces it; delete removes it (no error when absent).
 */
int s0__meta_sessions_get(s0__meta *m, const char *sandbox_id, void **blob, size_t *len,
                          s0_error **err);
int s0__meta_sessions_put(s0__meta *m, const char *sandbox_id, const void *blob, size_t len,
                          s0_error **err);
int s0__meta_sessions_delete(s0__meta *m, const char *sandbox_id, s0_error **err);

/* Fork idempotency (API 6.7): the child or the recorded failure of a key. */
int s0__meta_fork_key_get(s0__meta *m, const char *sandbox_id, const char *key, char **child,
                          char **error_json, s0_error **err);
int s0__meta_fork_key_put(s0__meta *m, const char *sandbox_id, const char *key,
                          const char *child, const char *error_json, s0_error **err);

#endif
