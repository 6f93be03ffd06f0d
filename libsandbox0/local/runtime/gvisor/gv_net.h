/*
 * The network of gvisor sandboxes (docs/local-backend.md "Runtime gvisor",
 * "Network"): nothing in the host's network namespace changes.
 *
 * - The hub: one network namespace per opened host (s0__rt_host), made by
 *   unshare(CLONE_NEWNET) in a short-lived thread and held only by a
 *   descriptor of this process. IPv4 forwarding is on inside it (its own
 *   sysctl), and its nftables table `inet s0` (libnftables) holds every
 *   sandbox's policy. It has no link to the host's namespace: nothing a
 *   sandbox sends leaves the hub.
 * - A generation: its own network namespace (held by a descriptor; runsc
 *   joins it through /proc/<pid>/fd/<fd>) with a veth pair made through
 *   libnl-route: `eth0` inside (address .2 of the generation's /30, default
 *   route through .1) and `s0v<slot>` in the hub (address .1). runsc
 *   (`--network=sandbox`) takes `eth0` over into gVisor's own network stack
 *   and strips its address from the namespace.
 * - The address plan: /30 slot k of the pool $S0_GVISOR_NET (an IPv4 CIDR,
 *   /8../28; default 10.200.0.0/16): sandbox = pool + 4k + 2.
 * - Crash reclaim: the namespaces, veths and nft table live only as long
 *   as a descriptor of this process or a runsc process holds them: after a
 *   kill -9 the driver's reclaim kills runsc's processes and they are gone.
 *   The records <dir>/<runtime_id> (slot and interface) tell the terminal
 *   proof what a generation still holds; s0__gv_hub_open() removes stale
 *   ones and deletes any `s0v*` link in the host's namespace (never made
 *   there; a by-prefix safety net).
 *
 * @threadsafety a hub is safe from any thread; one generation's network
 * is used by one thread at a time (the driver's generation rules).
 */
#ifndef S0_RUNTIME_GVISOR_GV_NET_H
#define S0_RUNTIME_GVISOR_GV_NET_H

#include <stdbool.h>
#include <stddef.h>

#include "common/internal.h"
#include "local/runtime/netpolicy.h"

/** Prefix of every interface this runtime makes (hub ends: s0v<slot>). */
#define S0__GV_NET_IF_PREFIX "s0v"
/** The default address pool ($S0_GVISOR_NET overrides). */
#define S0__GV_NET_POOL "10.200.0.0/16"

typedef struct s0__gv_hub s0__gv_hub;
typedef struct s0__gv_net s0__gv_net;

/**
 * Make the hub network namespace with its base nftables table, after
 * reclaiming what a killed earlier process left under @p dir.
 * @param dir the records directory (made if absent; borrowed).
 * @param[out] out (transfer full) close with s0__gv_hub_close().
 * @retval S0_EINVAL `runtime_unavailable`: $S0_GVISOR_NET is not an IPv4
 *         CIDR of /8../28. @retval S0_EUNAVAILABLE `runtime_unavailable`:
 *         a namespace, sysctl or nftables step failed (named).
 * Blocks for a few ms (a thread, netlink).
 */
int s0__gv_hub_open(const char *dir, s0__gv_hub **out, s0_error **err);

/** Close the hub (its namespace goes once no generation holds it). NULL-safe. */
void s0__gv_hub_close(s0__gv_hub *hub);

/** "/proc/<pid>/fd/<fd>": the hub's namespace (tests attach peers to it). */
const char *s0__gv_hub_path(const s0__gv_hub *hub);

/** The pool as "a.b.c.d/len". */
const char *s0__gv_hub_pool(const s0__gv_hub *hub);

/**
 * The restore hook and the start step: (re)create the network of
 * generation @p runtime_id — a new namespace, the veth pair with the /30
 * of @p slot (-1: the lowest free one; a slot already in use: the lowest
 * free one too, so read s0__gv_net_slot() back), the hub's chain for it
 * blocking everything until s0__gv_net_apply(). runsc strips the address
 * from the namespace it takes over, so a `runsc restore` needs a fresh
 * one from this function with the slot recorded at capture; call it
 * before the carrier's mount namespace is made (nothing here is a mount,
 * so the order is free) and put s0__gv_net_path() in the bundle's network
 * namespace.
 * @param[out] out (transfer full) free with s0__gv_net_free() after the
 *        runsc sandbox is gone.
 * @retval S0_EUNAVAILABLE `runtime_unavailable`: no free slot, or a
 *         netlink/nftables step failed (named); nothing is left.
 * Blocks for a few ms.
 */
int s0__gv_net_prepare(s0__gv_hub *hub, const char *runtime_id, int slot, s0__gv_net **out,
                       s0_error **err);

/**
 * Delete the generation's veth pair and hub chain, close its namespace,
 * free its slot and remove its record (kept when a step failed, so the
 * terminal proof names it). NULL-safe.
 */
void s0__gv_net_free(s0__gv_net *n);

/** The namespace's path for runsc ("/proc/<pid>/fd/<fd>"). */
const char *s0__gv_net_path(const s0__gv_net *n);
/** The generation's /30 slot. */
int s0__gv_net_slot(const s0__gv_net *n);
/** The sandbox's address ("a.b.c.d") and the hub end's (its gateway). */
const char *s0__gv_net_addr(const s0__gv_net *n);
const char *s0__gv_net_gateway(const s0__gv_net *n);

/**
 * Enforce @p p (borrowed; NULL = network down: nothing leaves) on the
 * hub's chain of this generation, replacing what it held, in one nftables
 * transaction (gv_nft.c: the mapping is documented there).
 * @retval S0_EUNAVAILABLE `network_policy`: nftables refused (its message),
 *         or @p n is NULL (a generation without a network).
 */
int s0__gv_net_apply(s0__gv_net *n, const s0__netpolicy *p, s0_error **err);

/**
 * Inspection: {"interface", "address", "gateway", "namespace", "hub",
 * "mode", "rules"} (the namespaces as /proc/<pid>/fd/<fd> paths).
 * @return (transfer full) NULL when OOM or @p n is NULL.
 */
cJSON *s0__gv_net_inspect(const s0__gv_net *n);

/**
 * Whether generation @p runtime_id still holds a network (its record
 * under @p dir); @p what names it.
 */
bool s0__gv_net_present(const char *dir, const char *runtime_id, char *what, size_t n);

/* ---- gv_netns.c (used by gv_net.c) ---- */

struct nl_sock;

/**
 * Run @p fn(@p arg, msg, ml) on a thread of its own in the network
 * namespace @p fd (-1: a new one, unshared). @return 0, or -1 with the
 * failure in @p msg (fn's own, or setns/unshare/thread). Blocks for fn.
 */
int s0__gv_in_netns(int fd, int (*fn)(void *arg, char *msg, size_t ml), void *arg, char *msg,
                    size_t ml);
/**
 * A new network namespace held by descriptor @p fd (close-on-exec) and
 * named @p path "/proc/<pid>/fd/<fd>". @return 0, or -1 (why in @p msg).
 */
int s0__gv_netns_new(int *fd, char path[64], char *msg, size_t ml);
/** A NETLINK_ROUTE socket of the calling thread's namespace; NULL (why in @p msg). */
struct nl_sock *s0__gv_nl_open(char *msg, size_t ml);
/** "@p what: <libnl message of error @p e>" in @p msg. @return -1 */
int s0__gv_nl_fail(char *msg, size_t ml, const char *what, int e);
/** Link @p name up. @return 0 or -1 (why in @p msg). */
int s0__gv_link_up(struct nl_sock *sk, const char *name, char *msg, size_t ml);
/**
 * Address @p cidr ("a.b.c.d/len") on link @p name, the link up, and with
 * @p gw (nullable) a default route through it. @return 0 or -1 (why in @p msg).
 */
int s0__gv_link_setup(struct nl_sock *sk, const char *name, const char *cidr, const char *gw,
                      char *msg, size_t ml);
/** Write @p v to file @p p (a sysctl). @return 0 or -1 (why in @p msg). */
int s0__gv_write_file(const char *p, const char *v, char *msg, size_t ml);

/* ---- gv_nft.c (used by gv_net.c) ---- */

/**
 * The nftables commands (text, libnftables input) making the hub's table:
 * forwarding only from sandbox interfaces through their chains, replies of
 * allowed connections, nothing to the hub itself. (transfer full)
 */
char *s0__gv_nft_base(void);

/**
 * The commands replacing the rules of chain `sb<slot>` with policy @p p
 * (NULL: reject everything) for the sandbox at @p addr; @p pool is the
 * sandboxes' pool (other sandboxes are reached only through rules naming
 * their addresses). (transfer full) NULL when OOM.
 */
char *s0__gv_nft_policy(int slot, const char *addr, const char *pool, const s0__netpolicy *p);

/**
 * Run @p cmds through libnftables in the calling thread's network
 * namespace (one transaction). @retval S0_EUNAVAILABLE @p reason, with
 * nftables' message.
 */
int s0__gv_nft_run(const char *cmds, const char *reason, s0_error **err);

#endif
