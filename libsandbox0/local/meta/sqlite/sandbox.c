/* Sandbox rows of the SQLite metadata store. */
#include <stdlib.h>
#include <string.h>

#include "local/meta/sqlite/msql.h"

#define SANDBOX_COLS                                                                    \
	"id, team_id, template_id, status, paused, auto_resume, runtime_id,"             \
	" runtime_generation, head, config, ttl, hard_ttl, created_at, updated_at,"       \
	" claimed_at, expires_at, hard_expires_at, pod_name, image, seq, mem_image, mem_image_gen"

static int read_row(sqlite3_stmt *st, s0__sandbox_row *o, s0_error **err)
{
	memset(o, 0, sizeof *o);
	s0__sandbox_rec *r = &o->rec;
	s0__sql_text(st, 0, r->id, sizeof r->id);
	s0__sql_text(st, 1, r->team_id, sizeof r->team_id);
	s0__sql_text(st, 2, r->template_id, sizeof r->template_id);
	r->status = sqlite3_column_int(st, 3);
	r->paused = sqlite3_column_int(st, 4) != 0;
	r->auto_resume = sqlite3_column_int(st, 5) != 0;
	s0__sql_text(st, 6, r->runtime_id, sizeof r->runtime_id);
	r->runtime_generation = sqlite3_column_int64(st, 7);
	s0__sql_text(st, 8, o->head, sizeof o->head);
	r->config_json = s0__strdup((const char *)sqlite3_column_text(st, 9));
	r->ttl_sec = sqlite3_column_int(st, 10);
	r->hard_ttl_sec = sqlite3_column_int(st, 11);
	r->created_at_ms = sqlite3_column_int64(st, 12);
	r->updated_at_ms = sqlite3_column_int64(st, 13);
	r->claimed_at_ms = sqlite3_column_int64(st, 14);
	r->expires_at_ms = sqlite3_column_int64(st, 15);
	r->hard_expires_at_ms = sqlite3_column_int64(st, 16);
	s0__sql_text(st, 17, r->pod_name, sizeof r->pod_name);
	s0__sql_text(st, 18, o->image, sizeof o->image);
	o->seq = sqlite3_column_int64(st, 19);
	s0__sql_text(st, 20, o->mem_image, sizeof o->mem_image);
	s0__sql_text(st, 21, o->mem_image_gen, sizeof o->mem_image_gen);
	return r->config_json ? S0_OK : s0__error_nomem(err);
}

int s0__msql_sandbox_get(s0__meta *m, const char *team, const char *id, s0__sandbox_row *out,
                         s0_error **err)
{
	s0__msql_lock(m);
	/* Kept prepared (parsing it was most of a files request's metadata
	 * cost, bench/workload/README.md); reset so no read stays open. */
	int rc = S0_OK;
	if (!MSQL(m)->sandbox_get)
		rc = s0__sql_prepare(m, "SELECT " SANDBOX_COLS " FROM sandboxes WHERE id=?1"
		                        " AND (?2 IS NULL OR team_id=?2)", &MSQL(m)->sandbox_get, err);
	sqlite3_stmt *st = MSQL(m)->sandbox_get;
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
		if (team)
			sqlite3_bind_text(st, 2, team, -1, SQLITE_TRANSIENT);
		int r = sqlite3_step(st);
		if (r == SQLITE_ROW)
			rc = read_row(st, out, err);
		else if (r == SQLITE_DONE)
			rc = s0__error_set(err, S0_ENOTFOUND, "not_found", "sandbox not found");
		else
			rc = s0__msql_fail(m, err, "read sandbox");
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
	}
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_sandbox_put(s0__meta *m, const s0__sandbox_row *o, s0_error **err)
{
	const s0__sandbox_rec *r = &o->rec;
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "INSERT OR REPLACE INTO sandboxes(" SANDBOX_COLS ") VALUES("
	                            "?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,"
	                            "?18,?19,?20,?21,?22)", &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, r->id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, r->team_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 3, r->template_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(st, 4, r->status);
		sqlite3_bind_int(st, 5, r->paused);
		sqlite3_bind_int(st, 6, r->auto_resume);
		sqlite3_bind_text(st, 7, r->runtime_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 8, r->runtime_generation);
		sqlite3_bind_text(st, 9, o->head, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 10, r->config_json ? r->config_json : "{}", -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(st, 11, r->ttl_sec);
		sqlite3_bind_int(st, 12, r->hard_ttl_sec);
		sqlite3_bind_int64(st, 13, r->created_at_ms);
		sqlite3_bind_int64(st, 14, r->updated_at_ms);
		sqlite3_bind_int64(st, 15, r->claimed_at_ms);
		sqlite3_bind_int64(st, 16, r->expires_at_ms);
		sqlite3_bind_int64(st, 17, r->hard_expires_at_ms);
		sqlite3_bind_text(st, 18, r->pod_name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 19, o->image, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 20, o->seq);
		sqlite3_bind_text(st, 21, o->mem_image, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 22, o->mem_image_gen, -1, SQLITE_TRANSIENT);
		rc = s0__sql_done(m, st, err);
	}
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_sandbox_delete(s0__meta *m, const char *id, s0_error **err)
{
	/* its generation owner goes with it (in the caller's transaction) */
	s0__msql_lock(m);
	int rc = s0__sql_exec_text(m, "DELETE FROM gen_owners WHERE sandbox_id=?1", id, err);
	if (rc == S0_OK)
		rc = s0__sql_exec_text(m, "DELETE FROM sandboxes WHERE id=?1", id, err);
	s0__msql_unlock(m);
	return rc;
}

#define LIST_WHERE                                                                      \
	" WHERE team_id=?1 AND (?2=0 OR status=?2) AND (?3<0 OR paused=?3)"              \
	" AND (?4 IS NULL OR template_id=?4)"

static void bind_filter(sqlite3_stmt *st, const char *team, const s0__list_filter *f)
{
	sqlite3_bind_text(st, 1, team, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 2, f->status);
	sqlite3_bind_int(st, 3, f->paused);
	if (f->template_id)
		sqlite3_bind_text(st, 4, f->template_id, -1, SQLITE_TRANSIENT);
}

static int list_count(s0__meta *m, const char *team, const s0__list_filter *f, int64_t *count,
                      s0_error **err)
{
	sqlite3_stmt *st = NULL;
	int rc = s0__sql_prepare(m, "SELECT COUNT(*) FROM sandboxes" LIST_WHERE, &st, err);
	if (rc < 0)
		return rc;
	bind_filter(st, team, f);
	*count = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return S0_OK;
}

int s0__msql_sandbox_list(s0__meta *m, const char *team, const s0__list_filter *f,
                          s0__sandbox_rec **out, size_t *n, int64_t *count, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = list_count(m, team, f, count, err);
	if (rc == S0_OK)
		rc = s0__sql_prepare(m, "SELECT " SANDBOX_COLS " FROM sandboxes" LIST_WHERE
		                        " ORDER BY created_at DESC, seq DESC LIMIT ?5 OFFSET ?6",
		                     &st, err);
	if (rc < 0) {
		s0__msql_unlock(m);
		return rc;
	}
	bind_filter(st, team, f);
	sqlite3_bind_int(st, 5, f->limit);
	sqlite3_bind_int(st, 6, f->offset);
	s0__sandbox_rec *v = calloc((size_t)f->limit + 1, sizeof *v);
	size_t len = 0;
	if (!v)
		rc = s0__error_nomem(err);
	while (rc == S0_OK && sqlite3_step(st) == SQLITE_ROW) {
		s0__sandbox_row row;
		rc = read_row(st, &row, err);
		if (rc == S0_OK)
			v[len++] = row.rec;
	}
	sqlite3_finalize(st);
	s0__msql_unlock(m);
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

int s0__msql_sandbox_due(s0__meta *m, int64_t now_ms, char ***ids, size_t *n, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "SELECT id FROM sandboxes WHERE"
	                            " (expires_at > 0 AND expires_at <= ?1 AND paused = 0)"
	                            " OR (hard_expires_at > 0 AND hard_expires_at <= ?1)"
	                            " ORDER BY seq", &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_int64(st, 1, now_ms);
		rc = s0__sql_collect_ids(m, st, ids, n, err);
	}
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_sandbox_all(s0__meta *m, char ***ids, size_t *n, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "SELECT id FROM sandboxes ORDER BY seq", &st, err);
	if (rc == S0_OK)
		rc = s0__sql_collect_ids(m, st, ids, n, err);
	s0__msql_unlock(m);
	return rc;
}
