/* Text builtins: echo, printf, cat, read, true, false (shell.h). */
#include "local/runtime/sim/sh_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "local/fsview/router.h"

static int bi_echo(sh_cmdctx *x, int argc, char **argv)
{
	int i = 1;
	bool nl = true;
	for (; i < argc && !strcmp(argv[i], "-n"); i++)
		nl = false;
	for (int j = i; j < argc; j++) {
		if (j > i)
			s0__sh_write(x, 1, " ", 1);
		s0__sh_write(x, 1, argv[j], strlen(argv[j]));
	}
	if (nl)
		s0__sh_write(x, 1, "\n", 1);
	return 0;
}

/* One escape of printf's format at f[0] == '\\'; returns chars consumed. */
static size_t escape(s0__buf *o, const char *f)
{
	static const char from[] = "ntr\\\"a0", to[] = "\n\t\r\\\"\a";
	const char *k = f[1] ? strchr(from, f[1]) : NULL;
	if (!k) {
		s0__buf_put(o, f, f[1] ? 2 : 1);
		return f[1] ? 2 : 1;
	}
	if (*k != '0')
		s0__buf_put(o, &to[k - from], 1);
	return 2;
}

/* One conversion at f[0] == '%'; returns chars consumed, -1 when bad. */
static int conversion(s0__buf *o, const char *f, const char *arg, bool *badnum)
{
	size_t n = 1;
	while (f[n] && strchr("-+ #0", f[n]))
		n++;
	while (f[n] >= '0' && f[n] <= '9')
		n++;
	if (f[n] == '.')
		for (n++; f[n] >= '0' && f[n] <= '9';)
			n++;
	char conv = f[n];
	if (!conv || !strchr("sdiuxXoc%", conv) || n > 32)
		return -1;
	char spec[40];
	memcpy(spec, f, n);
	spec[n] = 0;
	if (conv == 's' || conv == 'c') {
		const char *a = arg ? arg : "";
		char one[2] = {a[0], 0};
		strcat(spec, "s");
		s0__buf_printf(o, spec, conv == 's' ? a : one);
	} else if (conv == '%') {
		s0__buf_put(o, "%", 1);
	} else {
		char *end;
		long long v = arg && *arg ? strtoll(arg, &end, 0) : 0;
		if (arg && *arg && *end)
			*badnum = true;
		char len_conv[4] = {'l', 'l', conv == 'i' ? 'd' : conv, 0};
		strcat(spec, len_conv);
		s0__buf_printf(o, spec, v);
	}
	return (int)n + 1;
}

/* Format once; *used counts the arguments consumed. */
static int format_once(s0__buf *o, const char *f, char **args, int nargs, int *used,
                       bool *badnum)
{
	*used = 0;
	for (size_t i = 0; f[i];) {
		if (f[i] == '\\') {
			i += escape(o, f + i);
		} else if (f[i] == '%') {
			bool takes = f[i + 1] != '%';
			const char *a = takes && *used < nargs ? args[*used] : NULL;
			int n = conversion(o, f + i, a, badnum);
			if (n < 0)
				return -1;
			if (takes && *used < nargs)
				(*used)++;
			i += (size_t)n;
		} else {
			s0__buf_put(o, f + i, 1);
			i++;
		}
	}
	return 0;
}

static int bi_printf(sh_cmdctx *x, int argc, char **argv)
{
	if (argc < 2) {
		s0__sh_errf(x, "printf: usage: printf FORMAT [ARGUMENTS...]");
		return 2;
	}
	s0__buf o = S0__BUF_INIT;
	int at = 2, used, rc = 0;
	bool badnum = false;
	do {
		if (format_once(&o, argv[1], argv + at, argc - at, &used, &badnum) < 0) {
			s0__sh_errf(x, "printf: %s: invalid format", argv[1]);
			rc = 1;
			break;
		}
		at += used;
	} while (used && at < argc);
	s0__sh_write(x, 1, o.data, o.len);
	s0__buf_free(&o);
	if (badnum) {
		s0__sh_errf(x, "printf: invalid number");
		rc = 1;
	}
	return rc;
}

static int cat_file(sh_cmdctx *x, const char *arg)
{
	const struct s0__files_ns *ns = s0__sh_ns(x, "cat");
	char *path = ns ? s0__sh_path(x, "cat", arg) : NULL;
	if (!path)
		return 1;
	void *d = NULL;
	size_t n = 0;
	s0_error *e = NULL;
	int rc = 0;
	if (s0__files_read(ns, path, strlen(path), 0, -1, &d, &n, &e) < 0) {
		s0__sh_errf(x, "cat: %s: %s", arg, s0__sh_strerror(e));
		s0_error_free(e);
		rc = 1;
	} else {
		s0__sh_write(x, 1, d, n);
	}
	free(d);
	free(path);
	return rc;
}

static bool wait_for_input(sh_cmdctx *x, bool to_eof);

static int bi_cat(sh_cmdctx *x, int argc, char **argv)
{
	bool stdin_too = argc == 1;
	for (int i = 1; i < argc; i++)
		stdin_too |= !strcmp(argv[i], "-");
	if (stdin_too && wait_for_input(x, true))
		return x->r->p->last_status;
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-")) {
			rc |= cat_file(x, argv[i]);
			continue;
		}
		s0__buf in = S0__BUF_INIT;
		if (s0__sh_read_all(x, 0, &in) < 0)
			rc = 1;
		s0__sh_write(x, 1, in.data, in.len);
		s0__buf_free(&in);
	}
	if (argc == 1) {
		s0__buf in = S0__BUF_INIT;
		if (s0__sh_read_all(x, 0, &in) < 0)
			rc = 1;
		s0__sh_write(x, 1, in.data, in.len);
		s0__buf_free(&in);
	}
	return rc;
}

/* A session attempt's top-level `read` on an open stdin pipe without a whole
 * line (`cat` of stdin: without EOF, @p to_eof) yields until
 * s0__guest_write_input() queues one (or EOF); the command runs again then,
 * so $? stays the previous command's meanwhile. */
static bool wait_for_input(sh_cmdctx *x, bool to_eof)
{
	s0__sh_run *r = x->r;
	s0__proc *p = r->p;
	const s0__fd *f = x->view[0];
	if (r->fg || r->depth || p->owner != S0__OWN_SESSION || !f || f->kind != S0__FD_PIPE ||
	    p->in_eof || (!to_eof && p->in.len && memchr(p->in.data, '\n', p->in.len)))
		return false;
	p->sleeping = true;
	p->wake_at = S0__WAKE_ON_INPUT;
	r->yielded = r->again = r->stop = true;
	return true;
}

static int bi_read(sh_cmdctx *x, int argc, char **argv)
{
	if (argc != 2 || !s0__var_name_ok(argv[1], strlen(argv[1]))) {
		s0__sh_errf(x, "read: usage: read NAME");
		return 2;
	}
	if (wait_for_input(x, false))
		return x->r->p->last_status;
	s0__buf line = S0__BUF_INIT;
	bool eof;
	if (s0__sh_read_line(x, 0, &line, &eof) < 0) {
		s0__buf_free(&line);
		return 1;
	}
	int rc = s0__vars_set(&x->r->p->vars, argv[1], line.data ? line.data : "", S0__VAR_KEEP);
	s0__buf_free(&line);
	if (rc < 0)
		x->oom = true;
	return eof || rc < 0 ? 1 : 0;
}

static int bi_true(sh_cmdctx *x, int argc, char **argv)
{
	(void)x, (void)argc, (void)argv;
	return 0;
}

static int bi_false(sh_cmdctx *x, int argc, char **argv)
{
	(void)x, (void)argc, (void)argv;
	return 1;
}

const sh_bi *s0__bi_text(size_t *n)
{
	static const sh_bi t[] = {{"echo", bi_echo}, {"printf", bi_printf}, {"cat", bi_cat},
	                          {"read", bi_read}, {"true", bi_true},     {"false", bi_false}};
	*n = sizeof t / sizeof t[0];
	return t;
}
