/*
 * The simulated runtime's HTTP listener (shell.h `httpd`): a guest
 * program that serves files of the sandbox over HTTP on a port, so public
 * routes (docs/wire.md "Public routes") have a real answer to proxy on the
 * simulation. The HTTP itself is libmicrohttpd's, on one end of a socket
 * pair the driver's connect_port hands out.
 */
#ifndef S0_RUNTIME_SIM_HTTPD_H
#define S0_RUNTIME_SIM_HTTPD_H

#include <stdint.h>

#include "common/internal.h"
#include "local/runtime/sim/guest.h"

struct s0__files_ns;

/**
 * Start serving @p root (an absolute path of the guest; copied) on TCP
 * @p port of guest @p g, as a daemon: the socket belongs to procd (PID 1)
 * and lives as long as the generation (no checkpoint keeps it). Call with
 * the guest's lock held (a builtin).
 * @retval S0_ECONFLICT the port is in use. S0_ENOMEM.
 */
int s0__sim_httpd_start(s0__guest *g, uint32_t port, const char *root, s0_error **err);

/**
 * Connect to @p port of guest @p g (the guest's lock not held).
 * @param ns the generation's files view (borrowed; valid while the
 *           connection is used: the caller pins the generation).
 * @param[out] fd_out a connected stream socket (the caller's).
 * @retval S0_EUNAVAILABLE `port_not_listening` when nothing listens.
 * A port opened with `listen` (no HTTP server) accepts and closes.
 * @threadsafety safe.
 */
int s0__sim_httpd_connect(s0__guest *g, const struct s0__files_ns *ns, uint32_t port,
                          int *fd_out, s0_error **err);

/** Forget the servers of guest @p g (its generation stops). NULL-safe. */
void s0__sim_httpd_forget(s0__guest *g);

#endif
