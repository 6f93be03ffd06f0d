/*
 * Test peers of the gvisor network tests: a child process of the test in
 * a network namespace of its own with a tiny TCP listener on 8080 and
 * 9090 (each connection reads "<name>:<port>\n"), its veth pair's other
 * end in the hub (gv_net.h), with /30 number k of 10.201.0.0/24 (outside
 * the sandbox pool). It dies with the test process (PR_SET_PDEATHSIG) and
 * its namespace and veth pair with it. Uses ip(8) and nsenter(1).
 */
#ifndef S0_TEST_GV_PEER_H
#define S0_TEST_GV_PEER_H

#include <sys/types.h>

typedef struct gv_peer {
	pid_t pid;
	char ip[24]; /**< its address */
} gv_peer;

/** Start peer @p k (0..63) named @p name on the hub at @p hub_path (check asserts). */
void gv_peer_start(const char *hub_path, int k, const char *name, gv_peer *p);
/** Kill it and wait for it. */
void gv_peer_stop(gv_peer *p);
/** system() of a printf-formatted command, asserted to exit 0. */
void gv_run_cmd(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
