/*
 * WebSocket connections of `s0 serve` (docs/wire.md §8.2, docs/threading.md
 * "Parked connections"): the handshake on a handler thread, then the socket
 * libmicrohttpd hands over after `101` lives on the server's event loop, with
 * wslay for every frame (RFC 6455; no framing of ours). The stream behind it
 * (local/api/stream.h) runs on handler threads, one job at a time per
 * connection, and its messages wait in bounded queues: past
 * S0__STREAM_QUEUE_MAX queued toward a slow reader the stream is not asked
 * for more until the reader catches up, and past it queued either way the
 * socket is not read (the client's sends push back).
 */
#ifndef S0_SERVER_WS_H
#define S0_SERVER_WS_H

#include <stdbool.h>

#include "local/api/stream.h"
#include "server/server_internal.h"

typedef struct s0__ws s0__ws;

/* Whether the request asks for a WebSocket (GET, Upgrade: websocket, version 13, a key). */
bool s0__ws_is_upgrade(const char *method, const s0__headers *h);

/*
 * The Sec-WebSocket-Accept value for the request's Sec-WebSocket-Key
 * (RFC 6455 §4.2.2) into out (at least 29 bytes). -1 when the key is not
 * 16 bytes in base64.
 */
int s0__ws_accept_value(const char *key, char out[29]);

/* A connection-to-be for server s; NULL when out of memory. */
s0__ws *s0__ws_new(s0_server *s);

/* The stream's kick function (stream.h); arg is the s0__ws. */
void s0__ws_kick(void *arg);

/* Give the opened stream (of s->cfg.streams) to the connection (taken). */
void s0__ws_set_stream(s0__ws *ws, void *st);

/* Free a connection that never started (the upgrade was refused); NULL-safe. */
void s0__ws_discard(s0__ws *ws);

/* libmicrohttpd's upgrade handler (MHD_UpgradeHandler); cls is the s0__ws. */
void s0__ws_upgraded(void *cls, struct MHD_Connection *connection, void *con_cls,
                     const char *extra_in, size_t extra_in_size, MHD_socket sock,
                     struct MHD_UpgradeResponseHandle *urh);

#endif
