/* Connections of the PostgreSQL metadata store: the pool, prepared
 * statements, running one statement, and mapping failures to errors with
 * the password masked (mpg.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "local/meta/postgres/mpg.h"

/* The handle whose transaction this thread holds (NULL = none): its
 * calls run on that transaction's connection. */
static _Thread_local s0__mpg *tl_txn;

/* Copy src into dst (n bytes) with every occurrence of secret replaced by
 * "***" and the trailing newline libpq adds removed. */
static void mask(const char *src, const char *secret, char *dst, size_t n)
{
	size_t sl = secret ? strlen(secret) : 0, o = 0;
	for (const char *s = src ? src : ""; *s && o + 4 < n;) {
		if (sl && !strncmp(s, secret, sl)) {
			memcpy(dst + o, "***", 3);
			o += 3;
			s += sl;
		} else {
			dst[o++] = *s == '\n' ? ' ' : *s;
			s++;
		}
	}
	while (o && dst[o - 1] == ' ')
		o--;
	dst[o] = '\0';
}

int s0__mpg_fail(s0__mpg *q, mpg_conn *c, const PGresult *r, const char *what, s0_error **err)
{
	const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	if (c && !state) /* libpq's own failure: the connection is not to be trusted */
		c->dead = true;
	const char *text = r && *PQresultErrorMessage(r) ? PQresultErrorMessage(r)
	                   : c && c->pg                    ? PQerrorMessage(c->pg)
	                                                   : "no connection";
	char shown[512], envmask[512];
	mask(text, q->password, envmask, sizeof envmask);
	mask(envmask, getenv("PGPASSWORD"), shown, sizeof shown);
	bool gone = !c || !c->pg || c->dead || PQstatus(c->pg) != CONNECTION_OK;
	if (gone || (state && (!strncmp(state, "08", 2) || !strncmp(state, "57P", 3) ||
	                       !strncmp(state, "53", 2))))
		return s0__error_set(err, S0_EUNAVAILABLE, "meta_unavailable",
		                     "metadata store unavailable: %s: %s", what, shown);
	if (state && (!strcmp(state, "40001") || !strcmp(state, "40P01")))
		return s0__error_set(err, S0_EUNAVAILABLE, "meta_conflict",
		                     "metadata store: %s: concurrent transaction, retry: %s", what,
		                     shown);
	return s0__error_set(err, S0_EIO, "meta_store", "metadata store: %s: %s", what, shown);
}

static void quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

int s0__mpg_connect(s0__mpg *q, mpg_conn *c, s0_error **err)
{
	if (c->pg && !c->dead && PQstatus(c->pg) == CONNECTION_OK)
		return S0_OK;
	PQfinish(c->pg);
	c->pg = NULL;
	c->dead = false;
	c->prepared = 0;
	/* connect_timeout first: the URL's own value, when it has one, wins */
	const char *const keys[] = {"connect_timeout", "application_name", "dbname", NULL};
	const char *const vals[] = {"5", "libsandbox0", q->conninfo, NULL};
	c->pg = PQconnectdbParams(keys, vals, 1);
	bool pooled = c >= q->conns && c < q->conns + S0__MPG_POOL;
	if (c->pg && PQstatus(c->pg) == CONNECTION_OK) {
		PQsetNoticeProcessor(c->pg, quiet, NULL); /* NOTICEs are not errors */
		if (pooled) /* this node's own writes: the change feed skips them (listen.c) */
			__atomic_store_n(&q->own_pids[c - q->conns], PQbackendPID(c->pg),
			                 __ATOMIC_RELEASE);
		return S0_OK;
	}
	if (pooled)
		__atomic_store_n(&q->own_pids[c - q->conns], 0, __ATOMIC_RELEASE);
	int rc = s0__mpg_fail(q, c, NULL, "connect", err);
	PQfinish(c->pg);
	c->pg = NULL;
	return rc;
}

int s0__mpg_exec_plain(s0__mpg *q, mpg_conn *c, const char *sql, s0_error **err)
{
	PGresult *r = PQexec(c->pg, sql);
	ExecStatusType st = PQresultStatus(r);
	int rc = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK ? S0_OK
	                                                          : s0__mpg_fail(q, c, r, sql, err);
	PQclear(r);
	return rc;
}

/* A connection for this thread: its transaction's, or an idle pooled one
 * (connected). NULL with err on failure (the connection goes back). */
static mpg_conn *acquire(s0__mpg *q, s0_error **err)
{
	if (tl_txn == q)
		return q->txn;
	pthread_mutex_lock(&q->mu);
	mpg_conn *c = NULL;
	for (;;) {
		for (int i = 0; i < S0__MPG_POOL && !c; i++) /* a live one first */
			if (!q->conns[i].busy && q->conns[i].pg)
				c = &q->conns[i];
		for (int i = 0; i < S0__MPG_POOL && !c; i++)
			if (!q->conns[i].busy)
				c = &q->conns[i];
		if (c)
			break;
		pthread_cond_wait(&q->cv, &q->mu);
	}
	c->busy = true;
	pthread_mutex_unlock(&q->mu);
	if (s0__mpg_connect(q, c, err) < 0) {
		pthread_mutex_lock(&q->mu);
		c->busy = false;
		pthread_cond_signal(&q->cv);
		pthread_mutex_unlock(&q->mu);
		return NULL;
	}
	return c;
}

static void release(s0__mpg *q, mpg_conn *c)
{
	if (tl_txn == q && c == q->txn)
		return; /* the transaction keeps it */
	if (c->pg && (c->dead || PQstatus(c->pg) != CONNECTION_OK)) { /* lost: a new one next */
		PQfinish(c->pg);
		c->pg = NULL;
		c->dead = false;
		c->prepared = 0;
	}
	pthread_mutex_lock(&q->mu);
	c->busy = false;
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

static int prepare(s0__mpg *q, mpg_conn *c, mpg_stmt s, s0_error **err)
{
	if (c->prepared & (1ULL << s))
		return S0_OK;
	char name[16];
	snprintf(name, sizeof name, "s0_%d", (int)s);
	PGresult *r = PQprepare(c->pg, name, s0__mpg_sql[s], 0, NULL);
	int rc = PQresultStatus(r) == PGRES_COMMAND_OK ? S0_OK
	                                                : s0__mpg_fail(q, c, r, "prepare", err);
	PQclear(r);
	if (rc == S0_OK)
		c->prepared |= 1ULL << s;
	return rc;
}

/* Statements safe to send again after a connection was lost mid-call: all
 * but the two whose replay could insert twice (an operation, an API key). */
static bool replayable(mpg_stmt s)
{
	return s != Q_OP_INS && s != Q_KEY_CREATE;
}

static bool lost(mpg_conn *c, const PGresult *r)
{
	if (r && !PQresultErrorField(r, PG_DIAG_SQLSTATE))
		c->dead = true; /* libpq's own failure: the socket broke */
	return !c->pg || c->dead || PQstatus(c->pg) != CONNECTION_OK;
}

int s0__mpg_run(s0__meta *m, mpg_stmt s, const mpg_params *p, bool binary_result,
                PGresult **res, s0_error **err)
{
	s0__mpg *q = MPG(m);
	if (res)
		*res = NULL;
	bool in_txn = tl_txn == q;
	if (in_txn && q->txn_broken)
		return s0__error_set(err, S0_EUNAVAILABLE, "meta_unavailable",
		                     "metadata store unavailable: the transaction was lost");
	static const mpg_params none = {0};
	const mpg_params *pp = p ? p : &none;
	char name[16];
	snprintf(name, sizeof name, "s0_%d", (int)s);
	for (int attempt = 0;; attempt++) {
		mpg_conn *c = acquire(q, err);
		if (!c)
			return S0_EUNAVAILABLE;
		int rc = prepare(q, c, s, NULL);
		PGresult *r = NULL;
		if (rc == S0_OK) {
			r = PQexecPrepared(c->pg, name, pp->n, pp->v, pp->len, pp->fmt,
			                   binary_result ? 1 : 0);
			ExecStatusType st = PQresultStatus(r);
			rc = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK ? S0_OK : S0_EIO;
		}
		if (rc < 0 && !in_txn && attempt == 0 && lost(c, r) && replayable(s)) {
			/* a pooled connection that died while idle (a server restart):
			 * once more on a new one */
			PQclear(r);
			release(q, c);
			continue;
		}
		if (rc < 0) {
			rc = s0__mpg_fail(q, c, r, r ? "statement" : "prepare", err);
			PQclear(r);
			r = NULL;
			if (in_txn)
				q->txn_broken = true; /* PostgreSQL aborted it: only rollback remains */
		}
		release(q, c);
		if (res)
			*res = r;
		else
			PQclear(r);
		return rc;
	}
}

/* ---- transactions ---- */

int s0__mpg_begin(s0__meta *m, s0_error **err)
{
	static const char begin[] = "BEGIN ISOLATION LEVEL SERIALIZABLE";
	s0__mpg *q = MPG(m);
	pthread_mutex_lock(&q->txn_mu);
	mpg_conn *c = acquire(q, err);
	int rc = c ? s0__mpg_exec_plain(q, c, begin, err) : S0_EUNAVAILABLE;
	if (c && rc < 0 && lost(c, NULL)) { /* died while idle: once more on a new connection */
		if (err) {
			s0_error_free(*err);
			*err = NULL;
		}
		release(q, c);
		c = acquire(q, err);
		rc = c ? s0__mpg_exec_plain(q, c, begin, err) : S0_EUNAVAILABLE;
	}
	if (rc < 0) {
		if (c)
			release(q, c);
		pthread_mutex_unlock(&q->txn_mu);
		return rc;
	}
	q->txn = c;
	q->txn_broken = false;
	tl_txn = q;
	return S0_OK;
}

/* End this thread's transaction: the connection returns to the pool. */
static void end_txn(s0__mpg *q)
{
	mpg_conn *c = q->txn;
	tl_txn = NULL;
	q->txn = NULL;
	release(q, c);
	pthread_mutex_unlock(&q->txn_mu);
}

int s0__mpg_commit(s0__meta *m, s0_error **err)
{
	s0__mpg *q = MPG(m);
	int rc;
	if (q->txn_broken) {
		rc = s0__error_set(err, S0_EUNAVAILABLE, "meta_unavailable",
		                   "metadata store unavailable: the transaction was lost");
		PQclear(PQexec(q->txn->pg, "ROLLBACK"));
	} else {
		PGresult *r = PQexec(q->txn->pg, "COMMIT");
		/* an aborted transaction "commits" as ROLLBACK */
		if (PQresultStatus(r) == PGRES_COMMAND_OK && !strcmp(PQcmdStatus(r), "COMMIT"))
			rc = S0_OK;
		else if (PQresultStatus(r) == PGRES_COMMAND_OK)
			rc = s0__error_set(err, S0_EIO, "meta_store",
			                   "metadata store: commit: the transaction was rolled back");
		else
			rc = s0__mpg_fail(q, q->txn, r, "commit", err);
		PQclear(r);
	}
	end_txn(q);
	return rc;
}

void s0__mpg_rollback(s0__meta *m)
{
	s0__mpg *q = MPG(m);
	if (q->txn->pg && !q->txn->dead && PQstatus(q->txn->pg) == CONNECTION_OK)
		PQclear(PQexec(q->txn->pg, "ROLLBACK"));
	end_txn(q);
}
