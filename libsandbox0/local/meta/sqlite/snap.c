/* Snapshots, fork idempotency keys and GC roots (templates: templates.c). */
#include <stdlib.h>
#include <string.h>

#include "local/meta/sqlite/msql.h"

#define SNAP_COLS "id, sandbox_id, team_id, name, description, generation, created_at, expires_at"

static void read_snap(sqlite3_stmt *st, s0__snapshot_row *o)
{
	memset(o, 0, sizeof *o);
	s0__sql_text(st, 0, o->rec.id, sizeof o->rec.id);
	s0__sql_text(st, 1, o->rec.sandbox_id, sizeof o->rec.sandbox_id);
	s0__sql_text(st, 2, o->team_id, sizeof o->team_id);
	s0__sql_text(st, 3, o->rec.name, sizeof o->rec.name);
	s0__sql_text(st, 4, o->rec.description, sizeof o->rec.description);
	s0__sql_text(st, 5, o->generation, sizeof o->generation);
	o->rec.created_at_ms = sqlite3_column_int64(st, 6);
	o->rec.expires_at_ms = sqlite3_column_int64(st, 7);
}

int s0__msql_snapshot_put(s0__meta *m, const s0__snapshot_row *o, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "INSERT OR REPLACE INTO snapshots(" SNAP_COLS ", seq) VALUES("
	                            "?1,?2,?3,?4,?5,?6,?7,?8,"
	                            "(SELECT COALESCE(MAX(seq),0)+1 FROM snapshots))", &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, o->rec.id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, o->rec.sandbox_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 3, o->team_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 4, o->rec.name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 5, o->rec.description, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 6, o->generation, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 7, o->rec.created_at_ms);
		sqlite3_bind_int64(st, 8, o->rec.expires_at_ms);
		rc = s0__sql_done(m, st, err);
	}
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_snapshot_get(s0__meta *m, const char *team, const char *id, s0__snapshot_row *out,
                          s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "SELECT " SNAP_COLS " FROM snapshots WHERE id=?1"
	                            " AND (?2 IS NULL OR team_id=?2)", &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
		if (team)
			sqlite3_bind_text(st, 2, team, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) == SQLITE_ROW)
			read_snap(st, out);
		else
			rc = s0__error_set(err, S0_ENOTFOUND, "not_found", "not found");
		sqlite3_finalize(st);
	}
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_snapshot_delete(s0__meta *m, const char *id, s0_error **err)
{
	return s0__sql_exec_text(m, "DELETE FROM snapshots WHERE id=?1", id, err);
}

int s0__msql_snapshot_list(s0__meta *m, const char *team, const char *sandbox_id,
                           s0__snapshot_rec **out, size_t *n, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "SELECT " SNAP_COLS " FROM snapshots WHERE sandbox_id=?1"
	                            " AND team_id=?2 ORDER BY created_at DESC, seq DESC", &st, err);
	size_t len = 0, cap = 0;
	s0__snapshot_rec *v = NULL;
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, sandbox_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, team, -1, SQLITE_TRANSIENT);
	}
	while (rc == S0_OK && sqlite3_step(st) == SQLITE_ROW) {
		if (len == cap) {
			cap = cap ? cap * 2 : 8;
			s0__snapshot_rec *nv = realloc(v, cap * sizeof *nv);
			if (!nv) {
				rc = s0__error_nomem(err);
				break;
			}
			v = nv;
		}
		s0__snapshot_row row;
		read_snap(st, &row);
		v[len++] = row.rec;
	}
	if (st)
		sqlite3_finalize(st);
	s0__msql_unlock(m);
	if (rc < 0) {
		free(v);
		return rc;
	}
	*out = v;
	*n = len;
	return S0_OK;
}

int s0__msql_snapshot_expire(s0__meta *m, int64_t now_ms, s0_error **err)
{
	return s0__sql_exec_i64(m, "DELETE FROM snapshots WHERE expires_at > 0 AND expires_at <= ?1",
	                        now_ms, err);
}

int s0__msql_fork_key_get(s0__meta *m, const char *sandbox_id, const char *key, char **child,
                          char **error_json, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	*child = *error_json = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "SELECT child, error FROM fork_keys WHERE sandbox_id=?1 AND key=?2",
	                         &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, sandbox_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, key, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) == SQLITE_ROW) {
			*child = s0__strdup((const char *)sqlite3_column_text(st, 0));
			*error_json = s0__strdup((const char *)sqlite3_column_text(st, 1));
		} else {
			rc = S0_ENOTFOUND;
		}
		sqlite3_finalize(st);
	}
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_fork_key_put(s0__meta *m, const char *sandbox_id, const char *key,
                          const char *child, const char *error_json, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "INSERT OR REPLACE INTO fork_keys(sandbox_id, key, child, error)"
	                            " VALUES(?1,?2,?3,?4)", &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, sandbox_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, key, -1, SQLITE_TRANSIENT);
		if (child)
			sqlite3_bind_text(st, 3, child, -1, SQLITE_TRANSIENT);
		if (error_json)
			sqlite3_bind_text(st, 4, error_json, -1, SQLITE_TRANSIENT);
		rc = s0__sql_done(m, st, err);
	}
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_live_generations(s0__meta *m, char ***ids, size_t *n, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "SELECT head FROM sandboxes WHERE head != ''"
	                            " UNION SELECT generation FROM snapshots"
	                            " UNION SELECT generation FROM templates"
	                            " UNION SELECT new_head FROM operations WHERE new_head != ''"
	                            "  AND state NOT IN ('done','failed')", &st, err);
	if (rc == S0_OK)
		rc = s0__sql_collect_ids(m, st, ids, n, err);
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_mem_images(s0__meta *m, char ***ids, size_t *n, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "SELECT mem_image FROM sandboxes WHERE mem_image != ''"
	                            " UNION SELECT image FROM operations WHERE image != ''"
	                            "  AND state NOT IN ('done','failed')", &st, err);
	if (rc == S0_OK)
		rc = s0__sql_collect_ids(m, st, ids, n, err);
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_mem_image_rows(s0__meta *m, s0__mem_image_row **out, size_t *n, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	*out = NULL;
	*n = 0;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "SELECT id, mem_image, mem_image_gen FROM sandboxes"
	                            " WHERE mem_image != '' ORDER BY id", &st, err);
	size_t cap = 0;
	while (rc == S0_OK && sqlite3_step(st) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			s0__mem_image_row *nv = realloc(*out, cap * sizeof *nv);
			if (!nv) {
				rc = s0__error_nomem(err);
				break;
			}
			*out = nv;
		}
		s0__mem_image_row *r = &(*out)[(*n)++];
		s0__sql_text(st, 0, r->sandbox_id, sizeof r->sandbox_id);
		s0__sql_text(st, 1, r->image, sizeof r->image);
		s0__sql_text(st, 2, r->generation, sizeof r->generation);
	}
	if (st)
		sqlite3_finalize(st);
	s0__msql_unlock(m);
	if (rc < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}
