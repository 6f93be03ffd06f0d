/* The adapters' common entry: raw path decoding and body limits before routing. */
#include <stdio.h>
#include <stdlib.h>

#include <string.h>

#include "local/api/forward.h"
#include "local/api/fwdstream.h"
#include "local/api/router.h"

/* A call served here while the node running its sandbox cannot be
 * reached: reads and the lifecycle calls the shared store carries to that
 * node (its controller runs a recorded pause or delete). */
static bool served_unreachable(const char *method, const char *path)
{
	const char *tail = strrchr(path, '/');
	return !strcmp(method, "GET") || !strcmp(method, "DELETE") ||
	       (!strcmp(method, "POST") && tail && (!strcmp(tail, "/pause") || !strcmp(tail, "/resume")));
}

int s0__router_handle_raw(s0__engine *e, const s0__router_opts *opts,
                          const s0__http_request *req, s0__http_response *resp)
{
	char rid[S0__REQUEST_ID_MAX];
	s0__router_opts o = opts ? *opts : (s0__router_opts){0};
	if (!o.request_id || !*o.request_id) {
		s0__router_request_id(&req->headers, rid);
		o.request_id = rid;
	}
	char *path = NULL;
	int rc = s0__router_decode_path(req->path ? req->path : "", &path);
	if (rc == -2)
		return S0_ENOMEM;
	if (rc == -1)
		return s0__router_reply_error(resp, o.request_id, 400, "bad_request",
		                              "invalid request: path contains a NUL byte");
	const char *wire;
	size_t limit = s0__router_body_limit(req->method, path, &wire);
	if (req->has_body && req->body_len > limit) {
		free(path);
		char msg[96];
		snprintf(msg, sizeof msg, "request body is too large (%zu > %zu bytes)", req->body_len,
		         limit);
		return s0__router_reply_error(resp, o.request_id, 413, wire, msg);
	}
	bool channel = s0__headers_get(&req->headers, S0__NODE_AUTH_HEADER) != NULL;
	bool fwd_stream = s0__fwdstream_is_route(path); /* node channel only */
	if (fwd_stream && !channel) {
		free(path);
		return s0__router_reply_error(resp, o.request_id, 404, "not_found", "not found");
	}
	bool unreachable = false;
	rc = s0__router_forward(e, req, path, o.request_id, resp, &unreachable);
	if (rc == 0 && fwd_stream)
		rc = s0__fwdstream_serve(e, &o, req, path, resp) < 0 ? S0_ENOMEM : 1;
	if (rc != 0) {
		free(path);
		return rc < 0 ? rc : S0_OK;
	}
	if (unreachable && !served_unreachable(req->method, path)) {
		free(path);
		rc = s0__router_reply_error(resp, o.request_id, 503, "unavailable",
		                            "the node running this sandbox cannot be reached; retry");
		if (rc == S0_OK)
			s0__headers_add(&resp->headers, "Retry-After", "1");
		return rc;
	}
	o.owner_unreachable = unreachable;
	s0__http_request r = *req;
	r.path = path;
	rc = s0__router_handle(e, &o, &r, resp);
	/* another node won the generation this call tried to start (two
	 * resumes through two nodes at once): the call goes to that node,
	 * which answers once its start settled; that node not reachable under
	 * a live lease is not final (docs/scaling.md "Takeover on the spot") */
	if (rc == S0_OK && resp->status == 409 && !channel) {
		s0__http_response again = {0};
		int f = unreachable ? 0
		                    : s0__router_forward(e, req, path, o.request_id, &again, &unreachable);
		if (f == 1) {
			s0__http_response_free(resp);
			*resp = again;
		} else {
			s0__http_response_free(&again);
		}
		if (f == 0 && unreachable) {
			s0__http_response_free(resp);
			memset(resp, 0, sizeof *resp);
			rc = s0__router_reply_error(resp, o.request_id, 503, "unavailable",
			                            "the node running this sandbox cannot be reached; retry");
			if (rc == S0_OK)
				s0__headers_add(&resp->headers, "Retry-After", "1");
		}
	}
	free(path);
	return rc;
}
