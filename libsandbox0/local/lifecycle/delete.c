/*
 * Delete and hard-TTL expiry: record termination intent (status
 * terminating), reclaim the runtime and the writable branch, then remove
 * identity, configuration and head in one step. Named snapshots stay
 * (FS-01..FS-08, table).
 */
#include <string.h>

#include "local/lifecycle/engine_internal.h"

/* In the intent's transaction: an unfinished pause (or recovery) is
 * superseded by the termination; ctx receives a published, uncommitted
 * generation to unpin. */
static int supersede(s0__engine *e, s0__op_row *op, void *ctx, s0_error **err)
{
	char *unpin = ctx;
	s0__op_row cur;
	int rc = S0_OK;
	while (s0__meta_op_active(e->meta, op->sandbox_id, &cur, NULL) == S0_OK) {
		if (cur.state == S0__OPS_PUBLISHED)
			s0__strlcpy(unpin, cur.new_head, S0__GEN_MAX);
		cur.state = S0__OPS_FAILED;
		if ((rc = s0__meta_op_update(e->meta, &cur, err)) < 0)
			break;
	}
	return rc;
}

static int record_delete(s0__engine *e, s0__sandbox_row *row, s0__op_kind kind, s0_error **err)
{
	s0__op_row op = {0};
	s0__strlcpy(op.sandbox_id, row->rec.id, sizeof op.sandbox_id);
	op.kind = kind;
	s0__strlcpy(op.runtime_id, row->rec.runtime_id, sizeof op.runtime_id);
	op.generation = row->rec.runtime_generation;
	char unpin[S0__GEN_MAX] = ""; /* a published, uncommitted generation */
	row->rec.status = S0_STATUS_TERMINATING;
	s0__op_step step = {.write = supersede, .row = row, .ctx = unpin};
	int rc = s0__op_advance(e, &op, S0__OPS_INTENT, &step, err);
	if (rc == S0_OK && unpin[0]) /* no longer needed by anyone: GC may collect it */
		s0__storage_unpin(e->storage, unpin);
	return rc;
}

/* In the done transaction: identity, configuration, head and public routes go. */
static int drop_row(s0__engine *e, s0__op_row *op, void *ctx, s0_error **err)
{
	(void)ctx;
	int rc = s0__meta_services_put(e->meta, op->sandbox_id, NULL, NULL, 0, err);
	return rc < 0 ? rc : s0__meta_sandbox_delete(e->meta, op->sandbox_id, err);
}

static int finish_delete_locked(s0__engine *e, s0__op_row *op)
{
	pthread_mutex_lock(&e->mu);
	s0__runtime *rt = s0__node_find_sandbox(&e->node, op->sandbox_id);
	pthread_mutex_unlock(&e->mu);
	if (rt) {
		pthread_mutex_lock(&e->mu);
		bool preparing = rt->prep_cancel != NULL;
		if (preparing) /* a memory pause's preparation: cancel it first (MFB-13) */
			s0_cancel_token_cancel(rt->prep_cancel);
		pthread_mutex_unlock(&e->mu);
		if (preparing)
			return S0_EUNAVAILABLE; /* intent recorded; the controller finishes */
		s0__engine_halt_runtime(e, rt); /* branch abandoned */
		if (s0__node_terminal_proof(e->faults, rt, NULL) < 0)
			return S0_EUNAVAILABLE; /* leases stay until proven absent; retried */
		s0__engine_release_runtime(e, rt);
	}
	s0__fault_hit(e->faults, "manager_restart", "delete-reclaimed"); /* crash point */
	if (s0__op_advance(e, op, S0__OPS_DONE, &(s0__op_step){.write = drop_row}, NULL) == S0_OK) {
		s0__engine_sessions_drop(e, op->sandbox_id); /* sessions and journals go too */
		s0__engine_watch_forget(e->watch, op->sandbox_id);
		pthread_mutex_lock(&e->mu);
		e->gc_wanted = true; /* its unique blocks and image are garbage now (COST-04) */
		e->kicks++;
		pthread_cond_broadcast(&e->cv);
		pthread_mutex_unlock(&e->mu);
		return S0_OK;
	}
	return S0_EIO;
}

int s0__engine_run_delete(s0__engine *e, s0__op_row *op)
{
	s0__sblock *l = s0__engine_lock(e, op->sandbox_id);
	s0__op_row cur;
	int rc = S0_OK;
	if (s0__meta_op_active(e->meta, op->sandbox_id, &cur, NULL) == S0_OK && cur.id == op->id)
		rc = finish_delete_locked(e, &cur);
	s0__engine_unlock(e, l);
	return rc;
}

int s0__engine_delete_kind(s0__engine *e, const char *team, const char *id, s0__op_kind kind,
                           s0_error **err)
{
	s0__sblock *l = s0__engine_lock(e, id);
	s0__sandbox_row row = {0};
	int rc = s0__engine_load(e, team, id, &row, err);
	bool recorded = false;
	if (rc == S0_OK && row.rec.status != S0_STATUS_TERMINATING)
		recorded = (rc = record_delete(e, &row, kind, err)) == S0_OK;
	if (recorded)
		s0__fault_hit(e->faults, "manager_restart", "delete-recorded"); /* crash point */
	if (rc == S0_OK) {
		s0__op_row op;
		if (s0__meta_op_active(e->meta, id, &op, NULL) == S0_OK &&
		    finish_delete_locked(e, &op) != S0_OK && recorded)
			s0__engine_kick(e); /* the controller finishes it */
	}
	s0__engine_unlock(e, l);
	s0__sandbox_rec_clear(&row.rec);
	return rc;
}

int s0__engine_delete(s0__engine *e, const char *team, const char *id, s0_error **err)
{
	return s0__engine_delete_kind(e, team, id, S0__OP_DELETE, err);
}
