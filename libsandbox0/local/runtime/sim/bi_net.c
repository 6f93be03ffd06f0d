/* Network builtin: nc through the simulated network (shell.h, netpolicy.h). */
#include "local/runtime/sim/sh_int.h"

#include <stdlib.h>
#include <string.h>

#include "local/runtime/netpolicy.h"
#include "local/runtime/sim/httpd.h"

typedef struct nc_args {
	bool udp, verbose;
	const char *host;
	long port;
} nc_args;

/* [-zuv] [-w SECS] HOST PORT; false on a usage error. */
static bool nc_parse(int argc, char **argv, nc_args *a)
{
	memset(a, 0, sizeof *a);
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		for (const char *f = argv[i] + 1; *f; f++) {
			if (*f == 'u')
				a->udp = true;
			else if (*f == 'v')
				a->verbose = true;
			else if (*f == 'w') { /* timeout: nothing waits in the simulation */
				if (!f[1] && ++i >= argc)
					return false;
				break;
			} else if (*f != 'z' && *f != 'n') {
				return false;
			}
		}
	}
	if (argc - i != 2)
		return false;
	char *end;
	a->host = argv[i];
	a->port = strtol(argv[i + 1], &end, 10);
	return a->host[0] && !*end && a->port >= 1 && a->port <= 65535;
}

static int nc_fail(sh_cmdctx *x, const nc_args *a, const char *reason, const char *why)
{
	s0__sh_errf(x, "nc: connect to %s port %ld (%s) failed: %s%s%s%s", a->host, a->port,
	            a->udp ? "udp" : "tcp", reason, why ? " (network policy: " : "", why ? why : "",
	            why ? ")" : "");
	return 1;
}

static int bi_nc(sh_cmdctx *x, int argc, char **argv)
{
	nc_args a;
	if (!nc_parse(argc, argv, &a)) {
		s0__sh_errf(x, "nc: usage: nc [-z] [-u] [-v] [-w SECS] HOST PORT (1..65535)");
		return 2;
	}
	s0__guest *g = x->r->g;
	if (!g->net)
		return nc_fail(x, &a, "Network is unreachable", NULL);
	const char *why = NULL;
	if (!s0__netpolicy_allows(g->net, a.host, (int)a.port, a.udp, &why)) {
		g->net_denied++;
		return nc_fail(x, &a, "Operation not permitted", why);
	}
	if (s0__netpolicy_is_loopback(a.host) && !a.udp &&
	    !s0__gproc_port_listening(g, (uint32_t)a.port))
		return nc_fail(x, &a, "Connection refused", NULL);
	g->net_allowed++;
	if (a.verbose)
		s0__sh_errf(x, "Connection to %s %ld port [%s/*] succeeded!", a.host, a.port,
		            a.udp ? "udp" : "tcp");
	return 0;
}

/* httpd [-f] -p PORT [-h DIR]: serve DIR (default: the cwd) on PORT (httpd.h). */
static int bi_httpd(sh_cmdctx *x, int argc, char **argv)
{
	long port = 0;
	const char *dir = ".";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-p") && i + 1 < argc)
			port = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "-h") && i + 1 < argc)
			dir = argv[++i];
		else if (strcmp(argv[i], "-f"))
			port = 0, i = argc;
	}
	if (port < 1 || port > 65535) {
		s0__sh_errf(x, "httpd: usage: httpd [-f] -p PORT (1..65535) [-h DIR]");
		return 2;
	}
	char *root = s0__sh_path(x, "httpd", dir);
	if (!root)
		return 1;
	s0_error *e = NULL;
	int rc = s0__sim_httpd_start(x->r->g, (uint32_t)port, strcmp(root, "/") ? root : "", &e);
	if (rc < 0)
		s0__sh_errf(x, "httpd: bind: %s", e ? s0_error_message(e) : "out of memory");
	s0_error_free(e);
	free(root);
	return rc < 0 ? 1 : 0;
}

const sh_bi *s0__bi_net(size_t *n)
{
	static const sh_bi t[] = {{"nc", bi_nc}, {"httpd", bi_httpd}};
	*n = sizeof t / sizeof t[0];
	return t;
}
