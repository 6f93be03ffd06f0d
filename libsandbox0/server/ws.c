/* WebSocket connections over wslay on the event loop (ws.h). */
#include <errno.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <wslay/wslay.h>

#include "common/wsio.h"
#include "server/loop.h"
#include "server/workers.h"
#include "server/ws.h"

/* A close sent and no answer: the connection is dropped after this. */
#define CLOSE_WAIT_MS 10000
/* The kernel's send buffer of an upgraded socket (fixed: no autotuning past it),
 * so a slow reader's backlog stays in our bounded queues, not in the kernel. */
#define SNDBUF_BYTES (64 << 10)

struct s0__ws {
	s0_server *s;
	void *st; /* the stream (s->cfg.streams) */
	int fd;
	struct MHD_UpgradeResponseHandle *urh;
	wslay_event_context_ptr ctx; /* loop thread only */
	char *extra;                 /* bytes libmicrohttpd read past the head */
	size_t extra_len, extra_off;
	bool close_queued;           /* loop thread only */
	int64_t close_at, retry_at;  /* loop thread only: deadlines (0: none) */
	bool lingering;              /* our close is out: drain the peer until it leaves */
	bool reading_all;            /* loop thread only: the peer hung up, read to its end */

	pthread_mutex_t mu;
	s0__loop_src *src; /* NULL before the start and after the end */
	s0__smsgq inbox;   /* client → stream */
	s0__smsgq outbox;  /* stream → client */
	bool kicked;       /* the stream has news */
	bool pumping;      /* a handler thread runs the stream */
	int app_close;     /* the stream's close code (0: none) */
	int64_t retry_ms;  /* the stream asked to be pulled again after this */
	bool ended;        /* the socket side is gone */
	int refs;          /* the socket side + a running pump */
};

/* ---- handshake ---- */

bool s0__ws_is_upgrade(const char *method, const s0__headers *h)
{
	const char *up = s0__headers_get(h, "Upgrade");
	const char *conn = s0__headers_get(h, "Connection");
	return !strcmp(method, "GET") && up && !strcasecmp(up, "websocket") && conn &&
	       strcasestr(conn, "upgrade") && s0__headers_get(h, "Sec-WebSocket-Key");
}

int s0__ws_accept_value(const char *key, char out[29])
{
	static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
	unsigned char raw[32];
	size_t raw_len = 0;
	if (!key || strlen(key) != 24 ||
	    sodium_base642bin(raw, sizeof raw, key, 24, NULL, &raw_len, NULL,
	                      sodium_base64_VARIANT_ORIGINAL) != 0 ||
	    raw_len != 16)
		return -1;
	char cat[24 + sizeof guid];
	memcpy(cat, key, 24);
	memcpy(cat + 24, guid, sizeof guid);
	unsigned char sha[20];
	if (gnutls_hash_fast(GNUTLS_DIG_SHA1, cat, 24 + sizeof guid - 1, sha) < 0)
		return -1;
	sodium_bin2base64(out, 29, sha, sizeof sha, sodium_base64_VARIANT_ORIGINAL);
	return 0;
}

/* ---- life ---- */

s0__ws *s0__ws_new(s0_server *s)
{
	s0__ws *ws = calloc(1, sizeof *ws);
	if (!ws)
		return NULL;
	ws->s = s;
	pthread_mutex_lock(&s->mu);
	s->ws_live++;
	pthread_mutex_unlock(&s->mu);
	ws->fd = -1;
	ws->kicked = true; /* the first pull: output already there */
	pthread_mutex_init(&ws->mu, NULL);
	return ws;
}

void s0__ws_set_stream(s0__ws *ws, void *st)
{
	ws->st = st;
}

static void ws_free(s0__ws *ws)
{
	if (ws->st)
		ws->s->cfg.streams->free(ws->st);
	if (ws->ctx)
		wslay_event_context_free(ws->ctx);
	s0__smsgq_clear(&ws->inbox);
	s0__smsgq_clear(&ws->outbox);
	pthread_mutex_destroy(&ws->mu);
	free(ws->extra);
	pthread_mutex_lock(&ws->s->mu);
	ws->s->ws_live--;
	pthread_mutex_unlock(&ws->s->mu);
	free(ws);
}

void s0__ws_discard(s0__ws *ws)
{
	if (ws)
		ws_free(ws);
}

void s0__ws_kick(void *arg)
{
	s0__ws *ws = arg;
	pthread_mutex_lock(&ws->mu);
	ws->kicked = true;
	if (ws->src)
		s0__loop_signal(ws->src);
	pthread_mutex_unlock(&ws->mu);
}

/* Drop a reference; the last one frees. */
static void unref(s0__ws *ws)
{
	pthread_mutex_lock(&ws->mu);
	bool last = --ws->refs == 0;
	pthread_mutex_unlock(&ws->mu);
	if (last)
		ws_free(ws);
}

/* Loop thread: the socket side ends; libmicrohttpd closes the socket. */
static void teardown(s0__ws *ws)
{
	pthread_mutex_lock(&ws->mu);
	s0__loop_src *src = ws->src;
	ws->src = NULL;
	ws->ended = true;
	pthread_mutex_unlock(&ws->mu);
	if (src)
		s0__loop_remove(src);
	MHD_upgrade_action(ws->urh, MHD_UPGRADE_ACTION_CLOSE);
	unref(ws);
}

/* ---- the stream, on a handler thread ---- */

static void pump(void *arg)
{
	s0__ws *ws = arg;
	pthread_mutex_lock(&ws->mu);
	s0__smsgq in = ws->inbox;
	ws->inbox = (s0__smsgq){0};
	bool pull = ws->kicked && ws->outbox.bytes < S0__STREAM_QUEUE_MAX;
	size_t room = S0__STREAM_QUEUE_MAX - (ws->outbox.bytes < S0__STREAM_QUEUE_MAX
	                                          ? ws->outbox.bytes
	                                          : S0__STREAM_QUEUE_MAX);
	if (pull)
		ws->kicked = false;
	pthread_mutex_unlock(&ws->mu);
	s0__smsgq out = {0};
	int close = 0;
	int64_t retry = 0;
	s0__smsg *m;
	while (!close && (m = s0__smsgq_pop(&in))) {
		close = ws->s->cfg.streams->input(ws->st, m->data, m->len, &out);
		free(m);
	}
	s0__smsgq_clear(&in);
	if (!close && pull)
		close = ws->s->cfg.streams->pull(ws->st, room > out.bytes ? room - out.bytes : 1, &out,
		                                 &retry);
	pthread_mutex_lock(&ws->mu);
	s0__smsgq_move(&ws->outbox, &out);
	if (close && !ws->app_close)
		ws->app_close = close;
	ws->retry_ms = retry;
	ws->pumping = false;
	if (ws->src)
		s0__loop_signal(ws->src);
	pthread_mutex_unlock(&ws->mu);
	unref(ws);
}

/* Loop thread: run the stream when it has input or news and room. */
static void maybe_pump(s0__ws *ws)
{
	pthread_mutex_lock(&ws->mu);
	bool go = !ws->pumping && !ws->ended && !ws->app_close &&
	          (ws->inbox.count || (ws->kicked && ws->outbox.bytes < S0__STREAM_QUEUE_MAX));
	if (go) {
		ws->pumping = true;
		ws->refs++;
	}
	pthread_mutex_unlock(&ws->mu);
	if (go && s0__workers_submit(ws->s->workers, pump, ws) < 0) {
		pthread_mutex_lock(&ws->mu);
		ws->pumping = false;
		ws->app_close = S0__WS_ERROR;
		ws->refs--;
		pthread_mutex_unlock(&ws->mu);
	}
}

/* ---- wslay callbacks (loop thread) ---- */

/* Whether the client's messages wait (unread by the stream, or its answers
 * unsent) past the queue bound: then the socket is not read, and the client's
 * sends push back (TCP) instead of growing our queues. */
static bool input_full(s0__ws *ws)
{
	pthread_mutex_lock(&ws->mu);
	bool full = ws->inbox.bytes >= S0__STREAM_QUEUE_MAX ||
	            ws->outbox.bytes >= S0__STREAM_QUEUE_MAX;
	pthread_mutex_unlock(&ws->mu);
	return full;
}

static ssize_t on_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
                       void *user)
{
	(void)flags;
	s0__ws *ws = user;
	if (!ws->reading_all && input_full(ws)) { /* read again once the stream caught up */
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	return s0__wsio_recv(ctx, ws->fd, ws->extra, ws->extra_len, &ws->extra_off, buf, len);
}

static ssize_t on_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags,
                       void *user)
{
	(void)flags;
	s0__ws *ws = user;
	return s0__wsio_send(ctx, ws->fd, data, len);
}

static void on_msg(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg,
                   void *user)
{
	s0__ws *ws = user;
	if (arg->opcode == WSLAY_TEXT_FRAME) {
		pthread_mutex_lock(&ws->mu);
		int rc = s0__smsgq_push(&ws->inbox, (const char *)arg->msg, arg->msg_length);
		pthread_mutex_unlock(&ws->mu);
		if (rc < 0) {
			pthread_mutex_lock(&ws->mu);
			ws->app_close = S0__WS_ERROR;
			pthread_mutex_unlock(&ws->mu);
		}
	} else if (arg->opcode == WSLAY_BINARY_FRAME && !ws->close_queued) {
		static const char why[] = "binary messages are not supported";
		wslay_event_queue_close(ctx, S0__WS_UNSUPPORTED, (const uint8_t *)why,
		                        sizeof why - 1);
		ws->close_queued = true;
	}
}

static const char *close_reason(s0__ws *ws, int code)
{
	const char *why = ws->s->cfg.streams->close_reason(ws->st);
	return code == S0__WS_ERROR && !*why ? "server error" : why;
}

/* Move queued messages into wslay while its queue has room; then the stream's close. */
static void feed(s0__ws *ws)
{
	while (wslay_event_get_queued_msg_length(ws->ctx) < S0__STREAM_QUEUE_MAX) {
		pthread_mutex_lock(&ws->mu);
		s0__smsg *m = s0__smsgq_pop(&ws->outbox);
		pthread_mutex_unlock(&ws->mu);
		if (!m)
			break;
		struct wslay_event_msg msg = {WSLAY_TEXT_FRAME, (const uint8_t *)m->data, m->len};
		wslay_event_queue_msg(ws->ctx, &msg); /* copies */
		free(m);
	}
	pthread_mutex_lock(&ws->mu);
	int code = ws->outbox.count ? 0 : ws->app_close;
	pthread_mutex_unlock(&ws->mu);
	/* wslay sends control frames before queued messages: close after them */
	if (wslay_event_get_queued_msg_count(ws->ctx))
		code = 0;
	if (code && !ws->close_queued && !wslay_event_get_close_sent(ws->ctx)) {
		const char *why = close_reason(ws, code);
		size_t n = strlen(why) > 120 ? 120 : strlen(why);
		wslay_event_queue_close(ws->ctx, (uint16_t)code, (const uint8_t *)why, n);
		ws->close_queued = true;
	}
}

/* Read and drop what the peer sends; true when it has left. */
static bool drain_input(s0__ws *ws)
{
	char sink[4096];
	ssize_t n;
	while ((n = recv(ws->fd, sink, sizeof sink, 0)) > 0)
		;
	return n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/*
 * Our close is out and the peer has not answered: stop writing (FIN after
 * what is queued) and read and drop until it leaves or the time is up, so
 * that closing with unread input never resets the connection under data the
 * peer has yet to read.
 */
static void linger(s0__ws *ws, int64_t now)
{
	ws->lingering = true;
	shutdown(ws->fd, SHUT_WR);
	ws->close_at = now + CLOSE_WAIT_MS;
	if (drain_input(ws)) {
		teardown(ws);
		return;
	}
	s0__loop_set(ws->src, S0__LOOP_IN | S0__LOOP_HUP, ws->close_at);
}

static void on_event(s0__loop_src *src, unsigned ev, void *arg)
{
	s0__ws *ws = arg;
	(void)src;
	if (ev & S0__LOOP_STOP) {
		if (!wslay_event_get_close_sent(ws->ctx)) {
			static const char why[] = "server stopping";
			wslay_event_queue_close(ws->ctx, S0__WS_GOING_AWAY, (const uint8_t *)why,
			                        sizeof why - 1);
			wslay_event_send(ws->ctx);
		}
		teardown(ws);
		return;
	}
	int64_t now = s0__real_monotonic_ms();
	if (ws->lingering) {
		if (drain_input(ws) || now >= ws->close_at)
			teardown(ws); /* the peer left, or never did */
		return;
	}
	if (ws->close_at && now >= ws->close_at) { /* the peer never answered our close */
		linger(ws, now);
		return;
	}
	if (ws->retry_at && now >= ws->retry_at) {
		ws->retry_at = 0;
		pthread_mutex_lock(&ws->mu);
		ws->kicked = true;
		pthread_mutex_unlock(&ws->mu);
	}
	bool unread = ws->extra_off < ws->extra_len;
	ws->reading_all = ev & S0__LOOP_HUP; /* its close frame or its end, past the bound */
	if ((unread || ev & (S0__LOOP_IN | S0__LOOP_HUP)) && wslay_event_recv(ws->ctx) != 0) {
		teardown(ws); /* the peer left, or sent what cannot be read */
		return;
	}
	/* move and send until the socket pushes back or nothing is left (the
	 * stream's close goes in once every message is out) */
	for (;;) {
		feed(ws);
		if (wslay_event_send(ws->ctx) != 0) {
			teardown(ws);
			return;
		}
		pthread_mutex_lock(&ws->mu);
		bool more = ws->outbox.count || ws->app_close;
		pthread_mutex_unlock(&ws->mu);
		if (!more || wslay_event_want_write(ws->ctx) || ws->close_queued ||
		    wslay_event_get_close_sent(ws->ctx))
			break;
	}
	if (!wslay_event_want_write(ws->ctx) && wslay_event_get_close_sent(ws->ctx) &&
	    !wslay_event_want_read(ws->ctx)) {
		if (wslay_event_get_close_received(ws->ctx)) {
			teardown(ws); /* closed both ways */
			return;
		}
		/* our close is out but the peer may still be sending (a message too
		 * big): read and drop until it leaves, so a reset does not eat the close */
		linger(ws, now);
		return;
	}
	if (!ws->close_at && wslay_event_get_close_sent(ws->ctx))
		ws->close_at = now + CLOSE_WAIT_MS; /* from when the close went out */
	maybe_pump(ws);
	pthread_mutex_lock(&ws->mu);
	int64_t retry = ws->retry_ms;
	ws->retry_ms = 0;
	pthread_mutex_unlock(&ws->mu);
	if (retry > 0)
		ws->retry_at = now + retry;
	unsigned interest = S0__LOOP_HUP;
	if (wslay_event_want_read(ws->ctx) && !input_full(ws))
		interest |= S0__LOOP_IN; /* else the pump's end or a sent frame brings us back */
	if (wslay_event_want_write(ws->ctx))
		interest |= S0__LOOP_OUT;
	int64_t deadline = ws->close_at ? ws->close_at : ws->retry_at;
	s0__loop_set(ws->src, interest, deadline);
}

void s0__ws_upgraded(void *cls, struct MHD_Connection *connection, void *con_cls,
                     const char *extra_in, size_t extra_in_size, MHD_socket sock,
                     struct MHD_UpgradeResponseHandle *urh)
{
	(void)connection;
	(void)con_cls;
	s0__ws *ws = cls;
	static const struct wslay_event_callbacks cbs = {on_recv, on_send, NULL, NULL,
	                                                 NULL,    NULL,    on_msg};
	ws->fd = sock;
	ws->urh = urh;
	ws->refs = 1;
	int sndbuf = SNDBUF_BYTES;
	setsockopt(sock, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
	int fl = fcntl(sock, F_GETFL);
	bool ok = fl >= 0 && fcntl(sock, F_SETFL, fl | O_NONBLOCK) == 0;
	if (ok && extra_in_size) {
		ws->extra = malloc(extra_in_size);
		ok = ws->extra != NULL;
		if (ok) {
			memcpy(ws->extra, extra_in, extra_in_size);
			ws->extra_len = extra_in_size;
		}
	}
	ok = ok && wslay_event_context_server_init(&ws->ctx, &cbs, ws) == 0;
	if (ok) {
		wslay_event_config_set_max_recv_msg_length(ws->ctx, S0__STREAM_MSG_MAX);
		pthread_mutex_lock(&ws->mu);
		ok = s0__loop_add(ws->s->loop, sock, S0__LOOP_IN | S0__LOOP_HUP, 0, on_event, ws,
		                  &ws->src) == S0_OK;
		if (ok)
			s0__loop_signal(ws->src); /* the first pull, and what came with the head */
		pthread_mutex_unlock(&ws->mu);
	}
	if (!ok) {
		MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
		ws_free(ws);
	}
}
