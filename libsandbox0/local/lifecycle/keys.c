/* API keys of teams over the metadata store (keys.h). */
#include "local/lifecycle/keys.h"

#include <sodium.h>
#include <string.h>

#include "local/lifecycle/engine_internal.h"
#include "local/meta/meta.h"

static bool printable(const char *s, size_t max, bool spaces)
{
	size_t n = s ? strlen(s) : 0;
	if (!n || n > max)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch < (spaces ? 0x20 : 0x21) || ch == 0x7f)
			return false;
	}
	return true;
}

static void new_key(char out[S0__APIKEY_TEXT])
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	memcpy(out, "s0_", 3);
	for (size_t i = 3; i < S0__APIKEY_TEXT - 1; i++)
		out[i] = alphabet[randombytes_uniform(36)];
	out[S0__APIKEY_TEXT - 1] = 0;
}

/* The team row, made when missing (inside the caller's transaction). */
static int ensure_team(s0__engine *e, const char *team, s0_error **err)
{
	s0__team_row t;
	if (s0__meta_team_get(e->meta, team, &t, NULL) == S0_OK)
		return S0_OK;
	memset(&t, 0, sizeof t);
	s0__strlcpy(t.id, team, sizeof t.id);
	s0__strlcpy(t.name, team, sizeof t.name);
	t.created_at_ms = s0__engine_now(e);
	return s0__meta_team_put(e->meta, &t, err);
}

int s0__engine_apikey_create(s0__engine *e, const char *team, const char *name,
                             char key_out[S0__APIKEY_TEXT], s0__apikey_row *row,
                             s0_error **err)
{
	if (!printable(team, S0__ID_MAX - 1, false))
		return s0__error_set(err, S0_EINVAL, "bad_request",
		                     "team must be 1..%d printable ASCII characters without spaces",
		                     S0__ID_MAX - 1);
	if (name && *name && !printable(name, S0__APIKEY_NAME_MAX, true))
		return s0__error_set(err, S0_EINVAL, "bad_request",
		                     "key name must be at most %d bytes without control characters",
		                     S0__APIKEY_NAME_MAX);
	s0__apikey_row k = {0};
	s0__engine_new_id("key_", k.id, sizeof k.id);
	s0__strlcpy(k.name, name && *name ? name : k.id, sizeof k.name);
	s0__strlcpy(k.team_id, team, sizeof k.team_id);
	k.created_at_ms = s0__engine_now(e);
	new_key(key_out);
	int rc = s0__apikey_hash(e->meta, key_out, k.hash, err);
	if (rc == S0_OK && (rc = s0__meta_begin(e->meta, err)) == S0_OK) {
		rc = ensure_team(e, team, err);
		if (rc == S0_OK)
			rc = s0__meta_apikey_create(e->meta, &k, err);
		if (rc == S0_OK)
			rc = s0__meta_commit(e->meta, err);
		else
			s0__meta_rollback(e->meta);
	}
	if (rc < 0) {
		sodium_memzero(key_out, S0__APIKEY_TEXT);
		return rc;
	}
	if (row)
		*row = k;
	return S0_OK;
}

int s0__engine_apikey_list(s0__engine *e, const char *team, s0__apikey_row **out, size_t *n,
                           s0_error **err)
{
	return s0__meta_apikey_list(e->meta, team && *team ? team : NULL, out, n, err);
}

int s0__engine_apikey_revoke(s0__engine *e, const char *id, s0__apikey_row *row,
                             s0_error **err)
{
	s0__apikey_row k;
	if (!id || !*id || s0__meta_apikey_get(e->meta, id, &k, NULL) < 0)
		return s0__error_set(err, S0_ENOTFOUND, "key_not_found", "API key %.100s not found",
		                     id ? id : "");
	int rc = s0__meta_apikey_revoke(e->meta, id, s0__engine_now(e), err);
	if (rc == S0_OK && row)
		rc = s0__meta_apikey_get(e->meta, id, row, err);
	return rc;
}

int s0__engine_apikey_team(s0__engine *e, const char *key, char team_out[S0__ID_MAX],
                           s0_error **err)
{
	char hash[S0__APIKEY_HASH_HEX];
	s0__apikey_row k;
	if (!key || strncmp(key, "s0_", 3))
		return 0;
	int rc = s0__apikey_hash(e->meta, key, hash, err);
	if (rc < 0)
		return rc;
	s0_error *lookup = NULL;
	rc = s0__meta_apikey_get_by_hash(e->meta, hash, &k, &lookup);
	if (rc == S0_ENOTFOUND) {
		s0_error_free(lookup);
		return 0;
	}
	if (rc < 0) {
		if (err)
			*err = lookup;
		else
			s0_error_free(lookup);
		return rc;
	}
	if (k.revoked_at_ms)
		return 0;
	s0__strlcpy(team_out, k.team_id, S0__ID_MAX);
	return 1;
}
