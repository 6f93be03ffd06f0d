/* Claim, get, list, update, refresh (docs/wire.md §3.1–3.5, §3.7). */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/lifecycle/engine_internal.h"
#include "local/lifecycle/services.h"

static int copy_out(s0__sandbox_row *row, s0__sandbox_rec *out)
{
	*out = row->rec; /* transfers config_json */
	row->rec.config_json = NULL;
	return S0_OK;
}

char *s0__engine_template_mounts(s0__engine *e, const char *template_id)
{
	s0__template_row t;
	if (s0__meta_template_get(e->meta, template_id, &t, NULL) < 0)
		return s0__strdup("[]");
	char *mounts = t.ephemeral_mounts_json; /* transfer */
	t.ephemeral_mounts_json = NULL;
	s0__template_row_clear(&t);
	return mounts;
}

static int claim_base(s0__engine *e, const char *team, const s0__claim_req *req,
                      s0__sandbox_row *row, s0_error **err)
{
	s0__template_row tpl;
	memset(row, 0, sizeof *row); /* the caller clears row on every failure */
	int rc = s0__meta_template_get(e->meta, req->template_id, &tpl, NULL);
	if (rc == S0_OK && tpl.team_id[0] && strcmp(tpl.team_id, team)) { /* another team's */
		s0__template_row_clear(&tpl);
		rc = S0_ENOTFOUND;
	}
	if (rc < 0)
		return s0__error_set(err, S0_ENOTFOUND, "not_found", "template not found: %s",
		                     req->template_id);
	s0__strlcpy(row->head, tpl.generation, sizeof row->head);
	s0__strlcpy(row->image, tpl.image, sizeof row->image);
	s0__template_row_clear(&tpl);
	if (req->snapshot_id) {
		s0__snapshot_row snap;
		if (s0__meta_snapshot_get(e->meta, team, req->snapshot_id, &snap, NULL) < 0)
			return s0__error_set(err, S0_ENOTFOUND, "not_found", "snapshot not found: %s",
			                     req->snapshot_id);
		s0__strlcpy(row->head, snap.generation, sizeof row->head);
	}
	s0__sandbox_rec *r = &row->rec;
	s0__engine_new_id("sb_", r->id, sizeof r->id);
	s0__strlcpy(r->team_id, team, sizeof r->team_id);
	s0__strlcpy(r->template_id, req->template_id, sizeof r->template_id);
	r->auto_resume = true;
	r->status = S0_STATUS_STARTING;
	int64_t now = s0__engine_now(e);
	r->created_at_ms = r->claimed_at_ms = r->updated_at_ms = now;
	pthread_mutex_lock(&e->mu);
	row->seq = ++e->seq;
	pthread_mutex_unlock(&e->mu);
	return s0__config_apply(req->config, false, row, now, err);
}

int s0__engine_claim(s0__engine *e, const char *team, const s0__claim_req *req,
                     s0__sandbox_rec *out, s0_error **err)
{
	s0__sandbox_row row = {0};
	int rc = claim_base(e, team, req, &row, err);
	if (rc < 0) {
		s0__sandbox_rec_clear(&row.rec);
		return rc;
	}
	char *mounts = s0__engine_template_mounts(e, req->template_id);
	s0__runtime *rt = NULL;
	int64_t hard = row.rec.hard_expires_at_ms;
	rc = s0__engine_start_runtime(e, &row, mounts, &rt, err);
	free(mounts);
	row.rec.hard_expires_at_ms = hard;
	if (rc == S0_OK) {
		rc = s0__engine_save(e, &row, err);
		if (rc < 0)
			s0__engine_stop_runtime(e, rt);
	}
	if (rc == S0_OK)
		return copy_out(&row, out);
	s0__sandbox_rec_clear(&row.rec);
	return rc;
}

int s0__engine_get(s0__engine *e, const char *team, const char *id, s0__sandbox_rec *out,
                   s0_error **err)
{
	s0__sandbox_row row = {0};
	int rc = s0__engine_load(e, team, id, &row, err);
	return rc < 0 ? rc : copy_out(&row, out);
}

int s0__engine_list(s0__engine *e, const char *team, const s0__list_filter *f,
                    s0__sandbox_rec **out, size_t *n, int64_t *count, s0_error **err)
{
	return s0__meta_sandbox_list(e->meta, team, f, out, n, count, err);
}

int s0__engine_update(s0__engine *e, const char *team, const char *id, const cJSON *config,
                      s0__sandbox_rec *out, s0_error **err)
{
	s0__sblock *l = s0__engine_lock(e, id);
	s0__sandbox_row row = {0};
	int rc = s0__engine_load_live(e, team, id, &row, err);
	if (rc == S0_OK)
		rc = s0__config_apply(config, true, &row, s0__engine_now(e), err);
	if (rc == S0_OK && !row.rec.auto_resume) /* services.h: resume routes need it */
		rc = s0__services_allow_auto_resume_off(e, id, err);
	if (rc == S0_OK)
		rc = s0__engine_save(e, &row, err);
	const cJSON *net = cJSON_GetObjectItemCaseSensitive(config, "network");
	if (rc == S0_OK && net && !cJSON_IsNull(net))
		s0__engine_reapply_network(e, &row);
	s0__engine_unlock(e, l);
	if (rc == S0_OK)
		return copy_out(&row, out);
	s0__sandbox_rec_clear(&row.rec);
	return rc;
}

int s0__engine_refresh(s0__engine *e, const char *team, const char *id, bool has_duration,
                       int64_t duration_sec, s0__sandbox_rec *out, s0_error **err)
{
	s0__sblock *l = s0__engine_lock(e, id);
	s0__sandbox_row row = {0};
	int rc = s0__engine_load(e, team, id, &row, err);
	int64_t now = s0__engine_now(e);
	if (rc == S0_OK && (row.rec.paused || row.rec.status != S0_STATUS_RUNNING))
		rc = s0__error_set(err, S0_ECONFLICT, "conflict",
		                   "sandbox refresh requires a running sandbox");
	else if (rc == S0_OK && (duration_sec < 0 ||
	                         (row.rec.hard_ttl_sec > 0 && duration_sec > row.rec.hard_ttl_sec)))
		rc = s0__error_set(err, S0_EINVAL, "bad_request",
		                   "invalid refresh request: duration must be between 0 and hard_ttl");
	if (rc == S0_OK) {
		int64_t d = has_duration && duration_sec > 0 ? duration_sec : row.rec.ttl_sec;
		row.rec.expires_at_ms = d > 0 ? now + d * 1000 : 0;
		if (row.rec.hard_ttl_sec > 0)
			row.rec.hard_expires_at_ms = now + row.rec.hard_ttl_sec * 1000LL;
		rc = s0__engine_save(e, &row, err);
	}
	s0__engine_unlock(e, l);
	if (rc == S0_OK)
		return copy_out(&row, out);
	s0__sandbox_rec_clear(&row.rec);
	return rc;
}
