/* The per-user local server: what `s0 serve` and the CLI's local mode share. */
#ifndef S0_CLI_LOCALSRV_H
#define S0_CLI_LOCALSRV_H

#include <stdbool.h>
#include <stddef.h>

/* `s0 serve` exit status when another process holds the data directory. */
#define SERVE_EXIT_LOCKED 3

/* "http://host:port[/…]" into host and port; -1 when not of that form. */
int localsrv_parse_url(const char *url, char *host, size_t host_len, int *port);
/* GET /healthz answered 200 within budget_ms. */
bool localsrv_healthy(const char *url, int budget_ms);

#endif
