/*
 * The node channel's client side in the router (forward.c; docs/scaling.md
 * "Several nodes"): calls for a sandbox running on another node go there.
 */
#ifndef S0_FORWARD_H
#define S0_FORWARD_H

#include <stdbool.h>

#include "common/http.h"
#include "local/lifecycle/engine.h"

/* The header that authenticates a forwarded call (lifecycle/nodeauth.c). */
#define S0__NODE_AUTH_HEADER "X-S0-Node-Auth"

/*
 * Route req (raw path and query; path is its decoded path) over the node
 * channel when it names a sandbox another live node runs. Returns 1 when
 * resp holds the answer (the owner's, as it came; 401 unauthorized for a
 * channel call that fails verification; 503 unavailable, Retry-After 1,
 * when a sent call got no answer), 0 to serve req here — with *unreachable
 * true when the owner could not be reached — or S0_ENOMEM. resp must be
 * zeroed. Blocks for the owner's answer (at most 150 s). Thread-safe.
 */
int s0__router_forward(s0__engine *e, const s0__http_request *req, const char *path,
                       const char *request_id, s0__http_response *resp, bool *unreachable);

/*
 * One signed call over the node channel: req (raw path and query; headers
 * copied but for hop-by-hop ones; X-S0-Node-Auth added over method, target
 * and body — or, with e NULL, the X-S0-Node-Auth req already carries, made
 * with s0__engine_node_sign over the same) to the peer at url. S0_OK with resp (zeroed by the caller; its
 * own after) holding the peer's answer as it came; S0_ETRANSPORT when none
 * came within timeout_ms (*sent: the call may have arrived), S0_ENOMEM.
 * Blocks. Thread-safe.
 */
int s0__node_call(s0__engine *e, const char *url, const s0__http_request *req,
                  int64_t timeout_ms, s0__http_response *resp, bool *sent);

#endif
