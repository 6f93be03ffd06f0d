/**
 * @file sandbox0/sandbox.h
 * @brief Sandbox lifecycle endpoints and their result objects (docs/wire.md §3).
 *
 * Every call here is one HTTP exchange (or one router call in process); none
 * retries by itself (docs/wire.md §1.3). Lifecycle waits are in sandbox0/wait.h.
 *
 * Results are immutable snapshots: the caller owns them, frees them with
 * their `_free`, and may read them from any thread. Getters return borrowed
 * pointers valid while the result lives.
 *
 * Every function taking an ::s0_client blocks until the response arrives,
 * the client's request timeout passes, or the client's cancel token fires;
 * all are safe to call from several threads on one client.
 */
#ifndef SANDBOX0_SANDBOX_H
#define SANDBOX0_SANDBOX_H

#include <stdbool.h>
#include "sandbox0/client.h"
#include "sandbox0/common.h"

/**
 * Public lifecycle states, exactly the wire's `SandboxLifecycleStatus`
 * (docs/wire.md §3.11). `paused` is a separate boolean: a memory-pause recovery
 * can read `failed` with paused true (MFB-07).
 */
typedef enum s0_status {
	S0_STATUS_UNKNOWN = 0,     /**< absent or not one of the five */
	S0_STATUS_STARTING = 1,    /**< "starting" */
	S0_STATUS_RUNNING = 2,     /**< "running" */
	S0_STATUS_PAUSED = 3,      /**< "paused" */
	S0_STATUS_TERMINATING = 4, /**< "terminating" */
	S0_STATUS_FAILED = 5       /**< "failed" */
} s0_status;

/** Bit for @p s in a status mask, e.g. S0_STATUS_MASK(S0_STATUS_PAUSED). */
#define S0_STATUS_MASK(s) (1u << (unsigned)(s))

/** Tri-state booleans in options: zero means "not sent / server default". */
#define S0_BOOL_UNSET 0
/** Send true. */
#define S0_BOOL_TRUE 1
/** Send false. */
#define S0_BOOL_FALSE 2

/** @brief A sandbox as one response described it (immutable). */
/* typedef struct s0_sandbox_info s0_sandbox_info;  -- in common.h */

S0_BEGIN_DECLS

/** Wire name of a status ("running"…), or "unknown". @threadsafety safe @since 0.1 */
S0_API const char *s0_status_name(int status);
/** Status for a wire name; S0_STATUS_UNKNOWN when not one of the five. @since 0.1 */
S0_API int s0_status_from_name(const char *name);

/** Sandbox id (`id` or `sandbox_id`); never NULL (may be ""). @since 0.1 */
S0_API const char *s0_sandbox_info_id(const s0_sandbox_info *info);
/** Template id (`template_id` or claim's `template`), "" when absent. @since 0.1 */
S0_API const char *s0_sandbox_info_template_id(const s0_sandbox_info *info);
/** Team id, "" when absent. @since 0.1 */
S0_API const char *s0_sandbox_info_team_id(const s0_sandbox_info *info);
/** ::s0_status of the response. @since 0.1 */
S0_API int s0_sandbox_info_status(const s0_sandbox_info *info);
/** The `paused` boolean (durable paused state), independent of status. @since 0.1 */
S0_API bool s0_sandbox_info_paused(const s0_sandbox_info *info);
/** `auto_resume` (true when absent, the wire default). @since 0.1 */
S0_API bool s0_sandbox_info_auto_resume(const s0_sandbox_info *info);
/** Pod name, "" when absent. @since 0.1 */
S0_API const char *s0_sandbox_info_pod_name(const s0_sandbox_info *info);
/** Current runtime allocation id; "" while paused or when absent. @since 0.1 */
S0_API const char *s0_sandbox_info_runtime_id(const s0_sandbox_info *info);
/** `runtime_generation`; 0 when absent. @since 0.1 */
S0_API int64_t s0_sandbox_info_runtime_generation(const s0_sandbox_info *info);
/**
 * Soft expiry (`expires_at`) in ms since the epoch; 0 when unset (null,
 * absent or the zero time 0001-01-01T00:00:00Z all mean unset, docs/wire.md §3.0).
 * @since 0.1
 */
S0_API int64_t s0_sandbox_info_expires_at_unix_ms(const s0_sandbox_info *info);
/** Hard expiry (`hard_expires_at`), 0 when unset. @since 0.1 */
S0_API int64_t s0_sandbox_info_hard_expires_at_unix_ms(const s0_sandbox_info *info);
/** `created_at`, 0 when unset. @since 0.1 */
S0_API int64_t s0_sandbox_info_created_at_unix_ms(const s0_sandbox_info *info);
/** `updated_at`, 0 when unset. @since 0.1 */
S0_API int64_t s0_sandbox_info_updated_at_unix_ms(const s0_sandbox_info *info);
/** `claimed_at`, 0 when unset. @since 0.1 */
S0_API int64_t s0_sandbox_info_claimed_at_unix_ms(const s0_sandbox_info *info);
/**
 * The whole JSON object the response carried, compact, including fields the
 * library does not model (services, resources, ssh…). (transfer none)
 * @since 0.1
 */
S0_API const char *s0_sandbox_info_json(const s0_sandbox_info *info);
/**
 * Parse a Sandbox / SandboxSummary / ClaimResponse JSON object.
 * @param[in] json NUL-terminated JSON object text.
 * @param[out] out (transfer full) the result.
 * @retval S0_EPROTOCOL not a JSON object, or a field of the wrong type.
 * @since 0.1
 */
S0_API int s0_sandbox_info_parse(const char *json, s0_sandbox_info **out, s0_error **err);
/** Deep copy. @retval S0_ENOMEM out of memory. @since 0.1 */
S0_API int s0_sandbox_info_dup(const s0_sandbox_info *info, s0_sandbox_info **out,
                               s0_error **err);
/** Free; NULL is a no-op. @since 0.1 */
S0_API void s0_sandbox_info_free(s0_sandbox_info *info);

/**
 * Sandbox configuration sent on claim (`ClaimRequest.config`, docs/wire.md §3.1)
 * and update (`SandboxUpdateConfig`, §3.5). Zero fields are not sent.
 *
 * @options[version] S0_SANDBOX_CONFIG_VERSION
 */
typedef struct s0_sandbox_config {
	uint32_t version; /**< S0_SANDBOX_CONFIG_VERSION */
	/** Bits of S0_CONFIG_SET_TTL / S0_CONFIG_SET_HARD_TTL saying which TTL fields to send. */
	uint32_t set;
	int32_t ttl_sec;      /**< soft TTL in seconds (0 disables); sent when S0_CONFIG_SET_TTL */
	int32_t hard_ttl_sec; /**< hard TTL in seconds (0 disables); sent when S0_CONFIG_SET_HARD_TTL */
	int32_t auto_resume;  /**< S0_BOOL_UNSET (server default true), S0_BOOL_TRUE, S0_BOOL_FALSE */
	const char *memory;   /**< resources.memory, e.g. "512Mi"; NULL = not sent */
	/** env_vars as a NULL-terminated "KEY=VALUE" array; NULL = not sent. */
	const char *const *env_vars;
	/**
	 * Extra raw JSON object merged into the config (network, services,
	 * webhook, lifecycle…); typed fields above win. NULL = none.
	 */
	const char *extra_json;
} s0_sandbox_config;

/** Current version of ::s0_sandbox_config. */
#define S0_SANDBOX_CONFIG_VERSION 1
/** Static initialiser. */
#define S0_SANDBOX_CONFIG_INIT {S0_SANDBOX_CONFIG_VERSION, 0, 0, 0, 0, 0, 0, 0}
/** s0_sandbox_config.set: send ttl_sec. */
#define S0_CONFIG_SET_TTL 0x1u
/** s0_sandbox_config.set: send hard_ttl_sec. */
#define S0_CONFIG_SET_HARD_TTL 0x2u

/**
 * Claim a new sandbox: `POST /api/v1/sandboxes` → 201 (docs/wire.md §3.1).
 *
 * @param[in] c the client.
 * @param[in] template_id template to claim from (required; "default" is the
 *            documented default template).
 * @param[in] snapshot_id (nullable) initialise the RootFS from this snapshot.
 * @param[in] config (nullable) configuration; NULL sends none.
 * @param[out] out (transfer full) the ClaimResponse as a sandbox: id, status
 *             (usually running), template, pod name and runtime_id.
 * @param[out] err (nullable) error detail.
 * @retval S0_EINVAL template_id NULL/empty, or 400 (bad config).
 * @retval S0_ENOTFOUND unknown template or snapshot (404).
 * @retval S0_ECONFLICT 409, reason `template_not_ready` with Retry-After.
 * @retval S0_EQUOTA / S0_ETHROTTLED 429; S0_EUNAVAILABLE 503. No sandbox exists.
 * @since 0.1
 */
S0_API int s0_sandbox_claim(s0_client *c, const char *template_id, const char *snapshot_id,
                            const s0_sandbox_config *config, s0_sandbox_info **out,
                            s0_error **err);

/**
 * Read a sandbox: `GET /api/v1/sandboxes/{id}` (docs/wire.md §3.3).
 * @param[out] out (transfer full) the sandbox.
 * @retval S0_ENOTFOUND unknown, deleted, hard-expired or another team's.
 * @retval S0_EINVAL id NULL or empty (no request sent).
 * @since 0.1
 */
S0_API int s0_sandbox_get(s0_client *c, const char *sandbox_id, s0_sandbox_info **out,
                          s0_error **err);

/**
 * Read the short status: `GET /api/v1/sandboxes/{id}/status` (docs/wire.md §3.4).
 * @param[out] out (transfer full) a sandbox with id, template, team, status
 *             and the timestamps filled (paused and generation are absent).
 * @retval S0_ENOTFOUND unknown id.
 * @since 0.1
 */
S0_API int s0_sandbox_status(s0_client *c, const char *sandbox_id, s0_sandbox_info **out,
                             s0_error **err);

/**
 * Update the durable configuration: `PUT /api/v1/sandboxes/{id}` with
 * `{"config": …}` (docs/wire.md §3.5). A sent ttl re-arms `expires_at`; a JSON
 * null member counts as not sent. Blocks for one request; the local
 * backend serialises it after a lifecycle step of the same sandbox that
 * is in flight (a resume's readiness: at most the 45 s wake budget).
 * @param[in] config the fields to change (required).
 * @param[out] out (transfer full) the updated sandbox.
 * @retval S0_EINVAL config NULL, or 400 (ttl > hard_ttl…); unchanged.
 * @retval S0_ENOTFOUND unknown id.
 * @since 0.1
 */
S0_API int s0_sandbox_update(s0_client *c, const char *sandbox_id,
                             const s0_sandbox_config *config, s0_sandbox_info **out,
                             s0_error **err);

/**
 * Read the sandbox's network policy: `GET /api/v1/sandboxes/{id}/network`
 * (Sandbox0 `SandboxNetworkPolicy`; the same as `config.network`, or
 * `{"mode":"allow-all"}` when none was set). Blocks for one request;
 * thread-safe.
 * @param[out] policy_json_out (transfer full) the policy as compact JSON
 *             text; free with s0_free(). NULL on error.
 * @retval S0_EINVAL id NULL or empty, or policy_json_out NULL (no request).
 * @retval S0_ENOTFOUND unknown, deleted or another team's sandbox.
 * @since 0.2
 */
S0_API int s0_sandbox_get_network_policy(s0_client *c, const char *sandbox_id,
                                         char **policy_json_out, s0_error **err);

/**
 * Replace the sandbox's network policy: `PUT /api/v1/sandboxes/{id}/network`
 * with a `SandboxNetworkPolicy` body (`{"mode":"allow-all"|"block-all",
 * "egress":{…}}`). Stored as `config.network`; a running sandbox's current
 * runtime applies it at once, a paused one applies it when it resumes
 * (RTX-04). Blocks for one request
 * (like s0_sandbox_update(), after an in-flight lifecycle step of the same
 * sandbox); thread-safe.
 * @param[in] policy_json the policy, a JSON object (copied).
 * @param[out] policy_json_out (nullable; transfer full) the stored policy as
 *             compact JSON text; free with s0_free().
 * @retval S0_EINVAL policy_json not a JSON object (no request sent), or 400
 *         `bad_request` (bad mode, CIDR, domain, port…); the old policy stays.
 * @retval S0_ENOTFOUND unknown, deleted or another team's sandbox.
 * @since 0.2
 */
S0_API int s0_sandbox_update_network_policy(s0_client *c, const char *sandbox_id,
                                            const char *policy_json, char **policy_json_out,
                                            s0_error **err);

/**
 * Delete a sandbox: `DELETE /api/v1/sandboxes/{id}` (docs/wire.md §3.6). Removes
 * identity, configuration and writable RootFS; named snapshots stay.
 * @retval S0_ENOTFOUND unknown or already deleted.
 * @since 0.1
 */
S0_API int s0_sandbox_delete(s0_client *c, const char *sandbox_id, s0_error **err);

/** @brief Result of pause, resume or restore (immutable). */
typedef struct s0_lifecycle_result s0_lifecycle_result;

/** Sandbox id of the response. @since 0.1 */
S0_API const char *s0_lifecycle_result_sandbox_id(const s0_lifecycle_result *r);
/** ::s0_status the response reported (S0_STATUS_UNKNOWN if none). @since 0.1 */
S0_API int s0_lifecycle_result_status(const s0_lifecycle_result *r);
/** Pause: `paused` (true only once committed and released). @since 0.1 */
S0_API bool s0_lifecycle_result_paused(const s0_lifecycle_result *r);
/**
 * Resume: `resumed`. False means the durable work was accepted and goes on
 * (seed: memory-restore fallback); poll, or use s0_sandbox_resume_and_wait().
 * @since 0.1
 */
S0_API bool s0_lifecycle_result_resumed(const s0_lifecycle_result *r);
/** Restore: the snapshot id; NULL otherwise. @since 0.1 */
S0_API const char *s0_lifecycle_result_snapshot_id(const s0_lifecycle_result *r);
/** HTTP status of the success (200, or 202 for an accepted pause). @since 0.1 */
S0_API int s0_lifecycle_result_http_status(const s0_lifecycle_result *r);
/** The response's `data` object as compact JSON. @since 0.1 */
S0_API const char *s0_lifecycle_result_json(const s0_lifecycle_result *r);
/** Free; NULL is a no-op. @since 0.1 */
S0_API void s0_lifecycle_result_free(s0_lifecycle_result *r);

/**
 * Pause: `POST /api/v1/sandboxes/{id}/pause` (docs/wire.md §3.7, §6.1, §6.3).
 *
 * @param[in] memory S0_BOOL_UNSET sends no body (filesystem-only pause);
 *            S0_BOOL_TRUE / S0_BOOL_FALSE send exactly `{"memory":true|false}`.
 * @param[out] out (transfer full) the response. 200 and 202 both mean the
 *             pause was accepted; `paused` is true only once committed.
 * @retval S0_ENOTFOUND unknown id.
 * @retval S0_ECONFLICT starting, failed or terminating; nothing changed.
 * @retval S0_EUNAVAILABLE memory checkpoints unsupported, reservation full
 *         (reason `reservation_unavailable`); the sandbox keeps running.
 * @since 0.1
 */
S0_API int s0_sandbox_pause(s0_client *c, const char *sandbox_id, int32_t memory,
                            s0_lifecycle_result **out, s0_error **err);

/**
 * Resume: `POST /api/v1/sandboxes/{id}/resume` (docs/wire.md §3.7, §6.4).
 *
 * @param[in] memory as s0_sandbox_pause(); memory must be requested on both
 *            pause and resume to restore processes.
 * @param[out] out (transfer full) the response; `resumed` false means the
 *             durable work goes on (poll until running).
 * @retval S0_ENOTFOUND unknown or hard-expired id.
 * @retval S0_ECONFLICT terminating. S0_EQUOTA over quota.
 * @retval S0_EUNAVAILABLE no carrier/capacity/object store: the sandbox
 *         stays paused with its committed head unchanged.
 * @since 0.1
 */
S0_API int s0_sandbox_resume(s0_client *c, const char *sandbox_id, int32_t memory,
                             s0_lifecycle_result **out, s0_error **err);

/**
 * Refresh the soft TTL: `POST /api/v1/sandboxes/{id}/refresh` (docs/wire.md §3.7).
 * @param[in] duration_sec > 0 sets `expires_at = now + duration`; 0 sends
 *            `{}` (now + ttl). hard_expires_at is re-armed when hard_ttl is set.
 * @param[out] out (transfer full) sandbox with id, expires_at, hard_expires_at.
 * @retval S0_EINVAL negative duration (no request) or 400.
 * @retval S0_ECONFLICT the sandbox is paused. S0_ENOTFOUND unknown id.
 * @since 0.1
 */
S0_API int s0_sandbox_refresh(s0_client *c, const char *sandbox_id, int32_t duration_sec,
                              s0_sandbox_info **out, s0_error **err);

/** @brief One page of the sandbox list (immutable). */
typedef struct s0_sandbox_page s0_sandbox_page;

/**
 * List filters and paging (`GET /api/v1/sandboxes`, docs/wire.md §3.2).
 * @options[version] S0_LIST_OPTIONS_VERSION
 */
typedef struct s0_list_options {
	uint32_t version;        /**< S0_LIST_OPTIONS_VERSION */
	int32_t status;          /**< ::s0_status filter; S0_STATUS_UNKNOWN = any */
	int32_t paused;          /**< S0_BOOL_UNSET = any, S0_BOOL_TRUE, S0_BOOL_FALSE */
	const char *template_id; /**< exact template filter; NULL = any */
	int32_t limit;           /**< page size 1..200; 0 = 50 */
	int32_t offset;          /**< first item, >= 0 */
} s0_list_options;

/** Current version of ::s0_list_options. */
#define S0_LIST_OPTIONS_VERSION 1
/** Static initialiser. */
#define S0_LIST_OPTIONS_INIT {S0_LIST_OPTIONS_VERSION, 0, 0, 0, 0, 0}

/**
 * Fetch one page of sandboxes, newest first.
 * @param[in] opts (nullable) filters; NULL = first 50 of all.
 * @param[out] out (transfer full) the page.
 * @retval S0_EINVAL bad version, limit outside 0..200, negative offset (no
 *         request sent), or 400 from the server.
 * @since 0.1
 */
S0_API int s0_sandbox_list(s0_client *c, const s0_list_options *opts, s0_sandbox_page **out,
                           s0_error **err);
/** Total matches before paging (`count`). @since 0.1 */
S0_API int64_t s0_sandbox_page_count(const s0_sandbox_page *p);
/** `has_more`: offset + limit < count. @since 0.1 */
S0_API bool s0_sandbox_page_has_more(const s0_sandbox_page *p);
/** Number of sandboxes in this page. @since 0.1 */
S0_API size_t s0_sandbox_page_length(const s0_sandbox_page *p);
/** Item @p i (borrowed, NULL when out of range). @since 0.1 */
S0_API const s0_sandbox_info *s0_sandbox_page_at(const s0_sandbox_page *p, size_t i);
/** Free; NULL is a no-op. @since 0.1 */
S0_API void s0_sandbox_page_free(s0_sandbox_page *p);

/** @brief Iterator over every page of a list (one thread at a time). */
typedef struct s0_sandbox_iter s0_sandbox_iter;

/**
 * Start iterating over all matches; pages are fetched lazily with the
 * filters and page size of @p opts, starting at its offset.
 * @param[out] out (transfer full) the iterator. No request is sent yet.
 * @retval S0_EINVAL as s0_sandbox_list().
 * @since 0.1
 */
S0_API int s0_sandbox_iter_new(s0_client *c, const s0_list_options *opts, s0_sandbox_iter **out,
                               s0_error **err);
/**
 * Next sandbox.
 * @param[out] out (transfer none) valid until the next call or free.
 * @retval S0_ITEROVER no more items (not an error; @p err untouched).
 * @retval other codes as s0_sandbox_list(); the iterator may be retried.
 * @since 0.1
 */
S0_API int s0_sandbox_iter_next(s0_sandbox_iter *it, const s0_sandbox_info **out, s0_error **err);
/** Free; NULL is a no-op. @since 0.1 */
S0_API void s0_sandbox_iter_free(s0_sandbox_iter *it);

/** @brief A named RootFS snapshot (immutable). */
typedef struct s0_snapshot_info s0_snapshot_info;
/** Snapshot id. @since 0.1 */
S0_API const char *s0_snapshot_info_id(const s0_snapshot_info *s);
/** Source sandbox id. @since 0.1 */
S0_API const char *s0_snapshot_info_sandbox_id(const s0_snapshot_info *s);
/** Name, "" when absent. @since 0.1 */
S0_API const char *s0_snapshot_info_name(const s0_snapshot_info *s);
/** Description, "" when absent. @since 0.1 */
S0_API const char *s0_snapshot_info_description(const s0_snapshot_info *s);
/** `created_at` in ms since the epoch, 0 when unset. @since 0.1 */
S0_API int64_t s0_snapshot_info_created_at_unix_ms(const s0_snapshot_info *s);
/** `expires_at`, 0 when unset (zero time or absent). @since 0.1 */
S0_API int64_t s0_snapshot_info_expires_at_unix_ms(const s0_snapshot_info *s);
/** The snapshot JSON object. @since 0.1 */
S0_API const char *s0_snapshot_info_json(const s0_snapshot_info *s);
/** Free; NULL is a no-op. @since 0.1 */
S0_API void s0_snapshot_info_free(s0_snapshot_info *s);

/** @brief A list of snapshots (immutable). */
typedef struct s0_snapshot_list s0_snapshot_list;
/** `count`. @since 0.1 */
S0_API int64_t s0_snapshot_list_count(const s0_snapshot_list *l);
/** Items in the list. @since 0.1 */
S0_API size_t s0_snapshot_list_length(const s0_snapshot_list *l);
/** Item @p i (borrowed; NULL when out of range). @since 0.1 */
S0_API const s0_snapshot_info *s0_snapshot_list_at(const s0_snapshot_list *l, size_t i);
/** Free; NULL is a no-op. @since 0.1 */
S0_API void s0_snapshot_list_free(s0_snapshot_list *l);

/**
 * Create a named RootFS snapshot: `POST /api/v1/sandboxes/{id}/snapshots`
 * → 201 (docs/wire.md §3.8). A running source is briefly barriered and stays
 * running. Snapshots hold filesystem state only (seed).
 * @param[in] name (nullable) name. @param[in] description (nullable).
 * @param[in] expires_at_unix_ms 0 = never; otherwise must be in the future.
 * @param[out] out (transfer full) the snapshot.
 * @retval S0_EINVAL expiry in the past (400). S0_ENOTFOUND unknown id.
 * @retval S0_ECONFLICT source neither running nor paused, or busy.
 * @since 0.1
 */
S0_API int s0_snapshot_create(s0_client *c, const char *sandbox_id, const char *name,
                              const char *description, int64_t expires_at_unix_ms,
                              s0_snapshot_info **out, s0_error **err);
/**
 * List a sandbox's snapshots, newest first (`GET …/{id}/snapshots`).
 * @retval S0_ENOTFOUND unknown id.
 * @since 0.1
 */
S0_API int s0_snapshot_list_get(s0_client *c, const char *sandbox_id, s0_snapshot_list **out,
                                s0_error **err);
/**
 * Read one snapshot (`GET /api/v1/sandbox-rootfs-snapshots/{snapshot_id}`).
 * @retval S0_ENOTFOUND unknown or expired.
 * @since 0.1
 */
S0_API int s0_snapshot_get(s0_client *c, const char *snapshot_id, s0_snapshot_info **out,
                           s0_error **err);
/**
 * Delete one snapshot (`DELETE /api/v1/sandbox-rootfs-snapshots/{id}`);
 * sandboxes and forks made from it are unaffected.
 * @retval S0_ENOTFOUND unknown.
 * @since 0.1
 */
S0_API int s0_snapshot_delete(s0_client *c, const char *snapshot_id, s0_error **err);

/**
 * Restore a paused sandbox's RootFS head to a snapshot:
 * `POST /api/v1/sandboxes/{id}/rootfs/restore` (docs/wire.md §3.8). Leaves it paused.
 * @param[out] out (transfer full) `{sandbox_id, snapshot_id, status:"paused"}`.
 * @retval S0_EINVAL snapshot id empty (no request). S0_ENOTFOUND unknown ids.
 * @retval S0_ECONFLICT the sandbox is not paused (reason `not_paused`).
 * @since 0.1
 */
S0_API int s0_sandbox_restore(s0_client *c, const char *sandbox_id, const char *snapshot_id,
                              s0_lifecycle_result **out, s0_error **err);

/**
 * Fork options (docs/wire.md §3.8, §6.7).
 * @options[version] S0_FORK_OPTIONS_VERSION
 */
typedef struct s0_fork_options {
	uint32_t version;     /**< S0_FORK_OPTIONS_VERSION */
	uint32_t set;         /**< S0_CONFIG_SET_TTL / S0_CONFIG_SET_HARD_TTL */
	int32_t ttl_sec;      /**< child's soft TTL (0 disables) */
	int32_t hard_ttl_sec; /**< child's hard TTL (0 disables) */
	int32_t memory;       /**< non-zero: memory fork (needs idempotency_key) */
	/** `Idempotency-Key` (1..255 chars, not blank); required for memory forks. */
	const char *idempotency_key;
} s0_fork_options;
/** Current version of ::s0_fork_options. */
#define S0_FORK_OPTIONS_VERSION 1
/** Static initialiser. */
#define S0_FORK_OPTIONS_INIT {S0_FORK_OPTIONS_VERSION, 0, 0, 0, 0, 0}

/**
 * Fork a running or paused sandbox into a new paused sandbox:
 * `POST /api/v1/sandboxes/{id}/fork` → 201 (docs/wire.md §3.8, §6.7).
 * @param[in] opts (nullable) TTL overrides and memory mode.
 * @param[out] out (transfer full) the child sandbox (paused).
 * @retval S0_EINVAL memory fork without a valid idempotency key (checked
 *         before any request, CL-13).
 * @retval S0_EUNAVAILABLE memory capture pending (reason `capture_pending`):
 *         repeat with the same key.
 * @retval S0_ENOTFOUND / S0_ECONFLICT as the server says; nothing created.
 * @since 0.1
 */
S0_API int s0_sandbox_fork(s0_client *c, const char *sandbox_id, const s0_fork_options *opts,
                           s0_sandbox_info **out, s0_error **err);

S0_END_DECLS

#endif
