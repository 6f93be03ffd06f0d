/*
 * The HTTP adapter (libmicrohttpd) of `s0 serve`, docs/architecture.md "Layers".
 * The core is generic: it authenticates, enforces limits, keeps request
 * ids and the access log, and hands each request to a handler callback —
 * in production the router over the engine (glue.c), in tests a test handler.
 */
#ifndef S0_SERVER_INTERNAL_H
#define S0_SERVER_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <microhttpd.h>

#include "common/http.h"
#include "common/msgq.h"
#include "common/internal.h"
#include "sandbox0/server.h"

/* What the server learnt about a request before handing it over. */
typedef struct s0__server_call {
	const char *team_id;    /* authenticated team; NULL on /healthz, /metadata */
	const char *request_id; /* echoed or generated */
	s0_cancel_token *stop;  /* fires when the server starts stopping (nullable) */
} s0__server_call;

/*
 * Handle one request. req->path is the raw (percent-encoded) path and
 * req->query the raw query. Fill resp (zeroed by the caller); return
 * S0_OK, or S0_ENOMEM to make the server answer 500. Runs on a handler
 * thread (workers.h) and may block (a wake waits up to 45 s); a long-poll
 * runs it again after each change.
 */
typedef int (*s0__server_handler_fn)(void *ctx, const s0__server_call *call,
                                     const s0__http_request *req, s0__http_response *resp);

/* Longest team id plus NUL (server.h: 1..95 characters). */
#define S0__SERVER_TEAM_MAX 96

/*
 * A stored API key's team: 1 and team filled when key is a live key, 0
 * when not, < 0 when the keys cannot be read (the request answers 401).
 * Called on connection threads; may block on the metadata store.
 */
typedef int (*s0__key_lookup_fn)(void *ctx, const char *key, char team[S0__SERVER_TEAM_MAX]);

/* Largest body for (method, raw path) and the wire code past it. */
typedef size_t (*s0__server_limit_fn)(void *ctx, const char *method, const char *path,
                                      const char **wire_code);

/* The admin endpoints' backend (docs/decisions.md "Faults and inspection"). */
typedef struct s0__server_admin_ops {
	void *ctx;
	/* mode: s0_fault_mode; count 0 = until released. */
	int (*fault_arm)(void *ctx, const char *name, int32_t mode, int64_t count,
	                 int64_t delay_ms, s0_error **err);
	int (*fault_release)(void *ctx, const char *name, s0_error **err);
	/* Advance the manual clock; *now_unix_ms_out receives the new time. */
	int (*clock_advance)(void *ctx, int64_t ms, int64_t *now_unix_ms_out, s0_error **err);
	/* JSON text (malloc'd) of internal facts; sandbox_id nullable. */
	int (*inspect)(void *ctx, const char *sandbox_id, char **json_out, s0_error **err);
	/* API keys (sandbox0/keys.h; nullable: /admin/v1/api-keys answers 404). */
	int (*key_create)(void *ctx, const char *team, const char *name, char **json_out,
	                  s0_error **err);
	int (*key_list)(void *ctx, const char *team, char **json_out, s0_error **err);
	int (*key_revoke)(void *ctx, const char *id, char **json_out, s0_error **err);
} s0__server_admin_ops;

/*
 * Request head limits, answered with a JSON envelope (400-class
 * `bad_request`): a request target (path and query, raw) over
 * S0__SERVER_URI_MAX bytes is 414; header fields over
 * S0__SERVER_HEADERS_MAX bytes in all ("Name: value\r\n" each) are 431.
 * A files path of PATH_MAX bytes percent-encoded (12 KiB) fits.
 *
 * libmicrohttpd (0.9.75) parses the request line and headers into a
 * per-connection memory pool and, when they do not fit, answers 414/431
 * itself with a fixed HTML body no callback can change. The pool is
 * therefore S0__SERVER_POOL_BYTES (MHD_OPTION_CONNECTION_MEMORY_LIMIT; the
 * default is 32 KiB, and microhttpd.h calls values above 128 KiB of little
 * benefit), so every head within our limits, and heads a good way past
 * them, reach our code. Only a head past the pool itself still gets MHD's
 * HTML 414/431: measured with 0.9.75, a request target over ~127 KiB, or
 * some 1,500+ header fields however short (MHD keeps a record per field in
 * the same pool). Clients must tolerate a non-envelope error body anyway
 * (docs/wire.md §2.1).
 * MHD zeroes the whole pool between keep-alive requests, so the pool is
 * also the resident cost of each busy connection (256 x 128 KiB = 32 MiB).
 */
#define S0__SERVER_URI_MAX ((size_t)16 << 10)
#define S0__SERVER_HEADERS_MAX ((size_t)32 << 10)
#define S0__SERVER_POOL_BYTES ((size_t)128 << 10)

/* Request bodies buffered at once across all connections; past it new
 * uploads answer 503 (256 connections x 100 MiB would not fit in memory). */
#define S0__SERVER_BUFFER_BUDGET ((size_t)1 << 30)

/*
 * What a long-poll watches (docs/wire.md "Long-poll"). subscribe: call
 * fn(arg) on every change of the resource at raw_path until unsubscribed
 * (fn runs on any thread, briefly, under the watcher's lock: it only flags);
 * S0_OK with *sub set, S0_ENOTFOUND when the path names nothing watchable,
 * S0_ENOMEM. unsubscribe: after it returns fn no longer runs.
 */
typedef struct s0__server_watch_ops {
	void *ctx;
	int (*subscribe)(void *ctx, const char *raw_path, void (*fn)(void *arg), void *arg,
	                 void **sub);
	void (*unsubscribe)(void *ctx, void *sub);
} s0__server_watch_ops;

/*
 * The streams behind WebSocket routes (docs/wire.md §8.2; local/api/stream.h
 * is what glue.c puts here). open: for an upgrade request — S0_OK with *out
 * set (accepted), S0_OK with *out NULL and resp filled (refused: resp is the
 * answer), S0_ENOTFOUND when the path is no stream (routed as usual),
 * S0_ENOMEM. kick(kick_arg) may run from any thread until free. input,
 * pull, close_reason and free are stream.h's s0__stream_* on the opened
 * stream (one thread at a time).
 */
typedef struct s0__server_stream_ops {
	void *ctx;
	int (*open)(void *ctx, const s0__server_call *call, const s0__http_request *req,
	            void (*kick)(void *arg), void *kick_arg, void **out, s0__http_response *resp);
	int (*input)(void *st, const char *text, size_t len, s0__smsgq *out);
	int (*pull)(void *st, size_t room, s0__smsgq *out, int64_t *retry_ms);
	const char *(*close_reason)(const void *st);
	void (*free)(void *st);
} s0__server_stream_ops;

/* Longest long-poll held (seconds); a larger `Prefer: wait` is cut to it. */
#define S0__SERVER_WAIT_MAX_S 60

/*
 * Held-open connections (parked long-polls, upgraded streams) at once: the
 * connection limit less this reserve, so ordinary requests always find room.
 */
#define S0__SERVER_PARK_RESERVE_MIN 16

typedef struct s0__server_config {
	const s0_server_options *opts; /* nullable: defaults */
	s0__server_handler_fn handler;
	void *handler_ctx;
	s0__server_limit_fn body_limit; /* nullable: 1 MiB for everything */
	void *limit_ctx;
	const s0__server_admin_ops *admin; /* nullable: admin routes 404 */
	s0__key_lookup_fn key_lookup;      /* nullable: only the options' keys */
	void *key_lookup_ctx;
	const s0__server_watch_ops *watch; /* nullable: no long-poll (Prefer: wait ignored) */
	const s0__server_stream_ops *streams; /* nullable: no WebSocket routes */
	/* Whether a request is public-route traffic: no API key, the handler
	 * answers it (nullable: none is; glue.c, server/proxy.h). */
	bool (*is_public_route)(void *handler_ctx, const char *raw_path, const char *host);
	/* Called once from s0_server_free() after the last request (nullable). */
	void (*on_free)(void *handler_ctx);
} s0__server_config;

int s0__server_new(const s0__server_config *cfg, s0_server **out, s0_error **err);

typedef struct s0__keyring s0__keyring;
struct s0__loop;
struct s0__workers;

struct s0_server {
	struct MHD_Daemon *daemon;
	s0__server_config cfg;
	s0_server_options o; /* copy; strings below */
	char *listen_address, *unix_socket_path, *anonymous_team_id;
	s0__keyring *keys;
	int listen_fd;
	int port;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* signalled when active drops */
	int active;        /* requests between first byte of handling and completion */
	int ws_live;       /* WebSocket connections made and not yet freed (ws.c) */
	size_t buffered;   /* request body bytes reserved by all connections */
	bool stopping;
	s0_cancel_token *stop; /* fired by s0_server_free before it drains */
	bool counted;
	struct s0__workers *workers; /* handler threads (workers.h) */
	struct s0__loop *loop;       /* held-open connections (loop.h) */
	pthread_mutex_t park_mu;     /* long-poll flags of every request (request.h) */
	size_t park_max;             /* held-open connections at once (the loop's limit) */
};

/* ---- conn.c: the MHD callbacks ---- */
void *s0__server_on_uri(void *cls, const char *uri, struct MHD_Connection *conn);
enum MHD_Result s0__server_on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                      const char *method, const char *version,
                                      const char *upload_data, size_t *upload_data_size,
                                      void **con_cls);
void s0__server_on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                             enum MHD_RequestTerminationCode toe);

/* ---- auth.c: API keys kept as keyed BLAKE2b digests ---- */

int s0__keyring_new(const s0_server_api_key *keys, size_t n, const char *anonymous_team,
                    s0__keyring **out, s0_error **err);
void s0__keyring_free(s0__keyring *k);
/* Keep the admin credential's digest (S0_EINVAL: bad, or one of the keys). */
int s0__keyring_set_admin(s0__keyring *k, const char *token, s0_error **err);
bool s0__keyring_has_admin(const s0__keyring *k);
/* Whether Authorization carries the admin credential (constant time). */
bool s0__keyring_admin(const s0__keyring *k, const char *authorization);
/*
 * Authenticate a request from its Authorization and X-Team-ID headers:
 * the keyring's keys first, then lookup_fn (nullable; the backend's stored
 * keys, server_config.key_lookup). Returns the team (borrowed from the
 * keyring or team_buf) or NULL with *message set to the 401 message
 * ("not a member of selected team" for a key of another team than
 * X-Team-ID names).
 */
const char *s0__keyring_auth(const s0__keyring *k, const char *authorization,
                             const char *team_selector, s0__key_lookup_fn lookup_fn,
                             void *lookup_ctx, char team_buf[S0__SERVER_TEAM_MAX],
                             const char **message);

/* ---- admin.c ---- */
/* Handle /admin/v1/... (authenticated already). */
int s0__server_admin(const s0__server_admin_ops *ops, const s0__http_request *req,
                     const char *request_id, s0__http_response *resp);

/* ---- admin_keys.c ---- */
/* Whether path is one of /admin/v1/api-keys[/{id}] (the admin credential's routes). */
bool s0__server_is_key_route(const char *path);
/* Handle a key route (the admin credential checked already). */
int s0__server_admin_keys(const s0__server_admin_ops *ops, const s0__http_request *req,
                          const char *request_id, s0__http_response *resp);

/* ---- listen.c: the listening socket ---- */
/* Bound, listening socket for the options (TCP or unix); returns fd or a negative code. */
int s0__server_listen(const s0_server_options *o, s0_error **err);

/* ---- access_log.c ---- */
void s0__server_log_line(const s0_server_options *o, const char *client, const char *rid,
                         const char *team, const char *method, const char *path, int status,
                         size_t bytes, int64_t ms);

#endif
