/* Word expansion of the built-in shell: quotes, escapes and $ (shell.h). */
#include "local/runtime/sim/sh_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct exp {
	s0__sh_run *r;
	s0__buf out;
	bool quoted, any;
	int bad;
} exp;

static void put(exp *e, const char *s, size_t n)
{
	if (n && s0__buf_put(&e->out, s, n) < 0)
		e->bad = 1;
	e->any = true;
}

static void put_num(exp *e, long long v)
{
	char b[32];
	int n = snprintf(b, sizeof b, "%lld", v);
	put(e, b, (size_t)n);
}

static bool name_char(char c, bool first)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
	       (!first && c >= '0' && c <= '9');
}

/* $… at w[i] (w[i] == '$'); returns the index after it. */
static size_t dollar(exp *e, const char *w, size_t n, size_t i)
{
	s0__proc *p = e->r->p;
	if (i + 1 >= n) {
		put(e, "$", 1);
		return i + 1;
	}
	char c = w[i + 1];
	if (c == '?' || c == '$' || c == '!') {
		if (c != '!' || p->last_bg)
			put_num(e, c == '?' ? p->last_status : c == '$' ? p->pid : p->last_bg);
		return i + 2;
	}
	size_t st = i + 1, end;
	bool brace = c == '{';
	if (brace)
		st++;
	end = st;
	while (end < n && name_char(w[end], end == st))
		end++;
	if (end == st || (brace && (end >= n || w[end] != '}'))) {
		put(e, "$", 1);
		return i + 1;
	}
	char name[256];
	size_t len = end - st < sizeof name - 1 ? end - st : sizeof name - 1;
	memcpy(name, w + st, len);
	name[len] = 0;
	const char *v = s0__vars_get(&p->vars, name);
	if (v)
		put(e, v, strlen(v));
	return brace ? end + 1 : end;
}

/* Inside "…" from w[i] (after the quote); returns the index after the closing quote. */
static size_t dquote(exp *e, const char *w, size_t n, size_t i)
{
	while (i < n && w[i] != '"') {
		if (w[i] == '\\' && i + 1 < n && strchr("\"\\$`\n", w[i + 1])) {
			if (w[i + 1] != '\n')
				put(e, w + i + 1, 1);
			i += 2;
		} else if (w[i] == '$') {
			i = dollar(e, w, n, i);
		} else {
			put(e, w + i, 1);
			i++;
		}
	}
	return i + 1;
}

char *s0__sh_expand(s0__sh_run *r, sh_word w, bool *drop)
{
	exp e = {.r = r};
	const char *s = w.s;
	size_t n = w.n, i = 0;
	while (i < n && !e.bad) {
		char c = s[i];
		if (c == '\'') {
			const char *q = memchr(s + i + 1, '\'', n - i - 1);
			size_t len = q ? (size_t)(q - s) - i - 1 : n - i - 1;
			put(&e, s + i + 1, len);
			e.quoted = true;
			i += len + 2;
		} else if (c == '"') {
			e.quoted = true;
			e.any = true;
			i = dquote(&e, s, n, i + 1);
		} else if (c == '\\') {
			if (i + 1 < n && s[i + 1] != '\n')
				put(&e, s + i + 1, 1);
			e.quoted = true;
			i += 2;
		} else if (c == '$') {
			i = dollar(&e, s, n, i);
		} else {
			put(&e, s + i, 1);
			i++;
		}
	}
	if (e.bad || s0__buf_grow(&e.out, 1) < 0) {
		s0__buf_free(&e.out);
		return NULL;
	}
	*drop = !e.quoted && e.out.len == 0;
	char *res = s0__buf_detach(&e.out, NULL);
	return res;
}
