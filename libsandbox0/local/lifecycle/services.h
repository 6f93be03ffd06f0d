/*
 * Public services of a sandbox (docs/wire.md "Public routes"): the
 * official SDKs' `services` (SandboxAppService: a port, a runtime, an
 * ingress with routes) validated and stored in the metadata store, each
 * service with a stable public id that names it at /r/{public_id}/ and
 * {public_id}.{public domain}, and the lookups the route proxy makes.
 */
#ifndef S0_LIFECYCLE_SERVICES_H
#define S0_LIFECYCLE_SERVICES_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "local/lifecycle/engine.h"

/* Longest public id plus NUL: lowercase letters and digits, a DNS label. */
#define S0__PUBLIC_ID_MAX 24

/**
 * The stored services of a sandbox of @p team (running or paused).
 * @param[out] out (transfer full) a JSON array in wire form, each service
 *             with its "public_id" member; [] when none.
 * @retval S0_ENOTFOUND unknown sandbox (or another team's).
 * Blocks on the metadata store; thread-safe.
 */
int s0__engine_services_get(s0__engine *e, const char *team, const char *id, cJSON **out,
                            s0_error **err);

/**
 * Replace the services of a sandbox (PUT …/services): validate @p services
 * (borrowed; a JSON array of SandboxAppService in wire form), keep the
 * public id of every service id that existed before, give new ones a
 * fresh id, store them. A route with `resume: true` needs the sandbox's
 * auto_resume and a `cmd` or `function` runtime.
 * @param[out] out (transfer full) what s0__engine_services_get answers now.
 * @retval S0_EINVAL `bad_request` naming the bad field; nothing stored.
 * @retval S0_ENOTFOUND unknown sandbox. Serialised with the sandbox's
 *         other transitions (its lock); blocks on the metadata store.
 */
int s0__engine_services_put(s0__engine *e, const char *team, const char *id,
                            const cJSON *services, cJSON **out, s0_error **err);

/**
 * Validate @p services (borrowed) as s0__engine_services_put() would for a
 * sandbox whose auto_resume is @p auto_resume, storing nothing (a claim's
 * `config.services`, checked before the sandbox exists).
 * @retval S0_EINVAL `bad_request` naming the bad field. Thread-safe.
 */
int s0__services_validate(const cJSON *services, bool auto_resume, s0_error **err);

/**
 * The auto_resume guard of an update: S0_ECONFLICT `conflict` when a route
 * of sandbox @p id has `resume: true` (auto_resume cannot be turned off
 * while it exists), else S0_OK. Call under the sandbox's lock.
 */
int s0__services_allow_auto_resume_off(s0__engine *e, const char *id, s0_error **err);

/** What a public id leads to (s0__engine_route_resolve). */
typedef struct s0__route_target {
	char team[S0__ID_MAX];
	char sandbox_id[S0__ID_MAX];
	cJSON *service; /* the stored service (owned): port, runtime, ingress */
	bool paused;    /* the sandbox was paused when resolved */
} s0__route_target;

/**
 * Resolve a public id to its sandbox and service.
 * @retval S0_ENOTFOUND `not_found` no such public id, sandbox, or the
 *         service is not public. Clear with s0__route_target_clear().
 */
int s0__engine_route_resolve(s0__engine *e, const char *public_id, s0__route_target *out,
                             s0_error **err);
void s0__route_target_clear(s0__route_target *t);

/**
 * The name of this engine's runtime when it cannot reach a sandbox port
 * (its driver has no connect_port: no public routes), else NULL. The
 * name is static. Any thread.
 */
const char *s0__engine_routeless_runtime(s0__engine *e);

/**
 * Connect to @p port inside the sandbox whose runtime @p a pins, through
 * the runtime seam (s0__rt_driver.connect_port).
 * @param[out] fd_out a connected stream socket (the caller's; close()).
 * @retval S0_EUNAVAILABLE `port_not_listening` when the connect is
 *         refused (nothing listens there); `port_no_answer` when it gets
 *         no answer in time (something may listen but does not accept:
 *         never a reason to start the service); `unsupported` when the
 *         runtime cannot. Blocks up to the runtime's connect timeout (3 s
 *         on gVisor). Any thread.
 */
int s0__runtime_access_connect(s0__runtime_access *a, int port, int *fd_out, s0_error **err);

#endif
