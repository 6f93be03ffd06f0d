/* s0_server_new: the server core over the router and an s0_local backend. */
#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "local/api/router.h"
#include "local/lifecycle/keys.h"
#include "local/api/stream_route.h"
#include "local/lifecycle/watch.h"
#include "local/local_internal.h"
#include "sandbox0/keys.h"
#include "server/proxy.h"
#include "server/server_internal.h"

typedef struct glue {
	s0__engine *engine;
	s0__router_opts base; /* per-server flags; team and request id per request */
	s0_local *local;
	s0__server_admin_ops admin;
	s0__server_watch_ops watch;
	s0__server_stream_ops streams;
	_Atomic(char *) public_domain; /* s0_server_set_public_domain (NULL: none) */
} glue;

/* ---- WebSocket routes (local/api/stream_route.h) ---- */

static int stream_open(void *ctx, const s0__server_call *call, const s0__http_request *req,
                       void (*kick)(void *arg), void *kick_arg, void **out,
                       s0__http_response *resp)
{
	glue *g = ctx;
	s0__router_opts o = g->base;
	o.team_id = call->team_id;
	o.request_id = call->request_id;
	s0__stream *st = NULL;
	int rc = s0__router_stream_open(g->engine, &o, req, kick, kick_arg, &st, resp);
	*out = st;
	return rc;
}

static int stream_input(void *st, const char *text, size_t len, s0__smsgq *out)
{
	return s0__stream_input(st, text, len, out);
}

static int stream_pull(void *st, size_t room, s0__smsgq *out, int64_t *retry_ms)
{
	return s0__stream_pull(st, room, out, retry_ms);
}

static const char *stream_reason(const void *st)
{
	return s0__stream_close_reason(st);
}

static void stream_free(void *st)
{
	s0__stream_free(st);
}

/* A long-poll's subscription: the server's wake over the engine's watch. */
typedef struct glue_sub {
	s0__engine_watch_sub *sub;
	void (*fn)(void *arg);
	void *arg;
} glue_sub;

static void on_engine_change(void *arg, const char *sandbox_id, uint64_t version)
{
	(void)sandbox_id;
	(void)version;
	glue_sub *gs = arg;
	gs->fn(gs->arg);
}

/* Only `GET /api/v1/sandboxes/{id}` is watchable (docs/wire.md "Long-poll"). */
static int watch_subscribe(void *ctx, const char *raw_path, void (*fn)(void *arg), void *arg,
                           void **out)
{
	static const char prefix[] = "/api/v1/sandboxes/";
	glue *g = ctx;
	char *path = NULL;
	if (s0__router_decode_path(raw_path, &path) < 0)
		return S0_ENOTFOUND;
	const char *id = path + sizeof prefix - 1;
	int rc = S0_ENOTFOUND;
	glue_sub *gs = NULL;
	if (!strncmp(path, prefix, sizeof prefix - 1) && *id && !strchr(id, '/')) {
		gs = calloc(1, sizeof *gs);
		rc = gs ? S0_OK : S0_ENOMEM;
	}
	if (rc == S0_OK) {
		gs->fn = fn;
		gs->arg = arg;
		rc = s0__engine_watch_subscribe(s0__engine_watch_of(g->engine), id, on_engine_change,
		                                gs, &gs->sub);
	}
	free(path);
	if (rc < 0) {
		free(gs);
		return rc;
	}
	*out = gs;
	return S0_OK;
}

static void watch_unsubscribe(void *ctx, void *sub)
{
	glue *g = ctx;
	glue_sub *gs = sub;
	s0__engine_watch_unsubscribe(s0__engine_watch_of(g->engine), gs->sub);
	free(gs);
}

static int route(void *ctx, const s0__server_call *call, const s0__http_request *req,
                 s0__http_response *resp)
{
	glue *g = ctx;
	s0__router_opts o = g->base;
	o.team_id = call->team_id;
	o.request_id = call->request_id;
	const char *host = s0__headers_get(&req->headers, "Host");
	o.public_domain = atomic_load(&g->public_domain);
	if (s0__route_is_public(req->path, host, o.public_domain))
		return s0__route_proxy(g->engine, o.public_domain, req, call->request_id,
		                       call->stop, resp);
	char base[280];
	size_t hl = host ? strlen(host) : 0;
	if (hl && hl < 256 && strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                                   "0123456789.-:[]") == hl) {
		snprintf(base, sizeof base, "http://%s", host);
		o.public_base = base;
	}
	return s0__router_handle_raw(g->engine, &o, req, resp);
}

static bool public_route(void *ctx, const char *raw_path, const char *host)
{
	glue *g = ctx;
	return s0__route_is_public(raw_path, host, atomic_load(&g->public_domain));
}

int s0_server_set_public_domain(s0_server *srv, const char *domain, s0_error **err)
{
	size_t n = domain ? strlen(domain) : 0;
	bool ok = srv && n && n < 200 && domain[0] != '.' && domain[n - 1] != '.' &&
	          srv->cfg.handler == route;
	for (size_t i = 0; ok && i < n; i++)
		ok = isalnum((unsigned char)domain[i]) || domain[i] == '-' || domain[i] == '.';
	if (!ok)
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "a public domain is a host name of letters, digits, '-' and '.'");
	char *copy = s0__strdup(domain), *none = NULL;
	if (!copy)
		return s0__error_nomem(err);
	for (char *c = copy; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	glue *g = srv->cfg.handler_ctx;
	if (!atomic_compare_exchange_strong(&g->public_domain, &none, copy)) {
		free(copy);
		return s0__error_set(err, S0_ECONFLICT, "conflict", "the public domain is set already");
	}
	return S0_OK;
}

static size_t limit(void *ctx, const char *method, const char *raw_path, const char **wire)
{
	(void)ctx;
	char *path = NULL;
	if (!strncmp(raw_path, "/r/", 3)) { /* a public route (proxy.h) */
		*wire = "request_too_large";
		return S0__ROUTE_BODY_MAX;
	}
	if (s0__router_decode_path(raw_path, &path) < 0) {
		*wire = "request_too_large";
		return S0__ROUTER_JSON_BODY_MAX;
	}
	size_t n = s0__router_body_limit(method, path, wire);
	free(path);
	return n;
}

static int fault_arm(void *ctx, const char *name, int32_t mode, int64_t count, int64_t delay_ms,
                     s0_error **err)
{
	return s0_local_fault_arm(ctx, name, mode, count, delay_ms, err);
}

static int fault_release(void *ctx, const char *name, s0_error **err)
{
	return s0_local_fault_release(ctx, name, err);
}

static int clock_advance(void *ctx, int64_t ms, int64_t *now, s0_error **err)
{
	int rc = s0_local_clock_advance(ctx, ms, err);
	if (rc == S0_OK)
		*now = s0_local_now_unix_ms(ctx);
	return rc;
}

static int inspect(void *ctx, const char *sandbox_id, char **json, s0_error **err)
{
	return s0_local_inspect(ctx, sandbox_id, json, err);
}

static int key_team(void *ctx, const char *key, char team[S0__SERVER_TEAM_MAX])
{
	glue *g = ctx;
	return s0__engine_apikey_team(g->engine, key, team, NULL);
}

static int key_create(void *ctx, const char *team, const char *name, char **json,
                      s0_error **err)
{
	return s0_local_api_key_create(ctx, team, name, json, err);
}

static int key_list(void *ctx, const char *team, char **json, s0_error **err)
{
	return s0_local_api_key_list(ctx, team, json, err);
}

static int key_revoke(void *ctx, const char *id, char **json, s0_error **err)
{
	return s0_local_api_key_revoke(ctx, id, json, err);
}

static void glue_free(void *ctx)
{
	glue *g = ctx;
	free(atomic_load(&g->public_domain));
	free(ctx);
}

int s0_server_new(s0_local *local, const s0_server_options *opts, s0_server **out,
                  s0_error **err)
{
	if (!local || !out)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "local and out are required");
	glue *g = calloc(1, sizeof *g);
	if (!g)
		return s0__error_nomem(err);
	uint32_t flags = opts ? opts->flags : 0;
	g->engine = s0__local_engine(local);
	g->local = local;
	g->base.zero_time_compat = local->zero_time_compat || flags & S0_SERVER_ZERO_TIME_COMPAT;
	g->base.pause_200_only = flags & S0_SERVER_PAUSE_200_ONLY;
	g->admin = (s0__server_admin_ops){local,   fault_arm, fault_release, clock_advance,
	                                  inspect, key_create, key_list,     key_revoke};
	g->watch = (s0__server_watch_ops){g, watch_subscribe, watch_unsubscribe};
	g->streams = (s0__server_stream_ops){g, stream_open, stream_input, stream_pull,
	                                     stream_reason, stream_free};
	s0__server_config cfg = {.opts = opts, .handler = route, .handler_ctx = g,
	                         .body_limit = limit, .admin = &g->admin, .watch = &g->watch,
	                         .streams = &g->streams, .on_free = glue_free,
	                         .key_lookup = key_team, .key_lookup_ctx = g,
	                         .is_public_route = public_route};
	int rc = s0__server_new(&cfg, out, err);
	if (rc < 0)
		free(g);
	return rc;
}
