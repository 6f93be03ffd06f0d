/*
 * The sandbox's network policy on its runtime (RTX-04): compiled from the durable config and
 * applied through the runtime driver to a new generation before the readiness
 * proof, and re-applied to the running generation when the config changes.
 */
#include <stdlib.h>
#include <string.h>

#include "local/lifecycle/engine_internal.h"
#include "local/runtime/netpolicy.h"

int s0__engine_apply_network(s0__engine *e, const char *config_json, s0__runtime *rt,
                             s0_error **err)
{
	if (s0__fault_hit(e->faults, "network_policy", NULL) != S0__FAULT_NONE)
		return s0__error_set(err, S0_EUNAVAILABLE, "network_policy",
		                     "the sandbox network policy could not be applied");
	cJSON *cfg = cJSON_Parse(config_json && *config_json ? config_json : "{}");
	s0__netpolicy *p = NULL;
	s0_error *cause = NULL;
	int rc = s0__netpolicy_compile(cJSON_GetObjectItemCaseSensitive(cfg, "network"), &p, &cause);
	cJSON_Delete(cfg);
	if (rc < 0) { /* validated at claim and update: a damaged record */
		s0_error *w = s0__error_make(S0_EUNAVAILABLE, "network_policy",
		                             "the sandbox network policy could not be applied");
		s0__error_set_cause(w, cause);
		return s0__error_put(err, w);
	}
	return rt->drv->network_apply(rt->gen, p, err);
}

void s0__engine_reapply_network(s0__engine *e, const s0__sandbox_row *row)
{
	if (row->rec.status != S0_STATUS_RUNNING || row->rec.paused)
		return;
	pthread_mutex_lock(&e->mu);
	s0__runtime *rt = s0__node_find(&e->node, row->rec.runtime_id);
	bool usable = rt && rt->ready && !rt->halted && !rt->fenced && rt->gen;
	if (usable)
		rt->pins++; /* keeps the generation until we are done */
	pthread_mutex_unlock(&e->mu);
	if (!usable)
		return; /* the next generation applies the stored policy */
	s0_error *err = NULL;
	if (s0__engine_apply_network(e, row->rec.config_json, rt, &err) < 0)
		s0_error_free(err); /* the old policy stays; a fault is a test's choice */
	pthread_mutex_lock(&e->mu);
	rt->pins--;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
}
