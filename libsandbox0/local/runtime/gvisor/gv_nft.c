/*
 * The hub's nftables rules (gv_net.h), as libnftables command text.
 *
 * Table `inet s0` in the hub namespace:
 *   map sbx      interface -> `jump sb<slot>` (one element per generation)
 *   chain forward (hook forward, policy drop):
 *       iifname vmap @sbx            every packet a sandbox sends: its chain
 *       ct state established,related accept   replies to what a chain allowed
 *   chain input (hook input, policy drop): nothing reaches the hub itself
 *       (its gateway addresses, a listener of the hub) but replies; the
 *       rest is rejected (TCP reset, else ICMP) so a connect fails at once.
 *   set routes   (sandbox address . TCP port) with a timeout each: the
 *       grants of public routes (gv_port.c puts one before each connect)
 *   chain output (hook output): the hub's own new TCP connections out of a
 *       sandbox interface start only to an element of @routes; others are
 *       dropped (measured: a `reject with tcp reset` in the output hook never
 *       reached the local socket, its connect timed out anyway; only this
 *       backend makes connections in the hub, and it grants each first). Replies and rejections the hub sends are
 *       no SYN: untouched.
 * Chain sb<slot>, from the sandbox's compiled policy (netpolicy.h), in the
 * order the simulated runtime decides:
 *   1. replies of connections the other side's policy allowed: accept;
 *   2. anything but IPv4 from the sandbox's own address: drop (the
 *      sandbox network is IPv4 only; no spoofing);
 *   3. deny rules: reject (TCP reset, else ICMP administratively
 *      prohibited, so a denied connect fails at once);
 *   4. allow rules: accept;
 *   5. the mode: allow-all accepts what is not for the sandbox pool,
 *      then everything is rejected.
 * Every packet is judged, not only a connection's first: an update that
 * denies a destination cuts connections already open to it.
 * Destinations: a rule's IPv4 CIDRs; IPv6 ones match nothing (not routed).
 * Domains cannot be matched on packets (no resolver is trusted here), so
 * they are enforced failing closed: an allow rule's domains match nothing;
 * a deny rule naming domains denies every destination on its ports. A
 * rule with no destination ("any") never covers the sandbox pool: another
 * sandbox is reached only through a rule naming its address (CIDR).
 */
#include <arpa/inet.h>
#include <nftables/libnftables.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "local/runtime/gvisor/gv_net.h"

char *s0__gv_nft_base(void)
{
	return s0__strdup("add table inet s0\n"
	                  "add map inet s0 sbx { type ifname : verdict ; }\n"
	                  "add chain inet s0 forward { type filter hook forward priority 0 ; "
	                  "policy drop ; }\n"
	                  "add chain inet s0 input { type filter hook input priority 0 ; "
	                  "policy drop ; }\n"
	                  "add rule inet s0 forward iifname vmap @sbx\n"
	                  "add rule inet s0 forward ct state established,related accept\n"
	                  "add rule inet s0 input ct state established,related accept\n"
	                  /* refused at once, as a sandbox's own denials are */
	                  "add rule inet s0 input meta l4proto tcp reject with tcp reset\n"
	                  "add rule inet s0 input reject with icmpx type admin-prohibited\n"
	                  /* public routes: the backend reaches a sandbox on a granted port only */
	                  "add set inet s0 routes { type ipv4_addr . inet_service ; flags timeout ; }\n"
	                  "add chain inet s0 output { type filter hook output priority 0 ; }\n"
	                  "add rule inet s0 output oifname \"" S0__GV_NET_IF_PREFIX "*\" tcp flags & "
	                  "(syn|ack) == syn ip daddr . tcp dport @routes accept\n"
	                  "add rule inet s0 output oifname \"" S0__GV_NET_IF_PREFIX "*\" tcp flags & "
	                  "(syn|ack) == syn drop\n");
}

/* "ip daddr { a/n, … } " of the rule's IPv4 CIDRs (host bits cleared);
 * false when it has none. */
static bool v4_set(s0__buf *b, const s0__netpolicy_rule *r)
{
	bool any = false;
	for (size_t i = 0; i < r->ncidrs; i++) {
		const s0__netpolicy_cidr *c = &r->cidrs[i];
		if (c->family != AF_INET)
			continue;
		uint32_t a = ((uint32_t)c->addr[0] << 24) | ((uint32_t)c->addr[1] << 16) |
		             ((uint32_t)c->addr[2] << 8) | c->addr[3];
		a &= c->prefix ? ~0u << (32 - c->prefix) : 0;
		s0__buf_printf(b, "%s%u.%u.%u.%u/%d", any ? ", " : "ip daddr { ", a >> 24,
		               (a >> 16) & 255, (a >> 8) & 255, a & 255, c->prefix);
		any = true;
	}
	if (any)
		s0__buf_puts(b, " } ");
	return any;
}

static void emit(s0__buf *b, int slot, const char *match, const char *l4, const char *port,
                 bool allow)
{
	const char *pm = port ? port : "";
	if (allow) {
		s0__buf_printf(b, "add rule inet s0 sb%d %s%saccept\n", slot, match, pm);
	} else if (l4 && !strcmp(l4, "tcp")) {
		s0__buf_printf(b, "add rule inet s0 sb%d %s%sreject with tcp reset\n", slot, match,
		               pm);
	} else {
		if (!l4)
			s0__buf_printf(b, "add rule inet s0 sb%d %smeta l4proto tcp reject with tcp reset\n",
			               slot, match);
		s0__buf_printf(b,
		               "add rule inet s0 sb%d %s%sreject with icmpx type admin-prohibited\n",
		               slot, match, pm);
	}
}

static void rule_cmds(s0__buf *b, int slot, const char *pool, const s0__netpolicy_rule *r)
{
	if (r->never)
		return;
	s0__buf dst = S0__BUF_INIT;
	bool named = v4_set(&dst, r);
	bool any_dest = r->ncidrs + r->ndomains == 0 || (!r->allow && r->ndomains > 0);
	if (any_dest) { /* a deny rule's domains: every destination (failing closed) */
		s0__buf_reset(&dst);
		if (r->allow)
			s0__buf_printf(&dst, "ip daddr != %s ", pool);
	} else if (!named) {
		s0__buf_free(&dst); /* only IPv6 CIDRs or an allow rule's domains */
		return;
	}
	const char *match = dst.data ? dst.data : "";
	if (r->nports == 0)
		emit(b, slot, match, NULL, NULL, r->allow);
	static const char *const L4[] = {NULL, "tcp", "udp", "sctp"};
	for (size_t i = 0; i < r->nports; i++) {
		const s0__netpolicy_port *p = &r->ports[i];
		char port[64];
		for (int proto = 1; proto <= 3; proto++) {
			if (p->proto ? p->proto != proto : proto == 3)
				continue;
			if (p->lo == p->hi)
				snprintf(port, sizeof port, "%s dport %d ", L4[proto], p->lo);
			else
				snprintf(port, sizeof port, "%s dport %d-%d ", L4[proto], p->lo, p->hi);
			emit(b, slot, match, L4[proto], port, r->allow);
		}
	}
	s0__buf_free(&dst);
}

char *s0__gv_nft_policy(int slot, const char *addr, const char *pool, const s0__netpolicy *p)
{
	s0__buf b = S0__BUF_INIT;
	s0__buf_printf(&b, "flush chain inet s0 sb%d\n", slot);
	s0__buf_printf(&b, "add rule inet s0 sb%d ct direction reply accept\n", slot);
	s0__buf_printf(&b, "add rule inet s0 sb%d meta nfproto != ipv4 drop\n", slot);
	s0__buf_printf(&b, "add rule inet s0 sb%d ip saddr != %s drop\n", slot, addr);
	s0__netpolicy_rule r;
	for (size_t i = 0; p && s0__netpolicy_rule_at(p, i, &r); i++)
		rule_cmds(&b, slot, pool, &r);
	if (p && !strcmp(s0__netpolicy_mode(p), "allow-all"))
		s0__buf_printf(&b, "add rule inet s0 sb%d ip daddr != %s accept\n", slot, pool);
	s0__buf_printf(&b, "add rule inet s0 sb%d meta l4proto tcp reject with tcp reset\n", slot);
	s0__buf_printf(&b, "add rule inet s0 sb%d reject with icmpx type admin-prohibited\n", slot);
	return s0__buf_detach(&b, NULL);
}

int s0__gv_nft_run(const char *cmds, const char *reason, s0_error **err)
{
	if (!cmds)
		return s0__error_nomem(err);
	struct nft_ctx *ctx = nft_ctx_new(NFT_CTX_DEFAULT);
	if (!ctx)
		return s0__error_set(err, S0_EUNAVAILABLE, reason, "nftables: no context");
	nft_ctx_buffer_output(ctx);
	nft_ctx_buffer_error(ctx);
	int rc = S0_OK;
	if (nft_run_cmd_from_buffer(ctx, cmds) != 0) {
		const char *msg = nft_ctx_get_error_buffer(ctx);
		rc = s0__error_set(err, S0_EUNAVAILABLE, reason, "nftables: %.600s",
		                   msg && *msg ? msg : "failed");
	}
	nft_ctx_free(ctx);
	return rc;
}
