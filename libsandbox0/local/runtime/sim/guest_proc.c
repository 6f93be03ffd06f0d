/* The process table of the simulated guest: records, fds, pipes, signals (guest_impl.h). */
#include "local/runtime/sim/guest_impl.h"

#include <stdlib.h>
#include <string.h>

const char *s0__proc_state_name(int state)
{
	static const char *const names[] = {"created", "starting", "running", "paused",
	                                    "stopped", "killed",   "crashed"};
	return state >= 0 && state <= S0__PS_CRASHED ? names[state] : "unknown";
}

s0__proc *s0__gproc_find(s0__guest *g, int32_t pid)
{
	size_t lo = 0, hi = g->nprocs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (g->procs[mid]->pid == pid)
			return g->procs[mid];
		if (g->procs[mid]->pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void s0__fd_close(s0__fd *f)
{
	free(f->path);
	memset(f, 0, sizeof *f);
}

int s0__fd_copy(s0__fd *dst, const s0__fd *src)
{
	*dst = *src;
	dst->path = NULL;
	if (src->path && !(dst->path = s0__strdup(src->path)))
		return S0_ENOMEM;
	return S0_OK;
}

int s0__pipe_put(s0__buf *b, uint64_t *dropped, const void *data, size_t len)
{
	if (len >= S0__PIPE_CAP) {
		if (dropped)
			*dropped += b->len + (len - S0__PIPE_CAP);
		b->len = 0;
		data = (const char *)data + (len - S0__PIPE_CAP);
		len = S0__PIPE_CAP;
	}
	if (b->len + len > S0__PIPE_CAP) {
		size_t drop = b->len + len - S0__PIPE_CAP;
		memmove(b->data, b->data + drop, b->len - drop);
		b->len -= drop;
		if (dropped)
			*dropped += drop;
	}
	return s0__buf_put(b, data, len);
}

void s0__shout_free(s0__shout *o)
{
	s0__buf_free(&o->out);
	s0__buf_free(&o->err);
	s0__buf_free(&o->raw);
	o->dropped_out = o->dropped_err = o->dropped_raw = 0;
}

int s0__gproc_new(s0__guest *g, int kind, int32_t ppid, s0__proc **out, s0_error **err)
{
	if (g->nprocs == g->capprocs) {
		size_t cap = g->capprocs ? g->capprocs * 2 : 16;
		s0__proc **v = realloc(g->procs, cap * sizeof *v);
		if (!v)
			return s0__error_nomem(err);
		g->procs = v;
		g->capprocs = cap;
	}
	s0__proc *p = calloc(1, sizeof *p);
	if (!p)
		return s0__error_nomem(err);
	int rc = s0__heap_new(g->chunk_bytes, &p->heap, err);
	if (rc < 0) {
		free(p);
		return rc;
	}
	p->pid = g->next_pid++;
	p->ppid = ppid;
	p->kind = (uint8_t)kind;
	p->state = S0__PS_RUNNING;
	p->active_vt = g->vt;
	p->seed = (uint64_t)p->pid * 0x9e3779b97f4a7c15ull + 1;
	for (int i = 0; i < 3; i++) {
		p->fd[i].kind = S0__FD_PIPE;
		p->fd[i].flags = i ? S0__FD_WRITE : S0__FD_READ;
	}
	g->procs[g->nprocs++] = p; /* pids only grow: the table stays sorted */
	*out = p;
	return S0_OK;
}

void s0__gproc_free(s0__proc *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->argc; i++)
		free(p->argv[i]);
	free(p->argv);
	free(p->cwd);
	s0__vars_clear(&p->vars);
	s0__heap_unref(p->heap);
	for (int i = 0; i < S0__NFD; i++)
		s0__fd_close(&p->fd[i]);
	free(p->ports);
	free(p->script);
	s0__shout_free(&p->io);
	s0__buf_free(&p->in);
	free(p);
}

void s0__gproc_remove(s0__guest *g, s0__proc *p)
{
	for (size_t i = 0; i < g->nprocs; i++) {
		if (g->procs[i] != p)
			continue;
		memmove(&g->procs[i], &g->procs[i + 1], (g->nprocs - i - 1) * sizeof *g->procs);
		g->nprocs--;
		break;
	}
	s0__gproc_free(p);
}

void s0__gproc_end(s0__proc *p, int state, int exit_code)
{
	if (p->ended)
		return;
	p->ended = true;
	p->state = (uint8_t)state;
	p->exit_code = exit_code;
	p->sleeping = false;
	for (int i = 0; i < S0__NFD; i++)
		if (p->fd[i].kind == S0__FD_FILE)
			s0__fd_close(&p->fd[i]);
	free(p->ports);
	p->ports = NULL;
	p->nports = 0;
}

void s0__gproc_reap_orphans(s0__guest *g)
{
	for (size_t i = 0; i < g->nprocs;) {
		s0__proc *p = g->procs[i];
		if (p->ended && !p->busy && (p->owner == S0__OWN_NONE || p->owner == S0__OWN_JOB))
			s0__gproc_remove(g, p);
		else
			i++;
	}
}

static void log_signal(s0__guest *g, int32_t pid, int sig)
{
	if (g->nsig == g->capsig) {
		size_t cap = g->capsig ? g->capsig * 2 : 16;
		int32_t(*v)[2] = realloc(g->siglog, cap * sizeof *v);
		if (!v)
			return;
		g->siglog = v;
		g->capsig = cap;
	}
	g->siglog[g->nsig][0] = pid;
	g->siglog[g->nsig][1] = sig;
	g->nsig++;
}

int s0__gproc_signal(s0__guest *g, s0__proc *p, int sig, s0_error **err)
{
	if (p->pid == 1)
		return s0__error_set(err, S0_EFORBIDDEN, "permission_denied",
		                     "procd (PID 1) cannot be signalled");
	if (p->ended)
		return s0__error_set(err, S0_ECONFLICT, "process_not_running",
		                     "process %d is not running", (int)p->pid);
	log_signal(g, p->pid, sig);
	p->active_vt = g->vt;
	if (sig > 0 && sig < 64 && sig != 9 && sig != 19 && (p->sig_ignored >> sig & 1))
		return S0_OK; /* `trap '' SIG`: delivered (logged, activity) and ignored */
	switch (sig) {
	case 9:
		s0__gproc_end(p, S0__PS_KILLED, 128 + 9);
		break;
	case 19:
		p->state = S0__PS_PAUSED;
		break;
	case 18:
		if (p->state == S0__PS_PAUSED)
			p->state = S0__PS_RUNNING;
		break;
	case 28:
		break;
	case 2:
		if (p->kind == S0__PK_SHELL)
			break; /* an interactive shell ignores SIGINT */
		s0__gproc_end(p, S0__PS_STOPPED, 128 + sig);
		break;
	default:
		s0__gproc_end(p, S0__PS_STOPPED, 128 + sig);
		break;
	}
	return S0_OK;
}

void s0__gproc_arm(s0__guest *g, s0__proc *p, int64_t ttl_ms, int64_t idle_ms, int signo,
                   int64_t grace_ms)
{
	p->grace_ms = grace_ms > 0 ? grace_ms : 0;
	p->kill_at = ttl_ms > 0 ? g->vt + ttl_ms : 0;
	p->idle_ms = idle_ms > 0 ? idle_ms : 0;
	p->active_vt = g->vt;
	p->expire_sig = (uint8_t)(signo > 0 && signo <= 64 ? signo : 9);
}

void s0__gproc_stop(s0__guest *g, s0__proc *p, int64_t grace_ms)
{
	if (p->ended || p->pid == 1)
		return;
	s0__gproc_signal(g, p, 15, NULL);
	if (p->ended)
		return;
	if (grace_ms <= 0) {
		s0__gproc_signal(g, p, 9, NULL);
		return;
	}
	int64_t at = g->vt > INT64_MAX - grace_ms ? INT64_MAX : g->vt + grace_ms;
	if (!p->grace_kill_at || at < p->grace_kill_at)
		p->grace_kill_at = at;
}

void s0__gproc_damaged(s0__guest *g, s0__proc *p, const s0_error *e)
{
	if (p)
		s0__gproc_end(p, S0__PS_CRASHED, 139);
	if (g->on_damage)
		g->on_damage(g->damage_payload, p ? p->pid : 0, e);
}

uint64_t s0__guest_heap_bytes(s0__guest *g)
{
	uint64_t n = 0;
	for (size_t i = 0; i < g->nprocs; i++)
		n += s0__heap_size(g->procs[i]->heap);
	return n;
}

int64_t s0__guest_now_ms(s0__guest *g)
{
	return g->clock.now_unix_ms(g->clock.ctx);
}

bool s0__gproc_port_listening(s0__guest *g, uint32_t port)
{
	for (size_t i = 0; i < g->nprocs; i++)
		for (size_t j = 0; j < g->procs[i]->nports; j++)
			if (g->procs[i]->ports[j] == port)
				return true;
	return false;
}
