/*
 * THE router of the local reference backend (docs/architecture.md "Layers"): one function
 * turns an HTTP exchange (method, path, query, headers, body) into
 * (status, headers, body) by calling the lifecycle engine. The in-process
 * transport (local/api/transport.c) and the HTTP server (server/) both call
 * it, so the two faces of the backend cannot drift.
 *
 * Wire shapes, statuses and messages follow docs/wire.md §1–§3 and §6.
 */
#ifndef S0_ROUTER_H
#define S0_ROUTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/http.h"
#include "local/lifecycle/engine.h"

/* Longest request id kept (longer inbound ids are replaced). */
#define S0__REQUEST_ID_MAX 128
/* JSON bodies (everything but file writes): 1 MiB; over it 413 request_too_large. */
#define S0__ROUTER_JSON_BODY_MAX ((size_t)1 << 20)
/* File writes: 100 MiB; over it 413 file_too_large (docs/wire.md §3.9). */
#define S0__ROUTER_FILE_BODY_MAX ((size_t)100 << 20)
/* Largest template tar upload (POST /api/v1/templates; ep_templates.c). */
#define S0__ROUTER_TEMPLATE_BODY_MAX ((size_t)256 << 20)
/* Deepest JSON nesting accepted in a request body. */
#define S0__ROUTER_JSON_DEPTH_MAX 64
/* Gateway wake budget of a runtime request (docs/decisions.md "Auto-resume on access"). */
#define S0__ROUTER_WAKE_BUDGET_MS 45000

typedef struct s0__router_opts {
	/* Team of the caller (from the API key, or the in-process team).
	 * NULL: API routes answer 401 unauthorized. */
	const char *team_id;
	/* Request id echoed in X-Request-ID; NULL: taken from the request's
	 * X-Request-ID header, or generated. */
	const char *request_id;
	/* Emit "0001-01-01T00:00:00Z" instead of null for unset expiries
	 * (docs/wire.md §3.0, for the published Python SDK). */
	bool zero_time_compat;
	/* Answer an accepted pause with 200 instead of 202 (docs/wire.md §6.3; [PY]
	 * and [GO-old] reject 202). */
	bool pause_200_only;
	/* Wake budget of runtime requests in ms; 0 = S0__ROUTER_WAKE_BUDGET_MS.
	 * Callers with their own deadline pass min(45 s, deadline). */
	int64_t wake_budget_ms;
	/* Public routes (docs/wire.md "Public routes"), both nullable: the
	 * domain services are served under by Host ({public_id}.{domain}), and
	 * the "scheme://host[:port]" path-based URLs (/r/{public_id}/) start with. */
	const char *public_domain;
	const char *public_base;
	/* The node running the sandbox could not be reached (forward.h): an
	 * accepted pause answers 202 (docs/wire.md §6.3's node channel). */
	bool owner_unreachable;
} s0__router_opts;

/*
 * Handle one request. resp must be zeroed by the caller; on return it holds
 * the status, headers (always Content-Type and X-Request-ID) and body.
 * Returns S0_OK, or S0_ENOMEM when the response could not be built (resp
 * then holds whatever was built; the caller answers 500 itself).
 * Thread-safe: any number of threads may route at once.
 */
int s0__router_handle(s0__engine *e, const s0__router_opts *opts, const s0__http_request *req,
                      s0__http_response *resp);

/*
 * The adapters' entry (in-process transport and HTTP server): req->path is
 * the raw, percent-encoded path as it came off the wire. Decodes it (a NUL
 * byte answers 400), refuses a body over s0__router_body_limit() with 413,
 * then calls s0__router_handle(). Same contract as s0__router_handle().
 */
int s0__router_handle_raw(s0__engine *e, const s0__router_opts *opts,
                          const s0__http_request *req, s0__http_response *resp);

/*
 * Largest body accepted for (method, decoded path), and the wire code to
 * answer with past it ("file_too_large" for file writes, else
 * "request_too_large"). Servers use it to stop reading early.
 */
size_t s0__router_body_limit(const char *method, const char *path, const char **wire_code);

/*
 * Fill resp with an error envelope {"success":false,"error":{code,message}}
 * of this status and wire code, plus Content-Type and X-Request-ID.
 * Returns S0_OK or S0_ENOMEM. Used by adapters for errors raised before
 * routing (auth, body limits, bad paths).
 */
int s0__router_reply_error(s0__http_response *resp, const char *request_id, int status,
                           const char *wire_code, const char *message);
/* The same for an engine error (taken; NULL: 500), with its status, wire
 * code and Retry-After as the API answers it (reply_route.c). */
int s0__router_reply_s0_error(s0__http_response *resp, const char *request_id, s0_error *err);

/*
 * Percent-decode a raw URL path. Returns 0 and a malloc'd string, -1 when
 * the decoded path would contain a NUL byte (answer 400), or -2 on OOM.
 */
int s0__router_decode_path(const char *raw, char **out);

/*
 * The request id to use: a well-formed inbound X-Request-ID (printable
 * ASCII, 1..S0__REQUEST_ID_MAX-1 bytes), else a fresh random one.
 */
void s0__router_request_id(const s0__headers *h, char out[S0__REQUEST_ID_MAX]);


/*
 * A member name that appears twice in one object anywhere in v (cJSON keeps
 * both and lookups take the first), or NULL. Borrowed from v. *rc is S0_OK,
 * or S0_ENOMEM (then NULL). Objects over 16 members are checked by sorting,
 * so a huge object costs O(n log n).
 */
struct cJSON;
const char *s0__json_duplicate_key(const struct cJSON *v, int *rc);

#endif
