/* Cancel tokens and clocks (sandbox0/clock.h, common/cancel.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/cancel.h"
#include "common/deadline.h"
#include "common_suites.h"

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void count_fn(void *arg)
{
	atomic_fetch_add((atomic_int *)arg, 1);
}

START_TEST(test_token_basics)
{
	int64_t live = s0_live_objects();
	s0_cancel_token *t = NULL;
	ck_assert_int_eq(s0_cancel_token_new(&t, NULL), S0_OK);
	ck_assert_int_eq(s0_live_objects(), live + 1);
	ck_assert(!s0_cancel_token_is_canceled(t));
	ck_assert(!s0_cancel_token_is_canceled(NULL));
	s0_cancel_token_cancel(t);
	ck_assert(s0_cancel_token_is_canceled(t));
	s0_cancel_token_cancel(t); /* idempotent */
	ck_assert(s0_cancel_token_is_canceled(t));
	s0_cancel_token_reset(t);
	ck_assert(!s0_cancel_token_is_canceled(t));
	s0_cancel_token_cancel(NULL);
	s0_cancel_token_reset(NULL);
	ck_assert(!s0__canceled(NULL, NULL));
	ck_assert(!s0__canceled(t, NULL));
	s0_cancel_token_cancel(t);
	ck_assert(s0__canceled(NULL, t));
	s0_cancel_token_free(t);
	s0_cancel_token_free(NULL);
	ck_assert_int_eq(s0_live_objects(), live);
}
END_TEST

START_TEST(test_subscriptions)
{
	s0_cancel_token *t = NULL;
	ck_assert_int_eq(s0_cancel_token_new(&t, NULL), S0_OK);
	atomic_int a = 0, b = 0, c = 0;
	int ia = s0__cancel_subscribe(t, count_fn, &a);
	int ib = s0__cancel_subscribe(t, count_fn, &b);
	ck_assert_int_gt(ia, 0);
	ck_assert_int_gt(ib, 0);
	ck_assert_int_ne(ia, ib);
	s0__cancel_unsubscribe(t, ib);
	ck_assert_int_eq(atomic_load(&a) + atomic_load(&b), 0);
	s0_cancel_token_cancel(t);
	ck_assert_int_eq(atomic_load(&a), 1);
	ck_assert_int_eq(atomic_load(&b), 0);
	s0_cancel_token_cancel(t); /* fires callbacks once */
	ck_assert_int_eq(atomic_load(&a), 1);
	/* subscribing to a fired token calls back at once */
	int ic = s0__cancel_subscribe(t, count_fn, &c);
	ck_assert_int_ge(atomic_load(&c), 1);
	s0__cancel_unsubscribe(t, ia);
	s0__cancel_unsubscribe(t, ic);
	s0__cancel_unsubscribe(t, 9999); /* unknown ids are ignored */
	s0__cancel_unsubscribe(NULL, 1);
	ck_assert_int_eq(s0__cancel_subscribe(NULL, count_fn, &c), 0);
	/* after a reset, a new cancel fires the remaining subscriptions again */
	s0_cancel_token_reset(t);
	atomic_int d = 0;
	int id = s0__cancel_subscribe(t, count_fn, &d);
	s0_cancel_token_cancel(t);
	ck_assert_int_eq(atomic_load(&d), 1);
	s0__cancel_unsubscribe(t, id);
	s0_cancel_token_free(t); /* frees subscriptions left behind too */
}
END_TEST

typedef struct sleeper {
	s0_cancel_token *tok;
	int64_t ms;
	int rc;
	int64_t done_ms;
	atomic_int started;
} sleeper;

static void *sleep_thread(void *p)
{
	sleeper *s = p;
	atomic_store(&s->started, 1);
	s->rc = s0__cancel_sleep(s->tok, s->ms);
	s->done_ms = mono_ms();
	return NULL;
}

/* A sleeping thread wakes within a few ms of a cancel from another thread. */
START_TEST(test_cancel_sleep_prompt)
{
	s0_cancel_token *t = NULL;
	ck_assert_int_eq(s0_cancel_token_new(&t, NULL), S0_OK);
	int64_t t0 = mono_ms();
	ck_assert_int_eq(s0__cancel_sleep(t, 30), S0_OK);
	ck_assert_int_ge(mono_ms() - t0, 29);
	ck_assert_int_eq(s0__cancel_sleep(NULL, 5), S0_OK);
	ck_assert_int_eq(s0__cancel_sleep(t, -3), S0_OK);

	sleeper s = {t, 60000, 1, 0, 0};
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, sleep_thread, &s), 0);
	while (!atomic_load(&s.started))
		sched_yield();
	int64_t c0 = mono_ms();
	s0_cancel_token_cancel(t);
	pthread_join(th, NULL);
	ck_assert_int_eq(s.rc, S0_ECANCELED);
	ck_assert_int_lt(s.done_ms - c0, 100);
	/* an already fired token returns at once */
	t0 = mono_ms();
	ck_assert_int_eq(s0__cancel_sleep(t, 60000), S0_ECANCELED);
	ck_assert_int_lt(mono_ms() - t0, 100);
	s0_cancel_token_free(t);
}
END_TEST

START_TEST(test_cancel_link)
{
	for (int which = 0; which < 2; which++) {
		s0_cancel_token *a = NULL, *b = NULL;
		ck_assert_int_eq(s0_cancel_token_new(&a, NULL), S0_OK);
		ck_assert_int_eq(s0_cancel_token_new(&b, NULL), S0_OK);
		s0__cancel_link l;
		ck_assert_int_eq(s0__cancel_link_init(&l, a, b, NULL), S0_OK);
		ck_assert(!s0_cancel_token_is_canceled(l.token));
		s0_cancel_token_cancel(which ? b : a);
		ck_assert(s0_cancel_token_is_canceled(l.token));
		ck_assert(!s0_cancel_token_is_canceled(which ? a : b));
		s0__cancel_link_free(&l);
		ck_assert_ptr_null(l.token);
		s0_cancel_token_cancel(which ? a : b); /* after the link is gone: nothing to fire */
		s0_cancel_token_free(a);
		s0_cancel_token_free(b);
	}
	/* a parent that already fired makes a fired link; NULL parents are fine */
	s0_cancel_token *a = NULL;
	ck_assert_int_eq(s0_cancel_token_new(&a, NULL), S0_OK);
	s0_cancel_token_cancel(a);
	s0__cancel_link l;
	ck_assert_int_eq(s0__cancel_link_init(&l, NULL, a, NULL), S0_OK);
	ck_assert(s0_cancel_token_is_canceled(l.token));
	s0__cancel_link_free(&l);
	ck_assert_int_eq(s0__cancel_link_init(&l, NULL, NULL, NULL), S0_OK);
	ck_assert(!s0_cancel_token_is_canceled(l.token));
	s0__cancel_link_free(&l);
	s0_cancel_token_free(a);
}
END_TEST

typedef struct churn {
	s0_cancel_token *t;
	atomic_int stop;
	atomic_int fired;
} churn;

static void *subscribe_churn(void *p)
{
	churn *c = p;
	while (!atomic_load(&c->stop)) {
		int id = s0__cancel_subscribe(c->t, count_fn, &c->fired);
		s0__cancel_unsubscribe(c->t, id);
	}
	return NULL;
}

static void *cancel_reset_loop(void *p)
{
	churn *c = p;
	for (int i = 0; i < 3000; i++) {
		s0_cancel_token_cancel(c->t);
		s0_cancel_token_reset(c->t);
	}
	return NULL;
}

/*
 * Subscribing and unsubscribing while other threads cancel and reset is
 * safe, including two cancels whose callback loops would overlap.
 */
START_TEST(test_subscribe_race)
{
	churn c = {NULL, 0, 0};
	ck_assert_int_eq(s0_cancel_token_new(&c.t, NULL), S0_OK);
	pthread_t th[4], cr[2];
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, subscribe_churn, &c), 0);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&cr[i], NULL, cancel_reset_loop, &c), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(cr[i], NULL);
	atomic_store(&c.stop, 1);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	s0_cancel_token_free(c.t);
}
END_TEST

START_TEST(test_real_clock)
{
	s0_clock clk;
	s0_clock_real(&clk);
	ck_assert_uint_eq(clk.version, S0_CLOCK_VERSION);
	int64_t wall = clk.now_unix_ms(clk.ctx);
	ck_assert_int_lt(llabs(wall - (int64_t)time(NULL) * 1000), 2000);
	int64_t m0 = clk.monotonic_ms(clk.ctx);
	ck_assert_int_eq(clk.sleep_ms(clk.ctx, 20, NULL), S0_OK);
	ck_assert_int_ge(clk.monotonic_ms(clk.ctx) - m0, 19);
	ck_assert_int_eq(clk.sleep_ms(clk.ctx, 0, NULL), S0_OK);
	s0_cancel_token *t = NULL;
	ck_assert_int_eq(s0_cancel_token_new(&t, NULL), S0_OK);
	s0_cancel_token_cancel(t);
	m0 = clk.monotonic_ms(clk.ctx);
	ck_assert_int_eq(clk.sleep_ms(clk.ctx, 60000, t), S0_ECANCELED);
	ck_assert_int_lt(clk.monotonic_ms(clk.ctx) - m0, 100);
	s0_cancel_token_free(t);
}
END_TEST

/* Auto-advance: sleeping moves virtual time and returns at once. */
START_TEST(test_manual_clock_auto_advance)
{
	int64_t live = s0_live_objects();
	s0_manual_clock *mc = NULL;
	ck_assert_int_eq(s0_manual_clock_new(1893456000000LL, S0_MANUAL_CLOCK_AUTO_ADVANCE, &mc,
	                                     NULL),
	                 S0_OK);
	s0_clock clk;
	s0_manual_clock_get(mc, &clk);
	ck_assert_int_eq(clk.now_unix_ms(clk.ctx), 1893456000000LL);
	ck_assert_int_eq(clk.monotonic_ms(clk.ctx), 1893456000000LL);
	int64_t t0 = mono_ms();
	ck_assert_int_eq(clk.sleep_ms(clk.ctx, 3600 * 1000, NULL), S0_OK);
	ck_assert_int_lt(mono_ms() - t0, 1000); /* virtual, not real */
	ck_assert_int_eq(s0_manual_clock_now(mc), 1893456000000LL + 3600000);
	ck_assert_int_eq(clk.sleep_ms(clk.ctx, 0, NULL), S0_OK);
	ck_assert_int_eq(clk.sleep_ms(clk.ctx, -5, NULL), S0_OK);
	ck_assert_int_eq(s0_manual_clock_now(mc), 1893456000000LL + 3600000);
	s0_manual_clock_advance(mc, 500);
	s0_manual_clock_advance(mc, -100); /* ignored */
	s0_manual_clock_advance(mc, 0);
	ck_assert_int_eq(clk.now_unix_ms(clk.ctx), 1893456000000LL + 3600500);
	s0_cancel_token *t = NULL;
	ck_assert_int_eq(s0_cancel_token_new(&t, NULL), S0_OK);
	s0_cancel_token_cancel(t);
	ck_assert_int_eq(clk.sleep_ms(clk.ctx, 1000, t), S0_ECANCELED);
	ck_assert_int_eq(s0_manual_clock_now(mc), 1893456000000LL + 3600500);
	s0_cancel_token_free(t);
	/* time saturates instead of overflowing */
	ck_assert_int_eq(clk.sleep_ms(clk.ctx, INT64_MAX, NULL), S0_OK);
	ck_assert_int_eq(s0_manual_clock_now(mc), INT64_MAX);
	s0_manual_clock_advance(mc, INT64_MAX);
	ck_assert_int_eq(s0_manual_clock_now(mc), INT64_MAX);
	s0_manual_clock_free(mc);
	s0_manual_clock_free(NULL);
	/* start 0 means the real time now */
	ck_assert_int_eq(s0_manual_clock_new(0, 0, &mc, NULL), S0_OK);
	ck_assert_int_lt(llabs(s0_manual_clock_now(mc) - (int64_t)time(NULL) * 1000), 2000);
	s0_manual_clock_free(mc);
	ck_assert_int_eq(s0_live_objects(), live);
}
END_TEST

typedef struct msleeper {
	s0_clock clk;
	s0_cancel_token *tok;
	int64_t ms;
	int rc;
	int64_t before, after;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
} msleeper;

static void *manual_sleep_thread(void *p)
{
	msleeper *s = p;
	s->before = s->clk.now_unix_ms(s->clk.ctx);
	s->rc = s->clk.sleep_ms(s->clk.ctx, s->ms, s->tok);
	s->after = s->clk.now_unix_ms(s->clk.ctx);
	pthread_mutex_lock(&s->mu);
	s->done = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* Wait up to ms of real time for the sleeper to finish; true when it did. */
static bool wait_done(msleeper *s, int ms)
{
	struct timespec dl = s0__deadline_after_ms(CLOCK_REALTIME, ms);
	pthread_mutex_lock(&s->mu);
	while (!s->done)
		if (pthread_cond_timedwait(&s->cv, &s->mu, &dl))
			break;
	bool done = s->done;
	pthread_mutex_unlock(&s->mu);
	return done;
}

/* Blocking mode: a sleep returns only once another thread has advanced time enough. */
START_TEST(test_manual_clock_blocking)
{
	s0_manual_clock *mc = NULL;
	ck_assert_int_eq(s0_manual_clock_new(1000000, 0, &mc, NULL), S0_OK);
	msleeper s = {.ms = 1000, .rc = 1};
	pthread_mutex_init(&s.mu, NULL);
	pthread_cond_init(&s.cv, NULL);
	s0_manual_clock_get(mc, &s.clk);
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, manual_sleep_thread, &s), 0);
	/* 999 ms of virtual time is not enough, whenever the sleeper started */
	s0_manual_clock_advance(mc, 400);
	s0_manual_clock_advance(mc, 599);
	ck_assert(!wait_done(&s, 50));
	/* keep advancing until it wakes; it must have seen its full second */
	while (!wait_done(&s, 5))
		s0_manual_clock_advance(mc, 100);
	pthread_join(th, NULL);
	ck_assert_int_eq(s.rc, S0_OK);
	ck_assert_int_ge(s.after - s.before, 1000);

	/* a blocked sleep is cancelled promptly from another thread */
	s0_cancel_token *t = NULL;
	ck_assert_int_eq(s0_cancel_token_new(&t, NULL), S0_OK);
	msleeper c = {.ms = 1000, .rc = 1, .tok = t};
	pthread_mutex_init(&c.mu, NULL);
	pthread_cond_init(&c.cv, NULL);
	s0_manual_clock_get(mc, &c.clk);
	ck_assert_int_eq(pthread_create(&th, NULL, manual_sleep_thread, &c), 0);
	ck_assert(!wait_done(&c, 20));
	int64_t c0 = mono_ms();
	s0_cancel_token_cancel(t);
	ck_assert(wait_done(&c, 5000));
	ck_assert_int_lt(mono_ms() - c0, 100);
	pthread_join(th, NULL);
	ck_assert_int_eq(c.rc, S0_ECANCELED);
	s0_cancel_token_free(t);
	pthread_mutex_destroy(&s.mu);
	pthread_cond_destroy(&s.cv);
	pthread_mutex_destroy(&c.mu);
	pthread_cond_destroy(&c.cv);
	s0_manual_clock_free(mc);
}
END_TEST

Suite *s0_cancel_clock_suite(void)
{
	Suite *s = suite_create("cancel_clock");
	TCase *tc = tcase_create("cancel_clock");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_token_basics);
	tcase_add_test(tc, test_subscriptions);
	tcase_add_test(tc, test_cancel_sleep_prompt);
	tcase_add_test(tc, test_cancel_link);
	tcase_add_test(tc, test_subscribe_race);
	tcase_add_test(tc, test_real_clock);
	tcase_add_test(tc, test_manual_clock_auto_advance);
	tcase_add_test(tc, test_manual_clock_blocking);
	suite_add_tcase(s, tc);
	return s;
}
