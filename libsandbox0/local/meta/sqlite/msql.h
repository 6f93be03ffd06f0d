/*
 * The SQLite implementation of the metadata store (meta.h): meta.db in
 * WAL mode with synchronous=FULL in the data directory. Private to this
 * folder: the only place in the engine that sees SQLite.
 *
 * One connection per handle; a recursive mutex serialises calls and is
 * held from begin to commit/rollback, so the calls a thread makes inside
 * its transaction are part of it (meta.h contract).
 */
#ifndef S0_META_SQLITE_MSQL_H
#define S0_META_SQLITE_MSQL_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>

#include "local/meta/meta.h"

typedef struct s0__msql {
	s0__meta base; /* first: a s0__meta * is a s0__msql * */
	sqlite3 *db;
	pthread_mutex_t mu; /* recursive */
	/* The sandbox read every runtime request makes (sandbox.c), prepared
	 * on first use and reset after each; finalized by s0__msql_close. */
	sqlite3_stmt *sandbox_get;
} s0__msql;

#define MSQL(m) ((s0__msql *)(m))

/* The registered open (registry.c): <dir>/meta.db, created and migrated. */
int s0__msql_open(const char *dir, s0__meta **out, s0_error **err);
/* The registered outbox open (outbox.c): <dir>/webhook-outbox.db, or in
 * memory for dir NULL. */
int s0__msql_outbox_open(const char *dir, s0__outbox **out, s0_error **err);

/* The schema, one migration per version (schema.c): migration v (0-based)
 * takes the store from version v to v + 1. */
extern const char *const s0__msql_migrations[];
extern const int s0__msql_migration_count;

/* ---- helpers (sql.c); call with the lock held ---- */
void s0__msql_lock(s0__meta *m);
void s0__msql_unlock(s0__meta *m);
/* Map a SQLite failure to S0_EIO meta_store with context. */
int s0__msql_fail(s0__meta *m, s0_error **err, const char *what);
int s0__sql_prepare(s0__meta *m, const char *sql, sqlite3_stmt **st, s0_error **err);
/* Step once (expecting DONE or ROW) and finalize. */
int s0__sql_done(s0__meta *m, sqlite3_stmt *st, s0_error **err);
/* Under the lock: prepare @p sql, bind ?1 to @p arg (text, copied) or
 * @p arg (int64), step once and finalize; errors as s0__sql_done. */
int s0__sql_exec_text(s0__meta *m, const char *sql, const char *arg, s0_error **err);
int s0__sql_exec_i64(s0__meta *m, const char *sql, int64_t arg, s0_error **err);
/* Copy a text column into a fixed buffer (NULL reads as ""). */
void s0__sql_text(sqlite3_stmt *st, int col, char *dst, size_t n);
/* Step through rows collecting column 0 as malloc'd strings; finalizes st. */
int s0__sql_collect_ids(s0__meta *m, sqlite3_stmt *st, char ***ids, size_t *n, s0_error **err);

/* ---- the calls of the vtable (open.c builds it) ---- */
void s0__msql_close(s0__meta *m);
int s0__msql_begin(s0__meta *m, s0_error **err);
int s0__msql_commit(s0__meta *m, s0_error **err);
void s0__msql_rollback(s0__meta *m);
int s0__msql_schema_version(s0__meta *m);

int s0__msql_sandbox_get(s0__meta *m, const char *team, const char *id, s0__sandbox_row *out,
                         s0_error **err);
int s0__msql_sandbox_put(s0__meta *m, const s0__sandbox_row *row, s0_error **err);
int s0__msql_sandbox_delete(s0__meta *m, const char *id, s0_error **err);
int s0__msql_sandbox_list(s0__meta *m, const char *team, const s0__list_filter *f,
                          s0__sandbox_rec **out, size_t *n, int64_t *count, s0_error **err);
int s0__msql_sandbox_due(s0__meta *m, int64_t now_ms, char ***ids, size_t *n, s0_error **err);
int s0__msql_sandbox_all(s0__meta *m, char ***ids, size_t *n, s0_error **err);

int s0__msql_op_insert(s0__meta *m, s0__op_row *op, s0_error **err);
int s0__msql_op_update(s0__meta *m, const s0__op_row *op, s0_error **err);
int s0__msql_op_active(s0__meta *m, const char *sandbox_id, s0__op_row *out, s0_error **err);
int s0__msql_op_pending(s0__meta *m, s0__op_row **out, size_t *n, s0_error **err);
int s0__msql_op_count(s0__meta *m, const char *sandbox_id, s0__op_kind kind, int64_t *out,
                      s0_error **err);

int s0__msql_mem_images(s0__meta *m, char ***ids, size_t *n, s0_error **err);
int s0__msql_mem_image_rows(s0__meta *m, s0__mem_image_row **out, size_t *n, s0_error **err);
int s0__msql_live_generations(s0__meta *m, char ***ids, size_t *n, s0_error **err);
int64_t s0__msql_latest_time(s0__meta *m);

int s0__msql_snapshot_put(s0__meta *m, const s0__snapshot_row *row, s0_error **err);
int s0__msql_snapshot_get(s0__meta *m, const char *team, const char *id, s0__snapshot_row *out,
                          s0_error **err);
int s0__msql_snapshot_delete(s0__meta *m, const char *id, s0_error **err);
int s0__msql_snapshot_list(s0__meta *m, const char *team, const char *sandbox_id,
                           s0__snapshot_rec **out, size_t *n, s0_error **err);
int s0__msql_snapshot_expire(s0__meta *m, int64_t now_ms, s0_error **err);
int s0__msql_template_get(s0__meta *m, const char *name, s0__template_row *out, s0_error **err);
int s0__msql_template_put(s0__meta *m, const s0__template_row *row, s0_error **err);
int s0__msql_template_list(s0__meta *m, const char *team, s0__template_row **out, size_t *n,
                           s0_error **err);
int s0__msql_template_delete(s0__meta *m, const char *name, s0_error **err);
int s0__msql_template_users(s0__meta *m, const char *name, int64_t *count, s0_error **err);

int s0__msql_kv_get(s0__meta *m, const char *k, char **out, s0_error **err);
int s0__msql_kv_put(s0__meta *m, const char *k, const char *v, s0_error **err);
int s0__msql_sessions_get(s0__meta *m, const char *sandbox_id, void **blob, size_t *len,
                          s0_error **err);
int s0__msql_sessions_put(s0__meta *m, const char *sandbox_id, const void *blob, size_t len,
                          s0_error **err);
int s0__msql_sessions_delete(s0__meta *m, const char *sandbox_id, s0_error **err);
int s0__msql_services_get(s0__meta *m, const char *sandbox_id, char **json, s0_error **err);
int s0__msql_services_put(s0__meta *m, const char *sandbox_id, const char *json,
                          const char *const *public_ids, size_t n, s0_error **err);
int s0__msql_route_find(s0__meta *m, const char *public_id, char *sandbox_id, s0_error **err);
int s0__msql_fork_key_get(s0__meta *m, const char *sandbox_id, const char *key, char **child,
                          char **error_json, s0_error **err);
int s0__msql_fork_key_put(s0__meta *m, const char *sandbox_id, const char *key,
                          const char *child, const char *error_json, s0_error **err);

int s0__msql_team_put(s0__meta *m, const s0__team_row *row, s0_error **err);
int s0__msql_team_get(s0__meta *m, const char *id, s0__team_row *out, s0_error **err);
int s0__msql_team_list(s0__meta *m, s0__team_row **out, size_t *n, s0_error **err);
int s0__msql_apikey_create(s0__meta *m, const s0__apikey_row *row, s0_error **err);
int s0__msql_apikey_get(s0__meta *m, const char *id, s0__apikey_row *out, s0_error **err);
int s0__msql_apikey_get_by_hash(s0__meta *m, const char *hash, s0__apikey_row *out,
                                s0_error **err);
int s0__msql_apikey_list(s0__meta *m, const char *team, s0__apikey_row **out, size_t *n,
                         s0_error **err);
int s0__msql_apikey_revoke(s0__meta *m, const char *id, int64_t now_ms, s0_error **err);

int s0__msql_node_lease(s0__meta *m, const char *node_id, int64_t now_ms, int64_t ttl_ms,
                        int64_t *epoch, s0_error **err);
int s0__msql_gen_claim(s0__meta *m, const char *sandbox_id, int64_t generation,
                       const char *node_id, int64_t epoch, int64_t now_ms, s0_error **err);
int s0__msql_gen_owner(s0__meta *m, const char *sandbox_id, s0__gen_owner_row *out,
                       s0_error **err);
int s0__msql_gen_release(s0__meta *m, const char *sandbox_id, const char *node_id,
                         s0_error **err);
int s0__msql_gen_orphans(s0__meta *m, int64_t now_ms, char ***ids, size_t *n, s0_error **err);
int s0__msql_gen_check(s0__meta *m, const char *sandbox_id, const char *node_id,
                        int64_t epoch, int64_t generation, s0_error **err);

#endif
