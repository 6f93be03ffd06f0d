/* The connect of a public route to its service, starting a `cmd` service's
 * command when nothing listens (docs/wire.md "Public routes"). */
#ifndef S0_SERVER_SVC_START_H
#define S0_SERVER_SVC_START_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "local/lifecycle/services.h"

/**
 * Connect to @p port of the sandbox @p sandbox_id that @p a pins, for
 * @p service (its stored JSON: `runtime.type`, `runtime.command`, `cwd`, `env_vars`).
 *
 * Only a refused connect (`port_not_listening`) starts a `cmd` runtime's
 * command; a connect that gets no answer (`port_no_answer`: a full or hung
 * listener) returns at once and never starts it. At most one start is in
 * flight per sandbox and port: a request that finds one waits for
 * ITS result (no second start), bounded by @p budget_ms, then connects.
 * A start that succeeded still counts while its request waits for the
 * port: a command that takes a while to listen is started once however
 * many requests are refused meanwhile.
 * After a start the port is polled until it accepts or @p budget_ms of
 * real time has passed since the call.
 *
 * @param budget_ms the request's own budget, ms of real time (> 0).
 * @param stop (nullable) when it fires (the server stops), a wait for
 *        another request's start or for the port ends at once with
 *        S0_EUNAVAILABLE `unavailable` (the start itself runs to its end).
 * @param[out] fd a connected stream socket on S0_OK (the caller's; close()).
 * @retval S0_EUNAVAILABLE `port_not_listening` (nothing listens, or the
 *         command exited), `port_no_answer`, or the runtime's reason.
 * @retval S0_ETIMEDOUT `gateway_timeout`: another request's start of the
 *         command outlasted @p budget_ms.
 * Blocks up to @p budget_ms plus one connect timeout. Any thread.
 */
int s0__svc_connect(s0__runtime_access *a, const char *sandbox_id, const cJSON *service,
                    int port, int64_t budget_ms, s0_cancel_token *stop, int *fd,
                    s0_error **err);

#endif
