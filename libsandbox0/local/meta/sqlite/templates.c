/* Templates in SQLite (schema 1, team/spec/times since schema 5). */
#include <stdlib.h>
#include <string.h>

#include "local/meta/sqlite/msql.h"

#define TPL_COLS                                                                           \
	"name, generation, ephemeral_mounts, volume_bytes, image, team_id, spec, created_at," \
	" updated_at"

/* One row into out (owned strings duplicated); S0_ENOMEM when they cannot be. */
static int read_tpl(sqlite3_stmt *st, s0__template_row *out, s0_error **err)
{
	memset(out, 0, sizeof *out);
	s0__sql_text(st, 0, out->name, sizeof out->name);
	s0__sql_text(st, 1, out->generation, sizeof out->generation);
	out->ephemeral_mounts_json = s0__strdup((const char *)sqlite3_column_text(st, 2));
	out->volume_bytes = sqlite3_column_int64(st, 3);
	s0__sql_text(st, 4, out->image, sizeof out->image);
	s0__sql_text(st, 5, out->team_id, sizeof out->team_id);
	const char *spec = (const char *)sqlite3_column_text(st, 6);
	out->spec_json = s0__strdup(spec ? spec : "{}");
	out->created_at_ms = sqlite3_column_int64(st, 7);
	out->updated_at_ms = sqlite3_column_int64(st, 8);
	if (!out->ephemeral_mounts_json || !out->spec_json) {
		s0__template_row_clear(out);
		return s0__error_nomem(err);
	}
	return S0_OK;
}

int s0__msql_template_get(s0__meta *m, const char *name, s0__template_row *out, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "SELECT " TPL_COLS " FROM templates WHERE name=?1", &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
		int r = sqlite3_step(st);
		if (r == SQLITE_ROW)
			rc = read_tpl(st, out, err);
		else if (r == SQLITE_DONE)
			rc = s0__error_set(err, S0_ENOTFOUND, "not_found", "template not found");
		else
			rc = s0__msql_fail(m, err, "read template");
		sqlite3_finalize(st);
	}
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_template_put(s0__meta *m, const s0__template_row *t, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "INSERT OR REPLACE INTO templates(" TPL_COLS ")"
	                            " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9)", &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, t->name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, t->generation, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 3, t->ephemeral_mounts_json ? t->ephemeral_mounts_json : "[]", -1,
		                  SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 4, t->volume_bytes);
		sqlite3_bind_text(st, 5, t->image, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 6, t->team_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 7, t->spec_json ? t->spec_json : "{}", -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 8, t->created_at_ms);
		sqlite3_bind_int64(st, 9, t->updated_at_ms);
		rc = s0__sql_done(m, st, err);
	}
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_template_list(s0__meta *m, const char *team, s0__template_row **out, size_t *n,
                           s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__template_row *v = NULL;
	size_t len = 0, cap = 0;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "SELECT " TPL_COLS " FROM templates WHERE team_id='' OR"
	                            " team_id=?1 ORDER BY created_at, name", &st, err);
	int r = SQLITE_DONE;
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, team, -1, SQLITE_TRANSIENT);
		while (rc == S0_OK && (r = sqlite3_step(st)) == SQLITE_ROW) {
			if (len == cap) {
				cap = cap ? cap * 2 : 8;
				s0__template_row *nv = realloc(v, cap * sizeof *v);
				if (!nv) {
					rc = s0__error_nomem(err);
					break;
				}
				v = nv;
			}
			rc = read_tpl(st, &v[len], err);
			len += rc == S0_OK;
		}
		if (rc == S0_OK && r != SQLITE_DONE)
			rc = s0__msql_fail(m, err, "read templates");
		sqlite3_finalize(st);
	}
	s0__msql_unlock(m);
	if (rc < 0) {
		for (size_t i = 0; i < len; i++)
			s0__template_row_clear(&v[i]);
		free(v);
		return rc;
	}
	*out = v;
	*n = len;
	return S0_OK;
}

int s0__msql_template_delete(s0__meta *m, const char *name, s0_error **err)
{
	return s0__sql_exec_text(m, "DELETE FROM templates WHERE name=?1", name, err);
}

int s0__msql_template_users(s0__meta *m, const char *name, int64_t *count, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "SELECT COUNT(*) FROM sandboxes WHERE template_id=?1", &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) == SQLITE_ROW)
			*count = sqlite3_column_int64(st, 0);
		else
			rc = s0__msql_fail(m, err, "count template users");
		sqlite3_finalize(st);
	}
	s0__msql_unlock(m);
	return rc;
}
