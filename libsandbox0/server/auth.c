/*
 * API keys: each `s0_…` key is kept only as a BLAKE2b digest keyed with a
 * per-server random key, and a presented token is compared against every
 * entry with sodium_memcmp (no early exit), so neither the keys nor the
 * timing of a lookup reveal them.
 */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/server_internal.h"

#define DIGEST crypto_generichash_BYTES
#define TEAM_MAX S0__SERVER_TEAM_MAX

typedef struct entry {
	unsigned char digest[DIGEST];
	char team[TEAM_MAX];
} entry;

struct s0__keyring {
	unsigned char key[crypto_generichash_KEYBYTES];
	entry *items;
	size_t n;
	char anonymous[TEAM_MAX];
	unsigned char admin[DIGEST]; /* the admin credential's digest */
	bool has_admin;
};

static bool printable(const char *s, size_t min, size_t max)
{
	size_t n = s ? strlen(s) : 0;
	if (n < min || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
			return false;
	return true;
}

static void digest_of(const s0__keyring *k, const char *token, unsigned char out[DIGEST])
{
	crypto_generichash(out, DIGEST, (const unsigned char *)token, strlen(token), k->key,
	                   sizeof k->key);
}

static int add_key(s0__keyring *k, const s0_server_api_key *key, s0_error **err)
{
	if (!key->key || strncmp(key->key, "s0_", 3) || !printable(key->key, 11, 253))
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "API key %zu must be \"s0_\" followed by 8..250 printable "
		                     "characters",
		                     k->n);
	if (!printable(key->team_id, 1, TEAM_MAX - 1))
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "API key %zu needs a team id of 1..95 printable characters", k->n);
	entry *e = &k->items[k->n];
	digest_of(k, key->key, e->digest);
	for (size_t i = 0; i < k->n; i++)
		if (!sodium_memcmp(k->items[i].digest, e->digest, DIGEST))
			return s0__error_set(err, S0_EINVAL, "invalid_argument",
			                     "API key %zu is given twice", k->n);
	s0__strlcpy(e->team, key->team_id, sizeof e->team);
	k->n++;
	return S0_OK;
}

int s0__keyring_new(const s0_server_api_key *keys, size_t n, const char *anonymous_team,
                    s0__keyring **out, s0_error **err)
{
	if (anonymous_team && !printable(anonymous_team, 1, TEAM_MAX - 1))
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "anonymous_team_id must be 1..95 printable characters");
	if (n && !keys)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "api_keys is NULL");
	if (s0__global_ensure() < 0)
		return s0__error_set(err, S0_ERROR, NULL, "libsodium could not be initialised");
	s0__keyring *k = sodium_malloc(sizeof *k);
	if (!k)
		return s0__error_nomem(err);
	memset(k, 0, sizeof *k);
	k->items = n ? sodium_allocarray(n, sizeof *k->items) : NULL;
	if (n && !k->items) {
		sodium_free(k);
		return s0__error_nomem(err);
	}
	randombytes_buf(k->key, sizeof k->key);
	s0__strlcpy(k->anonymous, anonymous_team ? anonymous_team : "", sizeof k->anonymous);
	for (size_t i = 0; i < n; i++) {
		int rc = add_key(k, &keys[i], err);
		if (rc < 0) {
			s0__keyring_free(k);
			return rc;
		}
	}
	*out = k;
	return S0_OK;
}

void s0__keyring_free(s0__keyring *k)
{
	if (!k)
		return;
	if (k->items)
		sodium_free(k->items);
	sodium_free(k);
}

/* Constant-time over the whole ring: every entry is compared. */
static const char *lookup(const s0__keyring *k, const char *token)
{
	unsigned char d[DIGEST];
	digest_of(k, token, d);
	const char *team = NULL;
	for (size_t i = 0; i < k->n; i++) {
		bool eq = sodium_memcmp(k->items[i].digest, d, DIGEST) == 0;
		team = eq ? k->items[i].team : team;
	}
	sodium_memzero(d, sizeof d);
	return team;
}

/* "Bearer <token>": scheme case-insensitive, token after the first space. */
static const char *bearer_token(const char *authorization)
{
	const char *sp = strchr(authorization, ' ');
	if (!sp || sp - authorization != 6 || strncasecmp(authorization, "Bearer", 6))
		return NULL;
	while (*sp == ' ')
		sp++;
	return *sp ? sp : NULL;
}

static const char *check_selector(const char *team, const char *selector, const char **message)
{
	if (selector && *selector && strcmp(selector, team)) {
		*message = "not a member of selected team";
		return NULL;
	}
	return team;
}

int s0__keyring_set_admin(s0__keyring *k, const char *token, s0_error **err)
{
	if (!printable(token, 8, 250))
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "admin_token must be 8..250 printable characters without spaces");
	digest_of(k, token, k->admin);
	for (size_t i = 0; i < k->n; i++)
		if (!sodium_memcmp(k->items[i].digest, k->admin, DIGEST))
			return s0__error_set(err, S0_EINVAL, "invalid_argument",
			                     "admin_token must not be one of the API keys");
	k->has_admin = true;
	return S0_OK;
}

bool s0__keyring_has_admin(const s0__keyring *k)
{
	return k->has_admin;
}

bool s0__keyring_admin(const s0__keyring *k, const char *authorization)
{
	const char *token = authorization ? bearer_token(authorization) : NULL;
	if (!k->has_admin || !token)
		return false;
	unsigned char d[DIGEST];
	digest_of(k, token, d);
	bool ok = sodium_memcmp(d, k->admin, DIGEST) == 0;
	sodium_memzero(d, sizeof d);
	return ok;
}

const char *s0__keyring_auth(const s0__keyring *k, const char *authorization,
                             const char *team_selector, s0__key_lookup_fn lookup_fn,
                             void *lookup_ctx, char team_buf[S0__SERVER_TEAM_MAX],
                             const char **message)
{
	if (!authorization || !*authorization) {
		if (k->anonymous[0])
			return check_selector(k->anonymous, team_selector, message);
		*message = "missing authorization header";
		return NULL;
	}
	const char *token = bearer_token(authorization);
	if (!token) {
		*message = "invalid authorization header format";
		return NULL;
	}
	const char *team = strncmp(token, "s0_", 3) ? NULL : lookup(k, token);
	if (!team && lookup_fn && !strncmp(token, "s0_", 3)) {
		int found = lookup_fn(lookup_ctx, token, team_buf);
		if (found < 0) {
			*message = "api keys cannot be read now";
			return NULL;
		}
		team = found ? team_buf : NULL;
	}
	if (!team) {
		*message = "invalid token";
		return NULL;
	}
	return check_selector(team, team_selector, message);
}
