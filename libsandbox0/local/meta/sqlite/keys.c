/* Teams and API keys in SQLite (schema 4). */
#include <stdlib.h>
#include <string.h>

#include "local/meta/sqlite/msql.h"

int s0__msql_team_put(s0__meta *m, const s0__team_row *t, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "INSERT INTO teams(id, name, created_at) VALUES(?1,?2,?3)"
	                            " ON CONFLICT(id) DO UPDATE SET name=excluded.name", &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, t->id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, t->name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 3, t->created_at_ms);
		rc = s0__sql_done(m, st, err);
	}
	s0__msql_unlock(m);
	return rc;
}

static void read_team(sqlite3_stmt *st, s0__team_row *t)
{
	memset(t, 0, sizeof *t);
	s0__sql_text(st, 0, t->id, sizeof t->id);
	s0__sql_text(st, 1, t->name, sizeof t->name);
	t->created_at_ms = sqlite3_column_int64(st, 2);
}

int s0__msql_team_get(s0__meta *m, const char *id, s0__team_row *out, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "SELECT id, name, created_at FROM teams WHERE id=?1", &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
		int r = sqlite3_step(st);
		if (r == SQLITE_ROW)
			read_team(st, out);
		else if (r == SQLITE_DONE)
			rc = s0__error_set(err, S0_ENOTFOUND, "not_found", "team not found");
		else
			rc = s0__msql_fail(m, err, "read team");
		sqlite3_finalize(st);
	}
	s0__msql_unlock(m);
	return rc;
}

/* Step st collecting rows of size sz through read into a malloc'd array. */
static int collect(s0__meta *m, sqlite3_stmt *st, size_t sz, void (*read)(sqlite3_stmt *, void *),
                   void **out, size_t *n, s0_error **err)
{
	size_t len = 0, cap = 0;
	char *v = NULL;
	int r, rc = S0_OK;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			cap = cap ? cap * 2 : 8;
			char *nv = realloc(v, cap * sz);
			if (!nv) {
				rc = s0__error_nomem(err);
				break;
			}
			v = nv;
		}
		read(st, v + len++ * sz);
	}
	if (rc == S0_OK && r != SQLITE_DONE)
		rc = s0__msql_fail(m, err, "read rows");
	sqlite3_finalize(st);
	if (rc < 0) {
		free(v);
		return rc;
	}
	*out = v;
	*n = len;
	return S0_OK;
}

static void read_team_v(sqlite3_stmt *st, void *t)
{
	read_team(st, t);
}

int s0__msql_team_list(s0__meta *m, s0__team_row **out, size_t *n, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "SELECT id, name, created_at FROM teams ORDER BY id", &st, err);
	if (rc == S0_OK)
		rc = collect(m, st, sizeof **out, read_team_v, (void **)out, n, err);
	s0__msql_unlock(m);
	return rc;
}

#define KEY_COLS "id, name, team_id, hash, created_at, revoked_at"

static void read_key(sqlite3_stmt *st, void *p)
{
	s0__apikey_row *k = p;
	memset(k, 0, sizeof *k);
	s0__sql_text(st, 0, k->id, sizeof k->id);
	s0__sql_text(st, 1, k->name, sizeof k->name);
	s0__sql_text(st, 2, k->team_id, sizeof k->team_id);
	s0__sql_text(st, 3, k->hash, sizeof k->hash);
	k->created_at_ms = sqlite3_column_int64(st, 4);
	k->revoked_at_ms = sqlite3_column_int64(st, 5);
}

/* 1 when the query with one text parameter finds a row, 0 when not, <0 on failure. */
static int exists(s0__meta *m, const char *sql, const char *arg, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	int rc = s0__sql_prepare(m, sql, &st, err);
	if (rc < 0)
		return rc;
	sqlite3_bind_text(st, 1, arg, -1, SQLITE_TRANSIENT);
	int r = sqlite3_step(st);
	sqlite3_finalize(st);
	return r == SQLITE_ROW ? 1 : r == SQLITE_DONE ? 0 : s0__msql_fail(m, err, "lookup");
}

int s0__msql_apikey_create(s0__meta *m, const s0__apikey_row *k, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = exists(m, "SELECT 1 FROM teams WHERE id=?1", k->team_id, err);
	if (rc == 0)
		rc = s0__error_set(err, S0_ENOTFOUND, "team_not_found", "team %s not found",
		                   k->team_id);
	if (rc == 1)
		rc = exists(m, "SELECT 1 FROM api_keys WHERE id=?1", k->id, err);
	if (rc == 0)
		rc = exists(m, "SELECT 1 FROM api_keys WHERE hash=?1", k->hash, err);
	if (rc == 1)
		rc = s0__error_set(err, S0_ECONFLICT, "key_exists",
		                   "an API key with this id or hash already exists");
	if (rc == 0)
		rc = s0__sql_prepare(m, "INSERT INTO api_keys(" KEY_COLS ", seq) VALUES(?1,?2,?3,?4,?5,0,"
		                        "(SELECT COALESCE(MAX(seq),0)+1 FROM api_keys))", &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, k->id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, k->name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 3, k->team_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 4, k->hash, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 5, k->created_at_ms);
		rc = s0__sql_done(m, st, err);
	}
	s0__msql_unlock(m);
	return rc;
}

static int get_one(s0__meta *m, const char *sql, const char *arg, s0__apikey_row *out,
                   s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, sql, &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, arg, -1, SQLITE_TRANSIENT);
		int r = sqlite3_step(st);
		if (r == SQLITE_ROW)
			read_key(st, out);
		else if (r == SQLITE_DONE)
			rc = s0__error_set(err, S0_ENOTFOUND, "not_found", "API key not found");
		else
			rc = s0__msql_fail(m, err, "read API key");
		sqlite3_finalize(st);
	}
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_apikey_get(s0__meta *m, const char *id, s0__apikey_row *out, s0_error **err)
{
	return get_one(m, "SELECT " KEY_COLS " FROM api_keys WHERE id=?1", id, out, err);
}

int s0__msql_apikey_get_by_hash(s0__meta *m, const char *hash, s0__apikey_row *out,
                                s0_error **err)
{
	return get_one(m, "SELECT " KEY_COLS " FROM api_keys WHERE hash=?1", hash, out, err);
}

int s0__msql_apikey_list(s0__meta *m, const char *team, s0__apikey_row **out, size_t *n,
                         s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "SELECT " KEY_COLS " FROM api_keys"
	                            " WHERE ?1 IS NULL OR team_id=?1 ORDER BY seq", &st, err);
	if (rc == S0_OK) {
		if (team)
			sqlite3_bind_text(st, 1, team, -1, SQLITE_TRANSIENT);
		rc = collect(m, st, sizeof **out, read_key, (void **)out, n, err);
	}
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_apikey_revoke(s0__meta *m, const char *id, int64_t now_ms, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = exists(m, "SELECT 1 FROM api_keys WHERE id=?1", id, err);
	if (rc == 0)
		rc = s0__error_set(err, S0_ENOTFOUND, "not_found", "API key not found");
	if (rc == 1)
		rc = s0__sql_prepare(m, "UPDATE api_keys SET revoked_at=?2 WHERE id=?1 AND revoked_at=0",
		                     &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 2, now_ms);
		rc = s0__sql_done(m, st, err);
	}
	s0__msql_unlock(m);
	return rc;
}
