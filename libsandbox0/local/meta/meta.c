/* Opening, migrating and transactions of the SQLite metadata store. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "local/meta/meta.h"
#include "local/meta/meta_sql.h"

struct s0__meta {
	sqlite3 *db;
	pthread_mutex_t mu; /* recursive */
};

static const char *const migrations[] = {
	/* 1: the initial schema */
	"CREATE TABLE sandboxes("
	" id TEXT PRIMARY KEY, team_id TEXT NOT NULL, template_id TEXT NOT NULL,"
	" status INTEGER NOT NULL, paused INTEGER NOT NULL, auto_resume INTEGER NOT NULL,"
	" runtime_id TEXT NOT NULL DEFAULT '', runtime_generation INTEGER NOT NULL,"
	" head TEXT NOT NULL, config TEXT NOT NULL, ttl INTEGER NOT NULL, hard_ttl INTEGER NOT NULL,"
	" created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, claimed_at INTEGER NOT NULL,"
	" expires_at INTEGER NOT NULL, hard_expires_at INTEGER NOT NULL, pod_name TEXT NOT NULL,"
	" image TEXT NOT NULL, seq INTEGER NOT NULL);"
	"CREATE INDEX sandboxes_team ON sandboxes(team_id, seq);"
	"CREATE TABLE operations("
	" id INTEGER PRIMARY KEY AUTOINCREMENT, sandbox_id TEXT NOT NULL, kind TEXT NOT NULL,"
	" state TEXT NOT NULL, memory INTEGER NOT NULL, runtime_id TEXT NOT NULL,"
	" generation INTEGER NOT NULL, new_head TEXT NOT NULL, created_at INTEGER NOT NULL,"
	" updated_at INTEGER NOT NULL);"
	"CREATE INDEX operations_sandbox ON operations(sandbox_id, state);"
	"CREATE TABLE snapshots("
	" id TEXT PRIMARY KEY, sandbox_id TEXT NOT NULL, team_id TEXT NOT NULL, name TEXT NOT NULL,"
	" description TEXT NOT NULL, generation TEXT NOT NULL, created_at INTEGER NOT NULL,"
	" expires_at INTEGER NOT NULL, seq INTEGER NOT NULL);"
	"CREATE TABLE templates("
	" name TEXT PRIMARY KEY, generation TEXT NOT NULL, ephemeral_mounts TEXT NOT NULL,"
	" volume_bytes INTEGER NOT NULL, image TEXT NOT NULL);"
	"CREATE TABLE fork_keys("
	" sandbox_id TEXT NOT NULL, key TEXT NOT NULL, child TEXT, error TEXT,"
	" PRIMARY KEY(sandbox_id, key));"
	"CREATE TABLE kv(k TEXT PRIMARY KEY, v TEXT NOT NULL);",
	/* 2: retained memory images (design.md §6 "Memory pause acceptance"):
	 * the image of a memory pause and the RootFS generation it matches, on
	 * the sandbox once committed and on the pause operation before */
	"ALTER TABLE sandboxes ADD COLUMN mem_image TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE sandboxes ADD COLUMN mem_image_gen TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE operations ADD COLUMN image TEXT NOT NULL DEFAULT '';",
	/* 3: each sandbox's supervised sessions (sessions.h blob), saved when
	 * they are created or deleted, at a pause commit and at close */
	"CREATE TABLE sessions(sandbox_id TEXT PRIMARY KEY, blob BLOB NOT NULL);",
};

static int migrate(s0__meta *m, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	int version = 0;
	if (sqlite3_prepare_v2(m->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return s0__meta_fail(m, err, "read schema version");
	if (sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	int n = (int)(sizeof migrations / sizeof migrations[0]);
	if (version > n)
		return s0__error_set(err, S0_EUNSUPPORTED, "schema_too_new",
		                     "metadata schema %d is newer than this library (%d)", version, n);
	for (int v = version; v < n; v++) {
		char pragma[48];
		snprintf(pragma, sizeof pragma, "PRAGMA user_version=%d;", v + 1);
		int rc = s0__meta_begin(m, err);
		if (rc < 0)
			return rc;
		if (sqlite3_exec(m->db, migrations[v], NULL, NULL, NULL) != SQLITE_OK ||
		    sqlite3_exec(m->db, pragma, NULL, NULL, NULL) != SQLITE_OK) {
			rc = s0__meta_fail(m, err, "migrate schema");
			s0__meta_rollback(m);
			return rc;
		}
		if ((rc = s0__meta_commit(m, err)) < 0)
			return rc;
	}
	return S0_OK;
}

int s0__meta_open(const char *dir, s0__meta **out, s0_error **err)
{
	s0__meta *m = calloc(1, sizeof *m);
	if (!m)
		return s0__error_nomem(err);
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&m->mu, &a);
	pthread_mutexattr_destroy(&a);
	char *path = s0__asprintf("%s/meta.db", dir);
	int rc = S0_OK;
	if (!path) {
		rc = s0__error_nomem(err);
	} else if (sqlite3_open_v2(path, &m->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
	                                             SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
		rc = s0__meta_fail(m, err, "open meta.db");
	} else {
		sqlite3_busy_timeout(m->db, 5000);
		if (sqlite3_exec(m->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
		                        "PRAGMA foreign_keys=ON;", NULL, NULL, NULL) != SQLITE_OK)
			rc = s0__meta_fail(m, err, "configure meta.db");
		else
			rc = migrate(m, err);
	}
	free(path);
	if (rc < 0) {
		s0__meta_close(m);
		return rc;
	}
	*out = m;
	return S0_OK;
}

void s0__meta_close(s0__meta *m)
{
	if (!m)
		return;
	sqlite3_close_v2(m->db);
	pthread_mutex_destroy(&m->mu);
	free(m);
}

void s0__meta_lock(s0__meta *m) { pthread_mutex_lock(&m->mu); }
void s0__meta_unlock(s0__meta *m) { pthread_mutex_unlock(&m->mu); }
sqlite3 *s0__meta_db(s0__meta *m) { return m->db; }

int s0__meta_fail(s0__meta *m, s0_error **err, const char *what)
{
	return s0__error_set(err, S0_EIO, "meta_store", "metadata store: %s: %s", what,
	                     m->db ? sqlite3_errmsg(m->db) : "cannot open");
}

int s0__meta_begin(s0__meta *m, s0_error **err)
{
	pthread_mutex_lock(&m->mu);
	if (sqlite3_exec(m->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		int rc = s0__meta_fail(m, err, "begin");
		pthread_mutex_unlock(&m->mu);
		return rc;
	}
	return S0_OK;
}

int s0__meta_commit(s0__meta *m, s0_error **err)
{
	int rc = S0_OK;
	if (sqlite3_exec(m->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		rc = s0__meta_fail(m, err, "commit");
		sqlite3_exec(m->db, "ROLLBACK", NULL, NULL, NULL);
	}
	pthread_mutex_unlock(&m->mu);
	return rc;
}

void s0__meta_rollback(s0__meta *m)
{
	sqlite3_exec(m->db, "ROLLBACK", NULL, NULL, NULL);
	pthread_mutex_unlock(&m->mu);
}

/* ---- statement helpers (meta_sql.h) ---- */

int s0__sql_prepare(s0__meta *m, const char *sql, sqlite3_stmt **st, s0_error **err)
{
	if (sqlite3_prepare_v2(m->db, sql, -1, st, NULL) != SQLITE_OK)
		return s0__meta_fail(m, err, "prepare");
	return S0_OK;
}

int s0__sql_done(s0__meta *m, sqlite3_stmt *st, s0_error **err)
{
	int r = sqlite3_step(st);
	sqlite3_finalize(st);
	return r == SQLITE_DONE || r == SQLITE_ROW ? S0_OK : s0__meta_fail(m, err, "step");
}

void s0__sql_text(sqlite3_stmt *st, int col, char *dst, size_t n)
{
	s0__strlcpy(dst, (const char *)sqlite3_column_text(st, col), n);
}

int s0__meta_kv_get(s0__meta *m, const char *k, char **out, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__meta_lock(m);
	int rc = s0__sql_prepare(m, "SELECT v FROM kv WHERE k=?1", &st, err);
	*out = NULL;
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, k, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) == SQLITE_ROW) {
			*out = s0__strdup((const char *)sqlite3_column_text(st, 0));
			if (!*out)
				rc = s0__error_nomem(err);
		}
		sqlite3_finalize(st);
	}
	s0__meta_unlock(m);
	return rc;
}

int s0__meta_kv_put(s0__meta *m, const char *k, const char *v, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	s0__meta_lock(m);
	int rc = s0__sql_prepare(m, "INSERT OR REPLACE INTO kv(k,v) VALUES(?1,?2)", &st, err);
	if (rc == S0_OK) {
		sqlite3_bind_text(st, 1, k, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, v, -1, SQLITE_TRANSIENT);
		rc = s0__sql_done(m, st, err);
	}
	s0__meta_unlock(m);
	return rc;
}

void s0__meta_free_ids(char **ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
}

/* Collect column 0 of every row as strings. */
int s0__sql_collect_ids(s0__meta *m, sqlite3_stmt *st, char ***ids, size_t *n, s0_error **err)
{
	size_t cap = 0, len = 0;
	char **v = NULL;
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			cap = cap ? cap * 2 : 16;
			char **nv = realloc(v, cap * sizeof *nv);
			if (!nv)
				goto oom;
			v = nv;
		}
		if (!(v[len] = s0__strdup((const char *)sqlite3_column_text(st, 0))))
			goto oom;
		len++;
	}
	sqlite3_finalize(st);
	if (r != SQLITE_DONE) {
		s0__meta_free_ids(v, len);
		return s0__meta_fail(m, err, "collect");
	}
	*ids = v;
	*n = len;
	return S0_OK;
oom:
	sqlite3_finalize(st);
	s0__meta_free_ids(v, len);
	return s0__error_nomem(err);
}

int64_t s0__meta_latest_time(s0__meta *m)
{
	static const char sql[] =
		"SELECT MAX(t) FROM (SELECT MAX(updated_at) AS t FROM sandboxes"
		" UNION ALL SELECT MAX(claimed_at) FROM sandboxes"
		" UNION ALL SELECT MAX(updated_at) FROM operations"
		" UNION ALL SELECT MAX(created_at) FROM snapshots)";
	sqlite3_stmt *st = NULL;
	int64_t t = 0;
	s0__meta_lock(m);
	if (s0__sql_prepare(m, sql, &st, NULL) == S0_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			t = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	s0__meta_unlock(m);
	return t;
}
