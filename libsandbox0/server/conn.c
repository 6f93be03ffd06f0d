/*
 * The libmicrohttpd callbacks: one request's state from its headers to its
 * completion. libmicrohttpd's threads only parse and send: a complete request
 * is suspended and handed to a handler thread (dispatch.c, workers.h), so a
 * handler that waits for a sandbox to wake blocks no other request.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "local/api/router.h"
#include "server/request.h"
#include "server/route_body.h"
#include "server/route_tunnel.h"
#include "server/route_upload.h"
#include "server/workers.h"
#include "server/sse.h"
#include "server/ws.h"

/*
 * Bytes past the limit that are read and discarded so the 413 reaches a
 * client that sends its body without waiting (answering early and closing
 * would reset the connection under the client's feet); beyond this, or for
 * clients that wait for 100-continue, the 413 goes out at once.
 */
#define DRAIN_SLACK ((size_t)16 << 20)

typedef s0__sreq sreq;

/* The X-Team-ID selectors of a request: the first, and whether another one
 * names a different team (then some selected team is not the key's). */
typedef struct team_sel {
	const char *first;
	bool mixed;
} team_sel;

static enum MHD_Result one_selector(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
	(void)kind;
	team_sel *sel = cls;
	if (key && !strcasecmp(key, "X-Team-ID")) {
		if (!sel->first)
			sel->first = value ? value : "";
		else if (strcmp(sel->first, value ? value : ""))
			sel->mixed = true;
	}
	return MHD_YES;
}

static bool is_public(const char *url)
{
	return !strcmp(url, "/healthz") || !strcmp(url, "/metadata");
}

static void client_of(struct MHD_Connection *conn, char *out, size_t n)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;
	s0__strlcpy(out, "unix", n);
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)n);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out, (socklen_t)n);
}

static enum MHD_Result add_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
	(void)kind;
	return s0__headers_add(cls, key, value) < 0 ? MHD_NO : MHD_YES;
}

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
	(void)kind;
	*(size_t *)cls += strlen(key) + (value ? strlen(value) : 0) + 4;
	return MHD_YES;
}

/* libmicrohttpd's upgrade handler (cls: the request): the pending WebSocket
 * or tunnel is the handler's from here. Until it runs, the request holds
 * it, so a client that goes before the 101 has it freed on completion. */
static void on_upgraded(void *cls, struct MHD_Connection *connection, void *con_cls,
                        const char *extra_in, size_t extra_in_size, MHD_socket sock,
                        struct MHD_UpgradeResponseHandle *urh)
{
	sreq *r = cls;
	struct s0__ws *ws = r->ws;
	struct s0__route_tunnel *t = r->tunnel;
	r->ws = NULL;
	r->tunnel = NULL;
	if (ws)
		s0__ws_upgraded(ws, connection, con_cls, extra_in, extra_in_size, sock, urh);
	else if (t)
		s0__route_tunnel_upgraded(t, extra_in, extra_in_size, sock, urh);
	else
		MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
}

/* Queue resp (consumed). */
static enum MHD_Result send_response(s0_server *s, struct MHD_Connection *conn, sreq *r,
                                     s0__http_response *resp)
{
	size_t len = 0;
	struct s0__ws *ws = r->ws; /* stays r's until on_upgraded takes it */
	struct s0__sse *sse = resp->status == 200 ? r->sse : NULL;
	if (sse)
		r->sse = NULL; /* the response's from here (sse.h) */
	s0__http_body *stream = !ws && !sse ? resp->stream : NULL; /* a route's (route_body.h) */
	resp->stream = NULL;
	char *data = !ws && !stream && resp->body.len ? s0__buf_detach(&resp->body, &len) : NULL;
	bool up = ws || (stream && stream->upgraded);
	if (!ws && up) {
		r->tunnel = s0__route_tunnel_new(s, stream); /* r's until on_upgraded */
		stream = NULL;
	}
	struct MHD_Response *mr =
		up       ? (ws || r->tunnel ? MHD_create_response_for_upgrade(on_upgraded, r) : NULL)
		: sse    ? s0__sse_response(sse)
		: stream ? s0__route_body_response(s, conn, stream)
		: data   ? MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE)
		         : MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
	if (!mr) {
		free(data); /* a pending ws or tunnel goes on completion */
		s0__sse_discard(sse);
		s0__http_response_free(resp);
		return MHD_NO;
	}
	for (size_t i = 0; i < resp->headers.len; i++)
		MHD_add_response_header(mr, resp->headers.items[i].name, resp->headers.items[i].value);
	pthread_mutex_lock(&s->mu);
	bool stopping = s->stopping;
	pthread_mutex_unlock(&s->mu);
	if (stopping)
		MHD_add_response_header(mr, MHD_HTTP_HEADER_CONNECTION, "close");
	r->status = resp->status;
	r->bytes = len;
	r->replied = true;
	enum MHD_Result ok = MHD_queue_response(conn, (unsigned)resp->status, mr);
	MHD_destroy_response(mr);
	s0__http_response_free(resp);
	return ok;
}

static enum MHD_Result send_error(s0_server *s, struct MHD_Connection *conn, sreq *r,
                                  int status, const char *wire, const char *msg)
{
	s0__http_response resp = {0};
	if (s0__router_reply_error(&resp, r->rid, status, wire, msg) < 0) {
		s0__http_response_free(&resp);
		return MHD_NO;
	}
	return send_response(s, conn, r, &resp);
}

/* The raw request target, before MHD decodes anything (URI log callback). */
void *s0__server_on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	(void)cls;
	(void)conn;
	sreq *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	const char *qm = strchr(uri, '?');
	r->path = qm ? s0__strndup(uri, (size_t)(qm - uri)) : s0__strdup(uri);
	r->query = qm ? s0__strdup(qm + 1) : NULL;
	r->target_len = strlen(uri);
	if (!r->path || (qm && !r->query)) {
		free(r->path);
		free(r->query);
		free(r);
		return NULL;
	}
	r->t0_ms = s0__real_monotonic_ms();
	return r;
}

static void sreq_start(s0_server *s, struct MHD_Connection *conn, sreq *r, const char *method)
{
	r->started = true;
	s0__strlcpy(r->method, method, sizeof r->method);
	client_of(conn, r->client, sizeof r->client);
	s0__headers h = {0};
	MHD_get_connection_values(conn, MHD_HEADER_KIND, add_header, &h);
	s0__router_request_id(&h, r->rid);
	s0__headers_free(&h);
	MHD_get_connection_values(conn, MHD_HEADER_KIND, count_header, &r->head_bytes);
	r->limit = s->cfg.body_limit ? s->cfg.body_limit(s->cfg.limit_ctx, method, r->path,
	                                                 &r->limit_wire)
	                             : S0__ROUTER_JSON_BODY_MAX;
	if (!r->limit_wire)
		r->limit_wire = "request_too_large";
	pthread_mutex_lock(&s->mu);
	s->active++;
	r->counted = true;
	pthread_mutex_unlock(&s->mu);
}

/* Take n more bytes of the server-wide body budget. */
static bool reserve(s0_server *s, sreq *r, size_t n)
{
	pthread_mutex_lock(&s->mu);
	bool ok = n <= S0__SERVER_BUFFER_BUDGET - s->buffered;
	if (ok) {
		s->buffered += n;
		r->reserved += n;
	}
	pthread_mutex_unlock(&s->mu);
	return ok;
}

static void unreserve(s0_server *s, sreq *r)
{
	pthread_mutex_lock(&s->mu);
	s->buffered -= r->reserved;
	r->reserved = 0;
	pthread_mutex_unlock(&s->mu);
}

/* A declared body: over the limit, over the budget, or room made for it at once. */
static enum MHD_Result declared_body(s0_server *s, struct MHD_Connection *conn, sreq *r)
{
	const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
	const char *ex = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Expect");
	unsigned long long n = cl ? strtoull(cl, NULL, 10) : 0;
	if (n > r->limit) {
		if ((ex && strcasestr(ex, "100-continue")) || n - r->limit > DRAIN_SLACK)
			return send_error(s, conn, r, 413, r->limit_wire, "request body is too large");
		r->over = true; /* read and drop it; finish() answers 413 */
		return MHD_YES;
	}
	if (n && !reserve(s, r, (size_t)n))
		return send_error(s, conn, r, 503, "unavailable",
		                  "server is busy receiving other uploads; retry");
	if (n && s0__buf_grow(&r->body, (size_t)n) < 0)
		return send_error(s, conn, r, 503, "unavailable", "out of memory for the upload");
	return MHD_YES;
}

/* A request head over our limits (server_internal.h): 414 or 431 as an envelope. */
static enum MHD_Result head_too_large(s0_server *s, struct MHD_Connection *conn, sreq *r)
{
	char msg[96];
	if (r->target_len > S0__SERVER_URI_MAX) {
		snprintf(msg, sizeof msg, "invalid request: request URI is too long (%zu > %zu bytes)",
		         r->target_len, S0__SERVER_URI_MAX);
		return send_error(s, conn, r, 414, "bad_request", msg);
	}
	snprintf(msg, sizeof msg,
	         "invalid request: request header fields are too large (%zu > %zu bytes)",
	         r->head_bytes, S0__SERVER_HEADERS_MAX);
	return send_error(s, conn, r, 431, "bad_request", msg);
}

/* First call: shutdown, head limits, authentication and a declared body over the limit. */
static enum MHD_Result begin(s0_server *s, struct MHD_Connection *conn, sreq *r)
{
	pthread_mutex_lock(&s->mu);
	bool stopping = s->stopping;
	pthread_mutex_unlock(&s->mu);
	if (stopping)
		return send_error(s, conn, r, 503, "unavailable", "server is shutting down");
	if (r->target_len > S0__SERVER_URI_MAX || r->head_bytes > S0__SERVER_HEADERS_MAX)
		return head_too_large(s, conn, r);
	const char *authz = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	bool route = s->cfg.is_public_route &&
	             s->cfg.is_public_route(s->cfg.handler_ctx, r->path,
	                                    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host"));
	if (s0__keyring_has_admin(s->keys) && s0__server_is_key_route(r->path)) {
		/* the admin credential only: a team key never manages keys */
		if (!s0__keyring_admin(s->keys, authz))
			return send_error(s, conn, r, 401, "unauthorized",
			                  "the admin credential is required");
		r->admin_keys = true;
	} else if (!is_public(r->path) && !route) {
		const char *msg = NULL;
		team_sel sel = {NULL, false};
		MHD_get_connection_values(conn, MHD_HEADER_KIND, one_selector, &sel);
		r->team = s0__keyring_auth(s->keys, authz, sel.first, s->cfg.key_lookup,
		                           s->cfg.key_lookup_ctx, r->team_buf, &msg);
		if (r->team && sel.mixed) {
			r->team = NULL;
			msg = "not a member of selected team";
		}
		if (!r->team)
			return send_error(s, conn, r, 401, "unauthorized", msg);
	}
	if (route && s0__route_upload_wanted(conn)) /* its body streams (route_upload.h) */
		return s0__route_upload_begin(s, conn, r);
	return declared_body(s, conn, r);
}

static enum MHD_Result absorb(s0_server *s, sreq *r, const char *data, size_t n)
{
	if (!r->over && r->body.len + n > r->limit) {
		r->over = true;
		s0__buf_free(&r->body);
	}
	if (!r->over && r->body.len + n > r->reserved && !reserve(s, r, r->body.len + n - r->reserved))
		return MHD_NO; /* undeclared (chunked) upload past the budget: hang up */
	if (r->over) {
		r->drained += n;
		return r->drained > r->limit + DRAIN_SLACK ? MHD_NO : MHD_YES;
	}
	return s0__buf_put(&r->body, data, n) < 0 ? MHD_NO : MHD_YES;
}

/* Hand the complete request to a handler thread; the connection waits suspended. */
static enum MHD_Result dispatch(s0_server *s, struct MHD_Connection *conn, sreq *r)
{
	if (MHD_get_connection_values(conn, MHD_HEADER_KIND, add_header, &r->hdrs) < 0)
		return send_error(s, conn, r, 500, "internal_error", "out of memory");
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	r->s = s;
	r->conn = conn;
	r->fd = ci ? ci->connect_fd : -1;
	s0__server_longpoll_prepare(r);
	r->dispatched = true;
	MHD_suspend_connection(conn);
	if (s0__workers_submit(s->workers, s0__server_run, r) < 0) {
		MHD_resume_connection(conn); /* answered on the next call */
		r->resp.status = 0;
		r->done = true;
	}
	return MHD_YES;
}

/* Last call: the whole body is in; route it, then (called again) send the answer. */
static enum MHD_Result finish(s0_server *s, struct MHD_Connection *conn, sreq *r)
{
	if (r->over)
		return send_error(s, conn, r, 413, r->limit_wire, "request body is too large");
	if (!r->dispatched)
		return dispatch(s, conn, r);
	if (!r->done)
		return MHD_YES; /* not ours to answer yet */
	s0__buf_free(&r->body);
	unreserve(s, r);
	if (!r->resp.status) {
		s0__http_response_free(&r->resp);
		return send_error(s, conn, r, 500, "internal_error", "out of memory");
	}
	s0__http_response resp = r->resp;
	memset(&r->resp, 0, sizeof r->resp);
	return send_response(s, conn, r, &resp);
}

enum MHD_Result s0__server_on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                      const char *method, const char *version,
                                      const char *upload_data, size_t *upload_data_size,
                                      void **con_cls)
{
	(void)version;
	(void)url; /* decoded by MHD; the raw target came through s0__server_on_uri */
	s0_server *s = cls;
	sreq *r = *con_cls;
	if (!r)
		return MHD_NO;
	if (!r->started) {
		sreq_start(s, conn, r, method);
		return begin(s, conn, r);
	}
	if (r->replied) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (r->upload) { /* fed to the route's handler; 1: it answered */
		int up = s0__route_upload_call(r, upload_data, upload_data_size);
		return up < 0 ? MHD_NO : up ? finish(s, conn, r) : MHD_YES;
	}
	if (*upload_data_size) {
		enum MHD_Result ok = absorb(s, r, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return ok;
	}
	return finish(s, conn, r);
}

void s0__server_on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                             enum MHD_RequestTerminationCode toe)
{
	(void)conn;
	s0_server *s = cls;
	sreq *r = *con_cls;
	if (!r)
		return;
	*con_cls = NULL;
	if (r->upload && s0__route_upload_detach(r))
		return; /* the route's handler still runs: it completes r (route_upload.h) */
	int status = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK || r->replied ? r->status : 0;
	if (r->started)
		s0__server_log_line(&s->o, r->client, r->rid, r->team, r->method, r->path, status,
	                    r->bytes, s0__real_monotonic_ms() - r->t0_ms);
	s0__buf_free(&r->body);
	unreserve(s, r);
	s0__headers_free(&r->hdrs);
	s0__http_response_free(&r->resp);
	s0__ws_discard(r->ws); /* an upgrade never sent, or the client went before it */
	s0__route_tunnel_discard(r->tunnel);
	s0__sse_discard(r->sse); /* an event stream never sent */
	s0__route_upload_free(r->upload);
	free(r->path);
	free(r->query);
	if (r->counted) {
		pthread_mutex_lock(&s->mu);
		s->active--;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
	}
	free(r);
}
