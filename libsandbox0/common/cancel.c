/* Cancel tokens: a flag, a condition variable and wake-up subscriptions. */
#include "common/cancel.h"
#include "common/deadline.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

typedef struct sub {
	int id;
	s0__cancel_fn fn;
	void *arg;
	struct sub *next;
} sub;

struct s0_cancel_token {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	atomic_bool canceled;
	int next_id;
	int running_id; /* subscription whose fn runs now (unlocked) */
	bool firing;    /* a cancel is running callbacks; another one waits */
	pthread_cond_t done_cv;
	sub *subs;
};

int s0_cancel_token_new(s0_cancel_token **out, s0_error **err)
{
	s0_cancel_token *t = calloc(1, sizeof *t);
	if (!t)
		return s0__error_nomem(err);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, &ca);
	pthread_cond_init(&t->done_cv, NULL);
	pthread_condattr_destroy(&ca);
	atomic_init(&t->canceled, false);
	s0__obj_inc();
	*out = t;
	return S0_OK;
}

void s0_cancel_token_free(s0_cancel_token *t)
{
	if (!t)
		return;
	for (sub *s = t->subs, *n; s; s = n) {
		n = s->next;
		free(s);
	}
	pthread_mutex_destroy(&t->mu);
	pthread_cond_destroy(&t->cv);
	pthread_cond_destroy(&t->done_cv);
	free(t);
	s0__obj_dec();
}

void s0_cancel_token_cancel(s0_cancel_token *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	if (atomic_exchange(&t->canceled, true)) {
		pthread_mutex_unlock(&t->mu);
		return;
	}
	pthread_cond_broadcast(&t->cv);
	/* A cancel, reset, cancel sequence from several threads could start a
	 * second callback loop while the first runs one unlocked; running_id
	 * names one callback only, so loops take turns. */
	while (t->firing)
		pthread_cond_wait(&t->done_cv, &t->mu);
	t->firing = true;
	/* Run callbacks one by one without holding the lock across each. */
	for (sub *s = t->subs; s; s = s->next) {
		t->running_id = s->id;
		s0__cancel_fn fn = s->fn;
		void *arg = s->arg;
		pthread_mutex_unlock(&t->mu);
		fn(arg);
		pthread_mutex_lock(&t->mu);
		t->running_id = 0;
		pthread_cond_broadcast(&t->done_cv);
		/* restart: the list may have changed while unlocked */
		if (!t->subs)
			break;
	}
	t->firing = false;
	pthread_cond_broadcast(&t->done_cv);
	pthread_mutex_unlock(&t->mu);
}

bool s0_cancel_token_is_canceled(const s0_cancel_token *t)
{
	return t && atomic_load(&((s0_cancel_token *)t)->canceled);
}

void s0_cancel_token_reset(s0_cancel_token *t)
{
	if (t)
		atomic_store(&t->canceled, false);
}

bool s0__canceled(const s0_cancel_token *a, const s0_cancel_token *b)
{
	return s0_cancel_token_is_canceled(a) || s0_cancel_token_is_canceled(b);
}

int s0__cancel_subscribe(s0_cancel_token *t, s0__cancel_fn fn, void *arg)
{
	if (!t)
		return 0;
	sub *s = malloc(sizeof *s);
	if (!s)
		return 0;
	pthread_mutex_lock(&t->mu);
	s->id = ++t->next_id;
	s->fn = fn;
	s->arg = arg;
	s->next = t->subs;
	t->subs = s;
	bool fired = atomic_load(&t->canceled);
	pthread_mutex_unlock(&t->mu);
	if (fired)
		fn(arg);
	return s->id;
}

void s0__cancel_unsubscribe(s0_cancel_token *t, int id)
{
	if (!t || id <= 0)
		return;
	pthread_mutex_lock(&t->mu);
	while (t->running_id == id)
		pthread_cond_wait(&t->done_cv, &t->mu);
	for (sub **p = &t->subs; *p; p = &(*p)->next) {
		if ((*p)->id == id) {
			sub *s = *p;
			*p = s->next;
			free(s);
			break;
		}
	}
	pthread_mutex_unlock(&t->mu);
}

int s0__cancel_sleep(s0_cancel_token *t, int64_t ms)
{
	if (ms < 0)
		ms = 0;
	if (!t) {
		struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		return S0_OK;
	}
	struct timespec dl = s0__deadline_after_ms(CLOCK_MONOTONIC, ms);
	int rc = S0_OK;
	pthread_mutex_lock(&t->mu);
	while (!atomic_load(&t->canceled)) {
		if (pthread_cond_timedwait(&t->cv, &t->mu, &dl) == ETIMEDOUT)
			break;
	}
	if (atomic_load(&t->canceled))
		rc = S0_ECANCELED;
	pthread_mutex_unlock(&t->mu);
	return rc;
}

static void link_fire(void *arg)
{
	s0_cancel_token_cancel(arg);
}

int s0__cancel_link_init(s0__cancel_link *l, s0_cancel_token *a, s0_cancel_token *b,
                         s0_error **err)
{
	l->parents[0] = a;
	l->parents[1] = b;
	l->ids[0] = l->ids[1] = 0;
	int rc = s0_cancel_token_new(&l->token, err);
	if (rc < 0)
		return rc;
	for (int i = 0; i < 2; i++) {
		if (!l->parents[i])
			continue;
		l->ids[i] = s0__cancel_subscribe(l->parents[i], link_fire, l->token);
		if (!l->ids[i] && s0_cancel_token_is_canceled(l->parents[i]))
			s0_cancel_token_cancel(l->token);
	}
	return S0_OK;
}

void s0__cancel_link_free(s0__cancel_link *l)
{
	for (int i = 0; i < 2; i++)
		s0__cancel_unsubscribe(l->parents[i], l->ids[i]);
	s0_cancel_token_free(l->token);
	l->token = NULL;
}
