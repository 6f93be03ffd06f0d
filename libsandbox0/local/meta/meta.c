/*
 * The dispatching side of meta.h: argument checks common to every
 * implementation, then the call through the handle's vtable.
 */
#include <string.h>

#include "local/meta/meta.h"

/* A programming error of the caller, not a store condition. */
static int bad(s0_error **err, const char *what)
{
	return s0__error_set(err, S0_EINVAL, "bad_request", "metadata store: %s", what);
}

#define NEED(cond, what)                                                                \
	do {                                                                            \
		if (!(cond))                                                            \
			return bad(err, what);                                          \
	} while (0)

/* A non-empty string that fits a buffer of cap bytes. */
static bool fits(const char *s, size_t cap)
{
	return s && *s && strnlen(s, cap) < cap;
}

static bool op_valid(const s0__op_row *op)
{
	return op && (unsigned)op->kind < S0__OP_KIND_COUNT &&
	       (unsigned)op->state < S0__OPS_STATE_COUNT && op->sandbox_id[0];
}

void s0__meta_close(s0__meta *m)
{
	if (m)
		m->ops->close(m);
}

const char *s0__meta_backend_name(const s0__meta *m)
{
	return m->ops->name;
}

int s0__meta_schema_version(s0__meta *m)
{
	return m->ops->schema_version(m);
}

int s0__meta_begin(s0__meta *m, s0_error **err)
{
	return m->ops->begin(m, err);
}

int s0__meta_commit(s0__meta *m, s0_error **err)
{
	return m->ops->commit(m, err);
}

void s0__meta_rollback(s0__meta *m)
{
	m->ops->rollback(m);
}

int s0__meta_sandbox_get(s0__meta *m, const char *team, const char *id, s0__sandbox_row *out,
                         s0_error **err)
{
	NEED(id && out, "sandbox_get: id and out are required");
	return m->ops->sandbox_get(m, team, id, out, err);
}

int s0__meta_sandbox_put(s0__meta *m, const s0__sandbox_row *row, s0_error **err)
{
	NEED(row && row->rec.id[0], "sandbox_put: a row with an id is required");
	return m->ops->sandbox_put(m, row, err);
}

int s0__meta_sandbox_delete(s0__meta *m, const char *id, s0_error **err)
{
	NEED(id, "sandbox_delete: id is required");
	return m->ops->sandbox_delete(m, id, err);
}

int s0__meta_sandbox_list(s0__meta *m, const char *team, const s0__list_filter *f,
                          s0__sandbox_rec **out, size_t *n, int64_t *count, s0_error **err)
{
	NEED(team && f && out && n && count, "sandbox_list: team, filter and outputs are required");
	NEED(f->limit >= 0 && f->offset >= 0, "sandbox_list: negative limit or offset");
	return m->ops->sandbox_list(m, team, f, out, n, count, err);
}

int s0__meta_sandbox_due(s0__meta *m, int64_t now_ms, char ***ids, size_t *n, s0_error **err)
{
	NEED(ids && n, "sandbox_due: outputs are required");
	return m->ops->sandbox_due(m, now_ms, ids, n, err);
}

int s0__meta_sandbox_all(s0__meta *m, char ***ids, size_t *n, s0_error **err)
{
	NEED(ids && n, "sandbox_all: outputs are required");
	return m->ops->sandbox_all(m, ids, n, err);
}

int s0__meta_op_insert(s0__meta *m, s0__op_row *op, s0_error **err)
{
	NEED(op_valid(op), "op_insert: a sandbox id, a known kind and state are required");
	return m->ops->op_insert(m, op, err);
}

int s0__meta_op_update(s0__meta *m, const s0__op_row *op, s0_error **err)
{
	NEED(op_valid(op) && op->id > 0, "op_update: a stored operation is required");
	return m->ops->op_update(m, op, err);
}

int s0__meta_op_active(s0__meta *m, const char *sandbox_id, s0__op_row *out, s0_error **err)
{
	NEED(sandbox_id && out, "op_active: sandbox id and out are required");
	return m->ops->op_active(m, sandbox_id, out, err);
}

int s0__meta_op_pending(s0__meta *m, s0__op_row **out, size_t *n, s0_error **err)
{
	NEED(out && n, "op_pending: outputs are required");
	return m->ops->op_pending(m, out, n, err);
}

int s0__meta_op_count(s0__meta *m, const char *sandbox_id, s0__op_kind kind, int64_t *out,
                      s0_error **err)
{
	NEED(sandbox_id && out && (unsigned)kind < S0__OP_KIND_COUNT,
	     "op_count: sandbox id, a known kind and out are required");
	return m->ops->op_count(m, sandbox_id, kind, out, err);
}

int s0__meta_mem_images(s0__meta *m, char ***ids, size_t *n, s0_error **err)
{
	NEED(ids && n, "mem_images: outputs are required");
	return m->ops->mem_images(m, ids, n, err);
}

int s0__meta_mem_image_rows(s0__meta *m, s0__mem_image_row **out, size_t *n, s0_error **err)
{
	NEED(out && n, "mem_image_rows: outputs are required");
	return m->ops->mem_image_rows(m, out, n, err);
}

int s0__meta_live_generations(s0__meta *m, char ***ids, size_t *n, s0_error **err)
{
	NEED(ids && n, "live_generations: outputs are required");
	return m->ops->live_generations(m, ids, n, err);
}

int64_t s0__meta_latest_time(s0__meta *m)
{
	return m->ops->latest_time(m);
}

int s0__meta_snapshot_put(s0__meta *m, const s0__snapshot_row *row, s0_error **err)
{
	NEED(row && row->rec.id[0], "snapshot_put: a row with an id is required");
	return m->ops->snapshot_put(m, row, err);
}

int s0__meta_snapshot_get(s0__meta *m, const char *team, const char *id, s0__snapshot_row *out,
                          s0_error **err)
{
	NEED(id && out, "snapshot_get: id and out are required");
	return m->ops->snapshot_get(m, team, id, out, err);
}

int s0__meta_snapshot_delete(s0__meta *m, const char *id, s0_error **err)
{
	NEED(id, "snapshot_delete: id is required");
	return m->ops->snapshot_delete(m, id, err);
}

int s0__meta_snapshot_list(s0__meta *m, const char *team, const char *sandbox_id,
                           s0__snapshot_rec **out, size_t *n, s0_error **err)
{
	NEED(team && sandbox_id && out && n, "snapshot_list: team, sandbox id and outputs are required");
	return m->ops->snapshot_list(m, team, sandbox_id, out, n, err);
}

int s0__meta_snapshot_expire(s0__meta *m, int64_t now_ms, s0_error **err)
{
	return m->ops->snapshot_expire(m, now_ms, err);
}

int s0__meta_template_get(s0__meta *m, const char *name, s0__template_row *out, s0_error **err)
{
	NEED(name && out, "template_get: name and out are required");
	return m->ops->template_get(m, name, out, err);
}

int s0__meta_template_put(s0__meta *m, const s0__template_row *row, s0_error **err)
{
	NEED(row && row->name[0], "template_put: a row with a name is required");
	return m->ops->template_put(m, row, err);
}

int s0__meta_template_list(s0__meta *m, const char *team, s0__template_row **out, size_t *n,
                           s0_error **err)
{
	NEED(team && out && n, "template_list: team and outputs are required");
	return m->ops->template_list(m, team, out, n, err);
}

int s0__meta_template_delete(s0__meta *m, const char *name, s0_error **err)
{
	NEED(name && *name, "template_delete: a name is required");
	return m->ops->template_delete(m, name, err);
}

int s0__meta_template_users(s0__meta *m, const char *name, int64_t *count, s0_error **err)
{
	NEED(name && *name && count, "template_users: a name and count are required");
	return m->ops->template_users(m, name, count, err);
}

int s0__meta_kv_get(s0__meta *m, const char *k, char **out, s0_error **err)
{
	NEED(k && out, "kv_get: key and out are required");
	return m->ops->kv_get(m, k, out, err);
}

int s0__meta_kv_put(s0__meta *m, const char *k, const char *v, s0_error **err)
{
	NEED(k && v, "kv_put: key and value are required");
	return m->ops->kv_put(m, k, v, err);
}

int s0__meta_sessions_get(s0__meta *m, const char *sandbox_id, void **blob, size_t *len,
                          s0_error **err)
{
	NEED(sandbox_id && blob && len, "sessions_get: sandbox id and outputs are required");
	return m->ops->sessions_get(m, sandbox_id, blob, len, err);
}

int s0__meta_sessions_put(s0__meta *m, const char *sandbox_id, const void *blob, size_t len,
                          s0_error **err)
{
	NEED(sandbox_id && (blob || !len), "sessions_put: sandbox id and blob are required");
	return m->ops->sessions_put(m, sandbox_id, blob, len, err);
}

int s0__meta_sessions_delete(s0__meta *m, const char *sandbox_id, s0_error **err)
{
	NEED(sandbox_id, "sessions_delete: sandbox id is required");
	return m->ops->sessions_delete(m, sandbox_id, err);
}

int s0__meta_services_get(s0__meta *m, const char *sandbox_id, char **json, s0_error **err)
{
	NEED(sandbox_id && json, "services_get: sandbox id and output are required");
	return m->ops->services_get(m, sandbox_id, json, err);
}

int s0__meta_services_put(s0__meta *m, const char *sandbox_id, const char *json,
                          const char *const *public_ids, size_t n, s0_error **err)
{
	NEED(sandbox_id && (public_ids || !n), "services_put: sandbox id and ids are required");
	return m->ops->services_put(m, sandbox_id, json, json ? public_ids : NULL, json ? n : 0,
	                            err);
}

int s0__meta_route_find(s0__meta *m, const char *public_id, char *sandbox_id, s0_error **err)
{
	NEED(public_id && sandbox_id, "route_find: public id and output are required");
	return m->ops->route_find(m, public_id, sandbox_id, err);
}

int s0__meta_fork_key_get(s0__meta *m, const char *sandbox_id, const char *key, char **child,
                          char **error_json, s0_error **err)
{
	NEED(sandbox_id && key && child && error_json, "fork_key_get: ids and outputs are required");
	return m->ops->fork_key_get(m, sandbox_id, key, child, error_json, err);
}

int s0__meta_fork_key_put(s0__meta *m, const char *sandbox_id, const char *key,
                          const char *child, const char *error_json, s0_error **err)
{
	NEED(sandbox_id && key, "fork_key_put: sandbox id and key are required");
	return m->ops->fork_key_put(m, sandbox_id, key, child, error_json, err);
}

int s0__meta_team_put(s0__meta *m, const s0__team_row *row, s0_error **err)
{
	NEED(row && fits(row->id, sizeof row->id) && fits(row->name, sizeof row->name),
	     "team_put: a team needs a non-empty id and name");
	return m->ops->team_put(m, row, err);
}

int s0__meta_team_get(s0__meta *m, const char *id, s0__team_row *out, s0_error **err)
{
	NEED(id && out, "team_get: id and out are required");
	return m->ops->team_get(m, id, out, err);
}

int s0__meta_team_list(s0__meta *m, s0__team_row **out, size_t *n, s0_error **err)
{
	NEED(out && n, "team_list: outputs are required");
	return m->ops->team_list(m, out, n, err);
}

/* 64 lowercase hex digits. */
static bool hash_ok(const char *h)
{
	size_t i = 0;
	for (; h && h[i]; i++)
		if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f')))
			return false;
	return i == S0__APIKEY_HASH_HEX - 1;
}

int s0__meta_apikey_create(s0__meta *m, const s0__apikey_row *row, s0_error **err)
{
	NEED(row, "apikey_create: a row is required");
	NEED(fits(row->id, sizeof row->id), "apikey_create: the key needs a non-empty id");
	NEED(fits(row->name, sizeof row->name), "apikey_create: the key needs a non-empty name");
	NEED(fits(row->team_id, sizeof row->team_id), "apikey_create: the key needs a team");
	NEED(hash_ok(row->hash), "apikey_create: the hash must be 64 lowercase hex digits");
	NEED(row->revoked_at_ms == 0, "apikey_create: a new key cannot be revoked");
	return m->ops->apikey_create(m, row, err);
}

int s0__meta_apikey_get(s0__meta *m, const char *id, s0__apikey_row *out, s0_error **err)
{
	NEED(id && out, "apikey_get: id and out are required");
	return m->ops->apikey_get(m, id, out, err);
}

int s0__meta_apikey_get_by_hash(s0__meta *m, const char *hash, s0__apikey_row *out,
                                s0_error **err)
{
	NEED(hash && out, "apikey_get_by_hash: hash and out are required");
	return m->ops->apikey_get_by_hash(m, hash, out, err);
}

int s0__meta_apikey_list(s0__meta *m, const char *team, s0__apikey_row **out, size_t *n,
                         s0_error **err)
{
	NEED(out && n, "apikey_list: outputs are required");
	return m->ops->apikey_list(m, team, out, n, err);
}

int s0__meta_apikey_revoke(s0__meta *m, const char *id, int64_t now_ms, s0_error **err)
{
	NEED(id && now_ms > 0, "apikey_revoke: id and a positive time are required");
	return m->ops->apikey_revoke(m, id, now_ms, err);
}

int s0__meta_node_lease(s0__meta *m, const char *node_id, int64_t now_ms, int64_t ttl_ms,
                        int64_t *epoch, s0_error **err)
{
	NEED(fits(node_id, S0__ID_MAX) && epoch && *epoch >= 0 && ttl_ms > 0 && now_ms >= 0,
	     "node_lease: a node id, an epoch (0 to acquire) and a positive ttl are required");
	return m->ops->node_lease(m, node_id, now_ms, ttl_ms, epoch, err);
}

int s0__meta_gen_claim(s0__meta *m, const char *sandbox_id, int64_t generation,
                       const char *node_id, int64_t epoch, int64_t now_ms, s0_error **err)
{
	NEED(fits(sandbox_id, S0__ID_MAX) && fits(node_id, S0__ID_MAX) && generation >= 1 &&
	             epoch >= 1 && now_ms >= 0,
	     "gen_claim: a sandbox, a generation, a node and its epoch are required");
	return m->ops->gen_claim(m, sandbox_id, generation, node_id, epoch, now_ms, err);
}

int s0__meta_gen_owner(s0__meta *m, const char *sandbox_id, s0__gen_owner_row *out,
                       s0_error **err)
{
	NEED(sandbox_id && out, "gen_owner: sandbox id and out are required");
	return m->ops->gen_owner(m, sandbox_id, out, err);
}

int s0__meta_gen_release(s0__meta *m, const char *sandbox_id, const char *node_id,
                         s0_error **err)
{
	NEED(fits(sandbox_id, S0__ID_MAX) && fits(node_id, S0__ID_MAX),
	     "gen_release: a sandbox and a node are required");
	return m->ops->gen_release(m, sandbox_id, node_id, err);
}

int s0__meta_gen_orphans(s0__meta *m, int64_t now_ms, char ***ids, size_t *n, s0_error **err)
{
	NEED(ids && n && now_ms >= 0, "gen_orphans: a time and outputs are required");
	return m->ops->gen_orphans(m, now_ms, ids, n, err);
}

int s0__meta_gen_check(s0__meta *m, const char *sandbox_id, const char *node_id, int64_t epoch,
                       int64_t generation, s0_error **err)
{
	NEED(fits(sandbox_id, S0__ID_MAX) && fits(node_id, S0__ID_MAX) && epoch >= 1 &&
	             generation >= 0,
	     "gen_check: a sandbox, a node, its epoch and a generation are required");
	return m->ops->gen_check(m, sandbox_id, node_id, epoch, generation, err);
}

int s0__meta_listen(s0__meta *m, s0__meta_change_fn fn, void *arg, s0_error **err)
{
	NEED(m && fn, "listen: a store and a callback are required");
	return m->ops->listen ? m->ops->listen(m, fn, arg, err) : S0_OK;
}

int s0__meta_gen_verdict(const char *sandbox_id, const char *node_id, int64_t epoch,
                         int64_t generation, int64_t current_epoch, bool has_owner,
                         const char *owner, int64_t owner_generation, s0_error **err)
{
	if (current_epoch != epoch)
		return s0__error_set(err, S0_ECONFLICT, "node_lease_lost",
		                     "node %s: lease epoch %lld is no longer its own (now %lld)", node_id,
		                     (long long)epoch, (long long)current_epoch);
	if (!has_owner || !strcmp(owner, node_id) || (!owner[0] && owner_generation <= generation))
		return S0_OK;
	return s0__error_set(err, S0_ECONFLICT, "generation_owned",
	                     "sandbox %s: taken over by %s (generation %lld, this node acts on %lld)",
	                     sandbox_id, owner[0] ? owner : "another node",
	                     (long long)owner_generation, (long long)generation);
}
