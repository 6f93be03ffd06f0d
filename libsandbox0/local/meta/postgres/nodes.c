/* Node leases and the owner of each sandbox's runtime generation in
 * PostgreSQL (meta.h "nodes and fencing"). Each call is one statement:
 * the claim's conditions are checked by the INSERT … ON CONFLICT itself,
 * under the row lock, so two nodes claiming at once cannot both win. */
#include <string.h>

#include "local/meta/postgres/mpg.h"

/* Run q; 1 when it returned a row (column 0 into *v when v), 0 when not. */
static int one_row(s0__meta *m, mpg_stmt q, const mpg_params *p, int64_t *v, s0_error **err)
{
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, q, p, false, &r, err);
	if (rc < 0)
		return rc;
	int n = PQntuples(r);
	if (n && v)
		*v = s0__mpg_i64(r, 0, 0);
	PQclear(r);
	return n ? 1 : 0;
}

int s0__mpg_node_lease(s0__meta *m, const char *node_id, int64_t now_ms, int64_t ttl_ms,
                       int64_t *epoch, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, node_id);
	s0__mpg_p_i64(&p, now_ms + ttl_ms);
	if (*epoch) {
		s0__mpg_p_i64(&p, *epoch);
		s0__mpg_p_i64(&p, now_ms);
	}
	int64_t got = 0;
	int rc = one_row(m, *epoch ? Q_NODE_RENEW : Q_NODE_ACQUIRE, &p, &got, err);
	if (rc == 0)
		return s0__error_set(err, S0_ECONFLICT, "node_lease_lost",
		                     "node %s: lease epoch %lld expired or superseded", node_id,
		                     (long long)*epoch);
	if (rc > 0)
		*epoch = got;
	return rc < 0 ? rc : S0_OK;
}

int s0__mpg_gen_claim(s0__meta *m, const char *sandbox_id, int64_t generation,
                      const char *node_id, int64_t epoch, int64_t now_ms, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, sandbox_id);
	s0__mpg_p_i64(&p, generation);
	s0__mpg_p_text(&p, node_id);
	s0__mpg_p_i64(&p, epoch);
	s0__mpg_p_i64(&p, now_ms);
	int rc = one_row(m, Q_GEN_CLAIM, &p, NULL, err);
	if (rc != 0)
		return rc < 0 ? rc : S0_OK;
	mpg_params l = {0};
	s0__mpg_p_text(&l, node_id);
	s0__mpg_p_i64(&l, epoch);
	s0__mpg_p_i64(&l, now_ms);
	if ((rc = one_row(m, Q_NODE_LIVE, &l, NULL, err)) < 0)
		return rc;
	return rc ? s0__error_set(err, S0_ECONFLICT, "generation_owned",
	                          "sandbox %s: generation %lld is another node's", sandbox_id,
	                          (long long)generation)
	          : s0__error_set(err, S0_ECONFLICT, "node_lease_lost",
	                          "node %s: lease epoch %lld is not live", node_id, (long long)epoch);
}

int s0__mpg_gen_owner(s0__meta *m, const char *sandbox_id, s0__gen_owner_row *out,
                      s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, sandbox_id);
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_GEN_OWNER, &p, false, &r, err);
	if (rc < 0)
		return rc;
	if (PQntuples(r)) {
		memset(out, 0, sizeof *out);
		s0__mpg_text(r, 0, 0, out->sandbox_id, sizeof out->sandbox_id);
		out->generation = s0__mpg_i64(r, 0, 1);
		s0__mpg_text(r, 0, 2, out->node_id, sizeof out->node_id);
		out->epoch = s0__mpg_i64(r, 0, 3);
		out->lease_until = s0__mpg_i64(r, 0, 4);
	} else {
		rc = s0__error_set(err, S0_ENOTFOUND, "not_found", "no claimed generation");
	}
	PQclear(r);
	return rc;
}

int s0__mpg_gen_release(s0__meta *m, const char *sandbox_id, const char *node_id,
                        s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, sandbox_id);
	s0__mpg_p_text(&p, node_id);
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_GEN_RELEASE, &p, false, &r, err);
	PQclear(r);
	return rc < 0 ? rc : S0_OK;
}

int s0__mpg_gen_orphans(s0__meta *m, int64_t now_ms, char ***ids, size_t *n, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_i64(&p, now_ms);
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_GEN_ORPHANS, &p, false, &r, err);
	return rc < 0 ? rc : s0__mpg_ids(r, ids, n, err);
}

int s0__mpg_gen_check(s0__meta *m, const char *sandbox_id, const char *node_id, int64_t epoch,
                      int64_t generation, s0_error **err)
{
	mpg_params p = {0};
	s0__mpg_p_text(&p, sandbox_id);
	s0__mpg_p_text(&p, node_id);
	PGresult *r = NULL;
	int rc = s0__mpg_run(m, Q_GEN_CHECK, &p, false, &r, err);
	if (rc < 0)
		return rc;
	char owner[S0__ID_MAX] = "";
	bool has = PQntuples(r) && !PQgetisnull(r, 0, 1);
	int64_t cur = PQntuples(r) ? s0__mpg_i64(r, 0, 0) : 0, gen = 0;
	if (has) {
		s0__mpg_text(r, 0, 1, owner, sizeof owner);
		gen = s0__mpg_i64(r, 0, 2);
	}
	PQclear(r);
	return s0__meta_gen_verdict(sandbox_id, node_id, epoch, generation, cur, has, owner, gen,
	                            err);
}
