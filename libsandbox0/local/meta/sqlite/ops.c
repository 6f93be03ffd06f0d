/* Durable lifecycle operation records in SQLite. Kinds and states are
 * stored by their names (records.h table); a row with a name outside the
 * table is refused when read, naming the string. */
#include <stdlib.h>
#include <string.h>

#include "local/meta/sqlite/msql.h"

#define OP_COLS \
	"id, sandbox_id, kind, state, memory, runtime_id, generation, new_head, created_at, updated_at," \
	" image"

/* A row whose kind or state is outside the table: S0_EINVAL naming the
 * operation, its sandbox and the stored name (control bytes shown as '?'),
 * so an operator knows which row to mend. */
static int unreadable(s0_error **err, const char *reason, const char *what, const s0__op_row *o,
                      const char *name)
{
	char shown[65];
	size_t n = 0;
	for (; name && name[n] && n < sizeof shown - 1; n++)
		shown[n] = (unsigned char)name[n] < 0x20 || name[n] == 0x7f ? '?' : name[n];
	shown[n] = '\0';
	return s0__error_set(err, S0_EINVAL, reason,
	                     "metadata store: operation %lld of sandbox %s has an unknown %s \"%s\"",
	                     (long long)o->id, o->sandbox_id, what, name ? shown : "(null)");
}

static int read_op(sqlite3_stmt *st, s0__op_row *o, s0_error **err)
{
	memset(o, 0, sizeof *o);
	o->id = sqlite3_column_int64(st, 0);
	s0__sql_text(st, 1, o->sandbox_id, sizeof o->sandbox_id);
	const char *kind = (const char *)sqlite3_column_text(st, 2);
	const char *state = (const char *)sqlite3_column_text(st, 3);
	int rc = S0_OK;
	if (s0__op_kind_parse(kind, &o->kind, NULL) < 0)
		rc = unreadable(err, "unknown_op_kind", "kind", o, kind);
	else if (s0__op_state_parse(state, &o->state, NULL) < 0)
		rc = unreadable(err, "unknown_op_state", "state", o, state);
	o->memory = sqlite3_column_int(st, 4) != 0;
	s0__sql_text(st, 5, o->runtime_id, sizeof o->runtime_id);
	o->generation = sqlite3_column_int64(st, 6);
	s0__sql_text(st, 7, o->new_head, sizeof o->new_head);
	o->created_at_ms = sqlite3_column_int64(st, 8);
	o->updated_at_ms = sqlite3_column_int64(st, 9);
	s0__sql_text(st, 10, o->image, sizeof o->image);
	if (rc < 0) /* never half a row */
		memset(o, 0, sizeof *o);
	return rc;
}

static void bind_op(sqlite3_stmt *st, const s0__op_row *o)
{
	sqlite3_bind_text(st, 2, o->sandbox_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, s0__op_kind_name(o->kind), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, s0__op_state_name(o->state), -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 5, o->memory);
	sqlite3_bind_text(st, 6, o->runtime_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 7, o->generation);
	sqlite3_bind_text(st, 8, o->new_head, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 9, o->created_at_ms);
	sqlite3_bind_int64(st, 10, o->updated_at_ms);
	sqlite3_bind_text(st, 11, o->image, -1, SQLITE_TRANSIENT);
}

int s0__msql_op_insert(s0__meta *m, s0__op_row *o, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "INSERT INTO operations(" OP_COLS ") VALUES(NULL,?2,?3,?4,?5,"
	                            "?6,?7,?8,?9,?10,?11)", &st, err);
	if (rc == S0_OK) {
		bind_op(st, o);
		rc = s0__sql_done(m, st, err);
		if (rc == S0_OK)
			o->id = sqlite3_last_insert_rowid(MSQL(m)->db);
	}
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_op_update(s0__meta *m, const s0__op_row *o, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "UPDATE operations SET sandbox_id=?2, kind=?3, state=?4,"
	                            " memory=?5, runtime_id=?6, generation=?7, new_head=?8,"
	                            " created_at=?9, updated_at=?10, image=?11 WHERE id=?1", &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_int64(st, 1, o->id);
		bind_op(st, o);
		rc = s0__sql_done(m, st, err);
	}
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_op_active(s0__meta *m, const char *sandbox_id, s0__op_row *out, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "SELECT " OP_COLS " FROM operations WHERE sandbox_id=?1"
	                            " AND state NOT IN ('done','failed') ORDER BY id LIMIT 1",
	                         &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, sandbox_id, -1, SQLITE_TRANSIENT);
		int r = sqlite3_step(st);
		if (r == SQLITE_ROW)
			rc = read_op(st, out, err);
		else if (r == SQLITE_DONE)
			rc = S0_ENOTFOUND; /* no error object: "none" is an answer */
		else
			rc = s0__msql_fail(m, err, "read operation");
		sqlite3_finalize(st);
	}
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_op_pending(s0__meta *m, s0__op_row **out, size_t *n, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "SELECT " OP_COLS " FROM operations WHERE"
	                            " state NOT IN ('done','failed') ORDER BY id", &st, err);
	size_t len = 0, cap = 0;
	s0__op_row *v = NULL;
	int r = SQLITE_DONE;
	while (rc == S0_OK && (r = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			cap = cap ? cap * 2 : 8;
			s0__op_row *nv = realloc(v, cap * sizeof *nv);
			if (!nv) {
				rc = s0__error_nomem(err);
				break;
			}
			v = nv;
		}
		rc = read_op(st, &v[len++], err);
	}
	if (rc == S0_OK && r != SQLITE_DONE)
		rc = s0__msql_fail(m, err, "read operations");
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

int s0__msql_op_count(s0__meta *m, const char *sandbox_id, s0__op_kind kind, int64_t *out,
                      s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, "SELECT COUNT(*) FROM operations WHERE sandbox_id=?1 AND kind=?2",
	                         &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, sandbox_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, s0__op_kind_name(kind), -1, SQLITE_STATIC);
		*out = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
		sqlite3_finalize(st);
	}
	s0__msql_unlock(m);
	return rc;
}
