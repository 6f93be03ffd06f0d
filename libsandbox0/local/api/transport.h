/*
 * The in-process transport of the local backend: the client's transport
 * vtable (client/transport.h) over the router, with no sockets. A request
 * takes exactly the path an HTTP request to `s0 serve` takes after
 * authentication (s0__router_handle_raw), so the two cannot drift.
 */
#ifndef S0_LOCAL_TRANSPORT_H
#define S0_LOCAL_TRANSPORT_H

#include "client/transport.h"
#include "local/api/router.h"

/*
 * Make a transport context over engine e (borrowed: it must outlive the
 * transport). opts->team_id is the caller's team (required); its
 * zero_time_compat and pause_200_only flags apply to every request;
 * request_id and wake_budget_ms are ignored (per request). Strings are
 * copied. Free with s0__local_transport_ops.free.
 * Errors: S0_EINVAL (no engine or team), S0_ENOMEM.
 */
int s0__local_transport_new(s0__engine *e, const s0__router_opts *opts, void **ctx_out,
                            s0_error **err);

extern const s0__transport_ops s0__local_transport_ops;

#endif
