/*
 * Internals of the contexts (contexts.h): the parsed create request, the
 * renderers of docs/wire.md §8.1 shapes, and lookups. Used by ctx*.c only.
 *
 * @threadsafety guest lock held by the callers of everything but parsing.
 */
#ifndef S0_RUNTIME_SIM_CTX_INT_H
#define S0_RUNTIME_SIM_CTX_INT_H

#include "local/runtime/sim/contexts.h"
#include "local/runtime/sim/shell.h"

/** A validated CreateContextRequest (owned copies). */
typedef struct ctx_req {
	int type;          /**< S0__CTX_REPL / S0__CTX_CMD */
	char *alias;       /**< (nullable) */
	char *input;       /**< (nullable) REPL initial input */
	char **command;    /**< CMD argv */
	uint32_t ncommand;
	bool wait;         /**< wait_until_done */
	char *cwd;         /**< (nullable) */
	s0__vars env;      /**< env_vars */
	bool pty;
	int32_t rows, cols, idle, ttl;
} ctx_req;

/** Parse and validate a create body. @retval S0_EINVAL `invalid_request`. */
int s0__ctx_req_parse(const cJSON *body, ctx_req *out, s0_error **err);
/** Free a parsed request. */
void s0__ctx_req_clear(ctx_req *r);

/** ContextResponse of @p c (with its outputs when @p with_output). NULL: OOM. */
cJSON *s0__ctx_render(s0__guest *g, const s0__ctx *c, bool with_output);
/** ContextExecResponse from an output and the process state. NULL: OOM. */
cJSON *s0__ctx_render_exec(const s0__shout *o, const s0__proc *p);
/** A `{key: true}` object. NULL: OOM. */
cJSON *s0__ctx_render_flag(const char *key);

/** The context @p id, or NULL after setting S0_ENOTFOUND `context_not_found`. */
s0__ctx *s0__ctx_find(s0__guest *g, const char *id, s0_error **err);
/**
 * Start the process of a context (a shell for REPL, the command for CMD)
 * and run what it runs at start (the REPL's initial input, whose output
 * goes to c->last; the command).
 */
int s0__ctx_start(s0__guest *g, s0__ctx *c, const char *input, bool wait, s0_error **err);
/**
 * Run complete lines pending on a REPL's stdin in the foreground into @p o.
 * @param deadline_vt virtual deadline (< 0: none).
 * @return S0_OK, or S0_ETIMEDOUT `exec_timeout` when the deadline passed.
 */
int s0__ctx_run_lines(s0__guest *g, s0__proc *p, s0__shout *o, int64_t deadline_vt,
                      s0_error **err);

#endif
