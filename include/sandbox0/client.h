/**
 * @file sandbox0/client.h
 * @brief The Sandbox0 client handle (docs/architecture.md, docs/wire.md §1).
 *
 * An ::s0_client talks to one Sandbox0 API: a real deployment over HTTPS, a
 * local `s0 serve` over HTTP, or an embedded backend in process
 * (s0_client_new_local() in sandbox0/local.h). Every endpoint behaves the
 * same whichever transport is underneath.
 *
 * @threadsafety An ::s0_client is thread-safe: its configuration is frozen at
 * construction and any number of threads may call it at once (connections
 * are shared through a locked curl share handle).
 */
#ifndef SANDBOX0_CLIENT_H
#define SANDBOX0_CLIENT_H

#include "sandbox0/clock.h"
#include "sandbox0/common.h"

/** The official default API address (docs/wire.md §1.1). */
#define S0_DEFAULT_BASE_URL "https://api.sandbox0.ai"

/** @brief A client of the Sandbox0 API. */
typedef struct s0_client s0_client;

/**
 * Client configuration. String fields are borrowed for the call; the client
 * copies what it keeps.
 *
 * @options[version] S0_CLIENT_OPTIONS_VERSION
 * @options[init_function] s0_client_options_init
 */
typedef struct s0_client_options {
	uint32_t version;       /**< S0_CLIENT_OPTIONS_VERSION */
	/** API base URL, may carry a path prefix; NULL = ::S0_DEFAULT_BASE_URL. */
	const char *base_url;
	/**
	 * Bearer token (API key `s0_…` or JWT); surrounding whitespace is
	 * trimmed; NULL or blank sends no Authorization.
	 */
	const char *token;
	/** User-Agent header; NULL = "libsandbox0/<version>". */
	const char *user_agent;
	/** Optional `X-Team-ID` team selector; NULL = not sent. */
	const char *team_id;
	/**
	 * Extra headers, NULL-terminated array of "Name: value"; NULL = none.
	 * One named like a header the library sets (Authorization, User-Agent,
	 * Accept, X-Team-ID) replaces it; per-request framing headers
	 * (Content-Type, Content-Length, Transfer-Encoding, Expect,
	 * Idempotency-Key, Connection) are refused.
	 */
	const char *const *headers;
	/** TCP/TLS connect timeout in ms; 0 = 10000. */
	int64_t connect_timeout_ms;
	/**
	 * Whole-request timeout in ms for each HTTP exchange; 0 = 120000 (long
	 * enough for the 45 s gateway wake budget, docs/decisions.md, GW-04);
	 * S0_TIMEOUT_INFINITE = none.
	 */
	int64_t request_timeout_ms;
	/** Non-zero disables TLS peer and host verification (testing only). */
	int32_t insecure_skip_verify;
	/** CA bundle path; NULL = system default. */
	const char *ca_file;
	/** Proxy URL; NULL = libcurl's environment rules; "" = no proxy. */
	const char *proxy;
	/** Clock for waits and backoff; NULL = the real clock (copied). */
	const s0_clock *clock;
	/**
	 * Cancel token that every blocking call of this client observes
	 * (nullable, borrowed: it must outlive the client). Waits may pass their
	 * own token in addition.
	 */
	s0_cancel_token *cancel;
} s0_client_options;

/** Current version of ::s0_client_options. */
#define S0_CLIENT_OPTIONS_VERSION 1
/** Static initialiser of ::s0_client_options. */
#define S0_CLIENT_OPTIONS_INIT {S0_CLIENT_OPTIONS_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

S0_BEGIN_DECLS

/**
 * Initialise @p opts with defaults.
 *
 * @param[out] opts the struct to fill.
 * @param[in] version S0_CLIENT_OPTIONS_VERSION.
 * @retval S0_EINVAL unknown version; @p opts untouched.
 * @threadsafety safe
 * @since 0.1
 */
S0_API int s0_client_options_init(s0_client_options *opts, uint32_t version);

/**
 * Create a client for an HTTP(S) Sandbox0 API.
 *
 * @param[in] opts (nullable) options; NULL = all defaults.
 * @param[out] out (transfer full) the client; free with s0_client_free().
 * @param[out] err (nullable) error detail.
 * @retval S0_EINVAL bad options version, a base URL that is not
 *         http(s)://host[:port][/path] (no query or fragment), a negative
 *         timeout other than S0_TIMEOUT_INFINITE, or a header name or value
 *         that is invalid (control characters; reason `invalid_header`).
 * @retval S0_ENOMEM out of memory.
 * @threadsafety safe
 * @since 0.1
 */
S0_API int s0_client_new(const s0_client_options *opts, s0_client **out, s0_error **err);

/**
 * Create a client configured from the environment like the official SDK
 * adapters: `SANDBOX0_BASE_URL` (default ::S0_DEFAULT_BASE_URL), then
 * `SANDBOX0_TOKEN`, else `SANDBOX0_API_KEY`. Fields set in @p opts win
 * over the environment.
 *
 * @param[in] opts (nullable) overrides.
 * @param[out] out (transfer full) the client.
 * @param[out] err (nullable) error detail.
 * @retval S0_EINVAL as s0_client_new().
 * @threadsafety safe (reads the environment; do not call setenv concurrently)
 * @since 0.1
 */
S0_API int s0_client_new_from_env(const s0_client_options *opts, s0_client **out,
                                  s0_error **err);

/**
 * Free a client; NULL is a no-op. No call on it may be in flight.
 * @since 0.1
 */
S0_API void s0_client_free(s0_client *c);

/**
 * The normalised base URL (no trailing slash); for an in-process client,
 * "local:" followed by the data directory.
 * @return (transfer none) valid while @p c lives.
 * @threadsafety safe
 * @since 0.1
 */
S0_API const char *s0_client_base_url(const s0_client *c);

/**
 * The clock the client uses for waits (a copy of the configured one).
 * @param[out] out receives the clock.
 * @threadsafety safe
 * @since 0.1
 */
S0_API void s0_client_clock(const s0_client *c, s0_clock *out);

S0_END_DECLS

#endif
