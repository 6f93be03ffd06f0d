/*
 * Contexts and supervised sessions (api.md §8.1, §8.3, §8.4 items 1-3):
 * runtime requests, so the runtime-access rules come first
 * (auto-resume, 503 waking up / sandbox_resume_failed, §6.6), then the
 * simulated runtime's answers (runtime/contexts.h, runtime/sessions.h)
 * with their exact success statuses and procd error codes.
 */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/api/api_internal.h"
#include "local/lifecycle/engine.h"
#include "local/runtime/sim/contexts.h"
#include "local/runtime/sim/sessions.h"

/* Pin the sandbox's runtime (waking it); false after replying. */
static bool begin(s0__rctx *c, s0__runtime_access **acc)
{
	int64_t budget = c->opts->wake_budget_ms > 0 ? c->opts->wake_budget_ms
	                                             : S0__ROUTER_WAKE_BUDGET_MS;
	s0_error *err = NULL;
	if (s0__engine_runtime_begin(c->e, c->team, c->id, budget, acc, &err) < 0) {
		s0__reply_error(c, err);
		return false;
	}
	return true;
}

/* The body as a JSON object (procd's `invalid_request` when bad). */
static bool body(s0__rctx *c, bool required, cJSON **out)
{
	return s0__body_json(c, required, out);
}

/* Reply data with status, or the module's error. */
static void finish(s0__rctx *c, int rc, int status, cJSON *data, s0_error *err)
{
	if (rc < 0) {
		cJSON_Delete(data);
		s0__reply_error(c, err);
	} else {
		s0_error_free(err);
		s0__reply_data(c, status, data);
	}
}

/* ---- contexts ---- */

typedef int (*ctx_fn)(s0__guest *g, const char *id, const cJSON *body, cJSON **out,
                      s0_error **err);

/* One context call under a pinned runtime; fn_b gets the body (required
 * when has_body, else optional). */
static void ctx_call(s0__rctx *c, const char *action, bool has_body, int status,
                     int (*fn_id)(s0__guest *, const char *, cJSON **, s0_error **), ctx_fn fn_b)
{
	c->action = action;
	cJSON *b = NULL;
	if (fn_b && !body(c, has_body, &b))
		return;
	s0__runtime_access *acc;
	if (!begin(c, &acc)) {
		cJSON_Delete(b);
		return;
	}
	s0__guest *g = s0__runtime_access_guest(acc);
	cJSON *data = NULL;
	s0_error *err = NULL;
	int rc = fn_b ? fn_b(g, c->id2, b, &data, &err) : fn_id(g, c->id2, &data, &err);
	s0__engine_runtime_end(acc);
	cJSON_Delete(b);
	finish(c, rc, status, data, err);
}

void s0__ep_ctx_create(s0__rctx *c)
{
	c->action = "create context";
	cJSON *b = NULL;
	if (!body(c, true, &b))
		return;
	s0__runtime_access *acc;
	if (!begin(c, &acc)) {
		cJSON_Delete(b);
		return;
	}
	cJSON *data = NULL;
	s0_error *err = NULL;
	int rc = s0__ctx_create_json(s0__runtime_access_guest(acc), b, &data, &err);
	s0__engine_runtime_end(acc);
	cJSON_Delete(b);
	finish(c, rc, 201, data, err);
}

void s0__ep_ctx_list(s0__rctx *c)
{
	c->action = "list contexts";
	s0__runtime_access *acc;
	if (!begin(c, &acc))
		return;
	cJSON *data = NULL;
	s0_error *err = NULL;
	int rc = s0__ctx_list_json(s0__runtime_access_guest(acc), &data, &err);
	s0__engine_runtime_end(acc);
	finish(c, rc, 200, data, err);
}

void s0__ep_ctx_get(s0__rctx *c)
{
	ctx_call(c, "get context", false, 200, s0__ctx_get_json, NULL);
}

void s0__ep_ctx_delete(s0__rctx *c)
{
	ctx_call(c, "delete context", false, 200, s0__ctx_delete_json, NULL);
}

/* Restart takes no request body (api.md §8.1): none, null or `{}`; any
 * member is unknown, like a misspelt one elsewhere. */
static int ctx_restart(s0__guest *g, const char *id, const cJSON *b, cJSON **out, s0_error **err)
{
	static const char *const none[] = {NULL};
	if (s0__json_check_keys(b, none, "", "invalid_request", err) < 0)
		return S0_EINVAL;
	return s0__ctx_restart_json(g, id, out, err);
}

void s0__ep_ctx_restart(s0__rctx *c)
{
	ctx_call(c, "restart context", false, 200, NULL, ctx_restart);
}

void s0__ep_ctx_input(s0__rctx *c)
{
	ctx_call(c, "write context input", true, 200, NULL, s0__ctx_input_json);
}

void s0__ep_ctx_exec(s0__rctx *c)
{
	ctx_call(c, "exec in context", true, 200, NULL, s0__ctx_exec_json);
}

void s0__ep_ctx_signal(s0__rctx *c)
{
	ctx_call(c, "signal context", true, 200, NULL, s0__ctx_signal_json);
}

void s0__ep_ctx_resize(s0__rctx *c)
{
	ctx_call(c, "resize context", true, 200, NULL, s0__ctx_resize_json);
}

/* ---- sessions ---- */

/* Pin the runtime and find the registry; false after replying. */
static bool ses_begin(s0__rctx *c, s0__runtime_access **acc, s0__guest **g, s0__sessions **s)
{
	if (!begin(c, acc))
		return false;
	*g = s0__runtime_access_guest(*acc);
	*s = s0__runtime_access_sessions(*acc);
	if (!*s) {
		s0__engine_runtime_end(*acc);
		c->oom = true;
		s0__reply_err(c, 500, "internal_error", "out of memory");
		return false;
	}
	return true;
}

void s0__ep_ses_create(s0__rctx *c)
{
	c->action = "create session";
	const char *key = s0__headers_get(&c->req->headers, "Idempotency-Key");
	if (key && strlen(key) > 255) {
		s0__reply_err(c, 400, "invalid_request", "Idempotency-Key is too long (%zu > 255)",
		              strlen(key));
		return;
	}
	cJSON *b = NULL;
	if (!body(c, true, &b))
		return;
	s0__runtime_access *acc;
	s0__guest *g;
	s0__sessions *s;
	if (!ses_begin(c, &acc, &g, &s)) {
		cJSON_Delete(b);
		return;
	}
	cJSON *data = NULL;
	s0_error *err = NULL;
	int status = 201;
	int rc = s0__sessions_create_json(s, g, b, key && *key ? key : NULL, &data, &status, &err);
	if (rc == S0_OK && status == 201) /* a new identity: keep it across a restart */
		s0__engine_sessions_save(c->e, c->id);
	s0__engine_runtime_end(acc);
	cJSON_Delete(b);
	finish(c, rc, status, data, err);
}

void s0__ep_ses_list(s0__rctx *c)
{
	c->action = "list sessions";
	s0__runtime_access *acc;
	s0__guest *g;
	s0__sessions *s;
	if (!ses_begin(c, &acc, &g, &s))
		return;
	cJSON *data = NULL;
	s0_error *err = NULL;
	int rc = s0__sessions_list_json(s, g, &data, &err);
	s0__engine_runtime_end(acc);
	finish(c, rc, 200, data, err);
}

typedef enum {
	SES_GET, SES_DELETE, SES_DESIRED, SES_SIGNAL, SES_EVENTS,
	SES_REPLACE, SES_ATTEMPT, SES_INPUT, SES_TERMINAL,
} ses_op;

static void ses_call(s0__rctx *c, ses_op op)
{
	static const char *const actions[] = {"get session", "delete session",
	                                      "set session desired state", "signal session",
	                                      "get session events", "replace session spec",
	                                      "start session attempt", "write session input",
	                                      "resize session terminal"};
	c->action = actions[op];
	cJSON *b = NULL;
	char *after = NULL, *limit = NULL;
	bool present;
	bool needs_body = op == SES_DESIRED || op == SES_SIGNAL || op == SES_REPLACE ||
	                  op == SES_INPUT || op == SES_TERMINAL;
	if ((needs_body || op == SES_ATTEMPT) && !body(c, needs_body, &b))
		return;
	if (op == SES_EVENTS && (!s0__query_value(c, "after", &present, &after) ||
	                         !s0__query_value(c, "limit", &present, &limit))) {
		free(after);
		return;
	}
	s0__runtime_access *acc;
	s0__guest *g;
	s0__sessions *s;
	if (!ses_begin(c, &acc, &g, &s)) {
		cJSON_Delete(b);
		free(after);
		free(limit);
		return;
	}
	cJSON *data = NULL;
	s0_error *err = NULL;
	int rc, status = 200;
	/* the calls that take a body, with their success status (api.md §8.3) */
	typedef int (*body_fn)(s0__sessions *, s0__guest *, const char *, const cJSON *, cJSON **,
	                       s0_error **);
	static const struct {
		body_fn fn;
		int status;
	} with_body[] = {
		[SES_DESIRED] = {s0__sessions_desired_json, 200},
		[SES_SIGNAL] = {s0__sessions_signal_json, 202},
		[SES_REPLACE] = {s0__sessions_replace_json, 200},
		[SES_ATTEMPT] = {s0__sessions_attempt_json, 201},
		[SES_INPUT] = {s0__sessions_input_json, 202},
		[SES_TERMINAL] = {s0__sessions_terminal_json, 200},
	};
	if (op == SES_GET)
		rc = s0__sessions_get_json(s, g, c->id2, &data, &err);
	else if (op == SES_DELETE)
		rc = s0__sessions_delete_json(s, g, c->id2, &data, &err);
	else if (op == SES_EVENTS)
		rc = s0__sessions_events_json(s, g, c->id2, after, limit, &data, &err);
	else {
		rc = with_body[op].fn(s, g, c->id2, b, &data, &err);
		status = with_body[op].status;
	}
	if (rc == S0_OK && (op == SES_DELETE || op == SES_REPLACE || op == SES_DESIRED))
		s0__engine_sessions_save(c->e, c->id); /* identity or spec changed */
	s0__engine_runtime_end(acc);
	cJSON_Delete(b);
	free(after);
	free(limit);
	finish(c, rc, status, data, err);
}

void s0__ep_ses_get(s0__rctx *c)
{
	ses_call(c, SES_GET);
}

void s0__ep_ses_delete(s0__rctx *c)
{
	ses_call(c, SES_DELETE);
}

void s0__ep_ses_desired(s0__rctx *c)
{
	ses_call(c, SES_DESIRED);
}

void s0__ep_ses_signal(s0__rctx *c)
{
	ses_call(c, SES_SIGNAL);
}

void s0__ep_ses_events(s0__rctx *c)
{
	ses_call(c, SES_EVENTS);
}

void s0__ep_ses_replace(s0__rctx *c)
{
	ses_call(c, SES_REPLACE);
}

void s0__ep_ses_attempt(s0__rctx *c)
{
	ses_call(c, SES_ATTEMPT);
}

void s0__ep_ses_input(s0__rctx *c)
{
	ses_call(c, SES_INPUT);
}

void s0__ep_ses_terminal(s0__rctx *c)
{
	ses_call(c, SES_TERMINAL);
}
