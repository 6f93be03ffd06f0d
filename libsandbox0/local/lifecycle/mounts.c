/*
 * Template ephemeral mounts (docs/decisions.md "Names"; docs/wire.md §6.8; EPH-06):
 * runtime-only tmpfs mounts a template declares. Accepted on input under
 * the canonical `ephemeral_mounts`, the product's `ephemeralMounts`, and
 * the public template field `pod.emptyDirMounts` (`[{mountPath,
 * sizeLimit?}]`). Stored in the template row as a JSON array whose items
 * are a path string or {"path", "size_limit_bytes"}.
 */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/lifecycle/engine_internal.h"

void s0__mounts_free(s0__mounts *m)
{
	s0__strv_free(m->paths, m->n);
	free(m->limits);
	memset(m, 0, sizeof *m);
}

static int push(s0__mounts *m, const char *path, uint64_t limit)
{
	char **p = realloc(m->paths, (m->n + 1) * sizeof *p);
	if (!p)
		return -1;
	m->paths = p;
	uint64_t *l = realloc(m->limits, (m->n + 1) * sizeof *l);
	if (!l)
		return -1;
	m->limits = l;
	if (!(m->paths[m->n] = s0__strdup(path)))
		return -1;
	m->limits[m->n++] = limit;
	return 0;
}

/* One item: a path string, or an object with mountPath/path and sizeLimit. */
static int item(s0__mounts *m, const cJSON *it, s0_error **err)
{
	const char *path = cJSON_IsString(it) ? it->valuestring : NULL;
	uint64_t limit = 0;
	if (cJSON_IsObject(it)) {
		path = s0__json_str(it, "mountPath");
		if (!path)
			path = s0__json_str(it, "path");
		const cJSON *sl = cJSON_GetObjectItemCaseSensitive(it, "sizeLimit");
		const cJSON *sb = cJSON_GetObjectItemCaseSensitive(it, "size_limit_bytes");
		if (cJSON_IsString(sl)) {
			int64_t b = s0__parse_memory(sl->valuestring);
			if (b <= 0)
				return s0__error_set(err, S0_EINVAL, "bad_request",
				                     "invalid ephemeral mount sizeLimit \"%s\"",
				                     sl->valuestring);
			limit = (uint64_t)b;
		} else if (cJSON_IsNumber(sb) && sb->valuedouble > 0) {
			limit = (uint64_t)sb->valuedouble;
		} else if (sl && !cJSON_IsNull(sl)) {
			return s0__error_set(err, S0_EINVAL, "bad_request",
			                     "ephemeral mount sizeLimit must be a quantity string");
		}
	}
	if (!path || path[0] != '/' || !strcmp(path, "/"))
		return s0__error_set(err, S0_EINVAL, "bad_request",
		                     "an ephemeral mount needs an absolute mountPath other than /");
	return push(m, path, limit) < 0 ? s0__error_nomem(err) : S0_OK;
}

static int list(s0__mounts *m, const cJSON *arr, s0_error **err)
{
	if (!arr || cJSON_IsNull(arr))
		return S0_OK;
	if (!cJSON_IsArray(arr))
		return s0__error_set(err, S0_EINVAL, "bad_request", "ephemeral mounts must be an array");
	const cJSON *it;
	cJSON_ArrayForEach(it, arr)
	{
		int rc = item(m, it, err);
		if (rc < 0)
			return rc;
	}
	return S0_OK;
}

int s0__mounts_from_spec(const cJSON *spec, s0__mounts *out, s0_error **err)
{
	memset(out, 0, sizeof *out);
	if (spec && !cJSON_IsObject(spec))
		return s0__error_set(err, S0_EINVAL, "bad_request", "template spec must be an object");
	const cJSON *pod = cJSON_GetObjectItemCaseSensitive(spec, "pod");
	const cJSON *src[] = {cJSON_GetObjectItemCaseSensitive(spec, "ephemeral_mounts"),
	                      cJSON_GetObjectItemCaseSensitive(spec, "ephemeralMounts"),
	                      cJSON_GetObjectItemCaseSensitive(spec, "emptyDirMounts"),
	                      cJSON_IsObject(pod) ? cJSON_GetObjectItemCaseSensitive(pod,
	                                                                             "emptyDirMounts")
	                                          : NULL};
	int rc = S0_OK;
	for (size_t i = 0; rc == S0_OK && i < sizeof src / sizeof src[0]; i++)
		rc = list(out, src[i], err);
	if (rc < 0)
		s0__mounts_free(out);
	return rc;
}

int s0__mounts_from_json(const char *json, s0__mounts *out, s0_error **err)
{
	memset(out, 0, sizeof *out);
	if (!json || !*json)
		return S0_OK;
	cJSON *arr = cJSON_Parse(json);
	int rc = arr ? list(out, arr, NULL) : S0_ECORRUPT;
	cJSON_Delete(arr);
	if (rc == S0_OK)
		return S0_OK;
	s0__mounts_free(out);
	if (rc == S0_ENOMEM)
		return s0__error_nomem(err);
	return s0__error_set(err, S0_ECORRUPT, "corrupt",
	                     "stored ephemeral mounts are damaged (not a list of mounts)");
}

char *s0__mounts_to_json(const s0__mounts *m)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; arr && i < m->n; i++) {
		cJSON *it;
		if (m->limits[i]) {
			it = cJSON_CreateObject();
			if (it) {
				cJSON_AddStringToObject(it, "path", m->paths[i]);
				cJSON_AddNumberToObject(it, "size_limit_bytes", (double)m->limits[i]);
			}
		} else {
			it = cJSON_CreateString(m->paths[i]);
		}
		if (!it) {
			cJSON_Delete(arr);
			return NULL;
		}
		cJSON_AddItemToArray(arr, it);
	}
	char *s = arr ? cJSON_PrintUnformatted(arr) : NULL;
	cJSON_Delete(arr);
	return s;
}
