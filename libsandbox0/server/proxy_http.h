/*
 * One HTTP/1.1 exchange of a public route over a socket connected to the
 * sandbox's service (server/proxy.c): the request head is written from
 * the caller's fields, the answer parsed by http_parser (Debian
 * libhttp-parser-dev), with bounded buffers.
 */
#ifndef S0_SERVER_PROXY_HTTP_H
#define S0_SERVER_PROXY_HTTP_H

#include <stdint.h>

#include "common/http.h"

/** What to send (every pointer borrowed). */
typedef struct s0__proxy_req {
	const char *method;
	const char *target;          /* raw path and query, "/a/b?c" */
	const s0__headers *headers;  /* forwarded as given (no CR/LF inside: MHD refuses them) */
	const void *body;            /* nullable */
	size_t body_len;
	bool has_body;
	size_t response_max;         /* largest answer body read whole (not stream) */
	int64_t timeout_ms;          /* the whole exchange (stream: up to the answer's head),
	                                real time */
	bool stream;                 /* the answer's body as it comes (out->stream) */
	bool upgrade;                /* ask the service to upgrade (`Connection: Upgrade`; the
	                                headers carry `Upgrade`): a 101 comes back as an
	                                upgraded out->stream */
	struct s0__route_upload *upload; /* (nullable) the body as it comes instead of body:
	                                    sent with its length, else chunked; each wait for
	                                    more or for room bounded by timeout_ms */
} s0__proxy_req;

/*
 * Send @p r over @p fd (borrowed; left open) and read the answer into
 * @p out (zeroed): status, headers as sent, body. With r->stream an
 * answer with a body comes back with out->stream set instead (the body
 * as it arrives, chunked or not, decoded by http_parser; bounded
 * buffers; waits for more at most timeout_ms each): it then owns @p fd
 * (closed by its free()).
 * @retval S0_ETIMEDOUT the service did not answer in time.
 * @retval S0_ETOOLARGE the answer's body is over response_max.
 * @retval S0_ETRANSPORT the connection failed or the answer is not HTTP.
 * @retval S0_ENOMEM. On error *why names the failure (static text).
 * Blocks up to timeout_ms; thread-safe.
 */
int s0__proxy_exchange(int fd, const s0__proxy_req *r, s0__http_response *out,
                       const char **why);

#endif
