/**
 * @file sandbox0/keys.h
 * @brief API keys of teams, for server operators (docs/security.md "API keys").
 *
 * `s0 serve` authenticates each request with an API key (`Authorization:
 * Bearer s0_…`) that belongs to one team; a team sees only its own
 * sandboxes, snapshots and templates. Keys live in the backend's metadata
 * store, only as keyed hashes: the key text is returned once, when it is
 * made. A running server sees a key made or revoked at once (each request
 * looks its key up in the store).
 *
 * Two ways to manage them: on an ::s0_local the caller opened (the data
 * directory is not held by a server), or through a running server's admin
 * endpoint with s0_client_admin_request() and the server's admin
 * credential (server.h s0_server_options.admin_token), which is never a
 * team key:
 *
 * | request | body / query | answer `data` |
 * | --- | --- | --- |
 * | `POST /admin/v1/api-keys` | `{"team_id","name"?}` | as s0_local_api_key_create() |
 * | `GET /admin/v1/api-keys` | `?team_id=` (optional) | as s0_local_api_key_list() |
 * | `DELETE /admin/v1/api-keys/{id}` | — | as s0_local_api_key_revoke() |
 *
 * @threadsafety every function is safe from any thread.
 */
#ifndef SANDBOX0_KEYS_H
#define SANDBOX0_KEYS_H

#include "sandbox0/client.h"
#include "sandbox0/common.h"

/** @brief An open local backend; see sandbox0/local.h. */
typedef struct s0_local s0_local;

S0_BEGIN_DECLS

/**
 * Make an API key of a team; the team is created (named after its id) when
 * it has no key yet.
 *
 * @param[in] local the backend.
 * @param[in] team_id team: 1..95 printable ASCII characters, no spaces.
 * @param[in] name (nullable) a label of at most 255 bytes without control
 *            characters; NULL or "" = the key's id.
 * @param[out] json_out (transfer full, free with s0_free()) JSON object
 *             `{"id","name","team_id","key","created_at"}`: `key` is the
 *             secret ("s0_" and 40 characters), shown only here.
 * @param[out] err (nullable) error detail.
 * @retval S0_EINVAL reason `bad_request`: bad team or name; nothing stored.
 * @retval S0_EIO the metadata store failed.
 * @note Blocks on the metadata store.
 * @since 0.3
 */
S0_API int s0_local_api_key_create(s0_local *local, const char *team_id, const char *name,
                                   char **json_out, s0_error **err);

/**
 * List API keys without their secrets.
 *
 * @param[in] local the backend.
 * @param[in] team_id (nullable) only this team's; NULL or "" = every team.
 * @param[out] json_out (transfer full, free with s0_free()) JSON object
 *             `{"api_keys":[{"id","name","team_id","created_at",
 *             "is_active","revoked_at"}],"count"}`, oldest first;
 *             `revoked_at` is null for live keys.
 * @param[out] err (nullable) error detail.
 * @retval S0_EIO the metadata store failed.
 * @since 0.3
 */
S0_API int s0_local_api_key_list(s0_local *local, const char *team_id, char **json_out,
                                 s0_error **err);

/**
 * Revoke an API key: requests with it answer 401 from then on, also on a
 * server running on the same backend. Revoking twice keeps the first time.
 *
 * @param[in] local the backend.
 * @param[in] key_id the key's id (`key_…`, as listed).
 * @param[out] json_out (nullable; transfer full, free with s0_free()) the
 *             key as listed, now with `is_active` false.
 * @param[out] err (nullable) error detail.
 * @retval S0_ENOTFOUND reason `key_not_found`: no key has this id.
 * @retval S0_EIO the metadata store failed.
 * @since 0.3
 */
S0_API int s0_local_api_key_revoke(s0_local *local, const char *key_id, char **json_out,
                                   s0_error **err);

/**
 * One request to a server's admin endpoint (`/admin/v1/…`) with the
 * client's token as the admin credential: the table above, and the routes
 * of `s0 serve --enable-admin` (faults, clock, inspect).
 *
 * @param[in] c a client made with s0_client_new() (base URL of the server,
 *            token = the admin credential).
 * @param[in] method "GET", "POST" or "DELETE".
 * @param[in] path starting with "/admin/v1/", query included; segments
 *            already percent-encoded.
 * @param[in] body_json (nullable) a JSON object to send.
 * @param[out] data_json_out (nullable; transfer full, free with s0_free())
 *             the answer's `data` as JSON text ("null" when absent).
 * @param[out] err (nullable) error detail; the server's error envelope as
 *             for every call (401 `unauthorized` for a wrong credential).
 * @retval S0_EINVAL a bad method, path or body_json.
 * @note Blocks for the request (the client's timeout applies).
 * @since 0.3
 */
S0_API int s0_client_admin_request(s0_client *c, const char *method, const char *path,
                                   const char *body_json, char **data_json_out,
                                   s0_error **err);

S0_END_DECLS

#endif
