/*
 * The metadata store of the local backend: every durable table the
 * lifecycle engine keeps (sandboxes, operations, snapshots, templates,
 * fork keys, kv, sessions, teams and API keys), behind one interface: each
 * implementation is one folder plus one row of the registration table
 * (registry.c). SQLite in WAL mode in the data directory (meta/sqlite/) is
 * the default; PostgreSQL through libpq (meta/postgres/, docs/postgres.md)
 * the second. Nothing outside their folders sees SQL.
 *
 * Every lifecycle step records its durable intent here before side
 * effects and commits its outcome in one transaction (lifecycle/optxn.h).
 *
 * Contract of an implementation (the same suite, tests/unit/local/
 * check_meta.c, runs against every registered one):
 *  - thread safety: one s0__meta may be used from several threads; calls
 *    are serialised. begin/commit (or rollback) bracket a transaction that
 *    holds the store for the calling thread: calls from that thread in
 *    between are part of it, other threads block until it ends;
 *  - crash safety: a commit that returned S0_OK is durable (survives a
 *    SIGKILL of the process right after); nothing of a rolled-back or
 *    interrupted transaction is ever visible; each single call outside a
 *    transaction is atomic;
 *  - calls block on the store (disk or network), never on the engine;
 *  - errors: S0_EIO reason "meta_store" for a failure of the store;
 *    S0_EUNAVAILABLE reason "meta_unavailable" for a store that cannot be
 *    reached (a database server down: retryable, nothing happened or, for
 *    a commit, the transaction may be lost) and "meta_conflict" for a
 *    transaction a concurrent one forced to abort (retry the step);
 *    S0_ENOTFOUND where documented, S0_EINVAL for bad input and for a
 *    stored row this library cannot read (an unknown operation kind or
 *    state: reason "unknown_op_kind"/"unknown_op_state");
 *  - schema: opening migrates an older schema forward in place (data
 *    kept); a newer one is S0_EUNSUPPORTED "schema_too_new".
 */
#ifndef S0_META_H
#define S0_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"
#include "local/meta/outbox.h"
#include "local/meta/records.h"

typedef struct s0__meta s0__meta;
typedef struct s0__meta_ops s0__meta_ops;
/* A change of a sandbox row committed by any process sharing the store
 * (s0__meta_listen): written, or deleted; runs on the store's listener
 * thread. */
typedef void (*s0__meta_change_fn)(void *arg, const char *sandbox_id, bool deleted);

/*
 * The calls of an implementation; the s0__meta_* functions below check
 * their arguments and dispatch here, so an implementation sees valid
 * input only (non-NULL handles and outputs, ids within S0__ID_MAX).
 * Semantics are those of the dispatching function of the same name.
 */
struct s0__meta_ops {
	const char *name;
	void (*close)(s0__meta *m);
	int (*begin)(s0__meta *m, s0_error **err);
	int (*commit)(s0__meta *m, s0_error **err);
	void (*rollback)(s0__meta *m);
	int (*sandbox_get)(s0__meta *m, const char *team, const char *id, s0__sandbox_row *out,
	                   s0_error **err);
	int (*sandbox_put)(s0__meta *m, const s0__sandbox_row *row, s0_error **err);
	int (*sandbox_delete)(s0__meta *m, const char *id, s0_error **err);
	int (*sandbox_list)(s0__meta *m, const char *team, const s0__list_filter *f,
	                    s0__sandbox_rec **out, size_t *n, int64_t *count, s0_error **err);
	int (*sandbox_due)(s0__meta *m, int64_t now_ms, char ***ids, size_t *n, s0_error **err);
	int (*sandbox_all)(s0__meta *m, char ***ids, size_t *n, s0_error **err);
	int (*op_insert)(s0__meta *m, s0__op_row *op, s0_error **err);
	int (*op_update)(s0__meta *m, const s0__op_row *op, s0_error **err);
	int (*op_active)(s0__meta *m, const char *sandbox_id, s0__op_row *out, s0_error **err);
	int (*op_pending)(s0__meta *m, s0__op_row **out, size_t *n, s0_error **err);
	int (*op_count)(s0__meta *m, const char *sandbox_id, s0__op_kind kind, int64_t *out,
	                s0_error **err);
	int (*mem_images)(s0__meta *m, char ***ids, size_t *n, s0_error **err);
	int (*mem_image_rows)(s0__meta *m, s0__mem_image_row **out, size_t *n, s0_error **err);
	int (*snapshot_put)(s0__meta *m, const s0__snapshot_row *row, s0_error **err);
	int (*snapshot_get)(s0__meta *m, const char *team, const char *id, s0__snapshot_row *out,
	                    s0_error **err);
	int (*snapshot_delete)(s0__meta *m, const char *id, s0_error **err);
	int (*snapshot_list)(s0__meta *m, const char *team, const char *sandbox_id,
	                     s0__snapshot_rec **out, size_t *n, s0_error **err);
	int (*snapshot_expire)(s0__meta *m, int64_t now_ms, s0_error **err);
	int (*template_get)(s0__meta *m, const char *name, s0__template_row *out, s0_error **err);
	int (*template_put)(s0__meta *m, const s0__template_row *row, s0_error **err);
	int (*template_list)(s0__meta *m, const char *team, s0__template_row **out, size_t *n,
	                     s0_error **err);
	int (*template_delete)(s0__meta *m, const char *name, s0_error **err);
	int (*template_users)(s0__meta *m, const char *name, int64_t *count, s0_error **err);
	int (*live_generations)(s0__meta *m, char ***ids, size_t *n, s0_error **err);
	int64_t (*latest_time)(s0__meta *m);
	int (*kv_get)(s0__meta *m, const char *k, char **out, s0_error **err);
	int (*kv_put)(s0__meta *m, const char *k, const char *v, s0_error **err);
	int (*sessions_get)(s0__meta *m, const char *sandbox_id, void **blob, size_t *len,
	                    s0_error **err);
	int (*sessions_put)(s0__meta *m, const char *sandbox_id, const void *blob, size_t len,
	                    s0_error **err);
	int (*sessions_delete)(s0__meta *m, const char *sandbox_id, s0_error **err);
	int (*services_get)(s0__meta *m, const char *sandbox_id, char **json, s0_error **err);
	int (*services_put)(s0__meta *m, const char *sandbox_id, const char *json,
	                    const char *const *public_ids, size_t n, s0_error **err);
	int (*route_find)(s0__meta *m, const char *public_id, char *sandbox_id, s0_error **err);
	int (*fork_key_get)(s0__meta *m, const char *sandbox_id, const char *key, char **child,
	                    char **error_json, s0_error **err);
	int (*fork_key_put)(s0__meta *m, const char *sandbox_id, const char *key,
	                    const char *child, const char *error_json, s0_error **err);
	int (*team_put)(s0__meta *m, const s0__team_row *row, s0_error **err);
	int (*team_get)(s0__meta *m, const char *id, s0__team_row *out, s0_error **err);
	int (*team_list)(s0__meta *m, s0__team_row **out, size_t *n, s0_error **err);
	int (*apikey_create)(s0__meta *m, const s0__apikey_row *row, s0_error **err);
	int (*apikey_get)(s0__meta *m, const char *id, s0__apikey_row *out, s0_error **err);
	int (*apikey_get_by_hash)(s0__meta *m, const char *hash, s0__apikey_row *out,
	                          s0_error **err);
	int (*apikey_list)(s0__meta *m, const char *team, s0__apikey_row **out, size_t *n,
	                   s0_error **err);
	int (*apikey_revoke)(s0__meta *m, const char *id, int64_t now_ms, s0_error **err);
	/* The schema version the open store is at (tests, inspection). */
	int (*schema_version)(s0__meta *m);
	int (*node_lease)(s0__meta *m, const char *node_id, int64_t now_ms, int64_t ttl_ms,
	                  int64_t *epoch, s0_error **err);
	int (*gen_claim)(s0__meta *m, const char *sandbox_id, int64_t generation,
	                 const char *node_id, int64_t epoch, int64_t now_ms, s0_error **err);
	int (*gen_owner)(s0__meta *m, const char *sandbox_id, s0__gen_owner_row *out,
	                 s0_error **err);
	int (*gen_release)(s0__meta *m, const char *sandbox_id, const char *node_id,
	                   s0_error **err);
	int (*gen_orphans)(s0__meta *m, int64_t now_ms, char ***ids, size_t *n, s0_error **err);
	int (*gen_check)(s0__meta *m, const char *sandbox_id, const char *node_id, int64_t epoch,
	                 int64_t generation, s0_error **err);
	/* NULL: the store is not shared between processes (nothing to listen to) */
	int (*listen)(s0__meta *m, s0__meta_change_fn fn, void *arg, s0_error **err);
};

/* The common head of every implementation's handle (embed it first). */
struct s0__meta {
	const s0__meta_ops *ops;
};

/* ---- opening: the registration table ---- */

/*
 * Open an implementation: location is what it stores in (SQLite: the data
 * directory, holding meta.db; PostgreSQL: a postgres:// URL, S0_EINVAL
 * bad_meta_url otherwise). Creates and migrates the schema. *out is the
 * handle (s0__meta_close frees it). S0_EIO when the store cannot be
 * opened (PostgreSQL: S0_EUNAVAILABLE meta_unavailable), S0_EUNSUPPORTED
 * schema_too_new.
 */
typedef int (*s0__meta_open_fn)(const char *location, s0__meta **out, s0_error **err);

/* One row of the registration table (registry.c). */
typedef struct s0__meta_backend {
	const char *name; /* "sqlite", … */
	s0__meta_open_fn open;
	s0__outbox_open_fn outbox_open; /* its webhook outbox (outbox.h) */
} s0__meta_backend;

/* The registration table: *n rows, the default first. Static storage. */
const s0__meta_backend *s0__meta_backends(size_t *n);

/* Open the implementation named name (NULL or "" = the default, SQLite) at
 * location. S0_EINVAL unknown_meta_backend for a name not in the table. */
int s0__meta_open_backend(const char *name, const char *location, s0__meta **out,
                          s0_error **err);

/* Open the default implementation in the data directory dir. */
int s0__meta_open(const char *dir, s0__meta **out, s0_error **err);
/* Close and free; NULL-safe. No transaction may be open. */
void s0__meta_close(s0__meta *m);
/* The implementation's name ("sqlite"). */
const char *s0__meta_backend_name(const s0__meta *m);
/* The schema version the store is at (the number of migrations applied). */
int s0__meta_schema_version(s0__meta *m);

/* ---- transactions ---- */

/* Begin a transaction held by the calling thread (see the contract above);
 * every begin that returned S0_OK ends in exactly one commit or rollback.
 * S0_EIO when the store refuses (nothing is held then). */
int s0__meta_begin(s0__meta *m, s0_error **err);
/* Commit; on failure (S0_EIO) everything since begin is rolled back. The
 * transaction has ended either way. */
int s0__meta_commit(s0__meta *m, s0_error **err);
/* Discard everything since begin and end the transaction. */
void s0__meta_rollback(s0__meta *m);

/* ---- sandboxes ---- */

/* The row of sandbox id; team NULL = any team. S0_ENOTFOUND (reason
 * not_found) when absent or another team's. out->rec.config_json is owned
 * by the caller (s0__sandbox_rec_clear). */
int s0__meta_sandbox_get(s0__meta *m, const char *team, const char *id, s0__sandbox_row *out,
                         s0_error **err);
/* Insert or replace the row of row->rec.id (id must not be empty). */
int s0__meta_sandbox_put(s0__meta *m, const s0__sandbox_row *row, s0_error **err);
/* Remove the row of id and its generation owner ("nodes and fencing"
 * below) atomically, in the caller's transaction if any (no error when
 * absent). */
int s0__meta_sandbox_delete(s0__meta *m, const char *id, s0_error **err);
/* One page of team's sandboxes matching f, newest first (created_at, then
 * creation order); *count = every match. *out holds *n records (clear
 * each, then free the array). */
int s0__meta_sandbox_list(s0__meta *m, const char *team, const s0__list_filter *f,
                          s0__sandbox_rec **out, size_t *n, int64_t *count, s0_error **err);
/* Ids of sandboxes with a due expiry, in creation order: a soft expiry
 * (expires_at, not paused) or a hard one (hard_expires_at) <= now_ms. */
int s0__meta_sandbox_due(s0__meta *m, int64_t now_ms, char ***ids, size_t *n, s0_error **err);
/* Every sandbox id in creation order (recovery). */
int s0__meta_sandbox_all(s0__meta *m, char ***ids, size_t *n, s0_error **err);

/* ---- durable lifecycle operations ---- */

/* Insert op (kind and state within their enums); sets op->id, increasing. */
int s0__meta_op_insert(s0__meta *m, s0__op_row *op, s0_error **err);
/* Replace the row of op->id with op. */
int s0__meta_op_update(s0__meta *m, const s0__op_row *op, s0_error **err);
/* The oldest unfinished (not done/failed) operation of a sandbox.
 * S0_ENOTFOUND without an error object when there is none; S0_EINVAL
 * unknown_op_kind/unknown_op_state for a row with a name not in the table
 * (*out is zeroed then, never half a row). */
int s0__meta_op_active(s0__meta *m, const char *sandbox_id, s0__op_row *out, s0_error **err);
/* All unfinished operations, oldest first; *out malloc'd (free()). S0_EINVAL
 * as op_active for an unreadable row (nothing returned then). */
int s0__meta_op_pending(s0__meta *m, s0__op_row **out, size_t *n, s0_error **err);
/* How many operations of kind a sandbox has had (any state). */
int s0__meta_op_count(s0__meta *m, const char *sandbox_id, s0__op_kind kind, int64_t *out,
                      s0_error **err);

/* ---- GC roots and memory images ---- */

/* Every retained memory image (hex ids): committed on sandboxes, and
 * published by unfinished pause operations (GC roots). */
int s0__meta_mem_images(s0__meta *m, char ***ids, size_t *n, s0_error **err);
/* Retained images committed on sandboxes, by sandbox id; *out malloc'd
 * (free()), *n rows. */
int s0__meta_mem_image_rows(s0__meta *m, s0__mem_image_row **out, size_t *n, s0_error **err);
/* Live generation ids for GC roots: heads, snapshots, templates and the
 * new heads of unfinished operations (distinct). */
int s0__meta_live_generations(s0__meta *m, char ***ids, size_t *n, s0_error **err);
/* The latest time (unix ms) the store recorded (updates, claims,
 * operations, snapshots); 0 for an empty store or on failure. */
int64_t s0__meta_latest_time(s0__meta *m);

/* ---- snapshots ---- */

/* Insert or replace a snapshot (it goes last in creation order). */
int s0__meta_snapshot_put(s0__meta *m, const s0__snapshot_row *row, s0_error **err);
/* team NULL = any. S0_ENOTFOUND not_found when absent. */
int s0__meta_snapshot_get(s0__meta *m, const char *team, const char *id, s0__snapshot_row *out,
                          s0_error **err);
/* No error when absent. */
int s0__meta_snapshot_delete(s0__meta *m, const char *id, s0_error **err);
/* team's snapshots of sandbox_id, newest first; *out malloc'd (free()). */
int s0__meta_snapshot_list(s0__meta *m, const char *team, const char *sandbox_id,
                           s0__snapshot_rec **out, size_t *n, s0_error **err);
/* Delete snapshots whose expires_at (non-zero) is <= now_ms. */
int s0__meta_snapshot_expire(s0__meta *m, int64_t now_ms, s0_error **err);

/* ---- templates ---- */

/* S0_ENOTFOUND not_found when absent; out's JSON is the caller's
 * (s0__template_row_clear). */
int s0__meta_template_get(s0__meta *m, const char *name, s0__template_row *out, s0_error **err);
/* Insert or replace by name (NULL mounts store "[]", NULL spec "{}"). */
int s0__meta_template_put(s0__meta *m, const s0__template_row *row, s0_error **err);
/* The public templates (team_id "") and team's, oldest first (created_at,
 * then name); *out malloc'd: clear each row, then free(). */
int s0__meta_template_list(s0__meta *m, const char *team, s0__template_row **out, size_t *n,
                           s0_error **err);
/* Remove template name (no error when absent). */
int s0__meta_template_delete(s0__meta *m, const char *name, s0_error **err);
/* How many sandboxes (any team, any state) were claimed from template name. */
int s0__meta_template_users(s0__meta *m, const char *name, int64_t *count, s0_error **err);

/* ---- small settings, sessions, fork keys ---- */

/* Small key/value settings (node uid…). *out malloc'd, or NULL when k is
 * not set (S0_OK). */
int s0__meta_kv_get(s0__meta *m, const char *k, char **out, s0_error **err);
int s0__meta_kv_put(s0__meta *m, const char *k, const char *v, s0_error **err);

/* The sessions blob of a sandbox: get answers S0_ENOTFOUND (no error
 * object) when none is stored (*blob malloc'd otherwise, free()); put
 * replaces it; delete removes it (no error when absent). */
int s0__meta_sessions_get(s0__meta *m, const char *sandbox_id, void **blob, size_t *len,
                          s0_error **err);
int s0__meta_sessions_put(s0__meta *m, const char *sandbox_id, const void *blob, size_t len,
                          s0_error **err);
int s0__meta_sessions_delete(s0__meta *m, const char *sandbox_id, s0_error **err);

/* The public services of a sandbox (docs/wire.md "Public routes"): get
 * answers the stored services JSON array text (*json malloc'd) or
 * S0_ENOTFOUND (no error object) when none is stored. put replaces them
 * and the public ids that route to the sandbox (public_ids[0..n), each
 * globally unique: a taken one fails the put); json NULL
 * removes both. route_find copies the sandbox of a public id into
 * sandbox_id (S0__ID_MAX bytes), S0_ENOTFOUND (no error object) when no
 * sandbox has it. */
int s0__meta_services_get(s0__meta *m, const char *sandbox_id, char **json, s0_error **err);
int s0__meta_services_put(s0__meta *m, const char *sandbox_id, const char *json,
                          const char *const *public_ids, size_t n, s0_error **err);
int s0__meta_route_find(s0__meta *m, const char *public_id, char *sandbox_id, s0_error **err);

/* Fork idempotency (API 6.7): the child or the recorded failure of a key
 * (either may be NULL; both malloc'd). S0_ENOTFOUND (no error object) for
 * an unknown key. put replaces. */
int s0__meta_fork_key_get(s0__meta *m, const char *sandbox_id, const char *key, char **child,
                          char **error_json, s0_error **err);
int s0__meta_fork_key_put(s0__meta *m, const char *sandbox_id, const char *key,
                          const char *child, const char *error_json, s0_error **err);

/* ---- teams and API keys (schema 4) ---- */

/* Insert or rename a team (id and name non-empty, within their buffers:
 * S0_EINVAL bad_request otherwise). created_at_ms is kept from the first
 * put. */
int s0__meta_team_put(s0__meta *m, const s0__team_row *row, s0_error **err);
/* S0_ENOTFOUND not_found when absent. */
int s0__meta_team_get(s0__meta *m, const char *id, s0__team_row *out, s0_error **err);
/* Every team by id; *out malloc'd (free()). */
int s0__meta_team_list(s0__meta *m, s0__team_row **out, size_t *n, s0_error **err);

/*
 * Store a new API key row: id, name and team non-empty; hash exactly 64
 * lowercase hex digits (s0__apikey_hash); revoked_at_ms 0. S0_EINVAL
 * bad_request for bad fields, S0_ENOTFOUND team_not_found for a team not
 * stored, S0_ECONFLICT key_exists for an id or hash already stored.
 */
int s0__meta_apikey_create(s0__meta *m, const s0__apikey_row *row, s0_error **err);
/* By id, revoked or not. S0_ENOTFOUND not_found when absent. */
int s0__meta_apikey_get(s0__meta *m, const char *id, s0__apikey_row *out, s0_error **err);
/* By hash (the authentication lookup), revoked or not: the caller checks
 * revoked_at_ms. S0_ENOTFOUND not_found when absent. */
int s0__meta_apikey_get_by_hash(s0__meta *m, const char *hash, s0__apikey_row *out,
                                s0_error **err);
/* team's keys (NULL = every team), oldest first; *out malloc'd (free()). */
int s0__meta_apikey_list(s0__meta *m, const char *team, s0__apikey_row **out, size_t *n,
                         s0_error **err);
/* Revoke key id at now_ms; revoking a revoked key keeps its first time.
 * S0_ENOTFOUND not_found when absent. */
int s0__meta_apikey_revoke(s0__meta *m, const char *id, int64_t now_ms, s0_error **err);

/* ---- nodes and fencing (several nodes on one store; docs/scaling.md) ----
 *
 * Each node holds a lease on its id: a row with an epoch and an expiry.
 * Acquiring bumps the epoch, which fences every earlier holder of the
 * same id (a restarted node, or a process that lost its data directory's
 * lock); renewing succeeds only for the current epoch before its expiry.
 * A sandbox's runtime generation is claimed by (node id, epoch) with a
 * live lease; another node can claim only a newer generation, and only
 * once the owner's lease has expired (the same node under a newer epoch
 * may claim the generation its fenced incarnation claimed but never ran). So two nodes never run the same
 * generation, and a node whose lease lapsed cannot start one. Times are
 * the caller's clock (unix ms): nodes sharing a store must agree on time
 * within much less than a lease. */

/* Acquire (*epoch 0 on entry: *epoch becomes the new epoch) or renew
 * (*epoch the held one) the lease of node_id until now_ms + ttl_ms
 * (ttl_ms > 0). S0_ECONFLICT node_lease_lost when renewing an epoch that
 * expired or was superseded (the caller must stop acting as the node). */
int s0__meta_node_lease(s0__meta *m, const char *node_id, int64_t now_ms, int64_t ttl_ms,
                        int64_t *epoch, s0_error **err);
/* Claim generation (>= 1) of sandbox_id for node_id at epoch: S0_OK when
 * it is now that node's (claiming what it owns already is S0_OK too);
 * S0_ECONFLICT node_lease_lost when that lease is not live at now_ms;
 * S0_ECONFLICT generation_owned when another owner holds this or a newer
 * generation, or an older one under a live lease. Atomic. */
int s0__meta_gen_claim(s0__meta *m, const char *sandbox_id, int64_t generation,
                       const char *node_id, int64_t epoch, int64_t now_ms, s0_error **err);
/* The owner of sandbox_id's latest claimed generation, with the expiry of
 * that node's current lease (out->lease_until; 0 when released);
 * S0_ENOTFOUND not_found when none was claimed. */
int s0__meta_gen_owner(s0__meta *m, const char *sandbox_id, s0__gen_owner_row *out,
                       s0_error **err);
/* Release sandbox_id's generation if node_id holds it (its runtime is
 * proven gone: a pause finished): the row keeps its generation with node
 * id "", and any live node may claim that generation or a newer one. S0_OK
 * also when node_id does not hold it (nothing changes). One statement. */
int s0__meta_gen_release(s0__meta *m, const char *sandbox_id, const char *node_id,
                         s0_error **err);
/* The sandboxes whose claimed generation is held by a node with no live
 * lease at now_ms (in any epoch: a restarted node recovers its own), so
 * another node may take them over (docs/scaling.md "Several nodes"). *ids
 * malloc'd (s0__meta_free_ids), oldest sandbox first. */
int s0__meta_gen_orphans(s0__meta *m, int64_t now_ms, char ***ids, size_t *n, s0_error **err);
/*
 * The fencing check of a transaction that changes a sandbox (called inside
 * it, before its writes; docs/scaling.md "Leases"): S0_OK when epoch is
 * node_id's current lease epoch and sandbox_id's runtime generation is not
 * another node's — never claimed, node_id's (any epoch), or released at a
 * generation <= generation (the one the caller acts on: nobody claimed a
 * newer one meanwhile). S0_ECONFLICT node_lease_lost when node_id's epoch
 * is no longer epoch (a later acquisition fenced it), generation_owned
 * when another node holds the generation or claimed a newer one. The
 * lease's expiry is not checked: a takeover must first claim the
 * generation, and PostgreSQL holds the row (FOR SHARE) until the
 * transaction ends, so the claim and the transaction serialise. One
 * statement; reads only. epoch >= 1, generation >= 0.
 */
int s0__meta_gen_check(s0__meta *m, const char *sandbox_id, const char *node_id, int64_t epoch,
                       int64_t generation, s0_error **err);
/*
 * Call fn(arg, id, deleted) for every commit, by any process sharing the
 * store, that wrote or deleted the row of sandbox id (this process's own commits too),
 * from a thread of the store's, until s0__meta_close (which stops it first).
 * Best effort: notifications sent while the store was unreachable are lost;
 * a store no other process can share (SQLite) never calls fn. S0_OK, or
 * S0_EINVAL when already listening, S0_ERROR when no thread can start.
 */
int s0__meta_listen(s0__meta *m, s0__meta_change_fn fn, void *arg, s0_error **err);
/* For implementations of gen_check: the verdict from what the store holds
 * — node_id's current epoch (0 when it has no row), and the sandbox's owner
 * row (has_owner false when none; owner "" when released). */
int s0__meta_gen_verdict(const char *sandbox_id, const char *node_id, int64_t epoch,
                         int64_t generation, int64_t current_epoch, bool has_owner,
                         const char *owner, int64_t owner_generation, s0_error **err);

/*
 * The hash an API key is stored under: a keyed BLAKE2b-256 (libsodium
 * crypto_generichash) of the key text, keyed by this store's 32-byte
 * secret (kv "apikey_hash_key", created at random on first use), as 64
 * lowercase hex digits in out. Keys are high-entropy random tokens, so a
 * fast keyed hash suffices and allows lookup by hash (a per-row salt, as
 * in crypto_pwhash_str, would not). S0_EINVAL for an empty key; S0_EIO
 * when the secret cannot be read or stored. Thread-safe.
 */
int s0__apikey_hash(s0__meta *m, const char *key, char out[S0__APIKEY_HASH_HEX],
                    s0_error **err);

#endif
