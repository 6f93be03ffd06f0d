/* Node leases and the owner of each sandbox's runtime generation in
 * SQLite (meta.h "nodes and fencing"); each call is one statement. */
#include <string.h>

#include "local/meta/sqlite/msql.h"

/* A claim succeeds for a live claimant when the row is its own already,
 * or its node's under an earlier (fenced) epoch and not newer, or older
 * and either its own node's or under a lease no longer live. */
static const char ACQUIRE[] =
	"INSERT INTO nodes(id, epoch, lease_until) VALUES(?1, 1, ?2) ON CONFLICT(id)"
	" DO UPDATE SET epoch = nodes.epoch + 1, lease_until = excluded.lease_until"
	" RETURNING epoch";
static const char RENEW[] =
	"UPDATE nodes SET lease_until = ?2 WHERE id = ?1 AND epoch = ?3 AND lease_until > ?4"
	" RETURNING epoch";
static const char LIVE[] =
	"SELECT 1 FROM nodes WHERE id = ?1 AND epoch = ?2 AND lease_until > ?3";
static const char CLAIM[] =
	"INSERT INTO gen_owners(sandbox_id, generation, node_id, epoch) SELECT ?1, ?2, ?3, ?4"
	" WHERE EXISTS(SELECT 1 FROM nodes WHERE id = ?3 AND epoch = ?4 AND lease_until > ?5)"
	" ON CONFLICT(sandbox_id) DO UPDATE SET generation = excluded.generation,"
	" node_id = excluded.node_id, epoch = excluded.epoch"
	" WHERE (gen_owners.generation = excluded.generation"
	" AND gen_owners.node_id = excluded.node_id AND gen_owners.epoch = excluded.epoch)"
	" OR (gen_owners.node_id = excluded.node_id AND gen_owners.epoch < excluded.epoch"
	" AND gen_owners.generation <= excluded.generation)"
	" OR (gen_owners.generation < excluded.generation"
	" AND (gen_owners.node_id = excluded.node_id OR NOT EXISTS(SELECT 1 FROM nodes n"
	" WHERE n.id = gen_owners.node_id AND n.epoch = gen_owners.epoch"
	" AND n.lease_until > ?5)))"
	" OR (gen_owners.node_id = '' AND gen_owners.generation <= excluded.generation)"
	" RETURNING 1";
static const char OWNER[] =
	"SELECT g.sandbox_id, g.generation, g.node_id, g.epoch, COALESCE(n.lease_until, 0)"
	" FROM gen_owners g LEFT JOIN nodes n ON n.id = g.node_id"
	" WHERE g.sandbox_id = ?1";
static const char RELEASE[] =
	"UPDATE gen_owners SET node_id = '' WHERE sandbox_id = ?1 AND node_id = ?2";
static const char ORPHANS[] =
	"SELECT g.sandbox_id FROM gen_owners g WHERE g.node_id <> '' AND NOT EXISTS(SELECT 1"
	" FROM nodes n WHERE n.id = g.node_id AND n.lease_until > ?1)"
	" ORDER BY g.sandbox_id";

static const char CHECK[] =
	"SELECT (SELECT epoch FROM nodes WHERE id = ?2), g.node_id, g.generation"
	" FROM (SELECT 1) AS one LEFT JOIN gen_owners g ON g.sandbox_id = ?1";

/* Step st once: 1 when it returned a row (its column 0 into *v when v),
 * 0 when none, <0 on failure; finalizes st. */
static int one_row(s0__meta *m, sqlite3_stmt *st, int64_t *v, s0_error **err)
{
	int r = sqlite3_step(st);
	if (r == SQLITE_ROW && v)
		*v = sqlite3_column_int64(st, 0);
	while (r == SQLITE_ROW)
		r = sqlite3_step(st); /* RETURNING: run the statement to its end */
	int rc = r == SQLITE_DONE ? S0_OK : s0__msql_fail(m, err, "step");
	sqlite3_finalize(st);
	return rc;
}

int s0__msql_node_lease(s0__meta *m, const char *node_id, int64_t now_ms, int64_t ttl_ms,
                        int64_t *epoch, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, *epoch ? RENEW : ACQUIRE, &st, err);
	int64_t got = 0;
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, node_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 2, now_ms + ttl_ms);
		if (*epoch) {
			sqlite3_bind_int64(st, 3, *epoch);
			sqlite3_bind_int64(st, 4, now_ms);
		}
		rc = one_row(m, st, &got, err);
	}
	s0__msql_unlock(m);
	if (rc == S0_OK && !got)
		return s0__error_set(err, S0_ECONFLICT, "node_lease_lost",
		                     "node %s: lease epoch %lld expired or superseded", node_id,
		                     (long long)*epoch);
	if (rc == S0_OK)
		*epoch = got;
	return rc;
}

int s0__msql_gen_claim(s0__meta *m, const char *sandbox_id, int64_t generation,
                       const char *node_id, int64_t epoch, int64_t now_ms, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, CLAIM, &st, err);
	int64_t got = 0, live = 0;
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, sandbox_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 2, generation);
		sqlite3_bind_text(st, 3, node_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 4, epoch);
		sqlite3_bind_int64(st, 5, now_ms);
		rc = one_row(m, st, &got, err);
	}
	if (rc == S0_OK && !got && (rc = s0__sql_prepare(m, LIVE, &st, err)) == S0_OK) {
		sqlite3_bind_text(st, 1, node_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 2, epoch);
		sqlite3_bind_int64(st, 3, now_ms);
		rc = one_row(m, st, &live, err);
	}
	s0__msql_unlock(m);
	if (rc == S0_OK && !got)
		return live ? s0__error_set(err, S0_ECONFLICT, "generation_owned",
		                            "sandbox %s: generation %lld is another node's", sandbox_id,
		                            (long long)generation)
		            : s0__error_set(err, S0_ECONFLICT, "node_lease_lost",
		                            "node %s: lease epoch %lld is not live", node_id,
		                            (long long)epoch);
	return rc;
}

int s0__msql_gen_owner(s0__meta *m, const char *sandbox_id, s0__gen_owner_row *out,
                       s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, OWNER, &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, sandbox_id, -1, SQLITE_TRANSIENT);
		int r = sqlite3_step(st);
		if (r == SQLITE_ROW) {
			memset(out, 0, sizeof *out);
			s0__sql_text(st, 0, out->sandbox_id, sizeof out->sandbox_id);
			out->generation = sqlite3_column_int64(st, 1);
			s0__sql_text(st, 2, out->node_id, sizeof out->node_id);
			out->epoch = sqlite3_column_int64(st, 3);
			out->lease_until = sqlite3_column_int64(st, 4);
		} else {
			rc = r == SQLITE_DONE
			             ? s0__error_set(err, S0_ENOTFOUND, "not_found", "no claimed generation")
			             : s0__msql_fail(m, err, "read generation owner");
		}
		sqlite3_finalize(st);
	}
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_gen_release(s0__meta *m, const char *sandbox_id, const char *node_id,
                         s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, RELEASE, &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, sandbox_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, node_id, -1, SQLITE_TRANSIENT);
		rc = one_row(m, st, NULL, err);
	}
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_gen_orphans(s0__meta *m, int64_t now_ms, char ***ids, size_t *n, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, ORPHANS, &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_int64(st, 1, now_ms);
		rc = s0__sql_collect_ids(m, st, ids, n, err);
	}
	s0__msql_unlock(m);
	return rc;
}

int s0__msql_gen_check(s0__meta *m, const char *sandbox_id, const char *node_id, int64_t epoch,
                       int64_t generation, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__msql_lock(m);
	int rc = s0__sql_prepare(m, CHECK, &st, err);
	char owner[S0__ID_MAX] = "";
	int64_t cur = 0, gen = 0;
	bool has = false;
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, sandbox_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, node_id, -1, SQLITE_TRANSIENT);
		int r = sqlite3_step(st);
		if (r == SQLITE_ROW) {
			cur = sqlite3_column_int64(st, 0);
			has = sqlite3_column_type(st, 1) != SQLITE_NULL;
			if (has)
				s0__sql_text(st, 1, owner, sizeof owner);
			gen = sqlite3_column_int64(st, 2);
		} else {
			rc = s0__msql_fail(m, err, "fencing check");
		}
		sqlite3_finalize(st);
	}
	s0__msql_unlock(m);
	return rc < 0 ? rc
	              : s0__meta_gen_verdict(sandbox_id, node_id, epoch, generation, cur, has, owner,
	                                     gen, err);
}
