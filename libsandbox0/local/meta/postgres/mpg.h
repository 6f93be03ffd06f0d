/*
 * The PostgreSQL implementation of the metadata store (meta.h), through
 * libpq. Private to this folder: the only place in the engine that sees
 * PostgreSQL. docs/postgres.md is the operator's page.
 *
 * Connections: a small pool (S0__MPG_POOL) per handle, opened lazily and
 * reopened after a loss. Every statement is prepared once per connection
 * (the table in stmts.c) and run with parameters, never spliced.
 *
 * Transactions: begin takes the handle's transaction mutex (one open
 * transaction per handle, like SQLite's single writer) and binds one
 * pooled connection to the calling thread until commit/rollback; that
 * thread's calls in between run on it. Other threads' calls run on the
 * other connections meanwhile and see the state before the transaction
 * (a read that linearises before its commit). Transactions run at
 * SERIALIZABLE: what SQLite's single writer gave within one file, the
 * database gives between the nodes sharing it; a serialization failure is
 * S0_EUNAVAILABLE "meta_conflict" and the engine retries the step.
 *
 * Outages: a lost or refused connection is S0_EUNAVAILABLE
 * "meta_unavailable" (503 on the wire, retried by the controller); a
 * transaction whose connection was lost stays failed until its rollback
 * (never continued on a new connection). Error messages carry libpq's
 * text with the password (from the URL or PGPASSWORD) masked.
 */
#ifndef S0_META_POSTGRES_MPG_H
#define S0_META_POSTGRES_MPG_H

#include <libpq-fe.h>
#include <pthread.h>
#include <stdbool.h>

#include "local/meta/meta.h"

/* Connections per handle. */
#define S0__MPG_POOL 4

/* The prepared statements (stmts.c holds their SQL, same order). */
typedef enum mpg_stmt {
	Q_SB_GET, Q_SB_PUT, Q_SB_DEL, Q_SB_COUNT, Q_SB_LIST, Q_SB_DUE, Q_SB_ALL,
	Q_OP_INS, Q_OP_UPD, Q_OP_ACTIVE, Q_OP_PENDING, Q_OP_COUNT,
	Q_MEM_IMAGES, Q_MEM_ROWS, Q_LIVE_GENS, Q_LATEST,
	Q_SNAP_PUT, Q_SNAP_GET, Q_SNAP_DEL, Q_SNAP_LIST, Q_SNAP_EXPIRE,
	Q_TMPL_GET, Q_TMPL_PUT, Q_TMPL_LIST, Q_TMPL_DEL, Q_TMPL_USERS, Q_KV_GET, Q_KV_PUT,
	Q_SES_GET, Q_SES_PUT, Q_SES_DEL, Q_FK_GET, Q_FK_PUT,
	Q_SVC_GET, Q_SVC_DEL, Q_SVC_PUT, Q_RT_DEL, Q_RT_PUT, Q_RT_FIND,
	Q_TEAM_PUT, Q_TEAM_GET, Q_TEAM_LIST,
	Q_KEY_CREATE, Q_KEY_GET, Q_KEY_BYHASH, Q_KEY_LIST, Q_KEY_REVOKE,
	Q_VERSION,
	Q_NODE_ACQUIRE, Q_NODE_RENEW, Q_NODE_LIVE, Q_GEN_CLAIM, Q_GEN_OWNER,
	Q_GEN_RELEASE, Q_GEN_ORPHANS, Q_GEN_CHECK,
	Q_COUNT
} mpg_stmt;

extern const char *const s0__mpg_sql[Q_COUNT];

/* One pooled connection. */
typedef struct mpg_conn {
	PGconn *pg;        /* NULL until connected, and after a loss */
	uint64_t prepared; /* bit i: statement i is prepared on pg */
	bool busy;
	bool dead; /* a failure without SQLSTATE (libpq's own: the socket broke) */
} mpg_conn;

typedef struct s0__mpg {
	s0__meta base; /* first: a s0__meta * is a s0__mpg * */
	char *conninfo;    /* the URL as given (holds the password, if any: never shown) */
	char *password;    /* the password to mask in messages, NULL when none */
	pthread_mutex_t mu; /* the pool */
	pthread_cond_t cv;
	mpg_conn conns[S0__MPG_POOL];
	pthread_mutex_t txn_mu; /* held from begin to commit/rollback */
	mpg_conn *txn;          /* the transaction's connection */
	bool txn_broken;        /* a statement of it failed: only rollback remains */
	struct mpg_listen *listen; /* the change feed's thread (listen.c), NULL when none */
	int own_pids[S0__MPG_POOL]; /* each pooled connection's backend PID, 0 when none
	                               (atomic: the change feed skips their notifications) */
} s0__mpg;

#define MPG(m) ((s0__mpg *)(m))

/* Parameters of one statement (text, or binary for bytea). */
#define MPG_MAXP 24
typedef struct mpg_params {
	int n;
	const char *v[MPG_MAXP];
	int len[MPG_MAXP];
	int fmt[MPG_MAXP];
	char num[MPG_MAXP][24];
} mpg_params;

void s0__mpg_p_text(mpg_params *p, const char *s); /* NULL = SQL NULL */
void s0__mpg_p_i64(mpg_params *p, int64_t v);
void s0__mpg_p_bin(mpg_params *p, const void *b, size_t n);

/*
 * Run statement q with p on this thread's transaction connection or a
 * pooled one; binary_result asks for binary columns (bytea as its bytes).
 * S0_OK with *res the result (PQclear it; NULL res = discarded); on
 * failure *res is NULL and err says (S0_EUNAVAILABLE meta_unavailable or
 * meta_conflict, S0_EIO meta_store). Thread-safe.
 */
int s0__mpg_run(s0__meta *m, mpg_stmt q, const mpg_params *p, bool binary_result,
                PGresult **res, s0_error **err);

/* Column helpers: text into a buffer ("" for NULL), int64, malloc'd copy. */
void s0__mpg_text(const PGresult *r, int row, int col, char *dst, size_t n);
int64_t s0__mpg_i64(const PGresult *r, int row, int col);
char *s0__mpg_dup(const PGresult *r, int row, int col);
/* Column 0 of every row as malloc'd strings (clears r). */
int s0__mpg_ids(PGresult *r, char ***ids, size_t *n, s0_error **err);

/* Connections (conn.c). */
int s0__mpg_connect(s0__mpg *q, mpg_conn *c, s0_error **err);
/* An error naming what failed, with libpq's message masked; the code
 * from the connection state and the SQLSTATE (see above). */
int s0__mpg_fail(s0__mpg *q, mpg_conn *c, const PGresult *r, const char *what, s0_error **err);
/* Run plain SQL (no parameters) on c; S0_OK or the mapped failure. */
int s0__mpg_exec_plain(s0__mpg *q, mpg_conn *c, const char *sql, s0_error **err);

/* The registered open (registry.c): location is a postgres:// or
 * postgresql:// URL; creates and migrates the schema. */
int s0__mpg_open(const char *url, s0__meta **out, s0_error **err);
/* Migrations (schema.c), one per version, applied under an advisory lock. */
extern const char *const s0__mpg_migrations[];
extern const int s0__mpg_migration_count;

/* ---- the calls of the vtable (open.c builds it) ---- */
void s0__mpg_close(s0__meta *m);
int s0__mpg_begin(s0__meta *m, s0_error **err);
int s0__mpg_commit(s0__meta *m, s0_error **err);
void s0__mpg_rollback(s0__meta *m);
int s0__mpg_schema_version(s0__meta *m);

int s0__mpg_sandbox_get(s0__meta *m, const char *team, const char *id, s0__sandbox_row *out,
                        s0_error **err);
int s0__mpg_sandbox_put(s0__meta *m, const s0__sandbox_row *row, s0_error **err);
int s0__mpg_sandbox_delete(s0__meta *m, const char *id, s0_error **err);
int s0__mpg_sandbox_list(s0__meta *m, const char *team, const s0__list_filter *f,
                         s0__sandbox_rec **out, size_t *n, int64_t *count, s0_error **err);
int s0__mpg_sandbox_due(s0__meta *m, int64_t now_ms, char ***ids, size_t *n, s0_error **err);
int s0__mpg_sandbox_all(s0__meta *m, char ***ids, size_t *n, s0_error **err);

int s0__mpg_op_insert(s0__meta *m, s0__op_row *op, s0_error **err);
int s0__mpg_op_update(s0__meta *m, const s0__op_row *op, s0_error **err);
int s0__mpg_op_active(s0__meta *m, const char *sandbox_id, s0__op_row *out, s0_error **err);
int s0__mpg_op_pending(s0__meta *m, s0__op_row **out, size_t *n, s0_error **err);
int s0__mpg_op_count(s0__meta *m, const char *sandbox_id, s0__op_kind kind, int64_t *out,
                     s0_error **err);

int s0__mpg_mem_images(s0__meta *m, char ***ids, size_t *n, s0_error **err);
int s0__mpg_mem_image_rows(s0__meta *m, s0__mem_image_row **out, size_t *n, s0_error **err);
int s0__mpg_live_generations(s0__meta *m, char ***ids, size_t *n, s0_error **err);
int64_t s0__mpg_latest_time(s0__meta *m);

int s0__mpg_snapshot_put(s0__meta *m, const s0__snapshot_row *row, s0_error **err);
int s0__mpg_snapshot_get(s0__meta *m, const char *team, const char *id, s0__snapshot_row *out,
                         s0_error **err);
int s0__mpg_snapshot_delete(s0__meta *m, const char *id, s0_error **err);
int s0__mpg_snapshot_list(s0__meta *m, const char *team, const char *sandbox_id,
                          s0__snapshot_rec **out, size_t *n, s0_error **err);
int s0__mpg_snapshot_expire(s0__meta *m, int64_t now_ms, s0_error **err);
int s0__mpg_template_get(s0__meta *m, const char *name, s0__template_row *out, s0_error **err);
int s0__mpg_template_put(s0__meta *m, const s0__template_row *row, s0_error **err);
int s0__mpg_template_list(s0__meta *m, const char *team, s0__template_row **out, size_t *n,
                          s0_error **err);
int s0__mpg_template_delete(s0__meta *m, const char *name, s0_error **err);
int s0__mpg_template_users(s0__meta *m, const char *name, int64_t *count, s0_error **err);

int s0__mpg_kv_get(s0__meta *m, const char *k, char **out, s0_error **err);
int s0__mpg_kv_put(s0__meta *m, const char *k, const char *v, s0_error **err);
int s0__mpg_sessions_get(s0__meta *m, const char *sandbox_id, void **blob, size_t *len,
                         s0_error **err);
int s0__mpg_sessions_put(s0__meta *m, const char *sandbox_id, const void *blob, size_t len,
                         s0_error **err);
int s0__mpg_sessions_delete(s0__meta *m, const char *sandbox_id, s0_error **err);
int s0__mpg_services_get(s0__meta *m, const char *sandbox_id, char **json, s0_error **err);
int s0__mpg_services_put(s0__meta *m, const char *sandbox_id, const char *json,
                         const char *const *public_ids, size_t n, s0_error **err);
int s0__mpg_route_find(s0__meta *m, const char *public_id, char *sandbox_id, s0_error **err);
int s0__mpg_fork_key_get(s0__meta *m, const char *sandbox_id, const char *key, char **child,
                         char **error_json, s0_error **err);
int s0__mpg_fork_key_put(s0__meta *m, const char *sandbox_id, const char *key,
                         const char *child, const char *error_json, s0_error **err);

int s0__mpg_team_put(s0__meta *m, const s0__team_row *row, s0_error **err);
int s0__mpg_team_get(s0__meta *m, const char *id, s0__team_row *out, s0_error **err);
int s0__mpg_team_list(s0__meta *m, s0__team_row **out, size_t *n, s0_error **err);
int s0__mpg_apikey_create(s0__meta *m, const s0__apikey_row *row, s0_error **err);
int s0__mpg_apikey_get(s0__meta *m, const char *id, s0__apikey_row *out, s0_error **err);
int s0__mpg_apikey_get_by_hash(s0__meta *m, const char *hash, s0__apikey_row *out,
                               s0_error **err);
int s0__mpg_apikey_list(s0__meta *m, const char *team, s0__apikey_row **out, size_t *n,
                        s0_error **err);
int s0__mpg_apikey_revoke(s0__meta *m, const char *id, int64_t now_ms, s0_error **err);

int s0__mpg_node_lease(s0__meta *m, const char *node_id, int64_t now_ms, int64_t ttl_ms,
                       int64_t *epoch, s0_error **err);
int s0__mpg_gen_claim(s0__meta *m, const char *sandbox_id, int64_t generation,
                      const char *node_id, int64_t epoch, int64_t now_ms, s0_error **err);
int s0__mpg_gen_owner(s0__meta *m, const char *sandbox_id, s0__gen_owner_row *out,
                      s0_error **err);
int s0__mpg_gen_release(s0__meta *m, const char *sandbox_id, const char *node_id,
                        s0_error **err);
int s0__mpg_gen_orphans(s0__meta *m, int64_t now_ms, char ***ids, size_t *n, s0_error **err);
int s0__mpg_listen(s0__meta *m, s0__meta_change_fn fn, void *arg, s0_error **err);
/* Stop the change feed's thread, if any (close). */
void s0__mpg_listen_stop(s0__mpg *q);
int s0__mpg_gen_check(s0__meta *m, const char *sandbox_id, const char *node_id,
                       int64_t epoch, int64_t generation, s0_error **err);

#endif
