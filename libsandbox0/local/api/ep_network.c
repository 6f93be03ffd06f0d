/*
 * The sandbox network policy: GET and PUT /api/v1/sandboxes/{id}/network
 * (Sandbox0's `SandboxNetworkPolicy`, the official SDKs' getNetworkPolicy
 * and updateNetworkPolicy). The policy is `config.network`; a PUT is a
 * config update of that one field, applied to the running generation at
 * once (docs/local-backend.md "Network policy").
 */
#include "local/api/api_internal.h"
#include "local/lifecycle/engine.h"

/* data = config.network of rec, or the template default. */
static void reply_policy(s0__rctx *c, const s0__sandbox_rec *rec)
{
	cJSON *cfg = cJSON_Parse(rec->config_json ? rec->config_json : "{}");
	cJSON *net = cJSON_DetachItemFromObjectCaseSensitive(cfg, "network");
	cJSON_Delete(cfg);
	if (!net || cJSON_IsNull(net)) {
		cJSON_Delete(net);
		net = cJSON_CreateObject();
		if (net && !cJSON_AddStringToObject(net, "mode", "allow-all")) {
			cJSON_Delete(net);
			net = NULL;
		}
	}
	if (!net)
		c->oom = true;
	s0__reply_data(c, 200, net);
}

void s0__ep_network_get(s0__rctx *c)
{
	c->action = "get network policy";
	s0__sandbox_rec rec = {0};
	s0_error *err = NULL;
	if (s0__engine_get(c->e, c->team, c->id, &rec, &err) < 0) {
		s0__reply_error(c, err);
		return;
	}
	reply_policy(c, &rec);
	s0__sandbox_rec_clear(&rec);
}

void s0__ep_network_put(s0__rctx *c)
{
	c->action = "update network policy";
	cJSON *body;
	if (!s0__body_json(c, true, &body))
		return;
	cJSON *cfg = cJSON_CreateObject();
	if (!cfg || !cJSON_AddItemReferenceToObject(cfg, "network", body)) {
		cJSON_Delete(cfg);
		cJSON_Delete(body);
		c->oom = true;
		return;
	}
	s0__sandbox_rec rec = {0};
	s0_error *err = NULL;
	if (s0__engine_update(c->e, c->team, c->id, cfg, &rec, &err) < 0)
		s0__reply_error(c, err);
	else
		reply_policy(c, &rec);
	s0__sandbox_rec_clear(&rec);
	cJSON_Delete(cfg);
	cJSON_Delete(body);
}
