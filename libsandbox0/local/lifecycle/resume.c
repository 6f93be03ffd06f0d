/*
 * The resume transaction (RTX-01..RTX-08): lock the
 * sandbox, settle its unfinished operation (wait for an explicit pause to
 * finish; cancel an automatic TTL pause that has not published, docs/wire.md
 * §3.7; drive a crash recovery), reserve the next generation, lease,
 * attach lazily, prove readiness, commit running.
 */
#include <stdlib.h>
#include <string.h>

#include "local/lifecycle/engine_internal.h"

/* What a resume has to do about the sandbox's unfinished operation. */
typedef enum settle {
	SETTLED,     /* nothing in flight (any pause or recovery has finished) */
	WAIT,        /* a pause is on its way to its commit: wait for it */
	RELEASING,   /* committed, or recovering, but the old runtime is not proven gone */
	TERMINATING, /* a delete is in flight */
	FALLBACK,    /* a failed memory restore's replacement is still pending */
	AWAY,        /* a live node that did not answer holds its generation */
} settle;

/* In the cancel's transaction: the soft TTL starts over. */
static int rearm_ttl(s0__engine *e, s0__op_row *op, void *ctx, s0_error **err)
{
	(void)ctx;
	s0__sandbox_row row = {0};
	int rc = S0_OK;
	if (s0__meta_sandbox_get(e->meta, NULL, op->sandbox_id, &row, NULL) == S0_OK &&
	    row.rec.ttl_sec > 0) {
		row.rec.expires_at_ms = s0__engine_now(e) + row.rec.ttl_sec * 1000LL;
		rc = s0__engine_save(e, &row, err);
	}
	s0__sandbox_rec_clear(&row.rec);
	return rc;
}

/* Cancel an automatic TTL pause that has not published: the runtime stays,
 * and the request re-arms the soft TTL (it counts as activity). */
static void cancel_ttl_pause(s0__engine *e, s0__op_row *op)
{
	pthread_mutex_lock(&e->mu);
	s0__runtime *rt = s0__node_find(&e->node, op->runtime_id);
	if (rt)
		rt->fenced = false;
	pthread_mutex_unlock(&e->mu);
	s0__op_advance(e, op, S0__OPS_FAILED, &(s0__op_step){.write = rearm_ttl}, NULL);
}

static settle settle_op(s0__engine *e, const char *id)
{
	s0__op_row op;
	if (s0__meta_op_active(e->meta, id, &op, NULL) < 0)
		return SETTLED;
	bool ttl = op.kind == S0__OP_TTL_PAUSE;
	if (ttl && op.state == S0__OPS_INTENT) {
		pthread_mutex_lock(&e->mu);
		s0__runtime *rt = s0__node_find(&e->node, op.runtime_id);
		bool sealing = rt && s0__volume_sealed(rt->volume);
		pthread_mutex_unlock(&e->mu);
		if (!sealing) { /* past the fence and flush it can only finish */
			cancel_ttl_pause(e, &op);
			return SETTLED;
		}
	}
	if (op.kind == S0__OP_RECOVER) {
		s0__engine_recover_step_locked(e, &op);
		return s0__meta_op_active(e->meta, id, &op, NULL) == S0_OK ? RELEASING : SETTLED;
	}
	if (op.kind == S0__OP_RESUME_FALLBACK) {
		s0__engine_fallback_step_locked(e, &op);
		return s0__meta_op_active(e->meta, id, &op, NULL) == S0_OK ? FALLBACK : SETTLED;
	}
	if (op.kind != S0__OP_PAUSE && !ttl)
		return TERMINATING;
	s0__engine_pause_step_locked(e, &op);
	if (s0__meta_op_active(e->meta, id, &op, NULL) < 0)
		return SETTLED;
	return op.state == S0__OPS_COMMITTED ? RELEASING : WAIT;
}

/* Take the lock with the sandbox's operation settled; a pause still on
 * its way to the commit is waited for up to timeout_ms on the engine clock.
 * A generation held by a node whose lease lapsed is taken over first
 * (docs/scaling.md "Leases"); AWAY with *err set when it cannot be. */
static s0__sblock *lock_settled(s0__engine *e, const char *id, int64_t timeout_ms, settle *out,
                                s0_error **err)
{
	int64_t until = s0__engine_now(e) + timeout_ms;
	for (;;) {
		s0__sblock *l = s0__engine_lock(e, id);
		if (s0__engine_take_over_now(e, id, err) < 0) {
			*out = AWAY;
			return l;
		}
		*out = settle_op(e, id);
		if (*out != WAIT || s0__engine_now(e) >= until || e->stopping)
			return l;
		s0__engine_unlock(e, l);
		s0__faults_wait_change(e->faults, 20);
	}
}

/*
 * A memory restore failed after its authorisation (MFB-03..06): the target
 * is reclaimed and its generation consumed; record the filesystem-only
 * replacement durably (status starting, paused still true) and let the
 * controller start it.
 */
static int schedule_fallback(s0__engine *e, s0__sandbox_row *row, const char *target,
                             s0_error **err)
{
	s0__op_row op = {0};
	s0__strlcpy(op.sandbox_id, row->rec.id, sizeof op.sandbox_id);
	s0__strlcpy(op.runtime_id, target ? target : "", sizeof op.runtime_id);
	op.kind = S0__OP_RESUME_FALLBACK;
	op.generation = row->rec.runtime_generation;
	row->rec.status = S0_STATUS_STARTING;
	row->rec.paused = true;
	int rc = s0__op_advance(e, &op, S0__OPS_INTENT, &(s0__op_step){.row = row}, err);
	if (rc == S0_OK) {
		s0__fault_hit(e->faults, "manager_restart", "fallback-recorded"); /* crash point */
		s0__engine_kick(e);
	}
	return rc;
}

/*
 * Reclaim the failed restore target the way a pause does (MFB-03): the
 * terminal proof first, then its lease; until both, no replacement starts
 * and capacity counts only the target's lease. After a process restart the
 * target is gone with the node; the proof still has to pass.
 */
static int reclaim_target(s0__engine *e, const s0__op_row *op)
{
	pthread_mutex_lock(&e->mu);
	s0__runtime *rt = op->runtime_id[0] ? s0__node_find(&e->node, op->runtime_id) : NULL;
	pthread_mutex_unlock(&e->mu);
	if (rt)
		s0__engine_halt_runtime(e, rt); /* idempotent */
	if (s0__node_terminal_proof(e->faults, rt, NULL) < 0)
		return S0_EUNAVAILABLE; /* held: the controller retries */
	if (rt)
		s0__engine_release_runtime(e, rt);
	return S0_OK;
}

/* Start the filesystem-only replacement of a failed memory restore. */
int s0__engine_fallback_step_locked(s0__engine *e, s0__op_row *op)
{
	if (reclaim_target(e, op) < 0)
		return S0_EUNAVAILABLE;
	s0__sandbox_row row = {0};
	if (s0__meta_sandbox_get(e->meta, NULL, op->sandbox_id, &row, NULL) < 0)
		return s0__op_advance(e, op, S0__OPS_FAILED, NULL, NULL) == S0_OK ? S0_OK : S0_EIO;
	/* `carrier@fallback`: no carrier for the replacement yet (MFB-04/06);
	 * the durable intent stays and the controller retries */
	if (s0__fault_hit(e->faults, "carrier", "fallback") != S0__FAULT_NONE) {
		s0__sandbox_rec_clear(&row.rec);
		return S0_EUNAVAILABLE;
	}
	s0__sandbox_row next = row;
	next.rec.config_json = s0__strdup(row.rec.config_json);
	bool placed;
	int rc = s0__engine_replace_runtime(e, op, &next, &placed);
	if (rc < 0 && !placed && next.rec.runtime_generation != row.rec.runtime_generation) {
		row.rec.runtime_generation = next.rec.runtime_generation; /* consumed */
		s0__engine_save(e, &row, NULL);
	}
	s0__sandbox_rec_clear(&next.rec);
	s0__sandbox_rec_clear(&row.rec);
	return rc == S0_OK ? S0_OK : S0_EUNAVAILABLE;
}

int s0__engine_run_fallback(s0__engine *e, s0__op_row *op)
{
	s0__sblock *l = s0__engine_lock(e, op->sandbox_id);
	s0__op_row cur;
	int rc = S0_OK;
	if (s0__meta_op_active(e->meta, op->sandbox_id, &cur, NULL) == S0_OK && cur.id == op->id)
		rc = s0__engine_fallback_step_locked(e, &cur);
	s0__engine_unlock(e, l);
	return rc;
}

static int resume_locked(s0__engine *e, s0__sandbox_row *row, settle st, bool memory,
                         s0__resume_reply *out, s0_error **err)
{
	if (st == AWAY) /* its error is already set */
		return S0_EUNAVAILABLE;
	if (st == FALLBACK) { /* accepted durable work: poll (docs/wire.md §6.4) */
		out->resumed = false;
		return S0_OK;
	}
	if (st == TERMINATING || row->rec.status == S0_STATUS_TERMINATING)
		return s0__error_set(err, S0_ECONFLICT, "lifecycle_conflict",
		                     "sandbox resume conflicts with another lifecycle operation");
	if (st == WAIT)
		return s0__error_set(err, S0_EUNAVAILABLE, "gateway_timeout",
		                     "timed out waiting for sandbox to pause");
	if (st == RELEASING)
		return s0__error_set(err, S0_EUNAVAILABLE, "unavailable",
		                     "sandbox unavailable: its previous runtime is not yet released");
	out->resumed = true;
	if (row->rec.status == S0_STATUS_RUNNING && !row->rec.paused)
		return S0_OK; /* healthy and running: no new generation */
	char *mounts = s0__engine_template_mounts(e, row->rec.template_id);
	s0__runtime *rt = NULL;
	s0__sandbox_row next = *row;
	next.rec.config_json = s0__strdup(row->rec.config_json);
	/* a memory resume prefers the retained image of the committed head
	 * (MEM-03); an explicit resume without memory stays filesystem-only
	 * (MEM-06) */
	const char *image = memory && row->mem_image[0] && !strcmp(row->mem_image_gen, row->head)
	                            ? row->mem_image
	                            : NULL;
	int rc = s0__engine_start_runtime_mem(e, &next, mounts, image, NULL, &rt, err);
	free(mounts);
	if (rc == S0_ERESUME) {
		s0_error_free(err ? *err : NULL);
		if (err)
			*err = NULL;
		row->rec.runtime_generation = next.rec.runtime_generation; /* consumed (MFB-04) */
		s0__sandbox_rec_clear(&next.rec);
		rc = schedule_fallback(e, row, rt ? rt->id : NULL, err);
		if (rc < 0 && rt) { /* nothing durable names it: reclaim it here */
			s0__op_row tgt = {0};
			s0__strlcpy(tgt.runtime_id, rt->id, sizeof tgt.runtime_id);
			if (reclaim_target(e, &tgt) < 0)
				s0__engine_release_runtime(e, rt); /* best effort */
		}
		out->resumed = false;
		return rc;
	}
	if (rc == S0_OK)
		s0__fault_hit(e->faults, "manager_restart", "resume-ready"); /* crash point */
	/* the commit of the resume: only while this node still holds the
	 * generation it just claimed (docs/scaling.md "Leases") */
	if (rc == S0_OK &&
	    (rc = s0__engine_save_fenced(e, &next, next.rec.runtime_generation, err)) < 0)
		s0__engine_stop_runtime(e, rt);
	else if (rc < 0 && next.rec.runtime_generation != row->rec.runtime_generation) {
		row->rec.runtime_generation = next.rec.runtime_generation; /* consumed */
		s0__engine_save(e, row, NULL);
	}
	s0__sandbox_rec_clear(&next.rec);
	return rc;
}

int s0__engine_resume(s0__engine *e, const char *team, const char *id, bool memory,
                      s0__resume_reply *out, s0_error **err)
{
	memset(out, 0, sizeof *out);
	s0__sandbox_row row = {0};
	int rc = s0__engine_load(e, team, id, &row, err);
	s0__sandbox_rec_clear(&row.rec);
	if (rc < 0)
		return rc;
	settle st;
	s0_error *away = NULL;
	s0__sblock *l = lock_settled(e, id, S0__RESUME_WAIT_MS, &st, &away);
	rc = s0__engine_load(e, team, id, &row, err);
	if (rc == S0_OK && st == AWAY && err && !*err) {
		*err = away;
		away = NULL;
	}
	s0_error_free(away);
	if (rc == S0_OK)
		rc = resume_locked(e, &row, st, memory, out, err);
	s0__engine_unlock(e, l);
	s0__sandbox_rec_clear(&row.rec);
	return rc;
}

int s0__engine_resume_wake(s0__engine *e, const char *id, s0__resume_reply *out)
{
	for (;;) {
		memset(out, 0, sizeof *out);
		s0__sandbox_row row = {0};
		settle st;
		s0__sblock *l = lock_settled(e, id, S0__RESUME_WAIT_MS, &st, NULL);
		int rc = s0__engine_load(e, NULL, id, &row, NULL);
		bool again = rc == S0_OK && (st == WAIT || st == RELEASING) && !e->stopping;
		if (rc == S0_OK && !again)
			rc = resume_locked(e, &row, st, true, out, NULL);
		s0__engine_unlock(e, l);
		s0__sandbox_rec_clear(&row.rec);
		if (!again)
			return rc;
		s0__faults_wait_change(e->faults, 20);
	}
}
