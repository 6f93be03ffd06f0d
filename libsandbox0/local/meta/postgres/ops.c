/* Durable lifecycle operation records in PostgreSQL. Kinds and states
 * are stored by their names (records.h table); a row with a name outside
 * the table is refused when read, naming the string, as in SQLite. */
#include <stdlib.h>
#include <string.h>

#include "local/meta/postgres/mpg.h"

/* A row whose kind or state is outside the table: S0_EINVAL naming the
 * operation, its sandbox and the stored name (control bytes as '?'). */
static int unreadable(s0_error **err, const char *reason, const char *what, const s0__op_row *o,
                      const char *name)
{
	char shown[65];
	size_t n = 0;
	for (; name[n] && n < sizeof shown - 1; n++)
		shown[n] = (unsigned char)name[n] < 0x20 || name[n] == 0x7f ? '?' : name[n];
	shown[n] = '\0';
	return s0__error_set(err, S0_EINVAL, reason,
	                     "metadata store: operation %lld of sandbox %s has an unknown %s \"%s\"",
	                     (long long)o->id, o->sandbox_id, what, shown);
}

static int read_op(const PGresult *r, int i, s0__op_row *o, s0_error **err)
{
	memset(o, 0, sizeof *o);
	o->id = s0__mpg_i64(r, i, 0);
	s0__mpg_text(r, i, 1, o->sandbox_id, sizeof o->sandbox_id);
	const char *kind = PQgetvalue(r, i, 2), *state = PQgetvalue(r, i, 3);
	int rc = S0_OK;
	if (s0__op_kind_parse(kind, &o->kind, NULL) < 0)
		rc = unreadable(err, "unknown_op_kind", "kind", o, kind);
	else if (s0__op_state_parse(state, &o->state, NULL) < 0)
		rc = unreadable(err, "unknown_op_state", "state", o, state);
	o->memory = s0__mpg_i64(r, i, 4) != 0;
	s0__mpg_text(r, i, 5, o->runtime_id, sizeof o->runtime_id);
	o->generation = s0__mpg_i64(r, i, 6);
	s0__mpg_text(r, i, 7, o->new_head, sizeof o->new_head);
	o->created_at_ms = s0__mpg_i64(r, i, 8);
	o->updated_at_ms = s0__mpg_i64(r, i, 9);
	s0__mpg_text(r, i, 10, o->image, sizeof o->image);
	if (rc < 0) /* never half a row */
		memset(o, 0, sizeof *o);
	return rc;
}

static void op_params(mpg_params *p, const s0__op_row *o)
{
	s0__mpg_p_text(p, o->sandbox_id);
	s0__mpg_p_text(p, s0__op_kind_name(o->kind));
	s0__mpg_p_text(p, s0__op_state_name(o->state));
	s0__mpg_p_i64(p, o->memory);
	s0__mpg_p_text(p, o->runtime_id);
	s0__mpg_p_i64(p, o->generation);
	s0__mpg_p_text(p, o->new_head);
	s0__mpg_p_i64(p, o->created_at_ms);
	s0__mpg_p_i64(p, o->updated_at_ms);
	s0__mpg_p_text(p, o->image);
}

int s0__mpg_op_insert(s0__meta *m, s0__op_row *o, s0_error **err)
{
	mpg_params p = {0};
	op_params(&p, o);
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_OP_INS, &p, false, &r, err);
	if (rc == S0_OK) {
		o->id = s0__mpg_i64(r, 0, 0);
		PQclear(r);
	}
	return rc;
}

int s0__mpg_op_update(s0__meta *m, const s0__op_row *o, s0_error **err)
{
	mpg_params p = {0};
	op_params(&p, o);
	s0__mpg_p_i64(&p, o->id);
	return s0__mpg_run(m, Q_OP_UPD, &p, false, NULL, err);
}

int s0__mpg_op_active(s0__meta *m, const char *sandbox_id, s0__op_row *out, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, sandbox_id);
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_OP_ACTIVE, &p, false, &r, err);
	if (rc < 0)
		return rc;
	rc = PQntuples(r) ? read_op(r, 0, out, err) : S0_ENOTFOUND; /* none: no error object */
	PQclear(r);
	return rc;
}

int s0__mpg_op_pending(s0__meta *m, s0__op_row **out, size_t *n, s0_error **err)
{
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_OP_PENDING, NULL, false, &r, err);
	if (rc < 0)
		return rc;
	size_t len = (size_t)PQntuples(r);
	s0__op_row *v = calloc(len ? len : 1, sizeof *v);
	if (!v)
		rc = s0__error_nomem(err);
	for (size_t i = 0; rc == S0_OK && i < len; i++)
		rc = read_op(r, (int)i, &v[i], err);
	PQclear(r);
	if (rc < 0) {
		free(v);
		return rc;
	}
	*out = v;
	*n = len;
	return S0_OK;
}

int s0__mpg_op_count(s0__meta *m, const char *sandbox_id, s0__op_kind kind, int64_t *out,
                     s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, sandbox_id);
	s0__mpg_p_text(&p, s0__op_kind_name(kind));
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_OP_COUNT, &p, false, &r, err);
	if (rc == S0_OK) {
		*out = s0__mpg_i64(r, 0, 0);
		PQclear(r);
	}
	return rc;
}
