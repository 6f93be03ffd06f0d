/* The dispatching side of outbox.h. */
#include <stdlib.h>
#include <string.h>

#include "local/meta/outbox.h"

void s0__outbox_event_clear(s0__outbox_event *ev)
{
	if (!ev)
		return;
	free(ev->sandbox_id);
	free(ev->event);
	free(ev->url);
	free(ev->secret);
	free(ev->body);
	memset(ev, 0, sizeof *ev);
}

static int bad(s0_error **err, const char *what)
{
	return s0__error_set(err, S0_EINVAL, "bad_request", "webhook outbox: %s", what);
}

void s0__outbox_close(s0__outbox *o)
{
	if (o)
		o->ops->close(o);
}

int s0__outbox_append(s0__outbox *o, const s0__outbox_event *ev, int64_t now_ms, s0_error **err)
{
	if (!ev || !ev->sandbox_id || !ev->event || !ev->url || !ev->secret || !ev->body)
		return bad(err, "append: sandbox, event, url, secret and body are required");
	return o->ops->append(o, ev, now_ms, err);
}

int s0__outbox_next(s0__outbox *o, s0__outbox_event *out, s0_error **err)
{
	if (!out)
		return bad(err, "next: out is required");
	return o->ops->next(o, out, err);
}

int s0__outbox_attempted(s0__outbox *o, int64_t seq, bool acked, int64_t ack_tick,
                         s0_error **err)
{
	return o->ops->attempted(o, seq, acked, ack_tick, err);
}

int s0__outbox_count(s0__outbox *o, const char *sandbox_id, bool acked, int64_t *out,
                     s0_error **err)
{
	if (!out)
		return bad(err, "count: out is required");
	return o->ops->count(o, sandbox_id, acked, out, err);
}

int s0__outbox_max_ticks(s0__outbox *o, int64_t *ack_tick, int64_t *capture_tick,
                         s0_error **err)
{
	if (!ack_tick || !capture_tick)
		return bad(err, "max_ticks: outputs are required");
	return o->ops->max_ticks(o, ack_tick, capture_tick, err);
}

int s0__outbox_capture_put(s0__outbox *o, const char *sandbox_id, int64_t tick, s0_error **err)
{
	if (!sandbox_id)
		return bad(err, "capture_put: sandbox id is required");
	return o->ops->capture_put(o, sandbox_id, tick, err);
}

int s0__outbox_each_event(s0__outbox *o, void (*fn)(const s0__outbox_event *ev, void *ud),
                          void *ud, s0_error **err)
{
	if (!fn)
		return bad(err, "each_event: a function is required");
	return o->ops->each_event(o, fn, ud, err);
}

int s0__outbox_each_capture(s0__outbox *o,
                            void (*fn)(const char *sandbox_id, int64_t tick, void *ud), void *ud,
                            s0_error **err)
{
	if (!fn)
		return bad(err, "each_capture: a function is required");
	return o->ops->each_capture(o, fn, ud, err);
}
