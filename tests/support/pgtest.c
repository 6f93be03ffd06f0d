/* The metadata store of a parametrised test run (pgtest.h). */
#include "pgtest.h"

#include <libpq-fe.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void s0_test_meta_dbname(const char *dir, char out[24])
{
	uint64_t h = 1469598103934665603ULL;
	for (const unsigned char *p = (const unsigned char *)dir; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	snprintf(out, 24, "s0t_%016llx", (unsigned long long)h);
}

/* base with its database path replaced by db (malloc'd). */
static char *with_db(const char *base, const char *db)
{
	const char *scheme = strstr(base, "://");
	const char *path = scheme ? strchr(scheme + 3, '/') : NULL;
	if (!path)
		return NULL;
	const char *rest = path + strcspn(path, "?");
	size_t n = (size_t)(path - base) + strlen(db) + strlen(rest) + 2;
	char *u = malloc(n);
	if (u)
		snprintf(u, n, "%.*s/%s%s", (int)(path - base), base, db, rest);
	return u;
}

static void quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* Run sql on the admin database; true on success or when the failure's
 * SQLSTATE is ok_state. */
static bool admin(const char *sql, const char *ok_state)
{
	PGconn *c = PQconnectdb(getenv("S0_TEST_META"));
	bool ok = false;
	if (PQstatus(c) == CONNECTION_OK) {
		PQsetNoticeProcessor(c, quiet, NULL);
		PGresult *r = PQexec(c, sql);
		const char *st = PQresultErrorField(r, PG_DIAG_SQLSTATE);
		ok = PQresultStatus(r) == PGRES_COMMAND_OK || (ok_state && st && !strcmp(st, ok_state));
		if (!ok)
			fprintf(stderr, "pgtest: %s: %s", sql, PQresultErrorMessage(r));
		PQclear(r);
	} else {
		fprintf(stderr, "pgtest: connect: %s", PQerrorMessage(c));
	}
	PQfinish(c);
	return ok;
}

char *s0_test_meta_url(const char *dir)
{
	const char *base = getenv("S0_TEST_META");
	if ((!base || !*base) && getenv("S0_TEST_META_REQUIRED")) {
		fprintf(stderr, "pgtest: S0_TEST_META_REQUIRED is set but S0_TEST_META is not\n");
		abort();
	}
	if (!base || !*base)
		return NULL;
	char db[24], sql[96];
	s0_test_meta_dbname(dir, db);
	snprintf(sql, sizeof sql, "CREATE DATABASE %s", db);
	if (!admin(sql, "42P04")) /* 42P04: it exists (a reopened directory) */
		abort();
	char *u = with_db(base, db);
	if (!u)
		abort();
	return u;
}

void s0_test_meta_drop(const char *dir)
{
	const char *base = getenv("S0_TEST_META");
	if (!base || !*base)
		return;
	char db[24], sql[96];
	s0_test_meta_dbname(dir, db);
	snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", db);
	admin(sql, NULL);
}

bool s0_test_meta_exec(const char *url, const char *sql)
{
	char text[1024];
	size_t o = 0;
	for (const char *s = sql; *s && o + 16 < sizeof text;) {
		unsigned v;
		if (s[0] == 'x' && s[1] == '\'' && sscanf(s + 2, "%2x'", &v) == 1 && s[4] == '\'') {
			o += (size_t)snprintf(text + o, sizeof text - o, "chr(%u)", v);
			s += 5;
		} else {
			text[o++] = *s++;
		}
	}
	text[o] = '\0';
	PGconn *c = PQconnectdb(url);
	bool ok = false;
	if (PQstatus(c) == CONNECTION_OK) {
		PGresult *r = PQexec(c, text);
		ok = PQresultStatus(r) == PGRES_COMMAND_OK && atoi(PQcmdTuples(r)) > 0;
		if (!ok)
			fprintf(stderr, "pgtest: %s: %s", text, PQresultErrorMessage(r));
		PQclear(r);
	}
	PQfinish(c);
	return ok;
}

bool s0_test_pg_ctl(const char *verb)
{
	const char *ctl = getenv("S0_TEST_PG_CTL"), *dir = getenv("S0_TEST_PG_DIR");
	if (!ctl || !*ctl || !dir || !*dir)
		return false;
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "'%s' %s '%s'", ctl, verb, dir);
	return system(cmd) == 0;
}
