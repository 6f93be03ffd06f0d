/*
 * Contexts (docs/wire.md §8.1) of a gvisor generation (gv_int.h): each
 * context is one process started by the sandbox's procd (gv_procd.h) — a
 * `cmd` context runs its argv, a `repl` context a shell (/bin/sh; the
 * alias "bash" runs /bin/bash; "python" and "python3" python3 through the
 * driver of gv_ctx_py.c) that keeps its state between execs.
 * Requests are parsed by the simulated runtime's parser and answered in
 * the same JSON shapes (ContextResponse, ContextExecResponse).
 *
 * A REPL exec writes the code and then a marker line the shell prints on
 * stdout and stderr once the code finished; the output before the markers
 * is the exec's. A stream input to a REPL is run as such an exec (the shell
 * or the driver is never handed bare text that would break the framing),
 * so its output is complete when the input call returns and its `done`
 * follows it (docs/wire.md §8.2); every exec's output, stream inputs and
 * run calls alike, goes to the REPL's transcript, which its stream reads.
 * Signals reach the process group of the program inside
 * (procd sends them; each context leads its own group). No pty: resize
 * answers `pty_unavailable`. Calls on one generation's contexts are
 * serialised (one mutex).
 */
#include <errno.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/json.h"
#include "local/runtime/gvisor/gv_int.h"
#include "local/runtime/sim/ctx_int.h"

/** How long an exec (or a create with wait_until_done) waits for its end, ms. */
#define EXEC_TIMEOUT_MS 300000

typedef struct gv_ctx {
	char id[24];
	int type;         /* S0__CTX_REPL / S0__CTX_CMD */
	char *alias, *cwd;
	char **command;   /* cmd argv (NULL-terminated) */
	char **env;       /* KEY=VALUE (NULL-terminated) */
	s0__vars env_vars;
	int64_t created_ms;
	s0__gv_pp *pp;    /* its process (procd's), NULL before the first start */
	bool ended;
	int status;       /* its wait status once ended */
	s0__buf out, err; /* cmd: everything; repl: pending, not yet an exec's */
	s0__buf last_out, last_err; /* repl: the last exec's output */
	s0__buf log[2];   /* repl: the transcript of every exec, stdout and stderr */
	int64_t log_base[2]; /* the stream offset of log[i]'s first byte */
	struct gv_ctx *next;
} gv_ctx;

struct s0__gv_ctxs {
	s0__rt_gen *g;
	pthread_mutex_t mu;
	gv_ctx *head;
	unsigned seq;
};

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct s0__gv_ctxs *s0__gv_ctxs_new(s0__rt_gen *g)
{
	struct s0__gv_ctxs *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->g = g;
	pthread_mutex_init(&t->mu, NULL);
	return t;
}

static void ctx_end_process(gv_ctx *c)
{
	if (c->pp) {
		if (!c->ended) {
			c->ended = true;
			c->status = SIGKILL; /* s0__gv_pp_free kills it */
			s0__gv_pp_exited(c->pp, &c->status);
		}
		s0__gv_pp_free(c->pp);
		c->pp = NULL;
	}
}

static void ctx_free(gv_ctx *c)
{
	ctx_end_process(c);
	free(c->alias);
	free(c->cwd);
	s0__gv_argv_free(c->command);
	s0__gv_argv_free(c->env);
	s0__vars_clear(&c->env_vars);
	s0__buf_free(&c->out);
	s0__buf_free(&c->err);
	s0__buf_free(&c->last_out);
	s0__buf_free(&c->last_err);
	s0__buf_free(&c->log[0]);
	s0__buf_free(&c->log[1]);
	free(c);
}

void s0__gv_ctxs_free(struct s0__gv_ctxs *t)
{
	if (!t)
		return;
	while (t->head) {
		gv_ctx *n = t->head->next;
		ctx_free(t->head);
		t->head = n;
	}
	pthread_mutex_destroy(&t->mu);
	free(t);
}

/* Take the process's output into c->out/err; note its end. */
static void pump(gv_ctx *c, int wait_ms)
{
	if (!c->pp || c->ended)
		return;
	s0__gv_pp_read(c->pp, &c->out, &c->err, wait_ms);
	if (s0__gv_pp_exited(c->pp, &c->status)) {
		s0__gv_pp_read(c->pp, &c->out, &c->err, 0);
		c->ended = true;
	}
}

static const char *state_name(const gv_ctx *c)
{
	if (!c->ended)
		return "running";
	int code = s0__gv_exit_code(c->status);
	return WIFSIGNALED(c->status) || code == 128 + SIGKILL ? "killed" : "stopped";
}

static int add_output(cJSON *o, const s0__buf *out, const s0__buf *err, const gv_ctx *c,
                      bool always)
{
	int rc = 0;
	if (always || out->len || err->len) {
		s0__buf raw = {0};
		s0__buf_put(&raw, out->data ? out->data : "", out->len);
		s0__buf_put(&raw, err->data ? err->data : "", err->len);
		s0__buf_put(&raw, "", 1);
		rc |= s0__json_add_str(o, "output_raw", raw.data ? raw.data : "");
		s0__buf_free(&raw);
	}
	s0__buf o0 = {0}, e0 = {0};
	s0__buf_put(&o0, out->data ? out->data : "", out->len);
	s0__buf_put(&o0, "", 1);
	s0__buf_put(&e0, err->data ? err->data : "", err->len);
	s0__buf_put(&e0, "", 1);
	if (always || out->len)
		rc |= s0__json_add_str(o, "stdout", o0.data ? o0.data : "");
	if (always || err->len)
		rc |= s0__json_add_str(o, "stderr", e0.data ? e0.data : "");
	s0__buf_free(&o0);
	s0__buf_free(&e0);
	if (c->ended) {
		rc |= s0__json_add_i64(o, "exit_code", s0__gv_exit_code(c->status));
		rc |= s0__json_add_str(o, "state", state_name(c));
	}
	return rc;
}

static cJSON *render(s0__rt_gen *g, gv_ctx *c, bool with_output)
{
	(void)g;
	char ts[40];
	s0__time_format_rfc3339(c->created_ms, ts, sizeof ts);
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	int rc = s0__json_add_str(o, "id", c->id) |
	         s0__json_add_str(o, "type", c->type == S0__CTX_REPL ? "repl" : "cmd") |
	         s0__json_add_str(o, "alias", c->alias ? c->alias : "") |
	         s0__json_add_str(o, "cwd", c->cwd ? c->cwd : "");
	cJSON *e = cJSON_AddObjectToObject(o, "env_vars");
	rc |= !e;
	for (size_t i = 0; e && i < c->env_vars.n; i++)
		rc |= s0__json_add_str(e, c->env_vars.v[i].name, c->env_vars.v[i].value);
	rc |= s0__json_add_bool(o, "running", !c->ended) | s0__json_add_bool(o, "paused", false) |
	      s0__json_add_str(o, "created_at", ts);
	if (with_output)
		rc |= c->type == S0__CTX_CMD ? add_output(o, &c->out, &c->err, c, false)
		                             : add_output(o, &c->last_out, &c->last_err, c, false);
	else if (c->ended)
		rc |= add_output(o, &(s0__buf){0}, &(s0__buf){0}, c, false);
	if (rc) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static int start_process(struct s0__gv_ctxs *t, gv_ctx *c, s0_error **err)
{
	char *repl_argv[] = {c->alias && !strcmp(c->alias, "bash") ? "/bin/bash" : "/bin/sh", NULL};
	char *const *cmd = c->type != S0__CTX_REPL      ? c->command
	                   : s0__gv_ctx_py_alias(c->alias) ? s0__gv_ctx_py_argv()
	                                                   : repl_argv;
	c->ended = false;
	s0_error *why = NULL;
	int rc = s0__gv_pp_spawn(t->g->procd, cmd, c->env, c->cwd, true, 60000, &c->pp, &why);
	if (rc < 0) {
		c->pp = NULL;
		c->ended = true;
	}
	if (rc == S0_EINVAL && !strcmp(s0_error_reason(why), "command_failed")) {
		/* as a shell says it: the context ends at once with 127 */
		c->status = 127 << 8;
		s0__buf_puts(&c->err, s0_error_message(why));
		s0__buf_puts(&c->err, "\n");
		s0_error_free(why);
		return S0_OK;
	}
	return rc < 0 ? s0__error_put(err, why) : S0_OK;
}

/* Wait until the cmd process ended (or timeout). */
static bool wait_end(gv_ctx *c, int64_t timeout_ms)
{
	int64_t deadline = mono_ms() + timeout_ms;
	while (!c->ended && mono_ms() < deadline)
		pump(c, 100);
	return c->ended;
}

/* Find @p mark in @p b; cut it (and what follows it) off into nothing. */
static bool cut_at(s0__buf *b, const char *mark)
{
	if (!b->len)
		return false;
	s0__buf_put(b, "", 1);
	b->len--;
	char *p = strstr(b->data, mark);
	if (!p)
		return false;
	b->len = (size_t)(p - b->data);
	b->data[b->len] = 0;
	return true;
}

/* Run @p code in a REPL; its output in c->last_*. */
static int repl_run(gv_ctx *c, const char *code, s0_error **err)
{
	char mark[48];
	uint8_t rnd[8];
	randombytes_buf(rnd, sizeof rnd);
	memcpy(mark, "__s0_done_", 10);
	sodium_bin2hex(mark + 10, sizeof mark - 10, rnd, sizeof rnd);
	size_t n = strlen(code);
	char *text = s0__gv_ctx_py_alias(c->alias)
	                     ? s0__gv_ctx_py_block(code, mark)
	                     : s0__asprintf("%s%s printf '%%s\\n' %s; printf '%%s\\n' %s >&2\n",
	                                    code, n && code[n - 1] == '\n' ? "" : "\n", mark, mark);
	if (!text)
		return s0__error_nomem(err);
	s0__buf_reset(&c->out);
	s0__buf_reset(&c->err);
	s0__gv_pp_write(c->pp, text, strlen(text), NULL); /* a dead shell: c->ended below */
	free(text);
	int64_t deadline = mono_ms() + EXEC_TIMEOUT_MS;
	bool o_done = false, e_done = false;
	/* done once each marker's line ended: a newline still to come would
	 * otherwise open the next exec's output */
	char line[sizeof mark + 1];
	snprintf(line, sizeof line, "%s\n", mark);
	while (!(o_done && e_done) && !c->ended && mono_ms() < deadline) {
		pump(c, 100);
		o_done = o_done || (c->out.len && strstr(c->out.data ? c->out.data : "", line));
		e_done = e_done || (c->err.len && strstr(c->err.data ? c->err.data : "", line));
		s0__buf_put(&c->out, "", 1);
		c->out.len--;
		s0__buf_put(&c->err, "", 1);
		c->err.len--;
	}
	cut_at(&c->out, mark);
	cut_at(&c->err, mark);
	s0__buf_reset(&c->last_out);
	s0__buf_reset(&c->last_err);
	s0__buf_put(&c->last_out, c->out.data ? c->out.data : "", c->out.len);
	s0__buf_put(&c->last_err, c->err.data ? c->err.data : "", c->err.len);
	int lrc = s0__gv_ctx_log_add(&c->log[0], &c->log_base[0], c->out.data, c->out.len) |
	          s0__gv_ctx_log_add(&c->log[1], &c->log_base[1], c->err.data, c->err.len);
	s0__buf_reset(&c->out);
	s0__buf_reset(&c->err);
	if (!(o_done && e_done) && !c->ended)
		return s0__error_set(err, S0_ETIMEDOUT, "exec_timeout", "execution timed out");
	return lrc ? s0__error_nomem(err) : S0_OK;
}

static gv_ctx *find(struct s0__gv_ctxs *t, const char *id, s0_error **err)
{
	for (gv_ctx *c = t->head; id && c; c = c->next)
		if (!strcmp(c->id, id))
			return c;
	s0__error_set(err, S0_ENOTFOUND, "context_not_found", "context not found");
	return NULL;
}

static char **env_list(const s0__vars *v)
{
	char **e = calloc(v->n + 1, sizeof *e);
	for (size_t i = 0; e && i < v->n; i++)
		if (!(e[i] = s0__asprintf("%s=%s", v->v[i].name, v->v[i].value))) {
			s0__gv_argv_free(e);
			return NULL;
		}
	return e;
}

static int do_create(struct s0__gv_ctxs *t, const cJSON *body, cJSON **out, s0_error **err)
{
	ctx_req req;
	int rc = s0__ctx_req_parse(body, &req, err);
	if (rc < 0)
		return rc;
	gv_ctx *c = calloc(1, sizeof *c);
	if (!c) {
		s0__ctx_req_clear(&req);
		return s0__error_nomem(err);
	}
	snprintf(c->id, sizeof c->id, "ctx_%08x%04x", randombytes_random(), ++t->seq & 0xffff);
	c->type = req.type;
	c->alias = req.alias ? req.alias : s0__strdup(req.type == S0__CTX_REPL ? "sh" : "");
	req.alias = NULL;
	c->cwd = req.cwd ? req.cwd : s0__strdup("/");
	req.cwd = NULL;
	c->env_vars = req.env;
	memset(&req.env, 0, sizeof req.env);
	c->env = env_list(&c->env_vars);
	if (req.type == S0__CTX_CMD) {
		c->command = calloc(req.ncommand + 1, sizeof *c->command);
		for (uint32_t i = 0; c->command && i < req.ncommand; i++) {
			c->command[i] = req.command[i];
			req.command[i] = NULL;
		}
	}
	c->created_ms = t->g->h->clock.now_unix_ms(t->g->h->clock.ctx);
	if (!c->alias || !c->cwd || !c->env || (req.type == S0__CTX_CMD && !c->command))
		rc = s0__error_nomem(err);
	if (rc == S0_OK && c->cwd[0] != '/')
		rc = s0__error_set(err, S0_EINVAL, "invalid_request", "cwd must be absolute");
	if (rc == S0_OK)
		rc = start_process(t, c, err);
	if (rc == S0_OK && req.type == S0__CTX_REPL && req.input && *req.input) {
		rc = repl_run(c, req.input, err);
		if (rc == S0_ETIMEDOUT) {
			s0_error_free(err ? *err : NULL);
			if (err)
				*err = NULL;
			rc = S0_OK;
		}
	}
	if (rc == S0_OK && req.type == S0__CTX_CMD) {
		if (req.wait) { /* run to its end: no one can give it input */
			s0__gv_pp_close_stdin(c->pp);
			wait_end(c, EXEC_TIMEOUT_MS);
		} else {
			pump(c, 0);
		}
	}
	if (rc == S0_OK && !(*out = render(t->g, c, req.wait)))
		rc = s0__error_nomem(err);
	s0__ctx_req_clear(&req);
	if (rc < 0) {
		ctx_free(c);
		return rc;
	}
	c->next = t->head;
	t->head = c;
	return S0_OK;
}

/* Context creation order (the list is newest first). */
static int do_list(struct s0__gv_ctxs *t, cJSON **out, s0_error **err)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *a = o ? cJSON_AddArrayToObject(o, "contexts") : NULL;
	if (!a) {
		cJSON_Delete(o);
		return s0__error_nomem(err);
	}
	for (gv_ctx *c = t->head; c; c = c->next) {
		pump(c, 0);
		cJSON *r = render(t->g, c, false);
		if (!r) {
			cJSON_Delete(o);
			return s0__error_nomem(err);
		}
		cJSON_InsertItemInArray(a, 0, r);
	}
	*out = o;
	return S0_OK;
}

static int do_input(gv_ctx *c, const cJSON *body, s0_error **err)
{
	const char *data = s0__json_str(body, "data");
	if (!data)
		return s0__error_set(err, S0_EINVAL, "invalid_request", "data is required");
	pump(c, 0);
	if (c->ended)
		return s0__error_set(err, S0_EGONE, "process_finished", "process has finished");
	if (!s0__gv_pp_stdin_open(c->pp))
		return s0__error_set(err, S0_ECONFLICT, "process_not_running",
		                     "the process's stdin is closed");
	if (c->type == S0__CTX_REPL) /* an exec: its output to the transcript */
		return repl_run(c, data, err);
	return s0__gv_pp_write(c->pp, data, strlen(data), err);
}

static int do_exec(struct s0__gv_ctxs *t, gv_ctx *c, const cJSON *body, cJSON **out,
                   s0_error **err)
{
	(void)t;
	const char *data = s0__json_str(body, "data");
	if (!data)
		return s0__error_set(err, S0_EINVAL, "invalid_request", "data is required");
	pump(c, 0);
	if (c->ended)
		return s0__error_set(err, S0_EGONE, "process_finished", "process has finished");
	int rc;
	if (c->type == S0__CTX_REPL) {
		rc = repl_run(c, data, err);
		if (rc < 0)
			return rc;
		cJSON *o = cJSON_CreateObject();
		if (!o || add_output(o, &c->last_out, &c->last_err, c, true)) {
			cJSON_Delete(o);
			return s0__error_nomem(err);
		}
		*out = o;
		return S0_OK;
	}
	if (s0__gv_pp_stdin_open(c->pp) && (rc = do_input(c, body, err)) < 0)
		return rc;
	if (!wait_end(c, EXEC_TIMEOUT_MS))
		return s0__error_set(err, S0_ETIMEDOUT, "exec_timeout", "execution timed out");
	cJSON *o = cJSON_CreateObject();
	if (!o || add_output(o, &c->out, &c->err, c, true)) {
		cJSON_Delete(o);
		return s0__error_nomem(err);
	}
	*out = o;
	return S0_OK;
}

static int do_signal(struct s0__gv_ctxs *t, gv_ctx *c, const cJSON *body, s0_error **err)
{
	const char *name = s0__json_str(body, "signal");
	const cJSON *num = cJSON_GetObjectItemCaseSensitive(body, "signal");
	char nbuf[24];
	if (!name && cJSON_IsNumber(num)) {
		snprintf(nbuf, sizeof nbuf, "%d", num->valueint);
		name = nbuf;
	}
	if (!name)
		return s0__error_set(err, S0_EINVAL, "invalid_request", "signal is required");
	int sig;
	int rc = s0__signal_parse(name, &sig, err);
	if (rc < 0)
		return rc;
	pump(c, 0);
	if (c->ended)
		return s0__error_set(err, S0_ECONFLICT, "process_not_running",
		                     "process is not running");
	(void)t;
	rc = s0__gv_pp_signal(c->pp, sig, err); /* to its process group */
	if (rc == S0_OK && (sig == SIGKILL || sig == SIGTERM || sig == SIGINT))
		wait_end(c, 2000); /* most signals that end a process do so at once */
	return rc;
}

int s0__gv_ctx_call(struct s0__gv_ctxs *t, const s0__rt_proc_call *call, cJSON **data_out,
                    int *status_out, s0_error **err)
{
	pthread_mutex_lock(&t->mu);
	int rc = S0_OK;
	*status_out = 200;
	gv_ctx *c = NULL;
	if (call->op != S0__RT_CTX_CREATE && call->op != S0__RT_CTX_LIST &&
	    !(c = find(t, call->id, err))) {
		pthread_mutex_unlock(&t->mu);
		return S0_ENOTFOUND;
	}
	switch (call->op) {
	case S0__RT_CTX_CREATE:
		rc = do_create(t, call->body, data_out, err);
		*status_out = 201;
		break;
	case S0__RT_CTX_LIST:
		rc = do_list(t, data_out, err);
		break;
	case S0__RT_CTX_GET:
		pump(c, 0);
		if (!(*data_out = render(t->g, c, true)))
			rc = s0__error_nomem(err);
		break;
	case S0__RT_CTX_DELETE:
		for (gv_ctx **p = &t->head; *p; p = &(*p)->next)
			if (*p == c) {
				*p = c->next;
				break;
			}
		ctx_free(c);
		if (!(*data_out = s0__ctx_render_flag("deleted")))
			rc = s0__error_nomem(err);
		break;
	case S0__RT_CTX_RESTART:
		ctx_end_process(c);
		s0__buf_reset(&c->out);
		s0__buf_reset(&c->err);
		s0__buf_reset(&c->last_out);
		s0__buf_reset(&c->last_err);
		for (int i = 0; i < 2; i++) {
			s0__buf_reset(&c->log[i]);
			c->log_base[i] = 0;
		}
		rc = start_process(t, c, err);
		if (rc == S0_OK && !(*data_out = render(t->g, c, false)))
			rc = s0__error_nomem(err);
		break;
	case S0__RT_CTX_INPUT:
		rc = do_input(c, call->body, err);
		if (rc == S0_OK && !(*data_out = s0__ctx_render_flag("written")))
			rc = s0__error_nomem(err);
		break;
	case S0__RT_CTX_EXEC:
		rc = do_exec(t, c, call->body, data_out, err);
		break;
	case S0__RT_CTX_SIGNAL:
		rc = do_signal(t, c, call->body, err);
		if (rc == S0_OK && !(*data_out = s0__ctx_render_flag("signaled")))
			rc = s0__error_nomem(err);
		break;
	case S0__RT_CTX_RESIZE:
		rc = s0__error_set(err, S0_ECONFLICT, "pty_unavailable",
		                   "the gvisor runtime gives contexts no terminal");
		break;
	case S0__RT_CTX_STREAM: /* output after a cursor (gv_ctx_stream.c) */
		pump(c, 0);
		*data_out = s0__gv_ctx_stream_render(
			c->type == S0__CTX_CMD ? &c->out : &c->log[0],
			c->type == S0__CTX_CMD ? &c->err : &c->log[1],
			c->type == S0__CTX_CMD ? NULL : c->log_base, call->body, c->ended,
			s0__gv_exit_code(c->status), state_name(c));
		if (!*data_out)
			rc = s0__error_nomem(err);
		break;
	default:
		rc = s0__error_set(err, S0_EINVAL, "invalid_request", "not a contexts call");
	}
	pthread_mutex_unlock(&t->mu);
	return rc;
}

int s0__gv_ctxs_running(struct s0__gv_ctxs *t)
{
	int n = 0;
	if (pthread_mutex_trylock(&t->mu) != 0)
		return -1; /* a call runs (an exec may take minutes): never wait here */
	for (gv_ctx *c = t->head; c; c = c->next) {
		pump(c, 0);
		n += !c->ended;
	}
	pthread_mutex_unlock(&t->mu);
	return n;
}

/* ---- across a memory checkpoint (gv_mem.h) ---- */

static cJSON *strv_json(char *const *v)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; a && v && v[i]; i++)
		if (!cJSON_AddItemToArray(a, cJSON_CreateString(v[i]))) {
			cJSON_Delete(a);
			return NULL;
		}
	return a;
}

static cJSON *ctx_save(gv_ctx *c)
{
	cJSON *o = cJSON_CreateObject(), *ev = o ? cJSON_AddObjectToObject(o, "env_vars") : NULL;
	int rc = !ev;
	rc = rc || s0__json_add_str(o, "id", c->id) || s0__json_add_i64(o, "type", c->type) ||
	     s0__json_add_str(o, "alias", c->alias ? c->alias : "") ||
	     s0__json_add_str(o, "cwd", c->cwd ? c->cwd : "/") ||
	     s0__json_add_i64(o, "created_ms", c->created_ms) ||
	     s0__json_add_i64(o, "pp", s0__gv_pp_id(c->pp)) ||
	     s0__json_add_i64(o, "pid", s0__gv_pp_pid(c->pp)) ||
	     s0__json_add_bool(o, "stdin", s0__gv_pp_stdin_open(c->pp));
	for (size_t i = 0; !rc && i < c->env_vars.n; i++)
		rc = s0__json_add_str(ev, c->env_vars.v[i].name, c->env_vars.v[i].value);
	cJSON *cmd = !rc && c->command ? strv_json(c->command) : NULL;
	if (!rc && c->command && (!cmd || !cJSON_AddItemToObject(o, "command", cmd))) {
		cJSON_Delete(cmd);
		rc = 1;
	}
	if (rc) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

char *s0__gv_ctxs_save(struct s0__gv_ctxs *t)
{
	if (pthread_mutex_trylock(&t->mu) != 0)
		return NULL; /* a call runs: a REPL mid-exec cannot be carried */
	cJSON *a = cJSON_CreateArray();
	for (gv_ctx *c = t->head; a && c; c = c->next) {
		pump(c, 0);
		if (c->ended || !c->pp)
			continue; /* its process ended: nothing of it is in the image */
		cJSON *o = ctx_save(c);
		if (!o || !cJSON_AddItemToArray(a, o)) {
			cJSON_Delete(o);
			cJSON_Delete(a);
			a = NULL;
		}
	}
	pthread_mutex_unlock(&t->mu);
	char *s = a ? cJSON_PrintUnformatted(a) : NULL;
	cJSON_Delete(a);
	return s;
}

/* A context of the saved table, bound to process @p pp (taken). */
static int ctx_adopt(struct s0__gv_ctxs *t, const cJSON *o, s0__gv_pp *pp, s0_error **err)
{
	gv_ctx *c = calloc(1, sizeof *c);
	if (!c) {
		s0__gv_pp_free(pp);
		return s0__error_nomem(err);
	}
	c->pp = pp;
	snprintf(c->id, sizeof c->id, "%s", s0__json_str(o, "id"));
	c->type = (int)s0__json_i64(o, "type", S0__CTX_REPL);
	c->alias = s0__strdup(s0__json_str(o, "alias") ? s0__json_str(o, "alias") : "");
	c->cwd = s0__strdup(s0__json_str(o, "cwd") ? s0__json_str(o, "cwd") : "/");
	c->created_ms = s0__json_i64(o, "created_ms", 0);
	int rc = c->alias && c->cwd ? S0_OK : S0_ENOMEM;
	const cJSON *it;
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(o, "env_vars"))
	{
		if (rc == S0_OK && cJSON_IsString(it))
			rc = s0__vars_set(&c->env_vars, it->string, it->valuestring, S0__VAR_EXPORT);
	}
	if (rc == S0_OK && !(c->env = env_list(&c->env_vars)))
		rc = S0_ENOMEM;
	const cJSON *cmd = cJSON_GetObjectItem(o, "command");
	if (rc == S0_OK && cJSON_IsArray(cmd)) {
		int n = cJSON_GetArraySize(cmd);
		c->command = calloc((size_t)n + 1, sizeof *c->command);
		for (int i = 0; c->command && i < n; i++)
			c->command[i] = s0__strdup(cJSON_GetStringValue(cJSON_GetArrayItem(cmd, i)));
		rc = c->command ? S0_OK : S0_ENOMEM;
	}
	if (rc < 0) {
		ctx_free(c); /* its process too: a context without its record would be lost */
		return s0__error_nomem(err);
	}
	c->next = t->head;
	t->head = c;
	return S0_OK;
}

int s0__gv_ctxs_adopt(struct s0__gv_ctxs *t, const char *saved, s0_error **err)
{
	cJSON *a = saved ? cJSON_Parse(saved) : NULL;
	if (saved && !cJSON_IsArray(a)) {
		cJSON_Delete(a);
		return s0__error_set(err, S0_ECORRUPT, "image_corrupt",
		                     "gvisor memory image: bad contexts record");
	}
	int rc = S0_OK;
	pthread_mutex_lock(&t->mu);
	/* oldest first: the table is newest first */
	for (int i = cJSON_GetArraySize(a) - 1; rc == S0_OK && i >= 0; i--) {
		const cJSON *o = cJSON_GetArrayItem(a, i);
		const char *id = s0__json_str(o, "id");
		int64_t ppid = s0__json_i64(o, "pp", 0);
		if (!id || !*id || strlen(id) >= sizeof t->head->id || ppid <= 0 || ppid > UINT32_MAX) {
			rc = s0__error_set(err, S0_ECORRUPT, "image_corrupt",
			                   "gvisor memory image: bad context record");
			break;
		}
		s0__gv_pp *pp = NULL;
		rc = s0__gv_pp_adopt(t->g->procd, (uint32_t)ppid, (int32_t)s0__json_i64(o, "pid", 0),
		                     cJSON_IsTrue(cJSON_GetObjectItem(o, "stdin")), &pp, err);
		if (rc == S0_OK)
			rc = ctx_adopt(t, o, pp, err);
	}
	pthread_mutex_unlock(&t->mu);
	cJSON_Delete(a);
	return rc;
}
