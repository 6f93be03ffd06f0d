/*
 * The resume transaction (seed "Filesystem Resume Transaction"): lock the
 * sandbox, wait for an in-flight explicit pause to commit (an in-flight
 * automatic TTL pause is cancelled instead, api.md §3.7), reserve the next
 * generation, lease, attach lazily, prove readiness, commit running.
 */
#include <stdlib.h>
#include <string.h>

#include "local/lifecycle/engine_internal.h"

/* Resolve an in-flight pause: cancel a TTL pause not yet published, or
 * drive an explicit one forward. Returns 1 when the caller must wait. */
static int settle_pause(s0__engine *e, const char *id, bool *cancelled_ttl)
{
	s0__op_row op;
	if (s0__meta_op_active(e->meta, id, &op, NULL) < 0)
		return 0;
	if (!strcmp(op.kind, "ttl_pause") && !strcmp(op.state, "intent")) {
		pthread_mutex_lock(&e->mu);
		s0__runtime *rt = s0__node_find(&e->node, op.runtime_id);
		if (rt)
			rt->fenced = false;
		pthread_mutex_unlock(&e->mu);
		s0__strlcpy(op.state, "failed", sizeof op.state);
		s0__meta_op_update(e->meta, &op, NULL);
		*cancelled_ttl = true;
		return 0;
	}
	if (strcmp(op.kind, "pause") && strcmp(op.kind, "ttl_pause"))
		return 1; /* delete in progress: the caller reports terminating */
	s0__engine_pause_step_locked(e, &op);
	return s0__meta_op_active(e->meta, id, &op, NULL) == S0_OK ? 1 : 0;
}

/* Take the lock with no pause in flight; waits (real time) up to timeout. */
static s0__sblock *lock_settled(s0__engine *e, const char *id, int64_t timeout_ms,
                                bool *cancelled_ttl)
{
	int64_t until = s0__real_monotonic_ms() + timeout_ms;
	for (;;) {
		s0__sblock *l = s0__engine_lock(e, id);
		if (!settle_pause(e, id, cancelled_ttl) || s0__real_monotonic_ms() >= until)
			return l;
		s0__engine_unlock(e, l);
		s0__faults_wait_change(e->faults, 20);
	}
}

static int resume_locked(s0__engine *e, s0__sandbox_row *row, s0__resume_reply *out,
                         s0_error **err)
{
	s0__op_row op;
	if (s0__meta_op_active(e->meta, row->rec.id, &op, NULL) == S0_OK)
		return s0__error_set(err, S0_EUNAVAILABLE, "unavailable",
		                     "timed out waiting for sandbox to pause");
	if (row->rec.status == S0_STATUS_TERMINATING)
		return s0__error_set(err, S0_ECONFLICT, "lifecycle_conflict",
		                     "sandbox resume conflicts with another lifecycle operation");
	out->resumed = true;
	if (row->rec.status == S0_STATUS_RUNNING && !row->rec.paused)
		return S0_OK; /* healthy and running: no new generation */
	char *mounts = s0__engine_template_mounts(e, row->rec.template_id);
	s0__runtime *rt = NULL;
	s0__sandbox_row next = *row;
	next.rec.config_json = s0__strdup(row->rec.config_json);
	int rc = s0__engine_start_runtime(e, &next, mounts, &rt, err);
	free(mounts);
	if (rc == S0_OK && (rc = s0__engine_save(e, &next, err)) < 0)
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
	(void)memory; /* no retained memory images yet: a memory resume is filesystem-only */
	memset(out, 0, sizeof *out);
	s0__sandbox_row row = {0};
	int rc = s0__engine_load(e, team, id, &row, err);
	s0__sandbox_rec_clear(&row.rec);
	if (rc < 0)
		return rc;
	bool cancelled = false;
	s0__sblock *l = lock_settled(e, id, 45000, &cancelled);
	rc = s0__engine_load(e, team, id, &row, err);
	if (rc == S0_OK)
		rc = resume_locked(e, &row, out, err);
	s0__engine_unlock(e, l);
	s0__sandbox_rec_clear(&row.rec);
	return rc;
}
