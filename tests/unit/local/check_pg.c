/*
 * check_pg: the backend on a real PostgreSQL server (meta/postgres/), for
 * what only PostgreSQL has: outages of the server itself (stopped with
 * `pg_ctl stop -m immediate` and started again through $S0_TEST_PG_CTL,
 * tests/support/pgtest.h), the password kept out of every message, the
 * password from the environment, bad URLs, `s0 serve --meta`, schema
 * versions and concurrent migrations. The part `postgres` of scripts/test runs it alone (it stops
 * the server the other suites use) with $S0_TEST_META, $S0_TEST_PG_CTL,
 * $S0_TEST_PG_DIR and $S0_TEST_PG_PORT set; without them every test fails,
 * naming what is missing.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "common/deadline.h"
#include "local/meta/meta.h"
#include "local/meta/postgres/mpg.h"
#include "lt.h"
#include "pgtest.h"

static void need_server(void)
{
	ck_assert_msg(getenv("S0_TEST_META") && getenv("S0_TEST_PG_CTL") &&
	                      getenv("S0_TEST_PG_DIR") && getenv("S0_TEST_PG_PORT"),
	              "check_pg needs S0_TEST_META, S0_TEST_PG_CTL, S0_TEST_PG_DIR and "
	              "S0_TEST_PG_PORT (scripts/test postgres sets them)");
	ck_assert_msg(s0_test_pg_ctl("start"), "the server does not start"); /* after a failed test */
}

static void server(const char *verb)
{
	ck_assert_msg(s0_test_pg_ctl(verb), "pg-cluster %s failed", verb);
}

static int is_paused_state(const s0_sandbox_info *sb, void *payload)
{
	(void)payload;
	return s0_sandbox_info_status(sb) == S0_STATUS_PAUSED && s0_sandbox_info_paused(sb);
}

static void wait_paused(lt *t, const char *id)
{
	s0_sandbox_info *sb = NULL;
	LT_OK(s0_sandbox_wait(t->c, id, 0, is_paused_state, NULL, &sb, &e_));
	s0_sandbox_info_free(sb);
	lt_assert_paused(t, id);
}

/* The node's runtimes in the inspection (no sandbox: no metadata read). */
static cJSON *node_runtimes(lt *t, double *cpu)
{
	cJSON *j = lt_inspect(t, NULL);
	*cpu = lt_num(j, "node.cpu_used_millis");
	cJSON *rts = cJSON_DetachItemFromObject(cJSON_GetObjectItem(j, "node"), "runtimes");
	cJSON_Delete(j);
	return rts;
}

/*
 * PTX-08 on a real outage: PostgreSQL is down before the pause's intent is
 * recorded. The POST fails 503 `unavailable` (retryable) and nothing
 * changes: once the server is back the sandbox is running on the same
 * runtime, with no pause operation and its files.
 */
START_TEST(pg_outage_before_intent_is_503_and_changes_nothing)
{
	LT_ROW("PTX-08");
	need_server();
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/w", "kept");
	char *rid = lt_runtime_id(&t, id);
	server("stop");
	s0_lifecycle_result *lr = NULL;
	s0_error *err = NULL;
	int rc = s0_sandbox_pause(t.c, id, S0_BOOL_UNSET, &lr, &err);
	ck_assert_msg(rc == S0_EUNAVAILABLE, "pause: %s (%s)", s0_code_name(rc),
	              err ? s0_error_message(err) : "");
	ck_assert_int_eq(s0_error_http_status(err), 503);
	ck_assert_str_eq(s0_error_wire_code(err), "unavailable");
	ck_assert(s0_error_is_retryable(err));
	s0_error_free(err);
	ck_assert_ptr_null(lr);
	server("start");
	lt_quiesce(&t);
	lt_assert_running(&t, id);
	char *rid2 = lt_runtime_id(&t, id);
	ck_assert_str_eq(rid, rid2);
	ck_assert_double_eq(lt_inum(&t, id, "sandbox.operation_counts.pause"), 0);
	ck_assert(lt_file_is(&t, id, "/workspace/w", "kept"));
	lt_pause(&t, id); /* and the store serves the pause now */
	wait_paused(&t, id);
	free(rid);
	free(rid2);
	free(id);
	lt_close(&t);
}
END_TEST

/*
 * PTX-09 on a real outage: the intent is recorded (the node channel holds
 * the step, 202), then PostgreSQL stops. The step runs and fails against
 * the dead server, over and over: the runtime stays fenced and its
 * capacity used, GET answers 503 (never a false `paused`). The server
 * comes back while the paused commit is held: GET shows `running`-side
 * state (paused false). Released, the pause completes with exactly one
 * publication and the written file in the new head.
 */
START_TEST(pg_outage_after_intent_retries_until_back)
{
	LT_ROW("PTX-09");
	need_server();
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/w", "dirty");
	double cpu0 = 0, cpu = 0;
	cJSON_Delete(node_runtimes(&t, &cpu0));
	double pub0 = lt_inum(&t, NULL, "storage.publications");
	LT_OK(s0_local_fault_arm(t.local, "node_channel", S0_FAULT_HOLD, 0, 0, &e_));
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_pause(t.c, id, S0_BOOL_UNSET, &lr, &e_));
	ck_assert_int_eq(s0_lifecycle_result_http_status(lr), 202); /* intent recorded */
	ck_assert(!s0_lifecycle_result_paused(lr));
	s0_lifecycle_result_free(lr);

	server("stop");
	LT_OK(s0_local_fault_release(t.local, "node_channel", &e_));
	for (int i = 0; i < 5; i++) { /* controller passes against the dead server */
		lt_advance(&t, 2000);
		lt_quiesce(&t);
	}
	cJSON *rts = node_runtimes(&t, &cpu);
	ck_assert_int_eq(cJSON_GetArraySize(rts), 1); /* writer grant held */
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(rts, 0), "fenced")));
	ck_assert_double_eq(cpu, cpu0); /* capacity fenced */
	cJSON_Delete(rts);
	s0_sandbox_info *sb = NULL;
	s0_error *err = NULL;
	ck_assert_int_eq(s0_sandbox_get(t.c, id, &sb, &err), S0_EUNAVAILABLE);
	ck_assert_int_eq(s0_error_http_status(err), 503);
	s0_error_free(err);

	/* back, with the paused commit held: the sandbox is not shown paused */
	LT_OK(s0_local_fault_arm(t.local, "meta_store@commit", S0_FAULT_HOLD, 0, 0, &e_));
	server("start");
	for (int i = 0; i < 3; i++) {
		lt_advance(&t, 2000);
		lt_quiesce(&t);
	}
	sb = lt_get(&t, id);
	ck_assert(!s0_sandbox_info_paused(sb));
	ck_assert_int_ne(s0_sandbox_info_status(sb), S0_STATUS_PAUSED);
	s0_sandbox_info_free(sb);
	rts = node_runtimes(&t, &cpu);
	ck_assert_int_eq(cJSON_GetArraySize(rts), 1);
	ck_assert_double_eq(cpu, cpu0);
	cJSON_Delete(rts);
	LT_OK(s0_local_fault_release(t.local, "meta_store@commit", &e_));
	wait_paused(&t, id);
	ck_assert_double_eq(lt_inum(&t, NULL, "storage.publications"), pub0 + 1);
	ck_assert_double_eq(lt_inum(&t, id, "sandbox.operation_counts.pause"), 1);
	char *head = lt_head(&t, id);
	char *w = lt_gen_cat(&t, head, "/workspace/w");
	ck_assert_str_eq(w, "dirty");
	free(w);
	free(head);
	free(id);
	lt_close(&t);
}
END_TEST

/* A resume while PostgreSQL is down: 503, still paused; then it resumes
 * with the files. */
START_TEST(pg_outage_resume_is_503_then_resumes)
{
	LT_ROW("RTX-06");
	need_server();
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/w", "kept");
	lt_pause(&t, id);
	wait_paused(&t, id);
	server("stop");
	s0_lifecycle_result *lr = NULL;
	s0_error *err = NULL;
	ck_assert_int_eq(s0_sandbox_resume(t.c, id, S0_BOOL_UNSET, &lr, &err), S0_EUNAVAILABLE);
	ck_assert_int_eq(s0_error_http_status(err), 503);
	s0_error_free(err);
	server("start");
	lt_assert_paused(&t, id);
	lt_resume(&t, id);
	lt_assert_running(&t, id);
	ck_assert(lt_file_is(&t, id, "/workspace/w", "kept"));
	free(id);
	lt_close(&t);
}
END_TEST

/* A commit that returned is durable across an immediate server stop (no
 * shutdown checkpoint): the reopened backend finds the paused sandbox. */
START_TEST(pg_immediate_stop_keeps_committed)
{
	need_server();
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/w", "kept");
	lt_pause(&t, id);
	wait_paused(&t, id);
	lt_shutdown(&t);
	server("stop");
	server("start");
	lt_reopen(&t);
	lt_assert_paused(&t, id);
	lt_resume(&t, id);
	ck_assert(lt_file_is(&t, id, "/workspace/w", "kept"));
	free(id);
	lt_close(&t);
}
END_TEST

/* A URL over TCP with user and password (role s0, password s0pw: the
 * cluster of scripts/pg-cluster) to database db. */
static char *tcp_url(const char *password, const char *db)
{
	char *u = NULL;
	ck_assert_int_ge(asprintf(&u, "postgresql://s0%s%s@127.0.0.1:%s/%s", password ? ":" : "",
	                          password ? password : "", getenv("S0_TEST_PG_PORT"), db),
	                 0);
	return u;
}

static void assert_hidden(s0_error *err, const char *secret)
{
	ck_assert_ptr_nonnull(err);
	ck_assert_msg(!strstr(s0_error_message(err), secret), "password shown: %s",
	              s0_error_message(err));
}

/* SEC-50: the password of the metadata URL (or PGPASSWORD) appears in no
 * error: a wrong password, a server that is down, a store that fails. */
START_TEST(pg_password_never_in_errors)
{
	need_server();
	char *dir = s0_test_tmpdir("pgpw");
	char *url = s0_test_meta_url(dir); /* creates the database */
	free(url);
	char db[24];
	s0_test_meta_dbname(dir, db);

	/* a wrong password: refused, not shown */
	url = tcp_url("Wr0ngSecret-4711", db);
	s0__meta *m = NULL;
	s0_error *err = NULL;
	ck_assert_int_eq(s0__meta_open_backend("postgres", url, &m, &err), S0_EUNAVAILABLE);
	ck_assert_str_eq(s0_error_reason(err), "meta_unavailable");
	assert_hidden(err, "Wr0ngSecret-4711");
	s0_error_free(err);
	free(url);

	/* the right one works; with the server down, the backend's open fails
	 * without it, and so does a call on an open store */
	url = tcp_url("s0pw", db);
	err = NULL;
	ck_assert_int_eq(s0__meta_open_backend("postgres", url, &m, &err), S0_OK);
	server("stop");
	s0__sandbox_row row;
	ck_assert_int_eq(s0__meta_sandbox_get(m, NULL, "sb_x", &row, &err), S0_EUNAVAILABLE);
	assert_hidden(err, "s0pw");
	s0_error_free(err);
	err = NULL;
	s0__meta_close(m);
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.meta = url;
	s0_local *l = NULL;
	ck_assert_int_eq(s0_local_open(dir, &o, &l, &err), S0_EUNAVAILABLE);
	assert_hidden(err, "s0pw");
	s0_error_free(err);
	server("start");
	free(url);

	/* PGPASSWORD: a URL without a password, and never shown either */
	url = tcp_url(NULL, db);
	setenv("PGPASSWORD", "Wr0ngEnv-0815", 1);
	err = NULL;
	ck_assert_int_eq(s0__meta_open_backend("postgres", url, &m, &err), S0_EUNAVAILABLE);
	assert_hidden(err, "Wr0ngEnv-0815");
	s0_error_free(err);
	setenv("PGPASSWORD", "s0pw", 1);
	ck_assert_int_eq(s0__meta_open_backend("postgres", url, &m, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_schema_version(m), s0__mpg_migration_count);
	s0__meta_close(m);
	unsetenv("PGPASSWORD");
	free(url);
	s0_test_meta_drop(dir);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

/* Spawn `$S0_CLI serve --data dir --meta url --quiet` with stdout and
 * stderr into one pipe; *fd reads them. */
static pid_t spawn_serve(const char *dir, const char *url, int *fd)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		execl(getenv("S0_CLI"), "s0", "serve", "--data", dir, "--meta", url, "--quiet",
		      "--runtime", "sim", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	*fd = p[0];
	return pid;
}

/* Read fd until a line starting with prefix (kept in line) or EOF; every
 * byte read is appended to all (n bytes). false at EOF. */
static bool read_until(int fd, const char *prefix, char *line, size_t cap, char *all, size_t n)
{
	size_t len = 0;
	char c;
	while (read(fd, &c, 1) == 1) {
		size_t used = strlen(all);
		if (used + 1 < n) {
			all[used] = c;
			all[used + 1] = '\0';
		}
		if (c != '\n') {
			if (len + 1 < cap)
				line[len++] = c;
			continue;
		}
		line[len] = '\0';
		if (!strncmp(line, prefix, strlen(prefix)))
			return true;
		len = 0;
	}
	return false;
}

/* `s0 serve --meta` keeps the metadata in PostgreSQL: a claim over HTTP
 * lands in the database, DATA/meta.db is never made, and nothing the
 * server prints holds the password; a bad URL stops it, unprinted. */
START_TEST(pg_serve_meta_flag)
{
	need_server();
	ck_assert_msg(getenv("S0_CLI"), "S0_CLI (the s0 program) is not set");
	char *dir = s0_test_tmpdir("pgserve");
	char *made = s0_test_meta_url(dir);
	free(made);
	char db[24];
	s0_test_meta_dbname(dir, db);
	char *url = tcp_url("s0pw", db);
	int fd = -1;
	pid_t pid = spawn_serve(dir, url, &fd);
	char line[512], all[8192] = "", key[256] = "";
	ck_assert_msg(read_until(fd, "API key", line, sizeof line, all, sizeof all), "%s", all);
	s0__strlcpy(key, strrchr(line, ' ') + 1, sizeof key);
	ck_assert_msg(read_until(fd, "Listening on ", line, sizeof line, all, sizeof all), "%s", all);
	char base[128];
	snprintf(base, sizeof base, "%.*s", (int)strcspn(line + 13, " "), line + 13);

	s0_client_options co = S0_CLIENT_OPTIONS_INIT;
	co.base_url = base;
	co.token = key;
	s0_client *c = NULL;
	LT_OK(s0_client_new(&co, &c, &e_));
	s0_sandbox_info *sb = NULL;
	LT_OK(s0_sandbox_claim(c, "default", NULL, NULL, &sb, &e_));
	char sql[256];
	snprintf(sql, sizeof sql, "UPDATE sandboxes SET pod_name=pod_name WHERE id='%s'",
	         s0_sandbox_info_id(sb));
	ck_assert(s0_test_meta_exec(url, sql)); /* the row is in PostgreSQL */
	s0_sandbox_info_free(sb);
	s0_client_free(c);
	char *db_file = NULL;
	ck_assert_int_ge(asprintf(&db_file, "%s/meta.db", dir), 0);
	ck_assert_int_ne(access(db_file, F_OK), 0);
	free(db_file);
	kill(pid, SIGTERM);
	while (read_until(fd, "\x01", line, sizeof line, all, sizeof all))
		;
	int st = 0;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	close(fd);
	ck_assert_msg(!strstr(all, "s0pw"), "the password was printed: %s", all);

	/* a server that cannot be reached: the open fails, the password unprinted */
	free(url);
	url = NULL;
	ck_assert_int_ge(asprintf(&url, "postgresql://s0:Secret-31337@127.0.0.1:1/%s", db), 0);
	all[0] = '\0';
	pid = spawn_serve(dir, url, &fd);
	while (read_until(fd, "\x01", line, sizeof line, all, sizeof all))
		;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	close(fd);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) != 0);
	ck_assert_msg(strstr(all, "metadata store unavailable"), "%s", all);
	ck_assert_msg(!strstr(all, "Secret-31337"), "the password was printed: %s", all);
	free(url);
	s0_test_meta_drop(dir);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

/* Bad metadata URLs: refused before anything is made, naming no secret. */
START_TEST(pg_bad_urls_are_einval)
{
	char *dir = s0_test_tmpdir("pgbad");
	static const char *const bad[] = {"mysql://u:Secret99@h/db", "sqlite", "host=/tmp",
	                                  "postgresql://u:Secret99@h:notaport:1/db?bogus=1"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		s0_local_options o = S0_LOCAL_OPTIONS_INIT;
		o.meta = bad[i];
		s0_local *l = NULL;
		s0_error *err = NULL;
		ck_assert_int_eq(s0_local_open(dir, &o, &l, &err), S0_EINVAL);
		ck_assert_str_eq(s0_error_reason(err), "bad_meta_url");
		assert_hidden(err, "Secret99");
		s0_error_free(err);
		ck_assert_ptr_null(l);
	}
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

static void *open_one(void *url)
{
	s0__meta *m = NULL;
	int rc = s0__meta_open_backend("postgres", url, &m, NULL);
	if (rc == S0_OK && s0__meta_schema_version(m) != s0__mpg_migration_count)
		rc = S0_ERROR;
	s0__meta_close(m);
	return (void *)(intptr_t)rc;
}

/* Nodes opening one fresh database at once migrate it once (the advisory
 * lock); a database of a newer schema is refused, named. */
START_TEST(pg_migrations_concurrent_and_too_new)
{
	need_server();
	char *dir = s0_test_tmpdir("pgmig");
	char *url = s0_test_meta_url(dir);
	pthread_t th[4];
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, open_one, url), 0);
	for (int i = 0; i < 4; i++) {
		void *rc = NULL;
		pthread_join(th[i], &rc);
		ck_assert_int_eq((int)(intptr_t)rc, S0_OK);
	}
	ck_assert(s0_test_meta_exec(url, "UPDATE s0_schema SET version=99"));
	s0__meta *m = NULL;
	s0_error *err = NULL;
	ck_assert_int_eq(s0__meta_open_backend("postgres", url, &m, &err), S0_EUNSUPPORTED);
	ck_assert_str_eq(s0_error_reason(err), "schema_too_new");
	s0_error_free(err);
	free(url);
	s0_test_meta_drop(dir);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

/* What the change feed delivered (pg_change_feed_between_handles). */
typedef struct feed {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char last[S0__ID_MAX];
	bool last_deleted, rolled_back_seen;
	int n;
} feed;

static void on_change(void *arg, const char *id, bool deleted)
{
	feed *f = arg;
	pthread_mutex_lock(&f->mu);
	s0__strlcpy(f->last, id, sizeof f->last);
	f->last_deleted = deleted;
	if (!strcmp(id, "sb_rolled"))
		f->rolled_back_seen = true;
	f->n++;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

/* Wait up to ms (real time) for a delivery of id with that deleted flag. */
static bool feed_wait(feed *f, const char *id, bool deleted, int ms)
{
	struct timespec dl = s0__deadline_after_ms(CLOCK_REALTIME, ms);
	pthread_mutex_lock(&f->mu);
	bool ok;
	while (!(ok = !strcmp(f->last, id) && f->last_deleted == deleted))
		if (pthread_cond_timedwait(&f->cv, &f->mu, &dl))
			break;
	pthread_mutex_unlock(&f->mu);
	return ok;
}

static s0__sandbox_row feed_row(const char *id)
{
	s0__sandbox_row r = {0};
	s0__strlcpy(r.rec.id, id, sizeof r.rec.id);
	s0__strlcpy(r.rec.team_id, "team_feed", sizeof r.rec.team_id);
	s0__strlcpy(r.rec.template_id, "base", sizeof r.rec.template_id);
	r.rec.status = S0_STATUS_RUNNING;
	r.rec.config_json = (char *)"{}";
	return r;
}

/* NOD-15: a commit through one handle that writes or deletes a sandbox row
 * reaches another handle's change feed (LISTEN/NOTIFY); a rolled-back
 * write never does. */
START_TEST(pg_change_feed_between_handles)
{
	need_server();
	char *dir = s0_test_tmpdir("pgfeed");
	char *url = s0_test_meta_url(dir);
	s0__meta *a = NULL, *b = NULL;
	ck_assert_int_eq(s0__meta_open_backend("postgres", url, &a, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_open_backend("postgres", url, &b, NULL), S0_OK);
	feed f = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
	ck_assert_int_eq(s0__meta_listen(a, on_change, &f, NULL), S0_OK);
	s0_error *err = NULL;
	ck_assert_int_eq(s0__meta_listen(a, on_change, &f, &err), S0_EINVAL); /* once per handle */
	s0_error_free(err);
	ck_assert_int_eq(s0__meta_listen(a, NULL, &f, NULL), S0_EINVAL);
	/* the listener connects on its own thread: write until it hears one */
	s0__sandbox_row r = feed_row("sb_feed");
	bool heard = false;
	for (int i = 0; i < 50 && !heard; i++) {
		r.rec.updated_at_ms = i;
		ck_assert_int_eq(s0__meta_sandbox_put(b, &r, NULL), S0_OK);
		heard = feed_wait(&f, "sb_feed", false, 200);
	}
	ck_assert_msg(heard, "no notification of a committed write");
	/* a rolled-back write says nothing; the commit after it does */
	s0__sandbox_row x = feed_row("sb_rolled");
	ck_assert_int_eq(s0__meta_begin(b, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_sandbox_put(b, &x, NULL), S0_OK);
	s0__meta_rollback(b);
	s0__sandbox_row y = feed_row("sb_after");
	ck_assert_int_eq(s0__meta_begin(b, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_sandbox_put(b, &y, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_commit(b, NULL), S0_OK);
	ck_assert(feed_wait(&f, "sb_after", false, 10000));
	ck_assert_int_eq(s0__meta_sandbox_delete(b, "sb_feed", NULL), S0_OK);
	ck_assert(feed_wait(&f, "sb_feed", true, 10000));
	pthread_mutex_lock(&f.mu);
	ck_assert(!f.rolled_back_seen);
	pthread_mutex_unlock(&f.mu);
	s0__meta_close(a); /* stops the listener: no call after it returns */
	s0__meta_close(b);
	free(url);
	s0_test_meta_drop(dir);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

/* Migration 6: the generation owners that finished deletes left go; a
 * claim whose sandbox row is not written yet (a start in progress on
 * another node) and live sandboxes' claims stay. */
START_TEST(pg_migration_6_drops_deleted_sandboxes_owners)
{
	need_server();
	char *dir = s0_test_tmpdir("pgmig5");
	char *url = s0_test_meta_url(dir);
	s0__meta *m = NULL;
	ck_assert_int_eq(s0__meta_open_backend("postgres", url, &m, NULL), S0_OK);
	int64_t a = 0;
	ck_assert_int_eq(s0__meta_node_lease(m, "node-a", 1000, 60000, &a, NULL), S0_OK);
	s0__sandbox_row live = {0};
	snprintf(live.rec.id, sizeof live.rec.id, "sb_live");
	snprintf(live.rec.team_id, sizeof live.rec.team_id, "t");
	live.rec.config_json = (char *)"{}";
	ck_assert_int_eq(s0__meta_sandbox_put(m, &live, NULL), S0_OK);
	static const char *const ids[] = {"sb_live", "sb_gone", "sb_new"};
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(s0__meta_gen_claim(m, ids[i], 1, "node-a", a, 1100, NULL), S0_OK);
	s0__op_row done = {.kind = S0__OP_DELETE, .state = S0__OPS_DONE, .generation = 1};
	snprintf(done.sandbox_id, sizeof done.sandbox_id, "sb_gone");
	ck_assert_int_eq(s0__meta_op_insert(m, &done, NULL), S0_OK);
	s0__meta_close(m);
	ck_assert(s0_test_meta_exec(url, "UPDATE s0_schema SET version=5"));
	ck_assert_int_eq(s0__meta_open_backend("postgres", url, &m, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_schema_version(m), 6);
	s0__gen_owner_row o;
	ck_assert_int_eq(s0__meta_gen_owner(m, "sb_gone", &o, NULL), S0_ENOTFOUND);
	ck_assert_int_eq(s0__meta_gen_owner(m, "sb_live", &o, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_gen_owner(m, "sb_new", &o, NULL), S0_OK);
	s0__meta_close(m);
	free(url);
	s0_test_meta_drop(dir);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

static Suite *pg_suite(void)
{
	Suite *s = suite_create("postgres");
	TCase *o = tcase_create("outages");
	tcase_set_timeout(o, 120);
	tcase_add_test(o, pg_outage_before_intent_is_503_and_changes_nothing);
	tcase_add_test(o, pg_outage_after_intent_retries_until_back);
	tcase_add_test(o, pg_outage_resume_is_503_then_resumes);
	tcase_add_test(o, pg_immediate_stop_keeps_committed);
	suite_add_tcase(s, o);
	TCase *c = tcase_create("connection");
	tcase_set_timeout(c, 60);
	tcase_add_test(c, pg_password_never_in_errors);
	tcase_add_test(c, pg_bad_urls_are_einval);
	tcase_add_test(c, pg_serve_meta_flag);
	tcase_add_test(c, pg_migrations_concurrent_and_too_new);
	tcase_add_test(c, pg_change_feed_between_handles);
	tcase_add_test(c, pg_migration_6_drops_deleted_sandboxes_owners);
	suite_add_tcase(s, c);
	return s;
}

S0_TEST_MAIN(pg_suite)
