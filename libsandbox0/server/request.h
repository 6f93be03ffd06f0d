/*
 * One request's state in the server, from its raw target to its completion
 * (conn.c: the libmicrohttpd callbacks; dispatch.c: the handler on a worker
 * thread and the long-poll parking of docs/wire.md "Long-poll").
 */
#ifndef S0_SERVER_REQUEST_H
#define S0_SERVER_REQUEST_H

#include "server/loop.h"
#include "server/server_internal.h"

typedef struct s0__sreq {
	int64_t t0_ms;
	char rid[S0__REQUEST_ID_MAX];
	char client[64];
	char method[16];
	char *path;        /* raw path (percent-encoded, no query) */
	char *query;       /* raw query, or NULL */
	size_t target_len; /* bytes of the raw request target */
	size_t head_bytes; /* header fields, "Name: value\r\n" each */
	bool started;      /* the access handler has seen it */
	const char *team;  /* borrowed from the keyring, or team_buf */
	char team_buf[S0__SERVER_TEAM_MAX];
	bool admin_keys;   /* a key route, with the admin credential */
	s0__buf body;
	size_t limit, drained;
	size_t reserved;   /* share of the server's body budget */
	const char *limit_wire;
	bool over, replied, counted;
	int status;
	size_t bytes;

	/* handed to a worker (conn.c sets these on the MHD thread before) */
	s0_server *s;
	struct MHD_Connection *conn;
	int fd;              /* the connection's socket (watched for hang-ups while parked) */
	s0__headers hdrs;    /* request headers, copied */
	bool dispatched;     /* suspended and handed to a worker */
	bool done;           /* resp is final: the MHD thread sends it */
	s0__http_response resp;
	struct s0__ws *ws; /* set: resp is the 101 of this WebSocket (ws.h), until upgraded */
	struct s0__route_tunnel *tunnel; /* set: a route's 101 sent, not yet upgraded */
	struct s0__sse *sse; /* set: a 200 resp is the head of this event stream (sse.h) */
	struct s0__route_upload *upload; /* set: a route's body streams (route_upload.h) */

	/* long-poll (Prefer: wait); the flags under s->park_mu */
	int wait_s;               /* the wait asked and granted (0: none) */
	int64_t wait_deadline_ms; /* real monotonic */
	void *sub;                /* the watch subscription while waiting */
	s0__loop_src *src;        /* parked on the loop */
	bool changed;             /* the watch fired since the last handler run */
	bool final;               /* answer now: deadline, hang-up or shutdown */
} s0__sreq;

/*
 * Parse `Prefer: wait=N` of a GET with If-None-Match (MHD thread, before the
 * hand-over): sets r->wait_s (capped at S0__SERVER_WAIT_MAX_S) and the deadline.
 */
void s0__server_longpoll_prepare(s0__sreq *r);

/*
 * The worker's job: run the handler into r->resp (parking a long-poll on the
 * loop until it may answer), mark r->done and resume the connection. After
 * the resume r belongs to the MHD thread again.
 */
void s0__server_run(void *r);

/* Run the handler once into resp (any thread). */
int s0__server_call_handler(s0_server *s, s0__sreq *r, s0__http_response *resp);

#endif
