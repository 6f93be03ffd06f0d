/*
 * The sleep between two polls of a wait (wait.c), cut short by the
 * transport's change notification when it has one (transport.h
 * watch_*; the in-process transport: the engine's, local/lifecycle/watch.h).
 */
#include "client/client_internal.h"
#include "client/wait_internal.h"
#include "common/cancel.h"

uint64_t s0__wait_version(s0_client *c, const char *sandbox_id)
{
	return c->ops->watch_version ? c->ops->watch_version(c->tctx, sandbox_id) : 0;
}

int s0__wait_sleep(s0_client *c, const char *sandbox_id, uint64_t since, int64_t ms,
                   s0_cancel_token *tok)
{
	if (!c->ops->watch_arm)
		return c->clock.sleep_ms(c->clock.ctx, ms, tok);
	/* One token the clock's sleep observes: fired by tok or by a change. */
	s0__cancel_link link;
	if (s0__cancel_link_init(&link, tok, NULL, NULL) < 0)
		return c->clock.sleep_ms(c->clock.ctx, ms, tok);
	void *h = c->ops->watch_arm(c->tctx, sandbox_id, since, link.token);
	c->clock.sleep_ms(c->clock.ctx, ms, link.token);
	c->ops->watch_disarm(c->tctx, h);
	s0__cancel_link_free(&link);
	return s0_cancel_token_is_canceled(tok) ? S0_ECANCELED : S0_OK;
}
