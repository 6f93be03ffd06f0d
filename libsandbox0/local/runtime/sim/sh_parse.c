/* Lexer and parser of the built-in shell (shell.h grammar). */
#include "local/runtime/sim/sh_int.h"

#include <stdlib.h>
#include <string.h>

static const char MSG_QUOTE[] = "unterminated quote";
static const char MSG_DANGLING[] = "a command must follow && or ||";

typedef struct lex {
	const char *t;
	size_t i;
	const char *msg;
	int rc;
} lex;

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static bool is_special(char c)
{
	return c == ';' || c == '&' || c == '|' || c == '<' || c == '>' || c == '\n' ||
	       is_blank(c) || c == 0;
}

static bool grow(void **v, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return true;
	size_t c = *cap ? *cap * 2 : 4;
	void *p = realloc(*v, c * size);
	if (!p)
		return false;
	*v = p;
	*cap = c;
	return true;
}

/* Scan one word starting at l->i; returns false on an unterminated quote. */
static bool scan_word(lex *l, sh_word *w)
{
	size_t st = l->i;
	const char *t = l->t;
	while (!is_special(t[l->i])) {
		char c = t[l->i];
		if (c == '\\') {
			l->i += t[l->i + 1] ? 2 : 1;
		} else if (c == '\'' || c == '"') {
			l->i++;
			while (t[l->i] && t[l->i] != c) {
				if (c == '"' && t[l->i] == '\\' && t[l->i + 1])
					l->i++;
				l->i++;
			}
			if (!t[l->i]) {
				l->msg = MSG_QUOTE;
				return false;
			}
			l->i++;
		} else {
			l->i++;
		}
	}
	w->s = t + st;
	w->n = l->i - st;
	return true;
}

static int fail(lex *l, const char *msg)
{
	if (!l->msg)
		l->msg = msg;
	return l->rc = -1;
}

static int oom(lex *l)
{
	return l->rc = -2;
}

/* A redirection at l->i (an optional digit was already consumed into fd). */
static int scan_redir(lex *l, sh_cmd *c, int fd)
{
	const char *t = l->t;
	sh_redir rd = {.fd = fd};
	if (t[l->i] == '<') {
		rd.op = SH_R_IN;
		l->i++;
		if (rd.fd < 0)
			rd.fd = 0;
	} else if (t[l->i + 1] == '>') {
		rd.op = SH_R_APPEND;
		l->i += 2;
	} else if (t[l->i + 1] == '&') {
		rd.op = SH_R_DUP;
		l->i += 2;
		if (t[l->i] < '0' || t[l->i] > '9' || !is_special(t[l->i + 1]))
			return fail(l, "expected a file descriptor after >&");
		rd.dupfd = t[l->i++] - '0';
	} else {
		rd.op = SH_R_OUT;
		l->i++;
	}
	if (rd.fd < 0)
		rd.fd = 1;
	if (rd.op != SH_R_DUP) {
		while (is_blank(t[l->i]))
			l->i++;
		if (is_special(t[l->i]))
			return fail(l, "expected a file name after a redirection");
		if (!scan_word(l, &rd.target))
			return fail(l, MSG_QUOTE);
	}
	if (!grow((void **)&c->r, &c->capr, c->nr, sizeof *c->r))
		return oom(l);
	c->r[c->nr++] = rd;
	return 0;
}

/* One command: words and redirections up to an operator. */
static int scan_cmd(lex *l, sh_cmd *c)
{
	const char *t = l->t;
	for (;;) {
		while (is_blank(t[l->i]))
			l->i++;
		char ch = t[l->i];
		if (ch == '#') {
			while (t[l->i] && t[l->i] != '\n')
				l->i++;
			continue;
		}
		if (ch >= '0' && ch <= '9' && (t[l->i + 1] == '<' || t[l->i + 1] == '>')) {
			l->i++;
			if (scan_redir(l, c, ch - '0') < 0)
				return l->rc;
			continue;
		}
		if (ch == '<' || ch == '>') {
			if (scan_redir(l, c, -1) < 0)
				return l->rc;
			continue;
		}
		if (is_special(ch))
			return 0;
		if (!grow((void **)&c->w, &c->capw, c->nw, sizeof *c->w))
			return oom(l);
		if (!scan_word(l, &c->w[c->nw]))
			return fail(l, MSG_QUOTE);
		c->nw++;
	}
}

static bool cmd_empty(const sh_cmd *c)
{
	return !c->nw && !c->nr;
}

/* Add an empty command to a statement. */
static sh_cmd *add_cmd(lex *l, sh_stmt *s)
{
	if (!grow((void **)&s->c, &s->capc, s->nc, sizeof *s->c)) {
		oom(l);
		return NULL;
	}
	size_t cap = s->capc;
	uint8_t *ops = realloc(s->ops, cap);
	if (!ops) {
		oom(l);
		return NULL;
	}
	s->ops = ops;
	memset(&s->c[s->nc], 0, sizeof s->c[0]);
	return &s->c[s->nc++];
}

/* One statement: commands joined by && and ||. */
static int scan_stmt(lex *l, sh_stmt *s)
{
	const char *t = l->t;
	while (is_blank(t[l->i]))
		l->i++;
	s->lo = l->i;
	for (;;) {
		sh_cmd *c = add_cmd(l, s);
		if (!c || scan_cmd(l, c) < 0)
			return l->rc;
		bool and_ = t[l->i] == '&' && t[l->i + 1] == '&';
		bool or_ = t[l->i] == '|' && t[l->i + 1] == '|';
		if (t[l->i] == '|' && !or_)
			return fail(l, "pipes are not supported");
		if (!and_ && !or_)
			break;
		if (cmd_empty(c))
			return fail(l, and_ ? "unexpected &&" : "unexpected ||");
		s->ops[s->nc - 1] = and_ ? SH_AND : SH_OR;
		l->i += 2;
		while (is_blank(t[l->i]) || t[l->i] == '\n')
			l->i++;
	}
	s->hi = l->i;
	if (cmd_empty(&s->c[s->nc - 1]) && s->nc > 1)
		return fail(l, MSG_DANGLING);
	return 0;
}

static void stmt_free(sh_stmt *s)
{
	for (size_t i = 0; i < s->nc; i++) {
		free(s->c[i].w);
		free(s->c[i].r);
	}
	free(s->c);
	free(s->ops);
}

void s0__sh_prog_free(sh_prog *p)
{
	for (size_t i = 0; i < p->n; i++)
		stmt_free(&p->s[i]);
	free(p->s);
	memset(p, 0, sizeof *p);
}

/* Keep a parsed statement, or drop it when it is empty. */
static int keep_stmt(lex *l, sh_prog *p, sh_stmt *s, bool bg)
{
	if (s->nc == 1 && cmd_empty(&s->c[0])) {
		stmt_free(s);
		return bg ? fail(l, "unexpected &") : 0;
	}
	s->bg = bg;
	if (!grow((void **)&p->s, &p->cap, p->n, sizeof *p->s)) {
		stmt_free(s);
		return oom(l);
	}
	p->s[p->n++] = *s;
	return 0;
}

int s0__sh_parse(const char *text, sh_prog *out, const char **msg)
{
	lex l = {.t = text};
	sh_prog p = {0};
	while (text[l.i]) {
		sh_stmt s = {0};
		if (scan_stmt(&l, &s) < 0) {
			stmt_free(&s);
			break;
		}
		char sep = text[l.i];
		bool bg = sep == '&';
		if (sep)
			l.i++;
		if (sep == ';' && s.nc == 1 && cmd_empty(&s.c[0])) {
			stmt_free(&s);
			fail(&l, "unexpected ;");
			break;
		}
		if (keep_stmt(&l, &p, &s, bg) < 0)
			break;
	}
	if (l.rc < 0) {
		s0__sh_prog_free(&p);
		*msg = l.msg ? l.msg : "out of memory";
		return l.rc;
	}
	*out = p;
	return 0;
}

bool s0__sh_incomplete(const char *text)
{
	sh_prog p;
	const char *msg;
	if (s0__sh_parse(text, &p, &msg) == 0) {
		s0__sh_prog_free(&p);
		return false;
	}
	return msg == MSG_QUOTE || msg == MSG_DANGLING;
}
