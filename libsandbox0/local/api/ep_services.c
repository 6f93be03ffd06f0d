/*
 * GET and PUT /api/v1/sandboxes/{id}/services (docs/wire.md "Public
 * routes"): the official SDKs' SandboxAppService in, SandboxAppServiceView
 * out — the stored service without its public id, plus publishable,
 * publish_blockers and public_url (none while the runtime has no public
 * routes: a blocker names it).
 */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/api/api_internal.h"
#include "local/lifecycle/services.h"

/* One view of a stored service (taken). */
static cJSON *view(s0__rctx *c, cJSON *s)
{
	const cJSON *pid = cJSON_GetObjectItemCaseSensitive(s, "public_id");
	char *id = cJSON_IsString(pid) ? strdup(pid->valuestring) : NULL;
	cJSON_DeleteItemFromObjectCaseSensitive(s, "public_id");
	const cJSON *in = cJSON_GetObjectItemCaseSensitive(s, "ingress");
	bool pub = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(in, "public"));
	bool port = cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(s, "port"));
	cJSON *blockers = cJSON_AddArrayToObject(s, "publish_blockers");
	if (!pub)
		cJSON_AddItemToArray(blockers, cJSON_CreateString("ingress is not public"));
	if (!port)
		cJSON_AddItemToArray(blockers, cJSON_CreateString("port is required"));
	const char *routeless = s0__engine_routeless_runtime(c->e);
	char *why = routeless ? s0__asprintf("the %s runtime has no public routes", routeless) : NULL;
	if (why)
		cJSON_AddItemToArray(blockers, cJSON_CreateString(why));
	bool ok = pub && port && !routeless;
	cJSON_AddBoolToObject(s, "publishable", ok);
	char *url = NULL;
	if (ok && id && c->opts->public_domain)
		url = s0__asprintf("http://%s.%s/", id, c->opts->public_domain);
	else if (ok && id)
		url = s0__asprintf("%s/r/%s/", c->opts->public_base ? c->opts->public_base : "", id);
	if (url && s0__json_add_str(s, "public_url", url) < 0)
		c->oom = true;
	if (!blockers || (ok && id && !url) || (routeless && !why))
		c->oom = true;
	free(why);
	free(url);
	free(id);
	return s;
}

static void reply_services(s0__rctx *c, cJSON *all)
{
	cJSON *d = cJSON_CreateObject();
	cJSON *list = d ? cJSON_CreateArray() : NULL;
	cJSON *s;
	while (list && (s = cJSON_DetachItemFromArray(all, 0)))
		cJSON_AddItemToArray(list, view(c, s));
	if (!list || s0__json_add_str(d, "sandbox_id", c->id) < 0 ||
	    !cJSON_AddItemToObject(d, "services", list) ||
	    (c->opts->public_domain &&
	     s0__json_add_str(d, "exposure_domain", c->opts->public_domain) < 0)) {
		cJSON_Delete(d);
		d = NULL;
		c->oom = true;
	}
	cJSON_Delete(all);
	s0__reply_data(c, 200, d);
}

void s0__ep_services_get(s0__rctx *c)
{
	c->action = "list sandbox services";
	cJSON *all = NULL;
	s0_error *err = NULL;
	if (s0__engine_services_get(c->e, c->team, c->id, &all, &err) < 0)
		s0__reply_error(c, err);
	else
		reply_services(c, all);
}

void s0__ep_services_put(s0__rctx *c)
{
	c->action = "replace sandbox services";
	cJSON *body;
	if (!s0__body_json(c, true, &body))
		return;
	const cJSON *services = cJSON_GetObjectItemCaseSensitive(body, "services");
	cJSON *all = NULL;
	s0_error *err = NULL;
	if (!cJSON_IsArray(services))
		s0__reply_err(c, 400, "bad_request", "invalid services request: services must be an array");
	else if (s0__engine_services_put(c->e, c->team, c->id, services, &all, &err) < 0)
		s0__reply_error(c, err);
	else
		reply_services(c, all);
	cJSON_Delete(body);
}
