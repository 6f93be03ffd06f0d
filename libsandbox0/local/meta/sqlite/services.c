/* The public services of each sandbox and the public ids that route to it
 * (meta.h "public services"), in SQLite. put runs inside the caller's
 * transaction. */
#include <stdlib.h>
#include <string.h>

#include "local/meta/sqlite/msql.h"

int s0__msql_services_get(s0__meta *m, const char *sandbox_id, char **json, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	*json = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "SELECT spec FROM services WHERE sandbox_id=?1", &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, sandbox_id, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) != SQLITE_ROW)
			rc = S0_ENOTFOUND;
		else if (!(*json = strdup((const char *)sqlite3_column_text(st, 0))))
			rc = s0__error_nomem(err);
		sqlite3_finalize(st);
	}
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_services_put(s0__meta *m, const char *sandbox_id, const char *json,
                          const char *const *public_ids, size_t n, s0_error **err)
{
	s0__msql_lock(m);
	int rc = s0__sql_exec_text(m, "DELETE FROM services WHERE sandbox_id=?1", sandbox_id, err);
	if (rc == S0_OK)
		rc = s0__sql_exec_text(m, "DELETE FROM public_routes WHERE sandbox_id=?1", sandbox_id,
		                       err);
	sqlite3_stmt *st = NULL;
	if (rc == S0_OK && json &&
	    (rc = s0__sql_prepare(m, "INSERT INTO services(sandbox_id, spec) VALUES(?1,?2)", &st,
	                          err)) == S0_OK) {
		sqlite3_bind_text(st, 1, sandbox_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, json, -1, SQLITE_TRANSIENT);
		rc = s0__sql_done(m, st, err);
	}
	for (size_t i = 0; rc == S0_OK && i < n; i++) {
		rc = s0__sql_prepare(m, "INSERT INTO public_routes(public_id, sandbox_id) VALUES(?1,?2)",
		                     &st, err);
		if (rc == S0_OK) {
			sqlite3_bind_text(st, 1, public_ids[i], -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(st, 2, sandbox_id, -1, SQLITE_TRANSIENT);
			rc = s0__sql_done(m, st, err);
		}
	}
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_route_find(s0__meta *m, const char *public_id, char *sandbox_id, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "SELECT sandbox_id FROM public_routes WHERE public_id=?1", &st,
	                         err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, public_id, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) != SQLITE_ROW)
			rc = S0_ENOTFOUND;
		else
			s0__sql_text(st, 0, sandbox_id, S0__ID_MAX);
		sqlite3_finalize(st);
	}
	s0__msql_unlock(m);
	return rc;
}
