/* The in-process transport: client request -> router -> client response. */
#include "local/api/transport.h"
#include "local/api/stream_local.h"

#include <stdlib.h>
#include <string.h>

#include "local/lifecycle/watch.h"

typedef struct local_transport {
	s0__engine *e;
	char *team_id;
	bool zero_time_compat;
	bool pause_200_only;
} local_transport;

int s0__local_transport_new(s0__engine *e, const s0__router_opts *opts, void **ctx_out,
                            s0_error **err)
{
	if (!e || !opts || s0__is_blank(opts->team_id) || !ctx_out)
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "local transport needs an engine and a team");
	local_transport *t = calloc(1, sizeof *t);
	if (!t || !(t->team_id = s0__strdup(opts->team_id))) {
		free(t);
		return s0__error_nomem(err);
	}
	t->e = e;
	t->zero_time_compat = opts->zero_time_compat;
	t->pause_200_only = opts->pause_200_only;
	*ctx_out = t;
	return S0_OK;
}

/* A copy of the request the router may keep pointers into for the call: the
 * strings and headers are duplicated; the body is borrowed, since the call
 * is synchronous and a 100 MiB write should not be copied twice. */
static int copy_request(const s0__http_request *in, s0__http_request *out, char **method,
                        char **path, char **query)
{
	*method = s0__strdup(in->method ? in->method : "GET");
	*path = s0__strdup(in->path ? in->path : "/");
	*query = s0__strdup(in->query);
	*out = (s0__http_request){.method = *method, .path = *path, .query = *query,
	                          .body = in->body, .body_len = in->body_len,
	                          .has_body = in->has_body};
	if (!*method || !*path || (in->query && !*query))
		return -1;
	for (size_t i = 0; i < in->headers.len; i++)
		if (s0__headers_add(&out->headers, in->headers.items[i].name,
		                    in->headers.items[i].value) < 0)
			return -1;
	return 0;
}

static int64_t wake_budget(int64_t timeout_ms)
{
	if (timeout_ms > 0 && timeout_ms < S0__ROUTER_WAKE_BUDGET_MS)
		return timeout_ms;
	return S0__ROUTER_WAKE_BUDGET_MS;
}

static int local_send(void *ctx, const s0__http_request *req, int64_t timeout_ms,
                      s0_cancel_token *cancel, s0__http_response *resp, bool *sent,
                      s0_error **err)
{
	local_transport *t = ctx;
	*sent = false;
	if (cancel && s0_cancel_token_is_canceled(cancel))
		return s0__error_set(err, S0_ECANCELED, "canceled", "canceled before the request was sent");
	s0__http_request r;
	char *method, *path, *query;
	int rc = copy_request(req, &r, &method, &path, &query);
	s0__router_opts o = {.team_id = t->team_id, .zero_time_compat = t->zero_time_compat,
	                     .pause_200_only = t->pause_200_only,
	                     .wake_budget_ms = wake_budget(timeout_ms)};
	s0__http_response out = {0};
	if (rc == 0) {
		*sent = true;
		rc = s0__router_handle_raw(t->e, &o, &r, &out);
	}
	s0__headers_free(&r.headers);
	free(method);
	free(path);
	free(query);
	if (rc != S0_OK) {
		s0__http_response_free(&out);
		return s0__error_nomem(err);
	}
	*resp = out;
	return S0_OK;
}

static void local_free(void *ctx)
{
	local_transport *t = ctx;
	if (!t)
		return;
	free(t->team_id);
	free(t);
}

/* The engine's change notification (local/lifecycle/watch.h) for waits. */
static uint64_t local_watch_version(void *ctx, const char *sandbox_id)
{
	local_transport *t = ctx;
	return s0__engine_watch_version(s0__engine_watch_of(t->e), sandbox_id);
}

static void fire_token(void *arg)
{
	s0_cancel_token_cancel(arg);
}

static void *local_watch_arm(void *ctx, const char *sandbox_id, uint64_t since,
                             s0_cancel_token *fire)
{
	local_transport *t = ctx;
	return s0__engine_watch_arm_once(s0__engine_watch_of(t->e), sandbox_id, since, fire_token,
	                                 fire);
}

static void local_watch_disarm(void *ctx, void *handle)
{
	local_transport *t = ctx;
	s0__engine_watch_disarm(s0__engine_watch_of(t->e), handle);
}

static int local_open_stream(void *ctx, struct s0_client *c, const s0_stream_options *o,
                             s0_stream **out, s0_error **err)
{
	(void)c;
	local_transport *t = ctx;
	return s0__stream_local_open(t->e, t->team_id, o, out, err);
}

const s0__transport_ops s0__local_transport_ops = {
	.name = "local",
	.send = local_send,
	.free = local_free,
	.watch_version = local_watch_version,
	.watch_arm = local_watch_arm,
	.watch_disarm = local_watch_disarm,
	.open_stream = local_open_stream,
};
