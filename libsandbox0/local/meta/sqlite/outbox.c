/* The SQLite webhook outbox (outbox.h): <dir>/webhook-outbox.db, apart
 * from meta.db, or an in-memory database when not durable. */
#include <stdlib.h>
#include <string.h>

#include "local/meta/sqlite/msql.h"

typedef struct qbox {
	s0__outbox base; /* first */
	sqlite3 *db;     /* opened FULLMUTEX: each call is serialised */
} qbox;

#define QB(o) (((qbox *)(o))->db)

static int fail(s0__outbox *o, s0_error **err, const char *what)
{
	return s0__error_set(err, S0_EINTERNAL, "webhook_outbox", "webhook outbox: %s: %s", what,
	                     QB(o) ? sqlite3_errmsg(QB(o)) : "open failed");
}

static int prepare(s0__outbox *o, const char *sql, sqlite3_stmt **st, s0_error **err)
{
	return sqlite3_prepare_v2(QB(o), sql, -1, st, NULL) == SQLITE_OK ? S0_OK
	                                                                 : fail(o, err, "prepare");
}

static int done(s0__outbox *o, sqlite3_stmt *st, s0_error **err)
{
	int r = sqlite3_step(st);
	sqlite3_finalize(st);
	return r == SQLITE_DONE ? S0_OK : fail(o, err, "step");
}

static char *col_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return s0__strdup(s ? (const char *)s : "");
}

static void qb_close(s0__outbox *o)
{
	if (!o)
		return;
	sqlite3_close(QB(o));
	free(o);
}

static int qb_append(s0__outbox *o, const s0__outbox_event *ev, int64_t now_ms, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(o, "INSERT INTO outbox (sandbox_id, event, url, secret, body, created_ms) "
	                    "VALUES (?, ?, ?, ?, ?, ?)", &st, err);
	if (rc < 0)
		return rc;
	sqlite3_bind_text(st, 1, ev->sandbox_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, ev->event, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, ev->url, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, ev->secret, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 5, ev->body, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 6, now_ms);
	return done(o, st, err);
}

static int qb_next(s0__outbox *o, s0__outbox_event *out, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(o, "SELECT seq, sandbox_id, event, url, secret, body, attempts FROM outbox"
	                    " WHERE acked = 0 ORDER BY attempts, seq LIMIT 1", &st, err);
	if (rc < 0)
		return rc;
	memset(out, 0, sizeof *out);
	int r = sqlite3_step(st);
	if (r == SQLITE_ROW) {
		out->seq = sqlite3_column_int64(st, 0);
		out->sandbox_id = col_dup(st, 1);
		out->event = col_dup(st, 2);
		out->url = col_dup(st, 3);
		out->secret = col_dup(st, 4);
		out->body = col_dup(st, 5);
		out->attempts = sqlite3_column_int64(st, 6);
		rc = out->sandbox_id && out->event && out->url && out->secret && out->body
		             ? 1
		             : s0__error_nomem(err);
		if (rc < 0)
			s0__outbox_event_clear(out);
	} else {
		rc = r == SQLITE_DONE ? 0 : fail(o, err, "read");
	}
	sqlite3_finalize(st);
	return rc;
}

static int qb_attempted(s0__outbox *o, int64_t seq, bool acked, int64_t ack_tick,
                        s0_error **err)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(o, acked ? "UPDATE outbox SET acked = 1, attempts = attempts + 1, "
	                            "ack_tick = ?2 WHERE seq = ?1"
	                          : "UPDATE outbox SET attempts = attempts + 1 WHERE seq = ?1",
	                 &st, err);
	if (rc < 0)
		return rc;
	sqlite3_bind_int64(st, 1, seq);
	if (acked)
		sqlite3_bind_int64(st, 2, ack_tick);
	return done(o, st, err);
}

/* One integer from a query with an optional text parameter ?1. */
static int scalar(s0__outbox *o, const char *sql, const char *arg, int64_t *out, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(o, sql, &st, err);
	if (rc < 0)
		return rc;
	if (arg)
		sqlite3_bind_text(st, 1, arg, -1, SQLITE_TRANSIENT);
	int r = sqlite3_step(st);
	*out = r == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return r == SQLITE_ROW || r == SQLITE_DONE ? S0_OK : fail(o, err, "read");
}

static int qb_count(s0__outbox *o, const char *sandbox_id, bool acked, int64_t *out,
                    s0_error **err)
{
	return scalar(o, acked ? "SELECT COUNT(*) FROM outbox WHERE acked = 1"
	                         " AND (?1 IS NULL OR sandbox_id = ?1)"
	                       : "SELECT COUNT(*) FROM outbox WHERE acked = 0"
	                         " AND (?1 IS NULL OR sandbox_id = ?1)",
	              sandbox_id, out, err);
}

static int qb_max_ticks(s0__outbox *o, int64_t *ack_tick, int64_t *capture_tick, s0_error **err)
{
	int rc = scalar(o, "SELECT COALESCE(MAX(ack_tick), 0) FROM outbox", NULL, ack_tick, err);
	return rc < 0 ? rc
	              : scalar(o, "SELECT COALESCE(MAX(tick), 0) FROM captures", NULL, capture_tick,
	                       err);
}

static int qb_capture_put(s0__outbox *o, const char *sandbox_id, int64_t tick, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(o, "INSERT OR REPLACE INTO captures (sandbox_id, tick) VALUES (?, ?)", &st,
	                 err);
	if (rc < 0)
		return rc;
	sqlite3_bind_text(st, 1, sandbox_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, tick);
	return done(o, st, err);
}

static int qb_each_event(s0__outbox *o, void (*fn)(const s0__outbox_event *ev, void *ud),
                         void *ud, s0_error **err)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(o, "SELECT seq, sandbox_id, event, attempts, acked, COALESCE(ack_tick, 0)"
	                    " FROM outbox ORDER BY seq", &st, err);
	if (rc < 0)
		return rc;
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		s0__outbox_event ev = {
			.seq = sqlite3_column_int64(st, 0),
			.sandbox_id = (char *)sqlite3_column_text(st, 1),
			.event = (char *)sqlite3_column_text(st, 2),
			.attempts = sqlite3_column_int64(st, 3),
			.acked = sqlite3_column_int64(st, 4) != 0,
			.ack_tick = sqlite3_column_int64(st, 5),
		};
		fn(&ev, ud);
	}
	sqlite3_finalize(st);
	return r == SQLITE_DONE ? S0_OK : fail(o, err, "read");
}

static int qb_each_capture(s0__outbox *o,
                           void (*fn)(const char *sandbox_id, int64_t tick, void *ud), void *ud,
                           s0_error **err)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(o, "SELECT sandbox_id, tick FROM captures ORDER BY sandbox_id", &st, err);
	if (rc < 0)
		return rc;
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW)
		fn((const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1), ud);
	sqlite3_finalize(st);
	return r == SQLITE_DONE ? S0_OK : fail(o, err, "read");
}

static const s0__outbox_ops qbox_ops = {
	.close = qb_close,
	.append = qb_append,
	.next = qb_next,
	.attempted = qb_attempted,
	.count = qb_count,
	.max_ticks = qb_max_ticks,
	.capture_put = qb_capture_put,
	.each_event = qb_each_event,
	.each_capture = qb_each_capture,
};

int s0__msql_outbox_open(const char *dir, s0__outbox **out, s0_error **err)
{
	*out = NULL;
	qbox *q = calloc(1, sizeof *q);
	if (!q)
		return s0__error_nomem(err);
	q->base.ops = &qbox_ops;
	s0__outbox *o = &q->base;
	char *path = dir ? s0__asprintf("%s/webhook-outbox.db", dir) : NULL;
	int rc = S0_OK;
	if (dir && !path)
		rc = s0__error_nomem(err);
	else if (sqlite3_open_v2(dir ? path : ":memory:", &q->db,
	                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
	                         NULL) != SQLITE_OK ||
	         (dir && sqlite3_exec(q->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;", NULL,
	                              NULL, NULL) != SQLITE_OK) ||
	         sqlite3_exec(q->db, "CREATE TABLE IF NOT EXISTS outbox ("
	                             " seq INTEGER PRIMARY KEY AUTOINCREMENT, sandbox_id TEXT NOT NULL,"
	                             " event TEXT NOT NULL, url TEXT NOT NULL, secret TEXT NOT NULL,"
	                             " body TEXT NOT NULL, created_ms INTEGER NOT NULL,"
	                             " attempts INTEGER NOT NULL DEFAULT 0,"
	                             " acked INTEGER NOT NULL DEFAULT 0, ack_tick INTEGER);"
	                             "CREATE TABLE IF NOT EXISTS captures ("
	                             " sandbox_id TEXT PRIMARY KEY, tick INTEGER NOT NULL);",
	                      NULL, NULL, NULL) != SQLITE_OK)
		rc = fail(o, err, "open");
	free(path);
	if (rc < 0) {
		qb_close(o);
		return rc;
	}
	*out = o;
	return S0_OK;
}
