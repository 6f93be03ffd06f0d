/* Sorted shell variable lists (vars.h). */
#include "local/runtime/sim/vars.h"

#include <stdlib.h>
#include <string.h>

bool s0__var_name_ok(const char *name, size_t len)
{
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
		if (!alpha && (i == 0 || c < '0' || c > '9'))
			return false;
	}
	return true;
}

/* Index of name, or the insertion point with *found false. */
static size_t locate(const s0__vars *v, const char *name, bool *found)
{
	size_t lo = 0, hi = v->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(v->v[mid].name, name);
		if (!c) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

s0__var *s0__vars_find(const s0__vars *v, const char *name)
{
	bool found;
	size_t i = locate(v, name, &found);
	return found ? &v->v[i] : NULL;
}

const char *s0__vars_get(const s0__vars *v, const char *name)
{
	s0__var *x = s0__vars_find(v, name);
	return x ? x->value : NULL;
}

static int set_existing(s0__var *x, const char *value, int mode)
{
	if (value) {
		char *c = s0__strdup(value);
		if (!c)
			return S0_ENOMEM;
		free(x->value);
		x->value = c;
	}
	if (mode == S0__VAR_EXPORT)
		x->exported = true;
	else if (mode == S0__VAR_LOCAL)
		x->exported = false;
	return S0_OK;
}

int s0__vars_set(s0__vars *v, const char *name, const char *value, int mode)
{
	bool found;
	size_t i = locate(v, name, &found);
	if (found)
		return set_existing(&v->v[i], value, mode);
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 8;
		s0__var *nv = realloc(v->v, cap * sizeof *nv);
		if (!nv)
			return S0_ENOMEM;
		v->v = nv;
		v->cap = cap;
	}
	s0__var x = {s0__strdup(name), s0__strdup(value ? value : ""), mode == S0__VAR_EXPORT};
	if (!x.name || !x.value) {
		free(x.name);
		free(x.value);
		return S0_ENOMEM;
	}
	memmove(&v->v[i + 1], &v->v[i], (v->n - i) * sizeof *v->v);
	v->v[i] = x;
	v->n++;
	return S0_OK;
}

void s0__vars_unset(s0__vars *v, const char *name)
{
	bool found;
	size_t i = locate(v, name, &found);
	if (!found)
		return;
	free(v->v[i].name);
	free(v->v[i].value);
	memmove(&v->v[i], &v->v[i + 1], (v->n - i - 1) * sizeof *v->v);
	v->n--;
}

int s0__vars_copy(s0__vars *dst, const s0__vars *src, bool exported_only)
{
	for (size_t i = 0; i < src->n; i++) {
		if (exported_only && !src->v[i].exported)
			continue;
		int mode = src->v[i].exported ? S0__VAR_EXPORT : S0__VAR_LOCAL;
		if (s0__vars_set(dst, src->v[i].name, src->v[i].value, mode) < 0) {
			s0__vars_clear(dst);
			return S0_ENOMEM;
		}
	}
	return S0_OK;
}

void s0__vars_clear(s0__vars *v)
{
	for (size_t i = 0; i < v->n; i++) {
		free(v->v[i].name);
		free(v->v[i].value);
	}
	free(v->v);
	memset(v, 0, sizeof *v);
}
