/*
 * Public routes of `s0 serve` (docs/wire.md "Public routes"): which
 * requests are public-route traffic (no API key: the route is the
 * credential), and the proxy that answers them from the service listening
 * inside the sandbox, waking a paused sandbox for a `resume: true` route.
 */
#ifndef S0_SERVER_PROXY_H
#define S0_SERVER_PROXY_H

#include <stdbool.h>

#include "common/http.h"
#include "local/lifecycle/engine.h"

/* Largest request body a public route takes buffered, and answer body
 * read whole (through `s0 serve` both stream: route_upload.h,
 * route_body.h; these bound a caller that buffers). */
#define S0__ROUTE_BODY_MAX ((size_t)8 << 20)
#define S0__ROUTE_RESPONSE_MAX ((size_t)16 << 20)

/*
 * Whether a request is for a public route: its raw path starts with /r/,
 * or its Host (nullable) is a name under @p domain (nullable: none).
 */
bool s0__route_is_public(const char *raw_path, const char *host, const char *domain);

/*
 * Answer a public-route request into @p resp (zeroed): find the service of
 * the public id (Host label under @p domain, else the /r/{id} segment),
 * pick its route by path prefix and method, pin the running sandbox (or,
 * for a `resume: true` route, wake a paused one within the 45 s gateway
 * budget), connect to the service's port through the runtime seam (running
 * a `cmd` runtime's command first when the connect is refused, once for
 * concurrent requests: svc_start.h), and relay the
 * request and the answer through http_parser: the request's body as
 * req->upload gives it (route_upload.h; else req->body, 413 over
 * S0__ROUTE_BODY_MAX), the answer's as a stream (resp->stream,
 * route_body.h). Errors are JSON envelopes: 400 hostile path or Host, 404
 * unknown route, 405 method, 413 body, 502 the service failed, 504 the
 * port does not answer a connect (at once) or the answer's head is late,
 * 503 `unavailable` / `sandbox_resume_failed`, and 503 with Retry-After
 * past S0__ROUTE_HOLD_MAX requests of one public id (route_hold.h).
 * @param stop (nullable) the server's stop: when it fires, a wait on the
 *        service's start (svc_start.h) ends with 503 `unavailable`.
 * Returns S0_OK, or S0_ENOMEM. Blocks (a handler thread); thread-safe.
 */
int s0__route_proxy(s0__engine *e, const char *domain, const s0__http_request *req,
                    const char *request_id, s0_cancel_token *stop, s0__http_response *resp);

#endif
