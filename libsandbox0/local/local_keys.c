/* The public API key calls of an s0_local (sandbox0/keys.h): the engine's
 * keys (lifecycle/keys.h) as JSON text. */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/lifecycle/keys.h"
#include "local/local_internal.h"
#include "sandbox0/keys.h"

/* A listed key (no secret). */
static cJSON *render_key(const s0__apikey_row *k)
{
	cJSON *o = cJSON_CreateObject();
	int rc = o ? 0 : -1;
	rc |= s0__json_add_str(o, "id", k->id);
	rc |= s0__json_add_str(o, "name", k->name);
	rc |= s0__json_add_str(o, "team_id", k->team_id);
	rc |= s0__json_add_time(o, "created_at", k->created_at_ms, false);
	rc |= s0__json_add_bool(o, "is_active", !k->revoked_at_ms);
	rc |= s0__json_add_time(o, "revoked_at", k->revoked_at_ms, false);
	if (rc) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* Print o into *out (NULL out: just free); takes o. */
static int print_out(cJSON *o, char **out, s0_error **err)
{
	char *text = o && out ? cJSON_PrintUnformatted(o) : NULL;
	bool ok = o && (!out || text);
	cJSON_Delete(o);
	if (!ok)
		return s0__error_nomem(err);
	if (out)
		*out = text;
	return S0_OK;
}

int s0_local_api_key_create(s0_local *local, const char *team_id, const char *name,
                            char **json_out, s0_error **err)
{
	if (!local || !json_out)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "local and json_out are required");
	char key[S0__APIKEY_TEXT];
	s0__apikey_row k;
	int rc = s0__engine_apikey_create(local->engine, team_id, name, key, &k, err);
	if (rc < 0)
		return rc;
	cJSON *o = cJSON_CreateObject();
	int bad = o ? 0 : -1;
	bad |= s0__json_add_str(o, "id", k.id);
	bad |= s0__json_add_str(o, "name", k.name);
	bad |= s0__json_add_str(o, "team_id", k.team_id);
	bad |= s0__json_add_str(o, "key", key);
	bad |= s0__json_add_time(o, "created_at", k.created_at_ms, false);
	sodium_memzero(key, sizeof key);
	if (bad) {
		cJSON_Delete(o);
		return s0__error_nomem(err);
	}
	return print_out(o, json_out, err);
}

int s0_local_api_key_list(s0_local *local, const char *team_id, char **json_out, s0_error **err)
{
	if (!local || !json_out)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "local and json_out are required");
	s0__apikey_row *v = NULL;
	size_t n = 0;
	int rc = s0__engine_apikey_list(local->engine, team_id, &v, &n, err);
	if (rc < 0)
		return rc;
	cJSON *o = cJSON_CreateObject();
	cJSON *arr = o ? cJSON_AddArrayToObject(o, "api_keys") : NULL;
	bool ok = arr && !s0__json_add_i64(o, "count", (int64_t)n);
	for (size_t i = 0; ok && i < n; i++) {
		cJSON *k = render_key(&v[i]);
		ok = k != NULL;
		if (k)
			cJSON_AddItemToArray(arr, k);
	}
	free(v);
	if (!ok) {
		cJSON_Delete(o);
		return s0__error_nomem(err);
	}
	return print_out(o, json_out, err);
}

int s0_local_api_key_revoke(s0_local *local, const char *key_id, char **json_out,
                            s0_error **err)
{
	if (!local)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "local is required");
	s0__apikey_row k;
	int rc = s0__engine_apikey_revoke(local->engine, key_id, &k, err);
	if (rc < 0 || !json_out)
		return rc;
	cJSON *o = render_key(&k);
	return o ? print_out(o, json_out, err) : s0__error_nomem(err);
}
