/*
 * Templates of teams (docs/local-backend.md "Templates"): create from a
 * spec and a source tree, get, list and delete, each seen by one team.
 * A team sees its own templates and the public ones (team_id "": the
 * `default` template and those built with s0_local_template_build()).
 * Names are one namespace per backend: a name taken by any template,
 * whoever owns it, cannot be created again (409, without saying whose).
 *
 * All calls block on the stores (create runs mke2fs) and are thread-safe.
 */
#ifndef S0_LIFECYCLE_TEMPLATES_H
#define S0_LIFECYCLE_TEMPLATES_H

#include "local/lifecycle/engine.h"
#include "local/meta/records.h"

/* Most bytes of file content and entries of a template tar (tarin.h). */
#define S0__TEMPLATE_TAR_MAX_BYTES ((uint64_t)1 << 30)
#define S0__TEMPLATE_TAR_MAX_ENTRIES 200000u

/*
 * Create template name for team from spec_json (an object, nullable; its
 * ephemeral mounts are used: `pod.emptyDirMounts` and the other accepted
 * spellings) and the tree at dir (nullable: the standard empty tree).
 * *out (nullable) receives the stored row (clear it).
 * S0_EINVAL bad_request: bad name or spec; S0_ECONFLICT reason
 * template_exists: the name is taken; S0_EIO: mke2fs or the stores.
 */
int s0__engine_template_create(s0__engine *e, const char *team, const char *name,
                               const char *spec_json, const char *dir, s0__template_row *out,
                               s0_error **err);
/*
 * Create from a tar archive in memory (tarin.h): extracted into a
 * temporary directory of the data directory, built, removed. Errors as
 * s0__engine_template_create and s0__tar_extract.
 */
int s0__engine_template_create_tar(s0__engine *e, const char *team, const char *name,
                                   const char *spec_json, const void *tar, size_t tar_len,
                                   s0__template_row *out, s0_error **err);
/* The template if public or team's; S0_ENOTFOUND not_found otherwise. */
int s0__engine_template_get(s0__engine *e, const char *team, const char *name,
                            s0__template_row *out, s0_error **err);
/* The public templates and team's (meta.h s0__meta_template_list). */
int s0__engine_template_list(s0__engine *e, const char *team, s0__template_row **out,
                             size_t *n, s0_error **err);
/*
 * Delete team's template name. S0_ENOTFOUND: absent or another team's;
 * S0_EFORBIDDEN: a public template; S0_ECONFLICT reason template_in_use:
 * sandboxes claimed from it still exist (their count in the message).
 * Its blocks are freed by the next garbage collection.
 */
int s0__engine_template_delete(s0__engine *e, const char *team, const char *name,
                               s0_error **err);

#endif
