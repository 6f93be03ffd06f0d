/* One-shot armings and the blocking wait over the engine's watch (watch.h). */
#include <stdatomic.h>
#include <stdlib.h>

#include "common/cancel.h"
#include "common/internal.h"
#include "local/lifecycle/engine_internal.h"
#include "local/lifecycle/watch.h"

struct s0__engine_watch_arm {
	s0__engine_watch_sub *sub;
	uint64_t since;
	s0__engine_watch_once_fn fn;
	void *arg;
	atomic_bool fired;
};

static void fire(s0__engine_watch_arm *a)
{
	if (!atomic_exchange(&a->fired, true))
		a->fn(a->arg);
}

static void on_bump(void *arg, const char *sandbox_id, uint64_t version)
{
	(void)sandbox_id;
	s0__engine_watch_arm *a = arg;
	if (version > a->since)
		fire(a);
}

s0__engine_watch_arm *s0__engine_watch_arm_once(s0__engine_watch *w, const char *sandbox_id,
                                                uint64_t since, s0__engine_watch_once_fn fn,
                                                void *arg)
{
	if (!w || !sandbox_id || !fn)
		return NULL;
	s0__engine_watch_arm *a = calloc(1, sizeof *a);
	if (!a)
		return NULL;
	a->since = since;
	a->fn = fn;
	a->arg = arg;
	atomic_init(&a->fired, false);
	if (s0__engine_watch_subscribe(w, sandbox_id, on_bump, a, &a->sub) != S0_OK) {
		free(a);
		return NULL;
	}
	/* subscribed first, then looked: a bump in between fires either way, once */
	if (s0__engine_watch_version(w, sandbox_id) > since)
		fire(a);
	return a;
}

void s0__engine_watch_disarm(s0__engine_watch *w, s0__engine_watch_arm *a)
{
	if (!a)
		return;
	s0__engine_watch_unsubscribe(w, a->sub);
	free(a);
}

static void fire_token(void *arg)
{
	s0_cancel_token_cancel(arg);
}

int s0__engine_watch_wait(s0__engine *e, const char *sandbox_id, uint64_t since,
                          int64_t timeout_ms, s0_cancel_token *cancel, uint64_t *version_out)
{
	s0__engine_watch *w = s0__engine_watch_of(e);
	if (!sandbox_id)
		sandbox_id = "";
	/* One token the clock's sleep observes: fired by cancel or by the change. */
	s0__cancel_link link;
	if (s0__cancel_link_init(&link, cancel, NULL, NULL) < 0)
		return S0_ENOMEM;
	s0__engine_watch_arm *a = s0__engine_watch_arm_once(w, sandbox_id, since, fire_token,
	                                                    link.token);
	int rc = S0_OK;
	if (!a) {
		rc = S0_ENOMEM;
	} else if (s0__engine_watch_version(w, sandbox_id) <= since) {
		int64_t ms = timeout_ms < 0 ? INT64_MAX / 4 : timeout_ms;
		e->opt.clock.sleep_ms(e->opt.clock.ctx, ms, link.token);
	}
	s0__engine_watch_disarm(w, a);
	s0__cancel_link_free(&link);
	uint64_t v = s0__engine_watch_version(w, sandbox_id);
	if (rc == S0_OK) {
		if (v > since) {
			if (version_out)
				*version_out = v;
		} else {
			rc = s0_cancel_token_is_canceled(cancel) ? S0_ECANCELED : S0_ETIMEDOUT;
		}
	}
	return rc;
}
