/**
 * @file services.h
 * @brief Public services of a sandbox: ports exposed as public routes
 *        (docs/wire.md "Public routes"), as the official SDKs' getServices /
 *        updateServices / clearServices.
 */
#ifndef SANDBOX0_SERVICES_H
#define SANDBOX0_SERVICES_H

#include "sandbox0/client.h"
#include "sandbox0/common.h"
#include "sandbox0/error.h"

S0_BEGIN_DECLS

/**
 * The services of a sandbox (`GET /api/v1/sandboxes/{id}/services`).
 *
 * @param[in] c the client.
 * @param[in] sandbox_id the sandbox.
 * @param[out] services_json_out (transfer full, free with s0_free()) the
 *             answer's data as JSON text: `{sandbox_id, services: [view…],
 *             exposure_domain?}`, each view a service plus `publishable`,
 *             `publish_blockers` and `public_url`.
 * @retval S0_EINVAL a blank id or NULL @p services_json_out.
 * @retval S0_ENOTFOUND unknown sandbox (or another team's).
 * @note Blocks for one request. @threadsafety as the client.
 * @since 0.4
 */
S0_API int s0_sandbox_services_get(s0_client *c, const char *sandbox_id,
                                   char **services_json_out, s0_error **err);

/**
 * Replace the services of a sandbox (`PUT …/services` with
 * `{"services": services_json}`); "[]" clears them.
 *
 * @param[in] services_json a JSON array of services (SandboxAppService in
 *            wire form: id, port, runtime {type cmd|manual|function, command…},
 *            ingress {public, routes [{id, path_prefix, methods,
 *            rewrite_prefix, timeout_seconds, resume}]}).
 * @param[out] services_json_out (nullable; transfer full, free with
 *             s0_free()) the answer as s0_sandbox_services_get() gives it.
 * @retval S0_EINVAL not a JSON array, or the server's 400 naming the bad
 *         field (a `resume: true` route needs auto_resume and a cmd or
 *         function runtime); nothing changed.
 * @retval S0_ENOTFOUND unknown sandbox.
 * @note Blocks for one request. @threadsafety as the client.
 * @since 0.4
 */
S0_API int s0_sandbox_services_update(s0_client *c, const char *sandbox_id,
                                      const char *services_json, char **services_json_out,
                                      s0_error **err);

S0_END_DECLS

#endif
