/* SQLite catalog of the directory object store. */
#include "local/objects/pack/catalog.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

enum {
	ST_LOOKUP,
	ST_INS_OBJ,
	ST_UPSERT_PACK,
	ST_DEL_OBJ,
	ST_PACK_DEC,
	ST_EMPTY,
	ST_DEL_PACK,
	ST_MOVE,
	ST_PACK,
	ST_COUNT
};

static const char *const stmt_sql[ST_COUNT] = {
	[ST_LOOKUP] = "SELECT pack, off, len FROM objects WHERE id = ?1",
	[ST_INS_OBJ] = "INSERT OR IGNORE INTO objects(id, pack, off, len) VALUES (?1, ?2, ?3, ?4)",
	[ST_UPSERT_PACK] =
		"INSERT INTO packs(id, file_bytes, indexed_bytes, live_objects, live_bytes) "
		"VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT(id) DO UPDATE SET "
		"file_bytes = max(file_bytes, excluded.file_bytes), "
		"indexed_bytes = max(indexed_bytes, excluded.indexed_bytes), "
		"live_objects = live_objects + excluded.live_objects, "
		"live_bytes = live_bytes + excluded.live_bytes",
	[ST_DEL_OBJ] = "DELETE FROM objects WHERE id = ?1 RETURNING pack, len",
	[ST_PACK_DEC] = "UPDATE packs SET live_objects = live_objects - 1, "
	                "live_bytes = live_bytes - ?2 WHERE id = ?1",
	[ST_EMPTY] = "SELECT id FROM packs WHERE live_objects <= 0",
	[ST_DEL_PACK] = "DELETE FROM packs WHERE id = ?1",
	[ST_MOVE] = "UPDATE objects SET pack = ?2, off = ?3 WHERE id = ?1 AND pack = ?4 AND off = ?5",
	[ST_PACK] = "SELECT id, file_bytes, indexed_bytes, live_objects, live_bytes FROM packs "
	            "WHERE id = ?1",
};

static const char schema[] =
	"PRAGMA journal_mode=WAL;"
	"PRAGMA synchronous=FULL;"
	"CREATE TABLE IF NOT EXISTS packs(id INTEGER PRIMARY KEY, file_bytes INTEGER NOT NULL,"
	" indexed_bytes INTEGER NOT NULL, live_objects INTEGER NOT NULL,"
	" live_bytes INTEGER NOT NULL);"
	"CREATE TABLE IF NOT EXISTS objects(id BLOB PRIMARY KEY, pack INTEGER NOT NULL,"
	" off INTEGER NOT NULL, len INTEGER NOT NULL) WITHOUT ROWID;";

struct s0__objcat {
	sqlite3 *db;
	sqlite3_stmt *st[ST_COUNT];
	pthread_mutex_t mu;
	bool synced; /* current PRAGMA synchronous is FULL */
};

static int dberr(s0__objcat *c, s0_error **err, const char *what)
{
	return s0__error_set(err, S0_EIO, "catalog", "object catalog: %s: %s", what,
	                     sqlite3_errmsg(c->db));
}

static int exec(s0__objcat *c, const char *sql, s0_error **err)
{
	char *msg = NULL;
	if (sqlite3_exec(c->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		int rc = s0__error_set(err, S0_EIO, "catalog", "object catalog: %s: %s", sql,
		                       msg ? msg : "error");
		sqlite3_free(msg);
		return rc;
	}
	return S0_OK;
}

static sqlite3_stmt *stmt(s0__objcat *c, int which)
{
	sqlite3_stmt *s = c->st[which];
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return s;
}

int s0__objcat_open(const char *path, s0__objcat **out, s0_error **err)
{
	s0__objcat *c = calloc(1, sizeof *c);
	if (!c)
		return s0__error_nomem(err);
	pthread_mutex_init(&c->mu, NULL);
	int rc = S0_OK;
	if (sqlite3_open_v2(path, &c->db,
	                    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
	                    NULL) != SQLITE_OK) {
		rc = s0__error_set(err, S0_EIO, "catalog", "object catalog %s: %s", path,
		                   c->db ? sqlite3_errmsg(c->db) : "cannot open");
		goto fail;
	}
	sqlite3_busy_timeout(c->db, 10000);
	if ((rc = exec(c, schema, err)) < 0)
		goto fail;
	c->synced = true;
	for (int i = 0; i < ST_COUNT; i++) {
		if (sqlite3_prepare_v3(c->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &c->st[i],
		                       NULL) != SQLITE_OK) {
			rc = dberr(c, err, "prepare");
			goto fail;
		}
	}
	*out = c;
	return S0_OK;
fail:
	s0__objcat_close(c);
	return rc;
}

void s0__objcat_close(s0__objcat *c)
{
	if (!c)
		return;
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(c->st[i]);
	sqlite3_close(c->db);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

int s0__objcat_lookup(s0__objcat *c, const s0__objid *id, s0__objloc *out, s0_error **err)
{
	pthread_mutex_lock(&c->mu);
	sqlite3_stmt *s = stmt(c, ST_LOOKUP);
	sqlite3_bind_blob(s, 1, id->b, S0__OBJID_BYTES, SQLITE_STATIC);
	int r = sqlite3_step(s), rc = S0_OK;
	if (r == SQLITE_ROW) {
		out->pack = (uint64_t)sqlite3_column_int64(s, 0);
		out->off = (uint64_t)sqlite3_column_int64(s, 1);
		out->len = (uint32_t)sqlite3_column_int64(s, 2);
	} else if (r == SQLITE_DONE) {
		rc = S0_ENOTFOUND;
	} else {
		rc = dberr(c, err, "lookup");
	}
	sqlite3_reset(s);
	pthread_mutex_unlock(&c->mu);
	return rc;
}

/* Run a prepared write statement to completion; S0_OK or S0_EIO. */
static int step_done(s0__objcat *c, sqlite3_stmt *s, s0_error **err)
{
	int r = sqlite3_step(s);
	sqlite3_reset(s);
	return r == SQLITE_DONE ? S0_OK : dberr(c, err, "write");
}

/* Begin a write transaction whose commit is synced when durable. */
static int begin(s0__objcat *c, bool durable, s0_error **err)
{
	if (durable != c->synced) {
		int rc = exec(c, durable ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL", err);
		if (rc < 0)
			return rc;
		c->synced = durable;
	}
	return exec(c, "BEGIN IMMEDIATE", err);
}

static int finish(s0__objcat *c, int rc, s0_error **err)
{
	if (rc == S0_OK)
		rc = exec(c, "COMMIT", err);
	if (rc < 0)
		exec(c, "ROLLBACK", NULL);
	return rc;
}

static int upsert_pack(s0__objcat *c, uint64_t pack, uint64_t file_bytes, uint64_t indexed,
                       uint64_t live, uint64_t live_bytes, s0_error **err)
{
	sqlite3_stmt *s = stmt(c, ST_UPSERT_PACK);
	sqlite3_bind_int64(s, 1, (sqlite3_int64)pack);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)file_bytes);
	sqlite3_bind_int64(s, 3, (sqlite3_int64)indexed);
	sqlite3_bind_int64(s, 4, (sqlite3_int64)live);
	sqlite3_bind_int64(s, 5, (sqlite3_int64)live_bytes);
	return step_done(c, s, err);
}

int s0__objcat_add(s0__objcat *c, uint64_t pack, uint64_t file_bytes, uint64_t indexed_bytes,
                   const s0__objrow *rows, size_t n, uint64_t *live_out, s0_error **err)
{
	uint64_t live = 0, live_bytes = 0;
	pthread_mutex_lock(&c->mu);
	int rc = begin(c, false, err);
	for (size_t i = 0; rc == S0_OK && i < n; i++) {
		sqlite3_stmt *s = stmt(c, ST_INS_OBJ);
		sqlite3_bind_blob(s, 1, rows[i].id.b, S0__OBJID_BYTES, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, (sqlite3_int64)pack);
		sqlite3_bind_int64(s, 3, (sqlite3_int64)rows[i].loc.off);
		sqlite3_bind_int64(s, 4, rows[i].loc.len);
		rc = step_done(c, s, err);
		if (rc == S0_OK && sqlite3_changes(c->db) > 0) {
			live++;
			live_bytes += rows[i].loc.len;
		}
	}
	if (rc == S0_OK)
		rc = upsert_pack(c, pack, file_bytes, indexed_bytes, live, live_bytes, err);
	rc = finish(c, rc, err);
	pthread_mutex_unlock(&c->mu);
	if (rc == S0_OK && live_out)
		*live_out = live;
	return rc;
}

int s0__objcat_sync(s0__objcat *c, s0_error **err)
{
	pthread_mutex_lock(&c->mu);
	int rc = begin(c, true, err);
	rc = finish(c, rc, err);
	pthread_mutex_unlock(&c->mu);
	return rc;
}

/* Delete one object row and debit its pack. */
static int delete_one(s0__objcat *c, const s0__objid *id, uint64_t *nobj, uint64_t *nbytes,
                      s0_error **err)
{
	sqlite3_stmt *s = stmt(c, ST_DEL_OBJ);
	sqlite3_bind_blob(s, 1, id->b, S0__OBJID_BYTES, SQLITE_STATIC);
	int r = sqlite3_step(s);
	if (r == SQLITE_DONE) {
		sqlite3_reset(s);
		return S0_OK;
	}
	if (r != SQLITE_ROW) {
		sqlite3_reset(s);
		return dberr(c, err, "delete");
	}
	sqlite3_int64 pack = sqlite3_column_int64(s, 0), len = sqlite3_column_int64(s, 1);
	while (sqlite3_step(s) == SQLITE_ROW)
		;
	sqlite3_reset(s);
	(*nobj)++;
	*nbytes += (uint64_t)len;
	s = stmt(c, ST_PACK_DEC);
	sqlite3_bind_int64(s, 1, pack);
	sqlite3_bind_int64(s, 2, len);
	return step_done(c, s, err);
}

int s0__objcat_empty_packs(s0__objcat *c, uint64_t **out, size_t *n_out, s0_error **err)
{
	uint64_t *v = NULL;
	size_t n = 0, cap = 0;
	int r, rc = S0_OK;
	pthread_mutex_lock(&c->mu);
	sqlite3_stmt *s = stmt(c, ST_EMPTY);
	while (rc == S0_OK && (r = sqlite3_step(s)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			uint64_t *nv = realloc(v, cap * sizeof *v);
			if (!nv) {
				rc = s0__error_nomem(err);
				break;
			}
			v = nv;
		}
		v[n++] = (uint64_t)sqlite3_column_int64(s, 0);
	}
	if (rc == S0_OK && r != SQLITE_DONE)
		rc = dberr(c, err, "empty packs");
	sqlite3_reset(s);
	pthread_mutex_unlock(&c->mu);
	if (rc < 0) {
		free(v);
		return rc;
	}
	*out = v;
	*n_out = n;
	return S0_OK;
}

/* Delete a pack row (its objects were deleted or moved before). */
static int drop_pack(s0__objcat *c, uint64_t pack, s0_error **err)
{
	sqlite3_stmt *s = stmt(c, ST_DEL_PACK);
	sqlite3_bind_int64(s, 1, (sqlite3_int64)pack);
	return step_done(c, s, err);
}

int s0__objcat_drop_packs(s0__objcat *c, const uint64_t *packs, size_t n, s0_error **err)
{
	if (!n)
		return S0_OK;
	pthread_mutex_lock(&c->mu);
	int rc = begin(c, true, err);
	for (size_t i = 0; rc == S0_OK && i < n; i++)
		rc = drop_pack(c, packs[i], err);
	rc = finish(c, rc, err);
	pthread_mutex_unlock(&c->mu);
	return rc;
}

int s0__objcat_delete(s0__objcat *c, const s0__objid *ids, size_t n, uint64_t *freed_objects,
                      uint64_t *freed_bytes, s0_error **err)
{
	uint64_t nobj = 0, nbytes = 0;
	pthread_mutex_lock(&c->mu);
	int rc = begin(c, true, err);
	for (size_t i = 0; rc == S0_OK && i < n; i++)
		rc = delete_one(c, &ids[i], &nobj, &nbytes, err);
	rc = finish(c, rc, err);
	pthread_mutex_unlock(&c->mu);
	if (rc < 0)
		return rc;
	*freed_objects = nobj;
	*freed_bytes = nbytes;
	return S0_OK;
}

int s0__objcat_list(s0__objcat *c, s0__objrow **rows_out, size_t *n_out, s0_error **err)
{
	s0__objrow *v = NULL;
	size_t n = 0, cap = 0;
	sqlite3_stmt *s = NULL;
	int rc = S0_OK, r;
	pthread_mutex_lock(&c->mu);
	if (sqlite3_prepare_v2(c->db, "SELECT id, pack, off, len FROM objects", -1, &s, NULL) !=
	    SQLITE_OK) {
		rc = dberr(c, err, "list");
		goto out;
	}
	while ((r = sqlite3_step(s)) == SQLITE_ROW) {
		if (sqlite3_column_bytes(s, 0) != S0__OBJID_BYTES)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			s0__objrow *nv = realloc(v, cap * sizeof *v);
			if (!nv) {
				rc = s0__error_nomem(err);
				goto out;
			}
			v = nv;
		}
		memcpy(v[n].id.b, sqlite3_column_blob(s, 0), S0__OBJID_BYTES);
		v[n].loc.pack = (uint64_t)sqlite3_column_int64(s, 1);
		v[n].loc.off = (uint64_t)sqlite3_column_int64(s, 2);
		v[n].loc.len = (uint32_t)sqlite3_column_int64(s, 3);
		n++;
	}
	if (r != SQLITE_DONE)
		rc = dberr(c, err, "list");
out:
	sqlite3_finalize(s);
	pthread_mutex_unlock(&c->mu);
	if (rc < 0) {
		free(v);
		return rc;
	}
	*rows_out = v;
	*n_out = n;
	return S0_OK;
}

static void read_pack(sqlite3_stmt *s, s0__packinfo *p)
{
	p->id = (uint64_t)sqlite3_column_int64(s, 0);
	p->file_bytes = (uint64_t)sqlite3_column_int64(s, 1);
	p->indexed_bytes = (uint64_t)sqlite3_column_int64(s, 2);
	p->live_objects = (uint64_t)sqlite3_column_int64(s, 3);
	p->live_bytes = (uint64_t)sqlite3_column_int64(s, 4);
}

int s0__objcat_packs(s0__objcat *c, s0__packinfo **packs_out, size_t *n_out, s0_error **err)
{
	s0__packinfo *v = NULL;
	size_t n = 0, cap = 0;
	sqlite3_stmt *s = NULL;
	int rc = S0_OK, r;
	pthread_mutex_lock(&c->mu);
	if (sqlite3_prepare_v2(c->db,
	                       "SELECT id, file_bytes, indexed_bytes, live_objects, live_bytes FROM packs"
	                       " ORDER BY id",
	                       -1, &s, NULL) != SQLITE_OK) {
		rc = dberr(c, err, "packs");
		goto out;
	}
	while ((r = sqlite3_step(s)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			s0__packinfo *nv = realloc(v, cap * sizeof *v);
			if (!nv) {
				rc = s0__error_nomem(err);
				goto out;
			}
			v = nv;
		}
		read_pack(s, &v[n++]);
	}
	if (r != SQLITE_DONE)
		rc = dberr(c, err, "packs");
out:
	sqlite3_finalize(s);
	pthread_mutex_unlock(&c->mu);
	if (rc < 0) {
		free(v);
		return rc;
	}
	*packs_out = v;
	*n_out = n;
	return S0_OK;
}

static int move_one(s0__objcat *c, uint64_t new_pack, const s0__objrow *row,
                    const s0__objloc *old, bool *moved, s0_error **err)
{
	sqlite3_stmt *s = stmt(c, ST_MOVE);
	sqlite3_bind_blob(s, 1, row->id.b, S0__OBJID_BYTES, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)new_pack);
	sqlite3_bind_int64(s, 3, (sqlite3_int64)row->loc.off);
	sqlite3_bind_int64(s, 4, (sqlite3_int64)old->pack);
	sqlite3_bind_int64(s, 5, (sqlite3_int64)old->off);
	int rc = step_done(c, s, err);
	*moved = rc == S0_OK && sqlite3_changes(c->db) > 0;
	return rc;
}

int s0__objcat_move(s0__objcat *c, uint64_t new_pack, uint64_t file_bytes,
                    const s0__objrow *rows, const s0__objloc *old, size_t n,
                    const uint64_t *old_packs, size_t n_old, uint64_t *moved_out,
                    s0_error **err)
{
	uint64_t moved = 0, moved_bytes = 0;
	pthread_mutex_lock(&c->mu);
	int rc = begin(c, true, err);
	for (size_t i = 0; rc == S0_OK && i < n; i++) {
		bool m = false;
		rc = move_one(c, new_pack, &rows[i], &old[i], &m, err);
		if (m) {
			moved++;
			moved_bytes += rows[i].loc.len;
		}
	}
	if (rc == S0_OK && moved)
		rc = upsert_pack(c, new_pack, file_bytes, file_bytes, moved, moved_bytes, err);
	for (size_t i = 0; rc == S0_OK && i < n_old; i++)
		rc = drop_pack(c, old_packs[i], err);
	rc = finish(c, rc, err);
	pthread_mutex_unlock(&c->mu);
	if (rc == S0_OK)
		*moved_out = moved;
	return rc;
}

int s0__objcat_pack(s0__objcat *c, uint64_t pack, s0__packinfo *out, s0_error **err)
{
	pthread_mutex_lock(&c->mu);
	sqlite3_stmt *s = stmt(c, ST_PACK);
	sqlite3_bind_int64(s, 1, (sqlite3_int64)pack);
	int r = sqlite3_step(s), rc = S0_OK;
	if (r == SQLITE_ROW)
		read_pack(s, out);
	else if (r == SQLITE_DONE)
		rc = S0_ENOTFOUND;
	else
		rc = dberr(c, err, "pack lookup");
	sqlite3_reset(s);
	pthread_mutex_unlock(&c->mu);
	return rc;
}

/* One row of integers from an aggregate query. */
static int aggregate(s0__objcat *c, const char *sql, uint64_t *v, int n, s0_error **err)
{
	sqlite3_stmt *s = NULL;
	int rc = S0_OK;
	pthread_mutex_lock(&c->mu);
	if (sqlite3_prepare_v2(c->db, sql, -1, &s, NULL) != SQLITE_OK ||
	    sqlite3_step(s) != SQLITE_ROW)
		rc = dberr(c, err, "aggregate");
	for (int i = 0; rc == S0_OK && i < n; i++)
		v[i] = (uint64_t)sqlite3_column_int64(s, i);
	sqlite3_finalize(s);
	pthread_mutex_unlock(&c->mu);
	return rc;
}

int s0__objcat_max_pack(s0__objcat *c, uint64_t *out, s0_error **err)
{
	return aggregate(c, "SELECT coalesce(max(id), 0) FROM packs", out, 1, err);
}

int s0__objcat_totals(s0__objcat *c, uint64_t *objects, uint64_t *live_bytes,
                      uint64_t *file_bytes, s0_error **err)
{
	uint64_t v[3];
	int rc = aggregate(c,
	                   "SELECT coalesce(sum(live_objects), 0), coalesce(sum(live_bytes), 0),"
	                   " coalesce(sum(file_bytes), 0) FROM packs",
	                   v, 3, err);
	if (rc == S0_OK) {
		*objects = v[0];
		*live_bytes = v[1];
		*file_bytes = v[2];
	}
	return rc;
}
