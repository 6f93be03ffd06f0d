/* Parameters and columns of the PostgreSQL metadata store (mpg.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "local/meta/postgres/mpg.h"

void s0__mpg_p_text(mpg_params *p, const char *s)
{
	p->v[p->n] = s;
	p->len[p->n] = 0;
	p->fmt[p->n] = 0;
	p->n++;
}

void s0__mpg_p_i64(mpg_params *p, int64_t v)
{
	snprintf(p->num[p->n], sizeof p->num[p->n], "%lld", (long long)v);
	s0__mpg_p_text(p, p->num[p->n]);
}

void s0__mpg_p_bin(mpg_params *p, const void *b, size_t n)
{
	p->v[p->n] = n ? b : "";
	p->len[p->n] = (int)n;
	p->fmt[p->n] = 1;
	p->n++;
}

void s0__mpg_text(const PGresult *r, int row, int col, char *dst, size_t n)
{
	s0__strlcpy(dst, PQgetisnull(r, row, col) ? "" : PQgetvalue(r, row, col), n);
}

int64_t s0__mpg_i64(const PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? 0 : strtoll(PQgetvalue(r, row, col), NULL, 10);
}

char *s0__mpg_dup(const PGresult *r, int row, int col)
{
	return s0__strdup(PQgetisnull(r, row, col) ? "" : PQgetvalue(r, row, col));
}

int s0__mpg_ids(PGresult *r, char ***ids, size_t *n, s0_error **err)
{
	size_t len = (size_t)PQntuples(r);
	char **v = calloc(len ? len : 1, sizeof *v);
	for (size_t i = 0; v && i < len; i++)
		if (!(v[i] = s0__mpg_dup(r, (int)i, 0))) {
			s0__meta_free_ids(v, i);
			v = NULL;
		}
	PQclear(r);
	if (!v)
		return s0__error_nomem(err);
	*ids = v;
	*n = len;
	return S0_OK;
}
