/* The real clock and the manual test clock (sandbox0/clock.h). */
#include "common/cancel.h"
#include "common/deadline.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

struct timespec s0__deadline_after_ms(clockid_t clock, int64_t ms)
{
	struct timespec t;
	clock_gettime(clock, &t);
	if (ms < 0)
		ms = 0;
	t.tv_sec += (time_t)(ms / 1000);
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

static int64_t real_now(void *ctx)
{
	(void)ctx;
	return s0__real_unix_ms();
}

static int64_t real_mono(void *ctx)
{
	(void)ctx;
	return s0__real_monotonic_ms();
}

static int real_sleep(void *ctx, int64_t ms, s0_cancel_token *cancel)
{
	(void)ctx;
	if (s0_cancel_token_is_canceled(cancel))
		return S0_ECANCELED;
	return s0__cancel_sleep(cancel, ms);
}

void s0_clock_real(s0_clock *out)
{
	out->version = S0_CLOCK_VERSION;
	out->ctx = NULL;
	out->now_unix_ms = real_now;
	out->monotonic_ms = real_mono;
	out->sleep_ms = real_sleep;
}

struct s0_manual_clock {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int64_t now;
	uint32_t flags;
};

int s0_manual_clock_new(int64_t start_unix_ms, uint32_t flags, s0_manual_clock **out,
                        s0_error **err)
{
	s0_manual_clock *mc = calloc(1, sizeof *mc);
	if (!mc)
		return s0__error_nomem(err);
	pthread_mutex_init(&mc->mu, NULL);
	pthread_cond_init(&mc->cv, NULL);
	mc->now = start_unix_ms ? start_unix_ms : s0__real_unix_ms();
	mc->flags = flags;
	s0__obj_inc();
	*out = mc;
	return S0_OK;
}

void s0_manual_clock_free(s0_manual_clock *mc)
{
	if (!mc)
		return;
	pthread_mutex_destroy(&mc->mu);
	pthread_cond_destroy(&mc->cv);
	free(mc);
	s0__obj_dec();
}

int64_t s0_manual_clock_now(const s0_manual_clock *cmc)
{
	s0_manual_clock *mc = (s0_manual_clock *)cmc;
	pthread_mutex_lock(&mc->mu);
	int64_t n = mc->now;
	pthread_mutex_unlock(&mc->mu);
	return n;
}

void s0_manual_clock_advance(s0_manual_clock *mc, int64_t ms)
{
	if (ms <= 0)
		return;
	pthread_mutex_lock(&mc->mu);
	mc->now = mc->now > INT64_MAX - ms ? INT64_MAX : mc->now + ms; /* saturate */
	pthread_cond_broadcast(&mc->cv);
	pthread_mutex_unlock(&mc->mu);
}

static int64_t manual_now(void *ctx)
{
	return s0_manual_clock_now(ctx);
}

static void manual_wake(void *arg)
{
	s0_manual_clock *mc = arg;
	pthread_mutex_lock(&mc->mu);
	pthread_cond_broadcast(&mc->cv);
	pthread_mutex_unlock(&mc->mu);
}

static int manual_sleep(void *ctx, int64_t ms, s0_cancel_token *cancel)
{
	s0_manual_clock *mc = ctx;
	if (s0_cancel_token_is_canceled(cancel))
		return S0_ECANCELED;
	if (ms <= 0)
		return S0_OK;
	if (mc->flags & S0_MANUAL_CLOCK_AUTO_ADVANCE) {
		s0_manual_clock_advance(mc, ms);
		return S0_OK;
	}
	int id = s0__cancel_subscribe(cancel, manual_wake, mc);
	pthread_mutex_lock(&mc->mu);
	int64_t until = mc->now > INT64_MAX - ms ? INT64_MAX : mc->now + ms; /* saturate */
	while (mc->now < until && !s0_cancel_token_is_canceled(cancel))
		pthread_cond_wait(&mc->cv, &mc->mu);
	pthread_mutex_unlock(&mc->mu);
	s0__cancel_unsubscribe(cancel, id);
	return s0_cancel_token_is_canceled(cancel) ? S0_ECANCELED : S0_OK;
}

void s0_manual_clock_get(s0_manual_clock *mc, s0_clock *out)
{
	out->version = S0_CLOCK_VERSION;
	out->ctx = mc;
	out->now_unix_ms = manual_now;
	out->monotonic_ms = manual_now;
	out->sleep_ms = manual_sleep;
}
