/* Doomed (id, pack) pairs of an S3 store's node in SQLite (s3doom.h). */
#include "local/objects/s3/s3doom.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>

struct s0__s3doom {
	sqlite3 *db;
	pthread_mutex_t mu;
};

static int db_err(s0__s3doom *d, s0_error **err)
{
	return s0__error_set(err, S0_EIO, "store_io", "doomed objects database: %s",
	                     sqlite3_errmsg(d->db));
}

int s0__s3doom_open(const char *path, s0__s3doom **out, s0_error **err)
{
	s0__s3doom *d = calloc(1, sizeof *d);
	if (!d)
		return s0__error_nomem(err);
	pthread_mutex_init(&d->mu, NULL);
	int rc = S0_OK;
	if (sqlite3_open_v2(path, &d->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	        SQLITE_OK ||
	    sqlite3_exec(d->db,
	                 "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
	                 "CREATE TABLE IF NOT EXISTS doomed(id BLOB NOT NULL, pack INTEGER NOT NULL,"
	                 " at INTEGER NOT NULL, PRIMARY KEY (id, pack)) WITHOUT ROWID;"
	                 "CREATE TABLE IF NOT EXISTS copies(id BLOB NOT NULL, pack INTEGER NOT NULL,"
	                 " off INTEGER NOT NULL, len INTEGER NOT NULL, PRIMARY KEY (id, pack))"
	                 " WITHOUT ROWID;"
	                 "CREATE INDEX IF NOT EXISTS copies_pack ON copies(pack);",
	                 NULL, NULL, NULL) != SQLITE_OK)
		rc = d->db ? db_err(d, err) : s0__error_nomem(err);
	if (rc < 0) {
		s0__s3doom_close(d);
		return rc;
	}
	*out = d;
	return S0_OK;
}

void s0__s3doom_close(s0__s3doom *d)
{
	if (!d)
		return;
	sqlite3_close(d->db);
	pthread_mutex_destroy(&d->mu);
	free(d);
}

/* Run sql once per row (?1 id, ?2 pack, ?3 ms or off, ?4 len) in one
 * transaction; ms < 0: ?3 is the row's offset. */
static int each_row(s0__s3doom *d, const char *sql, const s0__objrow *rows, size_t n,
                    int64_t ms, s0_error **err)
{
	if (!n)
		return S0_OK;
	pthread_mutex_lock(&d->mu);
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_exec(d->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK &&
	                 sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) == SQLITE_OK
	             ? S0_OK
	             : db_err(d, err);
	for (size_t i = 0; rc == S0_OK && i < n; i++) {
		sqlite3_reset(st);
		sqlite3_bind_blob(st, 1, rows[i].id.b, S0__OBJID_BYTES, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)rows[i].loc.pack);
		if (sqlite3_bind_parameter_count(st) >= 3)
			sqlite3_bind_int64(st, 3, ms < 0 ? (sqlite3_int64)rows[i].loc.off : ms);
		if (sqlite3_bind_parameter_count(st) >= 4)
			sqlite3_bind_int64(st, 4, (sqlite3_int64)rows[i].loc.len);
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = db_err(d, err);
	}
	sqlite3_finalize(st);
	if (rc == S0_OK && sqlite3_exec(d->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		rc = db_err(d, err);
	if (rc < 0)
		sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
	pthread_mutex_unlock(&d->mu);
	return rc;
}

int s0__s3doom_add(s0__s3doom *d, const s0__objrow *rows, size_t n, uint64_t ms,
                   s0_error **err)
{
	return each_row(d, "INSERT OR IGNORE INTO doomed(id, pack, at) VALUES (?1, ?2, ?3)", rows,
	                n, (int64_t)ms, err);
}

int s0__s3doom_forget(s0__s3doom *d, const s0__objrow *rows, size_t n, s0_error **err)
{
	return each_row(d, "DELETE FROM doomed WHERE id = ?1 AND pack = ?2", rows, n, 0, err);
}

int s0__s3doom_get(s0__s3doom *d, const s0__objid *id, uint64_t pack, uint64_t *ms_out,
                   s0_error **err)
{
	pthread_mutex_lock(&d->mu);
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(d->db, "SELECT at FROM doomed WHERE id = ?1 AND pack = ?2", -1,
	                            &st, NULL) == SQLITE_OK
	             ? S0_OK
	             : db_err(d, err);
	if (rc == S0_OK) {
		sqlite3_bind_blob(st, 1, id->b, S0__OBJID_BYTES, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)pack);
		int r = sqlite3_step(st);
		if (r == SQLITE_ROW)
			*ms_out = (uint64_t)sqlite3_column_int64(st, 0);
		else
			rc = r == SQLITE_DONE ? S0_ENOTFOUND : db_err(d, err);
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&d->mu);
	return rc;
}

int s0__s3doom_copy_add(s0__s3doom *d, const s0__objrow *rows, size_t n, s0_error **err)
{
	return each_row(d, "INSERT OR IGNORE INTO copies(id, pack, off, len) VALUES (?1, ?2, ?3, ?4)",
	                rows, n, -1, err);
}

int s0__s3doom_copy_forget(s0__s3doom *d, const s0__objrow *rows, size_t n, s0_error **err)
{
	return each_row(d, "DELETE FROM copies WHERE id = ?1 AND pack = ?2", rows, n, 0, err);
}

int s0__s3doom_copies(s0__s3doom *d, const s0__objid *id, s0__objrow **rows_out,
                      size_t *n_out, s0_error **err)
{
	*rows_out = NULL;
	*n_out = 0;
	pthread_mutex_lock(&d->mu);
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(d->db, "SELECT pack, off, len FROM copies WHERE id = ?1", -1,
	                            &st, NULL) == SQLITE_OK
	             ? S0_OK
	             : db_err(d, err);
	size_t cap = 0;
	if (rc == S0_OK)
		sqlite3_bind_blob(st, 1, id->b, S0__OBJID_BYTES, SQLITE_STATIC);
	int r;
	while (rc == S0_OK && (r = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n_out == cap) {
			size_t nc = cap ? cap * 2 : 4;
			s0__objrow *nv = realloc(*rows_out, nc * sizeof *nv);
			if (!nv) {
				rc = s0__error_nomem(err);
				break;
			}
			*rows_out = nv;
			cap = nc;
		}
		(*rows_out)[(*n_out)++] = (s0__objrow){
			*id,
			{(uint64_t)sqlite3_column_int64(st, 0), (uint64_t)sqlite3_column_int64(st, 1),
			 (uint32_t)sqlite3_column_int64(st, 2)}};
	}
	if (rc == S0_OK && r != SQLITE_DONE)
		rc = db_err(d, err);
	sqlite3_finalize(st);
	pthread_mutex_unlock(&d->mu);
	if (rc < 0) {
		free(*rows_out);
		*rows_out = NULL;
		*n_out = 0;
	}
	return rc;
}

int s0__s3doom_pack_has_copies(s0__s3doom *d, uint64_t pack, bool *out, s0_error **err)
{
	pthread_mutex_lock(&d->mu);
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(d->db, "SELECT 1 FROM copies WHERE pack = ?1 LIMIT 1", -1, &st,
	                            NULL) == SQLITE_OK
	             ? S0_OK
	             : db_err(d, err);
	if (rc == S0_OK) {
		sqlite3_bind_int64(st, 1, (sqlite3_int64)pack);
		int r = sqlite3_step(st);
		*out = r == SQLITE_ROW;
		if (r != SQLITE_ROW && r != SQLITE_DONE)
			rc = db_err(d, err);
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&d->mu);
	return rc;
}
