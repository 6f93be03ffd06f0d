/*
 * The node's lease and the claim of every runtime generation (meta.h
 * "nodes and fencing", lifecycle/fence.c), on whichever metadata store the
 * run uses: a start claims its generation for this node's epoch, a reopen
 * is a new epoch that still owns its sandboxes, and a generation another
 * node holds under a live lease is never started here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "local/lifecycle/engine_internal.h"
#include "local/local_internal.h"
#include "lt.h"
#include "suites.h"

static int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static s0__gen_owner_row owner(lt *t, const char *id)
{
	s0__gen_owner_row o;
	LT_OK(s0__meta_gen_owner(s0__local_engine(t->local)->meta, id, &o, &e_));
	return o;
}

START_TEST(fence_starts_claim_their_generation)
{
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	s0__engine *e = s0__local_engine(t.local);
	int64_t epoch = (int64_t)lt_inum(&t, NULL, "node.identity.lease_epoch");
	ck_assert_int_ge(epoch, 1);
	s0__gen_owner_row o = owner(&t, id);
	ck_assert_str_eq(o.node_id, e->ctld.uid);
	ck_assert_int_eq(o.epoch, epoch);
	ck_assert_int_eq(o.generation, lt_generation(&t, id));

	/* a reopen is the same node under a new epoch: it resumes its sandbox */
	lt_pause(&t, id);
	lt_quiesce(&t);
	lt_reopen(&t);
	ck_assert_int_eq((int64_t)lt_inum(&t, NULL, "node.identity.lease_epoch"), epoch + 1);
	lt_resume(&t, id);
	o = owner(&t, id);
	ck_assert_int_eq(o.epoch, epoch + 1);
	ck_assert_int_eq(o.generation, lt_generation(&t, id));
	/* the delete takes the claim with the sandbox (in its done transaction) */
	LT_OK(s0_sandbox_delete(t.c, id, &e_));
	lt_quiesce(&t);
	s0__gen_owner_row gone;
	ck_assert_int_eq(s0__meta_gen_owner(s0__local_engine(t.local)->meta, id, &gone, NULL),
	                 S0_ENOTFOUND);
	free(id);
	lt_close(&t);
}
END_TEST

/* Another node took the sandbox's next generation while this node's lease
 * had lapsed: this node takes its lease again but never starts that
 * generation; the resume fails and the sandbox stays paused. */
START_TEST(fence_never_runs_another_nodes_generation)
{
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_pause(&t, id);
	lt_quiesce(&t);
	s0__engine *e = s0__local_engine(t.local);
	int64_t gen = lt_generation(&t, id);
	/* this node's lease lapses (a new epoch, already expired) … */
	int64_t lapsed = 0;
	LT_OK(s0__meta_node_lease(e->meta, e->ctld.uid, wall_ms() - 120000, 1000, &lapsed, &e_));
	/* … and node-x claims the next generation */
	int64_t x = 0;
	LT_OK(s0__meta_node_lease(e->meta, "node-x", wall_ms(), 600000, &x, &e_));
	LT_OK(s0__meta_gen_claim(e->meta, id, gen + 1, "node-x", x, wall_ms(), &e_));

	s0_lifecycle_result *lr = NULL;
	s0_error *err = NULL;
	ck_assert_int_lt(s0_sandbox_resume(t.c, id, S0_BOOL_UNSET, &lr, &err), 0);
	s0_error_free(err);
	s0_lifecycle_result_free(lr);
	lt_quiesce(&t);
	lt_assert_paused(&t, id);
	ck_assert_int_eq(lt_runtimes_of(&t, id), 0);
	s0__gen_owner_row o = owner(&t, id);
	ck_assert_str_eq(o.node_id, "node-x");
	ck_assert_double_eq(lt_inum(&t, NULL, "node.identity.lease_reacquisitions"), 1);
	free(id);
	lt_close(&t);
}
END_TEST

Suite *s0_local_fence_suite(void)
{
	Suite *s = suite_create("local-fence");
	TCase *c = tcase_create("fence");
	tcase_set_timeout(c, 60);
	tcase_add_test(c, fence_starts_claim_their_generation);
	tcase_add_test(c, fence_never_runs_another_nodes_generation);
	suite_add_tcase(s, c);
	return s;
}
