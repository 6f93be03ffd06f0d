/*
 * Network namespaces and links for gv_net.c (gv_net.h "gv_netns.c"): a
 * function run in a namespace on a short-lived thread of its own (setns(2)
 * of a network namespace changes only the calling thread), new namespaces
 * held by a descriptor, links, addresses and routes through libnl-route.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/route.h>

#include "local/runtime/gvisor/gv_net.h"

typedef struct ns_call {
	int fd; /* -1: a new namespace (unshare) */
	int (*fn)(void *arg, char *msg, size_t ml);
	void *arg;
	int rc;
	char msg[512];
} ns_call;

static void *ns_thread(void *p)
{
	ns_call *c = p;
	if (c->fd >= 0 ? setns(c->fd, CLONE_NEWNET) != 0 : unshare(CLONE_NEWNET) != 0) {
		c->rc = -1;
		snprintf(c->msg, sizeof c->msg, "%s: %s", c->fd >= 0 ? "setns" : "unshare",
		         strerror(errno));
		return NULL;
	}
	c->rc = c->fn(c->arg, c->msg, sizeof c->msg);
	return NULL;
}

/* fn(arg) in namespace @p fd (-1: a new one) on a thread of its own;
 * its failure message in @p msg. 0 or -1. */
int s0__gv_in_netns(int fd, int (*fn)(void *, char *, size_t), void *arg, char *msg, size_t ml)
{
	ns_call c = {.fd = fd, .fn = fn, .arg = arg};
	pthread_t t;
	if (pthread_create(&t, NULL, ns_thread, &c) != 0) {
		snprintf(msg, ml, "cannot start a thread");
		return -1;
	}
	pthread_join(t, NULL);
	if (c.rc < 0)
		snprintf(msg, ml, "%s", c.msg);
	return c.rc;
}

/* In a new namespace: keep a descriptor of it. */
static int grab_ns(void *arg, char *msg, size_t ml)
{
	int *fd = arg;
	*fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		snprintf(msg, ml, "open of the new namespace: %s", strerror(errno));
	return *fd < 0 ? -1 : 0;
}

int s0__gv_netns_new(int *fd, char path[64], char *msg, size_t ml)
{
	*fd = -1;
	if (s0__gv_in_netns(-1, grab_ns, fd, msg, ml) < 0)
		return -1;
	snprintf(path, 64, "/proc/%d/fd/%d", (int)getpid(), *fd);
	return 0;
}

struct nl_sock *s0__gv_nl_open(char *msg, size_t ml)
{
	struct nl_sock *sk = nl_socket_alloc();
	int e = sk ? nl_connect(sk, NETLINK_ROUTE) : -NLE_NOMEM;
	if (e < 0) {
		snprintf(msg, ml, "netlink: %s", nl_geterror(e));
		nl_socket_free(sk);
		return NULL;
	}
	return sk;
}

int s0__gv_nl_fail(char *msg, size_t ml, const char *what, int e)
{
	snprintf(msg, ml, "%s: %s", what, nl_geterror(e));
	return -1;
}

/* Link @p name up. */
int s0__gv_link_up(struct nl_sock *sk, const char *name, char *msg, size_t ml)
{
	struct rtnl_link *l = NULL, *ch = rtnl_link_alloc();
	int e = ch ? rtnl_link_get_kernel(sk, 0, name, &l) : -NLE_NOMEM;
	if (e >= 0) {
		rtnl_link_set_flags(ch, IFF_UP);
		e = rtnl_link_change(sk, l, ch, 0);
	}
	rtnl_link_put(ch);
	if (l)
		rtnl_link_put(l);
	return e < 0 ? s0__gv_nl_fail(msg, ml, name, e) : 0;
}

/* Address @p cidr on link @p name, the link up, and (gateway non-NULL) a
 * default route through @p gw. */
int s0__gv_link_setup(struct nl_sock *sk, const char *name, const char *cidr, const char *gw,
                      char *msg, size_t ml)
{
	struct rtnl_link *l = NULL;
	int e = rtnl_link_get_kernel(sk, 0, name, &l);
	if (e < 0)
		return s0__gv_nl_fail(msg, ml, name, e);
	int ifindex = rtnl_link_get_ifindex(l);
	struct rtnl_addr *a = rtnl_addr_alloc();
	struct nl_addr *local = NULL;
	if (!a || (e = nl_addr_parse(cidr, AF_INET, &local)) < 0)
		e = e < 0 ? e : -NLE_NOMEM;
	if (e >= 0) {
		rtnl_addr_set_ifindex(a, ifindex);
		rtnl_addr_set_local(a, local);
		rtnl_addr_set_prefixlen(a, nl_addr_get_prefixlen(local));
		e = rtnl_addr_add(sk, a, 0);
	}
	nl_addr_put(local);
	rtnl_addr_put(a);
	if (e < 0) {
		rtnl_link_put(l);
		return s0__gv_nl_fail(msg, ml, "address", e);
	}
	rtnl_link_put(l);
	if (s0__gv_link_up(sk, name, msg, ml) < 0)
		return -1;
	if (!gw)
		return 0;
	struct rtnl_route *r = rtnl_route_alloc();
	struct rtnl_nexthop *nh = rtnl_route_nh_alloc();
	struct nl_addr *dst = NULL, *via = NULL;
	e = r && nh ? 0 : -NLE_NOMEM;
	if (e >= 0 && (e = nl_addr_parse("0.0.0.0/0", AF_INET, &dst)) >= 0 &&
	    (e = nl_addr_parse(gw, AF_INET, &via)) >= 0) {
		rtnl_route_set_family(r, AF_INET);
		rtnl_route_set_dst(r, dst);
		rtnl_route_nh_set_ifindex(nh, ifindex);
		rtnl_route_nh_set_gateway(nh, via);
		rtnl_route_add_nexthop(r, nh);
		nh = NULL; /* the route owns it */
		e = rtnl_route_add(sk, r, NLM_F_CREATE | NLM_F_EXCL);
	}
	if (nh)
		rtnl_route_nh_free(nh);
	nl_addr_put(dst);
	nl_addr_put(via);
	rtnl_route_put(r);
	return e < 0 ? s0__gv_nl_fail(msg, ml, "default route", e) : 0;
}

int s0__gv_write_file(const char *p, const char *v, char *msg, size_t ml)
{
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? write(fd, v, strlen(v)) : -1;
	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)strlen(v)) {
		snprintf(msg, ml, "%s: %s", p, strerror(errno));
		return -1;
	}
	return 0;
}
