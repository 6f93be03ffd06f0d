/* Teams and API keys in PostgreSQL. Uniqueness and the team reference are
 * the database's constraints, checked in the one INSERT (no
 * read-then-write window between nodes). */
#include <stdlib.h>
#include <string.h>

#include "local/meta/postgres/mpg.h"

int s0__mpg_team_put(s0__meta *m, const s0__team_row *t, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, t->id);
	s0__mpg_p_text(&p, t->name);
	s0__mpg_p_i64(&p, t->created_at_ms);
	return s0__mpg_run(m, Q_TEAM_PUT, &p, false, NULL, err);
}

static void read_team(const PGresult *r, int i, s0__team_row *t)
{
	memset(t, 0, sizeof *t);
	s0__mpg_text(r, i, 0, t->id, sizeof t->id);
	s0__mpg_text(r, i, 1, t->name, sizeof t->name);
	t->created_at_ms = s0__mpg_i64(r, i, 2);
}

static void read_key(const PGresult *r, int i, s0__apikey_row *k)
{
	memset(k, 0, sizeof *k);
	s0__mpg_text(r, i, 0, k->id, sizeof k->id);
	s0__mpg_text(r, i, 1, k->name, sizeof k->name);
	s0__mpg_text(r, i, 2, k->team_id, sizeof k->team_id);
	s0__mpg_text(r, i, 3, k->hash, sizeof k->hash);
	k->created_at_ms = s0__mpg_i64(r, i, 4);
	k->revoked_at_ms = s0__mpg_i64(r, i, 5);
}

int s0__mpg_team_get(s0__meta *m, const char *id, s0__team_row *out, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, id);
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_TEAM_GET, &p, false, &r, err);
	if (rc < 0)
		return rc;
	if (PQntuples(r))
		read_team(r, 0, out);
	else
		rc = s0__error_set(err, S0_ENOTFOUND, "not_found", "team not found");
	PQclear(r);
	return rc;
}

int s0__mpg_team_list(s0__meta *m, s0__team_row **out, size_t *n, s0_error **err)
{
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_TEAM_LIST, NULL, false, &r, err);
	if (rc < 0)
		return rc;
	size_t len = (size_t)PQntuples(r);
	s0__team_row *v = calloc(len ? len : 1, sizeof *v);
	for (size_t i = 0; v && i < len; i++)
		read_team(r, (int)i, &v[i]);
	PQclear(r);
	if (!v)
		return s0__error_nomem(err);
	*out = v;
	*n = len;
	return S0_OK;
}

int s0__mpg_apikey_create(s0__meta *m, const s0__apikey_row *k, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, k->id);
	s0__mpg_p_text(&p, k->name);
	s0__mpg_p_text(&p, k->team_id);
	s0__mpg_p_text(&p, k->hash);
	s0__mpg_p_i64(&p, k->created_at_ms);
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_KEY_CREATE, &p, false, &r, err);
	if (rc < 0)
		return rc;
	bool stored = PQntuples(r) == 1;
	PQclear(r);
	if (stored)
		return S0_OK;
	s0__team_row t;
	rc = s0__mpg_team_get(m, k->team_id, &t, NULL);
	if (rc == S0_ENOTFOUND)
		return s0__error_set(err, S0_ENOTFOUND, "team_not_found", "team %s not found",
		                     k->team_id);
	if (rc < 0)
		return s0__mpg_team_get(m, k->team_id, &t, err);
	return s0__error_set(err, S0_ECONFLICT, "key_exists",
	                     "an API key with this id or hash already exists");
}

static int get_one(s0__meta *m, mpg_stmt q, const char *arg, s0__apikey_row *out,
                   s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, arg);
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, q, &p, false, &r, err);
	if (rc < 0)
		return rc;
	if (PQntuples(r))
		read_key(r, 0, out);
	else
		rc = s0__error_set(err, S0_ENOTFOUND, "not_found", "API key not found");
	PQclear(r);
	return rc;
}

int s0__mpg_apikey_get(s0__meta *m, const char *id, s0__apikey_row *out, s0_error **err)
{
	return get_one(m, Q_KEY_GET, id, out, err);
}

int s0__mpg_apikey_get_by_hash(s0__meta *m, const char *hash, s0__apikey_row *out,
                               s0_error **err)
{
	return get_one(m, Q_KEY_BYHASH, hash, out, err);
}

int s0__mpg_apikey_list(s0__meta *m, const char *team, s0__apikey_row **out, size_t *n,
                        s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, team);
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_KEY_LIST, &p, false, &r, err);
	if (rc < 0)
		return rc;
	size_t len = (size_t)PQntuples(r);
	s0__apikey_row *v = calloc(len ? len : 1, sizeof *v);
	for (size_t i = 0; v && i < len; i++)
		read_key(r, (int)i, &v[i]);
	PQclear(r);
	if (!v)
		return s0__error_nomem(err);
	*out = v;
	*n = len;
	return S0_OK;
}

int s0__mpg_apikey_revoke(s0__meta *m, const char *id, int64_t now_ms, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, id);
	s0__mpg_p_i64(&p, now_ms);
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_KEY_REVOKE, &p, false, &r, err);
	if (rc < 0)
		return rc;
	if (!PQntuples(r))
		rc = s0__error_set(err, S0_ENOTFOUND, "not_found", "API key not found");
	PQclear(r);
	return rc;
}
