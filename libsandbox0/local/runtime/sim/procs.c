/*
 * Contexts and sessions calls of the simulated runtime (runtime.h
 * proc_call): each operation of docs/wire.md §8.1 / §8.3 to its JSON function of
 * contexts.h or sessions.h, with its success status.
 */
#include "common/json.h"
#include "local/runtime/sim/contexts.h"
#include "local/runtime/sim/sessions.h"
#include "local/runtime/sim/sim_int.h"

typedef int (*ctx_id_fn)(s0__guest *, const char *, cJSON **, s0_error **);
typedef int (*ctx_body_fn)(s0__guest *, const char *, const cJSON *, cJSON **, s0_error **);
typedef int (*ses_id_fn)(s0__sessions *, s0__guest *, const char *, cJSON **, s0_error **);
typedef int (*ses_body_fn)(s0__sessions *, s0__guest *, const char *, const cJSON *, cJSON **,
                           s0_error **);

/* Restart takes no request body (docs/wire.md §8.1): none, null or `{}`; any
 * member is unknown, like a misspelt one elsewhere. */
static int ctx_restart(s0__guest *g, const char *id, const cJSON *b, cJSON **out, s0_error **err)
{
	static const char *const none[] = {NULL};
	if (s0__json_check_keys(b, none, "", "invalid_request", err) < 0)
		return S0_EINVAL;
	return s0__ctx_restart_json(g, id, out, err);
}

/* Every operation: its function (by signature) and success status. */
static const struct {
	ctx_id_fn ctx_id;
	ctx_body_fn ctx_body;
	ses_id_fn ses_id;
	ses_body_fn ses_body;
	int status;
} ops[] = {
	[S0__RT_CTX_CREATE] = {.status = 201},
	[S0__RT_CTX_LIST] = {.status = 200},
	[S0__RT_CTX_GET] = {.ctx_id = s0__ctx_get_json, .status = 200},
	[S0__RT_CTX_DELETE] = {.ctx_id = s0__ctx_delete_json, .status = 200},
	[S0__RT_CTX_RESTART] = {.ctx_body = ctx_restart, .status = 200},
	[S0__RT_CTX_INPUT] = {.ctx_body = s0__ctx_input_json, .status = 200},
	[S0__RT_CTX_EXEC] = {.ctx_body = s0__ctx_exec_json, .status = 200},
	[S0__RT_CTX_SIGNAL] = {.ctx_body = s0__ctx_signal_json, .status = 200},
	[S0__RT_CTX_RESIZE] = {.ctx_body = s0__ctx_resize_json, .status = 200},
	[S0__RT_CTX_STREAM] = {.ctx_body = s0__ctx_stream_json, .status = 200},
	[S0__RT_SES_CREATE] = {.status = 201},
	[S0__RT_SES_LIST] = {.status = 200},
	[S0__RT_SES_GET] = {.ses_id = s0__sessions_get_json, .status = 200},
	[S0__RT_SES_DELETE] = {.ses_id = s0__sessions_delete_json, .status = 200},
	[S0__RT_SES_DESIRED] = {.ses_body = s0__sessions_desired_json, .status = 200},
	[S0__RT_SES_SIGNAL] = {.ses_body = s0__sessions_signal_json, .status = 202},
	[S0__RT_SES_EVENTS] = {.status = 200},
	[S0__RT_SES_REPLACE] = {.ses_body = s0__sessions_replace_json, .status = 200},
	[S0__RT_SES_ATTEMPT] = {.ses_body = s0__sessions_attempt_json, .status = 201},
	[S0__RT_SES_INPUT] = {.ses_body = s0__sessions_input_json, .status = 202},
	[S0__RT_SES_TERMINAL] = {.ses_body = s0__sessions_terminal_json, .status = 200},
};

int s0__sim_proc_call(s0__rt_gen *gen, const s0__rt_proc_call *c, cJSON **data_out,
                      int *status_out, s0_error **err)
{
	if (c->op < 0 || (size_t)c->op >= sizeof ops / sizeof ops[0])
		return s0__error_set(err, S0_EINVAL, "invalid_request", "unknown process call %d",
		                     c->op);
	s0__guest *g = s0__sim_guest(gen);
	s0__sessions *s = c->sessions;
	bool ses = c->op >= S0__RT_SES_CREATE;
	if (ses && !s)
		return s0__error_set(err, S0_EINVAL, "invalid_request",
		                     "a sessions call needs the sandbox's registry");
	*status_out = ops[c->op].status;
	switch (c->op) {
	case S0__RT_CTX_CREATE:
		return s0__ctx_create_json(g, c->body, data_out, err);
	case S0__RT_CTX_LIST:
		return s0__ctx_list_json(g, data_out, err);
	case S0__RT_SES_CREATE:
		return s0__sessions_create_json(s, g, c->body, c->idempotency_key, data_out,
		                                status_out, err);
	case S0__RT_SES_LIST:
		return s0__sessions_list_json(s, g, data_out, err);
	case S0__RT_SES_EVENTS:
		return s0__sessions_events_json(s, g, c->id, c->after, c->limit, data_out, err);
	default:
		break;
	}
	if (ops[c->op].ctx_id)
		return ops[c->op].ctx_id(g, c->id, data_out, err);
	if (ops[c->op].ctx_body)
		return ops[c->op].ctx_body(g, c->id, c->body, data_out, err);
	if (ops[c->op].ses_id)
		return ops[c->op].ses_id(s, g, c->id, data_out, err);
	return ops[c->op].ses_body(s, g, c->id, c->body, data_out, err);
}
