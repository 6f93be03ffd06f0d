/*
 * Model-based test of the lifecycle engine: random sequences of public
 * calls (write, pause, resume, snapshot, restore, fork, claim from a
 * snapshot, delete, wake by access, runtime crash, manager restart, process
 * restart, GC) against a model of what every sandbox's files must read
 * (FS-03, FS-07, EPH-01, REC-03, REC-08, PTX-05, COST-04 together).
 *
 * The model: a running sandbox serves its working state; a pause commits
 * it; a resume, a crash or a process restart start again from the last
 * committed state; a snapshot of a running sandbox captures its working
 * state (the running branch is rebased, the head does not move); a fork or
 * a snapshot of a paused one captures the committed state.
 *
 * S0_TEST_SEED=<n> replays one seed; S0_TEST_ITERATIONS / S0_LONG_TESTS set
 * the number of seeds, S0_MODEL_STEPS the steps per seed (60).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "lt.h"
#include "suites.h"

#define NFILES 3
#define MAXSB 5
#define MAXSNAP 8

typedef struct files {
	char v[NFILES][40]; /* "" = absent */
} files;

typedef struct msb {
	char id[96];
	bool used, running;
	files work, committed;
} msb;

typedef struct msnap {
	char id[96];
	bool used;
	files f;
} msnap;

typedef struct model {
	lt *t;
	uint64_t rng;
	msb sb[MAXSB];
	msnap snap[MAXSNAP];
	int step;
} model;

static const char *const paths[NFILES] = {"/workspace/m0", "/var/tmp/m1", "/workspace/d/m2"};

static uint32_t rnd(model *m, uint32_t n)
{
	m->rng ^= m->rng << 13;
	m->rng ^= m->rng >> 7;
	m->rng ^= m->rng << 17;
	return (uint32_t)(m->rng % n);
}

static msb *pick(model *m, int want_running) /* -1 any, 0 paused, 1 running */
{
	int idx[MAXSB], n = 0;
	for (int i = 0; i < MAXSB; i++)
		if (m->sb[i].used && (want_running < 0 || m->sb[i].running == (want_running == 1)))
			idx[n++] = i;
	return n ? &m->sb[idx[rnd(m, (uint32_t)n)]] : NULL;
}

static msb *free_slot(model *m)
{
	for (int i = 0; i < MAXSB; i++)
		if (!m->sb[i].used)
			return &m->sb[i];
	return NULL;
}

static void check_files(model *m, msb *s)
{
	for (int k = 0; k < NFILES; k++) {
		if (s->work.v[k][0])
			ck_assert_msg(lt_file_is(m->t, s->id, paths[k], s->work.v[k]),
			              "step %d: %s %s should read '%s'", m->step, s->id, paths[k],
			              s->work.v[k]);
		else
			ck_assert_msg(lt_stat_rc(m->t, s->id, paths[k]) == S0_ENOTFOUND,
			              "step %d: %s %s should be absent", m->step, s->id, paths[k]);
	}
}

static void check_state(model *m, msb *s)
{
	if (s->running)
		lt_assert_running(m->t, s->id);
	else
		lt_assert_paused(m->t, s->id);
}

static void op_claim(model *m, const msnap *from)
{
	msb *s = free_slot(m);
	if (!s)
		return;
	s0_sandbox_info *sb = NULL;
	LT_OK(s0_sandbox_claim(m->t->c, "default", from ? from->id : NULL, NULL, &sb, &e_));
	memset(s, 0, sizeof *s);
	snprintf(s->id, sizeof s->id, "%s", s0_sandbox_info_id(sb));
	s0_sandbox_info_free(sb);
	s->used = s->running = true;
	if (from)
		s->work = s->committed = from->f;
}

static void op_write(model *m, msb *s)
{
	int k = (int)rnd(m, NFILES);
	if (rnd(m, 5) == 0 && s->work.v[k][0]) {
		LT_OK(s0_files_delete(m->t->c, s->id, paths[k], &e_));
		s->work.v[k][0] = '\0';
		return;
	}
	snprintf(s->work.v[k], sizeof s->work.v[k], "s%d-%u", m->step, rnd(m, 100000));
	lt_write(m->t, s->id, paths[k], s->work.v[k]);
	lt_write(m->t, s->id, "/tmp/scratch", "runtime only"); /* never durable */
}

static void op_pause(model *m, msb *s)
{
	lt_pause(m->t, s->id);
	s->committed = s->work;
	s->running = false;
}

static void op_resume(model *m, msb *s)
{
	if (rnd(m, 2)) {
		lt_resume(m->t, s->id);
	} else { /* wake by access */
		int k = (int)rnd(m, NFILES);
		(void)lt_stat_rc(m->t, s->id, paths[k]);
		lt_assert_running(m->t, s->id);
	}
	s->work = s->committed;
	s->running = true;
	ck_assert_int_eq(lt_stat_rc(m->t, s->id, "/tmp/scratch"), S0_ENOTFOUND);
}

static void op_snapshot(model *m, msb *s)
{
	msnap *slot = NULL;
	for (int i = 0; i < MAXSNAP && !slot; i++)
		if (!m->snap[i].used)
			slot = &m->snap[i];
	if (!slot)
		slot = &m->snap[rnd(m, MAXSNAP)]; /* forget one (it stays on the server) */
	s0_snapshot_info *si = NULL;
	LT_OK(s0_snapshot_create(m->t->c, s->id, NULL, NULL, 0, &si, &e_));
	snprintf(slot->id, sizeof slot->id, "%s", s0_snapshot_info_id(si));
	s0_snapshot_info_free(si);
	slot->used = true;
	slot->f = s->running ? s->work : s->committed;
}

static void op_restore(model *m, msb *s)
{
	msnap *sn = &m->snap[rnd(m, MAXSNAP)];
	if (!sn->used)
		return;
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_restore(m->t->c, s->id, sn->id, &lr, &e_));
	s0_lifecycle_result_free(lr);
	s->committed = s->work = sn->f;
}

static void op_fork(model *m, msb *s)
{
	msb *c = free_slot(m);
	if (!c)
		return;
	s0_sandbox_info *sb = NULL;
	LT_OK(s0_sandbox_fork(m->t->c, s->id, NULL, &sb, &e_));
	files f = s->running ? s->work : s->committed;
	memset(c, 0, sizeof *c);
	snprintf(c->id, sizeof c->id, "%s", s0_sandbox_info_id(sb));
	s0_sandbox_info_free(sb);
	c->used = true;
	c->running = false;
	c->work = c->committed = f;
}

static void op_crash(model *m, msb *s)
{
	char fault[160];
	snprintf(fault, sizeof fault, "runtime_crash@%s", s->id);
	LT_OK(s0_local_fault_arm(m->t->local, fault, S0_FAULT_FAIL, 1, 0, &e_));
	lt_quiesce(m->t);
	for (int i = 0; i < 100 && lt_status(m->t, s->id) != S0_STATUS_RUNNING; i++) {
		lt_advance(m->t, 100);
		lt_quiesce(m->t);
	}
	s->work = s->committed;
}

static void op_delete(model *m, msb *s)
{
	LT_OK(s0_sandbox_delete(m->t->c, s->id, &e_));
	s->used = false;
}

static void op_reopen(model *m)
{
	lt_reopen(m->t);
	for (int i = 0; i < MAXSB; i++)
		if (m->sb[i].used && m->sb[i].running)
			m->sb[i].work = m->sb[i].committed; /* the runtimes died with the process */
}

static void step(model *m)
{
	uint32_t r = rnd(m, 100);
	msb *run = pick(m, 1), *pau = pick(m, 0), *any = pick(m, -1);
	if (r < 30 && run)
		op_write(m, run);
	else if (r < 42 && run)
		op_pause(m, run);
	else if (r < 54 && pau)
		op_resume(m, pau);
	else if (r < 61 && any)
		op_snapshot(m, any);
	else if (r < 65 && pau)
		op_restore(m, pau);
	else if (r < 70 && any)
		op_fork(m, any);
	else if (r < 74) {
		msnap *sn = &m->snap[rnd(m, MAXSNAP)];
		op_claim(m, sn->used ? sn : NULL);
	} else if (r < 78 && any && rnd(m, 2))
		op_delete(m, any);
	else if (r < 83 && run)
		op_crash(m, run);
	else if (r < 86)
		LT_OK(s0_local_restart_manager(m->t->local, &e_));
	else if (r < 89)
		op_reopen(m);
	else if (r < 92)
		LT_OK(s0_local_gc(m->t->local, &e_));
	else if (any && any->running)
		check_files(m, any);
	lt_quiesce(m->t);
	for (int i = 0; i < MAXSB; i++)
		if (m->sb[i].used)
			check_state(m, &m->sb[i]);
}

static void run_seed(uint64_t seed, int steps)
{
	lt t;
	lt_open(&t, NULL);
	model m = {.t = &t, .rng = seed ? seed : 1};
	op_claim(&m, NULL);
	for (m.step = 0; m.step < steps; m.step++)
		step(&m);
	/* the end: every sandbox, running or woken, reads its model */
	LT_OK(s0_local_gc(t.local, &e_));
	for (int i = 0; i < MAXSB; i++) {
		msb *s = &m.sb[i];
		if (!s->used)
			continue;
		if (!s->running) {
			char *head = lt_head(&t, s->id);
			ck_assert_int_eq(lt_fsck_generation(&t, head), 0);
			free(head);
			op_resume(&m, s);
		}
		check_files(&m, s);
	}
	/* every snapshot still claims into exactly its files */
	for (int i = 0; i < MAXSNAP; i++) {
		if (!m.snap[i].used)
			continue;
		msb *s = free_slot(&m);
		if (!s) {
			op_delete(&m, &m.sb[0]);
			s = &m.sb[0];
		}
		op_claim(&m, &m.snap[i]);
		check_files(&m, s);
		op_delete(&m, s);
	}
	lt_close(&t);
}

START_TEST(model_random_lifecycles)
{
	const char *fixed = getenv("S0_TEST_SEED");
	long seeds = fixed ? 1 : s0_test_iterations(3);
	uint64_t base = fixed ? strtoull(fixed, NULL, 10) : (uint64_t)time(NULL) * 1000003u;
	for (long i = 0; i < seeds; i++) {
		uint64_t seed = base + (uint64_t)i;
		fprintf(stderr, "local model: seed %llu (replay with S0_TEST_SEED=%llu)\n",
		        (unsigned long long)seed, (unsigned long long)seed);
		const char *st = getenv("S0_MODEL_STEPS");
		run_seed(seed, st && atoi(st) > 0 ? atoi(st) : 60);
	}
}
END_TEST

Suite *s0_local_model_suite(void)
{
	Suite *s = suite_create("local-model");
	TCase *tc = tcase_create("model");
	tcase_set_timeout(tc, 600);
	tcase_set_tags(tc, LT_TAG_RUNTIMES); /* also on gvisor: one seed, 40 steps there */
	tcase_add_test(tc, model_random_lifecycles);
	suite_add_tcase(s, tc);
	return s;
}
