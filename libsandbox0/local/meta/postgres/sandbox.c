/* Sandbox rows of the PostgreSQL metadata store. */
#include <stdlib.h>
#include <string.h>

#include "local/meta/postgres/mpg.h"

static int read_row(const PGresult *r, int i, s0__sandbox_row *o, s0_error **err)
{
	memset(o, 0, sizeof *o);
	s0__sandbox_rec *s = &o->rec;
	s0__mpg_text(r, i, 0, s->id, sizeof s->id);
	s0__mpg_text(r, i, 1, s->team_id, sizeof s->team_id);
	s0__mpg_text(r, i, 2, s->template_id, sizeof s->template_id);
	s->status = (int)s0__mpg_i64(r, i, 3);
	s->paused = s0__mpg_i64(r, i, 4) != 0;
	s->auto_resume = s0__mpg_i64(r, i, 5) != 0;
	s0__mpg_text(r, i, 6, s->runtime_id, sizeof s->runtime_id);
	s->runtime_generation = s0__mpg_i64(r, i, 7);
	s0__mpg_text(r, i, 8, o->head, sizeof o->head);
	s->config_json = s0__mpg_dup(r, i, 9);
	s->ttl_sec = (int32_t)s0__mpg_i64(r, i, 10);
	s->hard_ttl_sec = (int32_t)s0__mpg_i64(r, i, 11);
	s->created_at_ms = s0__mpg_i64(r, i, 12);
	s->updated_at_ms = s0__mpg_i64(r, i, 13);
	s->claimed_at_ms = s0__mpg_i64(r, i, 14);
	s->expires_at_ms = s0__mpg_i64(r, i, 15);
	s->hard_expires_at_ms = s0__mpg_i64(r, i, 16);
	s0__mpg_text(r, i, 17, s->pod_name, sizeof s->pod_name);
	s0__mpg_text(r, i, 18, o->image, sizeof o->image);
	o->seq = s0__mpg_i64(r, i, 19);
	s0__mpg_text(r, i, 20, o->mem_image, sizeof o->mem_image);
	s0__mpg_text(r, i, 21, o->mem_image_gen, sizeof o->mem_image_gen);
	return s->config_json ? S0_OK : s0__error_nomem(err);
}

int s0__mpg_sandbox_get(s0__meta *m, const char *team, const char *id, s0__sandbox_row *out,
                        s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, id);
	s0__mpg_p_text(&p, team);
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_SB_GET, &p, false, &r, err);
	if (rc < 0)
		return rc;
	rc = PQntuples(r) ? read_row(r, 0, out, err)
	                  : s0__error_set(err, S0_ENOTFOUND, "not_found", "sandbox not found");
	PQclear(r);
	return rc;
}

int s0__mpg_sandbox_put(s0__meta *m, const s0__sandbox_row *o, s0_error **err)
{
	const s0__sandbox_rec *s = &o->rec;
	mpg_params p = {0};
	s0__mpg_p_text(&p, s->id);
	s0__mpg_p_text(&p, s->team_id);
	s0__mpg_p_text(&p, s->template_id);
	s0__mpg_p_i64(&p, s->status);
	s0__mpg_p_i64(&p, s->paused);
	s0__mpg_p_i64(&p, s->auto_resume);
	s0__mpg_p_text(&p, s->runtime_id);
	s0__mpg_p_i64(&p, s->runtime_generation);
	s0__mpg_p_text(&p, o->head);
	s0__mpg_p_text(&p, s->config_json ? s->config_json : "{}");
	s0__mpg_p_i64(&p, s->ttl_sec);
	s0__mpg_p_i64(&p, s->hard_ttl_sec);
	s0__mpg_p_i64(&p, s->created_at_ms);
	s0__mpg_p_i64(&p, s->updated_at_ms);
	s0__mpg_p_i64(&p, s->claimed_at_ms);
	s0__mpg_p_i64(&p, s->expires_at_ms);
	s0__mpg_p_i64(&p, s->hard_expires_at_ms);
	s0__mpg_p_text(&p, s->pod_name);
	s0__mpg_p_text(&p, o->image);
	s0__mpg_p_i64(&p, o->seq);
	s0__mpg_p_text(&p, o->mem_image);
	s0__mpg_p_text(&p, o->mem_image_gen);
	return s0__mpg_run(m, Q_SB_PUT, &p, false, NULL, err);
}

int s0__mpg_sandbox_delete(s0__meta *m, const char *id, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, id);
	return s0__mpg_run(m, Q_SB_DEL, &p, false, NULL, err);
}

static void filter_params(mpg_params *p, const char *team, const s0__list_filter *f)
{
	s0__mpg_p_text(p, team);
	s0__mpg_p_i64(p, f->status);
	s0__mpg_p_i64(p, f->paused);
	s0__mpg_p_text(p, f->template_id);
}

int s0__mpg_sandbox_list(s0__meta *m, const char *team, const s0__list_filter *f,
                         s0__sandbox_rec **out, size_t *n, int64_t *count, s0_error **err)
{
	mpg_params p = {0};
	filter_params(&p, team, f);
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_SB_COUNT, &p, false, &r, err);
	if (rc < 0)
		return rc;
	*count = s0__mpg_i64(r, 0, 0);
	PQclear(r);
	s0__mpg_p_i64(&p, f->limit);
	s0__mpg_p_i64(&p, f->offset);
	if ((rc = s0__mpg_run(m, Q_SB_LIST, &p, false, &r, err)) < 0)
		return rc;
	size_t rows = (size_t)PQntuples(r), len = 0;
	s0__sandbox_rec *v = calloc(rows + 1, sizeof *v);
	if (!v)
		rc = s0__error_nomem(err);
	for (size_t i = 0; rc == S0_OK && i < rows; i++) {
		s0__sandbox_row row;
		rc = read_row(r, (int)i, &row, err);
		if (rc == S0_OK)
			v[len++] = row.rec;
		else
			s0__sandbox_rec_clear(&row.rec);
	}
	PQclear(r);
	if (rc < 0) {
		for (size_t i = 0; i < len; i++)
			s0__sandbox_rec_clear(&v[i]);
		free(v);
		return rc;
	}
	*out = v;
	*n = len;
	return S0_OK;
}

int s0__mpg_sandbox_due(s0__meta *m, int64_t now_ms, char ***ids, size_t *n, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_i64(&p, now_ms);
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_SB_DUE, &p, false, &r, err);
	return rc < 0 ? rc : s0__mpg_ids(r, ids, n, err);
}

int s0__mpg_sandbox_all(s0__meta *m, char ***ids, size_t *n, s0_error **err)
{
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_SB_ALL, NULL, false, &r, err);
	return rc < 0 ? rc : s0__mpg_ids(r, ids, n, err);
}
