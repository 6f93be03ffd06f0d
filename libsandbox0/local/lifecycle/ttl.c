/*
 * TTL controllers (TTL-05..TTL-11): a due soft TTL requests
 * the same planned filesystem-only pause; a due hard TTL durably deletes
 * identity and RootFS, also while paused.
 */
#include <string.h>

#include "local/lifecycle/engine_internal.h"

void s0__engine_request_timeout_pause(s0__engine *e, s0__sandbox_row *row)
{
	s0__op_row op = {0};
	if (s0__meta_op_active(e->meta, row->rec.id, &op, NULL) == S0_OK)
		return; /* something is already in flight */
	if (row->rec.status != S0_STATUS_RUNNING || row->rec.paused)
		return;
	s0__strlcpy(op.sandbox_id, row->rec.id, sizeof op.sandbox_id);
	op.kind = S0__OP_TTL_PAUSE;
	s0__strlcpy(op.runtime_id, row->rec.runtime_id, sizeof op.runtime_id);
	op.generation = row->rec.runtime_generation;
	if (s0__op_advance(e, &op, S0__OPS_INTENT, NULL, NULL) == S0_OK)
		s0__fault_hit(e->faults, "manager_restart", "intent-recorded"); /* crash point */
}

void s0__engine_ttl_scan(s0__engine *e)
{
	int64_t now = s0__engine_now(e);
	char **ids = NULL;
	size_t n = 0;
	if (s0__meta_sandbox_due(e->meta, now, &ids, &n, NULL) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		s0__sandbox_row row = {0};
		if (s0__meta_sandbox_get(e->meta, NULL, ids[i], &row, NULL) < 0)
			continue;
		bool hard = row.rec.hard_expires_at_ms && row.rec.hard_expires_at_ms <= now;
		if (row.rec.status == S0_STATUS_TERMINATING) {
			/* its delete is a pending operation: the pass retries it */
		} else if (hard) {
			s0__engine_delete_kind(e, NULL, ids[i], S0__OP_HARD_DELETE, NULL);
		} else {
			s0__sblock *l = s0__engine_lock(e, ids[i]);
			s0__engine_request_timeout_pause(e, &row);
			s0__engine_unlock(e, l);
		}
		s0__sandbox_rec_clear(&row.rec);
	}
	s0__meta_free_ids(ids, n);
}
