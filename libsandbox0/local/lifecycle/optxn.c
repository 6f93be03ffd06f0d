/* The durable step of a lifecycle operation (optxn.h). */
#include <string.h>

#include "local/lifecycle/engine_internal.h"

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
	if ((rc = s0__meta_begin(e->meta, err)) == S0_OK) {
		op->state = to;
		op->updated_at_ms = s0__engine_now(e);
		if (!op->id)
			op->created_at_ms = op->updated_at_ms;
		if (s->write)
			rc = s->write(e, op, s->ctx, err);
		if (rc == S0_OK && s->row)
			rc = s0__engine_save(e, s->row, err);
		if (rc == S0_OK)
			rc = op->id ? s0__meta_op_update(e->meta, op, err)
			            : s0__meta_op_insert(e->meta, op, err);
		if (rc == S0_OK)
			rc = s0__meta_commit(e->meta, err);
		else
			s0__meta_rollback(e->meta);
		if (rc == S0_OK) { /* committed: visible now (watch.h) */
			if (s->row && strcmp(s->row->rec.id, op->sandbox_id))
				s0__engine_watch_bump(e->watch, s->row->rec.id);
			s0__engine_watch_bump(e->watch, op->sandbox_id);
		}
	}
	if (rc < 0) {
		op->state = was;
		op->id = was_id;
		op->updated_at_ms = was_updated;
		if (s->effect && s->undo)
			s->undo(e, op, s->ctx);
	}
	return rc;
}
