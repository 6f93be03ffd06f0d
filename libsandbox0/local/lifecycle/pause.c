/*
 * The filesystem pause transaction (PTX-01..PTX-10):
 * 1. record planned retirement for the exact runtime generation (durable
 *    intent) — done by the request;
 * 2–3. stop the runtime, fence writes, flush ext4, seal and publish the
 *    branch (state "published", the new generation recorded);
 * 4. advance the head and drop the runtime binding in one SQLite
 *    transaction ("committed"); the sandbox reads `starting` with `paused`
 *    false and runtime_id "" (seed: "can report starting/paused: false
 *    while this work continues") — a committed head alone is not
 *    resume-ready;
 * 5. stop the runtime, prove its six resources absent, return node
 *    capacity, then commit `paused` (status and flag) with the operation
 *    "done" in one transaction.
 * Each step is idempotent; a held or failing step leaves the operation
 * where it is and the controller retries it.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "local/lifecycle/engine_internal.h"
#include "local/objects/objid.h"

static bool active_pause(const s0__op_row *op)
{
	return s0__op_kind_is_pause(op->kind);
}

/* Under e->mu: the runtime `rid` has a memory pause between preparation and intent. */
static bool pause_pending(s0__engine *e, const char *rid)
{
	s0__runtime *rt = *rid ? s0__node_find(&e->node, rid) : NULL;
	return rt && rt->pause_pending;
}

/* The memory pause on `rid` has recorded its intent or failed: waiters go on. */
static void pause_pending_end(s0__engine *e, const char *rid)
{
	pthread_mutex_lock(&e->mu);
	s0__runtime *rt = s0__node_find(&e->node, rid);
	if (rt)
		rt->pause_pending = false;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
}

static int pause_conflict(s0_error **err)
{
	return s0__error_set(err, S0_ECONFLICT, "lifecycle_conflict",
	                     "sandbox pause conflicts with another lifecycle operation");
}

/*
 * Prepare and authorise the capture before answering (docs/decisions.md
 * "Memory pause acceptance"): a cancelled preparation leaves the sandbox
 * running with nothing retained. Called and returns with the sandbox lock
 * *l held, but releases it meanwhile (a delete records its intent and
 * cancels the preparation, MFB-13); a pin keeps the runtime, and
 * rt->pause_pending (set here, cleared by the caller through
 * pause_pending_end; *pending says it was set) makes other pauses wait
 * and join. On success *row is
 * reloaded and the sandbox is still running on runtime `rid`.
 */
static int prepare_memory(s0__engine *e, const char *team, const char *id, s0__sblock **l,
                          s0__sandbox_row *row, const char *rid, bool *pending, s0_error **err)
{
	s0_cancel_token *tok = NULL;
	int rc = s0_cancel_token_new(&tok, err);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&e->mu);
	s0__runtime *rt = s0__node_find(&e->node, rid);
	bool ok = rt && rt->ready && !rt->fenced && !rt->barrier && rt->gen && !rt->prep_cancel &&
	          !rt->pause_pending;
	if (ok) {
		rt->prep_cancel = tok;
		rt->pause_pending = *pending = true;
		rt->pins++;
	}
	pthread_mutex_unlock(&e->mu);
	if (!ok) {
		s0_cancel_token_free(tok);
		return pause_conflict(err);
	}
	s0__engine_unlock(e, *l);
	rc = s0__engine_mem_prepare(e, id, rt, tok, err);
	pthread_mutex_lock(&e->mu);
	rt->prep_cancel = NULL;
	rt->pins--;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
	s0_cancel_token_free(tok);
	*l = s0__engine_lock(e, id);
	if (rc == S0_ECANCELED) { /* a delete cancelled it */
		s0_error_free(err ? *err : NULL);
		if (err)
			*err = NULL;
		rc = pause_conflict(err);
	}
	if (rc < 0)
		return rc;
	/* what happened meanwhile: a delete or another operation wins */
	s0__op_row op;
	s0__sandbox_rec_clear(&row->rec);
	rc = s0__engine_load(e, team, id, row, err);
	bool has_op = rc == S0_OK && s0__meta_op_active(e->meta, id, &op, NULL) == S0_OK;
	if (rc == S0_OK && (row->rec.status != S0_STATUS_RUNNING || row->rec.paused || has_op ||
	                    strcmp(row->rec.runtime_id, rid)))
		rc = pause_conflict(err);
	if (rc < 0)
		s0__engine_mem_finish(e, id);
	return rc;
}

int s0__engine_pause(s0__engine *e, const char *team, const char *id, bool memory,
                     s0__pause_reply *out, s0_error **err)
{
	s0__sblock *l = s0__engine_lock(e, id);
	s0__sandbox_row row = {0};
	s0__op_row op = {0};
	char rid[S0__ID_MAX] = "";
	bool preparing = false;
	int rc, has_op;
	memset(out, 0, sizeof *out);
again:
	rc = s0__engine_load(e, team, id, &row, err);
	has_op = rc == S0_OK ? s0__meta_op_active(e->meta, id, &op, NULL) : S0_ENOTFOUND;
	if (rc < 0)
		goto out;
	if (has_op == S0_OK && active_pause(&op)) {
		/* join the same durable operation (PTX-07), unless it is a
		 * filesystem-only one and this pause wants memory: joining would
		 * answer as if memory were being retained (docs/decisions.md
		 * "Concurrent pauses") */
		if (memory && !op.memory) {
			rc = pause_conflict(err);
			goto out;
		}
		out->status = row.rec.status;
		out->op_id = op.id;
		out->generation = op.generation;
		out->accepted = s0__fault_armed(e->faults, "node_channel", "pause");
		goto out;
	}
	if (row.rec.paused && row.rec.status == S0_STATUS_PAUSED) {
		out->paused = true;
		out->status = S0_STATUS_PAUSED;
		goto out;
	}
	if (row.rec.status == S0_STATUS_RUNNING && !row.rec.paused && has_op != S0_OK) {
		/* a memory pause between preparation and intent: wait for its
		 * outcome and look again (its operation is then joined) */
		s0__strlcpy(rid, row.rec.runtime_id, sizeof rid);
		pthread_mutex_lock(&e->mu);
		bool waiting = pause_pending(e, rid);
		pthread_mutex_unlock(&e->mu);
		if (waiting) {
			s0__engine_unlock(e, l);
			pthread_mutex_lock(&e->mu);
			while (pause_pending(e, rid))
				pthread_cond_wait(&e->cv, &e->mu);
			pthread_mutex_unlock(&e->mu);
			l = s0__engine_lock(e, id);
			s0__sandbox_rec_clear(&row.rec);
			goto again;
		}
	}
	if (row.rec.status != S0_STATUS_RUNNING || row.rec.paused || has_op == S0_OK) {
		rc = pause_conflict(err);
		goto out;
	}
	if (memory) {
		if ((rc = prepare_memory(e, team, id, &l, &row, rid, &preparing, err)) < 0)
			goto out;
	}
	if (s0__fault_hit(e->faults, "meta_store", "intent") != S0__FAULT_NONE) {
		if (memory)
			s0__engine_mem_finish(e, id);
		rc = s0__error_set(err, S0_EINTERNAL, "internal_error",
		                   "failed to pause sandbox: metadata store unavailable");
		goto out;
	}
	memset(&op, 0, sizeof op);
	s0__strlcpy(op.sandbox_id, id, sizeof op.sandbox_id);
	op.kind = S0__OP_PAUSE;
	s0__strlcpy(op.runtime_id, row.rec.runtime_id, sizeof op.runtime_id);
	op.generation = row.rec.runtime_generation;
	op.memory = memory;
	rc = s0__op_advance(e, &op, S0__OPS_INTENT, NULL, err);
	if (rc < 0) {
		if (memory)
			s0__engine_mem_finish(e, id);
		goto out;
	}
	s0__fault_hit(e->faults, "manager_restart", "intent-recorded"); /* crash point */
	out->status = row.rec.status;
	out->op_id = op.id;
	out->generation = op.generation;
	out->accepted = s0__fault_armed(e->faults, "node_channel", "pause");
out:
	if (preparing) /* intent recorded or failed: waiting pauses look again */
		pause_pending_end(e, rid);
	s0__engine_unlock(e, l);
	s0__sandbox_rec_clear(&row.rec);
	if (rc == S0_OK && !out->paused)
		s0__engine_kick(e);
	return rc;
}

static int set_state(s0__engine *e, s0__op_row *op, s0__op_state state)
{
	return s0__op_advance(e, op, state, NULL, NULL);
}

/* Steps 2–3: retire the runtime and publish its branch. */
static int step_publish(s0__engine *e, s0__op_row *op)
{
	pthread_mutex_lock(&e->mu);
	s0__runtime *rt = s0__node_find(&e->node, op->runtime_id);
	bool fencing = rt && !rt->fenced;
	if (rt)
		rt->fenced = true; /* no new runtime requests from here on (INS-05) */
	int pins = rt ? rt->pins : 0;
	pthread_mutex_unlock(&e->mu);
	if (fencing) /* the guest stops here: its deadlines catch up with the clock */
		s0__engine_guest_sync(e, rt);
	if (!rt) /* the runtime died with a previous process: nothing to publish */
		return set_state(e, op, S0__OPS_FAILED) == S0_OK ? S0_OK : S0_EIO;
	pthread_mutex_lock(&e->mu);
	bool lease_fenced = rt->lease_fenced;
	pthread_mutex_unlock(&e->mu);
	if (lease_fenced) /* halted by the lease watchdog: recovered first (lease.c) */
		return S0_EUNAVAILABLE;
	if (pins)
		return S0_EUNAVAILABLE; /* a request is finishing; retry shortly */
	if (s0__fault_hit(e->faults, "node_channel", "pause") != S0__FAULT_NONE)
		return S0_EUNAVAILABLE;
	/* the node operation (fence, seal, publish) is journaled by the ctld
	 * primary before it answers; a promoted standby finds it there and
	 * never publishes twice (REC-04). Journal: "<gen>\n<image>". */
	char gen[S0__GEN_MAX];
	char rec[S0__GEN_MAX + sizeof op->image + 2];
	if (s0__ctld_journal_get(e, op->id, "publish", rec, sizeof rec)) {
		char *nl = strchr(rec, '\n');
		if (nl)
			*nl++ = '\0';
		s0__strlcpy(gen, rec, sizeof gen);
		s0__strlcpy(op->image, nl ? nl : "", sizeof op->image);
		goto published;
	}
	if (op->memory && (e->rt_caps & S0__RT_CAP_KERNEL_FS))
		s0__engine_mem_seal(e, op->sandbox_id, rt); /* the image before the stop */
	if (e->rt_caps & S0__RT_CAP_KERNEL_FS) /* processes gone, bytes on the branch first */
		s0__engine_quiesce_runtime(e, rt);
	if (s0__volume_commit(rt->volume, gen, NULL) < 0)
		return S0_EUNAVAILABLE;
	if (op->memory) {
		/* capture the fenced guest into an image matching this generation;
		 * a failure is never retried and never reported as retention */
		char hex[S0__OBJID_HEX_BYTES];
		if (s0__engine_mem_capture(e, op, rt, gen, hex) < 0) {
			s0__storage_unpin(e->storage, gen); /* the head stays where it was */
			return set_state(e, op, S0__OPS_CAPTURE_FAILED) == S0_OK ? S0_OK : S0_EIO;
		}
		s0__strlcpy(op->image, hex, sizeof op->image);
	}
	snprintf(rec, sizeof rec, "%s\n%s", gen, op->memory ? op->image : "");
	if (s0__ctld_journal_put(e, op->id, "publish", rec) < 0)
		return S0_EIO;
	if (s0__ctld_primary_fails(e, "publish"))
		return S0_EUNAVAILABLE; /* killed before answering: the standby finishes it */
published:
	s0__strlcpy(op->new_head, gen, sizeof op->new_head);
	if (set_state(e, op, S0__OPS_PUBLISHED) < 0)
		return S0_EIO;
	s0__fault_hit(e->faults, "manager_restart", "published"); /* crash point */
	return S0_OK;
}

static int save_sessions(s0__engine *e, s0__op_row *op, void *ctx, s0_error **err)
{
	(void)ctx;
	(void)err;
	s0__engine_sessions_save(e, op->sandbox_id); /* best effort */
	return S0_OK;
}

/* Step 4: one transaction advances the head and unbinds the runtime. */
static int step_commit(s0__engine *e, s0__op_row *op)
{
	if (s0__fault_hit(e->faults, "meta_store", "commit") != S0__FAULT_NONE)
		return S0_EUNAVAILABLE;
	s0__sandbox_row row = {0};
	int got = s0__meta_sandbox_get(e->meta, NULL, op->sandbox_id, &row, NULL);
	if (got == S0_EUNAVAILABLE)
		return got; /* the store is unreachable: retried, never failed for it */
	if (got < 0)
		return set_state(e, op, S0__OPS_FAILED) == S0_OK ? S0_OK : S0_EIO;
	s0__strlcpy(row.head, op->new_head, sizeof row.head);
	/* a memory pause retains its image with the generation it matches; a
	 * filesystem-only pause discards any earlier one (MEM-07, MEM-08) */
	s0__strlcpy(row.mem_image, op->memory ? op->image : "", sizeof row.mem_image);
	s0__strlcpy(row.mem_image_gen, op->memory ? op->new_head : "", sizeof row.mem_image_gen);
	row.rec.status = S0_STATUS_STARTING; /* retirement goes on (step 5) */
	row.rec.paused = false;              /* resume-ready only after the terminal proof */
	row.rec.runtime_id[0] = '\0';
	row.rec.pod_name[0] = '\0';
	row.rec.expires_at_ms = 0;
	/* the sessions as of the pause, in the same transaction */
	s0__op_step step = {.write = save_sessions, .row = &row};
	int rc = s0__op_advance(e, op, S0__OPS_COMMITTED, &step, NULL);
	s0__sandbox_rec_clear(&row.rec);
	if (rc == S0_OK)
		s0__storage_unpin(e->storage, op->new_head);
	s0__fault_hit(e->faults, "manager_restart", "committed"); /* crash point */
	if (rc == S0_OK && s0__ctld_primary_fails(e, "commit"))
		return S0_EUNAVAILABLE; /* the promoted standby takes the retirement over */
	return rc == S0_OK ? S0_OK : S0_EIO;
}

/*
 * Step 5: stop the runtime (the driver call; with `driver_exit` it never
 * answers and the reconciler proves the stop from node state), prove the
 * six resources absent, return capacity, and only then report paused.
 */
static int step_release(s0__engine *e, s0__op_row *op)
{
	/* a node reboot takes the old incarnation's runtimes; until an
	 * authenticated successor boot reconciles it, nothing is proven and
	 * the capacity stays fenced (REC-06) */
	s0__ctld_reboot_hit(e, "release");
	if (s0__ctld_node_down(e))
		return S0_EUNAVAILABLE;
	if (s0__ctld_journal_get(e, op->id, "release", NULL, 0))
		goto released; /* a promoted standby: the primary already released it */
	pthread_mutex_lock(&e->mu);
	s0__runtime *rt = s0__node_find(&e->node, op->runtime_id);
	pthread_mutex_unlock(&e->mu);
	pthread_mutex_lock(&e->mu);
	bool running = rt && !rt->halted;
	pthread_mutex_unlock(&e->mu);
	if (running) {
		bool driver = s0__fault_hit(e->faults, "driver_exit", NULL) == S0__FAULT_NONE;
		if (s0__engine_halt_runtime(e, rt)) {
			pthread_mutex_lock(&e->mu);
			if (driver)
				e->node.driver_stops++;
			else
				e->node.reconciled_stops++;
			pthread_mutex_unlock(&e->mu);
		}
	}
	if (s0__node_terminal_proof(e->faults, rt, NULL) < 0)
		return S0_EUNAVAILABLE; /* not proven absent: capacity stays fenced (PTX-06) */
	if (rt)
		s0__engine_release_runtime(e, rt);
	if (op->memory) /* source terminal: the reservation returns (MFB-12) */
		s0__engine_mem_finish(e, op->sandbox_id);
	if (s0__ctld_journal_put(e, op->id, "release", op->runtime_id) < 0)
		return S0_EIO;
	if (s0__ctld_primary_fails(e, "release"))
		return S0_EUNAVAILABLE; /* killed before answering: the standby finishes it */
released:;
	bool failed = op->state == S0__OPS_CAPTURE_FAILED;
	s0__sandbox_row row = {0};
	int rc = s0__meta_sandbox_get(e->meta, NULL, op->sandbox_id, &row, NULL);
	if (rc == S0_EUNAVAILABLE)
		return rc; /* the store is unreachable: retried, never failed for it */
	if (rc < 0)
		return set_state(e, op, S0__OPS_FAILED) == S0_OK ? S0_OK : S0_EIO;
	/* a failed capture: filesystem recovery from the last committed head
	 * stays available, shown as `failed` with paused true (MFB-07/08) */
	row.rec.status = failed ? S0_STATUS_FAILED : S0_STATUS_PAUSED;
	row.rec.paused = true;
	if (failed) {
		row.rec.runtime_id[0] = '\0';
		row.rec.pod_name[0] = '\0';
		row.rec.expires_at_ms = 0;
		row.mem_image[0] = row.mem_image_gen[0] = '\0';
	}
	/* the generation is released with it: any node may resume the sandbox */
	rc = s0__op_advance(e, op, S0__OPS_DONE,
	                    &(s0__op_step){.row = &row, .write = s0__engine_release_claim}, NULL);
	s0__sandbox_rec_clear(&row.rec);
	s0__fault_hit(e->faults, "manager_restart", "released"); /* crash point */
	return rc == S0_OK ? S0_OK : S0_EIO;
}

int s0__engine_run_pause(s0__engine *e, s0__op_row *op)
{
	s0__sblock *l = s0__engine_lock(e, op->sandbox_id);
	int rc = s0__engine_pause_step_locked(e, op);
	s0__engine_unlock(e, l);
	return rc;
}

int s0__engine_pause_step_locked(s0__engine *e, s0__op_row *op)
{
	s0__op_row cur;
	int found = s0__meta_op_active(e->meta, op->sandbox_id, &cur, NULL);
	if (found == S0_EUNAVAILABLE)
		return found; /* the store is unreachable: the step is retried */
	if (found < 0 || cur.id != op->id)
		return S0_OK; /* finished meanwhile */
	*op = cur;
	/* a state this machine never writes (damaged metadata) can never
	 * advance: close the operation as failed, like a pause with nothing to
	 * publish, so the sandbox keeps its committed head and is not wedged */
	if (op->state != S0__OPS_INTENT && op->state != S0__OPS_PUBLISHED &&
	    op->state != S0__OPS_COMMITTED && op->state != S0__OPS_CAPTURE_FAILED)
		return set_state(e, op, S0__OPS_FAILED) == S0_OK ? S0_OK : S0_EIO;
	int rc = S0_OK;
	if (rc == S0_OK && op->state == S0__OPS_INTENT)
		rc = step_publish(e, op);
	if (rc == S0_OK && op->state == S0__OPS_PUBLISHED)
		rc = step_commit(e, op);
	if (rc == S0_OK && (op->state == S0__OPS_COMMITTED || op->state == S0__OPS_CAPTURE_FAILED))
		rc = step_release(e, op);
	return rc;
}
