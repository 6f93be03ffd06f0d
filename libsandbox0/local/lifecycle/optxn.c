/* The durable step of a lifecycle operation (optxn.h). */
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "local/lifecycle/engine_internal.h"

/* Further attempts at a step's transaction that another node's aborted. */
#define OP_CONFLICT_RETRIES 4

/* One attempt at the step's transaction; op holds the new state after it. */
static int transaction(s0__engine *e, s0__op_row *op, s0__op_state to, const s0__op_step *s,
                       s0_error **err)
{
	int rc = s0__meta_begin(e->meta, err);
	if (rc < 0)
		return rc;
	/* advancing an operation changes a sandbox this node acts on: only
	 * while it still holds it (docs/scaling.md "Leases"); recording a new
	 * one is a request any node may make for the owner to carry out */
	if (op->id)
		rc = s0__engine_fence_check(e, op->sandbox_id, op->generation, err);
	if (rc < 0) {
		s0__meta_rollback(e->meta);
		return rc;
	}
	op->state = to;
	op->updated_at_ms = s0__engine_now(e);
	if (!op->id)
		op->created_at_ms = op->updated_at_ms;
	if (s->write)
		rc = s->write(e, op, s->ctx, err);
	if (rc == S0_OK && s->row)
		rc = s0__engine_save(e, s->row, err);
	if (rc == S0_OK)
		rc = op->id ? s0__meta_op_update(e->meta, op, err) : s0__meta_op_insert(e->meta, op, err);
	if (rc == S0_OK)
		rc = s0__meta_commit(e->meta, err);
	else
		s0__meta_rollback(e->meta);
	if (rc == S0_OK) { /* committed: visible now (watch.h) */
		if (s->row && strcmp(s->row->rec.id, op->sandbox_id))
			s0__engine_watch_bump(e->watch, s->row->rec.id);
		s0__engine_watch_bump(e->watch, op->sandbox_id);
	}
	return rc;
}

int s0__op_advance(s0__engine *e, s0__op_row *op, s0__op_state to, const s0__op_step *step,
                   s0_error **err)
{
	static const s0__op_step none = {0};
	const s0__op_step *s = step ? step : &none;
	int rc = s->effect ? s->effect(e, op, s->ctx) : S0_OK;
	if (rc < 0)
		return rc;
	const s0__op_state was = op->state;
	const int64_t was_id = op->id, was_updated = op->updated_at_ms;
	/* a serialization failure between nodes (docs/postgres.md: the step
	 * did not happen) is tried again after a few ms, a few times, before
	 * the step fails: transactions of other nodes on other sandboxes abort
	 * this one when they share index pages (docs/scaling.md) */
	s0_error *terr = NULL;
	for (int attempt = 0;; attempt++) {
		rc = transaction(e, op, to, s, &terr);
		if (rc == S0_OK || attempt == OP_CONFLICT_RETRIES ||
		    strcmp(s0_error_reason(terr), "meta_conflict"))
			break;
		s0_error_free(terr);
		terr = NULL;
		op->state = was;
		op->id = was_id;
		op->updated_at_ms = was_updated;
		struct timespec ts = {0, (long)(1 + randombytes_uniform(5)) * 1000000L};
		nanosleep(&ts, NULL);
	}
	if (rc < 0) {
		op->state = was;
		op->id = was_id;
		op->updated_at_ms = was_updated;
		if (s->effect && s->undo)
			s->undo(e, op, s->ctx);
	}
	if (err && !*err)
		*err = terr;
	else
		s0_error_free(terr);
	return rc;
}
