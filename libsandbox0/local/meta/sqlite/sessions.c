/* The sessions blob of each sandbox (sessions.h serialisation), kept so a
 * reopened backend finds a sandbox's supervised sessions and journals. */
#include <stdlib.h>
#include <string.h>

#include "local/meta/sqlite/msql.h"

int s0__msql_sessions_get(s0__meta *m, const char *sandbox_id, void **blob, size_t *len,
                          s0_error **err)
{
	sqlite3_stmt *st = NULL;
	*blob = NULL;
	*len = 0;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "SELECT blob FROM sessions WHERE sandbox_id=?1", &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, sandbox_id, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) != SQLITE_ROW) {
			rc = S0_ENOTFOUND;
		} else {
			size_t n = (size_t)sqlite3_column_bytes(st, 0);
			const void *p = sqlite3_column_blob(st, 0);
			*blob = malloc(n ? n : 1);
			if (!*blob)
				rc = s0__error_nomem(err);
			else if (n)
				memcpy(*blob, p, n);
			*len = n;
		}
		sqlite3_finalize(st);
	}
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_sessions_put(s0__meta *m, const char *sandbox_id, const void *blob, size_t len,
                          s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "INSERT OR REPLACE INTO sessions(sandbox_id, blob) VALUES(?1,?2)",
	                         &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, sandbox_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_blob64(st, 2, blob, len, SQLITE_TRANSIENT);
		rc = s0__sql_done(m, st, err);
	}
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_sessions_delete(s0__meta *m, const char *sandbox_id, s0_error **err)
{
	return s0__sql_exec_text(m, "DELETE FROM sessions WHERE sandbox_id=?1", sandbox_id, err);
}
