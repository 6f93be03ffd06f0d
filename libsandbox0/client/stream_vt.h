/*
 * What an s0_stream is (sandbox0/streams.h): a vtable its implementations
 * embed first — the WebSocket client of the HTTP transport (ws_client.c) and
 * the in-process driver of the local backend (local/api/stream_local.c) —
 * so the public calls dispatch the same way on both transports.
 */
#ifndef S0_CLIENT_STREAM_VT_H
#define S0_CLIENT_STREAM_VT_H

#include "common/internal.h"
#include "sandbox0/streams.h"

typedef struct s0__stream_vt {
	int (*send)(s0_stream *st, const char *json, size_t len, s0_error **err);
	int (*recv)(s0_stream *st, int64_t timeout_ms, char **msg_out, size_t *len_out,
	            s0_error **err);
	int (*close_code)(const s0_stream *st, const char **reason_out);
	void (*free)(s0_stream *st);
} s0__stream_vt;

struct s0_stream {
	const s0__stream_vt *vt;
};

/* Check stream options (version, kind, ids, after, wake timeout); S0_EINVAL names the fault. */
int s0__stream_options_check(const s0_stream_options *o, s0_error **err);

/* The route of a stream: "/api/v1/sandboxes/<id>/…/ws[?after=N]" (malloc'd), or NULL. */
char *s0__stream_route(const s0_stream_options *o);

/* The HTTP transport's streams: a WebSocket to the server (ws_client.c). */
struct s0_client;
int s0__ws_client_open(struct s0_client *c, const s0_stream_options *o, s0_stream **out,
                       s0_error **err);

#endif
