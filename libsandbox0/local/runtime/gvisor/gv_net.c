/*
 * The hub and the generations' networks (gv_net.h): namespaces and links
 * through gv_netns.c, rules through gv_nft.c.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>
#include <netlink/route/route.h>

#include "common/json.h"
#include "local/runtime/gvisor/gv_net.h"

struct s0__gv_hub {
	pthread_mutex_t mu;
	int fd;            /* the hub namespace */
	char path[64];     /* /proc/<pid>/fd/<fd> */
	char *dir;         /* records */
	uint32_t base;     /* pool network (host order) */
	int prefix;
	char pool[24];
	int nslots;
	unsigned char *used;
};

struct s0__gv_net {
	s0__gv_hub *hub;
	char *id;
	int slot;
	int fd; /* the generation's namespace */
	char path[64];
	char ifname[IFNAMSIZ];
	char addr[16], gw[16];
	char mode[16];
	size_t rules;
};

/* ---- the hub ---- */

/* In the hub: IPv4 forwarding on (this namespace's sysctl), the table. */
static int hub_setup(void *arg, char *msg, size_t ml)
{
	(void)arg;
	if (s0__gv_write_file("/proc/sys/net/ipv4/ip_forward", "1", msg, ml) < 0)
		return -1;
	s0_error *e = NULL;
	char *base = s0__gv_nft_base();
	int rc = s0__gv_nft_run(base, "runtime_unavailable", &e);
	free(base);
	if (rc < 0)
		snprintf(msg, ml, "%s", s0_error_message(e));
	s0_error_free(e);
	return rc < 0 ? -1 : 0;
}

/* In the host's namespace: delete every link named with our prefix. */
static int host_sweep(void *arg, char *msg, size_t ml)
{
	(void)arg;
	struct nl_sock *sk = s0__gv_nl_open(msg, ml);
	struct nl_cache *cache = NULL;
	if (!sk)
		return -1;
	if (rtnl_link_alloc_cache(sk, AF_UNSPEC, &cache) >= 0) {
		for (struct nl_object *o = nl_cache_get_first(cache); o; o = nl_cache_get_next(o)) {
			const char *name = rtnl_link_get_name((struct rtnl_link *)o);
			if (name && !strncmp(name, S0__GV_NET_IF_PREFIX, strlen(S0__GV_NET_IF_PREFIX)))
				rtnl_link_delete(sk, (struct rtnl_link *)o);
		}
		nl_cache_free(cache);
	}
	nl_socket_free(sk);
	return 0;
}

static int parse_pool(const char *s, uint32_t *base, int *prefix)
{
	char buf[32];
	const char *slash = s ? strchr(s, '/') : NULL;
	if (!slash || (size_t)(slash - s) >= sizeof buf)
		return -1;
	memcpy(buf, s, (size_t)(slash - s));
	buf[slash - s] = 0;
	struct in_addr in;
	char *end;
	long p = strtol(slash + 1, &end, 10);
	if (inet_pton(AF_INET, buf, &in) != 1 || *end || end == slash + 1 || p < 8 || p > 28)
		return -1;
	*prefix = (int)p;
	*base = ntohl(in.s_addr) & (~0u << (32 - p));
	return 0;
}

static void ip_text(uint32_t a, char out[16])
{
	snprintf(out, 16, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

static void remove_records(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
}

void s0__gv_hub_close(s0__gv_hub *hub)
{
	if (!hub)
		return;
	if (hub->fd >= 0)
		close(hub->fd);
	pthread_mutex_destroy(&hub->mu);
	free(hub->used);
	free(hub->dir);
	free(hub);
}

int s0__gv_hub_open(const char *dir, s0__gv_hub **out, s0_error **err)
{
	const char *env = getenv("S0_GVISOR_NET");
	const char *pool = env && *env ? env : S0__GV_NET_POOL;
	uint32_t base;
	int prefix;
	if (parse_pool(pool, &base, &prefix) < 0)
		return s0__error_set(err, S0_EINVAL, "runtime_unavailable",
		                     "S0_GVISOR_NET=%s is not an IPv4 CIDR of /8 to /28", pool);
	s0__gv_hub *h = calloc(1, sizeof *h);
	if (!h)
		return s0__error_nomem(err);
	pthread_mutex_init(&h->mu, NULL);
	h->fd = -1;
	h->base = base;
	h->prefix = prefix;
	char b[16];
	ip_text(base, b);
	snprintf(h->pool, sizeof h->pool, "%s/%d", b, prefix);
	h->nslots = (int)((1ull << (32 - prefix)) / 4);
	if (h->nslots > 65536)
		h->nslots = 65536; /* s0v<slot> fits IFNAMSIZ */
	h->used = calloc((size_t)h->nslots, 1);
	h->dir = s0__strdup(dir);
	if (!h->used || !h->dir) {
		s0__gv_hub_close(h);
		return s0__error_nomem(err);
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		int rc = s0__error_set(err, S0_EUNAVAILABLE, "runtime_unavailable",
		                       "cannot make %s: %s", dir, strerror(errno));
		s0__gv_hub_close(h);
		return rc;
	}
	/* what a killed process left: its namespaces died with it and its
	 * runsc processes; only records stay (and, never made, host links) */
	remove_records(dir);
	char msg[512] = "";
	host_sweep(NULL, msg, sizeof msg); /* this thread is in the host's namespace */
	if (s0__gv_netns_new(&h->fd, h->path, msg, sizeof msg) < 0 ||
	    s0__gv_in_netns(h->fd, hub_setup, NULL, msg, sizeof msg) < 0) {
		s0__gv_hub_close(h);
		return s0__error_set(err, S0_EUNAVAILABLE, "runtime_unavailable",
		                     "cannot make the sandbox network hub: %s", msg);
	}
	*out = h;
	return S0_OK;
}

const char *s0__gv_hub_path(const s0__gv_hub *hub)
{
	return hub->path;
}

const char *s0__gv_hub_pool(const s0__gv_hub *hub)
{
	return hub->pool;
}

/* ---- a generation ---- */

typedef struct veth_job {
	s0__gv_net *n;
	int peer_ns;
	bool del;
} veth_job;

static char *chain_cmds(const s0__gv_net *n, bool add)
{
	if (add)
		return s0__asprintf("add chain inet s0 sb%d\n"
		                    "add element inet s0 sbx { \"%s\" : jump sb%d }\n",
		                    n->slot, n->ifname, n->slot);
	return s0__asprintf("delete element inet s0 sbx { \"%s\" }\n"
	                    "flush chain inet s0 sb%d\ndelete chain inet s0 sb%d\n",
	                    n->ifname, n->slot, n->slot);
}

/* In the hub: the veth pair (peer `eth0` made in the generation's
 * namespace), the hub end addressed and up, the chain blocking all. */
static int hub_add(void *arg, char *msg, size_t ml)
{
	veth_job *j = arg;
	s0__gv_net *n = j->n;
	struct nl_sock *sk = s0__gv_nl_open(msg, ml);
	if (!sk)
		return -1;
	struct rtnl_link *veth = rtnl_link_veth_alloc();
	struct rtnl_link *peer = veth ? rtnl_link_veth_get_peer(veth) : NULL;
	int e = peer ? 0 : -NLE_NOMEM;
	if (e >= 0) {
		rtnl_link_set_name(veth, n->ifname);
		rtnl_link_set_name(peer, "eth0");
		rtnl_link_set_ns_fd(peer, j->peer_ns);
		e = rtnl_link_add(sk, veth, NLM_F_CREATE | NLM_F_EXCL);
	}
	if (peer)
		rtnl_link_put(peer);
	rtnl_link_veth_release(veth);
	int rc = e < 0 ? s0__gv_nl_fail(msg, ml, "veth", e) : 0;
	char cidr[24];
	snprintf(cidr, sizeof cidr, "%s/30", n->gw);
	if (rc == 0)
		rc = s0__gv_link_setup(sk, n->ifname, cidr, NULL, msg, ml);
	nl_socket_free(sk);
	char *cmds = chain_cmds(n, true), *pol = s0__gv_nft_policy(n->slot, n->addr, n->hub->pool,
	                                                         NULL);
	char *all = cmds && pol ? s0__asprintf("%s%s", cmds, pol) : NULL;
	s0_error *err = NULL;
	if (rc == 0 && s0__gv_nft_run(all, "runtime_unavailable", &err) < 0) {
		snprintf(msg, ml, "%s", s0_error_message(err));
		rc = -1;
	}
	s0_error_free(err);
	free(cmds);
	free(pol);
	free(all);
	return rc;
}

/* In the hub: the chain and the veth pair gone (both ends with one). */
static int hub_del(void *arg, char *msg, size_t ml)
{
	veth_job *j = arg;
	s0__gv_net *n = j->n;
	int rc = 0;
	char *cmds = chain_cmds(n, false);
	s0_error *err = NULL;
	if (s0__gv_nft_run(cmds, "runtime_unavailable", &err) < 0) {
		snprintf(msg, ml, "%s", s0_error_message(err));
		rc = -1;
	}
	s0_error_free(err);
	free(cmds);
	struct nl_sock *sk = s0__gv_nl_open(msg, ml);
	struct rtnl_link *l = NULL;
	if (!sk)
		return -1;
	int e = rtnl_link_get_kernel(sk, 0, n->ifname, &l);
	if (e >= 0) {
		e = rtnl_link_delete(sk, l);
		rtnl_link_put(l);
		if (e < 0)
			rc = s0__gv_nl_fail(msg, ml, "veth delete", e);
	} else if (e != -NLE_OBJ_NOTFOUND && e != -NLE_NODEV) {
		rc = s0__gv_nl_fail(msg, ml, "veth lookup", e);
	}
	nl_socket_free(sk);
	return rc;
}

/* In the generation's namespace: lo up (runsc copies it: a loopback
 * that is down inside gVisor drops every local connection), eth0
 * addressed, up, routed via the hub. */
static int inner_setup(void *arg, char *msg, size_t ml)
{
	s0__gv_net *n = arg;
	struct nl_sock *sk = s0__gv_nl_open(msg, ml);
	if (!sk)
		return -1;
	char cidr[24];
	snprintf(cidr, sizeof cidr, "%s/30", n->addr);
	int rc = s0__gv_link_up(sk, "lo", msg, ml);
	if (rc == 0)
		rc = s0__gv_link_setup(sk, "eth0", cidr, n->gw, msg, ml);
	nl_socket_free(sk);
	return rc;
}

static char *record_path(const char *dir, const char *id)
{
	return s0__asprintf("%s/%s", dir, id);
}

static void net_release(s0__gv_net *n)
{
	if (n->fd >= 0)
		close(n->fd);
	if (n->slot >= 0) {
		pthread_mutex_lock(&n->hub->mu);
		n->hub->used[n->slot] = 0;
		pthread_mutex_unlock(&n->hub->mu);
	}
	free(n->id);
	free(n);
}

int s0__gv_net_prepare(s0__gv_hub *hub, const char *runtime_id, int slot, s0__gv_net **out,
                       s0_error **err)
{
	s0__gv_net *n = calloc(1, sizeof *n);
	if (!n || !(n->id = s0__strdup(runtime_id))) {
		free(n);
		return s0__error_nomem(err);
	}
	n->hub = hub;
	n->fd = -1;
	n->slot = -1;
	snprintf(n->mode, sizeof n->mode, "none");
	pthread_mutex_lock(&hub->mu);
	if (slot >= 0 && slot < hub->nslots && !hub->used[slot])
		n->slot = slot;
	for (int i = 0; n->slot < 0 && i < hub->nslots; i++)
		if (!hub->used[i])
			n->slot = i;
	if (n->slot >= 0)
		hub->used[n->slot] = 1;
	pthread_mutex_unlock(&hub->mu);
	if (n->slot < 0) {
		net_release(n);
		return s0__error_set(err, S0_EUNAVAILABLE, "runtime_unavailable",
		                     "no free /30 left in the sandbox pool %s", hub->pool);
	}
	uint32_t net = hub->base + 4u * (uint32_t)n->slot;
	ip_text(net + 2, n->addr);
	ip_text(net + 1, n->gw);
	snprintf(n->ifname, sizeof n->ifname, S0__GV_NET_IF_PREFIX "%d", n->slot);
	char msg[512] = "", *rec = record_path(hub->dir, runtime_id);
	int rc = rec ? S0_OK : s0__error_nomem(err);
	FILE *f = rec ? fopen(rec, "we") : NULL;
	if (rc == S0_OK && f) {
		fprintf(f, "slot=%d interface=%s address=%s\n", n->slot, n->ifname, n->addr);
		rc = fclose(f) == 0 ? S0_OK : -1;
	}
	if (rc == S0_OK && !f)
		rc = -1;
	if (rc == -1)
		rc = s0__error_set(err, S0_EUNAVAILABLE, "runtime_unavailable",
		                   "cannot write the network record %s: %s", rec, strerror(errno));
	veth_job j = {.n = n};
	bool added = false;
	if (rc == S0_OK && s0__gv_netns_new(&n->fd, n->path, msg, sizeof msg) < 0)
		rc = -1;
	if (rc == S0_OK) {
		j.peer_ns = n->fd;
		added = true; /* a half-made pair is deleted below */
		if (s0__gv_in_netns(hub->fd, hub_add, &j, msg, sizeof msg) < 0 ||
		    s0__gv_in_netns(n->fd, inner_setup, n, msg, sizeof msg) < 0)
			rc = -1;
	}
	if (rc == -1)
		rc = s0__error_set(err, S0_EUNAVAILABLE, "runtime_unavailable",
		                   "cannot make the network of %s: %s", runtime_id, msg);
	if (rc < 0) {
		char m2[512];
		if (added)
			s0__gv_in_netns(hub->fd, hub_del, &j, m2, sizeof m2);
		if (rec)
			unlink(rec);
		free(rec);
		net_release(n);
		return rc;
	}
	free(rec);
	*out = n;
	return S0_OK;
}

void s0__gv_net_free(s0__gv_net *n)
{
	if (!n)
		return;
	veth_job j = {.n = n, .del = true};
	char msg[512];
	bool gone = s0__gv_in_netns(n->hub->fd, hub_del, &j, msg, sizeof msg) == 0;
	if (!gone)
		fprintf(stderr, "gvisor: network of %s: %s\n", n->id, msg);
	char *rec = record_path(n->hub->dir, n->id);
	if (rec && gone)
		unlink(rec);
	free(rec);
	net_release(n);
}

const char *s0__gv_net_path(const s0__gv_net *n)
{
	return n->path;
}

int s0__gv_net_slot(const s0__gv_net *n)
{
	return n->slot;
}

const char *s0__gv_net_addr(const s0__gv_net *n)
{
	return n->addr;
}

const char *s0__gv_net_gateway(const s0__gv_net *n)
{
	return n->gw;
}

typedef struct apply_job {
	char *cmds;
	s0_error *err;
} apply_job;

static int hub_apply(void *arg, char *msg, size_t ml)
{
	apply_job *j = arg;
	(void)msg;
	(void)ml;
	return s0__gv_nft_run(j->cmds, "network_policy", &j->err) < 0 ? -1 : 0;
}

int s0__gv_net_apply(s0__gv_net *n, const s0__netpolicy *p, s0_error **err)
{
	if (!n)
		return s0__error_set(err, S0_EUNAVAILABLE, "network_policy",
		                     "the sandbox network policy could not be applied: the generation "
		                     "has no network namespace");
	apply_job j = {.cmds = s0__gv_nft_policy(n->slot, n->addr, n->hub->pool, p)};
	if (!j.cmds)
		return s0__error_nomem(err);
	char msg[512] = "";
	int rc = s0__gv_in_netns(n->hub->fd, hub_apply, &j, msg, sizeof msg);
	free(j.cmds);
	if (rc < 0) {
		if (j.err)
			return s0__error_put(err, j.err);
		return s0__error_set(err, S0_EUNAVAILABLE, "network_policy",
		                     "the sandbox network policy could not be applied: %s", msg);
	}
	snprintf(n->mode, sizeof n->mode, "%s", p ? s0__netpolicy_mode(p) : "none");
	n->rules = p ? s0__netpolicy_rule_count(p) : 0;
	return S0_OK;
}

cJSON *s0__gv_net_inspect(const s0__gv_net *n)
{
	cJSON *o = n ? cJSON_CreateObject() : NULL;
	if (!o)
		return NULL;
	char cidr[24];
	snprintf(cidr, sizeof cidr, "%s/30", n->addr);
	if (s0__json_add_str(o, "interface", n->ifname) || s0__json_add_str(o, "address", cidr) ||
	    s0__json_add_str(o, "gateway", n->gw) || s0__json_add_str(o, "namespace", n->path) ||
	    s0__json_add_str(o, "hub", n->hub->path) || s0__json_add_str(o, "mode", n->mode) ||
	    s0__json_add_i64(o, "rules", (int64_t)n->rules)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

bool s0__gv_net_present(const char *dir, const char *runtime_id, char *what, size_t n)
{
	char *rec = record_path(dir, runtime_id);
	struct stat st;
	bool left = rec && stat(rec, &st) == 0;
	if (left)
		snprintf(what, n, "network %s", rec);
	free(rec);
	return left;
}
