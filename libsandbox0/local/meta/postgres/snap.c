/* Snapshots, templates, GC roots and the latest recorded time in
 * PostgreSQL. */
#include <stdlib.h>
#include <string.h>

#include "local/meta/postgres/mpg.h"

static void read_snap(const PGresult *r, int i, s0__snapshot_row *o)
{
	memset(o, 0, sizeof *o);
	s0__mpg_text(r, i, 0, o->rec.id, sizeof o->rec.id);
	s0__mpg_text(r, i, 1, o->rec.sandbox_id, sizeof o->rec.sandbox_id);
	s0__mpg_text(r, i, 2, o->team_id, sizeof o->team_id);
	s0__mpg_text(r, i, 3, o->rec.name, sizeof o->rec.name);
	s0__mpg_text(r, i, 4, o->rec.description, sizeof o->rec.description);
	s0__mpg_text(r, i, 5, o->generation, sizeof o->generation);
	o->rec.created_at_ms = s0__mpg_i64(r, i, 6);
	o->rec.expires_at_ms = s0__mpg_i64(r, i, 7);
}

int s0__mpg_snapshot_put(s0__meta *m, const s0__snapshot_row *o, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, o->rec.id);
	s0__mpg_p_text(&p, o->rec.sandbox_id);
	s0__mpg_p_text(&p, o->team_id);
	s0__mpg_p_text(&p, o->rec.name);
	s0__mpg_p_text(&p, o->rec.description);
	s0__mpg_p_text(&p, o->generation);
	s0__mpg_p_i64(&p, o->rec.created_at_ms);
	s0__mpg_p_i64(&p, o->rec.expires_at_ms);
	return s0__mpg_run(m, Q_SNAP_PUT, &p, false, NULL, err);
}

int s0__mpg_snapshot_get(s0__meta *m, const char *team, const char *id, s0__snapshot_row *out,
                         s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, id);
	s0__mpg_p_text(&p, team);
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_SNAP_GET, &p, false, &r, err);
	if (rc < 0)
		return rc;
	if (PQntuples(r))
		read_snap(r, 0, out);
	else
		rc = s0__error_set(err, S0_ENOTFOUND, "not_found", "not found");
	PQclear(r);
	return rc;
}

int s0__mpg_snapshot_delete(s0__meta *m, const char *id, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, id);
	return s0__mpg_run(m, Q_SNAP_DEL, &p, false, NULL, err);
}

int s0__mpg_snapshot_list(s0__meta *m, const char *team, const char *sandbox_id,
                          s0__snapshot_rec **out, size_t *n, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, sandbox_id);
	s0__mpg_p_text(&p, team);
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_SNAP_LIST, &p, false, &r, err);
	if (rc < 0)
		return rc;
	size_t len = (size_t)PQntuples(r);
	s0__snapshot_rec *v = calloc(len ? len : 1, sizeof *v);
	for (size_t i = 0; v && i < len; i++) {
		s0__snapshot_row row;
		read_snap(r, (int)i, &row);
		v[i] = row.rec;
	}
	PQclear(r);
	if (!v)
		return s0__error_nomem(err);
	*out = v;
	*n = len;
	return S0_OK;
}

int s0__mpg_snapshot_expire(s0__meta *m, int64_t now_ms, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_i64(&p, now_ms);
	return s0__mpg_run(m, Q_SNAP_EXPIRE, &p, false, NULL, err);
}

/* Row i of r into out (owned strings duplicated); S0_ENOMEM when they cannot be. */
static int read_tpl(const PGresult *r, int i, s0__template_row *out, s0_error **err)
{
	memset(out, 0, sizeof *out);
	s0__mpg_text(r, i, 0, out->name, sizeof out->name);
	s0__mpg_text(r, i, 1, out->generation, sizeof out->generation);
	out->ephemeral_mounts_json = s0__mpg_dup(r, i, 2);
	out->volume_bytes = s0__mpg_i64(r, i, 3);
	s0__mpg_text(r, i, 4, out->image, sizeof out->image);
	s0__mpg_text(r, i, 5, out->team_id, sizeof out->team_id);
	out->spec_json = s0__mpg_dup(r, i, 6);
	out->created_at_ms = s0__mpg_i64(r, i, 7);
	out->updated_at_ms = s0__mpg_i64(r, i, 8);
	if (!out->ephemeral_mounts_json || !out->spec_json) {
		s0__template_row_clear(out);
		return s0__error_nomem(err);
	}
	return S0_OK;
}

int s0__mpg_template_get(s0__meta *m, const char *name, s0__template_row *out, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, name);
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_TMPL_GET, &p, false, &r, err);
	if (rc < 0)
		return rc;
	if (PQntuples(r))
		rc = read_tpl(r, 0, out, err);
	else
		rc = s0__error_set(err, S0_ENOTFOUND, "not_found", "template not found");
	PQclear(r);
	return rc;
}

int s0__mpg_template_put(s0__meta *m, const s0__template_row *t, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, t->name);
	s0__mpg_p_text(&p, t->generation);
	s0__mpg_p_text(&p, t->ephemeral_mounts_json ? t->ephemeral_mounts_json : "[]");
	s0__mpg_p_i64(&p, t->volume_bytes);
	s0__mpg_p_text(&p, t->image);
	s0__mpg_p_text(&p, t->team_id);
	s0__mpg_p_text(&p, t->spec_json ? t->spec_json : "{}");
	s0__mpg_p_i64(&p, t->created_at_ms);
	s0__mpg_p_i64(&p, t->updated_at_ms);
	return s0__mpg_run(m, Q_TMPL_PUT, &p, false, NULL, err);
}

int s0__mpg_template_list(s0__meta *m, const char *team, s0__template_row **out, size_t *n,
                          s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, team ? team : "");
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_TMPL_LIST, &p, false, &r, err);
	if (rc < 0)
		return rc;
	size_t len = (size_t)PQntuples(r), done = 0;
	s0__template_row *v = len ? calloc(len, sizeof *v) : NULL;
	if (len && !v)
		rc = s0__error_nomem(err);
	for (; rc == S0_OK && done < len; done++)
		rc = read_tpl(r, (int)done, &v[done], err);
	PQclear(r);
	if (rc < 0) {
		for (size_t i = 0; i < done; i++)
			s0__template_row_clear(&v[i]);
		free(v);
		return rc;
	}
	*out = v;
	*n = len;
	return S0_OK;
}

int s0__mpg_template_delete(s0__meta *m, const char *name, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, name);
	return s0__mpg_run(m, Q_TMPL_DEL, &p, false, NULL, err);
}

int s0__mpg_template_users(s0__meta *m, const char *name, int64_t *count, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, name);
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_TMPL_USERS, &p, false, &r, err);
	if (rc < 0)
		return rc;
	*count = PQntuples(r) ? s0__mpg_i64(r, 0, 0) : 0;
	PQclear(r);
	return S0_OK;
}

int s0__mpg_live_generations(s0__meta *m, char ***ids, size_t *n, s0_error **err)
{
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_LIVE_GENS, NULL, false, &r, err);
	return rc < 0 ? rc : s0__mpg_ids(r, ids, n, err);
}

int s0__mpg_mem_images(s0__meta *m, char ***ids, size_t *n, s0_error **err)
{
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_MEM_IMAGES, NULL, false, &r, err);
	return rc < 0 ? rc : s0__mpg_ids(r, ids, n, err);
}

int s0__mpg_mem_image_rows(s0__meta *m, s0__mem_image_row **out, size_t *n, s0_error **err)
{
	*out = NULL;
	*n = 0;
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_MEM_ROWS, NULL, false, &r, err);
	if (rc < 0)
		return rc;
	size_t len = (size_t)PQntuples(r);
	s0__mem_image_row *v = calloc(len ? len : 1, sizeof *v);
	for (size_t i = 0; v && i < len; i++) {
		s0__mpg_text(r, (int)i, 0, v[i].sandbox_id, sizeof v[i].sandbox_id);
		s0__mpg_text(r, (int)i, 1, v[i].image, sizeof v[i].image);
		s0__mpg_text(r, (int)i, 2, v[i].generation, sizeof v[i].generation);
	}
	PQclear(r);
	if (!v)
		return s0__error_nomem(err);
	*out = v;
	*n = len;
	return S0_OK;
}

int64_t s0__mpg_latest_time(s0__meta *m)
{
	PGresult *r = NULL;
	if (s0__mpg_run(m, Q_LATEST, NULL, false, &r, NULL) < 0)
		return 0;
	int64_t t = s0__mpg_i64(r, 0, 0);
	PQclear(r);
	return t;
}
