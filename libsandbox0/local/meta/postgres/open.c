/* Opening, migrating and closing the PostgreSQL metadata store, and its
 * vtable. */
#include <stdlib.h>
#include <string.h>

#include "local/meta/postgres/mpg.h"

/* The advisory lock key that serialises migrations of nodes opening one
 * database at once ("s0meta" in ASCII). */
#define MIGRATE_LOCK "SELECT pg_advisory_lock(126909919651169)"
#define MIGRATE_UNLOCK "SELECT pg_advisory_unlock(126909919651169)"

static const s0__meta_ops mpg_ops = {
	.name = "postgres",
	.close = s0__mpg_close,
	.begin = s0__mpg_begin,
	.commit = s0__mpg_commit,
	.rollback = s0__mpg_rollback,
	.sandbox_get = s0__mpg_sandbox_get,
	.sandbox_put = s0__mpg_sandbox_put,
	.sandbox_delete = s0__mpg_sandbox_delete,
	.sandbox_list = s0__mpg_sandbox_list,
	.sandbox_due = s0__mpg_sandbox_due,
	.sandbox_all = s0__mpg_sandbox_all,
	.op_insert = s0__mpg_op_insert,
	.op_update = s0__mpg_op_update,
	.op_active = s0__mpg_op_active,
	.op_pending = s0__mpg_op_pending,
	.op_count = s0__mpg_op_count,
	.mem_images = s0__mpg_mem_images,
	.mem_image_rows = s0__mpg_mem_image_rows,
	.snapshot_put = s0__mpg_snapshot_put,
	.snapshot_get = s0__mpg_snapshot_get,
	.snapshot_delete = s0__mpg_snapshot_delete,
	.snapshot_list = s0__mpg_snapshot_list,
	.snapshot_expire = s0__mpg_snapshot_expire,
	.template_get = s0__mpg_template_get,
	.template_put = s0__mpg_template_put,
	.template_list = s0__mpg_template_list,
	.template_delete = s0__mpg_template_delete,
	.template_users = s0__mpg_template_users,
	.live_generations = s0__mpg_live_generations,
	.latest_time = s0__mpg_latest_time,
	.kv_get = s0__mpg_kv_get,
	.kv_put = s0__mpg_kv_put,
	.sessions_get = s0__mpg_sessions_get,
	.sessions_put = s0__mpg_sessions_put,
	.sessions_delete = s0__mpg_sessions_delete,
	.services_get = s0__mpg_services_get,
	.services_put = s0__mpg_services_put,
	.route_find = s0__mpg_route_find,
	.fork_key_get = s0__mpg_fork_key_get,
	.fork_key_put = s0__mpg_fork_key_put,
	.team_put = s0__mpg_team_put,
	.team_get = s0__mpg_team_get,
	.team_list = s0__mpg_team_list,
	.apikey_create = s0__mpg_apikey_create,
	.apikey_get = s0__mpg_apikey_get,
	.apikey_get_by_hash = s0__mpg_apikey_get_by_hash,
	.apikey_list = s0__mpg_apikey_list,
	.apikey_revoke = s0__mpg_apikey_revoke,
	.schema_version = s0__mpg_schema_version,
	.node_lease = s0__mpg_node_lease,
	.gen_claim = s0__mpg_gen_claim,
	.gen_release = s0__mpg_gen_release,
	.gen_orphans = s0__mpg_gen_orphans,
	.gen_check = s0__mpg_gen_check,
	.listen = s0__mpg_listen,
	.gen_owner = s0__mpg_gen_owner,
};

/* Check the URL and keep its password (to mask it). libpq's parse error
 * may quote the URL, so it is not shown. */
static int parse_url(s0__mpg *q, const char *url, s0_error **err)
{
	if (strncmp(url, "postgres://", 11) && strncmp(url, "postgresql://", 13))
		return s0__error_set(err, S0_EINVAL, "bad_meta_url",
		                     "metadata store: a postgres:// or postgresql:// URL is required");
	char *msg = NULL;
	PQconninfoOption *opts = PQconninfoParse(url, &msg);
	PQfreemem(msg);
	if (!opts)
		return s0__error_set(err, S0_EINVAL, "bad_meta_url",
		                     "metadata store: the PostgreSQL URL cannot be parsed");
	int rc = S0_OK;
	for (PQconninfoOption *o = opts; o->keyword; o++)
		if (!strcmp(o->keyword, "password") && o->val && *o->val &&
		    !(q->password = s0__strdup(o->val)))
			rc = s0__error_nomem(err);
	PQconninfoFree(opts);
	if (rc == S0_OK && !(q->conninfo = s0__strdup(url)))
		rc = s0__error_nomem(err);
	return rc;
}

/* Read the applied version on c (-1 on failure). */
static int version_on(PGconn *pg)
{
	PGresult *r = PQexec(pg, "SELECT version FROM s0_schema");
	int v = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1
	                ? atoi(PQgetvalue(r, 0, 0))
	                : -1;
	PQclear(r);
	return v;
}

/* Apply the missing migrations, each in its own transaction, holding the
 * advisory lock so concurrent openers apply each exactly once. */
static int migrate(s0__mpg *q, mpg_conn *c, s0_error **err)
{
	int rc = s0__mpg_exec_plain(q, c, MIGRATE_LOCK, err);
	if (rc < 0)
		return rc;
	rc = s0__mpg_exec_plain(q, c, "CREATE TABLE IF NOT EXISTS s0_schema(version INT NOT NULL);"
	                              "INSERT INTO s0_schema SELECT 0"
	                              " WHERE NOT EXISTS(SELECT 1 FROM s0_schema)", err);
	int version = rc == S0_OK ? version_on(c->pg) : 0;
	if (rc == S0_OK && version < 0)
		rc = s0__mpg_fail(q, c, NULL, "read schema version", err);
	int n = s0__mpg_migration_count;
	if (rc == S0_OK && version > n)
		rc = s0__error_set(err, S0_EUNSUPPORTED, "schema_too_new",
		                   "metadata schema %d is newer than this library (%d)", version, n);
	for (int v = version; rc == S0_OK && v < n; v++) {
		char *sql = s0__asprintf("BEGIN; %s; UPDATE s0_schema SET version=%d; COMMIT",
		                         s0__mpg_migrations[v], v + 1);
		if (!sql) {
			rc = s0__error_nomem(err);
			break;
		}
		rc = s0__mpg_exec_plain(q, c, sql, err);
		free(sql);
		if (rc < 0 && c->pg)
			PQclear(PQexec(c->pg, "ROLLBACK"));
	}
	if (c->pg && PQstatus(c->pg) == CONNECTION_OK)
		PQclear(PQexec(c->pg, MIGRATE_UNLOCK));
	return rc;
}

int s0__mpg_open(const char *url, s0__meta **out, s0_error **err)
{
	s0__mpg *q = calloc(1, sizeof *q);
	if (!q)
		return s0__error_nomem(err);
	q->base.ops = &mpg_ops;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	pthread_mutex_init(&q->txn_mu, NULL);
	int rc = parse_url(q, url, err);
	if (rc == S0_OK)
		rc = s0__mpg_connect(q, &q->conns[0], err);
	if (rc == S0_OK)
		rc = migrate(q, &q->conns[0], err);
	if (rc < 0) {
		s0__mpg_close(&q->base);
		return rc;
	}
	*out = &q->base;
	return S0_OK;
}

void s0__mpg_close(s0__meta *m)
{
	if (!m)
		return;
	s0__mpg *q = MPG(m);
	s0__mpg_listen_stop(q);
	for (int i = 0; i < S0__MPG_POOL; i++)
		PQfinish(q->conns[i].pg);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->txn_mu);
	free(q->conninfo);
	free(q->password);
	free(q);
}

int s0__mpg_schema_version(s0__meta *m)
{
	PGresult *r = NULL;
	if (s0__mpg_run(m, Q_VERSION, NULL, false, &r, NULL) < 0)
		return -1;
	int v = PQntuples(r) == 1 ? atoi(PQgetvalue(r, 0, 0)) : -1;
	PQclear(r);
	return v;
}
