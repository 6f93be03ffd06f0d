/*
 * The client's private transport vtable (modelled on curl's vtls):
 * the HTTP transport (libcurl) and the in-process transport of the local
 * backend implement it, so endpoint, wait and files code is identical for
 * both.
 */
#ifndef S0_TRANSPORT_H
#define S0_TRANSPORT_H

#include "common/http.h"
#include "common/internal.h"

typedef struct s0__transport_ops {
	const char *name; /* "http", "local" */
	/*
	 * Perform one exchange. req->path starts with "/" (the client has
	 * already prefixed the API path; the transport adds the base URL).
	 * On S0_OK, resp holds any HTTP status (errors are decoded by the
	 * caller). On failure returns S0_ETRANSPORT (with *sent telling
	 * whether the request may have reached the server), S0_ECANCELED or
	 * S0_ENOMEM, and fills *err.
	 */
	int (*send)(void *ctx, const s0__http_request *req, int64_t timeout_ms,
	            s0_cancel_token *cancel, s0__http_response *resp, bool *sent,
	            s0_error **err);
	void (*free)(void *ctx);
	/*
	 * Optional change notification (NULL in a transport without one, e.g.
	 * HTTP; then waits just sleep their backoff). The three go together.
	 * watch_version: the current change version of sandbox_id (opaque; it
	 * only grows; any id, never fails). watch_arm: fire `fire` (borrowed;
	 * it must outlive the arming) once that version passes `since` (at
	 * once when it already has); returns a handle, or NULL when it could
	 * not arm (OOM: the caller just sleeps). watch_disarm: end an arming
	 * (NULL is a no-op); after it returns `fire` is not touched again. Safe
	 * from any thread; see local/api/transport.c.
	 */
	uint64_t (*watch_version)(void *ctx, const char *sandbox_id);
	void *(*watch_arm)(void *ctx, const char *sandbox_id, uint64_t since, s0_cancel_token *fire);
	void (*watch_disarm)(void *ctx, void *handle);
	/*
	 * (nullable: the transport has no streams) Open a stream of
	 * sandbox0/streams.h for client c (options checked already); the stream
	 * may keep c and ctx until freed.
	 */
	int (*open_stream)(void *ctx, struct s0_client *c, const struct s0_stream_options *o,
	                   struct s0_stream **out, s0_error **err);
} s0__transport_ops;

/* Create the libcurl transport for a base URL; see http_transport.c. */
typedef struct s0__http_transport_config {
	const char *base_url;
	int64_t connect_timeout_ms;
	bool insecure_skip_verify;
	const char *ca_file;
	const char *proxy;
} s0__http_transport_config;

int s0__http_transport_new(const s0__http_transport_config *cfg, void **ctx_out,
                           s0_error **err);
extern const s0__transport_ops s0__http_transport_ops;

#endif
