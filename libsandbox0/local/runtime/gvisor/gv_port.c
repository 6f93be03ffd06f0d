/*
 * Public routes on the gvisor runtime: connect_port (runtime.h), a TCP
 * connection from the backend to a port of the sandbox, inside the
 * backend's network hub (gv_net.h; docs/local-backend.md "Runtime gvisor",
 * "Public routes").
 *
 * The sandbox's own network namespace cannot carry it: runsc takes `eth0`
 * over into gVisor's network stack, so the host kernel's stack of that
 * namespace has no address of the sandbox. The hub's stack does: the
 * sandbox is .2 of its /30 behind the hub end `s0v<slot>`. So the socket is
 * made by a short-lived thread that joins the hub (setns changes only that
 * thread; a socket keeps the namespace it was made in) and connected by the
 * caller. Nothing leaves the machine: the hub has no other link.
 *
 * The hub's output chain (gv_nft.c) lets a connection from the hub to a
 * sandbox start only to an address and port of its set `routes`: a
 * connect puts (sandbox address . port) there with a 10 s timeout in the
 * same thread unless it did so less than 5 s ago, so the backend reaches a
 * sandbox only on a port a route asked for lately. The sandbox's own
 * policy (what it sends) is not involved: its replies are replies. A grant
 * remembered from a hub since closed is re-armed after a connect that got
 * no answer.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "local/runtime/gvisor/gv_int.h"

/* How long a connect may take before the port counts as not answering:
 * the sandbox is one veth away, so a SYN unanswered this long means no
 * stack is there (a stopped or crashed generation). */
#define CONNECT_MS 3000
/* How long a route's (address . port) element lets new connections
 * start, and how old a grant may be before a connect re-arms it (the
 * libnftables transaction is most of a connect's cost: measured in
 * docs/local-backend.md "Runtime gvisor"). */
#define ROUTE_GRANT "10s"
#define REGRANT_MS 5000
/* Grants remembered (the most recent ones; an older one is just re-armed). */
#define GRANTS 64

/* The grants made lately: (hub, address, port) and when, real monotonic ms. */
static struct grant {
	const void *hub;
	char addr[16];
	int port;
	int64_t at;
} grants[GRANTS];
static pthread_mutex_t grants_mu = PTHREAD_MUTEX_INITIALIZER;

/* Whether a grant of (hub, addr, port) is fresh; when not, the slot to
 * record the new one in (*slot). */
static bool grant_fresh(const void *hub, const char *addr, int port, int *slot)
{
	int64_t now = s0__real_monotonic_ms();
	int oldest = 0;
	pthread_mutex_lock(&grants_mu);
	for (int i = 0; i < GRANTS; i++) {
		struct grant *g = &grants[i];
		if (g->hub == hub && g->port == port && !strcmp(g->addr, addr)) {
			bool fresh = now - g->at < REGRANT_MS;
			pthread_mutex_unlock(&grants_mu);
			*slot = i;
			return fresh;
		}
		if (g->at < grants[oldest].at)
			oldest = i;
	}
	pthread_mutex_unlock(&grants_mu);
	*slot = oldest;
	return false;
}

static void grant_note(int slot, const void *hub, const char *addr, int port, int64_t at)
{
	pthread_mutex_lock(&grants_mu);
	grants[slot] = (struct grant){.hub = hub, .port = port, .at = at};
	snprintf(grants[slot].addr, sizeof grants[slot].addr, "%s", addr);
	pthread_mutex_unlock(&grants_mu);
}

typedef struct port_job {
	const char *addr;
	int port;
	bool grant; /* re-arm the grant first */
	int fd;
	s0_error *err;
} port_job;

/* In the hub: the grant of (address . port), then the socket. The grant is
 * re-armed (add, delete, add: one transaction) so it never ends between
 * this and the SYN even when an earlier one is about to. */
static int hub_socket(void *arg, char *msg, size_t ml)
{
	port_job *j = arg;
	char *cmds = !j->grant ? NULL : s0__asprintf("add element inet s0 routes { %s . %d timeout " ROUTE_GRANT " }\n"
	                          "delete element inet s0 routes { %s . %d }\n"
	                          "add element inet s0 routes { %s . %d timeout " ROUTE_GRANT " }\n",
	                          j->addr, j->port, j->addr, j->port, j->addr, j->port);
	int rc = j->grant ? s0__gv_nft_run(cmds, "runtime_unavailable", &j->err) : S0_OK;
	free(cmds);
	if (rc < 0)
		return -1;
	j->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (j->fd < 0) {
		snprintf(msg, ml, "socket: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int not_listening(s0_error **err, const char *addr, int port, const char *why,
                         bool *no_answer)
{
	bool silent = !strcmp(why, "no answer");
	if (no_answer)
		*no_answer = silent;
	/* a refusal means nothing listens; silence is a full or hung listener */
	if (silent)
		return s0__error_set(err, S0_EUNAVAILABLE, "port_no_answer",
		                     "port %d of the sandbox (%s:%d) does not answer a connect", port,
		                     addr, port);
	return s0__error_set(err, S0_EUNAVAILABLE, "port_not_listening",
	                     "nothing listens on port %d of the sandbox (%s:%d): %s", port, addr,
	                     port, why);
}

/* Connect fd (non-blocking) to addr:port within CONNECT_MS. */
static int connect_fd(int fd, const char *addr, int port, bool *no_answer, s0_error **err)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	inet_pton(AF_INET, addr, &sa.sin_addr);
	int e = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 ? 0 : errno;
	if (e == EINPROGRESS) {
		struct pollfd p = {fd, POLLOUT, 0};
		int n;
		while ((n = poll(&p, 1, CONNECT_MS)) < 0 && errno == EINTR)
			;
		socklen_t len = sizeof e;
		if (n == 0)
			return not_listening(err, addr, port, "no answer", no_answer);
		if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
			e = errno;
	}
	if (e)
		return not_listening(err, addr, port, strerror(e), no_answer);
	/* the caller gets a blocking socket, as from any connect */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return S0_OK;
}

/* One try: the socket made in the hub (the grant re-armed when @p grant
 * or stale), then connected. *no_answer: the SYN went unanswered. */
static int try_connect(s0__rt_gen *g, int hub, int port, bool grant, int *fd_out,
                       bool *no_answer, s0_error **err)
{
	port_job j = {.addr = s0__gv_net_addr(g->net), .port = port, .fd = -1};
	int slot;
	int64_t t = s0__real_monotonic_ms();
	j.grant = !grant_fresh(g->h->hub, j.addr, port, &slot) || grant;
	char msg[256] = "";
	int rc = s0__gv_in_netns(hub, hub_socket, &j, msg, sizeof msg);
	if (rc == 0 && j.grant)
		grant_note(slot, g->h->hub, j.addr, port, t);
	if (rc < 0) {
		if (j.err)
			return s0__error_put(err, j.err);
		return s0__error_set(err, S0_EUNAVAILABLE, "runtime_unavailable",
		                     "cannot reach the sandbox's network: %s", msg);
	}
	rc = connect_fd(j.fd, j.addr, port, no_answer, err);
	if (rc < 0) {
		close(j.fd);
		return rc;
	}
	*fd_out = j.fd;
	return S0_OK;
}

int s0__gv_connect_port(s0__rt_gen *g, int port, int *fd_out, s0_error **err)
{
	*fd_out = -1;
	if (port < 1 || port > 65535)
		return s0__error_set(err, S0_EINVAL, "bad_request",
		                     "port must be an integer of 1..65535, not %d", port);
	if (!g->net)
		return not_listening(err, "-", port, "the generation has no network", NULL);
	int hub = open(s0__gv_hub_path(g->h->hub), O_RDONLY | O_CLOEXEC);
	if (hub < 0)
		return s0__error_set(err, S0_EUNAVAILABLE, "runtime_unavailable",
		                     "cannot open the network hub: %s", strerror(errno));
	bool no_answer = false;
	s0_error *first = NULL;
	int rc = try_connect(g, hub, port, false, fd_out, &no_answer, &first);
	if (rc < 0 && no_answer) { /* a grant remembered from a hub gone since: re-arm it */
		s0_error_free(first);
		first = NULL;
		rc = try_connect(g, hub, port, true, fd_out, &no_answer, &first);
	}
	close(hub);
	if (rc < 0)
		s0__error_put(err, first);
	return rc;
}
