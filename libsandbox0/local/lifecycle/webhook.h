/*
 * Webhook outbox and delivery worker (webhook.c; MFB-15).
 *
 * Thread safety: all functions are safe from any thread.
 */
#ifndef S0_WEBHOOK_H
#define S0_WEBHOOK_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "sandbox0/clock.h"
#include "sandbox0/error.h"

typedef struct s0__engine s0__engine;
typedef struct s0__webhooks s0__webhooks;

/* Open the outbox (durable: <dir>/webhook-outbox.db; else in memory) and
 * start the delivery worker. */
int s0__webhooks_new(s0__engine *e, bool durable, s0__webhooks **out, s0_error **err);
/* Stop the worker (a held `webhook_ack_delay` is released) and close. NULL ok. */
void s0__webhooks_free(s0__webhooks *w);
/* Append an event for a sandbox with a webhook: 1 appended, 0 no webhook, <0 error. */
int s0__webhook_event(s0__engine *e, const char *id, const char *event);
/*
 * Before a memory capture is authorised: for a sandbox with a webhook,
 * refuse (503 webhook_outbox_unavailable) without a durable outbox, else
 * append `sandbox.pausing` and wait until every event of the sandbox is
 * delivered and acknowledged (503 webhook_drain_timeout past deadline_ms on
 * the engine clock or 30 s of real time; S0_ECANCELED when cancel fires).
 * S0_OK at once for a sandbox without a webhook.
 */
int s0__webhook_before_capture(s0__engine *e, const char *id, int64_t deadline_ms,
                               s0_cancel_token *cancel, s0_error **err);
/* Record (on the acknowledgement tick counter) that capture of id started. */
void s0__webhook_capture_started(s0__engine *e, const char *id);
/* {durable, tick, posts, failures, pending, acked, last_ack_tick, events[],
 *  capture_started_tick{id: tick}} */
cJSON *s0__webhooks_inspect(s0__engine *e);

#endif
