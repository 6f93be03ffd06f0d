/* Internals shared by the stream sources (stream*.c); see stream.h. */
#ifndef S0_API_STREAM_INT_H
#define S0_API_STREAM_INT_H

#include <cjson/cJSON.h>
#include <pthread.h>

#include "local/api/stream.h"
#include "local/lifecycle/engine.h"
#include "local/lifecycle/watch.h"
#include "local/fsview/router.h"
#include "local/runtime/runtime.h"

/* How often a stream looks again for what only time brings (virtual-time output, events). */
#define S0__STREAM_RETRY_MS 100

typedef struct s0__watchset s0__watchset;

struct s0__stream {
	s0__engine *e;
	s0__stream_kind kind;
	char team[S0__ID_MAX];
	char sandbox[S0__ID_MAX];
	char id2[256];
	s0__stream_kick_fn kick;
	void *kick_arg;
	s0__engine_watch_sub *sub; /* the sandbox's changes (pause, delete) */
	pthread_mutex_t mu;
	bool sandbox_changed; /* under mu */
	const char *reason;   /* of the close code last returned */
	/* context */
	int64_t cur_out, cur_err, cur_pty;
	cJSON *pending_done; /* request ids whose output is not all out yet (array; NULL: none) */
	/* session */
	int64_t after;
	/* a stream driven on the node running the sandbox (fwdstream_peer.c; NULL: here) */
	struct s0__rstream *remote;
	/* watch (stream_watch.c) */
	struct s0__watchset *watches;
};

/* Append a JSON object as a message (takes o); -1 when out of memory. */
int s0__stream_emit(s0__smsgq *out, cJSON *o);
/* {"type":"error","error":msg[,"request_id"]} */
int s0__stream_emit_error(s0__smsgq *out, const char *request_id, const char *msg);

/* One contexts/sessions call on the running runtime (no wake). */
int s0__stream_proc(s0__stream *st, int op, const cJSON *body, const char *after,
                    const char *limit, cJSON **data, s0_error **err);

/* One contexts/sessions call of an input message: op with the members of msg
 * named in keys (NULL-terminated; absent ones left out) as its body. Returns
 * 1 when the call succeeded, 0 when it failed and an error message for rid
 * (nullable) went to out, -1 when out of memory. */
int s0__stream_input_call(s0__stream *st, int op, const cJSON *msg, const char *const *keys,
                          const char *rid, s0__smsgq *out);

/* The sandbox changed since the last look: 0 when it still runs, else a close code. */
int s0__stream_check_sandbox(s0__stream *st);

/* Per kind (stream_ctx.c, stream_ses.c, stream_watch.c). */
int s0__stream_ctx_input(s0__stream *st, const cJSON *msg, s0__smsgq *out);
int s0__stream_ctx_pull(s0__stream *st, size_t room, s0__smsgq *out, int64_t *retry_ms);
int s0__stream_ses_open(s0__stream *st, const char *after, s0_error **err);
int s0__stream_ses_input(s0__stream *st, const cJSON *msg, s0__smsgq *out);
int s0__stream_ses_pull(s0__stream *st, size_t room, s0__smsgq *out, int64_t *retry_ms);
int s0__stream_watch_open(s0__stream *st, s0_error **err);
int s0__stream_watch_input(s0__stream *st, const cJSON *msg, s0__smsgq *out);
int s0__stream_watch_pull(s0__stream *st, size_t room, s0__smsgq *out, int64_t *retry_ms);
void s0__stream_watch_free(s0__stream *st);

#endif
