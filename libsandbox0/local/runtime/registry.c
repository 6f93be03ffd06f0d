/*
 * The runtime drivers (runtime.h): one row per driver. A new runtime adds
 * its folder and one row here.
 */
#include <string.h>

#include "common/buf.h"
#include "local/runtime/runtime.h"
#include "local/runtime/gvisor/gvisor.h"
#include "local/runtime/sim/sim.h"

static const s0__rt_driver *const drivers[] = {
	&s0__rt_sim_driver,
	&s0__rt_gvisor_driver,
};

const char *const s0__rt_cap_names[] = {
	"memory", "virtual_time", "network", "contexts", "sessions", "real_processes", "kernel_fs",
	NULL,
};

const s0__rt_driver *const *s0__rt_drivers(size_t *n_out)
{
	*n_out = sizeof drivers / sizeof drivers[0];
	return drivers;
}

void s0__rt_driver_auto(const s0__rt_driver **out, char *why, size_t why_len)
{
	size_t n = sizeof drivers / sizeof drivers[0];
	s0__buf b = {0};
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(drivers[i]->name, "sim"))
			continue;
		s0_error *e = NULL;
		if (drivers[i]->probe(&e) == S0_OK) {
			*out = drivers[i];
			if (why && why_len)
				why[0] = 0;
			s0__buf_free(&b);
			return;
		}
		s0__buf_printf(&b, "%s%s: %s", b.len ? "; " : "", drivers[i]->name,
		               e ? s0_error_message(e) : "unavailable");
		s0_error_free(e);
	}
	*out = drivers[0]; /* sim: runs wherever the library runs */
	if (why && why_len)
		s0__strlcpy(why, b.data ? b.data : "", why_len);
	s0__buf_free(&b);
}

int s0__rt_driver_find(const char *name, const s0__rt_driver **out, s0_error **err)
{
	if (!name || !*name)
		name = "sim";
	if (!strcmp(name, "auto")) {
		s0__rt_driver_auto(out, NULL, 0);
		return S0_OK;
	}
	size_t n = sizeof drivers / sizeof drivers[0];
	for (size_t i = 0; i < n; i++)
		if (!strcmp(drivers[i]->name, name)) {
			*out = drivers[i];
			return S0_OK;
		}
	s0__buf known = {0};
	for (size_t i = 0; i < n; i++)
		s0__buf_printf(&known, "%s%s", i ? ", " : "", drivers[i]->name);
	int rc = s0__error_set(err, S0_EINVAL, "invalid_request",
	                       "unknown runtime \"%s\" (known: %s)", name,
	                       known.data ? known.data : "");
	s0__buf_free(&known);
	return rc;
}

cJSON *s0__rt_caps_json(uint32_t caps)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; a && s0__rt_cap_names[i]; i++)
		if (caps & (1u << i))
			cJSON_AddItemToArray(a, cJSON_CreateString(s0__rt_cap_names[i]));
	return a;
}
