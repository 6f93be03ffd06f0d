/*
 * The registration table of metadata implementations: one row per
 * folder under meta/ (the default first). A new implementation adds its
 * folder (with its meson.build, subdir'd from meta/meson.build), its open
 * functions' declarations and its row below.
 */
#include <string.h>

#include "local/meta/meta.h"
#include "local/meta/postgres/mpg.h"
#include "local/meta/sqlite/msql.h"

static const s0__meta_backend backends[] = {
	{"sqlite", s0__msql_open, s0__msql_outbox_open},
	/* location: a postgres:// URL; the webhook outbox stays per node, in the
	 * data directory (delivered by the node that recorded it) */
	{"postgres", s0__mpg_open, s0__msql_outbox_open},
};

const s0__meta_backend *s0__meta_backends(size_t *n)
{
	*n = sizeof backends / sizeof backends[0];
	return backends;
}

/* The row named name (NULL or "" = the default); NULL with err set otherwise. */
static const s0__meta_backend *find(const char *name, s0_error **err)
{
	for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
		if (!name || !*name || !strcmp(name, backends[i].name))
			return &backends[i];
	s0__error_set(err, S0_EINVAL, "unknown_meta_backend",
	              "metadata store: no implementation named \"%s\"", name);
	return NULL;
}

int s0__meta_open_backend(const char *name, const char *location, s0__meta **out,
                          s0_error **err)
{
	if (!location || !out)
		return s0__error_set(err, S0_EINVAL, "bad_request",
		                     "metadata store: a location and out are required");
	const s0__meta_backend *b = find(name, err);
	return b ? b->open(location, out, err) : S0_EINVAL;
}

int s0__meta_open(const char *dir, s0__meta **out, s0_error **err)
{
	return s0__meta_open_backend(NULL, dir, out, err);
}

int s0__outbox_open(const char *backend, const char *location, s0__outbox **out,
                    s0_error **err)
{
	if (!out)
		return s0__error_set(err, S0_EINVAL, "bad_request", "webhook outbox: out is required");
	const s0__meta_backend *b = find(backend, err);
	return b ? b->outbox_open(location, out, err) : S0_EINVAL;
}
