/* Statement helpers, small settings and the latest recorded time of the
 * SQLite metadata store. */
#include <stdlib.h>
#include <string.h>

#include "local/meta/sqlite/msql.h"

void s0__msql_lock(s0__meta *m) { pthread_mutex_lock(&MSQL(m)->mu); }
void s0__msql_unlock(s0__meta *m) { pthread_mutex_unlock(&MSQL(m)->mu); }

int s0__msql_fail(s0__meta *m, s0_error **err, const char *what)
{
	return s0__error_set(err, S0_EIO, "meta_store", "metadata store: %s: %s", what,
	                     MSQL(m)->db ? sqlite3_errmsg(MSQL(m)->db) : "cannot open");
}

/* ---- statement helpers (msql.h) ---- */

int s0__sql_prepare(s0__meta *m, const char *sql, sqlite3_stmt **st, s0_error **err)
{
	if (sqlite3_prepare_v2(MSQL(m)->db, sql, -1, st, NULL) != SQLITE_OK)
		return s0__msql_fail(m, err, "prepare");
	return S0_OK;
}

int s0__sql_done(s0__meta *m, sqlite3_stmt *st, s0_error **err)
{
	int r = sqlite3_step(st);
	sqlite3_finalize(st);
	return r == SQLITE_DONE || r == SQLITE_ROW ? S0_OK : s0__msql_fail(m, err, "step");
}

int s0__sql_exec_text(s0__meta *m, const char *sql, const char *arg, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, sql, &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, arg, -1, SQLITE_TRANSIENT);
		rc = s0__sql_done(m, st, err);
	}
	s0__msql_unlock(m);
	return rc;
}

int s0__sql_exec_i64(s0__meta *m, const char *sql, int64_t arg, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, sql, &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_int64(st, 1, arg);
		rc = s0__sql_done(m, st, err);
	}
	s0__msql_unlock(m);
	return rc;
}

void s0__sql_text(sqlite3_stmt *st, int col, char *dst, size_t n)
{
	s0__strlcpy(dst, (const char *)sqlite3_column_text(st, col), n);
}

int s0__msql_kv_get(s0__meta *m, const char *k, char **out, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "SELECT v FROM kv WHERE k=?1", &st, err);
	*out = NULL;
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, k, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) == SQLITE_ROW) {
			*out = s0__strdup((const char *)sqlite3_column_text(st, 0));
			if (!*out)
				rc = s0__error_nomem(err);
		}
		sqlite3_finalize(st);
	}
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_kv_put(s0__meta *m, const char *k, const char *v, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "INSERT OR REPLACE INTO kv(k,v) VALUES(?1,?2)", &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, k, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, v, -1, SQLITE_TRANSIENT);
		rc = s0__sql_done(m, st, err);
	}
	s0__msql_unlock(m);
	return rc;
}

/* Collect column 0 of every row as strings. */
int s0__sql_collect_ids(s0__meta *m, sqlite3_stmt *st, char ***ids, size_t *n, s0_error **err)
{
	size_t cap = 0, len = 0;
	char **v = NULL;
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			cap = cap ? cap * 2 : 16;
			char **nv = realloc(v, cap * sizeof *nv);
			if (!nv)
				goto oom;
			v = nv;
		}
		if (!(v[len] = s0__strdup((const char *)sqlite3_column_text(st, 0))))
			goto oom;
		len++;
	}
	sqlite3_finalize(st);
	if (r != SQLITE_DONE) {
		s0__meta_free_ids(v, len);
		return s0__msql_fail(m, err, "collect");
	}
	*ids = v;
	*n = len;
	return S0_OK;
oom:
	sqlite3_finalize(st);
	s0__meta_free_ids(v, len);
	return s0__error_nomem(err);
}

int64_t s0__msql_latest_time(s0__meta *m)
{
	static const char sql[] =
		"SELECT MAX(t) FROM (SELECT MAX(updated_at) AS t FROM sandboxes"
		" UNION ALL SELECT MAX(claimed_at) FROM sandboxes"
		" UNION ALL SELECT MAX(updated_at) FROM operations"
		" UNION ALL SELECT MAX(created_at) FROM snapshots)";
	sqlite3_stmt *st = NULL;
	int64_t t = 0;
	s0__msql_lock(m);
	if (s0__sql_prepare(m, sql, &st, NULL) == S0_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			t = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	s0__msql_unlock(m);
	return t;
}
