/* The services calls of the fake engine (lifecycle/services.h): no sandbox
 * has services; a put answers what it was given. The real ones are tested
 * in unit-routes. */
#include "fake_engine.h"
#include "local/lifecycle/services.h"

int s0__engine_services_get(s0__engine *e, const char *team, const char *id, cJSON **out,
                            s0_error **err)
{
	(void)e, (void)team, (void)id;
	*out = cJSON_CreateArray();
	return *out ? S0_OK : s0__error_nomem(err);
}

int s0__engine_services_put(s0__engine *e, const char *team, const char *id,
                            const cJSON *services, cJSON **out, s0_error **err)
{
	(void)e, (void)team, (void)id;
	*out = cJSON_Duplicate(services, 1);
	return *out ? S0_OK : s0__error_nomem(err);
}

int s0__services_validate(const cJSON *services, bool auto_resume, s0_error **err)
{
	(void)services, (void)auto_resume, (void)err;
	return S0_OK;
}

const char *s0__engine_routeless_runtime(s0__engine *e)
{
	(void)e;
	return NULL; /* the fake's sandboxes answer on any port */
}
