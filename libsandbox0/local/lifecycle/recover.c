/*
 * Runtime failure recovery (REC-01..REC-09): a runtime
 * that dies without a planned retirement (its driver reports the
 * generation `exited` — killed from outside, or a damaged lazily restored
 * chunk — or the fault `runtime_crash` / `runtime_crash@<sandbox_id>`)
 * is not a pause. The durable operation
 * "recover" runs:
 *   intent   — recorded with the sandbox `starting`, `paused` false and no
 *              runtime binding; the old writer is fenced and its
 *              uncommitted branch abandoned (never published);
 *   released — the terminal proof passed and the old leases returned (until
 *              then capacity stays fenced: no replacement, REC-09);
 *   done     — a replacement generation from the last committed head is
 *              committed running. While no replacement can be placed the
 *              sandbox reads `failed` and the controller keeps trying.
 * An unpublished pause of the dead runtime is superseded (it fails).
 */
#include <stdlib.h>
#include <string.h>

#include "local/lifecycle/engine_internal.h"

static int set_state(s0__engine *e, s0__op_row *op, s0__op_state state)
{
	return s0__op_advance(e, op, state, NULL, NULL);
}

/* In the recovery intent's transaction: the unpublished pause (ctx) of the
 * dead runtime fails. */
static int supersede_pause(s0__engine *e, s0__op_row *op, void *ctx, s0_error **err)
{
	(void)op;
	s0__op_row p = *(const s0__op_row *)ctx;
	p.state = S0__OPS_FAILED;
	p.updated_at_ms = s0__engine_now(e);
	return s0__meta_op_update(e->meta, &p, err);
}

/* Record the recovery intent (one transaction) for the runtime rt_id. */
static int record_crash(s0__engine *e, s0__sandbox_row *row, const s0__op_row *pause_op)
{
	s0__op_row op = {0};
	s0__strlcpy(op.sandbox_id, row->rec.id, sizeof op.sandbox_id);
	op.kind = S0__OP_RECOVER;
	s0__strlcpy(op.runtime_id, row->rec.runtime_id, sizeof op.runtime_id);
	op.generation = row->rec.runtime_generation;
	row->rec.status = S0_STATUS_STARTING;
	row->rec.paused = false;
	row->rec.runtime_id[0] = '\0';
	row->rec.pod_name[0] = '\0';
	s0__op_step step = {.write = pause_op ? supersede_pause : NULL, .row = row,
	                    .ctx = (void *)pause_op};
	return s0__op_advance(e, &op, S0__OPS_INTENT, &step, NULL);
}

/* Whether the driver reports that the live generation of rt ended without
 * a stop() (runtime.h `exited`; engine lock held). A generation a memory
 * pause, a snapshot or a fork is checkpointing is left to that operation
 * (a checkpoint may end the sandbox on purpose). */
static bool gen_exited(const s0__runtime *rt)
{
	return rt && rt->ready && !rt->halted && !rt->fenced && !rt->barrier &&
	       !rt->pause_pending && !rt->prep_cancel && rt->gen && rt->drv && rt->drv->exited &&
	       rt->drv->exited(rt->gen);
}

static bool runtime_exited(s0__engine *e, const char *runtime_id)
{
	pthread_mutex_lock(&e->mu);
	bool gone = gen_exited(s0__node_find(&e->node, runtime_id));
	pthread_mutex_unlock(&e->mu);
	return gone;
}

/* One runtime that the fault says has crashed, or whose generation ended
 * by itself (sandbox lock held). */
static void crash_one(s0__engine *e, const char *sandbox_id, const char *runtime_id)
{
	s0__sandbox_row row = {0};
	s0__op_row op;
	if (s0__meta_sandbox_get(e->meta, NULL, sandbox_id, &row, NULL) < 0)
		return;
	bool has_op = s0__meta_op_active(e->meta, sandbox_id, &op, NULL) == S0_OK;
	bool unpublished_pause = has_op && s0__op_kind_is_pause(op.kind) &&
	                         op.state == S0__OPS_INTENT;
	/* only a bound runtime with nothing past the point of no return */
	if (strcmp(row.rec.runtime_id, runtime_id) || row.rec.status != S0_STATUS_RUNNING ||
	    (has_op && !unpublished_pause))
		goto out;
	/* the driver saw the generation end by itself (no operation of ours
	 * stops it then), or the fault says it crashed */
	if (!(!has_op && runtime_exited(e, runtime_id)) &&
	    s0__fault_hit(e->faults, "runtime_crash", sandbox_id) == S0__FAULT_NONE)
		goto out;
	pthread_mutex_lock(&e->mu);
	s0__runtime *rt = s0__node_find(&e->node, runtime_id);
	if (rt) {
		rt->crashed = true;
		e->node.runtimes_crashed++;
	}
	pthread_mutex_unlock(&e->mu);
	if (rt)
		s0__engine_halt_runtime(e, rt); /* writer fenced, branch abandoned */
	if (record_crash(e, &row, unpublished_pause ? &op : NULL) == S0_OK) {
		s0__fault_hit(e->faults, "manager_restart", "recover-recorded"); /* crash point */
		s0__engine_kick(e);
	}
out:
	s0__sandbox_rec_clear(&row.rec);
}

void s0__engine_crash_scan(s0__engine *e)
{
	bool faults = s0__fault_armed(e->faults, "runtime_crash", NULL) ||
	              s0__fault_any_armed(e->faults, "runtime_crash@");
	/* snapshot the candidates, then act on each under its sandbox lock */
	size_t n = 0, cap = 0;
	char (*ids)[2][S0__ID_MAX] = NULL;
	pthread_mutex_lock(&e->mu);
	for (s0__runtime *rt = e->node.runtimes; rt; rt = rt->next) {
		if (rt->fenced || rt->halted)
			continue;
		if (!faults && !gen_exited(rt))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			void *nv = realloc(ids, cap * sizeof *ids);
			if (!nv)
				break;
			ids = nv;
		}
		s0__strlcpy(ids[n][0], rt->sandbox_id, S0__ID_MAX);
		s0__strlcpy(ids[n][1], rt->id, S0__ID_MAX);
		n++;
	}
	pthread_mutex_unlock(&e->mu);
	for (size_t i = 0; i < n; i++) {
		s0__sblock *l = s0__engine_lock(e, ids[i][0]);
		crash_one(e, ids[i][0], ids[i][1]);
		s0__engine_unlock(e, l);
	}
	free(ids);
}

/* Terminal proof of the dead runtime, then return its leases. */
static int step_release(s0__engine *e, s0__op_row *op)
{
	pthread_mutex_lock(&e->mu);
	s0__runtime *rt = s0__node_find(&e->node, op->runtime_id);
	pthread_mutex_unlock(&e->mu);
	if (rt)
		s0__engine_halt_runtime(e, rt);
	if (s0__node_terminal_proof(e->faults, rt, NULL) < 0)
		return S0_EUNAVAILABLE; /* capacity stays fenced: no replacement yet */
	if (rt)
		s0__engine_release_runtime(e, rt);
	if (set_state(e, op, S0__OPS_RELEASED) < 0)
		return S0_EIO;
	s0__fault_hit(e->faults, "manager_restart", "recover-released"); /* crash point */
	return S0_OK;
}

/* A replacement's start (the side effect of a recovery's or a fallback's
 * done step): the runtime on the committed head, filling next. */
typedef struct replacement {
	s0__sandbox_row *next;
	s0__runtime *rt;
	bool placed; /* the start succeeded (the commit may still fail) */
} replacement;

static int start_replacement(s0__engine *e, s0__op_row *op, void *ctx)
{
	(void)op;
	replacement *r = ctx;
	char *mounts = s0__engine_template_mounts(e, r->next->rec.template_id);
	int rc = s0__engine_start_runtime(e, r->next, mounts, &r->rt, NULL);
	free(mounts);
	r->placed = rc == S0_OK;
	return rc;
}

static void stop_replacement(s0__engine *e, s0__op_row *op, void *ctx)
{
	(void)op;
	s0__engine_stop_runtime(e, ((replacement *)ctx)->rt);
}

int s0__engine_replace_runtime(s0__engine *e, s0__op_row *op, s0__sandbox_row *next,
                               bool *placed)
{
	replacement r = {.next = next};
	s0__op_step step = {.effect = start_replacement, .undo = stop_replacement, .row = next,
	                    .ctx = &r};
	int rc = s0__op_advance(e, op, S0__OPS_DONE, &step, NULL);
	*placed = r.placed;
	return rc;
}

/* Start the replacement on the last committed head and commit running. */
static int step_replace(s0__engine *e, s0__op_row *op)
{
	s0__sandbox_row row = {0};
	if (s0__meta_sandbox_get(e->meta, NULL, op->sandbox_id, &row, NULL) < 0)
		return set_state(e, op, S0__OPS_FAILED) == S0_OK ? S0_OK : S0_EIO;
	s0__sandbox_row next = row;
	next.rec.config_json = s0__strdup(row.rec.config_json);
	bool placed;
	int rc = s0__engine_replace_runtime(e, op, &next, &placed);
	if (rc < 0 && !placed) {
		/* nothing placed: report failed (paused stays false) and retry later */
		if (row.rec.status != S0_STATUS_FAILED ||
		    next.rec.runtime_generation != row.rec.runtime_generation) {
			row.rec.status = S0_STATUS_FAILED;
			row.rec.runtime_generation = next.rec.runtime_generation;
			s0__engine_save(e, &row, NULL);
		}
		s0__sandbox_rec_clear(&next.rec);
		s0__sandbox_rec_clear(&row.rec);
		return S0_EUNAVAILABLE;
	}
	s0__sandbox_rec_clear(&next.rec);
	s0__sandbox_rec_clear(&row.rec);
	return rc == S0_OK ? S0_OK : S0_EIO;
}

int s0__engine_recover_step_locked(s0__engine *e, s0__op_row *op)
{
	s0__op_row cur;
	if (s0__meta_op_active(e->meta, op->sandbox_id, &cur, NULL) < 0 || cur.id != op->id)
		return S0_OK; /* finished meanwhile */
	*op = cur;
	int rc = S0_OK;
	if (op->state == S0__OPS_INTENT)
		rc = step_release(e, op);
	if (rc == S0_OK && op->state == S0__OPS_RELEASED)
		rc = step_replace(e, op);
	return rc;
}

int s0__engine_run_recover(s0__engine *e, s0__op_row *op)
{
	s0__sblock *l = s0__engine_lock(e, op->sandbox_id);
	int rc = s0__engine_recover_step_locked(e, op);
	s0__engine_unlock(e, l);
	return rc;
}

void s0__engine_recover_after_restart(s0__engine *e, const char *id)
{
	s0__sblock *l = s0__engine_lock(e, id);
	/* a sandbox another node runs (or one whose node lapsed: the failover
	 * scan takes it over, cluster.c) is not this process's to recover */
	if (s0__engine_acts_on(e, id))
		s0__engine_recover_locked(e, id);
	s0__engine_unlock(e, l);
}

void s0__engine_recover_locked(s0__engine *e, const char *id)
{
	s0__sandbox_row row = {0};
	s0__op_row op;
	if (s0__meta_sandbox_get(e->meta, NULL, id, &row, NULL) < 0)
		goto out;
	bool has_op = s0__meta_op_active(e->meta, id, &op, NULL) == S0_OK;
	bool unpublished_pause = has_op && s0__op_kind_is_pause(op.kind) &&
	                         op.state == S0__OPS_INTENT;
	bool had_runtime = row.rec.runtime_id[0] && !row.rec.paused &&
	                   row.rec.status == S0_STATUS_RUNNING;
	if (had_runtime && (!has_op || unpublished_pause)) {
		/* the runtime died with the process: not a pause (its branch is lost) */
		if (record_crash(e, &row, unpublished_pause ? &op : NULL) < 0 ||
		    s0__meta_op_active(e->meta, id, &op, NULL) < 0)
			goto out;
	} else if (!has_op || op.kind != S0__OP_RECOVER) {
		goto out; /* nothing, or a published pause / delete the controller finishes */
	}
	s0__engine_recover_step_locked(e, &op);
out:
	s0__sandbox_rec_clear(&row.rec);
}
