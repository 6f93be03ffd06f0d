/*
 * Contexts and supervised sessions (docs/wire.md §8.1, §8.3, §8.4 items 1-3):
 * runtime requests, so the runtime-access rules come first
 * (auto-resume, 503 waking up / sandbox_resume_failed, §6.6), then the
 * runtime driver's answers (runtime/runtime.h proc_call) with their exact
 * success statuses and procd error codes.
 */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/api/api_internal.h"
#include "local/lifecycle/engine.h"
#include "local/runtime/runtime.h"

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

/* What a call takes as its body. */
enum { BODY_NONE, BODY_OPTIONAL, BODY_REQUIRED };

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

/* ---- contexts and sessions ---- */

/* One call under a pinned runtime: the body (required or optional) and the
 * events query first, then the driver; sessions whose identity or spec
 * changed are kept across a restart. */
static void proc_call(s0__rctx *c, const char *action, int op, int body_mode)
{
	c->action = action;
	cJSON *b = NULL;
	char *after = NULL, *limit = NULL;
	bool present;
	if (body_mode != BODY_NONE && !body(c, body_mode == BODY_REQUIRED, &b))
		return;
	if (op == S0__RT_SES_EVENTS && (!s0__query_value(c, "after", &present, &after) ||
	                                !s0__query_value(c, "limit", &present, &limit))) {
		free(after);
		return;
	}
	const char *key = NULL;
	if (op == S0__RT_SES_CREATE) {
		key = s0__headers_get(&c->req->headers, "Idempotency-Key");
		key = key && *key ? key : NULL;
	}
	s0__runtime_access *acc;
	if (!begin(c, &acc)) {
		cJSON_Delete(b);
		free(after);
		free(limit);
		return;
	}
	s0__rt_proc_call call = {.op = op, .id = c->id2, .body = b, .idempotency_key = key,
	                         .after = after, .limit = limit};
	cJSON *data = NULL;
	s0_error *err = NULL;
	int status = 200;
	int rc = s0__runtime_access_proc(acc, &call, &data, &status, &err);
	if (rc == S0_OK && ((op == S0__RT_SES_CREATE && status == 201) || op == S0__RT_SES_DELETE ||
	                    op == S0__RT_SES_REPLACE || op == S0__RT_SES_DESIRED))
		s0__engine_sessions_save(c->e, c->id); /* identity or spec changed */
	s0__engine_runtime_end(acc);
	cJSON_Delete(b);
	free(after);
	free(limit);
	finish(c, rc, status, data, err);
}

void s0__ep_ctx_create(s0__rctx *c)
{
	proc_call(c, "create context", S0__RT_CTX_CREATE, BODY_REQUIRED);
}

void s0__ep_ctx_list(s0__rctx *c)
{
	proc_call(c, "list contexts", S0__RT_CTX_LIST, BODY_NONE);
}

void s0__ep_ctx_get(s0__rctx *c)
{
	proc_call(c, "get context", S0__RT_CTX_GET, BODY_NONE);
}

void s0__ep_ctx_delete(s0__rctx *c)
{
	proc_call(c, "delete context", S0__RT_CTX_DELETE, BODY_NONE);
}

/* Restart takes no request body: the driver refuses any member. */
void s0__ep_ctx_restart(s0__rctx *c)
{
	proc_call(c, "restart context", S0__RT_CTX_RESTART, BODY_OPTIONAL);
}

void s0__ep_ctx_input(s0__rctx *c)
{
	proc_call(c, "write context input", S0__RT_CTX_INPUT, BODY_REQUIRED);
}

void s0__ep_ctx_exec(s0__rctx *c)
{
	proc_call(c, "exec in context", S0__RT_CTX_EXEC, BODY_REQUIRED);
}

void s0__ep_ctx_signal(s0__rctx *c)
{
	proc_call(c, "signal context", S0__RT_CTX_SIGNAL, BODY_REQUIRED);
}

void s0__ep_ctx_resize(s0__rctx *c)
{
	proc_call(c, "resize context", S0__RT_CTX_RESIZE, BODY_REQUIRED);
}

void s0__ep_ses_create(s0__rctx *c)
{
	const char *key = s0__headers_get(&c->req->headers, "Idempotency-Key");
	if (key && strlen(key) > 255) {
		c->action = "create session";
		s0__reply_err(c, 400, "invalid_request", "Idempotency-Key is too long (%zu > 255)",
		              strlen(key));
		return;
	}
	proc_call(c, "create session", S0__RT_SES_CREATE, BODY_REQUIRED);
}

void s0__ep_ses_list(s0__rctx *c)
{
	proc_call(c, "list sessions", S0__RT_SES_LIST, BODY_NONE);
}

void s0__ep_ses_get(s0__rctx *c)
{
	proc_call(c, "get session", S0__RT_SES_GET, BODY_NONE);
}

void s0__ep_ses_delete(s0__rctx *c)
{
	proc_call(c, "delete session", S0__RT_SES_DELETE, BODY_NONE);
}

void s0__ep_ses_desired(s0__rctx *c)
{
	proc_call(c, "set session desired state", S0__RT_SES_DESIRED, BODY_REQUIRED);
}

void s0__ep_ses_signal(s0__rctx *c)
{
	proc_call(c, "signal session", S0__RT_SES_SIGNAL, BODY_REQUIRED);
}

void s0__ep_ses_events(s0__rctx *c)
{
	proc_call(c, "get session events", S0__RT_SES_EVENTS, BODY_NONE);
}

void s0__ep_ses_replace(s0__rctx *c)
{
	proc_call(c, "replace session spec", S0__RT_SES_REPLACE, BODY_REQUIRED);
}

void s0__ep_ses_attempt(s0__rctx *c)
{
	proc_call(c, "start session attempt", S0__RT_SES_ATTEMPT, BODY_OPTIONAL);
}

void s0__ep_ses_input(s0__rctx *c)
{
	proc_call(c, "write session input", S0__RT_SES_INPUT, BODY_REQUIRED);
}

void s0__ep_ses_terminal(s0__rctx *c)
{
	proc_call(c, "resize session terminal", S0__RT_SES_TERMINAL, BODY_REQUIRED);
}
