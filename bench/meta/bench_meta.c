/*
 * Metadata benchmark: the same work on SQLite (DATA/meta.db) and on
 * PostgreSQL (a database made for the run and dropped after), in one run,
 * printed side by side with their ratio:
 *  1. raw store calls: one sandbox read, and one durable step (begin, the
 *     sandbox row, an operation row, commit: what s0__op_advance writes);
 *  2. pause latency (POST pause → paused) and resume latency (POST resume
 *     → running), medians over CYCLES sandboxes, each with a written file;
 *  3. lifecycle operations per second (claim, pause and wait, resume,
 *     delete: 4 operations per cycle) with 1 and 4 concurrent clients;
 *  4. on PostgreSQL, what one cycle costs the database: transactions
 *     committed, rows written and rows read (pg_stat_database, per cycle,
 *     over COST_CYCLES cycles between two closes of the backend).
 * The backends run on a manual clock (the controller runs on kicks only, as
 * in the tests), so the figures are the store's and the engine's work.
 *
 * Usage: bench_meta POSTGRES_URL [scratch-dir]
 *   POSTGRES_URL: a database the benchmark may CREATE DATABASE through
 *   (scripts/pg-cluster url DIR gives one); scratch: $TMPDIR or /tmp.
 */
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "local/meta/meta.h"
#include "sandbox0/local.h"
#include "sandbox0/sandbox0.h"

#define CALLS 2000
#define CYCLES 40
#define OPS_CYCLES 24
#define COST_CYCLES 50

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void die(const char *what, s0_error *err)
{
	fprintf(stderr, "bench_meta: %s: %s\n", what, err ? s0_error_message(err) : "failed");
	exit(1);
}

#define OK(call, what)                                                                     \
	do {                                                                               \
		s0_error *e_ = NULL;                                                       \
		if ((call) < 0)                                                            \
			die(what, e_);                                                     \
		s0_error_free(e_);                                                         \
	} while (0)

/* Run sql on the server named by url; exits on failure. */
static void admin(const char *url, const char *sql)
{
	PGconn *c = PQconnectdb(url);
	PGresult *r = PQstatus(c) == CONNECTION_OK ? PQexec(c, sql) : NULL;
	if (!r || PQresultStatus(r) != PGRES_COMMAND_OK) {
		fprintf(stderr, "bench_meta: %s: %s", sql, PQerrorMessage(c));
		exit(1);
	}
	PQclear(r);
	PQfinish(c);
}

/* url with its database replaced by db (malloc'd). */
static char *with_db(const char *url, const char *db)
{
	const char *path = strchr(strstr(url, "://") + 3, '/');
	const char *rest = path + strcspn(path, "?");
	char *u = NULL;
	if (asprintf(&u, "%.*s/%s%s", (int)(path - url), url, db, rest) < 0)
		exit(1);
	return u;
}

/* Transactions, rows written, rows read of database db so far, once two
 * reads 200 ms apart agree (closed backends flush their counters as they
 * exit). */
static void db_stats(const char *url, const char *db, double v[3])
{
	PGconn *c = PQconnectdb(url);
	char sql[256];
	snprintf(sql, sizeof sql, "SELECT xact_commit, tup_inserted + tup_updated + tup_deleted,"
	                          " tup_returned + tup_fetched FROM pg_stat_database WHERE datname='%s'",
	         db);
	double prev[3] = {-1, -1, -1};
	for (int tries = 0; tries < 50; tries++) {
		PQclear(PQexec(c, "SELECT pg_stat_clear_snapshot()"));
		PGresult *r = PQexec(c, sql);
		for (int i = 0; i < 3; i++)
			v[i] = PQntuples(r) ? atof(PQgetvalue(r, 0, i)) : 0;
		PQclear(r);
		if (!memcmp(prev, v, sizeof prev))
			break;
		memcpy(prev, v, sizeof prev);
		usleep(200 * 1000);
	}
	PQfinish(c);
}

typedef struct result {
	double get_us, step_us;       /* raw store calls */
	double pause_ms, resume_ms;   /* medians */
	double ops1, ops4;            /* lifecycle operations per second */
	double txn, written, read;    /* per cycle on PostgreSQL */
} result;

/* 1: raw store calls on an opened store. */
static void raw_calls(s0__meta *m, result *r)
{
	s0__sandbox_row row = {0};
	snprintf(row.rec.id, sizeof row.rec.id, "sb_bench");
	snprintf(row.rec.team_id, sizeof row.rec.team_id, "t");
	snprintf(row.head, sizeof row.head, "gen");
	row.rec.config_json = (char *)"{}";
	OK(s0__meta_sandbox_put(m, &row, &e_), "put");
	double t0 = now_ms();
	for (int i = 0; i < CALLS; i++) {
		s0__sandbox_row got;
		OK(s0__meta_sandbox_get(m, NULL, "sb_bench", &got, &e_), "get");
		s0__sandbox_rec_clear(&got.rec);
	}
	r->get_us = (now_ms() - t0) * 1e3 / CALLS;
	t0 = now_ms();
	for (int i = 0; i < CALLS / 4; i++) {
		s0__op_row op = {0};
		snprintf(op.sandbox_id, sizeof op.sandbox_id, "sb_bench");
		op.kind = S0__OP_PAUSE;
		op.state = S0__OPS_DONE;
		OK(s0__meta_begin(m, &e_), "begin");
		row.rec.updated_at_ms = i;
		OK(s0__meta_sandbox_put(m, &row, &e_), "put");
		OK(s0__meta_op_insert(m, &op, &e_), "op");
		OK(s0__meta_commit(m, &e_), "commit");
	}
	r->step_us = (now_ms() - t0) * 1e3 / (CALLS / 4);
}

typedef struct worker {
	s0_local *l;
	int cycles;
} worker;

/* One cycle: claim, pause and wait, resume and wait, delete. */
static void cycle(s0_client *c, double *pause_ms, double *resume_ms)
{
	s0_sandbox_info *sb = NULL;
	OK(s0_sandbox_claim(c, "default", NULL, NULL, &sb, &e_), "claim");
	char id[128];
	snprintf(id, sizeof id, "%s", s0_sandbox_info_id(sb));
	s0_sandbox_info_free(sb);
	OK(s0_files_write(c, id, "/workspace/f", "data", 4, &e_), "write");
	s0_wait_options wo = S0_WAIT_OPTIONS_INIT;
	double t0 = now_ms();
	OK(s0_sandbox_pause_and_wait(c, id, &wo, &sb, &e_), "pause");
	double t1 = now_ms();
	s0_sandbox_info_free(sb);
	OK(s0_sandbox_resume_and_wait(c, id, &wo, &sb, &e_), "resume");
	double t2 = now_ms();
	s0_sandbox_info_free(sb);
	OK(s0_sandbox_delete(c, id, &e_), "delete");
	if (pause_ms)
		*pause_ms = t1 - t0;
	if (resume_ms)
		*resume_ms = t2 - t1;
}

static void *work(void *arg)
{
	worker *w = arg;
	s0_client *c = NULL;
	OK(s0_client_new_local(w->l, NULL, &c, &e_), "client");
	for (int i = 0; i < w->cycles; i++)
		cycle(c, NULL, NULL);
	s0_client_free(c);
	return NULL;
}

static double ops_per_s(s0_local *l, int clients)
{
	pthread_t th[8];
	worker w = {l, OPS_CYCLES / clients};
	double t0 = now_ms();
	for (int i = 0; i < clients; i++)
		pthread_create(&th[i], NULL, work, &w);
	for (int i = 0; i < clients; i++)
		pthread_join(th[i], NULL);
	return 4.0 * w.cycles * clients / ((now_ms() - t0) / 1e3);
}

/* 2 and 3 on a backend (meta NULL = SQLite in dir). */
static void lifecycle(const char *dir, const char *meta, result *r)
{
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.manual_clock = 1;
	o.meta = meta;
	s0_local *l = NULL;
	OK(s0_local_open(dir, &o, &l, &e_), "open");
	s0_client *c = NULL;
	OK(s0_client_new_local(l, NULL, &c, &e_), "client");
	double p[CYCLES], q[CYCLES];
	cycle(c, NULL, NULL); /* warm up */
	for (int i = 0; i < CYCLES; i++)
		cycle(c, &p[i], &q[i]);
	r->pause_ms = median(p, CYCLES);
	r->resume_ms = median(q, CYCLES);
	s0_client_free(c);
	r->ops1 = ops_per_s(l, 1);
	r->ops4 = ops_per_s(l, 4);
	s0_local_close(l);
}

static char *scratch_dir(const char *base, const char *tag)
{
	char *p = NULL;
	if (asprintf(&p, "%s/s0-benchmeta-%s-XXXXXX", base, tag) < 0 || !mkdtemp(p))
		exit(1);
	return p;
}

static void rmrf(const char *dir)
{
	char *cmd = NULL;
	if (asprintf(&cmd, "rm -rf '%s'", dir) >= 0 && system(cmd) != 0)
		fprintf(stderr, "bench_meta: could not remove %s\n", dir);
	free(cmd);
}

int main(int argc, char **argv)
{
	if (argc < 2 || strncmp(argv[1], "postgres", 8)) {
		fprintf(stderr, "usage: bench_meta POSTGRES_URL [scratch-dir]\n");
		return 2;
	}
	const char *base = argc > 2 ? argv[2] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char db[64], sql[128];
	snprintf(db, sizeof db, "s0bench_%d", (int)getpid());
	snprintf(sql, sizeof sql, "CREATE DATABASE %s", db);
	admin(argv[1], sql);
	char *url = with_db(argv[1], db);
	result res[2];
	memset(res, 0, sizeof res);
	for (int k = 0; k < 2; k++) {
		char *dir = scratch_dir(base, k ? "pg" : "sqlite");
		s0__meta *m = NULL;
		OK(s0__meta_open_backend(k ? "postgres" : "sqlite", k ? url : dir, &m, &e_), "meta");
		raw_calls(m, &res[k]);
		s0__meta_close(m);
		rmrf(dir);
		dir = scratch_dir(base, k ? "pg" : "sqlite");
		if (k) { /* a fresh database for the backend */
			snprintf(sql, sizeof sql, "DROP DATABASE %s WITH (FORCE)", db);
			admin(argv[1], sql);
			snprintf(sql, sizeof sql, "CREATE DATABASE %s", db);
			admin(argv[1], sql);
		}
		lifecycle(dir, k ? url : NULL, &res[k]);
		if (k) { /* 4: the database's work per cycle, between two closes */
			s0_local_options o = S0_LOCAL_OPTIONS_INIT;
			o.manual_clock = 1;
			o.meta = url;
			double a[3], b[3];
			db_stats(argv[1], db, a);
			s0_local *l = NULL;
			OK(s0_local_open(dir, &o, &l, &e_), "open");
			s0_client *c = NULL;
			OK(s0_client_new_local(l, NULL, &c, &e_), "client");
			for (int i = 0; i < COST_CYCLES; i++)
				cycle(c, NULL, NULL);
			s0_client_free(c);
			s0_local_close(l);
			db_stats(argv[1], db, b);
			res[1].txn = (b[0] - a[0]) / COST_CYCLES;
			res[1].written = (b[1] - a[1]) / COST_CYCLES;
			res[1].read = (b[2] - a[2]) / COST_CYCLES;
		}
		rmrf(dir);
	}
	snprintf(sql, sizeof sql, "DROP DATABASE %s WITH (FORCE)", db);
	admin(argv[1], sql);
	free(url);
	printf("%-44s %12s %12s %8s\n", "measure", "sqlite", "postgres", "pg/sq");
	const struct {
		const char *name;
		double a, b;
	} rows[] = {
		{"sandbox read (us)", res[0].get_us, res[1].get_us},
		{"durable step: row + operation + commit (us)", res[0].step_us, res[1].step_us},
		{"pause to paused, median (ms)", res[0].pause_ms, res[1].pause_ms},
		{"resume to running, median (ms)", res[0].resume_ms, res[1].resume_ms},
		{"lifecycle ops/s, 1 client", res[0].ops1, res[1].ops1},
		{"lifecycle ops/s, 4 clients", res[0].ops4, res[1].ops4},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		printf("%-44s %12.1f %12.1f %8.2f\n", rows[i].name, rows[i].a, rows[i].b,
		       rows[i].b / rows[i].a);
	printf("postgres, per cycle (claim, write, pause, resume, delete): %.0f transactions,"
	       " %.0f rows written, %.0f rows read\n", res[1].txn, res[1].written, res[1].read);
	return 0;
}
