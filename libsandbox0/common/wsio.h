/*
 * The socket side of a wslay connection, shared by the client's WebSocket
 * streams (client/ws_client.c) and the server's upgraded connections
 * (server/ws.c): the bodies of wslay's recv and send callbacks. Not
 * thread-safe: the one thread that runs the wslay context calls them.
 */
#ifndef S0_WSIO_H
#define S0_WSIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <wslay/wslay.h>

/*
 * wslay's recv callback on fd: first hands out the bytes read past the
 * handshake (extra[*extra_off .. extra_len), borrowed; *extra_off advanced
 * by what was copied), then reads fd without blocking, retrying EINTR.
 * ctx: the wslay context whose error is set on failure. buf: len bytes
 * (the caller's). Returns the bytes put in buf (> 0), or -1 with ctx's error
 * WSLAY_ERR_WOULDBLOCK (nothing to read now) or WSLAY_ERR_CALLBACK_FAILURE
 * (peer closed, or a socket error).
 */
ssize_t s0__wsio_recv(wslay_event_context_ptr ctx, int fd, const char *extra, size_t extra_len,
                      size_t *extra_off, uint8_t *buf, size_t len);

/*
 * wslay's send callback on fd: one send() with MSG_NOSIGNAL, retrying EINTR.
 * data: len bytes (borrowed). Returns the bytes sent (>= 0), or -1 with ctx's
 * error WSLAY_ERR_WOULDBLOCK (the socket buffer is full) or
 * WSLAY_ERR_CALLBACK_FAILURE (any other socket error).
 */
ssize_t s0__wsio_send(wslay_event_context_ptr ctx, int fd, const uint8_t *data, size_t len);

#endif
