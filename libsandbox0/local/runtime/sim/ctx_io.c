/* Contexts: input, exec, signal, resize (contexts.h). */
#include "local/runtime/sim/ctx_int.h"
#include "local/runtime/sim/sh_int.h"

#include <stdlib.h>
#include <string.h>

#include "common/json.h"

/* Pop the next complete line of p->in (without "\n" / "\r\n") onto b. */
static int pop_line(s0__proc *p, s0__buf *b)
{
	char *nl = memchr(p->in.data, '\n', p->in.len);
	size_t n = (size_t)(nl - p->in.data);
	if (s0__buf_put(b, p->in.data, n && nl[-1] == '\r' ? n - 1 : n) < 0)
		return -1;
	memmove(p->in.data, nl + 1, p->in.len - n - 1);
	p->in.len -= n + 1;
	p->in.data[p->in.len] = 0;
	return 0;
}

static bool has_line(const s0__proc *p)
{
	return p->in.len && memchr(p->in.data, '\n', p->in.len);
}

/* The next statement: a line, joined with the following ones while it is
 * incomplete (open quote, trailing && or ||) and more lines are pending. */
static char *next_text(s0__proc *p)
{
	s0__buf b = S0__BUF_INIT;
	if (pop_line(p, &b) < 0)
		goto oom;
	while (s0__sh_incomplete(b.data ? b.data : "") && has_line(p))
		if (s0__buf_put(&b, "\n", 1) < 0 || pop_line(p, &b) < 0)
			goto oom;
	return s0__buf_detach(&b, NULL);
oom:
	s0__buf_free(&b);
	return NULL;
}

int s0__ctx_run_lines(s0__guest *g, s0__proc *p, s0__shout *o, int64_t deadline_vt,
                      s0_error **err)
{
	int rc = S0_OK;
	while (!p->ended && has_line(p)) {
		char *text = next_text(p);
		if (!text)
			return s0__error_nomem(err);
		s0__sh_run r = {.g = g, .p = p, .sink = o, .fg = true, .deadline_vt = deadline_vt};
		uint32_t a = 0, b = 0;
		p->busy = true;
		int st = s0__sh_exec(&r, text, &a, &b);
		p->busy = false;
		free(text);
		if (r.exited)
			s0__gproc_end(p, S0__PS_STOPPED, st & 0xff);
		if (!p->ended)
			p->active_vt = g->vt; /* the exec's end is activity */
		/* a process its deadline ended mid-exec answers with its final state */
		if (r.timed_out && !p->ended) {
			rc = s0__error_set(err, S0_ETIMEDOUT, "exec_timeout", "execution timed out");
			break;
		}
	}
	s0__gproc_reap_orphans(g);
	return rc;
}

/* The body has only the SDK model's wire keys (ContextInputRequest,
 * SignalContextRequest, ResizeContextRequest): a misspelt one is refused. */
static int only(const cJSON *body, const char *const *keys, s0_error **err)
{
	return s0__json_check_keys(body, keys, "", "invalid_request", err);
}

/* The body's `data`: a non-empty string. */
static int data_of(const cJSON *body, const char **out, s0_error **err)
{
	static const char *const keys[] = {"data", NULL};
	if (only(body, keys, err) < 0)
		return S0_EINVAL;
	const char *d = cJSON_IsObject(body) ? s0__json_str(body, "data") : NULL;
	if (!d || !*d)
		return s0__error_set(err, S0_EINVAL, "invalid_request", "data is required");
	*out = d;
	return S0_OK;
}

/* The context's live process, or the error input/exec answer. */
static int live_proc(s0__guest *g, s0__ctx *c, s0__proc **out, s0_error **err)
{
	s0__proc *p = s0__gproc_find(g, c->pid);
	if (!p || p->ended)
		return s0__error_set(err, S0_EGONE, "process_finished", "process has finished");
	if (p->state == S0__PS_PAUSED || p->busy)
		return s0__error_set(err, S0_ECONFLICT, "process_not_running", "process is not running");
	*out = p;
	return S0_OK;
}

static int queue_input(s0__proc *p, const char *d, size_t n, bool newline, s0_error **err)
{
	if (p->in.len + n + 1 > S0__CTX_INPUT_MAX)
		return s0__error_set(err, S0_ECONFLICT, "input_buffer_full", "input buffer is full");
	if (s0__buf_put(&p->in, d, n) < 0 || (newline && s0__buf_put(&p->in, "\n", 1) < 0))
		return s0__error_nomem(err);
	return S0_OK;
}

typedef struct io_req {
	const char *data;
	bool exec;
} io_req;

static int do_io(s0__guest *g, s0__ctx *c, const io_req *q, cJSON **data, s0_error **err)
{
	s0__proc *p = NULL;
	int rc = live_proc(g, c, &p, err);
	if (rc < 0)
		return rc;
	size_t n = strlen(q->data);
	bool repl = c->type == S0__CTX_REPL;
	bool nl = repl && q->exec && q->data[n - 1] != '\n' && q->data[n - 1] != '\r';
	rc = queue_input(p, q->data, n, nl, err);
	if (rc < 0)
		return rc;
	p->active_vt = g->vt;
	if (!repl) {
		*data = q->exec ? s0__ctx_render_exec(&p->io, p) : s0__ctx_render_flag("written");
		return S0_OK;
	}
	s0__shout o = {0};
	rc = s0__ctx_run_lines(g, p, q->exec ? &o : &c->last, g->vt + g->exec_timeout_ms, err);
	if (rc == S0_OK)
		*data = q->exec ? s0__ctx_render_exec(&o, p) : s0__ctx_render_flag("written");
	s0__shout_free(&o);
	return rc;
}

static int ctx_io(s0__guest *g, const char *id, const cJSON *body, bool exec, cJSON **data_out,
                  s0_error **err)
{
	io_req q = {.exec = exec};
	int rc = data_of(body, &q.data, err);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&g->mu);
	s0__ctx *c = s0__ctx_find(g, id, err);
	cJSON *data = NULL;
	rc = c ? do_io(g, c, &q, &data, err) : S0_ENOTFOUND;
	pthread_mutex_unlock(&g->mu);
	if (rc == S0_OK && !data)
		rc = s0__error_nomem(err);
	if (rc == S0_OK)
		*data_out = data;
	return rc;
}

int s0__ctx_input_json(s0__guest *g, const char *id, const cJSON *body, cJSON **data_out,
                       s0_error **err)
{
	return ctx_io(g, id, body, false, data_out, err);
}

int s0__ctx_exec_json(s0__guest *g, const char *id, const cJSON *body, cJSON **data_out,
                      s0_error **err)
{
	return ctx_io(g, id, body, true, data_out, err);
}

int s0__ctx_signal_json(s0__guest *g, const char *id, const cJSON *body, cJSON **data_out,
                        s0_error **err)
{
	static const char *const keys[] = {"signal", NULL};
	const char *name = cJSON_IsObject(body) ? s0__json_str(body, "signal") : NULL;
	int sig;
	if (only(body, keys, err) < 0)
		return S0_EINVAL;
	if (!name || !*name)
		return s0__error_set(err, S0_EINVAL, "invalid_request", "signal is required");
	int rc = s0__signal_parse(name, &sig, err);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&g->mu);
	s0__ctx *c = s0__ctx_find(g, id, err);
	s0__proc *p = c ? s0__gproc_find(g, c->pid) : NULL;
	if (!c)
		rc = S0_ENOTFOUND;
	else if (!p || p->ended)
		rc = s0__error_set(err, S0_ECONFLICT, "process_not_running", "process is not running");
	else if ((rc = s0__gproc_signal(g, p, sig, err)) == S0_OK && sig == 18 && p->sleeping &&
	         p->wake_at <= g->vt)
		s0__sched_run(g, p);
	pthread_mutex_unlock(&g->mu);
	cJSON *data = rc == S0_OK ? s0__ctx_render_flag("signaled") : NULL;
	if (rc == S0_OK && !data)
		rc = s0__error_nomem(err);
	if (rc == S0_OK)
		*data_out = data;
	return rc;
}

int s0__ctx_resize_json(s0__guest *g, const char *id, const cJSON *body, cJSON **data_out,
                        s0_error **err)
{
	static const char *const keys[] = {"rows", "cols", NULL};
	const cJSON *rows = cJSON_GetObjectItemCaseSensitive(body, "rows");
	const cJSON *cols = cJSON_GetObjectItemCaseSensitive(body, "cols");
	if (only(body, keys, err) < 0)
		return S0_EINVAL;
	if (!cJSON_IsNumber(rows) || !cJSON_IsNumber(cols) || rows->valuedouble < 1 ||
	    cols->valuedouble < 1 || rows->valuedouble > INT32_MAX || cols->valuedouble > INT32_MAX)
		return s0__error_set(err, S0_EINVAL, "invalid_request", "rows and cols must be > 0");
	pthread_mutex_lock(&g->mu);
	s0__ctx *c = s0__ctx_find(g, id, err);
	s0__proc *p = c ? s0__gproc_find(g, c->pid) : NULL;
	int rc = S0_OK;
	if (!c)
		rc = S0_ENOTFOUND;
	else if (!c->pty)
		rc = s0__error_set(err, S0_ECONFLICT, "pty_unavailable", "context has no pty");
	else if (!p || p->ended)
		rc = s0__error_set(err, S0_ECONFLICT, "process_not_running", "process is not running");
	else {
		c->rows = (int32_t)rows->valuedouble, c->cols = (int32_t)cols->valuedouble;
		p->active_vt = g->vt;
	}
	pthread_mutex_unlock(&g->mu);
	cJSON *data = rc == S0_OK ? s0__ctx_render_flag("resized") : NULL;
	if (rc == S0_OK && !data)
		rc = s0__error_nomem(err);
	if (rc == S0_OK)
		*data_out = data;
	return rc;
}
