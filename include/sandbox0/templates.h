/**
 * @file sandbox0/templates.h
 * @brief Templates of the caller's team over the API (docs/local-backend.md "Templates").
 *
 * A template is the RootFS every sandbox claimed from it starts with. The
 * calls follow the official API (`/api/v1/templates`); answers are the
 * official `Template` object as JSON text:
 * `{"template_id","scope","team_id"?,"spec","created_at","updated_at"}`,
 * `scope` being `"team"` (the caller's team's) or `"public"` (every team
 * sees it, e.g. `default`). Template ids are trimmed and lowercased by the
 * server, as a claim's template is.
 *
 * @threadsafety every function is safe from any thread on a shared client.
 */
#ifndef SANDBOX0_TEMPLATES_H
#define SANDBOX0_TEMPLATES_H

#include <stddef.h>
#include "sandbox0/client.h"
#include "sandbox0/common.h"

S0_BEGIN_DECLS

/**
 * Create a template of the caller's team: `POST /api/v1/templates`
 * `{"template_id","spec"}`. On `s0 serve` the spec's runtime-only mounts
 * (`pod.emptyDirMounts`) are used and the RootFS is the standard empty
 * tree (no container image is pulled).
 *
 * @param[in] c the client.
 * @param[in] template_id the name: 1..255 characters, no '/' or spaces.
 * @param[in] spec_json (nullable) the spec, a JSON object; NULL = `{}`.
 * @param[out] template_json_out (nullable; transfer full, free with
 *             s0_free()) the created template.
 * @param[out] err (nullable) error detail.
 * @retval S0_EINVAL bad id or spec (400).
 * @retval S0_ECONFLICT the id is taken (409 `template_exists`).
 * @note Blocks until the template is built (it is ready when this returns).
 * @since 0.3
 */
S0_API int s0_template_create(s0_client *c, const char *template_id, const char *spec_json,
                              char **template_json_out, s0_error **err);

/**
 * Create a template of the caller's team from a tar archive (ustar, pax
 * or GNU; optionally gzip, bzip2, xz or zstd compressed) whose members
 * become its RootFS: `POST /api/v1/templates?template_id=ID` with the
 * archive as an `application/octet-stream` body (a libsandbox0 server
 * extension). The server refuses absolute paths, `..`, members through
 * symbolic links, device nodes, FIFOs and sockets (400
 * `bad_template_tar`), more than 1 GiB of content or 200,000 members (413),
 * and an archive over 256 MiB (413).
 *
 * @param[in] c the client.
 * @param[in] template_id the name, as for s0_template_create().
 * @param[in] tar the archive (borrowed), @p tar_len bytes (> 0).
 * @param[out] template_json_out (nullable; transfer full, free with
 *             s0_free()) the created template.
 * @param[out] err (nullable) error detail.
 * @retval S0_EINVAL bad id or archive. @retval S0_ETOOLARGE too large.
 * @retval S0_ECONFLICT the id is taken.
 * @since 0.3
 */
S0_API int s0_template_create_tar(s0_client *c, const char *template_id, const void *tar,
                                  size_t tar_len, char **template_json_out, s0_error **err);

/**
 * Get a template the caller's team can see: `GET /api/v1/templates/{id}`.
 *
 * @param[in] c the client.
 * @param[in] template_id the name (1..255 bytes).
 * @param[out] template_json_out (transfer full, free with s0_free()) the
 *             template; untouched on failure.
 * @param[out] err (nullable) error detail.
 * @retval S0_ENOTFOUND absent or another team's (404).
 * @retval S0_EINVAL a blank or over-long id, or NULL @p template_json_out.
 * @note Blocks for one request.
 * @since 0.3
 */
S0_API int s0_template_get(s0_client *c, const char *template_id, char **template_json_out,
                           s0_error **err);

/**
 * List the templates the caller's team can see (public ones included),
 * oldest first: `GET /api/v1/templates`.
 *
 * @param[in] c the client.
 * @param[out] list_json_out (transfer full, free with s0_free())
 *             `{"templates":[…],"count":N}`; untouched on failure.
 * @param[out] err (nullable) error detail.
 * @retval S0_EINVAL NULL @p list_json_out.
 * @note Blocks for one request.
 * @since 0.3
 */
S0_API int s0_template_list(s0_client *c, char **list_json_out, s0_error **err);

/**
 * Delete a template of the caller's team: `DELETE /api/v1/templates/{id}`.
 * The template's blocks are freed by the next garbage collection.
 *
 * @param[in] c the client.
 * @param[in] template_id the name (1..255 bytes).
 * @param[out] err (nullable) error detail.
 * @note Blocks for one request; nothing changes on failure.
 * @retval S0_ENOTFOUND absent or another team's.
 * @retval S0_EFORBIDDEN a public template (403).
 * @retval S0_ECONFLICT sandboxes claimed from it still exist (409
 *         `template_in_use`); delete them first.
 * @since 0.3
 */
S0_API int s0_template_delete(s0_client *c, const char *template_id, s0_error **err);

S0_END_DECLS

#endif
