/* Templates of teams: create, get, list, delete (templates.h). */
#include "local/lifecycle/templates.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "local/lifecycle/engine_internal.h"
#include "local/lifecycle/storage.h"
#include "local/rootfs/tarin.h"

/* Lowercase, 1..255 bytes, printable, no '/' (docs/wire.md claim rules); not
 * "." or "..", which every URL client folds away from /api/v1/templates/{id}. */
static int check_name(const char *name, s0_error **err)
{
	size_t n = name ? strlen(name) : 0;
	bool ok = n > 0 && n < 256 && strcmp(name, ".") && strcmp(name, "..");
	for (size_t i = 0; ok && i < n; i++)
		ok = name[i] > 0x20 && name[i] < 0x7f && name[i] != '/' &&
		     !(name[i] >= 'A' && name[i] <= 'Z');
	if (!ok)
		return s0__error_set(err, S0_EINVAL, "bad_request",
		                     "template_id must be 1..255 lowercase printable characters "
		                     "without '/' or spaces, not \".\" or \"..\"");
	return S0_OK;
}

static int taken(s0_error **err, const char *name)
{
	return s0__error_set(err, S0_ECONFLICT, "template_exists", "template %s already exists",
	                     name);
}

/* The spec as stored: the given object re-printed, or "{}". */
static int spec_text(const char *spec_json, char **out, s0__mounts *m, s0_error **err)
{
	cJSON *spec = spec_json ? cJSON_Parse(spec_json) : NULL;
	if (spec_json && !cJSON_IsObject(spec)) {
		cJSON_Delete(spec);
		return s0__error_set(err, S0_EINVAL, "bad_request", "template spec must be an object");
	}
	int rc = s0__mounts_from_spec(spec, m, err);
	if (rc == S0_OK && !(*out = spec ? cJSON_PrintUnformatted(spec) : s0__strdup("{}")))
		rc = s0__error_nomem(err);
	if (rc < 0)
		s0__mounts_free(m);
	cJSON_Delete(spec);
	return rc;
}

int s0__engine_template_create(s0__engine *e, const char *team, const char *name,
                               const char *spec_json, const char *dir, s0__template_row *out,
                               s0_error **err)
{
	if (!team || !*team)
		return s0__error_set(err, S0_EINVAL, "bad_request", "a team is required");
	int rc = check_name(name, err);
	s0__template_row t = {0}, old;
	if (rc == S0_OK && s0__meta_template_get(e->meta, name, &old, NULL) == S0_OK) {
		s0__template_row_clear(&old);
		return taken(err, name);
	}
	s0__mounts m = {0};
	if (rc == S0_OK)
		rc = spec_text(spec_json, &t.spec_json, &m, err);
	if (rc < 0)
		return rc;
	s0__strlcpy(t.name, name, sizeof t.name);
	s0__strlcpy(t.team_id, team, sizeof t.team_id);
	t.volume_bytes = (int64_t)e->opt.rootfs_size_bytes;
	t.created_at_ms = t.updated_at_ms = s0__engine_now(e);
	s0__engine_new_id("img_", t.image, sizeof t.image);
	t.ephemeral_mounts_json = s0__mounts_to_json(&m);
	rc = t.ephemeral_mounts_json ? S0_OK : s0__error_nomem(err);
	if (rc == S0_OK)
		rc = s0__storage_template(e->storage, dir, (uint64_t)t.volume_bytes,
		                          (const char *const *)m.paths, m.n, t.generation, err);
	s0__mounts_free(&m);
	bool built = rc == S0_OK;
	/* the check again, with the put, in one transaction: two creates of one
	 * name race through the build, one commits */
	if (rc == S0_OK && (rc = s0__meta_begin(e->meta, err)) == S0_OK) {
		if (s0__meta_template_get(e->meta, name, &old, NULL) == S0_OK) {
			s0__template_row_clear(&old);
			rc = taken(err, name);
		} else {
			rc = s0__meta_template_put(e->meta, &t, err);
		}
		if (rc == S0_OK)
			rc = s0__meta_commit(e->meta, err);
		else
			s0__meta_rollback(e->meta);
	}
	if (built) /* committed: a root now; lost: garbage for the next collection */
		s0__storage_unpin(e->storage, t.generation);
	if (rc == S0_OK && out) {
		*out = t;
		return S0_OK;
	}
	s0__template_row_clear(&t);
	return rc;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	(void)remove(path); /* best effort: keep going */
	return 0;
}

int s0__engine_template_create_tar(s0__engine *e, const char *team, const char *name,
                                   const char *spec_json, const void *tar, size_t tar_len,
                                   s0__template_row *out, s0_error **err)
{
	int rc = check_name(name, err);
	if (rc < 0)
		return rc;
	char *base = s0__asprintf("%s/tmp", e->dir);
	char *dir = base ? s0__asprintf("%s/template-XXXXXX", base) : NULL;
	if (!dir) {
		free(base);
		return s0__error_nomem(err);
	}
	if ((mkdir(base, 0700) < 0 && errno != EEXIST) || !mkdtemp(dir))
		rc = s0__error_set(err, S0_EIO, "io_error", "template: cannot make a directory in %s: %s",
		                   base, strerror(errno));
	else {
		rc = s0__tar_extract(tar, tar_len, dir, S0__TEMPLATE_TAR_MAX_BYTES,
		                     S0__TEMPLATE_TAR_MAX_ENTRIES, err);
		if (rc == S0_OK)
			rc = s0__engine_template_create(e, team, name, spec_json, dir, out, err);
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	}
	free(dir);
	free(base);
	return rc;
}

int s0__engine_template_get(s0__engine *e, const char *team, const char *name,
                            s0__template_row *out, s0_error **err)
{
	int rc = name && *name ? s0__meta_template_get(e->meta, name, out, NULL) : S0_ENOTFOUND;
	if (rc == S0_OK && out->team_id[0] && (!team || strcmp(out->team_id, team))) {
		s0__template_row_clear(out);
		rc = S0_ENOTFOUND;
	}
	if (rc == S0_ENOTFOUND)
		return s0__error_set(err, S0_ENOTFOUND, "not_found", "template not found");
	return rc < 0 ? s0__error_set(err, rc, NULL, "template %s could not be read", name) : rc;
}

int s0__engine_template_list(s0__engine *e, const char *team, s0__template_row **out,
                             size_t *n, s0_error **err)
{
	return s0__meta_template_list(e->meta, team ? team : "", out, n, err);
}

int s0__engine_template_delete(s0__engine *e, const char *team, const char *name,
                               s0_error **err)
{
	s0__template_row t;
	int rc = s0__engine_template_get(e, team, name, &t, err);
	if (rc < 0)
		return rc;
	bool public = !t.team_id[0];
	s0__template_row_clear(&t);
	if (public)
		return s0__error_set(err, S0_EFORBIDDEN, "forbidden",
		                     "template %s is public and cannot be deleted through the API",
		                     name);
	if ((rc = s0__meta_begin(e->meta, err)) < 0)
		return rc;
	int64_t users = 0;
	rc = s0__meta_template_users(e->meta, name, &users, err);
	if (rc == S0_OK && users > 0)
		rc = s0__error_set(err, S0_ECONFLICT, "template_in_use",
		                   "template %s is used by %lld sandbox(es); delete them first", name,
		                   (long long)users);
	if (rc == S0_OK)
		rc = s0__meta_template_delete(e->meta, name, err);
	if (rc == S0_OK)
		return s0__meta_commit(e->meta, err);
	s0__meta_rollback(e->meta);
	return rc;
}
