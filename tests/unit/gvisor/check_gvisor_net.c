/*
 * The gvisor runtime's network for real (local/runtime/gvisor/gv_net.h),
 * as root with runsc installed (part 45-gvisor): policies checked against
 * peers in network namespaces this test makes and attaches to the hub
 * (a tiny TCP listener each, answering its name), never beyond the hub:
 * block-all blocks, allow lists let through only what they list, a live
 * update takes effect on the running sandbox (and cuts connections it
 * denies), a forged source address gets nowhere, two sandboxes cannot
 * reach each other unless a rule names the other's address, the host's
 * loopback and addresses are out of reach, stop and kill -9 leave no
 * namespace, veth or chain behind, and the restore hook re-makes the same
 * addresses. Also the capabilities of a sandbox (the documented set of
 * docs/security.md, in the bundle and inside), and public routes' connects
 * from the hub (gv_port.c): through block-all, on granted ports only.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "gv_peer.h"
#include "common/json.h"
#include "local/runtime/gvisor/gv_int.h"
#include "local/runtime/runtime.h"
#include "lt.h"

typedef struct gv_fix {
	const s0__rt_driver *d;
	char *dir;
	s0__rt_host *h;
	s0__rt_gen *g;
	char rid[48];
} gv_fix;

static void fix_open(gv_fix *f)
{
	memset(f, 0, sizeof *f);
	ck_assert_int_eq(s0__rt_driver_find("gvisor", &f->d, NULL), S0_OK);
	s0_error *e = NULL;
	int rc = f->d->probe(&e);
	ck_assert_msg(rc == S0_OK, "gvisor cannot run here: %s", e ? s0_error_message(e) : "?");
	f->dir = s0_test_tmpdir("gvnet");
	s0__rt_host_opts o = {.state_dir = f->dir};
	rc = f->d->open(&o, &f->h, &e);
	ck_assert_msg(rc == S0_OK, "open: %s", e ? s0_error_message(e) : "?");
}

static void fix_start(gv_fix *f, const char *sandbox)
{
	snprintf(f->rid, sizeof f->rid, "rt-gvnet-%s", sandbox);
	s0__rt_start req = {.sandbox_id = sandbox, .runtime_id = f->rid, .generation = 1,
	                    .cpu_millis = 500, .memory_bytes = 256LL << 20};
	s0_error *e = NULL;
	int rc = f->d->start(f->h, &req, &f->g, &e);
	ck_assert_msg(rc == S0_OK, "start: %s", e ? s0_error_message(e) : "?");
	rc = f->d->ready(f->g, &e);
	ck_assert_msg(rc == S0_OK, "ready: %s", e ? s0_error_message(e) : "?");
}

static void fix_stop(gv_fix *f)
{
	char ifname[IFNAMSIZ];
	cJSON *o = f->d->inspect(f->g);
	snprintf(ifname, sizeof ifname, "%s",
	         s0__json_str(cJSON_GetObjectItem(o, "network"), "interface"));
	cJSON_Delete(o);
	ck_assert(ifname[0]);
	f->d->stop(f->g);
	f->g = NULL;
	s0_error *e = NULL;
	int rc = f->d->terminal_proof(f->h, f->rid, &e);
	ck_assert_msg(rc == S0_OK, "terminal proof: %s", e ? s0_error_message(e) : "?");
	/* the hub end of its veth is gone with the pair */
	char cmd[512];
	snprintf(cmd, sizeof cmd, "nsenter --net=%s ip link show %s >/dev/null 2>&1",
	         s0__gv_hub_path(f->h->hub), ifname);
	ck_assert_int_ne(system(cmd), 0);
}

static void fix_close(gv_fix *f)
{
	if (f->g)
		f->d->stop(f->g);
	f->d->close(f->h);
	s0_test_rmrf(f->dir);
	free(f->dir);
}

static void apply(gv_fix *f, const char *policy)
{
	s0__netpolicy *p = NULL;
	cJSON *j = policy ? cJSON_Parse(policy) : NULL;
	ck_assert(!policy || j);
	ck_assert_int_eq(s0__netpolicy_compile(j, &p, NULL), S0_OK);
	cJSON_Delete(j);
	s0_error *e = NULL;
	int rc = f->d->network_apply(f->g, p, &e);
	ck_assert_msg(rc == S0_OK, "apply %s: %s", policy, e ? s0_error_message(e) : "?");
}

/* Run @p code in a fresh REPL of @p f; its stdout (free()). */
static char *sh(gv_fix *f, const char *code)
{
	cJSON *d = NULL;
	int st = 0;
	s0_error *e = NULL;
	cJSON *b = cJSON_Parse("{\"type\":\"repl\"}");
	s0__rt_proc_call c = {.op = S0__RT_CTX_CREATE, .body = b};
	int rc = f->d->proc_call(f->g, &c, &d, &st, &e);
	cJSON_Delete(b);
	ck_assert_msg(rc == S0_OK, "create: %s", e ? s0_error_message(e) : "?");
	char *id = strdup(s0__json_str(d, "id"));
	cJSON_Delete(d);
	b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "data", code);
	c = (s0__rt_proc_call){.op = S0__RT_CTX_EXEC, .id = id, .body = b};
	rc = f->d->proc_call(f->g, &c, &d, &st, &e);
	cJSON_Delete(b);
	ck_assert_msg(rc == S0_OK, "exec: %s", e ? s0_error_message(e) : "?");
	char *out = strdup(s0__json_str(d, "stdout") ? s0__json_str(d, "stdout") : "");
	cJSON_Delete(d);
	free(id);
	return out;
}

/* What a TCP connection from the sandbox to @p ip:@p port reads: the
 * peer's name, or "refused" (rejected, no route, nothing listening). */
static char *connect_from(gv_fix *f, const char *ip, int port)
{
	char code[256];
	snprintf(code, sizeof code,
	         "nc -w 3 %s %d </dev/null 2>/dev/null > /tmp/nc.out; "
	         "grep -q . /tmp/nc.out && cat /tmp/nc.out || echo refused",
	         ip, port);
	return sh(f, code);
}

static void assert_reach(gv_fix *f, const char *ip, int port, const char *want)
{
	char *got = connect_from(f, ip, port);
	char w[64];
	snprintf(w, sizeof w, "%s\n", want);
	ck_assert_msg(!strcmp(got, w), "%s:%d: got \"%s\", want \"%s\"", ip, port, got, want);
	free(got);
}

/* The sandbox's address from its inspection. */
static void sandbox_ip(gv_fix *f, char out[16])
{
	cJSON *o = f->d->inspect(f->g);
	const char *a = s0__json_str(cJSON_GetObjectItem(o, "network"), "address");
	ck_assert_ptr_nonnull(a);
	snprintf(out, 16, "%.*s", (int)strcspn(a, "/"), a);
	cJSON_Delete(o);
}

/* Block-all, allow lists, deny lists and allow-all, each applied live to
 * one running sandbox, against two peers with two ports each. */
START_TEST(policies_enforced_live)
{
	gv_fix f;
	fix_open(&f);
	fix_start(&f, "sbnet");
	gv_peer p1, p2;
	gv_peer_start(s0__gv_hub_path(f.h->hub), 0, "p1", &p1);
	gv_peer_start(s0__gv_hub_path(f.h->hub), 1, "p2", &p2);
	/* before any policy: nothing leaves (failing closed) */
	assert_reach(&f, p1.ip, 8080, "refused");
	apply(&f, "{\"mode\":\"allow-all\"}");
	assert_reach(&f, p1.ip, 8080, "p1:8080");
	assert_reach(&f, p2.ip, 9090, "p2:9090");
	apply(&f, "{\"mode\":\"block-all\"}");
	assert_reach(&f, p1.ip, 8080, "refused");
	assert_reach(&f, p2.ip, 9090, "refused");
	/* allow lists: only the listed destination on the listed port */
	char pol[512];
	snprintf(pol, sizeof pol,
	         "{\"mode\":\"block-all\",\"egress\":{\"allowedCidrs\":[\"%s/32\"],"
	         "\"allowedPorts\":[{\"port\":8080,\"protocol\":\"tcp\"}]}}",
	         p1.ip);
	apply(&f, pol);
	assert_reach(&f, p1.ip, 8080, "p1:8080");
	assert_reach(&f, p1.ip, 9090, "refused");
	assert_reach(&f, p2.ip, 8080, "refused");
	/* a traffic rule with a port range, any destination outside the pool */
	apply(&f, "{\"mode\":\"block-all\",\"egress\":{\"trafficRules\":[{\"action\":\"allow\","
	          "\"ports\":[{\"port\":9000,\"endPort\":9999}]}]}}");
	assert_reach(&f, p1.ip, 9090, "p1:9090");
	assert_reach(&f, p2.ip, 9090, "p2:9090");
	assert_reach(&f, p2.ip, 8080, "refused");
	/* deny lists under allow-all; a denial wins over an allowance */
	snprintf(pol, sizeof pol,
	         "{\"mode\":\"allow-all\",\"egress\":{\"deniedCidrs\":[\"%s/30\"],"
	         "\"allowedCidrs\":[\"%s/32\"],\"deniedPorts\":[{\"port\":9090}]}}",
	         p2.ip, p2.ip);
	apply(&f, pol);
	assert_reach(&f, p1.ip, 8080, "p1:8080");
	assert_reach(&f, p1.ip, 9090, "refused");
	assert_reach(&f, p2.ip, 8080, "refused");
	/* a deny rule naming a domain denies every destination (failing closed) */
	apply(&f, "{\"mode\":\"allow-all\",\"egress\":{\"deniedDomains\":[\"example.com\"]}}");
	assert_reach(&f, p1.ip, 8080, "refused");
	/* inspection tells the mode applied */
	apply(&f, "{\"mode\":\"block-all\"}");
	cJSON *o = f.d->inspect(f.g);
	ck_assert_str_eq(s0__json_str(cJSON_GetObjectItem(o, "network"), "mode"), "block-all");
	cJSON_Delete(o);
	apply(&f, NULL); /* no policy: the template default, allow-all */
	assert_reach(&f, p2.ip, 8080, "p2:8080");
	gv_peer_stop(&p1);
	gv_peer_stop(&p2);
	fix_stop(&f);
	fix_close(&f);
}
END_TEST

/* Wait (bounded) until the sandbox's web server listens on 7070
 * (its netstat). */
static void wait_listening(gv_fix *f)
{
	char *o = sh(f, "i=0; while [ $i -lt 400 ]; do netstat -ltn | grep -q ':7070 .*LISTEN' "
	                "&& break; i=$((i+1)); sleep 0.05; done; echo $i");
	if (atoi(o) >= 400) {
		ck_assert_msg(0, "no listener on 7070");
	}
	free(o);
}

/* A connection from @p f to the listener loop at @p ip:7070 once it listens. */
static void assert_loop(gv_fix *f, gv_fix *server, const char *ip, const char *want)
{
	wait_listening(server);
	assert_reach(f, ip, 7070, want);
}

/* A connection made in the hub (the thread joins it) to ip:port: 0, or
 * the errno of the connect. */
typedef struct hub_conn {
	const char *ip;
	int port;
	int err;
} hub_conn;

static int hub_connect(void *arg, char *msg, size_t ml)
{
	(void)msg;
	(void)ml;
	hub_conn *c = arg;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = {1, 0};
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)c->port)};
	inet_pton(AF_INET, c->ip, &sa.sin_addr);
	c->err = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 ? 0 : errno;
	close(fd);
	return 0;
}

/* What connect_port(@p port) of @p f reads to its end, or its error's reason. */
static char *route_read(gv_fix *f, int port)
{
	int fd = -1;
	s0_error *e = NULL;
	if (f->d->connect_port(f->g, port, &fd, &e) < 0) {
		char *why = strdup(s0_error_reason(e));
		s0_error_free(e);
		return why;
	}
	char buf[256];
	size_t n = 0;
	ssize_t k;
	while (n < sizeof buf - 1 && (k = read(fd, buf + n, sizeof buf - 1 - n)) > 0)
		n += (size_t)k;
	close(fd);
	buf[n] = 0;
	return strdup(buf);
}

/* Public routes (gv_port.c; SEC-94): under block-all, connect_port reaches
 * the sandbox's listener (the policy judges what the sandbox sends, not
 * the route's inbound connection); a port where nothing listens is
 * port_not_listening; a connection the hub starts to a port no route
 * granted never connects although a listener is there. */
static void route_ports(gv_fix *b, const char *ipb)
{
	apply(b, "{\"mode\":\"block-all\"}");
	char *o = sh(b, "(while :; do nc -l -p 7071 -e echo seven-one; done) >/dev/null 2>&1 & "
	                "i=0; while [ $i -lt 400 ]; do netstat -ltn | grep -q ':7071 .*LISTEN' "
	                "&& break; i=$((i+1)); sleep 0.05; done; echo $i");
	ck_assert_int_lt(atoi(o), 400);
	free(o);
	hub_conn c = {.ip = ipb, .port = 7071};
	char msg[256];
	int hub = open(s0__gv_hub_path(b->h->hub), O_RDONLY | O_CLOEXEC);
	ck_assert_int_eq(s0__gv_in_netns(hub, hub_connect, &c, msg, sizeof msg), 0);
	close(hub);
	/* dropped: it never connects (a timeout, 1 s) */
	ck_assert_msg(c.err == EINPROGRESS || c.err == ETIMEDOUT,
	              "an ungranted connect from the hub: %s", c.err ? strerror(c.err) : "connected");
	char *got = route_read(b, 7070);
	ck_assert_str_eq(got, "from-b\n");
	free(got);
	got = route_read(b, 7071);
	ck_assert_str_eq(got, "seven-one\n");
	free(got);
	/* measured (printed): a connect_port, its nft grant and hub thread
	 * included, to a port that refuses (the listeners above serve one
	 * connection per restart of nc) */
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 20; i++) {
		int fd = -1;
		ck_assert_int_eq(b->d->connect_port(b->g, 7072, &fd, NULL), S0_EUNAVAILABLE);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("connect_port: %.2f ms each (20, refused)\n",
	       ((t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6) / 20);
	got = route_read(b, 7072);
	ck_assert_str_eq(got, "port_not_listening");
	free(got);
	got = route_read(b, 0);
	ck_assert_str_eq(got, "bad_request");
	free(got);
}

/* Under allow-all a sandbox reaches a peer but not another sandbox, nor
 * the hub; a rule naming the other's address lets it through. */
START_TEST(sandboxes_cannot_reach_each_other)
{
	gv_fix a, b;
	fix_open(&a);
	fix_start(&a, "sbna");
	b = a;
	b.g = NULL;
	fix_start(&b, "sbnb");
	apply(&a, "{\"mode\":\"allow-all\"}");
	apply(&b, "{\"mode\":\"allow-all\"}");
	char ipa[16], ipb[16];
	sandbox_ip(&a, ipa);
	sandbox_ip(&b, ipb);
	ck_assert_str_ne(ipa, ipb);
	/* a listener loop inside each sandbox, answering its name (whatever it
	 * reads: the answer does not race the client's end of input) */
	char *o = sh(&b, "(while :; do nc -l -p 7070 -e echo from-b; done) >/dev/null 2>&1 & echo ok");
	ck_assert_str_eq(o, "ok\n");
	free(o);
	o = sh(&a, "(while :; do nc -l -p 7070 -e echo from-a; done) >/dev/null 2>&1 & echo ok");
	ck_assert_str_eq(o, "ok\n");
	free(o);
	/* each listens: its own loopback reaches it */
	assert_loop(&b, &b, "127.0.0.1", "from-b");
	assert_loop(&a, &b, ipb, "refused");
	assert_loop(&b, &a, ipa, "refused");
	/* the hub (a's gateway) takes nothing */
	cJSON *in = a.d->inspect(a.g);
	char gw[16];
	snprintf(gw, sizeof gw, "%s", s0__json_str(cJSON_GetObjectItem(in, "network"), "gateway"));
	cJSON_Delete(in);
	assert_reach(&a, gw, 22, "refused");
	char pol[256];
	snprintf(pol, sizeof pol, "{\"mode\":\"allow-all\",\"egress\":{\"allowedCidrs\":[\"%s\"]}}",
	         ipb);
	apply(&a, pol);
	assert_loop(&a, &b, ipb, "from-b");
	assert_loop(&b, &a, ipa, "refused"); /* b's policy did not change */
	route_ports(&b, ipb);
	fix_stop(&b);
	fix_stop(&a);
	fix_close(&a);
}
END_TEST

/* The host's loopback and addresses are out of reach under allow-all: a
 * host listener on every address never sees a connection. */
START_TEST(host_unreachable)
{
	gv_fix f;
	fix_open(&f);
	fix_start(&f, "sbhost");
	apply(&f, "{\"mode\":\"allow-all\"}");
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	ck_assert_int_eq(bind(s, (struct sockaddr *)&a, sizeof a), 0);
	ck_assert_int_eq(listen(s, 16), 0);
	socklen_t al = sizeof a;
	ck_assert_int_eq(getsockname(s, (struct sockaddr *)&a, &al), 0);
	int port = ntohs(a.sin_port);
	assert_reach(&f, "127.0.0.1", port, "refused");
	struct ifaddrs *ifs = NULL, *i;
	ck_assert_int_eq(getifaddrs(&ifs), 0);
	int tried = 0;
	for (i = ifs; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || (i->ifa_flags & IFF_LOOPBACK))
			continue;
		char ip[16];
		inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, ip, sizeof ip);
		assert_reach(&f, ip, port, "refused");
		tried++;
	}
	freeifaddrs(ifs);
	fprintf(stderr, "host addresses tried: %d (+ loopback), port %d\n", tried, port);
	ck_assert_int_lt(accept(s, NULL, NULL), 0);
	ck_assert_int_eq(errno, EAGAIN);
	close(s);
	fix_stop(&f);
	fix_close(&f);
}
END_TEST

/* The capabilities are the documented set (docs/security.md): in the
 * bundle's every set, and effective inside. */
START_TEST(capabilities_documented_set)
{
	gv_fix f;
	fix_open(&f);
	fix_start(&f, "sbcaps");
	char p[512];
	snprintf(p, sizeof p, "%s/gvisor/bundles/%s/config.json", f.dir, f.rid);
	FILE *fp = fopen(p, "r");
	ck_assert_ptr_nonnull(fp);
	char buf[65536];
	size_t n = fread(buf, 1, sizeof buf - 1, fp);
	fclose(fp);
	buf[n] = 0;
	cJSON *c = cJSON_Parse(buf);
	ck_assert_ptr_nonnull(c);
	cJSON *caps = cJSON_GetObjectItem(cJSON_GetObjectItem(c, "process"), "capabilities");
	static const char *const want =
		"CAP_AUDIT_WRITE,CAP_CHOWN,CAP_DAC_OVERRIDE,CAP_FOWNER,CAP_FSETID,CAP_KILL,"
		"CAP_MKNOD,CAP_NET_BIND_SERVICE,CAP_SETFCAP,CAP_SETGID,CAP_SETPCAP,CAP_SETUID,"
		"CAP_SYS_CHROOT";
	static const char *const sets[] = {"bounding", "effective", "permitted"};
	for (size_t k = 0; k < 3; k++) {
		cJSON *set = cJSON_GetObjectItem(caps, sets[k]);
		int m = cJSON_GetArraySize(set);
		const char *names[32];
		ck_assert_int_le(m, 32);
		for (int i = 0; i < m; i++)
			names[i] = cJSON_GetArrayItem(set, i)->valuestring;
		for (int i = 0; i < m; i++) /* sort */
			for (int j = i + 1; j < m; j++)
				if (strcmp(names[i], names[j]) > 0) {
					const char *t = names[i];
					names[i] = names[j];
					names[j] = t;
				}
		char joined[1024] = "";
		for (int i = 0; i < m; i++)
			snprintf(joined + strlen(joined), sizeof joined - strlen(joined), "%s%s",
			         i ? "," : "", names[i]);
		ck_assert_msg(!strcmp(joined, want), "%s: %s", sets[k], joined);
	}
	ck_assert_ptr_null(cJSON_GetObjectItem(caps, "ambient"));
	ck_assert_ptr_null(cJSON_GetObjectItem(caps, "inheritable"));
	cJSON_Delete(c);
	/* inside: the same set, effective and bounding (bits of the set above) */
	char *o = sh(&f, "grep -E '^Cap(Eff|Bnd|Amb):' /proc/self/status | tr -s '\\t ' ' '");
	ck_assert_str_eq(o, "CapEff: 00000000a80405fb\nCapBnd: 00000000a80405fb\n"
	                    "CapAmb: 0000000000000000\n");
	free(o);
	o = sh(&f, "ping -c 1 -W 1 127.0.0.1 >/dev/null 2>&1 && echo raw || echo no-raw");
	ck_assert_str_eq(o, "no-raw\n");
	free(o);
	fix_stop(&f);
	fix_close(&f);
}
END_TEST

/* The network namespace inode (net:[N]) of @p path; 0 when unreadable. */
static unsigned long ns_inode(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (unsigned long)st.st_ino : 0;
}

/* Whether any host process is in the network namespace of inode @p ino. */
static bool ns_in_use(unsigned long ino)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	bool used = false;
	while (d && !used && (de = readdir(d))) {
		char p[300];
		snprintf(p, sizeof p, "/proc/%s/ns/net", de->d_name);
		used = de->d_name[0] >= '0' && de->d_name[0] <= '9' && ns_inode(p) == ino;
	}
	if (d)
		closedir(d);
	return used;
}

/* The restore hook (gv_net.h): a generation's network re-made with the
 * slot recorded earlier gets the same addresses; a slot in use gives
 * another one; free removes the veth, the chain and the record. Timed. */
START_TEST(prepare_same_addresses)
{
	gv_fix f;
	fix_open(&f);
	s0__gv_hub *hub = f.h->hub;
	s0__gv_net *n1 = NULL, *n2 = NULL, *n3 = NULL;
	s0_error *e = NULL;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(s0__gv_net_prepare(hub, "rt-hook-1", 5, &n1, &e), S0_OK);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "network prepare: %.1f ms\n",
	        (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	ck_assert_int_eq(s0__gv_net_slot(n1), 5);
	char addr[16];
	snprintf(addr, sizeof addr, "%s", s0__gv_net_addr(n1));
	ck_assert_str_eq(addr, "10.200.0.22");
	ck_assert_str_eq(s0__gv_net_gateway(n1), "10.200.0.21");
	/* the namespace holds eth0 with the address, routed via the gateway */
	char cmd[512];
	snprintf(cmd, sizeof cmd,
	         "nsenter --net=%s sh -c 'ip -4 -o addr show eth0 | grep -q \" %s/30 \" && "
	         "ip route | grep -q \"default via 10.200.0.21 dev eth0\"'",
	         s0__gv_net_path(n1), addr);
	ck_assert_int_eq(system(cmd), 0);
	/* slot 5 taken: another one */
	ck_assert_int_eq(s0__gv_net_prepare(hub, "rt-hook-2", 5, &n2, &e), S0_OK);
	ck_assert_int_ne(s0__gv_net_slot(n2), 5);
	char what[256];
	char netdir[512];
	snprintf(netdir, sizeof netdir, "%s/gvisor/net", f.dir);
	ck_assert(s0__gv_net_present(netdir, "rt-hook-1", what, sizeof what));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	s0__gv_net_free(n1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "network free: %.1f ms\n",
	        (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	ck_assert(!s0__gv_net_present(netdir, "rt-hook-1", what, sizeof what));
	snprintf(cmd, sizeof cmd,
	         "nsenter --net=%s sh -c '! ip link show s0v5 2>/dev/null && "
	         "! nft list chain inet s0 sb5 2>/dev/null'",
	         s0__gv_hub_path(hub));
	ck_assert_int_eq(system(cmd), 0);
	/* re-made for a restore: the same slot, the same addresses */
	ck_assert_int_eq(s0__gv_net_prepare(hub, "rt-hook-1b", 5, &n3, &e), S0_OK);
	ck_assert_str_eq(s0__gv_net_addr(n3), addr);
	s0__gv_net_free(n3);
	s0__gv_net_free(n2);
	/* bad pool: a clear error */
	setenv("S0_GVISOR_NET", "10.0.0.0/30", 1);
	s0__gv_hub *bad = NULL;
	ck_assert_int_eq(s0__gv_hub_open(netdir, &bad, &e), S0_EINVAL);
	ck_assert_msg(strstr(s0_error_message(e), "S0_GVISOR_NET"), "%s", s0_error_message(e));
	s0_error_free(e);
	unsetenv("S0_GVISOR_NET");
	fix_close(&f);
}
END_TEST

/* The hub's filter on its own, with the host kernel's stack in a
 * generation's namespace instead of gVisor's (no runsc: the namespace of
 * s0__gv_net_prepare()): under allow-all a connection from the
 * generation's address reaches a peer, one from a forged source address
 * does not, and a policy update applies to that namespace's next
 * connection. python3 makes the connections (it can bind a source). */
START_TEST(forged_source_dropped)
{
	gv_fix f;
	fix_open(&f);
	s0__gv_hub *hub = f.h->hub;
	s0__gv_net *n = NULL;
	s0_error *e = NULL;
	ck_assert_int_eq(s0__gv_net_prepare(hub, "rt-spoof", -1, &n, &e), S0_OK);
	gv_peer p;
	gv_peer_start(s0__gv_hub_path(hub), 3, "ps", &p);
	s0__netpolicy *pol = NULL;
	cJSON *j = cJSON_Parse("{\"mode\":\"allow-all\"}");
	ck_assert_int_eq(s0__netpolicy_compile(j, &pol, NULL), S0_OK);
	cJSON_Delete(j);
	ck_assert_int_eq(s0__gv_net_apply(n, pol, &e), S0_OK);
	s0__netpolicy_free(pol);
	gv_run_cmd("nsenter --net=%s ip addr add 10.9.9.9/32 dev eth0", s0__gv_net_path(n));
	static const char *const py =
		"import socket,sys\n"
		"s=socket.socket(); s.settimeout(1)\n"
		"s.bind((sys.argv[1],0))\n"
		"try:\n s.connect((sys.argv[2],8080)); print(s.recv(64).decode().strip())\n"
		"except OSError: print('refused')\n";
	char script[256], cmd[1024];
	snprintf(script, sizeof script, "%s/conn.py", f.dir);
	FILE *fp = fopen(script, "w");
	ck_assert_ptr_nonnull(fp);
	fputs(py, fp);
	fclose(fp);
	const char *srcs[] = {s0__gv_net_addr(n), "10.9.9.9"};
	const char *want[] = {"ps:8080", "refused"};
	for (int i = 0; i < 2; i++) {
		snprintf(cmd, sizeof cmd, "nsenter --net=%s python3 %s %s %s", s0__gv_net_path(n),
		         script, srcs[i], p.ip);
		FILE *o = popen(cmd, "r");
		char line[64] = "";
		ck_assert_ptr_nonnull(fgets(line, sizeof line, o));
		pclose(o);
		line[strcspn(line, "\n")] = 0;
		ck_assert_msg(!strcmp(line, want[i]), "from %s: %s", srcs[i], line);
	}
	gv_peer_stop(&p);
	s0__gv_net_free(n);
	fix_close(&f);
}
END_TEST

static void write_script(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fputs(text, fp);
	fclose(fp);
}

/* A connection open before a tightening update is cut by it (every
 * packet is judged, not only a connection's first): an echo server in a
 * peer's namespace, a client in a generation's namespace (the host
 * kernel's stack, as forged_source_dropped), block-all applied between
 * two exchanges on the same connection. */
START_TEST(update_cuts_open_connections)
{
	gv_fix f;
	fix_open(&f);
	s0__gv_hub *hub = f.h->hub;
	s0__gv_net *n = NULL;
	s0_error *e = NULL;
	ck_assert_int_eq(s0__gv_net_prepare(hub, "rt-cut", -1, &n, &e), S0_OK);
	gv_peer p;
	gv_peer_start(s0__gv_hub_path(hub), 4, "pc", &p);
	s0__netpolicy *pol = NULL;
	cJSON *j = cJSON_Parse("{\"mode\":\"allow-all\"}");
	ck_assert_int_eq(s0__netpolicy_compile(j, &pol, NULL), S0_OK);
	cJSON_Delete(j);
	ck_assert_int_eq(s0__gv_net_apply(n, pol, &e), S0_OK);
	s0__netpolicy_free(pol);
	char srv[256], cli[256], flag[256], cmd[1024], line[64];
	snprintf(srv, sizeof srv, "%s/srv.py", f.dir);
	snprintf(cli, sizeof cli, "%s/cli.py", f.dir);
	snprintf(flag, sizeof flag, "%s/tightened", f.dir);
	write_script(srv, "import socket\n"
	                  "l=socket.socket(); l.bind(('0.0.0.0',7000)); l.listen(1)\n"
	                  "print('ready', flush=True)\n"
	                  "c,_=l.accept()\n"
	                  "while True:\n"
	                  " d=c.recv(64)\n"
	                  " if not d: break\n"
	                  " c.sendall(d)\n");
	write_script(cli, "import os,socket,sys,time\n"
	                  "s=socket.create_connection((sys.argv[1],7000),timeout=3)\n"
	                  "s.sendall(b'one'); print(s.recv(64).decode(), flush=True)\n"
	                  "for i in range(1000):\n"
	                  " if os.path.exists(sys.argv[2]): break\n"
	                  " time.sleep(0.01)\n"
	                  "try:\n"
	                  " s.settimeout(2); s.sendall(b'two'); d=s.recv(64)\n"
	                  " print(d.decode() if d else 'cut')\n"
	                  "except OSError: print('cut')\n");
	snprintf(cmd, sizeof cmd, "exec timeout 30 nsenter --net=/proc/%d/ns/net python3 %s",
	         (int)p.pid, srv);
	FILE *so = popen(cmd, "r");
	ck_assert_ptr_nonnull(fgets(line, sizeof line, so));
	ck_assert_str_eq(line, "ready\n");
	snprintf(cmd, sizeof cmd, "exec timeout 30 nsenter --net=%s python3 %s %s %s",
	         s0__gv_net_path(n), cli, p.ip, flag);
	FILE *co = popen(cmd, "r");
	ck_assert_ptr_nonnull(fgets(line, sizeof line, co));
	ck_assert_str_eq(line, "one\n"); /* the connection is open and allowed */
	j = cJSON_Parse("{\"mode\":\"block-all\"}");
	ck_assert_int_eq(s0__netpolicy_compile(j, &pol, NULL), S0_OK);
	cJSON_Delete(j);
	ck_assert_int_eq(s0__gv_net_apply(n, pol, &e), S0_OK);
	s0__netpolicy_free(pol);
	write_script(flag, "");
	ck_assert_ptr_nonnull(fgets(line, sizeof line, co));
	ck_assert_str_eq(line, "cut\n");
	pclose(co);
	gv_peer_stop(&p); /* the server's namespace goes with the peer; timeout ends it */
	pclose(so);
	s0__gv_net_free(n);
	fix_close(&f);
}
END_TEST

/* kill -9 of a process running a sandbox with a policy: the next open of
 * the same state directory reclaims it, and its network namespace (held
 * by nothing then), veth pair and chain are gone with its processes. */
START_TEST(reclaim_after_kill9)
{
	char *dir = s0_test_tmpdir("gvnet");
	prctl(PR_SET_CHILD_SUBREAPER, 1); /* the sandbox's orphans come here */
	int info[2];
	ck_assert_int_eq(pipe(info), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		gv_fix c;
		memset(&c, 0, sizeof c);
		s0__rt_driver_find("gvisor", &c.d, NULL);
		s0__rt_host_opts o = {.state_dir = dir};
		if (c.d->open(&o, &c.h, NULL) < 0)
			_exit(2);
		fix_start(&c, "sbkill");
		apply(&c, "{\"mode\":\"block-all\"}");
		unsigned long ino = ns_inode(s0__gv_net_path(c.g->net));
		(void)!write(info[1], &ino, sizeof ino);
		for (;;)
			pause();
	}
	unsigned long ino = 0;
	ck_assert_int_eq(read(info[0], &ino, sizeof ino), (ssize_t)sizeof ino);
	ck_assert_int_ne(ino, 0);
	ck_assert(ns_in_use(ino)); /* runsc's sandbox is in it */
	kill(pid, SIGKILL);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	gv_fix f;
	memset(&f, 0, sizeof f);
	ck_assert_int_eq(s0__rt_driver_find("gvisor", &f.d, NULL), S0_OK);
	f.dir = dir;
	s0__rt_host_opts o = {.state_dir = dir};
	s0_error *e = NULL;
	ck_assert_int_eq(f.d->open(&o, &f.h, &e), S0_OK);
	int rc = f.d->terminal_proof(f.h, "rt-gvnet-sbkill", &e);
	ck_assert_msg(rc == S0_OK, "after reclaim: %s", e ? s0_error_message(e) : "?");
	ck_assert(!ns_in_use(ino));
	ck_assert_int_ne(system("ip -o link show | grep -q ': s0v'"), 0);
	fix_close(&f);
	close(info[0]);
	close(info[1]);
}
END_TEST

/* The guest's network of the sandbox's one runtime, from inspection. */
static cJSON *guest_network(lt *t, const char *id)
{
	cJSON *j = lt_inspect(t, id);
	const cJSON *rts = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "node"), "runtimes");
	ck_assert_int_eq(cJSON_GetArraySize(rts), 1);
	cJSON *g = cJSON_GetObjectItem(cJSON_GetArrayItem(rts, 0), "guest");
	cJSON *n = cJSON_DetachItemFromObject(g, "network");
	ck_assert_ptr_nonnull(n);
	cJSON_Delete(j);
	return n;
}

/* A connection from sandbox @p id (a fresh REPL) to @p ip:8080. */
static void engine_reach(lt *t, const char *id, const char *ip, const char *want)
{
	char *ctx = lt_repl(t, id), cmd[256], w[64];
	snprintf(cmd, sizeof cmd,
	         "nc -w 3 %s 8080 </dev/null 2>/dev/null > /tmp/nc.out; "
	         "grep -q . /tmp/nc.out && cat /tmp/nc.out || echo refused",
	         ip);
	char *out = lt_sh(t, id, ctx, cmd, NULL); /* without its last newline */
	snprintf(w, sizeof w, "%s", want);
	ck_assert_msg(!strcmp(out, w), "%s: got \"%s\", want \"%s\"", ip, out, want);
	free(out);
	free(ctx);
}

/* Through the engine and the public client (RTX-04 on real packets): the
 * claim's policy is enforced before the sandbox runs, PUT …/network
 * applies to the running generation at once, and a resumed generation
 * (a new namespace) gets the stored policy again — after a memory resume
 * too (the restored sandbox's network works and is still enforced). */
START_TEST(engine_policy_live_and_after_resume)
{
	LT_ROW("RTX-04");
	lt t;
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.manual_clock = 1;
	o.runtime = "gvisor";
	lt_open(&t, &o);
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.extra_json = "{\"network\":{\"mode\":\"block-all\"}}";
	char *id = lt_claim(&t, NULL, &cfg);
	cJSON *n = guest_network(&t, id);
	ck_assert_str_eq(lt_str(n, "mode"), "block-all");
	gv_peer p;
	gv_peer_start(lt_str(n, "hub"), 2, "pe", &p);
	cJSON_Delete(n);
	engine_reach(&t, id, p.ip, "refused");
	char pol[256];
	snprintf(pol, sizeof pol, "{\"mode\":\"block-all\",\"egress\":{\"allowedCidrs\":[\"%s\"]}}",
	         p.ip);
	char *rid = lt_runtime_id(&t, id);
	LT_OK(s0_sandbox_update_network_policy(t.c, id, pol, NULL, &e_));
	engine_reach(&t, id, p.ip, "pe:8080");
	char *rid2 = lt_runtime_id(&t, id);
	ck_assert_str_eq(rid, rid2); /* live: the same generation */
	lt_pause(&t, id);
	lt_resume(&t, id);
	char *rid3 = lt_runtime_id(&t, id);
	ck_assert_str_ne(rid, rid3);
	engine_reach(&t, id, p.ip, "pe:8080");
	/* a memory cycle (docs/memory-gvisor.md): the restore re-creates the
	 * namespace with the slot of the capture and gets the policy again */
	s0_error *me = NULL;
	lt_ok(lt_wait_rc(&t, id, true, S0_BOOL_TRUE, &me), &me, "memory pause");
	lt_quiesce(&t);
	lt_ok(lt_wait_rc(&t, id, false, S0_BOOL_TRUE, &me), &me, "memory resume");
	char *rid4 = lt_runtime_id(&t, id);
	ck_assert_str_ne(rid3, rid4);
	engine_reach(&t, id, p.ip, "pe:8080");
	LT_OK(s0_sandbox_update_network_policy(t.c, id, "{\"mode\":\"block-all\"}", NULL, &e_));
	engine_reach(&t, id, p.ip, "refused");
	free(rid4);
	free(rid);
	free(rid2);
	free(rid3);
	gv_peer_stop(&p);
	free(id);
	lt_close(&t);
}
END_TEST

static Suite *gvisor_net_suite(void)
{
	Suite *s = suite_create("gvisor-net");
	TCase *tc = tcase_create("network");
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, policies_enforced_live);
	tcase_add_test(tc, sandboxes_cannot_reach_each_other);
	tcase_add_test(tc, host_unreachable);
	tcase_add_test(tc, capabilities_documented_set);
	tcase_add_test(tc, prepare_same_addresses);
	tcase_add_test(tc, forged_source_dropped);
	tcase_add_test(tc, update_cuts_open_connections);
	tcase_add_test(tc, reclaim_after_kill9);
	suite_add_tcase(s, tc);
	TCase *en = tcase_create("engine"); /* through the lifecycle engine and a carrier */
	tcase_set_timeout(en, 300);
	tcase_add_test(en, engine_policy_live_and_after_resume);
	suite_add_tcase(s, en);
	return s;
}

S0_TEST_MAIN(gvisor_net_suite)
