/*
 * The registration table of metadata implementations: one row per
 * folder under meta/ (the default first). A new implementation adds its
 * folder, its open function's declaration below and its row.
 */
#include <string.h>

#include "local/meta/meta.h"
#include "local/meta/sqlite/msql.h"

static const s0__meta_backend backends[] = {
	{"sqlite", s0__msql_open},
};

const s0__meta_backend *s0__meta_backends(size_t *n)
{
	*n = sizeof backends / sizeof backends[0];
	return backends;
}

int s0__meta_open_backend(const char *name, const char *location, s0__meta **out,
                          s0_error **err)
{
	if (!location || !out)
		return s0__error_set(err, S0_EINVAL, "bad_request",
		                     "metadata store: a location and out are required");
	for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
		if (!name || !*name || !strcmp(name, backends[i].name))
			return backends[i].open(location, out, err);
	return s0__error_set(err, S0_EINVAL, "unknown_meta_backend",
	                     "metadata store: no implementation named \"%s\"", name);
}

int s0__meta_open(const char *dir, s0__meta **out, s0_error **err)
{
	return s0__meta_open_backend(NULL, dir, out, err);
}
