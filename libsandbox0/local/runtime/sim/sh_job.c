/* Background jobs of the built-in shell: `statement &` (shell.h). */
#include "local/runtime/sim/sh_int.h"

#include <stdlib.h>
#include <string.h>

/* Move the fds opened by a job's redirections into the child's table. */
static int adopt_fds(sh_cmdctx *x, s0__proc *c)
{
	s0__fd *src[S0__NFD];
	for (int i = 0; i < S0__NFD; i++)
		src[i] = x->view[i];
	for (int j = 0; j < S0__NFD; j++) {
		if (x->temp[j].kind == S0__FD_CLOSED)
			continue;
		s0__fd_close(&c->fd[j]);
		c->fd[j] = x->temp[j];
		memset(&x->temp[j], 0, sizeof x->temp[j]);
		for (int i = 0; i < S0__NFD; i++)
			if (src[i] == &x->temp[j])
				src[i] = &c->fd[j];
	}
	s0__fd copy[S0__NFD];
	memset(copy, 0, sizeof copy);
	for (int i = 0; i < S0__NFD; i++)
		if (src[i] != &c->fd[i] && s0__fd_copy(&copy[i], src[i]) < 0)
			return -1;
	for (int i = 0; i < S0__NFD; i++) {
		if (src[i] == &c->fd[i])
			continue;
		s0__fd_close(&c->fd[i]);
		c->fd[i] = copy[i];
	}
	return 0;
}

/* The words of a command joined (quotes kept), without its redirections. */
static char *words_text(const sh_cmd *cmd)
{
	s0__buf b = S0__BUF_INIT;
	for (size_t i = 0; i < cmd->nw; i++) {
		if ((i && s0__buf_put(&b, " ", 1) < 0) || s0__buf_put(&b, cmd->w[i].s, cmd->w[i].n) < 0) {
			s0__buf_free(&b);
			return NULL;
		}
	}
	return s0__buf_detach(&b, NULL);
}

/* `sh -c S` (expanded in the parent) runs S itself; anything else runs as written. */
static char *job_script(s0__sh_run *r, const sh_cmd *cmd)
{
	if (cmd->nw >= 3) {
		bool d0, d1, d2;
		char *w0 = s0__sh_expand(r, cmd->w[0], &d0), *w1 = s0__sh_expand(r, cmd->w[1], &d1);
		bool shc = w0 && w1 && (!strcmp(w0, "sh") || !strcmp(w0, "bash")) && !strcmp(w1, "-c");
		free(w0);
		free(w1);
		if (shc)
			return s0__sh_expand(r, cmd->w[2], &d2);
	}
	return words_text(cmd);
}

static int setup_job(s0__sh_run *r, const char *text, const sh_stmt *st, s0__proc *c)
{
	s0__proc *p = r->p;
	if (!(c->cwd = s0__strdup(p->cwd)) || s0__vars_copy(&c->vars, &p->vars, false) < 0)
		return -1;
	for (int i = 0; i < S0__NFD; i++) {
		s0__fd_close(&c->fd[i]);
		if (s0__fd_copy(&c->fd[i], r->base ? r->base[i] : &p->fd[i]) < 0)
			return -1;
	}
	if (st->nc > 1 || st->c[0].nw == 0) {
		c->script = s0__strndup(text + st->lo, st->hi - st->lo);
		return c->script ? 0 : -1;
	}
	sh_cmdctx x = {.r = r};
	for (int i = 0; i < S0__NFD; i++)
		x.view[i] = &c->fd[i];
	int rc = s0__sh_redirect(&x, &st->c[0]);
	if (rc == 0 && adopt_fds(&x, c) < 0)
		rc = -1, x.oom = true;
	s0__sh_cmdctx_clear(&x);
	if (rc < 0)
		return x.oom ? -1 : -2;
	c->script = job_script(r, &st->c[0]);
	return c->script ? 0 : -1;
}

int s0__sh_spawn_job(s0__sh_run *r, const char *text, const sh_stmt *st)
{
	s0__proc *c;
	if (s0__gproc_new(r->g, S0__PK_SCRIPT, r->p->pid, &c, NULL) < 0)
		return 1;
	c->owner = S0__OWN_JOB;
	c->sig_ignored = r->p->sig_ignored; /* ignored signals are inherited */
	c->seed = r->p->seed * 31 + (uint64_t)c->pid;
	int rc = setup_job(r, text, st, c);
	if (rc < 0) {
		s0__gproc_remove(r->g, c);
		return 1;
	}
	if (!(c->argv = calloc(2, sizeof *c->argv)) || !(c->argv[0] = s0__strdup(c->script))) {
		s0__gproc_remove(r->g, c);
		return 1;
	}
	c->argc = 1;
	r->p->last_bg = c->pid;
	s0__sched_run(r->g, c);
	return 0;
}
