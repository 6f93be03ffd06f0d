/*
 * Virtual time and background processes of the guest: spawning script
 * processes, running them until they sleep or end, and advancing the
 * virtual clock (guest.h "Virtual time").
 */
#include "local/runtime/sim/shell.h"

#include <stdlib.h>
#include <string.h>

/* Move a run's output into p's pipes; any output is activity. */
static void keep_output(s0__guest *g, s0__proc *p, s0__shout *o)
{
	if (o->raw.len)
		p->active_vt = g->vt;
	/* out of memory: the bytes are lost, as a full pipe would lose them */
	(void)(s0__pipe_put(&p->io.out, &p->io.dropped_out, o->out.data, o->out.len) |
	       s0__pipe_put(&p->io.err, &p->io.dropped_err, o->err.data, o->err.len) |
	       s0__pipe_put(&p->io.raw, &p->io.dropped_raw, o->raw.data, o->raw.len));
	s0__shout_free(o);
}

void s0__sched_run(s0__guest *g, s0__proc *p)
{
	if (p->busy || p->ended || p->kind != S0__PK_SCRIPT || p->state == S0__PS_PAUSED)
		return;
	p->busy = true;
	p->sleeping = false;
	s0__shout o = {0};
	s0__sh_run r = {.g = g, .p = p, .sink = &o, .deadline_vt = -1};
	int st = s0__sh_exec(&r, p->script ? p->script : "", &p->pc_stmt, &p->pc_cmd);
	p->busy = false;
	keep_output(g, p, &o);
	if (p->ended)
		return;
	if (r.yielded && !r.exited)
		return; /* sleeping until p->wake_at */
	s0__gproc_end(p, S0__PS_STOPPED, st & 0xff);
}

/* The due process with the earliest wake-up (ties: lowest PID), or NULL.
 * Only what s0__sched_run() would run: a non-script process marked sleeping
 * (a damaged state blob) would otherwise be due forever. */
static s0__proc *next_due(s0__guest *g, int64_t target, const s0__proc *skip)
{
	s0__proc *best = NULL;
	for (size_t i = 0; i < g->nprocs; i++) {
		s0__proc *p = g->procs[i];
		if (p == skip || p->ended || !p->sleeping || p->busy || p->state == S0__PS_PAUSED ||
		    p->kind != S0__PK_SCRIPT || p->wake_at > target)
			continue;
		if (!best || p->wake_at < best->wake_at)
			best = p;
	}
	return best;
}

/* A stop's grace period ending (not an expiry: p->expired keeps its reason). */
#define DL_GRACE 100

/* When p's lifetime, idle timeout or a stop's grace period ends it
 * (INT64_MAX: never), and why; the lifetime wins a tie. A busy
 * (foreground) process is never idle; while a stop's grace runs only its
 * KILL is due. */
static int64_t deadline_of(const s0__proc *p, int *why)
{
	int64_t d = INT64_MAX;
	*why = S0__EXPIRY_NONE;
	if (p->ended)
		return d;
	if (p->grace_kill_at) {
		*why = DL_GRACE;
		return p->grace_kill_at;
	}
	if (p->kill_at) {
		d = p->kill_at;
		*why = S0__EXPIRY_TTL;
	}
	if (p->idle_ms && !p->busy) {
		int64_t i = p->active_vt > INT64_MAX - p->idle_ms ? INT64_MAX : p->active_vt + p->idle_ms;
		if (i < d) {
			d = i;
			*why = S0__EXPIRY_IDLE;
		}
	}
	return d;
}

/* The process with the earliest deadline at or before target (ties: lowest PID). */
static s0__proc *next_expiry(s0__guest *g, int64_t target, int64_t *at, int *why)
{
	s0__proc *best = NULL;
	for (size_t i = 0; i < g->nprocs; i++) {
		int w;
		int64_t d = deadline_of(g->procs[i], &w);
		if (d != INT64_MAX && d <= target && (!best || d < *at)) { /* INT64_MAX: never */
			best = g->procs[i];
			*at = d;
			*why = w;
		}
	}
	return best;
}

/* A deadline fell: the end of a stop's grace is KILL; an expiry sends the
 * owner's expiry signal, and KILL if that left it running — at once, or
 * after the process's grace period (guest.h "Deadlines"). */
static void expire(s0__guest *g, s0__proc *p, int why)
{
	if (why == DL_GRACE) {
		s0__gproc_signal(g, p, 9, NULL);
		return;
	}
	p->expired = (uint8_t)why;
	int sig = p->expire_sig ? p->expire_sig : 9;
	if (sig == 15)
		s0__gproc_stop(g, p, p->grace_ms);
	else
		s0__gproc_signal(g, p, sig, NULL);
	if (!p->ended && !p->grace_kill_at)
		s0__gproc_signal(g, p, 9, NULL);
}

void s0__sched_advance_to(s0__guest *g, int64_t target_vt, s0__proc *skip)
{
	if (target_vt < g->vt)
		target_vt = g->vt;
	g->scheduling++;
	for (;;) {
		int64_t at = 0;
		int why = 0;
		s0__proc *x = next_expiry(g, target_vt, &at, &why);
		s0__proc *p = next_due(g, target_vt, skip);
		if (x && (!p || at <= p->wake_at)) { /* a deadline before a wake-up at the same time */
			if (at > g->vt)
				g->vt = at;
			expire(g, x, why);
			if (x == skip && x->ended)
				break; /* the foreground process ended: time stops here */
			continue;
		}
		if (!p) {
			g->vt = target_vt;
			break;
		}
		if (p->wake_at > g->vt)
			g->vt = p->wake_at;
		s0__sched_run(g, p);
	}
	g->scheduling--;
}

static bool is_shell(const char *a)
{
	const char *b = strrchr(a, '/');
	b = b ? b + 1 : a;
	return !strcmp(b, "sh") || !strcmp(b, "bash");
}

/* argv[i] single-quoted ('…' with ' as '\''). */
static int put_quoted(s0__buf *b, const char *a)
{
	int rc = s0__buf_put(b, "'", 1);
	for (const char *c = a; *c && !rc; c++)
		rc = *c == '\'' ? s0__buf_puts(b, "'\\''") : s0__buf_put(b, c, 1);
	return rc ? rc : s0__buf_put(b, "'", 1);
}

char *s0__sh_argv_script(const char *const *argv, size_t argc)
{
	if (argc >= 3 && is_shell(argv[0]) && !strcmp(argv[1], "-c"))
		return s0__strdup(argv[2]);
	s0__buf b = S0__BUF_INIT;
	for (size_t i = 0; i < argc; i++) {
		if ((i && s0__buf_put(&b, " ", 1) < 0) || put_quoted(&b, argv[i]) < 0) {
			s0__buf_free(&b);
			return NULL;
		}
	}
	return s0__buf_detach(&b, NULL);
}

static int fill_script_proc(s0__proc *p, const char *const *argv, size_t argc, const char *cwd,
                            const s0__vars *vars)
{
	if (!(p->argv = calloc(argc + 1, sizeof *p->argv)))
		return S0_ENOMEM;
	for (size_t i = 0; i < argc; i++)
		if (!(p->argv[p->argc++] = s0__strdup(argv[i])))
			return S0_ENOMEM;
	if (!(p->cwd = s0__strdup(cwd)) || !(p->script = s0__sh_argv_script(argv, argc)))
		return S0_ENOMEM;
	return vars ? s0__vars_copy(&p->vars, vars, false) : S0_OK;
}

int s0__sched_spawn_argv(s0__guest *g, int32_t ppid, const char *const *argv, size_t argc,
                         const char *cwd, const s0__vars *vars, int owner, s0__proc **out,
                         s0_error **err)
{
	if (!argc || !argv[0] || !argv[0][0])
		return s0__error_set(err, S0_EINVAL, "invalid_request", "command is required");
	s0__proc *p;
	int rc = s0__gproc_new(g, S0__PK_SCRIPT, ppid, &p, err);
	if (rc < 0)
		return rc;
	p->owner = (uint8_t)owner;
	if (fill_script_proc(p, argv, argc, cwd, vars) < 0) {
		s0__gproc_remove(g, p);
		return s0__error_nomem(err);
	}
	*out = p;
	return S0_OK;
}
