/* THE router: route table, method and auth checks, dispatch (docs/architecture.md "Layers"). */
#include <stdlib.h>
#include <string.h>

#include "local/api/api_internal.h"

#define MAX_SEGS 12

enum { R_AUTH = 1 };

typedef struct route {
	const char *pattern; /* segments; "*" = one parameter, trailing "**" = any rest */
	const char *method;  /* NULL = any method */
	s0__endpoint_fn fn;
	unsigned flags;
} route;

#define SB "/api/v1/sandboxes"
#define SNAP "/api/v1/sandbox-rootfs-snapshots"
#define TPL "/api/v1/templates"

static const route routes[] = {
	{"/healthz", "GET", s0__ep_healthz, 0},
	{"/metadata", "GET", s0__ep_metadata, 0},
	{SB, "POST", s0__ep_claim, R_AUTH},
	{SB, "GET", s0__ep_list, R_AUTH},
	{SB "/*", "GET", s0__ep_get, R_AUTH},
	{SB "/*", "PUT", s0__ep_update, R_AUTH},
	{SB "/*", "DELETE", s0__ep_delete, R_AUTH},
	{SB "/*/status", "GET", s0__ep_status, R_AUTH},
	{SB "/*/pause", "POST", s0__ep_pause, R_AUTH},
	{SB "/*/resume", "POST", s0__ep_resume, R_AUTH},
	{SB "/*/refresh", "POST", s0__ep_refresh, R_AUTH},
	{SB "/*/network", "GET", s0__ep_network_get, R_AUTH},
	{SB "/*/network", "PUT", s0__ep_network_put, R_AUTH},
	{SB "/*/snapshots", "POST", s0__ep_snapshot_create, R_AUTH},
	{SB "/*/snapshots", "GET", s0__ep_snapshot_list, R_AUTH},
	{SB "/*/rootfs/restore", "POST", s0__ep_restore, R_AUTH},
	{SB "/*/fork", "POST", s0__ep_fork, R_AUTH},
	{SB "/*/services", "GET", s0__ep_services_get, R_AUTH},
	{SB "/*/services", "PUT", s0__ep_services_put, R_AUTH},
	{SB "/*/files", "GET", s0__ep_files_read, R_AUTH},
	{SB "/*/files", "POST", s0__ep_files_write, R_AUTH},
	{SB "/*/files", "DELETE", s0__ep_files_delete, R_AUTH},
	{SB "/*/files/stat", "GET", s0__ep_files_stat, R_AUTH},
	{SB "/*/files/list", "GET", s0__ep_files_list, R_AUTH},
	{SB "/*/files/move", "POST", s0__ep_files_move, R_AUTH},
	{SB "/*/contexts", "POST", s0__ep_ctx_create, R_AUTH},
	{SB "/*/contexts", "GET", s0__ep_ctx_list, R_AUTH},
	{SB "/*/contexts/*", "GET", s0__ep_ctx_get, R_AUTH},
	{SB "/*/contexts/*", "DELETE", s0__ep_ctx_delete, R_AUTH},
	{SB "/*/contexts/*/restart", "POST", s0__ep_ctx_restart, R_AUTH},
	{SB "/*/contexts/*/input", "POST", s0__ep_ctx_input, R_AUTH},
	{SB "/*/contexts/*/exec", "POST", s0__ep_ctx_exec, R_AUTH},
	{SB "/*/contexts/*/signal", "POST", s0__ep_ctx_signal, R_AUTH},
	{SB "/*/contexts/*/resize", "POST", s0__ep_ctx_resize, R_AUTH},
	{SB "/*/sessions", "POST", s0__ep_ses_create, R_AUTH},
	{SB "/*/sessions", "GET", s0__ep_ses_list, R_AUTH},
	{SB "/*/sessions/*", "GET", s0__ep_ses_get, R_AUTH},
	{SB "/*/sessions/*", "DELETE", s0__ep_ses_delete, R_AUTH},
	{SB "/*/sessions/*/desired-state", "PUT", s0__ep_ses_desired, R_AUTH},
	{SB "/*/sessions/*/signals", "POST", s0__ep_ses_signal, R_AUTH},
	{SB "/*/sessions/*/events", "GET", s0__ep_ses_events, R_AUTH},
	{SB "/*/sessions/*", "PUT", s0__ep_ses_replace, R_AUTH},
	{SB "/*/sessions/*/attempts", "POST", s0__ep_ses_attempt, R_AUTH},
	{SB "/*/sessions/*/inputs", "POST", s0__ep_ses_input, R_AUTH},
	{SB "/*/sessions/*/terminal", "PUT", s0__ep_ses_terminal, R_AUTH},
	/* WebSocket routes (docs/wire.md §8.2): `s0 serve` upgrades them before
	 * routing (local/api/stream_route.h); a plain GET gets 426 */
	{SB "/*/files/watch", "GET", s0__ep_upgrade_required, R_AUTH},
	{SB "/*/contexts/*/ws", "GET", s0__ep_upgrade_required, R_AUTH},
	{SB "/*/sessions/*/ws", "GET", s0__ep_upgrade_required, R_AUTH},
	/* the session event stream: server-sent events that `s0 serve` answers
	 * before routing (docs/wire.md §8.4); other methods of these stream
	 * paths are 405 with Allow, like every route's */
	{SB "/*/sessions/*/events/stream", "GET", s0__ep_not_implemented, R_AUTH},
	{SNAP "/*", "GET", s0__ep_snapshot_get, R_AUTH},
	{SNAP "/*", "DELETE", s0__ep_snapshot_delete, R_AUTH},
	{TPL, "POST", s0__ep_template_create, R_AUTH},
	{TPL, "GET", s0__ep_template_list, R_AUTH},
	{TPL "/*", "GET", s0__ep_template_get, R_AUTH},
	{TPL "/*", "DELETE", s0__ep_template_delete, R_AUTH},
};

typedef struct segs {
	const char *s[MAX_SEGS];
	size_t len[MAX_SEGS];
	int n;
} segs;

/* Split "/a/b/c" into segments; false when the path is not absolute or too deep. */
static bool split(const char *path, segs *out)
{
	out->n = 0;
	if (!path || path[0] != '/')
		return false;
	const char *p = path + 1;
	for (;;) {
		if (out->n == MAX_SEGS)
			return false;
		const char *slash = strchr(p, '/');
		out->s[out->n] = p;
		out->len[out->n++] = slash ? (size_t)(slash - p) : strlen(p);
		if (!slash)
			return true;
		p = slash + 1;
	}
}

/* Whether the path matches; *param_seg receives the first parameter's
 * index, param2 (nullable) the second's. */
static bool match2(const char *pattern, const segs *path, int *param_seg, int *param2)
{
	segs pat;
	split(pattern, &pat);
	*param_seg = -1;
	if (param2)
		*param2 = -1;
	for (int i = 0; i < pat.n; i++) {
		bool rest = pat.len[i] == 2 && !memcmp(pat.s[i], "**", 2);
		if (rest)
			return path->n >= i;
		if (i >= path->n || !path->len[i])
			return false;
		if (pat.len[i] == 1 && pat.s[i][0] == '*') {
			if (*param_seg < 0)
				*param_seg = i;
			else if (param2 && *param2 < 0)
				*param2 = i;
		} else if (pat.len[i] != path->len[i] || memcmp(pat.s[i], path->s[i], pat.len[i])) {
			return false;
		}
	}
	return pat.n == path->n;
}

static bool match(const char *pattern, const segs *path, int *param_seg)
{
	return match2(pattern, path, param_seg, NULL);
}

static const route *find_route(const char *method, const segs *path, int *param_seg,
                               int *param2, bool *path_known)
{
	*path_known = false;
	for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
		int ps, p2;
		if (!match2(routes[i].pattern, path, &ps, &p2))
			continue;
		*path_known = true;
		/* HEAD is GET without the body (RFC 9110 §9.3.2): the HTTP
		 * server drops the body, the in-process caller ignores it */
		if (!routes[i].method || !strcmp(routes[i].method, method) ||
		    (!strcmp(method, "HEAD") && !strcmp(routes[i].method, "GET"))) {
			*param_seg = ps;
			*param2 = p2;
			return &routes[i];
		}
	}
	return NULL;
}

/* Ids are at most 255 bytes and printable (no id the engine makes is longer
 * than S0__ID_MAX - 1, so longer ones cannot exist). */
static bool id_ok(const char *id)
{
	size_t n = strlen(id);
	if (!n || n >= S0__ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)id[i] < 0x20 || id[i] == 0x7f)
			return false;
	return true;
}

/* 405 with an Allow header listing the path's methods (RFC 9110 §15.5.6). */
static void method_not_allowed(s0__rctx *c, const segs *path, const char *method)
{
	char allow[64] = "";
	for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
		int ps;
		if (routes[i].method && match(routes[i].pattern, path, &ps) &&
		    strlen(allow) + strlen(routes[i].method) + 9 < sizeof allow) {
			if (allow[0])
				strcat(allow, ", ");
			strcat(allow, routes[i].method);
			if (!strcmp(routes[i].method, "GET"))
				strcat(allow, ", HEAD");
		}
	}
	if (allow[0])
		s0__reply_header(c, "Allow", allow);
	s0__reply_err(c, 405, "method_not_allowed", "method %.16s not allowed", method);
}

static void dispatch(s0__rctx *c, const route *r, const segs *path, int param_seg, int param2)
{
	char *id = NULL, *id2 = NULL;
	if (r->flags & R_AUTH && !c->team) {
		s0__reply_err(c, 401, "unauthorized", "missing authentication");
		return;
	}
	if (param_seg >= 0) {
		id = s0__strndup(path->s[param_seg], path->len[param_seg]);
		if (!id) {
			c->oom = true;
			return;
		}
		if (!id_ok(id)) {
			bool snap = !strncmp(c->req->path, SNAP "/", sizeof SNAP);
			bool tpl = !strncmp(c->req->path, TPL "/", sizeof TPL);
			s0__reply_err(c, 404, "not_found",
			              snap ? "not found" : tpl ? "template not found" : "sandbox not found");
			free(id);
			return;
		}
	}
	if (param2 >= 0) {
		size_t id2_len;
		id2 = s0__pct_decode(path->s[param2], path->len[param2], false, &id2_len);
		if (!id2) {
			c->oom = true;
			free(id);
			return;
		}
		if (!id_ok(id2)) {
			bool ses = strstr(c->req->path, "/sessions/") != NULL;
			s0__reply_err(c, 404, ses ? "session_not_found" : "context_not_found",
			              ses ? "session not found" : "context not found");
			free(id);
			free(id2);
			return;
		}
	}
	c->id = id;
	c->id2 = id2;
	r->fn(c);
	c->id = NULL;
	c->id2 = NULL;
	free(id);
	free(id2);
}

int s0__router_handle(s0__engine *e, const s0__router_opts *opts, const s0__http_request *req,
                      s0__http_response *resp)
{
	static const s0__router_opts defaults = {0};
	s0__rctx c = {.e = e, .opts = opts ? opts : &defaults, .req = req, .resp = resp};
	c.team = c.opts->team_id && *c.opts->team_id ? c.opts->team_id : NULL;
	if (c.opts->request_id && *c.opts->request_id)
		s0__strlcpy(c.rid, c.opts->request_id, sizeof c.rid);
	else
		s0__router_request_id(&req->headers, c.rid);
	segs path;
	bool known = false;
	int param_seg = -1, param2 = -1;
	const route *r = NULL;
	const char *method = req->method ? req->method : "";
	if (split(req->path, &path))
		r = find_route(method, &path, &param_seg, &param2, &known);
	if (r)
		dispatch(&c, r, &path, param_seg, param2);
	else if (known)
		method_not_allowed(&c, &path, method);
	else
		s0__reply_err(&c, 404, "not_found", "not found");
	if (!resp->status)
		s0__reply_err(&c, 500, "internal_error", "no response");
	s0__reply_header(&c, "X-Request-ID", c.rid);
	return c.oom ? S0_ENOMEM : S0_OK;
}

size_t s0__router_body_limit(const char *method, const char *path, const char **wire_code)
{
	segs p;
	int ps;
	if (method && !strcmp(method, "POST") && split(path, &p) && match(SB "/*/files", &p, &ps)) {
		*wire_code = "file_too_large";
		return S0__ROUTER_FILE_BODY_MAX;
	}
	if (method && !strcmp(method, "POST") && !strcmp(path, TPL))
		return *wire_code = "request_too_large", S0__ROUTER_TEMPLATE_BODY_MAX;
	*wire_code = "request_too_large";
	return S0__ROUTER_JSON_BODY_MAX;
}
