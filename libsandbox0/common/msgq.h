/*
 * A queue of text messages (one WebSocket text frame each), shared by the
 * streams (local/api/stream.h) and the server's WebSocket connections
 * (server/ws.h). Not thread-safe: its owner locks.
 */
#ifndef S0_MSGQ_H
#define S0_MSGQ_H

#include <stddef.h>

#include "sandbox0/common.h"

typedef struct s0__smsg {
	struct s0__smsg *next;
	size_t len;
	char data[]; /* NUL-terminated */
} s0__smsg;

typedef struct s0__smsgq {
	s0__smsg *head, *tail;
	size_t bytes, count;
} s0__smsgq;

/* Append a copy of len bytes; 0, or -1 when out of memory. */
int s0__smsgq_push(s0__smsgq *q, const char *data, size_t len);
/* Move every message of from to the end of to. */
void s0__smsgq_move(s0__smsgq *to, s0__smsgq *from);
/* Take the first message (the caller's, free()), or NULL. */
s0__smsg *s0__smsgq_pop(s0__smsgq *q);
void s0__smsgq_clear(s0__smsgq *q);
/*
 * Take the first message for a stream's recv: *msg_out gets a new
 * NUL-terminated copy (the caller's, free()) and *len_out (nullable) its
 * length in bytes. Returns 1 when a message was taken, 0 when q is empty
 * (outputs untouched), or S0_ENOMEM (the message is dropped).
 */
int s0__smsgq_take(s0__smsgq *q, char **msg_out, size_t *len_out, s0_error **err);

#endif
