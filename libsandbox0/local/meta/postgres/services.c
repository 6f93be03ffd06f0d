/* The public services of each sandbox and the public ids that route to it
 * (meta.h "public services"), in PostgreSQL; semantics as sqlite/services.c.
 * put runs inside the caller's transaction. */
#include <stdlib.h>
#include <string.h>

#include "local/meta/postgres/mpg.h"

int s0__mpg_services_get(s0__meta *m, const char *sandbox_id, char **json, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, sandbox_id);
	PGresult *r = NULL;
	*json = NULL;
	int rc = s0__mpg_run(m, Q_SVC_GET, &p, false, &r, err);
	if (rc < 0)
		return rc;
	if (!PQntuples(r))
		rc = S0_ENOTFOUND;
	else if (!(*json = s0__mpg_dup(r, 0, 0)))
		rc = s0__error_nomem(err);
	PQclear(r);
	return rc;
}

int s0__mpg_services_put(s0__meta *m, const char *sandbox_id, const char *json,
                         const char *const *public_ids, size_t n, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, sandbox_id);
	int rc = s0__mpg_run(m, Q_SVC_DEL, &p, false, NULL, err);
	if (rc == S0_OK)
		rc = s0__mpg_run(m, Q_RT_DEL, &p, false, NULL, err);
	if (rc == S0_OK && json) {
		mpg_params q = {0};
		s0__mpg_p_text(&q, sandbox_id);
		s0__mpg_p_text(&q, json);
		rc = s0__mpg_run(m, Q_SVC_PUT, &q, false, NULL, err);
	}
	for (size_t i = 0; rc == S0_OK && i < n; i++) {
		mpg_params q = {0};
		s0__mpg_p_text(&q, public_ids[i]);
		s0__mpg_p_text(&q, sandbox_id);
		rc = s0__mpg_run(m, Q_RT_PUT, &q, false, NULL, err);
	}
	return rc;
}

int s0__mpg_route_find(s0__meta *m, const char *public_id, char *sandbox_id, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, public_id);
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_RT_FIND, &p, false, &r, err);
	if (rc < 0)
		return rc;
	if (!PQntuples(r))
		rc = S0_ENOTFOUND;
	else
		s0__mpg_text(r, 0, 0, sandbox_id, S0__ID_MAX);
	PQclear(r);
	return rc;
}
