/* Test peers of the gvisor network tests (gv_peer.h). */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/close_range.h>
#include <unistd.h>

#include "gv_peer.h"


#define PEER_NET "10.201.0." /* outside the pool, a /30 per peer */

static void listen_loop(const char *name, int fd1, int fd2)
{
	for (;;) {
		fd_set rs;
		FD_ZERO(&rs);
		FD_SET(fd1, &rs);
		FD_SET(fd2, &rs);
		if (select((fd1 > fd2 ? fd1 : fd2) + 1, &rs, NULL, NULL, NULL) < 0)
			_exit(1);
		int l = FD_ISSET(fd1, &rs) ? fd1 : fd2;
		int c = accept(l, NULL, NULL);
		if (c >= 0) {
			char line[64];
			int n = snprintf(line, sizeof line, "%s:%d\n", name, l == fd1 ? 8080 : 9090);
			(void)!write(c, line, (size_t)n);
			close(c);
		}
	}
}

static int listener(int port)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 16) < 0)
		_exit(2);
	return s;
}

void gv_run_cmd(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	int rc = system(cmd);
	ck_assert_msg(rc == 0, "%s: %d", cmd, rc);
}

/* Peer @p k (0..): a child in a new network namespace listening on 8080
 * and 9090 (answering "<name>:<port>"), its veth's other end in the hub
 * with /30 number k of 10.201.0.0/24. It dies with this test process. */
void gv_peer_start(const char *hub, int k, const char *name, gv_peer *p)
{
	int ready[2];
	ck_assert_int_eq(pipe(ready), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* no descriptor of the test (a carrier's FUSE device, loop
		 * device, runsc pipes) may stay open here: only the pipe */
		close_range(3, (unsigned)ready[1] - 1, 0);
		close_range((unsigned)ready[1] + 1, ~0u, 0);
		if (unshare(CLONE_NEWNET) != 0)
			_exit(3);
		int a = listener(8080), b = listener(9090);
		(void)!write(ready[1], "r", 1);
		listen_loop(name, a, b);
	}
	char c;
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	close(ready[0]);
	close(ready[1]);
	p->pid = pid;
	snprintf(p->ip, sizeof p->ip, PEER_NET "%d", 4 * k + 2);
	gv_run_cmd("nsenter --net=%s ip link add s0tp%d type veth peer name eth0 netns %d", hub, k,
	        (int)pid);
	gv_run_cmd("nsenter --net=%s sh -c 'ip addr add " PEER_NET "%d/30 dev s0tp%d && "
	        "ip link set s0tp%d up'",
	        hub, 4 * k + 1, k, k);
	gv_run_cmd("nsenter --net=/proc/%d/ns/net sh -c 'ip addr add %s/30 dev eth0 && "
	        "ip link set eth0 up && ip link set lo up && ip route add default via " PEER_NET
	        "%d'",
	        (int)pid, p->ip, 4 * k + 1);
}

void gv_peer_stop(gv_peer *p)
{
	kill(p->pid, SIGKILL);
	waitpid(p->pid, NULL, 0);
}
