/* Builtins over the shell's own state: export, unset, env, exit, sh -c (shell.h). */
#include "local/runtime/sim/sh_int.h"

#include <stdlib.h>
#include <string.h>

static void print_env(sh_cmdctx *x, const char *prefix)
{
	const s0__vars *v = &x->r->p->vars;
	for (size_t i = 0; i < v->n; i++)
		if (v->v[i].exported)
			s0__sh_printf(x, 1, "%s%s=%s\n", prefix, v->v[i].name, v->v[i].value);
}

static int bi_export(sh_cmdctx *x, int argc, char **argv)
{
	if (argc == 1) {
		print_env(x, "export ");
		return 0;
	}
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		size_t nl = eq ? (size_t)(eq - argv[i]) : strlen(argv[i]);
		if (!s0__var_name_ok(argv[i], nl)) {
			s0__sh_errf(x, "export: `%s': not a valid identifier", argv[i]);
			rc = 1;
			continue;
		}
		char *name = s0__strndup(argv[i], nl);
		if (!name || s0__vars_set(&x->r->p->vars, name, eq ? eq + 1 : NULL, S0__VAR_EXPORT) < 0)
			x->oom = true;
		free(name);
	}
	return rc;
}

static int bi_unset(sh_cmdctx *x, int argc, char **argv)
{
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		if (!s0__var_name_ok(argv[i], strlen(argv[i]))) {
			s0__sh_errf(x, "unset: `%s': not a valid identifier", argv[i]);
			rc = 1;
			continue;
		}
		s0__vars_unset(&x->r->p->vars, argv[i]);
	}
	return rc;
}

static int bi_env(sh_cmdctx *x, int argc, char **argv)
{
	if (argc > 1) {
		s0__sh_errf(x, "env: running commands is not supported: %s", argv[1]);
		return 2;
	}
	print_env(x, "");
	return 0;
}

static int bi_exit(sh_cmdctx *x, int argc, char **argv)
{
	int code = x->r->p->last_status;
	if (argc > 1) {
		char *end;
		long v = strtol(argv[1], &end, 10);
		if (!argv[1][0] || *end) {
			s0__sh_errf(x, "exit: %s: numeric argument required", argv[1]);
			v = 2;
		}
		code = (int)(v & 0xff);
	}
	x->r->exited = true;
	x->r->stop = true;
	return code;
}

/* `sh -c SCRIPT`: a new shell on the same process, with only the environment. */
static int bi_sh(sh_cmdctx *x, int argc, char **argv)
{
	s0__sh_run *r = x->r;
	s0__proc *p = r->p;
	if (argc < 3 || strcmp(argv[1], "-c")) {
		s0__sh_errf(x, "%s: only '%s -c SCRIPT' is supported", argv[0], argv[0]);
		return 2;
	}
	if (r->depth >= S0__SH_MAX_DEPTH) {
		s0__sh_errf(x, "%s: nested too deeply", argv[0]);
		return 2;
	}
	s0__vars saved = p->vars, fresh = {0};
	char *saved_cwd = p->cwd, *cwd = s0__strdup(saved_cwd);
	int32_t saved_status = p->last_status;
	if (!cwd || s0__vars_copy(&fresh, &saved, true) < 0) {
		free(cwd);
		x->oom = true;
		return 1;
	}
	p->vars = fresh;
	p->cwd = cwd;
	p->last_status = 0;
	s0__sh_run sub = {.g = r->g, .p = p, .sink = r->sink, .fg = r->fg,
	                  .deadline_vt = r->deadline_vt, .depth = r->depth + 1, .base = x->view};
	uint32_t a = 0, b = 0;
	int st = s0__sh_exec(&sub, argv[2], &a, &b);
	s0__vars_clear(&p->vars);
	free(p->cwd);
	p->vars = saved;
	p->cwd = saved_cwd;
	p->last_status = saved_status;
	if (sub.timed_out)
		r->timed_out = r->stop = true;
	if (sub.crashed)
		r->crashed = r->stop = true;
	return st;
}

const sh_bi *s0__bi_env(size_t *n)
{
	static const sh_bi t[] = {{"export", bi_export}, {"unset", bi_unset}, {"env", bi_env},
	                          {"exit", bi_exit},     {"sh", bi_sh},       {"bash", bi_sh}};
	*n = sizeof t / sizeof t[0];
	return t;
}

sh_builtin_fn s0__sh_builtin(const char *name)
{
	const sh_bi *(*const groups[])(size_t *) = {s0__bi_text, s0__bi_files, s0__bi_copy,
	                                            s0__bi_env, s0__bi_proc, s0__bi_net};
	for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
		size_t n;
		const sh_bi *t = groups[g](&n);
		for (size_t i = 0; i < n; i++)
			if (!strcmp(t[i].name, name))
				return t[i].fn;
	}
	return NULL;
}
