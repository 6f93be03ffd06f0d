/**
 * @file sandbox0/server.h
 * @brief `s0 serve`: the local backend over HTTP (docs/architecture.md; docs/decisions.md).
 *
 * An ::s0_server exposes an ::s0_local backend with the Sandbox0 wire
 * format (docs/wire.md) on a loopback address or a unix socket, so any
 * Sandbox0 client — the official SDKs, curl, this library's HTTP client —
 * can use it. Requests go through the same router as s0_client_new_local(),
 * so the in-process and HTTP faces cannot drift.
 *
 * Authentication: `Authorization: Bearer <key>` with API keys `s0_…`, each
 * belonging to one team; a sandbox, snapshot or template belongs to the
 * team of the key that made it and is invisible (404) to other teams. Keys
 * come from the options (kept only as keyed BLAKE2b digests, compared in
 * constant time) and from the backend's metadata store (sandbox0/keys.h,
 * looked up by keyed hash on every request, so a key made or revoked
 * there counts at once). `GET /healthz` and `GET /metadata` need no key.
 * An unknown or revoked key answers 401 `unauthorized`; a key sent with
 * an `X-Team-ID` of another team answers 401 "not a member of selected
 * team".
 *
 * Every request runs on a handler thread of its own (made on demand up to
 * the connection limit), so a request waiting for a sandbox to wake (up to
 * 45 s, docs/decisions.md "Auto-resume on access") never delays `/healthz` or
 * other requests. Held-open connections — long-polls of `GET
 * /sandboxes/{id}` with `Prefer: wait` and the WebSocket routes of
 * docs/wire.md §8.2 — hold no thread: one event-loop thread keeps them, at
 * most the connection limit less a quarter at once (docs/threading.md
 * "Parked connections").
 *
 * Request limits, each answered with an error envelope: a request target
 * (path and query) over 16 KiB is 414 `bad_request`; header fields over
 * 32 KiB in all are 431 `bad_request`; a JSON body over 1 MiB is 413
 * `request_too_large` (a file write over its own cap, `file_too_large`); a
 * JSON body with a duplicated object key at any depth is 400 `bad_request`.
 * One limit is libmicrohttpd's: a request head that does not fit its
 * 128 KiB per-connection buffer (a request target over ~127 KiB, or some
 * 1,500+ header fields however short) is refused by libmicrohttpd itself
 * with 414 or 431 and a fixed HTML body, which no libmicrohttpd 0.9.x
 * callback can replace.
 *
 * @threadsafety s0_server_port() is safe from any thread; create and free
 * an ::s0_server from one thread.
 */
#ifndef SANDBOX0_SERVER_H
#define SANDBOX0_SERVER_H

#include <stddef.h>
#include "sandbox0/common.h"

/** @brief An `s0 serve` HTTP server. */
typedef struct s0_server s0_server;
/** @brief An open local backend; see sandbox0/local.h. */
typedef struct s0_local s0_local;

/** One API key and the team it belongs to. */
typedef struct s0_server_api_key {
	/** The key: "s0_" followed by 8..250 printable ASCII characters. */
	const char *key;
	/** Team of the key: 1..95 printable ASCII characters. */
	const char *team_id;
} s0_server_api_key;

/**
 * Receives one access-log line per request (no trailing newline):
 * `<client> <request-id> <team|-> "<METHOD> <path>" <status> <bytes> <ms>ms`.
 * Called on a connection thread after the response was sent; it must be
 * thread-safe and must not call back into the server.
 *
 * @param[in] line (transfer none) valid only during the call.
 * @param[in] payload the options' log_payload.
 */
typedef void (*s0_server_log_cb)(const char *line, void *payload);

/** Serve `/admin/v1/faults`, `/admin/v1/clock` and `/admin/v1/inspect`
 *  (authenticated); without it those paths answer 404. */
#define S0_SERVER_ENABLE_ADMIN 0x1u
/** Emit "0001-01-01T00:00:00Z" instead of null for unset expiries (the
 *  published Python SDK's requirement, docs/wire.md §3.0). */
#define S0_SERVER_ZERO_TIME_COMPAT 0x2u
/** Answer an accepted pause with 200 instead of 202 (docs/wire.md §6.3; the
 *  published Python and old Go SDKs reject 202). */
#define S0_SERVER_PAUSE_200_ONLY 0x4u

/**
 * Server options. String fields are borrowed for the call; the server
 * copies (or hashes) what it keeps.
 *
 * @options[version] S0_SERVER_OPTIONS_VERSION
 * @options[init_function] s0_server_options_init
 */
typedef struct s0_server_options {
	uint32_t version; /**< S0_SERVER_OPTIONS_VERSION */
	/** IPv4 or IPv6 literal to listen on; NULL = "127.0.0.1". */
	const char *listen_address;
	/** TCP port; 0 = an ephemeral port (read it with s0_server_port()). */
	int32_t port;
	/**
	 * Listen on this unix socket path instead of TCP (created with mode
	 * 0600; a stale socket file nobody answers on is replaced); NULL = TCP.
	 */
	const char *unix_socket_path;
	/** API keys (array of api_keys_len); NULL/0 = no keys. */
	const s0_server_api_key *api_keys;
	size_t api_keys_len; /**< entries in api_keys */
	/**
	 * Team of requests that carry no Authorization header (a per-user
	 * server on loopback or a 0600 unix socket); NULL = such requests get
	 * 401. A request that does send a key must still send a valid one.
	 */
	const char *anonymous_team_id;
	/** S0_SERVER_* flags; 0 = none. */
	uint32_t flags;
	/** Most simultaneous connections; 0 = 256. Beyond it new ones are refused. */
	int32_t connection_limit;
	/**
	 * A connection idle this long (no bytes received, including a client
	 * that stops sending in the middle of a request) is closed; in ms,
	 * rounded up to whole seconds; 0 = 30000.
	 */
	int64_t connection_timeout_ms;
	/**
	 * How long s0_server_free() waits for requests in flight to finish, in
	 * ms; 0 = 60000 (longer than the 45 s wake budget).
	 */
	int64_t drain_timeout_ms;
	/** Access log; NULL = no log. */
	s0_server_log_cb log_cb;
	void *log_payload; /**< passed to log_cb */
	/**
	 * The admin credential: `Authorization: Bearer <admin_token>` is what
	 * `/admin/v1/api-keys` accepts (sandbox0/keys.h), and no team key is
	 * accepted there; 8..250 printable ASCII characters. NULL = those routes
	 * answer 404. It is not a team key: API routes refuse it (401).
	 * Only read with version >= 2.
	 * @since 0.3
	 */
	const char *admin_token;
} s0_server_options;

/** Current version of ::s0_server_options (1: without admin_token). */
#define S0_SERVER_OPTIONS_VERSION 2
/** Static initialiser of ::s0_server_options. */
#define S0_SERVER_OPTIONS_INIT {S0_SERVER_OPTIONS_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

S0_BEGIN_DECLS

/**
 * Initialise @p opts with defaults.
 *
 * @param[out] opts the struct to fill.
 * @param[in] version S0_SERVER_OPTIONS_VERSION.
 * @retval S0_EINVAL unknown version or NULL @p opts; @p opts untouched.
 * @threadsafety safe
 * @since 0.1
 */
S0_API int s0_server_options_init(s0_server_options *opts, uint32_t version);

/**
 * Start serving @p local over HTTP. Returns once the socket is listening;
 * requests are served on background threads until s0_server_free().
 *
 * @param[in] local the backend (borrowed: it must outlive the server).
 * @param[in] opts (nullable) options; NULL = defaults (127.0.0.1, an
 *            ephemeral port, no keys: every API request gets 401).
 * @param[out] out (transfer full) the server; free with s0_server_free()
 *             before closing @p local.
 * @param[out] err (nullable) error detail.
 * @retval S0_EINVAL bad options version, address, port or API key (a key
 *         not starting with "s0_", a blank team, the same key twice).
 * @retval S0_ECONFLICT reason `address_in_use`: the address or socket path
 *         is taken by a live listener.
 * @retval S0_EIO the socket could not be created or bound.
 * @retval S0_ENOMEM out of memory.
 * @threadsafety safe
 * @since 0.1
 */
S0_API int s0_server_new(s0_local *local, const s0_server_options *opts, s0_server **out,
                         s0_error **err);

/**
 * The TCP port the server listens on (useful with port 0).
 *
 * @param[in] srv the server.
 * @return the port, or 0 for a unix socket server or NULL @p srv.
 * @threadsafety safe
 * @since 0.1
 */
S0_API int s0_server_port(const s0_server *srv);

/**
 * Serve public routes by Host under @p domain as well (docs/wire.md
 * "Public routes"): a request whose Host is `{public_id}.{domain}[:port]`
 * goes to that service, and services report `http://{public_id}.{domain}/`
 * as their public_url. Path-based `/r/{public_id}/` always works. The API
 * itself must not be reached under a name in @p domain.
 *
 * @param[in] srv a server of s0_server_new().
 * @param[in] domain (copied) a host name: letters, digits, '-' and '.'.
 * @return S0_OK; S0_EINVAL a bad name; S0_ECONFLICT set already.
 * @threadsafety safe; requests see it from the next one on.
 * @since 0.4
 */
S0_API int s0_server_set_public_domain(s0_server *srv, const char *domain, s0_error **err);

/**
 * Stop the server cleanly: stop accepting connections, answer new
 * requests on open connections with 503 `unavailable`, let requests in
 * flight finish (up to the options' drain_timeout_ms), then close every
 * connection and remove the unix socket file. Blocks until done. NULL is a
 * no-op.
 *
 * @param[in] srv (nullable) the server.
 * @threadsafety call once, from one thread, not from a log callback.
 * @since 0.1
 */
S0_API void s0_server_free(s0_server *srv);

S0_END_DECLS

#endif
