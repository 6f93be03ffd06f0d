/* Small settings, sessions blobs and fork idempotency keys in
 * PostgreSQL. */
#include <stdlib.h>
#include <string.h>

#include "local/meta/postgres/mpg.h"

int s0__mpg_kv_get(s0__meta *m, const char *k, char **out, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, k);
	PGresult *r = NULL;
	*out = NULL;
	int rc = s0__mpg_run(m, Q_KV_GET, &p, false, &r, err);
	if (rc < 0)
		return rc;
	if (PQntuples(r) && !(*out = s0__mpg_dup(r, 0, 0)))
		rc = s0__error_nomem(err);
	PQclear(r);
	return rc;
}

int s0__mpg_kv_put(s0__meta *m, const char *k, const char *v, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, k);
	s0__mpg_p_text(&p, v);
	return s0__mpg_run(m, Q_KV_PUT, &p, false, NULL, err);
}

int s0__mpg_sessions_get(s0__meta *m, const char *sandbox_id, void **blob, size_t *len,
                         s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, sandbox_id);
	PGresult *r = NULL;
	*blob = NULL;
	*len = 0;
	int rc = s0__mpg_run(m, Q_SES_GET, &p, true, &r, err); /* binary: the bytes as stored */
	if (rc < 0)
		return rc;
	if (!PQntuples(r)) {
		rc = S0_ENOTFOUND;
	} else {
		size_t n = (size_t)PQgetlength(r, 0, 0);
		if (!(*blob = malloc(n ? n : 1)))
			rc = s0__error_nomem(err);
		else if (n)
			memcpy(*blob, PQgetvalue(r, 0, 0), n);
		*len = *blob ? n : 0;
	}
	PQclear(r);
	return rc;
}

int s0__mpg_sessions_put(s0__meta *m, const char *sandbox_id, const void *blob, size_t len,
                         s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, sandbox_id);
	s0__mpg_p_bin(&p, blob, len);
	return s0__mpg_run(m, Q_SES_PUT, &p, false, NULL, err);
}

int s0__mpg_sessions_delete(s0__meta *m, const char *sandbox_id, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, sandbox_id);
	return s0__mpg_run(m, Q_SES_DEL, &p, false, NULL, err);
}

int s0__mpg_fork_key_get(s0__meta *m, const char *sandbox_id, const char *key, char **child,
                         char **error_json, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, sandbox_id);
	s0__mpg_p_text(&p, key);
	PGresult *r = NULL;
	*child = *error_json = NULL;
	int rc = s0__mpg_run(m, Q_FK_GET, &p, false, &r, err);
	if (rc < 0)
		return rc;
	if (!PQntuples(r)) {
		rc = S0_ENOTFOUND;
	} else {
		if (!PQgetisnull(r, 0, 0))
			*child = s0__strdup(PQgetvalue(r, 0, 0));
		if (!PQgetisnull(r, 0, 1))
			*error_json = s0__strdup(PQgetvalue(r, 0, 1));
	}
	PQclear(r);
	return rc;
}

int s0__mpg_fork_key_put(s0__meta *m, const char *sandbox_id, const char *key,
                         const char *child, const char *error_json, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, sandbox_id);
	s0__mpg_p_text(&p, key);
	s0__mpg_p_text(&p, child);
	s0__mpg_p_text(&p, error_json);
	return s0__mpg_run(m, Q_FK_PUT, &p, false, NULL, err);
}
