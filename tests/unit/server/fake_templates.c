/* The template calls of the fake engine (lifecycle/templates.h): one public
 * template, `default`; creates answer the row they were given; deletes of
 * anything else answer not found. The real ones are tested in unit-server. */
#include <stdlib.h>
#include <string.h>

#include "fake_engine.h"
#include "local/lifecycle/templates.h"

#define T0 1767225600000LL /* 2026-01-01T00:00:00Z */

static int fill(s0__template_row *out, const char *team, const char *name)
{
	memset(out, 0, sizeof *out);
	s0__strlcpy(out->name, name, sizeof out->name);
	s0__strlcpy(out->team_id, team ? team : "", sizeof out->team_id);
	out->created_at_ms = out->updated_at_ms = T0;
	out->spec_json = s0__strdup("{}");
	return out->spec_json ? S0_OK : S0_ENOMEM;
}

int s0__engine_template_create(s0__engine *e, const char *team, const char *name,
                               const char *spec_json, const char *dir, s0__template_row *out,
                               s0_error **err)
{
	(void)e, (void)spec_json, (void)dir;
	if (!strcmp(name, "default"))
		return s0__error_set(err, S0_ECONFLICT, "template_exists", "template default exists");
	return out ? fill(out, team, name) : S0_OK;
}

int s0__engine_template_create_tar(s0__engine *e, const char *team, const char *name,
                                   const char *spec_json, const void *tar, size_t tar_len,
                                   s0__template_row *out, s0_error **err)
{
	(void)tar;
	if (!tar_len)
		return s0__error_set(err, S0_EINVAL, "bad_template_tar", "template tar: empty");
	return s0__engine_template_create(e, team, name, spec_json, NULL, out, err);
}

int s0__engine_template_get(s0__engine *e, const char *team, const char *name,
                            s0__template_row *out, s0_error **err)
{
	(void)e, (void)team;
	if (strcmp(name, "default"))
		return s0__error_set(err, S0_ENOTFOUND, "not_found", "template not found");
	return fill(out, "", name);
}

int s0__engine_template_list(s0__engine *e, const char *team, s0__template_row **out,
                             size_t *n, s0_error **err)
{
	(void)e, (void)team;
	*out = calloc(1, sizeof **out);
	if (!*out || fill(*out, "", "default") < 0)
		return s0__error_nomem(err);
	*n = 1;
	return S0_OK;
}

int s0__engine_template_delete(s0__engine *e, const char *team, const char *name,
                               s0_error **err)
{
	(void)e, (void)team;
	if (!strcmp(name, "default"))
		return s0__error_set(err, S0_EFORBIDDEN, "forbidden", "template default is public");
	return s0__error_set(err, S0_ENOTFOUND, "not_found", "template not found");
}

/* records.c's, here because records.c also defines what fake_engine.c does. */
void s0__template_row_clear(s0__template_row *t)
{
	if (!t)
		return;
	free(t->ephemeral_mounts_json);
	free(t->spec_json);
	t->ephemeral_mounts_json = t->spec_json = NULL;
}
