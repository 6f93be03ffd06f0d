/* Process and memory builtins: sleep, ps, kill, alloc, memtouch, memhash, listen (shell.h). */
#include "local/runtime/sim/sh_int.h"

#include <stdlib.h>
#include <string.h>

/* "1", "0.25", "2.5" seconds -> ms; -1 when bad. */
static int64_t parse_seconds(const char *s)
{
	char *end;
	if (!s[0] || s[0] == '-')
		return -1;
	double v = strtod(s, &end);
	if (*end || v != v || v > 1e9)
		return -1;
	return (int64_t)(v * 1000.0 + 0.5);
}

static int bi_sleep(sh_cmdctx *x, int argc, char **argv)
{
	s0__sh_run *r = x->r;
	int64_t ms = argc == 2 ? parse_seconds(argv[1]) : -1;
	if (ms < 0) {
		s0__sh_errf(x, "sleep: invalid time interval '%s'", argc > 1 ? argv[1] : "");
		return 1;
	}
	s0__guest *g = r->g;
	if (!r->fg) {
		if (r->depth == 0) { /* yield; resume at vt + ms */
			r->p->wake_at = g->vt + ms;
			r->p->sleeping = true;
			r->yielded = true;
			r->stop = true;
		}
		return 0;
	}
	int64_t target = g->vt + ms;
	if (r->deadline_vt >= 0 && target > r->deadline_vt) {
		s0__sched_advance_to(g, r->deadline_vt, r->p);
		r->timed_out = true;
		r->stop = true;
		return 124;
	}
	s0__sched_advance_to(g, target, r->p);
	return 0;
}

static int bi_ps(sh_cmdctx *x, int argc, char **argv)
{
	(void)argc, (void)argv;
	s0__guest *g = x->r->g;
	s0__sh_printf(x, 1, "%7s %7s %-8s %s\n", "PID", "PPID", "STATE", "COMMAND");
	for (size_t i = 0; i < g->nprocs; i++) {
		const s0__proc *p = g->procs[i];
		if (p->ended)
			continue;
		s0__sh_printf(x, 1, "%7d %7d %-8s", (int)p->pid, (int)p->ppid,
		              s0__proc_state_name(p->state));
		for (uint32_t a = 0; a < p->argc; a++)
			s0__sh_printf(x, 1, " %s", p->argv[a]);
		s0__sh_write(x, 1, "\n", 1);
	}
	return 0;
}

static int kill_one(sh_cmdctx *x, const char *arg, int sig)
{
	char *end;
	long pid = strtol(arg, &end, 10);
	s0__proc *p = *arg && !*end && pid > 0 && pid < INT32_MAX ? s0__gproc_find(x->r->g, (int32_t)pid)
	                                                         : NULL;
	if (!*arg || *end) {
		s0__sh_errf(x, "kill: %s: arguments must be process IDs", arg);
		return 1;
	}
	if (!p || p->ended) {
		s0__sh_errf(x, "kill: (%s) - No such process", arg);
		return 1;
	}
	s0_error *e = NULL;
	if (sig && s0__gproc_signal(x->r->g, p, sig, &e) < 0) {
		s0__sh_errf(x, "kill: (%s) - %s", arg,
		            s0_error_code(e) == S0_EFORBIDDEN ? "Operation not permitted"
		                                              : s0_error_message(e));
		s0_error_free(e);
		return 1;
	}
	return 0;
}

static int bi_kill(sh_cmdctx *x, int argc, char **argv)
{
	int i = 1, sig = 15;
	if (i < argc && argv[i][0] == '-' && argv[i][1]) {
		const char *name = argv[i] + 1;
		if (!strcmp(argv[i], "-s") && i + 1 < argc)
			name = argv[++i];
		s0_error *e = NULL;
		if (!strcmp(name, "0"))
			sig = 0;
		else if (s0__signal_parse(name, &sig, &e) < 0) {
			s0__sh_errf(x, "kill: %s: invalid signal specification", name);
			s0_error_free(e);
			return 2;
		}
		i++;
	}
	if (i == argc) {
		s0__sh_errf(x, "kill: usage: kill [-SIG] PID...");
		return 2;
	}
	int rc = 0;
	for (; i < argc; i++)
		rc |= kill_one(x, argv[i], sig);
	return rc;
}

static int bi_alloc(sh_cmdctx *x, int argc, char **argv)
{
	bool zero = argc == 3 && !strcmp(argv[1], "-z");
	uint64_t n;
	if ((argc != 2 && !zero) || s0__sh_parse_size(argv[argc - 1], &n) < 0) {
		s0__sh_errf(x, "alloc: usage: alloc [-z] SIZE[K|M|G]");
		return 2;
	}
	s0__guest *g = x->r->g;
	if (g->mem_limit && (n > g->mem_limit || s0__guest_heap_bytes(g) > g->mem_limit - n)) {
		s0__sh_errf(x, "alloc: cannot allocate %llu bytes: out of memory",
		            (unsigned long long)n);
		return 1;
	}
	s0_error *e = NULL;
	s0__proc *p = x->r->p;
	int rc = s0__heap_grow(p->heap, n, zero ? 0 : ++p->seed, &e);
	if (rc == S0_ECORRUPT) {
		s0__sh_crash(x, e);
		return 139;
	}
	if (rc < 0) {
		s0__sh_errf(x, "alloc: %s", s0_error_message(e));
		s0_error_free(e);
		return 1;
	}
	return 0;
}

static int bi_memtouch(sh_cmdctx *x, int argc, char **argv)
{
	uint64_t off, len;
	if (argc != 3 || s0__sh_parse_size(argv[1], &off) < 0 || s0__sh_parse_size(argv[2], &len) < 0) {
		s0__sh_errf(x, "memtouch: usage: memtouch OFFSET LENGTH");
		return 2;
	}
	s0_error *e = NULL;
	s0__proc *p = x->r->p;
	int rc = s0__heap_fill(p->heap, off, len, ++p->seed, &e);
	if (rc == S0_ECORRUPT) {
		s0__sh_crash(x, e);
		return 139;
	}
	if (rc < 0) {
		s0__sh_errf(x, "memtouch: %s", s0_error_message(e));
		s0_error_free(e);
		return 1;
	}
	return 0;
}

static int bi_memhash(sh_cmdctx *x, int argc, char **argv)
{
	(void)argc, (void)argv;
	uint64_t h;
	s0_error *e = NULL;
	s0__heap *heap = x->r->p->heap;
	int rc = s0__heap_hash(heap, &h, &e);
	if (rc == S0_ECORRUPT) {
		s0__sh_crash(x, e);
		return 139;
	}
	if (rc < 0) {
		s0_error_free(e);
		x->oom = true;
		return 1;
	}
	s0__sh_printf(x, 1, "%016llx %llu\n", (unsigned long long)h,
	              (unsigned long long)s0__heap_size(heap));
	return 0;
}

static int bi_listen(sh_cmdctx *x, int argc, char **argv)
{
	char *end;
	long port = argc == 2 ? strtol(argv[1], &end, 10) : 0;
	if (argc != 2 || *end || port < 1 || port > 65535) {
		s0__sh_errf(x, "listen: usage: listen PORT (1..65535)");
		return 2;
	}
	s0__proc *p = x->r->p;
	if (s0__gproc_port_listening(x->r->g, (uint32_t)port) || p->nports >= S0__MAX_SOCKETS) {
		s0__sh_errf(x, "listen: %ld: Address already in use", port);
		return 1;
	}
	uint32_t *np = realloc(p->ports, (p->nports + 1) * sizeof *np);
	if (!np) {
		x->oom = true;
		return 1;
	}
	np[p->nports++] = (uint32_t)port;
	p->ports = np;
	return 0;
}

/* trap '' SIG… ignores, trap - SIG… restores the default; bare `trap`
 * lists the ignored signals (shell.h). No other action is supported. */
static int bi_trap(sh_cmdctx *x, int argc, char **argv)
{
	s0__proc *p = x->r->p;
	if (argc == 1) {
		for (int sig = 1; sig < 64; sig++)
			if (p->sig_ignored >> sig & 1)
				s0__sh_printf(x, 1, "trap -- '' %d\n", sig);
		return 0;
	}
	bool ignore = !strcmp(argv[1], "");
	if ((!ignore && strcmp(argv[1], "-")) || argc < 3) {
		s0__sh_errf(x, "trap: usage: trap '' SIG... (ignore) | trap - SIG... (default)");
		return 2;
	}
	int rc = 0;
	for (int i = 2; i < argc; i++) {
		int sig;
		s0_error *e = NULL;
		if (s0__signal_parse(argv[i], &sig, &e) < 0 || sig >= 64) {
			s0_error_free(e);
			s0__sh_errf(x, "trap: %s: invalid signal specification", argv[i]);
			rc = 1;
		} else if (sig == 9 || sig == 19) {
			s0__sh_errf(x, "trap: %s: cannot be trapped", argv[i]);
			rc = 1;
		} else if (ignore) {
			p->sig_ignored |= (uint64_t)1 << sig;
		} else {
			p->sig_ignored &= ~((uint64_t)1 << sig);
		}
	}
	return rc;
}

const sh_bi *s0__bi_proc(size_t *n)
{
	static const sh_bi t[] = {{"sleep", bi_sleep},       {"ps", bi_ps},
	                          {"kill", bi_kill},         {"alloc", bi_alloc},
	                          {"memtouch", bi_memtouch}, {"memhash", bi_memhash},
	                          {"listen", bi_listen},     {"trap", bi_trap}};
	*n = sizeof t / sizeof t[0];
	return t;
}
