/*
 * check_meta: the metadata store interface (local/meta/meta.h). The
 * contract suite runs once per row of the registration table, so every
 * implementation answers the same questions: each table's calls,
 * transactions, operation kinds and states by name, teams and API keys,
 * bad input, the webhook outbox. The SQLite specifics follow: opening a
 * data directory written by the previous schema (version 3) and refusing
 * rows this library cannot read (an unknown operation kind or state),
 * also when the whole backend opens on them. Last, the
 * durable step of lifecycle/optxn.h on a real engine: commit, or roll
 * back everything with the operation's state kept.
 */
#include <check.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "pgtest.h"
#include "sandbox0/local.h"
#include "local/lifecycle/engine_internal.h"
#include "local/lifecycle/engine_open.h"
#include "local/local_internal.h"
#include "local/meta/meta.h"

/* ---- fixture: one fresh store of the implementation under test ---- */

/* The implementations this run exercises: every row, except postgres when
 * no server is given ($S0_TEST_META, tests/support/pgtest.h; the part
 * `postgres` of scripts/test sets it). */
static bool pg_given(void)
{
	const char *v = getenv("S0_TEST_META");
	return v && *v;
}

static int backend_count(void)
{
	if (getenv("S0_TEST_META_REQUIRED") && !pg_given()) {
		fprintf(stderr, "check_meta: S0_TEST_META_REQUIRED without S0_TEST_META\n");
		exit(1); /* a run meant for PostgreSQL never passes on SQLite alone */
	}
	size_t n = 0, usable = 0;
	const s0__meta_backend *b = s0__meta_backends(&n);
	for (size_t i = 0; i < n; i++)
		usable += strcmp(b[i].name, "postgres") || pg_given();
	return (int)usable;
}

static const char *backend_name(int i)
{
	size_t n = 0;
	const s0__meta_backend *b = s0__meta_backends(&n);
	for (size_t k = 0; k < n; k++)
		if ((strcmp(b[k].name, "postgres") || pg_given()) && i-- == 0)
			return b[k].name;
	ck_abort_msg("no backend %d", i);
	return NULL;
}

typedef struct fx {
	char *dir;
	char *loc; /* what the store opens: dir, or a fresh database's URL */
	s0__meta *m;
} fx;

static fx open_fx(int backend)
{
	const char *name = backend_name(backend);
	fx f = {.dir = s0_test_tmpdir("meta")};
	f.loc = strcmp(name, "postgres") ? strdup(f.dir) : s0_test_meta_url(f.dir);
	s0_error *err = NULL;
	int rc = s0__meta_open_backend(name, f.loc, &f.m, &err);
	ck_assert_msg(rc == S0_OK, "open %s: %s", name, err ? s0_error_message(err) : "");
	ck_assert_str_eq(s0__meta_backend_name(f.m), name);
	return f;
}

static void reopen_fx(fx *f)
{
	const char *name = s0__meta_backend_name(f->m);
	char nm[32];
	snprintf(nm, sizeof nm, "%s", name);
	s0__meta_close(f->m);
	ck_assert_int_eq(s0__meta_open_backend(nm, f->loc, &f->m, NULL), S0_OK);
}

static void close_fx(fx *f)
{
	s0__meta_close(f->m);
	s0_test_meta_drop(f->dir);
	s0_test_rmrf(f->dir);
	free(f->dir);
	free(f->loc);
}

static s0__sandbox_row sandbox(const char *id, const char *team, int64_t created)
{
	s0__sandbox_row r = {0};
	snprintf(r.rec.id, sizeof r.rec.id, "%s", id);
	snprintf(r.rec.team_id, sizeof r.rec.team_id, "%s", team);
	snprintf(r.rec.template_id, sizeof r.rec.template_id, "base");
	snprintf(r.head, sizeof r.head, "gen-%s", id);
	r.rec.status = S0_STATUS_RUNNING;
	r.rec.created_at_ms = r.rec.updated_at_ms = created;
	r.rec.config_json = (char *)"{\"k\":1}";
	r.seq = created;
	return r;
}

static s0__op_row op_of(const char *sandbox_id, s0__op_kind kind, s0__op_state state)
{
	s0__op_row o = {0};
	snprintf(o.sandbox_id, sizeof o.sandbox_id, "%s", sandbox_id);
	o.kind = kind;
	o.state = state;
	o.created_at_ms = o.updated_at_ms = 1000;
	return o;
}

static bool has_id(char **ids, size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(ids[i], id))
			return true;
	return false;
}

/* ---- the contract suite (one loop iteration per implementation) ---- */

START_TEST(meta_sandbox_rows)
{
	fx f = open_fx(_i);
	s0__sandbox_row a = sandbox("sb_a", "t1", 100), b = sandbox("sb_b", "t1", 200),
	                c = sandbox("sb_c", "t2", 300);
	b.rec.paused = true;
	b.rec.status = S0_STATUS_PAUSED;
	snprintf(a.mem_image, sizeof a.mem_image, "img-a");
	snprintf(a.mem_image_gen, sizeof a.mem_image_gen, "gen-sb_a");
	ck_assert_int_eq(s0__meta_sandbox_put(f.m, &a, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_sandbox_put(f.m, &b, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_sandbox_put(f.m, &c, NULL), S0_OK);
	reopen_fx(&f); /* durable */

	s0__sandbox_row got = {0};
	ck_assert_int_eq(s0__meta_sandbox_get(f.m, "t1", "sb_a", &got, NULL), S0_OK);
	ck_assert_str_eq(got.rec.config_json, "{\"k\":1}");
	ck_assert_str_eq(got.head, "gen-sb_a");
	ck_assert_str_eq(got.mem_image, "img-a");
	s0__sandbox_rec_clear(&got.rec);
	s0_error *err = NULL;
	ck_assert_int_eq(s0__meta_sandbox_get(f.m, "t2", "sb_a", &got, &err), S0_ENOTFOUND);
	ck_assert_str_eq(s0_error_reason(err), "not_found");
	s0_error_free(err);
	ck_assert_int_eq(s0__meta_sandbox_get(f.m, NULL, "sb_c", &got, NULL), S0_OK); /* any team */
	s0__sandbox_rec_clear(&got.rec);

	s0__list_filter lf = {.status = 0, .paused = -1, .limit = 10};
	s0__sandbox_rec *v = NULL;
	size_t n = 0;
	int64_t count = 0;
	ck_assert_int_eq(s0__meta_sandbox_list(f.m, "t1", &lf, &v, &n, &count, NULL), S0_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(count, 2);
	ck_assert_str_eq(v[0].id, "sb_b"); /* newest first */
	for (size_t i = 0; i < n; i++)
		s0__sandbox_rec_clear(&v[i]);
	free(v);
	lf.paused = 1;
	lf.limit = 1;
	ck_assert_int_eq(s0__meta_sandbox_list(f.m, "t1", &lf, &v, &n, &count, NULL), S0_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(v[0].id, "sb_b");
	s0__sandbox_rec_clear(&v[0]);
	free(v);

	char **ids = NULL;
	ck_assert_int_eq(s0__meta_sandbox_all(f.m, &ids, &n, NULL), S0_OK);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(ids[0], "sb_a"); /* creation order */
	s0__meta_free_ids(ids, n);

	ck_assert_int_eq(s0__meta_sandbox_delete(f.m, "sb_b", NULL), S0_OK);
	ck_assert_int_eq(s0__meta_sandbox_delete(f.m, "sb_b", NULL), S0_OK); /* absent: fine */
	ck_assert_int_eq(s0__meta_sandbox_get(f.m, NULL, "sb_b", &got, NULL), S0_ENOTFOUND);
	close_fx(&f);
}
END_TEST

START_TEST(meta_sandbox_due)
{
	fx f = open_fx(_i);
	s0__sandbox_row soft = sandbox("sb_soft", "t", 1), paused = sandbox("sb_paused", "t", 2),
	                hard = sandbox("sb_hard", "t", 3), later = sandbox("sb_later", "t", 4);
	soft.rec.expires_at_ms = 500;
	paused.rec.expires_at_ms = 500;
	paused.rec.paused = true; /* a paused sandbox's soft TTL is not due */
	hard.rec.hard_expires_at_ms = 500;
	hard.rec.paused = true;
	later.rec.expires_at_ms = 5000;
	const s0__sandbox_row *all[] = {&soft, &paused, &hard, &later};
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(s0__meta_sandbox_put(f.m, all[i], NULL), S0_OK);
	char **ids = NULL;
	size_t n = 0;
	ck_assert_int_eq(s0__meta_sandbox_due(f.m, 1000, &ids, &n, NULL), S0_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(ids[0], "sb_soft");
	ck_assert_str_eq(ids[1], "sb_hard");
	s0__meta_free_ids(ids, n);
	close_fx(&f);
}
END_TEST

START_TEST(meta_operations_by_name)
{
	fx f = open_fx(_i);
	/* every kind and state round-trips through the store */
	for (int k = 0; k < S0__OP_KIND_COUNT; k++) {
		for (int s = 0; s < S0__OPS_STATE_COUNT; s++) {
			char sb[32];
			snprintf(sb, sizeof sb, "sb_%d_%d", k, s);
			s0__op_row o = op_of(sb, (s0__op_kind)k, (s0__op_state)s);
			ck_assert_int_eq(s0__meta_op_insert(f.m, &o, NULL), S0_OK);
			ck_assert_int_gt(o.id, 0);
			s0__op_row got;
			int rc = s0__meta_op_active(f.m, sb, &got, NULL);
			if (s0__op_state_final((s0__op_state)s)) {
				ck_assert_int_eq(rc, S0_ENOTFOUND);
			} else {
				ck_assert_int_eq(rc, S0_OK);
				ck_assert_int_eq(got.kind, k);
				ck_assert_int_eq(got.state, s);
			}
		}
	}
	close_fx(&f);
}
END_TEST

START_TEST(meta_operations_lifecycle)
{
	fx f = open_fx(_i);
	s0__op_row a = op_of("sb_1", S0__OP_PAUSE, S0__OPS_INTENT);
	a.memory = true;
	snprintf(a.runtime_id, sizeof a.runtime_id, "rt_1");
	a.generation = 3;
	s0__op_row b = op_of("sb_2", S0__OP_HARD_DELETE, S0__OPS_INTENT);
	ck_assert_int_eq(s0__meta_op_insert(f.m, &a, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_op_insert(f.m, &b, NULL), S0_OK);
	ck_assert_int_gt(b.id, a.id);

	a.state = S0__OPS_PUBLISHED;
	snprintf(a.new_head, sizeof a.new_head, "gen-new");
	snprintf(a.image, sizeof a.image, "img-new");
	ck_assert_int_eq(s0__meta_op_update(f.m, &a, NULL), S0_OK);
	reopen_fx(&f);

	s0__op_row got;
	ck_assert_int_eq(s0__meta_op_active(f.m, "sb_1", &got, NULL), S0_OK);
	ck_assert_int_eq(got.id, a.id);
	ck_assert_int_eq(got.kind, S0__OP_PAUSE);
	ck_assert_int_eq(got.state, S0__OPS_PUBLISHED);
	ck_assert(got.memory);
	ck_assert_str_eq(got.runtime_id, "rt_1");
	ck_assert_int_eq(got.generation, 3);

	/* a published operation's head and image are GC roots until it ends */
	char **ids = NULL;
	size_t n = 0;
	ck_assert_int_eq(s0__meta_live_generations(f.m, &ids, &n, NULL), S0_OK);
	ck_assert(has_id(ids, n, "gen-new"));
	s0__meta_free_ids(ids, n);
	ck_assert_int_eq(s0__meta_mem_images(f.m, &ids, &n, NULL), S0_OK);
	ck_assert(has_id(ids, n, "img-new"));
	s0__meta_free_ids(ids, n);

	s0__op_row *v = NULL;
	ck_assert_int_eq(s0__meta_op_pending(f.m, &v, &n, NULL), S0_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(v[0].id, a.id); /* oldest first */
	ck_assert_int_eq(v[1].kind, S0__OP_HARD_DELETE);
	free(v);

	a.state = S0__OPS_DONE;
	ck_assert_int_eq(s0__meta_op_update(f.m, &a, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_op_active(f.m, "sb_1", &got, NULL), S0_ENOTFOUND);
	ck_assert_int_eq(s0__meta_live_generations(f.m, &ids, &n, NULL), S0_OK);
	ck_assert(!has_id(ids, n, "gen-new"));
	s0__meta_free_ids(ids, n);

	int64_t c = -1;
	ck_assert_int_eq(s0__meta_op_count(f.m, "sb_1", S0__OP_PAUSE, &c, NULL), S0_OK);
	ck_assert_int_eq(c, 1);
	ck_assert_int_eq(s0__meta_op_count(f.m, "sb_1", S0__OP_TTL_PAUSE, &c, NULL), S0_OK);
	ck_assert_int_eq(c, 0);
	ck_assert_int_eq(s0__meta_latest_time(f.m), 1000);
	close_fx(&f);
}
END_TEST

START_TEST(meta_transactions)
{
	fx f = open_fx(_i);
	s0__sandbox_row a = sandbox("sb_t", "t", 1);
	ck_assert_int_eq(s0__meta_begin(f.m, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_sandbox_put(f.m, &a, NULL), S0_OK);
	s0__op_row o = op_of("sb_t", S0__OP_DELETE, S0__OPS_INTENT);
	ck_assert_int_eq(s0__meta_op_insert(f.m, &o, NULL), S0_OK);
	s0__sandbox_row got = {0};
	ck_assert_int_eq(s0__meta_sandbox_get(f.m, NULL, "sb_t", &got, NULL), S0_OK); /* own writes */
	s0__sandbox_rec_clear(&got.rec);
	s0__meta_rollback(f.m);
	ck_assert_int_eq(s0__meta_sandbox_get(f.m, NULL, "sb_t", &got, NULL), S0_ENOTFOUND);
	ck_assert_int_eq(s0__meta_op_active(f.m, "sb_t", &o, NULL), S0_ENOTFOUND);

	ck_assert_int_eq(s0__meta_begin(f.m, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_sandbox_put(f.m, &a, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_commit(f.m, NULL), S0_OK);
	reopen_fx(&f);
	ck_assert_int_eq(s0__meta_sandbox_get(f.m, NULL, "sb_t", &got, NULL), S0_OK);
	s0__sandbox_rec_clear(&got.rec);
	close_fx(&f);
}
END_TEST

START_TEST(meta_snapshots_templates)
{
	fx f = open_fx(_i);
	s0__snapshot_row s = {0};
	snprintf(s.rec.id, sizeof s.rec.id, "snap_1");
	snprintf(s.rec.sandbox_id, sizeof s.rec.sandbox_id, "sb_1");
	snprintf(s.rec.name, sizeof s.rec.name, "first");
	snprintf(s.team_id, sizeof s.team_id, "t");
	snprintf(s.generation, sizeof s.generation, "gen-snap");
	s.rec.created_at_ms = 10;
	s.rec.expires_at_ms = 100;
	ck_assert_int_eq(s0__meta_snapshot_put(f.m, &s, NULL), S0_OK);
	s0__snapshot_row got;
	ck_assert_int_eq(s0__meta_snapshot_get(f.m, "t", "snap_1", &got, NULL), S0_OK);
	ck_assert_str_eq(got.generation, "gen-snap");
	ck_assert_int_eq(s0__meta_snapshot_get(f.m, "u", "snap_1", &got, NULL), S0_ENOTFOUND);
	s0__snapshot_rec *v = NULL;
	size_t n = 0;
	ck_assert_int_eq(s0__meta_snapshot_list(f.m, "t", "sb_1", &v, &n, NULL), S0_OK);
	ck_assert_uint_eq(n, 1);
	free(v);
	ck_assert_int_eq(s0__meta_snapshot_expire(f.m, 99, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_snapshot_get(f.m, NULL, "snap_1", &got, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_snapshot_expire(f.m, 100, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_snapshot_get(f.m, NULL, "snap_1", &got, NULL), S0_ENOTFOUND);

	s0__template_row t = {0};
	snprintf(t.name, sizeof t.name, "base");
	snprintf(t.generation, sizeof t.generation, "gen-base");
	t.volume_bytes = 1 << 20;
	ck_assert_int_eq(s0__meta_template_put(f.m, &t, NULL), S0_OK);
	s0__template_row tg = {0};
	ck_assert_int_eq(s0__meta_template_get(f.m, "base", &tg, NULL), S0_OK);
	ck_assert_str_eq(tg.ephemeral_mounts_json, "[]");
	ck_assert_int_eq(tg.volume_bytes, 1 << 20);
	s0__template_row_clear(&tg);
	ck_assert_int_eq(s0__meta_template_get(f.m, "nope", &tg, NULL), S0_ENOTFOUND);
	char **ids = NULL;
	ck_assert_int_eq(s0__meta_live_generations(f.m, &ids, &n, NULL), S0_OK);
	ck_assert(has_id(ids, n, "gen-base"));
	s0__meta_free_ids(ids, n);
	close_fx(&f);
}
END_TEST

/* Templates of teams (schema 5): list = public and the team's, delete,
 * how many sandboxes use one. */
START_TEST(meta_team_templates)
{
	fx f = open_fx(_i);
	const char *names[] = {"pub", "a1", "b1"}, *teams[] = {"", "team_a", "team_b"};
	for (int i = 0; i < 3; i++) {
		s0__template_row t = {0};
		snprintf(t.name, sizeof t.name, "%s", names[i]);
		snprintf(t.team_id, sizeof t.team_id, "%s", teams[i]);
		snprintf(t.generation, sizeof t.generation, "gen-%s", names[i]);
		t.spec_json = i == 1 ? (char *)"{\"description\":\"x\"}" : NULL;
		t.created_at_ms = t.updated_at_ms = 10 + i;
		ck_assert_int_eq(s0__meta_template_put(f.m, &t, NULL), S0_OK);
	}
	s0__template_row *v = NULL;
	size_t n = 0;
	ck_assert_int_eq(s0__meta_template_list(f.m, "team_a", &v, &n, NULL), S0_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(v[0].name, "pub");
	ck_assert_str_eq(v[0].spec_json, "{}");
	ck_assert_str_eq(v[1].name, "a1");
	ck_assert_str_eq(v[1].team_id, "team_a");
	ck_assert_str_eq(v[1].spec_json, "{\"description\":\"x\"}");
	ck_assert_int_eq(v[1].created_at_ms, 11);
	for (size_t i = 0; i < n; i++)
		s0__template_row_clear(&v[i]);
	free(v);

	s0__sandbox_row row = {0};
	snprintf(row.rec.id, sizeof row.rec.id, "sb_t");
	snprintf(row.rec.team_id, sizeof row.rec.team_id, "team_a");
	snprintf(row.rec.template_id, sizeof row.rec.template_id, "a1");
	row.rec.config_json = (char *)"{}";
	ck_assert_int_eq(s0__meta_sandbox_put(f.m, &row, NULL), S0_OK);
	int64_t users = -1;
	ck_assert_int_eq(s0__meta_template_users(f.m, "a1", &users, NULL), S0_OK);
	ck_assert_int_eq(users, 1);
	ck_assert_int_eq(s0__meta_template_users(f.m, "b1", &users, NULL), S0_OK);
	ck_assert_int_eq(users, 0);
	ck_assert_int_eq(s0__meta_template_delete(f.m, "b1", NULL), S0_OK);
	ck_assert_int_eq(s0__meta_template_delete(f.m, "b1", NULL), S0_OK); /* absent: fine */
	s0__template_row g;
	ck_assert_int_eq(s0__meta_template_get(f.m, "b1", &g, NULL), S0_ENOTFOUND);
	ck_assert_int_eq(s0__meta_template_list(f.m, "team_b", &v, &n, NULL), S0_OK);
	ck_assert_uint_eq(n, 1);
	s0__template_row_clear(&v[0]);
	free(v);
	close_fx(&f);
}
END_TEST

START_TEST(meta_kv_sessions_forks)
{
	fx f = open_fx(_i);
	char *v = NULL;
	ck_assert_int_eq(s0__meta_kv_get(f.m, "node_uid", &v, NULL), S0_OK);
	ck_assert_ptr_null(v);
	ck_assert_int_eq(s0__meta_kv_put(f.m, "node_uid", "n1", NULL), S0_OK);
	ck_assert_int_eq(s0__meta_kv_put(f.m, "node_uid", "n2", NULL), S0_OK);
	ck_assert_int_eq(s0__meta_kv_get(f.m, "node_uid", &v, NULL), S0_OK);
	ck_assert_str_eq(v, "n2");
	free(v);

	void *blob = NULL;
	size_t len = 0;
	ck_assert_int_eq(s0__meta_sessions_get(f.m, "sb_1", &blob, &len, NULL), S0_ENOTFOUND);
	const char data[] = {1, 0, 2, 0, 3};
	ck_assert_int_eq(s0__meta_sessions_put(f.m, "sb_1", data, sizeof data, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_sessions_get(f.m, "sb_1", &blob, &len, NULL), S0_OK);
	ck_assert_uint_eq(len, sizeof data);
	ck_assert_mem_eq(blob, data, sizeof data);
	free(blob);
	ck_assert_int_eq(s0__meta_sessions_delete(f.m, "sb_1", NULL), S0_OK);
	ck_assert_int_eq(s0__meta_sessions_get(f.m, "sb_1", &blob, &len, NULL), S0_ENOTFOUND);

	char *child = NULL, *ej = NULL;
	ck_assert_int_eq(s0__meta_fork_key_get(f.m, "sb_1", "k", &child, &ej, NULL), S0_ENOTFOUND);
	ck_assert_int_eq(s0__meta_fork_key_put(f.m, "sb_1", "k", "sb_child", NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_fork_key_get(f.m, "sb_1", "k", &child, &ej, NULL), S0_OK);
	ck_assert_str_eq(child, "sb_child");
	ck_assert_ptr_null(ej);
	free(child);
	close_fx(&f);
}
END_TEST

/* Services and their public ids (docs/wire.md "Public routes"): replace,
 * find, a rolled-back put, a taken public id, removal. */
START_TEST(meta_services_routes)
{
	fx f = open_fx(_i);
	char *json = NULL, sb[S0__ID_MAX];
	ck_assert_int_eq(s0__meta_services_get(f.m, "sb_1", &json, NULL), S0_ENOTFOUND);
	ck_assert_int_eq(s0__meta_route_find(f.m, "pubaaa", sb, NULL), S0_ENOTFOUND);
	const char *ids[] = {"pubaaa", "pubbbb"};
	ck_assert_int_eq(s0__meta_begin(f.m, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_services_put(f.m, "sb_1", "[{\"id\":\"a\"}]", ids, 2, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_commit(f.m, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_services_get(f.m, "sb_1", &json, NULL), S0_OK);
	ck_assert_str_eq(json, "[{\"id\":\"a\"}]");
	free(json);
	ck_assert_int_eq(s0__meta_route_find(f.m, "pubbbb", sb, NULL), S0_OK);
	ck_assert_str_eq(sb, "sb_1");
	/* a rolled-back replace leaves the old rows */
	ck_assert_int_eq(s0__meta_begin(f.m, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_services_put(f.m, "sb_1", "[]", NULL, 0, NULL), S0_OK);
	s0__meta_rollback(f.m);
	ck_assert_int_eq(s0__meta_route_find(f.m, "pubaaa", sb, NULL), S0_OK);
	/* another sandbox cannot take a public id */
	s0_error *err = NULL;
	ck_assert_int_eq(s0__meta_begin(f.m, NULL), S0_OK);
	ck_assert_int_lt(s0__meta_services_put(f.m, "sb_2", "[]", ids, 1, &err), 0);
	s0_error_free(err);
	s0__meta_rollback(f.m);
	/* replace with one id, then remove */
	ck_assert_int_eq(s0__meta_begin(f.m, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_services_put(f.m, "sb_1", "[1]", ids + 1, 1, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_commit(f.m, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_route_find(f.m, "pubaaa", sb, NULL), S0_ENOTFOUND);
	ck_assert_int_eq(s0__meta_services_put(f.m, "sb_1", NULL, NULL, 0, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_services_get(f.m, "sb_1", &json, NULL), S0_ENOTFOUND);
	ck_assert_int_eq(s0__meta_route_find(f.m, "pubbbb", sb, NULL), S0_ENOTFOUND);
	close_fx(&f);
}
END_TEST

static s0__apikey_row key_of(fx *f, const char *id, const char *team, const char *secret)
{
	s0__apikey_row k = {0};
	snprintf(k.id, sizeof k.id, "%s", id);
	snprintf(k.name, sizeof k.name, "key %s", id);
	snprintf(k.team_id, sizeof k.team_id, "%s", team);
	ck_assert_int_eq(s0__apikey_hash(f->m, secret, k.hash, NULL), S0_OK);
	k.created_at_ms = 5000;
	return k;
}

START_TEST(meta_teams_and_keys)
{
	fx f = open_fx(_i);
	s0__team_row t = {.created_at_ms = 1};
	snprintf(t.id, sizeof t.id, "team_a");
	snprintf(t.name, sizeof t.name, "Team A");
	ck_assert_int_eq(s0__meta_team_put(f.m, &t, NULL), S0_OK);
	snprintf(t.name, sizeof t.name, "Team A renamed");
	t.created_at_ms = 99;
	ck_assert_int_eq(s0__meta_team_put(f.m, &t, NULL), S0_OK);
	snprintf(t.id, sizeof t.id, "team_b");
	ck_assert_int_eq(s0__meta_team_put(f.m, &t, NULL), S0_OK);
	s0__team_row tg;
	ck_assert_int_eq(s0__meta_team_get(f.m, "team_a", &tg, NULL), S0_OK);
	ck_assert_str_eq(tg.name, "Team A renamed");
	ck_assert_int_eq(tg.created_at_ms, 1); /* kept from the first put */
	s0__team_row *tv = NULL;
	size_t n = 0;
	ck_assert_int_eq(s0__meta_team_list(f.m, &tv, &n, NULL), S0_OK);
	ck_assert_uint_eq(n, 2);
	free(tv);

	/* the hash is stable per store, differs per key, and is 64 hex digits */
	char h1[S0__APIKEY_HASH_HEX], h2[S0__APIKEY_HASH_HEX];
	ck_assert_int_eq(s0__apikey_hash(f.m, "s0k_secret_one", h1, NULL), S0_OK);
	ck_assert_int_eq(s0__apikey_hash(f.m, "s0k_secret_one", h2, NULL), S0_OK);
	ck_assert_str_eq(h1, h2);
	ck_assert_uint_eq(strlen(h1), 64);
	ck_assert_int_eq(s0__apikey_hash(f.m, "s0k_secret_two", h2, NULL), S0_OK);
	ck_assert_str_ne(h1, h2);

	s0__apikey_row k1 = key_of(&f, "key_1", "team_a", "s0k_secret_one");
	s0__apikey_row k2 = key_of(&f, "key_2", "team_b", "s0k_secret_two");
	s0__apikey_row k3 = key_of(&f, "key_3", "team_a", "s0k_secret_three");
	ck_assert_int_eq(s0__meta_apikey_create(f.m, &k1, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_apikey_create(f.m, &k2, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_apikey_create(f.m, &k3, NULL), S0_OK);
	reopen_fx(&f);

	/* the secret persists: the same key hashes the same after a reopen */
	ck_assert_int_eq(s0__apikey_hash(f.m, "s0k_secret_one", h2, NULL), S0_OK);
	ck_assert_str_eq(h1, h2);
	s0__apikey_row got;
	ck_assert_int_eq(s0__meta_apikey_get_by_hash(f.m, h1, &got, NULL), S0_OK);
	ck_assert_str_eq(got.id, "key_1");
	ck_assert_str_eq(got.team_id, "team_a");
	ck_assert_str_eq(got.name, "key key_1");
	ck_assert_int_eq(got.created_at_ms, 5000);
	ck_assert_int_eq(got.revoked_at_ms, 0);
	ck_assert_int_eq(s0__meta_apikey_get(f.m, "key_2", &got, NULL), S0_OK);
	ck_assert_str_eq(got.hash, k2.hash);

	s0__apikey_row *kv = NULL;
	ck_assert_int_eq(s0__meta_apikey_list(f.m, "team_a", &kv, &n, NULL), S0_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(kv[0].id, "key_1"); /* oldest first */
	ck_assert_str_eq(kv[1].id, "key_3");
	free(kv);
	ck_assert_int_eq(s0__meta_apikey_list(f.m, NULL, &kv, &n, NULL), S0_OK);
	ck_assert_uint_eq(n, 3);
	free(kv);

	ck_assert_int_eq(s0__meta_apikey_revoke(f.m, "key_1", 7000, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_apikey_revoke(f.m, "key_1", 8000, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_apikey_get_by_hash(f.m, h1, &got, NULL), S0_OK);
	ck_assert_int_eq(got.revoked_at_ms, 7000); /* the first revocation stands */
	ck_assert_int_eq(s0__meta_apikey_get(f.m, "key_3", &got, NULL), S0_OK);
	ck_assert_int_eq(got.revoked_at_ms, 0);
	close_fx(&f);
}
END_TEST

/* Expect code and reason from a call, freeing the error. */
#define EXPECT(call, code, reason)                                                      \
	do {                                                                            \
		s0_error *e_ = NULL;                                                    \
		s0_error **err = &e_;                                                   \
		ck_assert_int_eq((call), (code));                                       \
		ck_assert_ptr_nonnull(e_);                                              \
		ck_assert_str_eq(s0_error_reason(e_), (reason));                        \
		s0_error_free(e_);                                                      \
	} while (0)

START_TEST(meta_keys_bad_input)
{
	fx f = open_fx(_i);
	s0__team_row t = {0};
	EXPECT(s0__meta_team_put(f.m, &t, err), S0_EINVAL, "bad_request"); /* empty id */
	snprintf(t.id, sizeof t.id, "team_a");
	EXPECT(s0__meta_team_put(f.m, &t, err), S0_EINVAL, "bad_request"); /* empty name */
	snprintf(t.name, sizeof t.name, "A");
	ck_assert_int_eq(s0__meta_team_put(f.m, &t, NULL), S0_OK);
	EXPECT(s0__meta_team_get(f.m, "nope", &t, err), S0_ENOTFOUND, "not_found");

	s0__apikey_row k = key_of(&f, "key_1", "team_a", "s0k_x");
	s0__apikey_row bad = k;
	bad.id[0] = '\0';
	EXPECT(s0__meta_apikey_create(f.m, &bad, err), S0_EINVAL, "bad_request");
	bad = k;
	bad.name[0] = '\0';
	EXPECT(s0__meta_apikey_create(f.m, &bad, err), S0_EINVAL, "bad_request");
	bad = k;
	snprintf(bad.hash, sizeof bad.hash, "not-a-hash");
	EXPECT(s0__meta_apikey_create(f.m, &bad, err), S0_EINVAL, "bad_request");
	bad = k;
	bad.hash[0] = 'G'; /* upper case / non-hex */
	EXPECT(s0__meta_apikey_create(f.m, &bad, err), S0_EINVAL, "bad_request");
	bad = k;
	bad.revoked_at_ms = 1;
	EXPECT(s0__meta_apikey_create(f.m, &bad, err), S0_EINVAL, "bad_request");
	bad = k;
	snprintf(bad.team_id, sizeof bad.team_id, "team_missing");
	EXPECT(s0__meta_apikey_create(f.m, &bad, err), S0_ENOTFOUND, "team_not_found");

	ck_assert_int_eq(s0__meta_apikey_create(f.m, &k, NULL), S0_OK);
	EXPECT(s0__meta_apikey_create(f.m, &k, err), S0_ECONFLICT, "key_exists"); /* same id */
	bad = k;
	snprintf(bad.id, sizeof bad.id, "key_2"); /* same hash, other id */
	EXPECT(s0__meta_apikey_create(f.m, &bad, err), S0_ECONFLICT, "key_exists");
	EXPECT(s0__meta_apikey_get(f.m, "key_9", &bad, err), S0_ENOTFOUND, "not_found");
	EXPECT(s0__meta_apikey_get_by_hash(f.m, "00", &bad, err), S0_ENOTFOUND, "not_found");
	EXPECT(s0__meta_apikey_revoke(f.m, "key_9", 1, err), S0_ENOTFOUND, "not_found");
	EXPECT(s0__meta_apikey_revoke(f.m, "key_1", 0, err), S0_EINVAL, "bad_request");
	char h[S0__APIKEY_HASH_HEX];
	EXPECT(s0__apikey_hash(f.m, "", h, err), S0_EINVAL, "bad_request");

	/* operations: outside the enums, without a sandbox, or never stored */
	s0__op_row o = op_of("sb", (s0__op_kind)S0__OP_KIND_COUNT, S0__OPS_INTENT);
	EXPECT(s0__meta_op_insert(f.m, &o, err), S0_EINVAL, "bad_request");
	o = op_of("sb", S0__OP_PAUSE, (s0__op_state)-1);
	EXPECT(s0__meta_op_insert(f.m, &o, err), S0_EINVAL, "bad_request");
	o = op_of("", S0__OP_PAUSE, S0__OPS_INTENT);
	EXPECT(s0__meta_op_insert(f.m, &o, err), S0_EINVAL, "bad_request");
	o = op_of("sb", S0__OP_PAUSE, S0__OPS_INTENT);
	EXPECT(s0__meta_op_update(f.m, &o, err), S0_EINVAL, "bad_request"); /* id 0 */
	close_fx(&f);
}
END_TEST

START_TEST(meta_names_table)
{
	/* one table: every enum value has a distinct name that parses back */
	for (int k = 0; k < S0__OP_KIND_COUNT; k++) {
		s0__op_kind back;
		ck_assert_int_eq(s0__op_kind_parse(s0__op_kind_name((s0__op_kind)k), &back, NULL), S0_OK);
		ck_assert_int_eq(back, k);
	}
	for (int s = 0; s < S0__OPS_STATE_COUNT; s++) {
		s0__op_state back;
		ck_assert_int_eq(s0__op_state_parse(s0__op_state_name((s0__op_state)s), &back, NULL),
		                 S0_OK);
		ck_assert_int_eq(back, s);
	}
	/* the stored spellings (data directories of earlier versions use them) */
	ck_assert_str_eq(s0__op_kind_name(S0__OP_TTL_PAUSE), "ttl_pause");
	ck_assert_str_eq(s0__op_kind_name(S0__OP_HARD_DELETE), "hard_delete");
	ck_assert_str_eq(s0__op_kind_name(S0__OP_RESUME_FALLBACK), "resume_fallback");
	ck_assert_str_eq(s0__op_state_name(S0__OPS_CAPTURE_FAILED), "capture_failed");
	ck_assert_str_eq(s0__op_state_name(S0__OPS_RELEASED), "released");
	ck_assert_str_eq(s0__op_kind_name((s0__op_kind)99), "?");
	s0__op_kind k = S0__OP_PAUSE;
	s0_error *err = NULL;
	ck_assert_int_eq(s0__op_kind_parse("Pause", &k, &err), S0_EINVAL);
	ck_assert_str_eq(s0_error_reason(err), "unknown_op_kind");
	ck_assert_ptr_nonnull(strstr(s0_error_message(err), "\"Pause\""));
	s0_error_free(err);
	ck_assert_int_eq(k, S0__OP_PAUSE); /* untouched */
	ck_assert_int_eq(s0__op_kind_parse(NULL, &k, NULL), S0_EINVAL);
	s0__op_state st;
	ck_assert_int_eq(s0__op_state_parse("", &st, NULL), S0_EINVAL);
}
END_TEST

START_TEST(meta_unknown_backend)
{
	char *dir = s0_test_tmpdir("meta");
	s0__meta *m = NULL;
	s0_error *err = NULL;
	ck_assert_int_eq(s0__meta_open_backend("oracle", dir, &m, &err), S0_EINVAL);
	ck_assert_str_eq(s0_error_reason(err), "unknown_meta_backend");
	s0_error_free(err);
	ck_assert_ptr_null(m);
	size_t n = 0;
	const s0__meta_backend *b = s0__meta_backends(&n);
	ck_assert_uint_ge(n, 1);
	ck_assert_str_eq(b[0].name, "sqlite"); /* the default first */
	ck_assert_int_eq(s0__meta_open(dir, &m, NULL), S0_OK);
	ck_assert_str_eq(s0__meta_backend_name(m), "sqlite");
	s0__meta_close(m);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

/* Node leases and generation owners (meta.h "nodes and fencing"): epochs
 * fence earlier holders, a generation is one node's, another node takes
 * only a newer one and only after the owner's lease lapsed. */
static int claim(fx *f, const char *sb, int64_t gen, const char *node, int64_t epoch, int64_t now,
                 const char *want_reason)
{
	s0_error *err = NULL;
	int rc = s0__meta_gen_claim(f->m, sb, gen, node, epoch, now, &err);
	if (want_reason)
		ck_assert_msg(err && !strcmp(s0_error_reason(err), want_reason), "%s gen %lld by %s: %s",
		              sb, (long long)gen, node, err ? s0_error_reason(err) : "ok");
	s0_error_free(err);
	return rc;
}

START_TEST(meta_nodes_fence_generations)
{
	fx f = open_fx(_i);
	int64_t a = 0, b = 0, old = 0;
	ck_assert_int_eq(s0__meta_node_lease(f.m, "node-a", 1000, 500, &a, NULL), S0_OK);
	ck_assert_int_eq(a, 1);
	ck_assert_int_eq(s0__meta_node_lease(f.m, "node-b", 1000, 500, &b, NULL), S0_OK);
	ck_assert_int_eq(b, 1);
	ck_assert_int_eq(s0__meta_node_lease(f.m, "node-a", 1400, 500, &a, NULL), S0_OK); /* to 1900 */
	ck_assert_int_eq(a, 1);

	ck_assert_int_eq(claim(&f, "sb_1", 1, "node-a", 1, 1450, NULL), S0_OK);
	ck_assert_int_eq(claim(&f, "sb_1", 1, "node-a", 1, 1450, NULL), S0_OK); /* its own already */
	ck_assert_int_eq(claim(&f, "sb_1", 1, "node-b", 1, 1450, "generation_owned"), S0_ECONFLICT);
	ck_assert_int_eq(claim(&f, "sb_1", 2, "node-b", 1, 1450, "generation_owned"), S0_ECONFLICT);
	ck_assert_int_eq(claim(&f, "sb_1", 2, "node-a", 1, 1450, NULL), S0_OK); /* its next one */

	/* b's lease lapsed at 1500: no claim, no renewal; acquiring again bumps the epoch */
	ck_assert_int_eq(claim(&f, "sb_2", 1, "node-b", 1, 1600, "node_lease_lost"), S0_ECONFLICT);
	s0_error *err = NULL;
	ck_assert_int_eq(s0__meta_node_lease(f.m, "node-b", 1600, 500, &b, &err), S0_ECONFLICT);
	ck_assert_str_eq(s0_error_reason(err), "node_lease_lost");
	s0_error_free(err);
	b = 0;
	ck_assert_int_eq(s0__meta_node_lease(f.m, "node-b", 1600, 500, &b, NULL), S0_OK); /* to 2100 */
	ck_assert_int_eq(b, 2);

	/* a's lapsed at 1900: b takes a newer generation, never a's own */
	ck_assert_int_eq(claim(&f, "sb_1", 2, "node-b", 2, 2000, "generation_owned"), S0_ECONFLICT);
	ck_assert_int_eq(claim(&f, "sb_1", 3, "node-b", 2, 2000, NULL), S0_OK);
	old = a;
	ck_assert_int_eq(s0__meta_node_lease(f.m, "node-a", 2000, 500, &old, NULL), S0_ECONFLICT);
	a = 0; /* a restarts: a new epoch, and b's lease is live */
	ck_assert_int_eq(s0__meta_node_lease(f.m, "node-a", 2000, 500, &a, NULL), S0_OK);
	ck_assert_int_eq(a, 2);
	ck_assert_int_eq(claim(&f, "sb_1", 4, "node-a", 2, 2050, "generation_owned"), S0_ECONFLICT);
	ck_assert_int_eq(claim(&f, "sb_1", 4, "node-a", 1, 2050, "node_lease_lost"), S0_ECONFLICT);
	/* a restarted node takes back the generation its fenced epoch claimed */
	ck_assert_int_eq(claim(&f, "sb_3", 1, "node-a", 2, 2050, NULL), S0_OK);
	a = 0;
	ck_assert_int_eq(s0__meta_node_lease(f.m, "node-a", 2060, 500, &a, NULL), S0_OK);
	ck_assert_int_eq(a, 3);
	ck_assert_int_eq(claim(&f, "sb_3", 1, "node-a", 3, 2070, NULL), S0_OK);
	ck_assert_int_eq(claim(&f, "sb_3", 1, "node-a", 2, 2070, "node_lease_lost"), S0_ECONFLICT);

	reopen_fx(&f); /* durable */
	s0__gen_owner_row o;
	ck_assert_int_eq(s0__meta_gen_owner(f.m, "sb_1", &o, NULL), S0_OK);
	ck_assert_str_eq(o.node_id, "node-b");
	ck_assert_int_eq(o.generation, 3);
	ck_assert_int_eq(o.epoch, 2);
	ck_assert_int_eq(s0__meta_gen_owner(f.m, "sb_none", &o, NULL), S0_ENOTFOUND);

	/* bad input */
	int64_t e = 0;
	ck_assert_int_eq(s0__meta_node_lease(f.m, "node-a", 2000, 0, &e, NULL), S0_EINVAL);
	ck_assert_int_eq(s0__meta_node_lease(f.m, "", 2000, 10, &e, NULL), S0_EINVAL);
	ck_assert_int_eq(claim(&f, "sb_1", 0, "node-a", 2, 2050, "bad_request"), S0_EINVAL);
	ck_assert_int_eq(claim(&f, "sb_1", 5, "node-a", 0, 2050, "bad_request"), S0_EINVAL);
	close_fx(&f);
}
END_TEST

/* Runs the fencing check inside a transaction, as the engine does; the
 * reason of a refusal must be want_reason. */
static int gen_check(fx *f, const char *sb, const char *node, int64_t epoch, int64_t gen,
                     const char *want_reason)
{
	s0_error *err = NULL;
	ck_assert_int_eq(s0__meta_begin(f->m, NULL), S0_OK);
	int rc = s0__meta_gen_check(f->m, sb, node, epoch, gen, &err);
	s0__meta_rollback(f->m);
	if (want_reason)
		ck_assert_msg(err && !strcmp(s0_error_reason(err), want_reason), "%s by %s: %s", sb,
		              node, err ? s0_error_reason(err) : "ok");
	else
		ck_assert_msg(rc == S0_OK, "%s by %s: %s", sb, node, err ? s0_error_message(err) : "");
	s0_error_free(err);
	return rc;
}

/* NOD-14: a transaction that changes a sandbox passes the fencing check
 * only while the node's epoch is current and nobody else took the
 * sandbox's generation (docs/scaling.md "Leases"). */
START_TEST(meta_gen_check_fences_stale_owners)
{
	fx f = open_fx(_i);
	int64_t a = 0, b = 0;
	ck_assert_int_eq(s0__meta_node_lease(f.m, "node-a", 1000, 1000, &a, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_node_lease(f.m, "node-b", 1000, 5000, &b, NULL), S0_OK);
	gen_check(&f, "sb_new", "node-a", a, 0, NULL); /* never claimed */
	ck_assert_int_eq(claim(&f, "sb_1", 1, "node-a", a, 1100, NULL), S0_OK);
	/* (no time is involved: a lapsed lease that nobody took over still
	 * commits — a takeover claims first, and the two serialise) */
	gen_check(&f, "sb_1", "node-a", a, 1, NULL);
	ck_assert_int_eq(gen_check(&f, "sb_1", "node-b", b, 1, "generation_owned"), S0_ECONFLICT);
	/* b takes it over once a's lease lapsed: a's transactions are refused */
	ck_assert_int_eq(claim(&f, "sb_1", 2, "node-b", b, 2500, NULL), S0_OK);
	ck_assert_int_eq(gen_check(&f, "sb_1", "node-a", a, 1, "generation_owned"), S0_ECONFLICT);
	gen_check(&f, "sb_1", "node-b", b, 2, NULL);
	/* b finished a pause (released): a's view of generation 1 is stale,
	 * anyone acting on generation 2 may go on */
	ck_assert_int_eq(s0__meta_gen_release(f.m, "sb_1", "node-b", NULL), S0_OK);
	ck_assert_int_eq(gen_check(&f, "sb_1", "node-a", a, 1, "generation_owned"), S0_ECONFLICT);
	gen_check(&f, "sb_1", "node-a", a, 2, NULL);
	/* a's epoch superseded by a later acquisition: node_lease_lost */
	int64_t a2 = 0;
	ck_assert_int_eq(s0__meta_node_lease(f.m, "node-a", 3000, 1000, &a2, NULL), S0_OK);
	ck_assert_int_eq(gen_check(&f, "sb_1", "node-a", a, 2, "node_lease_lost"), S0_ECONFLICT);
	gen_check(&f, "sb_1", "node-a", a2, 2, NULL);
	ck_assert_int_eq(gen_check(&f, "sb_1", "node-z", 1, 2, "node_lease_lost"), S0_ECONFLICT);
	/* bad input */
	ck_assert_int_eq(s0__meta_gen_check(f.m, "sb_1", "node-a", 0, 1, NULL), S0_EINVAL);
	ck_assert_int_eq(s0__meta_gen_check(f.m, "", "node-a", 1, 1, NULL), S0_EINVAL);
	ck_assert_int_eq(s0__meta_gen_check(f.m, "sb_1", "node-a", 1, -1, NULL), S0_EINVAL);
	close_fx(&f);
}
END_TEST

/* NOD-01, NOD-04: a released generation is anyone's to claim; a lapsed
 * holder's sandboxes are listed for takeover (docs/scaling.md "Failover"). */
START_TEST(meta_gen_release_and_orphans)
{
	fx f = open_fx(_i);
	int64_t a = 0, b = 0;
	ck_assert_int_eq(s0__meta_node_lease(f.m, "node-a", 1000, 1000, &a, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_node_lease(f.m, "node-b", 1000, 5000, &b, NULL), S0_OK);
	ck_assert_int_eq(claim(&f, "sb_1", 1, "node-a", a, 1100, NULL), S0_OK);
	ck_assert_int_eq(claim(&f, "sb_2", 1, "node-a", a, 1100, NULL), S0_OK);
	s0__gen_owner_row o;
	ck_assert_int_eq(s0__meta_gen_owner(f.m, "sb_1", &o, NULL), S0_OK);
	ck_assert_int_eq(o.lease_until, 2000); /* the holder's live lease */
	/* a live holder keeps it; released (by its node only), b claims it */
	ck_assert_int_eq(claim(&f, "sb_1", 2, "node-b", b, 1200, "generation_owned"), S0_ECONFLICT);
	ck_assert_int_eq(s0__meta_gen_release(f.m, "sb_1", "node-b", NULL), S0_OK); /* not b's */
	ck_assert_int_eq(claim(&f, "sb_1", 2, "node-b", b, 1200, "generation_owned"), S0_ECONFLICT);
	ck_assert_int_eq(s0__meta_gen_release(f.m, "sb_1", "node-a", NULL), S0_OK);
	ck_assert_int_eq(s0__meta_gen_owner(f.m, "sb_1", &o, NULL), S0_OK);
	ck_assert_str_eq(o.node_id, "");
	ck_assert_int_eq(o.generation, 1);
	ck_assert_int_eq(o.lease_until, 0);
	ck_assert_int_eq(claim(&f, "sb_1", 1, "node-b", b, 1200, NULL), S0_OK); /* never ran */
	ck_assert_int_eq(claim(&f, "sb_1", 2, "node-b", b, 1200, NULL), S0_OK);
	/* a lapses at 2000: its sb_2 is an orphan, b's sb_1 is not */
	char **ids = NULL;
	size_t n = 9;
	ck_assert_int_eq(s0__meta_gen_orphans(f.m, 1500, &ids, &n, NULL), S0_OK);
	ck_assert_uint_eq(n, 0);
	s0__meta_free_ids(ids, n);
	ck_assert_int_eq(s0__meta_gen_orphans(f.m, 2500, &ids, &n, NULL), S0_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(ids[0], "sb_2");
	s0__meta_free_ids(ids, n);
	ck_assert_int_eq(s0__meta_gen_owner(f.m, "sb_2", &o, NULL), S0_OK);
	ck_assert_int_eq(o.lease_until, 2000); /* lapsed: at or before now */
	ck_assert_int_eq(claim(&f, "sb_2", 2, "node-b", b, 2500, NULL), S0_OK); /* takeover */
	ck_assert_int_eq(s0__meta_gen_orphans(f.m, 2500, &ids, &n, NULL), S0_OK);
	ck_assert_uint_eq(n, 0);
	s0__meta_free_ids(ids, n);
	/* b restarts (a new epoch): its earlier claims are its own to recover,
	 * never orphans; once its lease lapses they all are */
	ck_assert_int_eq(claim(&f, "sb_3", 1, "node-b", b, 2500, NULL), S0_OK);
	b = 0;
	ck_assert_int_eq(s0__meta_node_lease(f.m, "node-b", 2600, 5000, &b, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_gen_owner(f.m, "sb_3", &o, NULL), S0_OK);
	ck_assert_int_eq(o.lease_until, 7600);
	ck_assert_int_eq(s0__meta_gen_orphans(f.m, 2600, &ids, &n, NULL), S0_OK);
	ck_assert_uint_eq(n, 0);
	s0__meta_free_ids(ids, n);
	ck_assert_int_eq(s0__meta_gen_orphans(f.m, 7600, &ids, &n, NULL), S0_OK);
	ck_assert_uint_eq(n, 3);
	s0__meta_free_ids(ids, n);
	ck_assert_int_eq(s0__meta_gen_release(f.m, "", "node-a", NULL), S0_EINVAL);
	ck_assert_int_eq(s0__meta_gen_orphans(f.m, -1, &ids, &n, NULL), S0_EINVAL);
	close_fx(&f);
}
END_TEST

/* A sandbox's delete takes its generation owner with it, atomically and in
 * the caller's transaction: the table and the failover scan stay as large
 * as the set of live sandboxes. */
START_TEST(meta_gen_owner_goes_with_its_sandbox)
{
	fx f = open_fx(_i);
	int64_t a = 0;
	ck_assert_int_eq(s0__meta_node_lease(f.m, "node-a", 1000, 1000, &a, NULL), S0_OK);
	s0__sandbox_row r1 = sandbox("sb_1", "t", 1), r2 = sandbox("sb_2", "t", 2);
	ck_assert_int_eq(s0__meta_sandbox_put(f.m, &r1, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_sandbox_put(f.m, &r2, NULL), S0_OK);
	ck_assert_int_eq(claim(&f, "sb_1", 1, "node-a", a, 1100, NULL), S0_OK);
	ck_assert_int_eq(claim(&f, "sb_2", 1, "node-a", a, 1100, NULL), S0_OK);
	s0__gen_owner_row o;
	s0__sandbox_row got = {0};
	/* rolled back: both rows stay */
	ck_assert_int_eq(s0__meta_begin(f.m, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_sandbox_delete(f.m, "sb_1", NULL), S0_OK);
	ck_assert_int_eq(s0__meta_gen_owner(f.m, "sb_1", &o, NULL), S0_ENOTFOUND); /* own writes */
	s0__meta_rollback(f.m);
	ck_assert_int_eq(s0__meta_gen_owner(f.m, "sb_1", &o, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_sandbox_get(f.m, NULL, "sb_1", &got, NULL), S0_OK);
	s0__sandbox_rec_clear(&got.rec);
	/* committed: both go, the other sandbox's stay */
	ck_assert_int_eq(s0__meta_begin(f.m, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_sandbox_delete(f.m, "sb_1", NULL), S0_OK);
	ck_assert_int_eq(s0__meta_commit(f.m, NULL), S0_OK);
	reopen_fx(&f);
	ck_assert_int_eq(s0__meta_gen_owner(f.m, "sb_1", &o, NULL), S0_ENOTFOUND);
	ck_assert_int_eq(s0__meta_sandbox_get(f.m, NULL, "sb_1", &got, NULL), S0_ENOTFOUND);
	ck_assert_int_eq(s0__meta_gen_owner(f.m, "sb_2", &o, NULL), S0_OK);
	/* a's lease lapsed: only the live sandbox is listed for takeover */
	char **ids = NULL;
	size_t n = 0;
	ck_assert_int_eq(s0__meta_gen_orphans(f.m, 2500, &ids, &n, NULL), S0_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(ids[0], "sb_2");
	s0__meta_free_ids(ids, n);
	/* no owner row (never started), or no sandbox at all: still S0_OK */
	s0__sandbox_row r3 = sandbox("sb_3", "t", 3);
	ck_assert_int_eq(s0__meta_sandbox_put(f.m, &r3, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_sandbox_delete(f.m, "sb_3", NULL), S0_OK);
	ck_assert_int_eq(s0__meta_sandbox_delete(f.m, "sb_none", NULL), S0_OK);
	close_fx(&f);
}
END_TEST

/* ---- the webhook outbox of each implementation (outbox.h) ---- */

static void append_ev(s0__outbox *o, const char *sb, const char *event, int64_t now)
{
	s0__outbox_event ev = {.sandbox_id = (char *)sb, .event = (char *)event,
	                       .url = (char *)"http://127.0.0.1:1/hook", .secret = (char *)"k",
	                       .body = (char *)"{}"};
	ck_assert_int_eq(s0__outbox_append(o, &ev, now, NULL), S0_OK);
}

static void count_events(const s0__outbox_event *ev, void *ud)
{
	int *n = ud;
	ck_assert_ptr_nonnull(ev->sandbox_id);
	(*n)++;
}

static void last_capture(const char *sandbox_id, int64_t tick, void *ud)
{
	ck_assert_str_eq(sandbox_id, "sb_1");
	*(int64_t *)ud = tick;
}

START_TEST(meta_outbox)
{
	char *dir = s0_test_tmpdir("outbox");
	s0__outbox *o = NULL;
	ck_assert_int_eq(s0__outbox_open(backend_name(_i), dir, &o, NULL), S0_OK);
	append_ev(o, "sb_1", "sandbox.paused", 10);
	append_ev(o, "sb_2", "sandbox.pausing", 20);
	append_ev(o, "sb_1", "sandbox.resumed", 30);

	/* oldest first; a failed attempt goes behind events with fewer */
	s0__outbox_event ev;
	ck_assert_int_eq(s0__outbox_next(o, &ev, NULL), 1);
	ck_assert_str_eq(ev.event, "sandbox.paused");
	ck_assert_str_eq(ev.url, "http://127.0.0.1:1/hook");
	int64_t first = ev.seq;
	s0__outbox_event_clear(&ev);
	ck_assert_int_eq(s0__outbox_attempted(o, first, false, 0, NULL), S0_OK);
	ck_assert_int_eq(s0__outbox_next(o, &ev, NULL), 1);
	ck_assert_str_eq(ev.event, "sandbox.pausing");
	ck_assert_int_eq(s0__outbox_attempted(o, ev.seq, true, 7, NULL), S0_OK);
	s0__outbox_event_clear(&ev);

	int64_t n = -1;
	ck_assert_int_eq(s0__outbox_count(o, "sb_1", false, &n, NULL), S0_OK);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(s0__outbox_count(o, "sb_2", false, &n, NULL), S0_OK);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(s0__outbox_count(o, NULL, true, &n, NULL), S0_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(s0__outbox_capture_put(o, "sb_1", 8, NULL), S0_OK);
	s0__outbox_close(o);

	/* durable: everything is there after a reopen */
	ck_assert_int_eq(s0__outbox_open(backend_name(_i), dir, &o, NULL), S0_OK);
	int64_t at = 0, ct = 0;
	ck_assert_int_eq(s0__outbox_max_ticks(o, &at, &ct, NULL), S0_OK);
	ck_assert_int_eq(at, 7);
	ck_assert_int_eq(ct, 8);
	int events = 0;
	ck_assert_int_eq(s0__outbox_each_event(o, count_events, &events, NULL), S0_OK);
	ck_assert_int_eq(events, 3);
	int64_t tick = 0;
	ck_assert_int_eq(s0__outbox_each_capture(o, last_capture, &tick, NULL), S0_OK);
	ck_assert_int_eq(tick, 8);
	ck_assert_int_eq(s0__outbox_next(o, &ev, NULL), 1);
	ck_assert_str_eq(ev.event, "sandbox.resumed"); /* 0 attempts before 1 */
	s0__outbox_event_clear(&ev);
	s0_error *err = NULL;
	ck_assert_int_eq(s0__outbox_append(o, &(s0__outbox_event){0}, 1, &err), S0_EINVAL);
	ck_assert_str_eq(s0_error_reason(err), "bad_request");
	s0_error_free(err);
	s0__outbox_close(o);

	/* in memory: nothing survives */
	ck_assert_int_eq(s0__outbox_open(backend_name(_i), NULL, &o, NULL), S0_OK);
	append_ev(o, "sb_1", "sandbox.paused", 10);
	s0__outbox_close(o);
	ck_assert_int_eq(s0__outbox_open(backend_name(_i), NULL, &o, NULL), S0_OK);
	ck_assert_int_eq(s0__outbox_next(o, &ev, NULL), 0);
	s0__outbox_close(o);
	err = NULL;
	ck_assert_int_eq(s0__outbox_open("oracle", dir, &o, &err), S0_EINVAL);
	ck_assert_str_eq(s0_error_reason(err), "unknown_meta_backend");
	s0_error_free(err);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

/* ---- SQLite specifics: the previous schema, unreadable rows ---- */

/* Schema version 3 exactly as the previous release wrote it (frozen here
 * so a change to an old migration fails this test), with rows as that
 * release stored them. */
static const char v3_schema[] =
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
	"CREATE TABLE kv(k TEXT PRIMARY KEY, v TEXT NOT NULL);"
	"ALTER TABLE sandboxes ADD COLUMN mem_image TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE sandboxes ADD COLUMN mem_image_gen TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE operations ADD COLUMN image TEXT NOT NULL DEFAULT '';"
	"CREATE TABLE sessions(sandbox_id TEXT PRIMARY KEY, blob BLOB NOT NULL);"
	"PRAGMA user_version=3;";

static const char v3_rows[] =
	"INSERT INTO sandboxes VALUES('sb_old','team_a','base',3,1,1,'',4,'gen-head','{}',300,0,"
	" 1000,2000,1000,0,0,'','img-base',1,'img-mem','gen-head');"
	"INSERT INTO operations(sandbox_id,kind,state,memory,runtime_id,generation,new_head,"
	" created_at,updated_at,image) VALUES"
	" ('sb_old','ttl_pause','published',0,'rt_9',4,'gen-new',1500,2500,''),"
	" ('sb_old','pause','done',1,'rt_8',3,'gen-head',900,950,'img-mem');"
	"INSERT INTO kv VALUES('node_uid','node-old');"
	"INSERT INTO sessions VALUES('sb_old', x'0102');"
	"INSERT INTO templates VALUES('base','gen-base','[]',1024,'img-base');";

/* Run SQL on <dir>/meta.db with SQLite directly (what another writer left). */
static void raw_sql(const char *dir, const char *sql)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/meta.db", dir);
	sqlite3 *db = NULL;
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	char *msg = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
	ck_assert_msg(rc == SQLITE_OK, "raw sql: %s", msg ? msg : "");
	sqlite3_close(db);
}

START_TEST(sqlite_migrates_version_3)
{
	char *dir = s0_test_tmpdir("meta");
	raw_sql(dir, v3_schema);
	raw_sql(dir, v3_rows);
	s0__meta *m = NULL;
	s0_error *err = NULL;
	ck_assert_msg(s0__meta_open(dir, &m, &err) == S0_OK, "%s", err ? s0_error_message(err) : "");
	ck_assert_int_eq(s0__meta_schema_version(m), 9);

	/* a template of before schema 5 is public, with an empty spec */
	s0__template_row tpl;
	ck_assert_int_eq(s0__meta_template_get(m, "base", &tpl, NULL), S0_OK);
	ck_assert_str_eq(tpl.team_id, "");
	ck_assert_str_eq(tpl.spec_json, "{}");
	ck_assert_str_eq(tpl.generation, "gen-base");
	s0__template_row_clear(&tpl);

	/* the old rows read as before, operation names included */
	s0__sandbox_row row = {0};
	ck_assert_int_eq(s0__meta_sandbox_get(m, "team_a", "sb_old", &row, NULL), S0_OK);
	ck_assert_str_eq(row.head, "gen-head");
	ck_assert_str_eq(row.mem_image, "img-mem");
	ck_assert(row.rec.paused);
	s0__sandbox_rec_clear(&row.rec);
	s0__op_row op;
	ck_assert_int_eq(s0__meta_op_active(m, "sb_old", &op, NULL), S0_OK);
	ck_assert_int_eq(op.kind, S0__OP_TTL_PAUSE);
	ck_assert_int_eq(op.state, S0__OPS_PUBLISHED);
	ck_assert_str_eq(op.new_head, "gen-new");
	int64_t c = 0;
	ck_assert_int_eq(s0__meta_op_count(m, "sb_old", S0__OP_PAUSE, &c, NULL), S0_OK);
	ck_assert_int_eq(c, 1);
	char *v = NULL;
	ck_assert_int_eq(s0__meta_kv_get(m, "node_uid", &v, NULL), S0_OK);
	ck_assert_str_eq(v, "node-old");
	free(v);
	void *blob = NULL;
	size_t len = 0;
	ck_assert_int_eq(s0__meta_sessions_get(m, "sb_old", &blob, &len, NULL), S0_OK);
	ck_assert_uint_eq(len, 2);
	free(blob);
	ck_assert_int_eq(s0__meta_latest_time(m), 2500);

	/* and the new tables work */
	s0__team_row t = {.created_at_ms = 1};
	snprintf(t.id, sizeof t.id, "team_a");
	snprintf(t.name, sizeof t.name, "A");
	ck_assert_int_eq(s0__meta_team_put(m, &t, NULL), S0_OK);
	s0__apikey_row k = {.created_at_ms = 2};
	snprintf(k.id, sizeof k.id, "key_1");
	snprintf(k.name, sizeof k.name, "ci");
	snprintf(k.team_id, sizeof k.team_id, "team_a");
	ck_assert_int_eq(s0__apikey_hash(m, "s0k_abc", k.hash, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_apikey_create(m, &k, NULL), S0_OK);
	s0__meta_close(m);

	/* reopening a migrated store migrates nothing and keeps everything */
	ck_assert_int_eq(s0__meta_open(dir, &m, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_schema_version(m), 9);
	ck_assert_int_eq(s0__meta_apikey_get(m, "key_1", &k, NULL), S0_OK);
	s0__meta_close(m);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

/* Migration 9: the generation owners finished deletes left go; a row whose
 * sandbox is not written yet (a start in progress) and live sandboxes'
 * rows stay. */
START_TEST(sqlite_migration_9_drops_deleted_sandboxes_owners)
{
	char *dir = s0_test_tmpdir("meta");
	s0__meta *m = NULL;
	ck_assert_int_eq(s0__meta_open(dir, &m, NULL), S0_OK);
	s0__meta_close(m);
	/* what schema 8 left: sb_gone deleted (its delete done), sb_live
	 * running, sb_new claimed before its row, sb_old's delete failed */
	raw_sql(dir,
	        "INSERT INTO sandboxes VALUES('sb_live','t','base',2,0,1,'rt_1',1,'g','{}',0,0,"
	        " 1,1,1,0,0,'','img',1,'','');"
	        "INSERT INTO operations(sandbox_id,kind,state,memory,runtime_id,generation,"
	        " new_head,created_at,updated_at,image) VALUES"
	        " ('sb_gone','delete','done',0,'rt_0',1,'',1,2,''),"
	        " ('sb_ttl','hard_delete','done',0,'rt_2',1,'',1,2,''),"
	        " ('sb_new','pause','failed',0,'rt_3',1,'',1,2,'');"
	        "INSERT INTO gen_owners VALUES('sb_gone',1,'node-a',1),('sb_ttl',1,'',1),"
	        " ('sb_live',1,'node-a',1),('sb_new',1,'node-a',1);"
	        "PRAGMA user_version=8;");
	ck_assert_int_eq(s0__meta_open(dir, &m, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_schema_version(m), 9);
	s0__gen_owner_row o;
	ck_assert_int_eq(s0__meta_gen_owner(m, "sb_gone", &o, NULL), S0_ENOTFOUND);
	ck_assert_int_eq(s0__meta_gen_owner(m, "sb_ttl", &o, NULL), S0_ENOTFOUND);
	ck_assert_int_eq(s0__meta_gen_owner(m, "sb_live", &o, NULL), S0_OK);
	ck_assert_int_eq(s0__meta_gen_owner(m, "sb_new", &o, NULL), S0_OK);
	s0__meta_close(m);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

START_TEST(sqlite_refuses_newer_schema)
{
	char *dir = s0_test_tmpdir("meta");
	raw_sql(dir, "PRAGMA user_version=99;");
	s0__meta *m = NULL;
	s0_error *err = NULL;
	ck_assert_int_eq(s0__meta_open(dir, &m, &err), S0_EUNSUPPORTED);
	ck_assert_str_eq(s0_error_reason(err), "schema_too_new");
	s0_error_free(err);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

START_TEST(sqlite_unknown_op_names_are_errors)
{
	char *dir = s0_test_tmpdir("meta");
	s0__meta *m = NULL;
	ck_assert_int_eq(s0__meta_open(dir, &m, NULL), S0_OK);
	s0__op_row good = op_of("sb_good", S0__OP_DELETE, S0__OPS_INTENT);
	ck_assert_int_eq(s0__meta_op_insert(m, &good, NULL), S0_OK);
	raw_sql(dir, "INSERT INTO operations(sandbox_id,kind,state,memory,runtime_id,generation,"
	             "new_head,created_at,updated_at,image) VALUES"
	             " ('sb_bad','snooze','intent',0,'',1,'',1,1,''),"
	             " ('sb_worse','pause','dozing',0,'',1,'',1,1,'')");
	s0__op_row op;
	s0_error *err = NULL;
	ck_assert_int_eq(s0__meta_op_active(m, "sb_bad", &op, &err), S0_EINVAL);
	ck_assert_str_eq(s0_error_reason(err), "unknown_op_kind");
	ck_assert_ptr_nonnull(strstr(s0_error_message(err), "\"snooze\""));
	s0_error_free(err);
	ck_assert_int_eq(op.id, 0); /* never half a row */
	ck_assert_str_eq(op.sandbox_id, "");
	err = NULL;
	ck_assert_int_eq(s0__meta_op_active(m, "sb_worse", &op, &err), S0_EINVAL);
	ck_assert_str_eq(s0_error_reason(err), "unknown_op_state");
	ck_assert_ptr_nonnull(strstr(s0_error_message(err), "\"dozing\""));
	s0_error_free(err);
	err = NULL;
	s0__op_row *v = NULL;
	size_t n = 0;
	ck_assert_int_eq(s0__meta_op_pending(m, &v, &n, &err), S0_EINVAL);
	ck_assert_str_eq(s0_error_reason(err), "unknown_op_kind");
	s0_error_free(err);
	/* the readable rows still read */
	ck_assert_int_eq(s0__meta_op_active(m, "sb_good", &op, NULL), S0_OK);
	ck_assert_int_eq(op.kind, S0__OP_DELETE);
	s0__meta_close(m);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

START_TEST(sqlite_engine_refuses_unknown_op_names)
{
	/* a data directory whose store names an operation kind this library
	 * does not know: opening the backend fails with that name, no crash */
	char *dir = s0_test_tmpdir("meta");
	s0_local_options o;
	ck_assert_int_eq(s0_local_options_init(&o, S0_LOCAL_OPTIONS_VERSION), S0_OK);
	s0_local *l = NULL;
	s0_error *err = NULL;
	ck_assert_msg(s0_local_open(dir, &o, &l, &err) == S0_OK, "%s",
	              err ? s0_error_message(err) : "");
	s0_local_close(l);
	raw_sql(dir, "INSERT INTO operations(sandbox_id,kind,state,memory,runtime_id,generation,"
	             "new_head,created_at,updated_at,image) VALUES"
	             " ('sb_x','hibernate','intent',0,'',1,'',1,1,'')");
	l = NULL;
	ck_assert_int_eq(s0_local_open(dir, &o, &l, &err), S0_EINVAL);
	ck_assert_ptr_null(l);
	ck_assert_str_eq(s0_error_reason(err), "unknown_op_kind");
	ck_assert_ptr_nonnull(strstr(s0_error_message(err), "\"hibernate\""));
	s0_error_free(err);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

/* ---- the durable step (lifecycle/optxn.h) on a real engine ---- */

typedef struct calls {
	int effect, write, undo;
	int effect_rc, write_rc;
} calls;

static int t_effect(s0__engine *e, s0__op_row *op, void *ctx)
{
	(void)e;
	(void)op;
	calls *c = ctx;
	c->effect++;
	return c->effect_rc;
}

static int t_write(s0__engine *e, s0__op_row *op, void *ctx, s0_error **err)
{
	(void)e;
	(void)op;
	calls *c = ctx;
	c->write++;
	return c->write_rc < 0 ? s0__error_set(err, c->write_rc, "meta_store", "write refused")
	                       : S0_OK;
}

static void t_undo(s0__engine *e, s0__op_row *op, void *ctx)
{
	(void)e;
	(void)op;
	((calls *)ctx)->undo++;
}

START_TEST(optxn_commits_or_rolls_back)
{
	char *dir = s0_test_tmpdir("optxn");
	s0_local_options lo;
	ck_assert_int_eq(s0_local_options_init(&lo, S0_LOCAL_OPTIONS_VERSION), S0_OK);
	s0_local *l = NULL;
	ck_assert_int_eq(s0_local_open(dir, &lo, &l, NULL), S0_OK);
	s0__engine *e = s0__local_engine(l);
	s0__engine_controller_stop(e); /* nobody else advances the rows here */

	/* the intent: inserted with its sandbox row in one transaction */
	s0__sandbox_row row = sandbox("sb_o", "t", 1);
	s0__op_row op = {0};
	snprintf(op.sandbox_id, sizeof op.sandbox_id, "sb_o");
	op.kind = S0__OP_DELETE;
	calls c = {0};
	s0__op_step st = {.effect = t_effect, .write = t_write, .undo = t_undo, .row = &row, .ctx = &c};
	ck_assert_int_eq(s0__op_advance(e, &op, S0__OPS_INTENT, &st, NULL), S0_OK);
	ck_assert_int_gt(op.id, 0);
	ck_assert_int_eq(op.created_at_ms, op.updated_at_ms);
	ck_assert_int_eq(c.effect + c.write + c.undo, 2); /* effect, write; no undo */
	s0__op_row got;
	ck_assert_int_eq(s0__meta_op_active(e->meta, "sb_o", &got, NULL), S0_OK);
	ck_assert_int_eq(got.id, op.id);
	ck_assert_int_eq(got.state, S0__OPS_INTENT);

	/* the side effect fails: nothing is written, op keeps its state */
	c = (calls){.effect_rc = S0_EUNAVAILABLE};
	ck_assert_int_eq(s0__op_advance(e, &op, S0__OPS_DONE, &st, NULL), S0_EUNAVAILABLE);
	ck_assert_int_eq(c.effect, 1);
	ck_assert_int_eq(c.write, 0);
	ck_assert_int_eq(c.undo, 0);
	ck_assert_int_eq(op.state, S0__OPS_INTENT);

	/* the writes fail: everything rolls back (the row too) and undo runs */
	c = (calls){.write_rc = S0_EIO};
	snprintf(row.head, sizeof row.head, "gen-rolled-back");
	s0_error *err = NULL;
	ck_assert_int_eq(s0__op_advance(e, &op, S0__OPS_DONE, &st, &err), S0_EIO);
	ck_assert_str_eq(s0_error_message(err), "write refused");
	s0_error_free(err);
	ck_assert_int_eq(c.undo, 1);
	ck_assert_int_eq(op.state, S0__OPS_INTENT);
	ck_assert_int_eq(s0__meta_op_active(e->meta, "sb_o", &got, NULL), S0_OK);
	ck_assert_int_eq(got.state, S0__OPS_INTENT);
	s0__sandbox_row back = {0};
	ck_assert_int_eq(s0__meta_sandbox_get(e->meta, NULL, "sb_o", &back, NULL), S0_OK);
	ck_assert_str_eq(back.head, "gen-sb_o");
	s0__sandbox_rec_clear(&back.rec);

	/* a failed intent leaves no row and op unstored */
	s0__op_row op2 = {0};
	snprintf(op2.sandbox_id, sizeof op2.sandbox_id, "sb_o");
	op2.kind = S0__OP_RECOVER;
	c = (calls){.write_rc = S0_EIO};
	ck_assert_int_eq(s0__op_advance(e, &op2, S0__OPS_INTENT, &st, NULL), S0_EIO);
	ck_assert_int_eq(op2.id, 0);
	int64_t n = -1;
	ck_assert_int_eq(s0__meta_op_count(e->meta, "sb_o", S0__OP_RECOVER, &n, NULL), S0_OK);
	ck_assert_int_eq(n, 0);

	/* the step commits: the new state and the row together */
	c = (calls){0};
	snprintf(row.head, sizeof row.head, "gen-final");
	ck_assert_int_eq(s0__op_advance(e, &op, S0__OPS_DONE, &st, NULL), S0_OK);
	ck_assert_int_eq(op.state, S0__OPS_DONE);
	ck_assert_int_eq(s0__meta_op_active(e->meta, "sb_o", &got, NULL), S0_ENOTFOUND);
	ck_assert_int_eq(s0__meta_sandbox_get(e->meta, NULL, "sb_o", &back, NULL), S0_OK);
	ck_assert_str_eq(back.head, "gen-final");
	s0__sandbox_rec_clear(&back.rec);
	s0_local_close(l);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

static Suite *meta_suite(void)
{
	Suite *s = suite_create("meta");
	int n = backend_count();
	TCase *c = tcase_create("contract");
	tcase_add_loop_test(c, meta_sandbox_rows, 0, (int)n);
	tcase_add_loop_test(c, meta_sandbox_due, 0, (int)n);
	tcase_add_loop_test(c, meta_operations_by_name, 0, (int)n);
	tcase_add_loop_test(c, meta_operations_lifecycle, 0, (int)n);
	tcase_add_loop_test(c, meta_transactions, 0, (int)n);
	tcase_add_loop_test(c, meta_snapshots_templates, 0, (int)n);
	tcase_add_loop_test(c, meta_kv_sessions_forks, 0, (int)n);
	tcase_add_loop_test(c, meta_services_routes, 0, (int)n);
	tcase_add_loop_test(c, meta_team_templates, 0, (int)n);
	tcase_add_loop_test(c, meta_teams_and_keys, 0, (int)n);
	tcase_add_loop_test(c, meta_keys_bad_input, 0, (int)n);
	tcase_add_loop_test(c, meta_outbox, 0, (int)n);
	tcase_add_loop_test(c, meta_nodes_fence_generations, 0, (int)n);
	tcase_add_loop_test(c, meta_gen_release_and_orphans, 0, (int)n);
	tcase_add_loop_test(c, meta_gen_check_fences_stale_owners, 0, (int)n);
	tcase_add_loop_test(c, meta_gen_owner_goes_with_its_sandbox, 0, (int)n);
	tcase_add_test(c, meta_names_table);
	tcase_add_test(c, meta_unknown_backend);
	suite_add_tcase(s, c);
	TCase *q = tcase_create("sqlite");
	tcase_add_test(q, sqlite_migrates_version_3);
	tcase_add_test(q, sqlite_migration_9_drops_deleted_sandboxes_owners);
	tcase_add_test(q, sqlite_refuses_newer_schema);
	tcase_add_test(q, sqlite_unknown_op_names_are_errors);
	tcase_add_test(q, sqlite_engine_refuses_unknown_op_names);
	suite_add_tcase(s, q);
	TCase *x = tcase_create("optxn");
	tcase_add_test(x, optxn_commits_or_rolls_back);
	suite_add_tcase(s, x);
	return s;
}

S0_TEST_MAIN(meta_suite)
