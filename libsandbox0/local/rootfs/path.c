/* Normalisation of hostile paths and the runtime-only mount set. */
#include "local/rootfs/path.h"

#include <stdlib.h>
#include <string.h>

#define R_INVALID "invalid_request"

const char *const s0__builtin_mounts[4] = {"/tmp", "/proc", "/dev", "/sys"};

bool s0__path_next(const char **p, const char **comp, size_t *len)
{
	const char *s = *p;
	while (*s == '/')
		s++;
	if (!*s) {
		*p = s;
		return false;
	}
	const char *e = s;
	while (*e && *e != '/')
		e++;
	*comp = s;
	*len = (size_t)(e - s);
	*p = e;
	return true;
}

/* Append one component to out (length *olen), handling "." and "..". */
static int push_comp(char *out, size_t *olen, const char *c, size_t n, unsigned flags,
                     s0_error **err)
{
	if (n == 0 || (n == 1 && c[0] == '.'))
		return S0_OK;
	if (n == 2 && c[0] == '.' && c[1] == '.') {
		if (*olen == 0) {
			if (flags & S0__PATH_CLAMP)
				return S0_OK;
			return s0__error_set(err, S0_EINVAL, R_INVALID,
			                     "path escapes the root with '..'");
		}
		while (*olen > 0 && out[*olen - 1] != '/')
			(*olen)--;
		(*olen)--; /* the slash before the removed component */
		return S0_OK;
	}
	if (n > S0__NAME_MAX)
		return s0__error_set(err, S0_EINVAL, R_INVALID,
		                     "path component longer than %d bytes", S0__NAME_MAX);
	if (*olen + 1 + n > S0__PATH_MAX)
		return s0__error_set(err, S0_EINVAL, R_INVALID, "path longer than %d bytes",
		                     S0__PATH_MAX);
	out[(*olen)++] = '/';
	memcpy(out + *olen, c, n);
	*olen += n;
	return S0_OK;
}

/* Feed every component of s[0..len) through push_comp. */
static int push_all(char *out, size_t *olen, const char *s, size_t len, unsigned flags,
                    s0_error **err)
{
	size_t i = 0;
	while (i < len) {
		while (i < len && s[i] == '/')
			i++;
		size_t j = i;
		while (j < len && s[j] != '/')
			j++;
		int rc = push_comp(out, olen, s + i, j - i, flags, err);
		if (rc < 0)
			return rc;
		i = j;
	}
	return S0_OK;
}

int s0__path_normalize(const char *in, size_t in_len, unsigned flags, char **out,
                       s0_error **err)
{
	if (!in || in_len == 0)
		return s0__error_set(err, S0_EINVAL, R_INVALID, "path is required");
	if (memchr(in, '\0', in_len))
		return s0__error_set(err, S0_EINVAL, R_INVALID, "path contains a NUL byte");
	if (in_len > S0__PATH_MAX)
		return s0__error_set(err, S0_EINVAL, R_INVALID, "path longer than %d bytes",
		                     S0__PATH_MAX);
	char *buf = malloc(S0__PATH_MAX + 2);
	if (!buf)
		return s0__error_nomem(err);
	size_t olen = 0;
	int rc = S0_OK;
	if (in[0] != '/')
		rc = push_all(buf, &olen, S0__WORKSPACE_ROOT, strlen(S0__WORKSPACE_ROOT), 0, err);
	if (rc == S0_OK)
		rc = push_all(buf, &olen, in, in_len, flags, err);
	if (rc < 0) {
		free(buf);
		return rc;
	}
	if (olen == 0)
		buf[olen++] = '/';
	buf[olen] = '\0';
	*out = buf;
	return S0_OK;
}

bool s0__path_is_under(const char *p, const char *prefix)
{
	size_t n = strlen(prefix);
	if (n == 1 && prefix[0] == '/')
		return p[0] == '/';
	return strncmp(p, prefix, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

const char *s0__path_base(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

char *s0__path_join(const char *dir, const char *name)
{
	if (!strcmp(dir, "/"))
		return s0__asprintf("/%s", name);
	return s0__asprintf("%s/%s", dir, name);
}

int s0__mountset_add(s0__mountset *m, const char *path, size_t len, s0_error **err)
{
	char *p = NULL;
	int rc = s0__path_normalize(path, len, 0, &p, err);
	if (rc < 0)
		return rc;
	if (!strcmp(p, "/")) {
		free(p);
		return s0__error_set(err, S0_EINVAL, R_INVALID,
		                     "the root cannot be a runtime-only mount");
	}
	for (size_t i = 0; i < m->n; i++) {
		if (!strcmp(m->paths[i], p)) {
			free(p);
			return S0_OK;
		}
	}
	char **np = realloc(m->paths, (m->n + 1) * sizeof *np);
	if (!np) {
		free(p);
		return s0__error_nomem(err);
	}
	np[m->n++] = p;
	m->paths = np;
	return S0_OK;
}

void s0__mountset_clear(s0__mountset *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->paths[i]);
	free(m->paths);
	m->paths = NULL;
	m->n = 0;
}

const char *s0__mountset_owner(const s0__mountset *m, const char *p)
{
	const char *best = NULL;
	size_t best_len = 0;
	for (size_t i = 0; m && i < m->n; i++) {
		size_t n = strlen(m->paths[i]);
		if (n > best_len && s0__path_is_under(p, m->paths[i])) {
			best = m->paths[i];
			best_len = n;
		}
	}
	return best;
}

bool s0__mountset_is_mount(const s0__mountset *m, const char *p)
{
	for (size_t i = 0; m && i < m->n; i++)
		if (!strcmp(m->paths[i], p))
			return true;
	return false;
}
