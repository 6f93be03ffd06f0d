/* The executor of the built-in shell: statements, && and ||, commands (shell.h). */
#include "local/runtime/sim/sh_int.h"

#include <stdlib.h>
#include <string.h>

/* Length of "NAME" when raw word w starts with an unquoted NAME=, else 0. */
static size_t assign_len(sh_word w)
{
	size_t i = 0;
	while (i < w.n && w.s[i] != '=')
		i++;
	return i < w.n && s0__var_name_ok(w.s, i) ? i : 0;
}

typedef struct saved_var {
	char *name;
	char *old;
	bool had, exported;
} saved_var;

typedef struct argvec {
	char **v;
	int n;
	saved_var *pre;
	size_t npre;
} argvec;

static void argvec_free(argvec *a)
{
	for (int i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	for (size_t i = 0; i < a->npre; i++) {
		free(a->pre[i].name);
		free(a->pre[i].old);
	}
	free(a->pre);
}

/* Expand a command's words into prefix assignments (saved in a->pre with
 * their new values in ->old until applied) and argv. */
static int expand_cmd(s0__sh_run *r, const sh_cmd *c, argvec *a)
{
	size_t i = 0;
	a->v = calloc(c->nw + 1, sizeof *a->v);
	a->pre = calloc(c->nw + 1, sizeof *a->pre);
	if (!a->v || !a->pre)
		return -1;
	for (; i < c->nw; i++) {
		size_t nl = assign_len(c->w[i]);
		if (!nl)
			break;
		bool drop;
		sh_word val = {c->w[i].s + nl + 1, c->w[i].n - nl - 1};
		saved_var *sv = &a->pre[a->npre++];
		if (!(sv->name = s0__strndup(c->w[i].s, nl)) || !(sv->old = s0__sh_expand(r, val, &drop)))
			return -1;
	}
	for (; i < c->nw; i++) {
		bool drop;
		char *w = s0__sh_expand(r, c->w[i], &drop);
		if (!w)
			return -1;
		if (drop)
			free(w);
		else
			a->v[a->n++] = w;
	}
	return 0;
}

/* Set the prefix assignments: for a command, exported and saved for restore_pre. */
static int apply_pre(s0__vars *v, argvec *a, bool for_command)
{
	for (size_t i = 0; i < a->npre; i++) {
		saved_var *sv = &a->pre[i];
		char *val = sv->old;
		sv->old = NULL;
		s0__var *cur = s0__vars_find(v, sv->name);
		sv->had = cur != NULL;
		sv->exported = cur && cur->exported;
		if (cur && for_command && !(sv->old = s0__strdup(cur->value))) {
			free(val);
			return -1;
		}
		int rc = s0__vars_set(v, sv->name, val, for_command ? S0__VAR_EXPORT : S0__VAR_KEEP);
		free(val);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static void restore_pre(s0__vars *v, argvec *a)
{
	for (size_t i = 0; i < a->npre; i++) {
		saved_var *sv = &a->pre[i];
		if (!sv->had)
			s0__vars_unset(v, sv->name);
		else if (s0__vars_set(v, sv->name, sv->old,
		                      sv->exported ? S0__VAR_EXPORT : S0__VAR_LOCAL) < 0)
			s0__vars_unset(v, sv->name);
	}
}

static const char *base_name(const char *s)
{
	const char *sl = strrchr(s, '/');
	return sl && sl[1] ? sl + 1 : s;
}

static int run_builtin(sh_cmdctx *x, argvec *a)
{
	sh_builtin_fn fn = s0__sh_builtin(base_name(a->v[0]));
	if (!fn) {
		s0__sh_errf(x, "sh: %s: command not found", a->v[0]);
		return 127;
	}
	if (apply_pre(&x->r->p->vars, a, true) < 0) {
		x->oom = true;
		return 1;
	}
	int st = fn(x, a->n, a->v);
	restore_pre(&x->r->p->vars, a);
	return st;
}

static int run_cmd(s0__sh_run *r, const sh_cmd *c)
{
	sh_cmdctx x = {.r = r};
	for (int i = 0; i < S0__NFD; i++)
		x.view[i] = r->base ? r->base[i] : &r->p->fd[i];
	argvec a = {0};
	int st = 1;
	if (expand_cmd(r, c, &a) < 0) {
		x.oom = true;
	} else if (s0__sh_redirect(&x, c) == 0) {
		if (!a.n)
			st = apply_pre(&r->p->vars, &a, false) < 0 ? (x.oom = true, 1) : 0;
		else
			st = run_builtin(&x, &a);
		if (s0__sh_flush(&x) < 0 && !st)
			st = 1;
	}
	if (x.oom) {
		s0__sh_errf(&x, "sh: out of memory");
		st = st ? st : 1;
	}
	s0__sh_cmdctx_clear(&x);
	argvec_free(&a);
	return st;
}

static void syntax_error(s0__sh_run *r, const char *msg)
{
	sh_cmdctx x = {.r = r};
	for (int i = 0; i < S0__NFD; i++)
		x.view[i] = r->base ? r->base[i] : &r->p->fd[i];
	s0__sh_errf(&x, "sh: syntax error: %s", msg);
	s0__sh_cmdctx_clear(&x);
}

/* Whether the command at (st, c) runs after status st_val. */
static bool runs(const sh_stmt *st, size_t c, int status)
{
	if (!c)
		return true;
	int op = st->ops[c - 1];
	return op == SH_AND ? status == 0 : status != 0;
}

int s0__sh_exec(s0__sh_run *r, const char *text, uint32_t *pc_stmt, uint32_t *pc_cmd)
{
	sh_prog prog;
	const char *msg;
	if (s0__sh_parse(text, &prog, &msg) < 0) {
		syntax_error(r, msg);
		*pc_stmt = UINT32_MAX;
		r->p->last_status = 2;
		return 2;
	}
	int status = r->p->last_status;
	size_t s = *pc_stmt;
	for (; s < prog.n && !r->stop && !r->p->ended; s++) {
		const sh_stmt *st = &prog.s[s];
		if (st->bg) {
			status = r->p->last_status = s0__sh_spawn_job(r, text, st);
			continue;
		}
		size_t c = s == *pc_stmt ? *pc_cmd : 0;
		for (; c < st->nc && !r->stop && !r->p->ended; c++) {
			if (!runs(st, c, status))
				continue;
			status = run_cmd(r, &st->c[c]);
			if (!r->exited)
				r->p->last_status = status;
			if (r->yielded) {
				size_t next = r->again ? c : c + 1; /* again: retry the command */
				*pc_stmt = (uint32_t)(next < st->nc ? s : s + 1);
				*pc_cmd = (uint32_t)(next < st->nc ? next : 0);
				s0__sh_prog_free(&prog);
				return status;
			}
		}
	}
	*pc_stmt = (uint32_t)prog.n;
	*pc_cmd = 0;
	s0__sh_prog_free(&prog);
	return status;
}
