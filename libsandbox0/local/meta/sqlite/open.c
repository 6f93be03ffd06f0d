/* Opening, migrating and transactions of the SQLite metadata store, and
 * its vtable. */
#include <stdlib.h>
#include <string.h>

#include "local/meta/sqlite/msql.h"

static int migrate(s0__meta *m, s0_error **err)
{
	int version = s0__msql_schema_version(m);
	if (version < 0)
		return s0__msql_fail(m, err, "read schema version");
	int n = s0__msql_migration_count;
	if (version > n)
		return s0__error_set(err, S0_EUNSUPPORTED, "schema_too_new",
		                     "metadata schema %d is newer than this library (%d)", version, n);
	for (int v = version; v < n; v++) {
		char pragma[48];
		snprintf(pragma, sizeof pragma, "PRAGMA user_version=%d;", v + 1);
		int rc = s0__msql_begin(m, err);
		if (rc < 0)
			return rc;
		if (sqlite3_exec(MSQL(m)->db, s0__msql_migrations[v], NULL, NULL, NULL) != SQLITE_OK ||
		    sqlite3_exec(MSQL(m)->db, pragma, NULL, NULL, NULL) != SQLITE_OK) {
			rc = s0__msql_fail(m, err, "migrate schema");
			s0__msql_rollback(m);
			return rc;
		}
		if ((rc = s0__msql_commit(m, err)) < 0)
			return rc;
	}
	return S0_OK;
}

static const s0__meta_ops msql_ops = {
	.name = "sqlite",
	.close = s0__msql_close,
	.begin = s0__msql_begin,
	.commit = s0__msql_commit,
	.rollback = s0__msql_rollback,
	.sandbox_get = s0__msql_sandbox_get,
	.sandbox_put = s0__msql_sandbox_put,
	.sandbox_delete = s0__msql_sandbox_delete,
	.sandbox_list = s0__msql_sandbox_list,
	.sandbox_due = s0__msql_sandbox_due,
	.sandbox_all = s0__msql_sandbox_all,
	.op_insert = s0__msql_op_insert,
	.op_update = s0__msql_op_update,
	.op_active = s0__msql_op_active,
	.op_pending = s0__msql_op_pending,
	.op_count = s0__msql_op_count,
	.mem_images = s0__msql_mem_images,
	.mem_image_rows = s0__msql_mem_image_rows,
	.snapshot_put = s0__msql_snapshot_put,
	.snapshot_get = s0__msql_snapshot_get,
	.snapshot_delete = s0__msql_snapshot_delete,
	.snapshot_list = s0__msql_snapshot_list,
	.snapshot_expire = s0__msql_snapshot_expire,
	.template_get = s0__msql_template_get,
	.template_put = s0__msql_template_put,
	.template_list = s0__msql_template_list,
	.template_delete = s0__msql_template_delete,
	.template_users = s0__msql_template_users,
	.live_generations = s0__msql_live_generations,
	.latest_time = s0__msql_latest_time,
	.kv_get = s0__msql_kv_get,
	.kv_put = s0__msql_kv_put,
	.sessions_get = s0__msql_sessions_get,
	.sessions_put = s0__msql_sessions_put,
	.sessions_delete = s0__msql_sessions_delete,
	.services_get = s0__msql_services_get,
	.services_put = s0__msql_services_put,
	.route_find = s0__msql_route_find,
	.fork_key_get = s0__msql_fork_key_get,
	.fork_key_put = s0__msql_fork_key_put,
	.team_put = s0__msql_team_put,
	.team_get = s0__msql_team_get,
	.team_list = s0__msql_team_list,
	.apikey_create = s0__msql_apikey_create,
	.apikey_get = s0__msql_apikey_get,
	.apikey_get_by_hash = s0__msql_apikey_get_by_hash,
	.apikey_list = s0__msql_apikey_list,
	.apikey_revoke = s0__msql_apikey_revoke,
	.schema_version = s0__msql_schema_version,
	.node_lease = s0__msql_node_lease,
	.gen_claim = s0__msql_gen_claim,
	.gen_owner = s0__msql_gen_owner,
	.gen_release = s0__msql_gen_release,
	.gen_orphans = s0__msql_gen_orphans,
	.gen_check = s0__msql_gen_check,
};

int s0__msql_open(const char *dir, s0__meta **out, s0_error **err)
{
	s0__msql *q = calloc(1, sizeof *q);
	if (!q)
		return s0__error_nomem(err);
	q->base.ops = &msql_ops;
	s0__meta *m = &q->base;
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&q->mu, &a);
	pthread_mutexattr_destroy(&a);
	char *path = s0__asprintf("%s/meta.db", dir);
	int rc = S0_OK;
	if (!path) {
		rc = s0__error_nomem(err);
	} else if (sqlite3_open_v2(path, &q->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
	                                             SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
		rc = s0__msql_fail(m, err, "open meta.db");
	} else {
		sqlite3_busy_timeout(q->db, 5000);
		if (sqlite3_exec(q->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
		                        "PRAGMA foreign_keys=ON;", NULL, NULL, NULL) != SQLITE_OK)
			rc = s0__msql_fail(m, err, "configure meta.db");
		else
			rc = migrate(m, err);
	}
	free(path);
	if (rc < 0) {
		s0__msql_close(m);
		return rc;
	}
	*out = m;
	return S0_OK;
}

void s0__msql_close(s0__meta *m)
{
	if (!m)
		return;
	sqlite3_finalize(MSQL(m)->sandbox_get);
	sqlite3_close_v2(MSQL(m)->db);
	pthread_mutex_destroy(&MSQL(m)->mu);
	free(MSQL(m));
}

int s0__msql_schema_version(s0__meta *m)
{
	sqlite3_stmt *st = NULL;
	int version = -1;
	s0__msql_lock(m);
	if (sqlite3_prepare_v2(MSQL(m)->db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	s0__msql_unlock(m);
	return version;
}

int s0__msql_begin(s0__meta *m, s0_error **err)
{
	s0__msql_lock(m);
	if (sqlite3_exec(MSQL(m)->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		int rc = s0__msql_fail(m, err, "begin");
		s0__msql_unlock(m);
		return rc;
	}
	return S0_OK;
}

int s0__msql_commit(s0__meta *m, s0_error **err)
{
	int rc = S0_OK;
	if (sqlite3_exec(MSQL(m)->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		rc = s0__msql_fail(m, err, "commit");
		sqlite3_exec(MSQL(m)->db, "ROLLBACK", NULL, NULL, NULL);
	}
	s0__msql_unlock(m);
	return rc;
}

void s0__msql_rollback(s0__meta *m)
{
	sqlite3_exec(MSQL(m)->db, "ROLLBACK", NULL, NULL, NULL);
	s0__msql_unlock(m);
}
