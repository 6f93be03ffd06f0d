/*
 * Named RootFS snapshots, restore and fork (docs/wire.md §3.8; docs/decisions.md "Snapshots of
 * a running sandbox"): a running source is briefly barriered,
 * its branch is published as a generation that belongs to the snapshot and
 * the running branch is rebased onto it; the head moves only on pause and
 * restore. Snapshots hold filesystem state only.
 */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/lifecycle/engine_internal.h"
#include "local/objects/objid.h"

/* The generation that captures the source now (running: rebase; paused: head). */
/* The publish a runtime's cut (runtime.h) runs with the filesystem quiet. */
typedef struct cut_arg {
	s0__volume *v;
	char *gen;
} cut_arg;

static int checkpoint_fn(void *arg, s0_error **err)
{
	cut_arg *a = arg;
	return s0__volume_checkpoint(a->v, a->gen, err);
}

static int source_generation(s0__engine *e, s0__sandbox_row *row, char gen[S0__GEN_MAX],
                             s0_error **err)
{
	s0__op_row op;
	bool busy = s0__meta_op_active(e->meta, row->rec.id, &op, NULL) == S0_OK;
	bool paused = row->rec.paused && row->rec.status == S0_STATUS_PAUSED;
	if (busy || (!paused && row->rec.status != S0_STATUS_RUNNING))
		return s0__error_set(err, S0_ECONFLICT, "not_running_or_paused",
		                     "sandbox rootfs source operation requires a running or paused "
		                     "sandbox");
	if (paused) {
		s0__strlcpy(gen, row->head, S0__GEN_MAX);
		return S0_OK;
	}
	pthread_mutex_lock(&e->mu);
	s0__runtime *rt = s0__node_find(&e->node, row->rec.runtime_id);
	bool ok = rt && !rt->fenced && !rt->barrier;
	if (ok) {
		rt->barrier = true; /* the brief barrier: new requests wait, in-flight ones finish */
		while (rt->pins > 0)
			pthread_cond_wait(&e->cv, &e->mu);
	}
	pthread_mutex_unlock(&e->mu);
	if (!ok)
		return s0__error_set(err, S0_ECONFLICT, "lifecycle_conflict",
		                     "sandbox rootfs source operation conflicts with another "
		                     "lifecycle operation");
	cut_arg ca = {.v = rt->volume, .gen = gen};
	int rc = rt->gen ? rt->drv->cut(rt->gen, checkpoint_fn, &ca, err)
	                 : s0__volume_checkpoint(rt->volume, gen, err);
	if (rc < 0)
		rc = s0__error_set(err, S0_EUNAVAILABLE, "object_store",
		                   "sandbox rootfs store is unavailable");
	pthread_mutex_lock(&e->mu);
	rt->barrier = false;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
	return rc;
}

int s0__engine_snapshot_create(s0__engine *e, const char *team, const char *id,
                               const char *name, const char *description,
                               int64_t expires_at_ms, s0__snapshot_rec *out, s0_error **err)
{
	if (expires_at_ms && expires_at_ms <= s0__engine_now(e))
		return s0__error_set(err, S0_EINVAL, "bad_request",
		                     "rootfs snapshot expires_at must be in the future");
	s0__sblock *l = s0__engine_lock(e, id);
	s0__sandbox_row row = {0};
	s0__snapshot_row snap = {0};
	int rc = s0__engine_load(e, team, id, &row, err);
	if (rc == S0_OK)
		rc = source_generation(e, &row, snap.generation, err);
	if (rc == S0_OK) {
		s0__engine_new_id("snap_", snap.rec.id, sizeof snap.rec.id);
		s0__strlcpy(snap.rec.sandbox_id, id, sizeof snap.rec.sandbox_id);
		s0__strlcpy(snap.team_id, row.rec.team_id, sizeof snap.team_id);
		s0__strlcpy(snap.rec.name, name ? name : "", sizeof snap.rec.name);
		s0__strlcpy(snap.rec.description, description ? description : "",
		            sizeof snap.rec.description);
		snap.rec.created_at_ms = s0__engine_now(e);
		snap.rec.expires_at_ms = expires_at_ms;
		rc = s0__meta_snapshot_put(e->meta, &snap, err);
		if (rc == S0_OK && !row.rec.paused)
			s0__storage_unpin(e->storage, snap.generation);
	}
	s0__engine_unlock(e, l);
	s0__sandbox_rec_clear(&row.rec);
	if (rc == S0_OK)
		*out = snap.rec;
	return rc;
}

int s0__engine_snapshot_list(s0__engine *e, const char *team, const char *id,
                             s0__snapshot_rec **out, size_t *n, s0_error **err)
{
	s0__sandbox_row row = {0};
	int rc = s0__engine_load(e, team, id, &row, NULL);
	s0__sandbox_rec_clear(&row.rec);
	if (rc == S0_OK || rc == S0_ENOTFOUND)
		rc = s0__meta_snapshot_list(e->meta, team, id, out, n, err);
	if (rc == S0_OK && row.rec.id[0] == '\0' && *n == 0) {
		/* neither the sandbox nor snapshots it left behind (FS-07): unknown */
		free(*out);
		*out = NULL;
		rc = s0__error_set(err, S0_ENOTFOUND, "not_found", "not found");
	}
	return rc;
}

int s0__engine_snapshot_get(s0__engine *e, const char *team, const char *snapshot_id,
                            s0__snapshot_rec *out, s0_error **err)
{
	s0__snapshot_row row;
	if (s0__is_blank(snapshot_id) || strlen(snapshot_id) >= S0__ID_MAX)
		return s0__error_set(err, S0_ENOTFOUND, "not_found", "not found");
	int rc = s0__meta_snapshot_get(e->meta, team, snapshot_id, &row, err);
	if (rc == S0_OK)
		*out = row.rec;
	return rc;
}

int s0__engine_snapshot_delete(s0__engine *e, const char *team, const char *snapshot_id,
                               s0_error **err)
{
	s0__snapshot_rec rec;
	int rc = s0__engine_snapshot_get(e, team, snapshot_id, &rec, err);
	return rc < 0 ? rc : s0__meta_snapshot_delete(e->meta, snapshot_id, err);
}

int s0__engine_restore(s0__engine *e, const char *team, const char *id,
                       const char *snapshot_id, s0_error **err)
{
	s0__sblock *l = s0__engine_lock(e, id);
	s0__sandbox_row row = {0};
	s0__snapshot_row snap;
	s0__op_row op;
	int rc = s0__engine_load(e, team, id, &row, err);
	if (rc == S0_OK && (s0__is_blank(snapshot_id) || strlen(snapshot_id) >= S0__ID_MAX ||
	                    s0__meta_snapshot_get(e->meta, team, snapshot_id, &snap, NULL) < 0))
		rc = s0__error_set(err, S0_ENOTFOUND, "not_found", "not found");
	if (rc == S0_OK && (!row.rec.paused || row.rec.status != S0_STATUS_PAUSED ||
	                    s0__meta_op_active(e->meta, id, &op, NULL) == S0_OK))
		rc = s0__error_set(err, S0_ECONFLICT, "not_paused",
		                   "sandbox rootfs operation requires a paused sandbox");
	if (rc == S0_OK) {
		s0__strlcpy(row.head, snap.generation, sizeof row.head);
		rc = s0__engine_save(e, &row, err);
	}
	s0__engine_unlock(e, l);
	s0__sandbox_rec_clear(&row.rec);
	return rc;
}

static void fork_child(s0__engine *e, const s0__sandbox_row *src, const s0__fork_req *req,
                       const char *gen, s0__sandbox_row *child)
{
	*child = *src;
	child->rec.config_json = s0__strdup(src->rec.config_json);
	s0__engine_new_id("sb_", child->rec.id, sizeof child->rec.id);
	s0__strlcpy(child->head, gen, sizeof child->head);
	child->rec.status = S0_STATUS_PAUSED;
	child->rec.paused = true;
	child->rec.runtime_id[0] = child->rec.pod_name[0] = '\0';
	child->rec.runtime_generation = 0;
	int64_t now = s0__engine_now(e);
	child->rec.created_at_ms = child->rec.claimed_at_ms = now;
	child->rec.expires_at_ms = 0; /* paused: the soft TTL starts at resume */
	if (req->has_ttl)
		child->rec.ttl_sec = req->ttl_sec;
	if (req->has_hard_ttl) {
		child->rec.hard_ttl_sec = req->hard_ttl_sec;
		child->rec.hard_expires_at_ms = req->hard_ttl_sec > 0 ? now + req->hard_ttl_sec * 1000LL : 0;
	}
	pthread_mutex_lock(&e->mu);
	child->seq = ++e->seq;
	pthread_mutex_unlock(&e->mu);
}

/* A failure recorded for a memory fork key, as stored in fork_keys. */
static char *error_json(const s0_error *err)
{
	cJSON *o = cJSON_CreateObject();
	char *s = NULL;
	if (o && cJSON_AddNumberToObject(o, "code", s0_error_code(err)) &&
	    cJSON_AddStringToObject(o, "reason", s0_error_reason(err)) &&
	    cJSON_AddStringToObject(o, "message", s0_error_message(err)))
		s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

static int replay_error(const char *text, s0_error **err)
{
	cJSON *o = cJSON_Parse(text);
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "code");
	const char *reason = s0__json_str(o, "reason");
	const char *msg = s0__json_str(o, "message");
	int code = cJSON_IsNumber(c) && c->valueint < 0 ? c->valueint : S0_EINTERNAL;
	int rc = s0__error_set(err, code, reason ? reason : "operation_failed", "%s",
	                       msg ? msg : "memory fork failed");
	cJSON_Delete(o);
	return rc;
}

/*
 * Memory fork (docs/wire.md §6.7; docs/decisions.md "Memory fork"; MEM-13, MFB-14),
 * under the parent's lock. The key's child is answered again; a failure
 * recorded for the key is answered again without a new capture. A paused
 * parent's child shares its retained image (when it matches the head).
 */
static int mem_fork_locked(s0__engine *e, s0__sandbox_row *row, const s0__fork_req *req,
                           s0__sandbox_row *child, s0_error **err)
{
	const char *key = req->idempotency_key;
	char *cid = NULL, *ej = NULL;
	if (s0__meta_fork_key_get(e->meta, row->rec.id, key, &cid, &ej, NULL) == S0_OK) {
		int rc;
		if (cid && *cid)
			rc = s0__meta_sandbox_get(e->meta, NULL, cid, child, err) == S0_OK
			             ? S0_OK
			             : s0__error_set(err, S0_ENOTFOUND, "not_found", "not found");
		else
			rc = replay_error(ej ? ej : "{}", err);
		free(cid);
		free(ej);
		return rc;
	}
	s0__op_row op;
	bool busy = s0__meta_op_active(e->meta, row->rec.id, &op, NULL) == S0_OK;
	bool paused = row->rec.paused && row->rec.status == S0_STATUS_PAUSED;
	if (busy || (!paused && row->rec.status != S0_STATUS_RUNNING))
		return s0__error_set(err, S0_ECONFLICT, "not_running_or_paused",
		                     "sandbox rootfs source operation requires a running or paused "
		                     "sandbox");
	char gen[S0__GEN_MAX];
	char image[S0__OBJID_HEX_BYTES + 1] = "";
	if (paused) {
		s0__strlcpy(gen, row->head, sizeof gen);
		if (row->mem_image[0] && !strcmp(row->mem_image_gen, row->head))
			s0__strlcpy(image, row->mem_image, sizeof image);
	} else {
		pthread_mutex_lock(&e->mu);
		s0__runtime *rt = s0__node_find(&e->node, row->rec.runtime_id);
		bool ok = rt && rt->ready && !rt->fenced && !rt->barrier && rt->gen;
		pthread_mutex_unlock(&e->mu);
		if (!ok)
			return s0__error_set(err, S0_ECONFLICT, "lifecycle_conflict",
			                     "sandbox rootfs source operation conflicts with another "
			                     "lifecycle operation");
		bool recorded = false;
		s0_error *ferr = NULL;
		s0__engine_guest_sync(e, rt); /* the image holds the guest as of now */
		int rc = s0__engine_mem_fork_capture(e, row, rt, gen, image, &recorded, &ferr);
		if (rc < 0) {
			if (recorded) { /* final for this key (MFB-14) */
				char *j = error_json(ferr);
				if (j)
					s0__meta_fork_key_put(e->meta, row->rec.id, key, NULL, j, NULL);
				free(j);
			}
			return s0__error_put(err, ferr);
		}
	}
	fork_child(e, row, req, gen, child);
	s0__strlcpy(child->mem_image, image, sizeof child->mem_image);
	s0__strlcpy(child->mem_image_gen, image[0] ? gen : "", sizeof child->mem_image_gen);
	int rc = s0__meta_begin(e->meta, err);
	if (rc == S0_OK && (rc = s0__engine_save(e, child, err)) == S0_OK &&
	    (rc = s0__meta_fork_key_put(e->meta, row->rec.id, key, child->rec.id, NULL, err)) ==
	            S0_OK)
		rc = s0__meta_commit(e->meta, err);
	else if (rc == S0_OK)
		s0__meta_rollback(e->meta);
	if (rc == S0_OK) /* committed: visible now (watch.h) */
		s0__engine_watch_bump(e->watch, child->rec.id);
	if (!paused) {
		s0__storage_unpin(e->storage, gen);
		s0__engine_mem_finish(e, row->rec.id); /* recorded: the child roots the image */
	}
	return rc;
}

int s0__engine_fork(s0__engine *e, const char *team, const char *id, const s0__fork_req *req,
                    s0__sandbox_rec *out, s0_error **err)
{
	if (req->memory && !(e->rt_caps & S0__RT_CAP_MEMORY))
		return s0__error_set(err, S0_EUNAVAILABLE, "memory_unavailable",
		                     "memory unavailable: this deployment does not support memory "
		                     "checkpoints");
	if (req->memory && !req->idempotency_key)
		return s0__error_set(err, S0_EINVAL, "bad_request",
		                     "invalid fork request: a memory fork requires an Idempotency-Key");
	if ((req->has_ttl && req->ttl_sec < 0) || (req->has_hard_ttl && req->hard_ttl_sec < 0))
		return s0__error_set(err, S0_EINVAL, "bad_request", "invalid fork request: ttl must be >= 0");
	s0__sblock *l = s0__engine_lock(e, id);
	s0__sandbox_row row = {0}, child = {0};
	char gen[S0__GEN_MAX];
	int rc = s0__engine_load(e, team, id, &row, err);
	if (rc == S0_OK && req->memory) {
		rc = mem_fork_locked(e, &row, req, &child, err);
	} else if (rc == S0_OK && (rc = source_generation(e, &row, gen, err)) == S0_OK) {
		fork_child(e, &row, req, gen, &child);
		rc = s0__engine_save(e, &child, err);
		if (!row.rec.paused)
			s0__storage_unpin(e->storage, gen);
	}
	s0__engine_unlock(e, l);
	s0__sandbox_rec_clear(&row.rec);
	if (rc == S0_OK) {
		*out = child.rec;
		return S0_OK;
	}
	s0__sandbox_rec_clear(&child.rec);
	return rc;
}
