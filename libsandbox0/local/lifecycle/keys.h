/*
 * API keys of teams (docs/security.md "API keys"): make, list, revoke and
 * authenticate, over the metadata store's teams and api_keys tables, so
 * every process sharing the store sees the same keys. A key is shown once,
 * when made; the store keeps only its keyed hash (meta.h s0__apikey_hash).
 *
 * All calls block on the metadata store and are thread-safe.
 */
#ifndef S0_LIFECYCLE_KEYS_H
#define S0_LIFECYCLE_KEYS_H

#include "local/lifecycle/engine.h"
#include "local/meta/records.h"

/* Longest key name accepted (bytes). */
#define S0__APIKEY_NAME_MAX 255
/* The text of a key: "s0_" and 40 random [a-z0-9], NUL. */
#define S0__APIKEY_TEXT 44

/*
 * Make a key of team (created, named after its id, when new) called name
 * (nullable or empty: the key's id). The key text goes to key_out, the
 * stored row to *row (nullable).
 * S0_EINVAL bad_request: team not 1..95 printable ASCII characters without
 * spaces, name over S0__APIKEY_NAME_MAX bytes or with control characters.
 */
int s0__engine_apikey_create(s0__engine *e, const char *team, const char *name,
                             char key_out[S0__APIKEY_TEXT], s0__apikey_row *row,
                             s0_error **err);
/* team's keys (NULL = all), revoked ones included, oldest first; *out malloc'd. */
int s0__engine_apikey_list(s0__engine *e, const char *team, s0__apikey_row **out, size_t *n,
                           s0_error **err);
/* Revoke key id (at the engine's clock); *row (nullable) the revoked row.
 * S0_ENOTFOUND reason key_not_found. Revoking twice keeps the first time. */
int s0__engine_apikey_revoke(s0__engine *e, const char *id, s0__apikey_row *row,
                             s0_error **err);
/*
 * The team of a live key: 1 and team_out filled; 0 when no live key has
 * this text (unknown or revoked); < 0 when the store fails (err set).
 * The lookup is by keyed hash, so its timing tells nothing about keys.
 */
int s0__engine_apikey_team(s0__engine *e, const char *key, char team_out[S0__ID_MAX],
                           s0_error **err);

#endif
