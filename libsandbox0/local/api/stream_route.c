/*
 * The WebSocket routes (docs/wire.md §8.2) onto streams (stream.h): which
 * stream a raw path names, and the answer when it cannot open — the same
 * envelope the route's plain GET would get (404, 503 waking up, …).
 */
#include <stdlib.h>
#include <string.h>

#include "local/api/api_internal.h"
#include "local/api/forward.h"
#include "local/api/fwdstream.h"
#include "local/api/stream.h"
#include "local/api/stream_route.h"

/* Split "/api/v1/sandboxes/<id>/<rest>": kind and ids (pointers into path, NUL-cut). */
static int match(char *path, s0__stream_kind *kind, char **sandbox, char **id2)
{
	static const char prefix[] = "/api/v1/sandboxes/";
	if (strncmp(path, prefix, sizeof prefix - 1))
		return -1;
	char *id = path + sizeof prefix - 1;
	char *slash = strchr(id, '/');
	if (!slash || slash == id)
		return -1;
	*slash = '\0';
	char *rest = slash + 1;
	*sandbox = id;
	*id2 = NULL;
	if (!strcmp(rest, "files/watch")) {
		*kind = S0__STREAM_WATCH;
		return 0;
	}
	const char *what = !strncmp(rest, "contexts/", 9) ? "contexts/"
	                 : !strncmp(rest, "sessions/", 9) ? "sessions/"
	                                                  : NULL;
	if (!what)
		return -1;
	char *x = rest + 9;
	char *tail = strchr(x, '/');
	if (!tail || tail == x || strcmp(tail, "/ws"))
		return -1;
	*tail = '\0';
	*id2 = x;
	*kind = what[0] == 'c' ? S0__STREAM_CONTEXT : S0__STREAM_SESSION;
	return 0;
}

int s0__router_stream_open(s0__engine *e, const s0__router_opts *opts,
                           const s0__http_request *req, s0__stream_kick_fn kick, void *kick_arg,
                           s0__stream **out, s0__http_response *resp)
{
	*out = NULL;
	char *path = NULL;
	int rc = s0__router_decode_path(req->path ? req->path : "", &path);
	if (rc == -2)
		return S0_ENOMEM;
	s0__stream_kind kind;
	char *sandbox, *id2;
	if (rc < 0 || match(path, &kind, &sandbox, &id2) < 0) {
		free(path);
		return S0_ENOTFOUND;
	}
	s0__stream_open_req o = {.kind = kind, .team = opts->team_id, .sandbox_id = sandbox,
	                         .id2 = id2,
	                         .wake_budget_ms = opts->wake_budget_ms > 0
	                                               ? opts->wake_budget_ms
	                                               : S0__ROUTER_WAKE_BUDGET_MS};
	char *after = NULL;
	bool present = false;
	if (kind == S0__STREAM_SESSION && req->query)
		after = s0__query_get(req->query, "after", &present);
	o.after = after;
	s0__owner_kind owner = S0__OWNER_HERE;
	char url[512] = "";
	if (opts->team_id && !s0__headers_get(&req->headers, S0__NODE_AUTH_HEADER) &&
	    s0__engine_owner(e, sandbox, &owner, url, sizeof url, NULL) == S0_OK &&
	    owner == S0__OWNER_PEER && url[0]) { /* it runs on another node: driven there */
		free(path);
		return s0__fwdstream_open(e, url, req, opts->request_id, kick, kick_arg, out, resp);
	}
	s0_error *err = NULL;
	rc = opts->team_id ? s0__stream_open(e, &o, kick, kick_arg, out, &err)
	                   : s0__error_set(&err, S0_EAUTH, "unauthorized", "unauthorized");
	free(after);
	if (rc < 0 && rc != S0_ENOMEM) {
		s0__rctx c = {.e = e, .opts = opts, .req = req, .resp = resp, .team = opts->team_id,
		              .id = sandbox, .id2 = id2, .action = "open stream"};
		s0__strlcpy(c.rid, opts->request_id ? opts->request_id : "", sizeof c.rid);
		s0__reply_error(&c, err);
		s0__reply_header(&c, "X-Request-ID", c.rid);
		rc = c.oom ? S0_ENOMEM : S0_OK;
	} else
		s0_error_free(err);
	free(path);
	return rc;
}
