/* Contexts: create, list, get, delete, restart (contexts.h). */
#include "local/runtime/sim/ctx_int.h"

#include <sodium.h>
#include "local/rootfs/path.h"
#include <stdlib.h>
#include <string.h>

void s0__ctx_free(s0__ctx *c)
{
	if (!c)
		return;
	free(c->alias);
	free(c->cwd);
	s0__vars_clear(&c->env_vars);
	for (uint32_t i = 0; i < c->ncommand; i++)
		free(c->command[i]);
	free(c->command);
	s0__shout_free(&c->last);
	free(c);
}

s0__ctx *s0__ctx_find(s0__guest *g, const char *id, s0_error **err)
{
	for (size_t i = 0; id && i < g->nctxs; i++)
		if (!strcmp(g->ctxs[i]->id, id))
			return g->ctxs[i];
	s0__error_set(err, S0_ENOTFOUND, "context_not_found", "context not found");
	return NULL;
}

/* Variables of a context's process: sandbox env, context env, PWD. */
static int ctx_vars(s0__guest *g, const s0__ctx *c, s0__vars *v)
{
	if (s0__vars_copy(v, &g->base_env, false) < 0 || s0__vars_copy(v, &c->env_vars, false) < 0 ||
	    s0__vars_set(v, "PWD", c->cwd, S0__VAR_EXPORT) < 0)
		return S0_ENOMEM;
	return S0_OK;
}

/* A context's deadlines on its new process: ttl_sec from now, idle_timeout_sec, KILL. */
static void arm(s0__guest *g, const s0__ctx *c, s0__proc *p)
{
	s0__gproc_arm(g, p, (int64_t)c->ttl_sec * 1000, (int64_t)c->idle_timeout_sec * 1000, 9,
	              0);
}

static int start_repl(s0__guest *g, s0__ctx *c, const char *input, bool wait, s0_error **err)
{
	s0__proc *p;
	int rc = s0__gproc_new(g, S0__PK_SHELL, 1, &p, err);
	if (rc < 0)
		return rc;
	p->owner = S0__OWN_CONTEXT;
	c->pid = p->pid;
	arm(g, c, p);
	if (!(p->argv = calloc(2, sizeof *p->argv)) || !(p->argv[0] = s0__strdup(c->alias)) ||
	    !(p->cwd = s0__strdup(c->cwd)) || ctx_vars(g, c, &p->vars) < 0)
		return s0__error_nomem(err);
	p->argc = 1;
	if (!input || !*input)
		return S0_OK;
	size_t n = strlen(input);
	if (s0__buf_put(&p->in, input, n) < 0 ||
	    (input[n - 1] != '\n' && s0__buf_put(&p->in, "\n", 1) < 0))
		return s0__error_nomem(err);
	rc = s0__ctx_run_lines(g, p, &c->last, wait ? -1 : g->vt + g->exec_timeout_ms, NULL);
	return rc == S0_ETIMEDOUT ? S0_OK : rc;
}

static int start_cmd(s0__guest *g, s0__ctx *c, bool wait, s0_error **err)
{
	s0__vars v = {0};
	s0__proc *p;
	int rc = ctx_vars(g, c, &v) < 0 ? s0__error_nomem(err) : S0_OK;
	if (rc == S0_OK)
		rc = s0__sched_spawn_argv(g, 1, (const char *const *)c->command, c->ncommand, c->cwd, &v,
		                          S0__OWN_CONTEXT, &p, err);
	s0__vars_clear(&v);
	if (rc < 0)
		return rc;
	c->pid = p->pid;
	arm(g, c, p);
	if (!wait) {
		s0__sched_run(g, p);
		return S0_OK;
	}
	s0__sh_run r = {.g = g, .p = p, .fg = true, .deadline_vt = -1};
	p->busy = true;
	int st = s0__sh_exec(&r, p->script, &p->pc_stmt, &p->pc_cmd);
	p->busy = false;
	s0__gproc_end(p, S0__PS_STOPPED, st & 0xff);
	return S0_OK;
}

int s0__ctx_start(s0__guest *g, s0__ctx *c, const char *input, bool wait, s0_error **err)
{
	int rc = c->type == S0__CTX_REPL ? start_repl(g, c, input, wait, err)
	                                 : start_cmd(g, c, wait, err);
	s0__gproc_reap_orphans(g);
	return rc;
}

static int fill_ctx(s0__guest *g, s0__ctx *c, ctx_req *req, s0_error **err)
{
	uint8_t rnd[8];
	randombytes_buf(rnd, sizeof rnd);
	memcpy(c->id, "ctx_", 4);
	sodium_bin2hex(c->id + 4, sizeof c->id - 4, rnd, sizeof rnd);
	c->type = (uint8_t)req->type;
	c->alias = req->alias ? req->alias : s0__strdup(req->type == S0__CTX_REPL ? "sh" : "");
	req->alias = NULL;
	c->env_vars = req->env;
	memset(&req->env, 0, sizeof req->env);
	c->command = req->command;
	c->ncommand = req->ncommand;
	req->command = NULL;
	req->ncommand = 0;
	c->created_at_ms = s0__guest_now_ms(g);
	c->pty = req->type == S0__CTX_REPL || req->pty;
	c->rows = req->pty ? req->rows : 24;
	c->cols = req->pty ? req->cols : 80;
	c->idle_timeout_sec = req->idle;
	c->ttl_sec = req->ttl;
	int rc = S0_OK;
	if (req->cwd) {
		const char *base = req->cwd[0] == '/' ? "" : g->default_cwd;
		char *joined = s0__asprintf("%s/%s", base, req->cwd);
		rc = joined ? s0__path_normalize(joined, strlen(joined), 0, &c->cwd, err)
		            : s0__error_nomem(err);
		free(joined);
	} else if (!(c->cwd = s0__strdup(g->default_cwd))) {
		rc = s0__error_nomem(err);
	}
	return rc == S0_OK && !c->alias ? s0__error_nomem(err) : rc;
}

static int add_ctx(s0__guest *g, s0__ctx *c)
{
	if (g->nctxs == g->capctxs) {
		size_t cap = g->capctxs ? g->capctxs * 2 : 8;
		s0__ctx **v = realloc(g->ctxs, cap * sizeof *v);
		if (!v)
			return S0_ENOMEM;
		g->ctxs = v;
		g->capctxs = cap;
	}
	g->ctxs[g->nctxs++] = c;
	return S0_OK;
}

static void drop_ctx(s0__guest *g, s0__ctx *c)
{
	s0__proc *p = c->pid ? s0__gproc_find(g, c->pid) : NULL;
	if (p && !p->busy) {
		s0__gproc_end(p, S0__PS_KILLED, 128 + 9);
		s0__gproc_remove(g, p);
	}
	for (size_t i = 0; i < g->nctxs; i++) {
		if (g->ctxs[i] != c)
			continue;
		memmove(&g->ctxs[i], &g->ctxs[i + 1], (g->nctxs - i - 1) * sizeof *g->ctxs);
		g->nctxs--;
		break;
	}
	s0__ctx_free(c);
}

int s0__ctx_create_json(s0__guest *g, const cJSON *body, cJSON **data_out, s0_error **err)
{
	ctx_req req;
	int rc = s0__ctx_req_parse(body, &req, err);
	if (rc < 0)
		return rc;
	s0__ctx *c = calloc(1, sizeof *c);
	if (!c) {
		s0__ctx_req_clear(&req);
		return s0__error_nomem(err);
	}
	pthread_mutex_lock(&g->mu);
	rc = fill_ctx(g, c, &req, err);
	if (rc == S0_OK && add_ctx(g, c) < 0)
		rc = s0__error_nomem(err);
	else if (rc == S0_OK && (rc = s0__ctx_start(g, c, req.input, req.wait, err)) < 0) {
		drop_ctx(g, c);
		c = NULL;
	}
	if (rc < 0 && c)
		s0__ctx_free(c);
	cJSON *data = rc == S0_OK ? s0__ctx_render(g, c, req.wait) : NULL;
	pthread_mutex_unlock(&g->mu);
	s0__ctx_req_clear(&req);
	if (rc == S0_OK && !data)
		rc = s0__error_nomem(err);
	if (rc == S0_OK)
		*data_out = data;
	return rc;
}

int s0__ctx_list_json(s0__guest *g, cJSON **data_out, s0_error **err)
{
	cJSON *o = cJSON_CreateObject();
	pthread_mutex_lock(&g->mu);
	cJSON *a = o ? cJSON_AddArrayToObject(o, "contexts") : NULL;
	bool ok = a != NULL;
	for (size_t i = 0; ok && i < g->nctxs; i++)
		ok = cJSON_AddItemToArray(a, s0__ctx_render(g, g->ctxs[i], true));
	pthread_mutex_unlock(&g->mu);
	if (!ok) {
		cJSON_Delete(o);
		return s0__error_nomem(err);
	}
	*data_out = o;
	return S0_OK;
}

/* Run fn on context id under the lock; fn sets *data. */
static int with_ctx(s0__guest *g, const char *id, int (*fn)(s0__guest *, s0__ctx *, cJSON **,
                                                            s0_error **),
                    cJSON **data_out, s0_error **err)
{
	pthread_mutex_lock(&g->mu);
	s0__ctx *c = s0__ctx_find(g, id, err);
	cJSON *data = NULL;
	int rc = c ? fn(g, c, &data, err) : S0_ENOTFOUND;
	pthread_mutex_unlock(&g->mu);
	if (rc == S0_OK && !data)
		rc = s0__error_nomem(err);
	if (rc == S0_OK)
		*data_out = data;
	else
		cJSON_Delete(data);
	return rc;
}

static int do_get(s0__guest *g, s0__ctx *c, cJSON **data, s0_error **err)
{
	(void)err;
	*data = s0__ctx_render(g, c, true);
	return S0_OK;
}

int s0__ctx_get_json(s0__guest *g, const char *id, cJSON **data_out, s0_error **err)
{
	return with_ctx(g, id, do_get, data_out, err);
}

static int do_delete(s0__guest *g, s0__ctx *c, cJSON **data, s0_error **err)
{
	(void)err;
	drop_ctx(g, c);
	*data = s0__ctx_render_flag("deleted");
	return S0_OK;
}

int s0__ctx_delete_json(s0__guest *g, const char *id, cJSON **data_out, s0_error **err)
{
	return with_ctx(g, id, do_delete, data_out, err);
}

static int do_restart(s0__guest *g, s0__ctx *c, cJSON **data, s0_error **err)
{
	s0__proc *p = s0__gproc_find(g, c->pid);
	if (p && p->busy)
		return s0__error_set(err, S0_ECONFLICT, "process_not_running", "context is busy");
	if (p) {
		s0__gproc_end(p, S0__PS_KILLED, 128 + 9);
		s0__gproc_remove(g, p);
	}
	c->pid = 0;
	s0__shout_free(&c->last);
	int rc = s0__ctx_start(g, c, NULL, false, err);
	if (rc == S0_OK)
		*data = s0__ctx_render(g, c, true);
	return rc;
}

int s0__ctx_restart_json(s0__guest *g, const char *id, cJSON **data_out, s0_error **err)
{
	return with_ctx(g, id, do_restart, data_out, err);
}

int s0__ctx_pid(s0__guest *g, const char *id, int32_t *pid_out, s0_error **err)
{
	pthread_mutex_lock(&g->mu);
	s0__ctx *c = s0__ctx_find(g, id, err);
	if (c)
		*pid_out = c->pid;
	pthread_mutex_unlock(&g->mu);
	return c ? S0_OK : S0_ENOTFOUND;
}
