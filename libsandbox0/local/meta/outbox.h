/*
 * The durable webhook outbox (lifecycle/webhook.c delivers from it; MFB-15),
 * behind the metadata seam: each implementation of meta.h registers an
 * outbox too (registry.c), so the engine sees no SQL. SQLite keeps it in
 * its own file, <data>/webhook-outbox.db (WAL, synchronous=FULL), apart
 * from meta.db so a busy receiver never contends with lifecycle
 * transactions; without a location it lives in memory (not durable).
 *
 * Rows: events (increasing seq; sandbox, event name, url, secret, body,
 * attempts, acknowledged with the tick of the acknowledgement) and the
 * tick each sandbox's capture started at. Ticks are the caller's logical
 * counter; the store only keeps them.
 *
 * Thread safety: calls are serialised by the implementation; each call is
 * atomic and, for a durable outbox, durable when it returns S0_OK.
 * Calls block on the store.
 */
#ifndef S0_META_OUTBOX_H
#define S0_META_OUTBOX_H

#include <stdbool.h>
#include <stdint.h>

#include "common/internal.h"

typedef struct s0__outbox s0__outbox;

/* One event to deliver; strings malloc'd (s0__outbox_event_clear). */
typedef struct s0__outbox_event {
	int64_t seq;
	char *sandbox_id, *event, *url, *secret, *body;
	int64_t attempts;
	bool acked;
	int64_t ack_tick; /* 0 until acknowledged */
} s0__outbox_event;

/* Free ev's strings and zero it; NULL-safe. */
void s0__outbox_event_clear(s0__outbox_event *ev);

/* The calls of an implementation (see the dispatching functions below). */
typedef struct s0__outbox_ops {
	void (*close)(s0__outbox *o);
	int (*append)(s0__outbox *o, const s0__outbox_event *ev, int64_t now_ms, s0_error **err);
	int (*next)(s0__outbox *o, s0__outbox_event *out, s0_error **err);
	int (*attempted)(s0__outbox *o, int64_t seq, bool acked, int64_t ack_tick, s0_error **err);
	int (*count)(s0__outbox *o, const char *sandbox_id, bool acked, int64_t *out, s0_error **err);
	int (*max_ticks)(s0__outbox *o, int64_t *ack_tick, int64_t *capture_tick, s0_error **err);
	int (*capture_put)(s0__outbox *o, const char *sandbox_id, int64_t tick, s0_error **err);
	int (*each_event)(s0__outbox *o, void (*fn)(const s0__outbox_event *ev, void *ud), void *ud,
	                  s0_error **err);
	int (*each_capture)(s0__outbox *o, void (*fn)(const char *sandbox_id, int64_t tick, void *ud),
	                    void *ud, s0_error **err);
} s0__outbox_ops;

/* The common head of every implementation's handle (embed it first). */
struct s0__outbox {
	const s0__outbox_ops *ops;
};

/* An implementation's open: location is the data directory, or NULL for
 * an in-memory (not durable) outbox. */
typedef int (*s0__outbox_open_fn)(const char *location, s0__outbox **out, s0_error **err);

/*
 * Open the outbox of the metadata implementation named backend (NULL or ""
 * = the default) at location (NULL = in memory). S0_EINVAL
 * unknown_meta_backend; S0_EINTERNAL webhook_outbox when the store cannot
 * be opened.
 */
int s0__outbox_open(const char *backend, const char *location, s0__outbox **out,
                    s0_error **err);
/* Close and free; NULL-safe. */
void s0__outbox_close(s0__outbox *o);
/* Append an event (sandbox_id, event, url, secret and body of ev; the rest
 * is ignored) created at now_ms; it becomes unacknowledged with 0 attempts. */
int s0__outbox_append(s0__outbox *o, const s0__outbox_event *ev, int64_t now_ms, s0_error **err);
/* The next event to deliver: unacknowledged, fewest attempts first, then
 * oldest. 1 and *out filled (clear it), 0 when none, <0 on failure. */
int s0__outbox_next(s0__outbox *o, s0__outbox_event *out, s0_error **err);
/* Count one delivery attempt of seq; acked records the acknowledgement at
 * ack_tick. An unknown seq is not an error (nothing changes). */
int s0__outbox_attempted(s0__outbox *o, int64_t seq, bool acked, int64_t ack_tick,
                         s0_error **err);
/* How many events are acknowledged (acked) or not, of sandbox_id (NULL = all). */
int s0__outbox_count(s0__outbox *o, const char *sandbox_id, bool acked, int64_t *out,
                     s0_error **err);
/* The highest acknowledgement tick and capture tick recorded (0 = none). */
int s0__outbox_max_ticks(s0__outbox *o, int64_t *ack_tick, int64_t *capture_tick,
                         s0_error **err);
/* Record (replace) the tick sandbox_id's capture started at. */
int s0__outbox_capture_put(s0__outbox *o, const char *sandbox_id, int64_t tick, s0_error **err);
/* Call fn for every event in seq order (strings valid during the call;
 * url, secret and body are not read and are NULL). */
int s0__outbox_each_event(s0__outbox *o, void (*fn)(const s0__outbox_event *ev, void *ud),
                          void *ud, s0_error **err);
/* Call fn for every recorded capture start. */
int s0__outbox_each_capture(s0__outbox *o,
                            void (*fn)(const char *sandbox_id, int64_t tick, void *ud), void *ud,
                            s0_error **err);

#endif
