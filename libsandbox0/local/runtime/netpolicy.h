/*
 * The simulated network of a runtime: a sandbox's network policy
 * (`config.network`, a Sandbox0 `SandboxNetworkPolicy`; docs/wire.md §3.1)
 * compiled into rules and decided per outbound connection. The resume
 * transaction applies it to the new runtime
 * before the readiness proof (RTX-04); the guest's `nc` builtin asks it.
 * No packet leaves the host: an allowed connection to a remote address is
 * simulated as accepted, and loopback reaches the guest's own listeners.
 *
 * WHAT IS DECIDED (first match wins, in this order):
 *   1. loopback (`localhost`, 127.0.0.0/8, ::1) is not egress: allowed;
 *   2. a deny rule matches → denied: `egress.deniedCidrs`,
 *      `egress.deniedDomains` (any port), `egress.deniedPorts` (any
 *      destination), a `trafficRules` entry with action "deny";
 *   3. an allow rule matches → allowed: the `egress.allowedCidrs` and
 *      `egress.allowedDomains` destinations (any, when both are empty) on
 *      the `egress.allowedPorts` (any, when empty) — one rule, present when
 *      any of the three lists is non-empty — or a `trafficRules` entry with
 *      action "allow";
 *   4. otherwise the mode: `allow-all` allows, `block-all` denies.
 * A traffic rule matches when every selector it has matches (cidrs or
 * domains: either list; ports). Domains match case-insensitively and
 * exactly, or `*.example.com` for any name below example.com (not the
 * apex). CIDRs match IP-literal destinations only (the simulated network
 * has no resolver), read as a guest's resolver reads numeric hosts: IPv6
 * with or without brackets (IPv4-mapped ones as IPv4) and IPv4 in every
 * inet_aton() form ("10.1", "0x0a000001", "012.0.0.1"); a bare address in
 * a rule is a /32 or /128. A port spec is
 * `{port, endPort?, protocol?}`; with no protocol it matches TCP and UDP.
 * A traffic rule with `appProtocols` never matches a raw connection (the
 * only kind `nc` makes). `credentialBindings`, `proxy`, `protocolRules`
 * and `credentialRules` are validated as JSON shapes, kept verbatim in
 * the sandbox config and not simulated.
 *
 * @threadsafety a compiled policy is immutable: any thread may query it.
 */
#ifndef S0_RUNTIME_NETPOLICY_H
#define S0_RUNTIME_NETPOLICY_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"

typedef struct s0__netpolicy s0__netpolicy;

/**
 * Check a `SandboxNetworkPolicy` object (claim, update, PUT …/network).
 * @param net the policy (NULL or JSON null: valid, the template default).
 * @param what the operation named in messages ("claim", "update"…).
 * @retval S0_EINVAL `bad_request`: mode missing or not "allow-all" /
 *         "block-all", a member no SandboxNetworkPolicy has (a misspelt
 *         "deniedDomain" must not pass as no rule), a list that is not an array of strings, a malformed
 *         CIDR, an empty or malformed domain, a port outside 1..65535, an
 *         endPort below port, an unknown protocol or traffic action. The
 *         message names the field ("network.egress.allowedCidrs[1]: …").
 */
int s0__netpolicy_validate(const cJSON *net, const char *what, s0_error **err);

/**
 * Compile a policy. NULL or JSON null compiles to the template default,
 * `allow-all` with no rules.
 * @param[out] out (transfer full) free with s0__netpolicy_free().
 * @retval S0_EINVAL as s0__netpolicy_validate(). @retval S0_ENOMEM
 */
int s0__netpolicy_compile(const cJSON *net, s0__netpolicy **out, s0_error **err);

/** A CIDR of a compiled rule (address in network byte order). */
typedef struct s0__netpolicy_cidr {
	int family; /**< AF_INET or AF_INET6 */
	uint8_t addr[16];
	int prefix;
} s0__netpolicy_cidr;

/** A port spec of a compiled rule: lo..hi, proto 0 any (TCP and UDP), 1 tcp, 2 udp, 3 sctp. */
typedef struct s0__netpolicy_port {
	int lo, hi;
	int proto;
} s0__netpolicy_port;

/** One compiled rule, for a packet filter (every pointer borrowed from the policy). */
typedef struct s0__netpolicy_rule {
	bool allow;                      /**< allow, else deny */
	bool never;                      /**< appProtocols: matches no raw connection */
	const char *source;              /**< the field it came from (static) */
	const s0__netpolicy_cidr *cidrs; /**< destinations: any when cidrs and domains are empty */
	size_t ncidrs;
	const char *const *domains;
	size_t ndomains;
	const s0__netpolicy_port *ports; /**< any port when empty */
	size_t nports;
} s0__netpolicy_rule;

/**
 * Rule @p i (0..s0__netpolicy_rule_count()-1) in the order
 * s0__netpolicy_allows() reads them (denials before allowances).
 * @return false when @p i is out of range.
 */
bool s0__netpolicy_rule_at(const s0__netpolicy *p, size_t i, s0__netpolicy_rule *out);

/** Free a compiled policy. NULL-safe. */
void s0__netpolicy_free(s0__netpolicy *p);

/** "allow-all" or "block-all". */
const char *s0__netpolicy_mode(const s0__netpolicy *p);

/** Number of compiled rules (inspection). */
size_t s0__netpolicy_rule_count(const s0__netpolicy *p);

/**
 * Decide one outbound connection.
 * @param host a domain name or an IPv4/IPv6 literal (a trailing dot and
 *        case are ignored).
 * @param port 1..65535. @param udp true for UDP, false for TCP.
 * @param[out] why (nullable) on denial, a static phrase naming what denied
 *        it ("block-all", "deniedCidrs", "trafficRules"…); on allowance
 *        "loopback", "allow-all" or the allowing rule's field.
 * @return true when the policy lets the connection out.
 */
bool s0__netpolicy_allows(const s0__netpolicy *p, const char *host, int port, bool udp,
                          const char **why);

/** True when @p host is a loopback name or address. */
bool s0__netpolicy_is_loopback(const char *host);

#endif
