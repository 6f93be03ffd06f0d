/* The simulated guest: life cycle, procd, spawn, signals, pipes, virtual time (guest.h). */
#include "local/runtime/sim/shell.h"
#include "local/runtime/netpolicy.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_PROCD "procd-sim/1"
#define DEFAULT_CWD "/workspace"
#define DEFAULT_EXEC_TIMEOUT_MS 30000

/* Sandbox env_vars object -> exported variables. */
static int load_env(s0__vars *v, const cJSON *env, s0_error **err)
{
	if (!env)
		return S0_OK;
	if (!cJSON_IsObject(env))
		return s0__error_set(err, S0_EINVAL, "invalid_request", "env_vars must be an object");
	const cJSON *it;
	cJSON_ArrayForEach(it, env)
	{
		if (!cJSON_IsString(it) || !s0__var_name_ok(it->string, strlen(it->string)))
			return s0__error_set(err, S0_EINVAL, "invalid_request",
			                     "env_vars must map variable names to strings");
		if (s0__vars_set(v, it->string, it->valuestring, S0__VAR_EXPORT) < 0)
			return s0__error_nomem(err);
	}
	return S0_OK;
}

int s0__guest_alloc(const s0__guest_opts *o, s0__guest **out, s0_error **err)
{
	s0__guest_opts d = {0};
	if (!o)
		o = &d;
	uint32_t chunk = o->heap_chunk_bytes ? o->heap_chunk_bytes : S0__HEAP_CHUNK_DEFAULT;
	s0__heap *probe;
	int rc = s0__heap_new(chunk, &probe, err);
	if (rc < 0)
		return rc;
	s0__heap_unref(probe);
	s0__guest *g = calloc(1, sizeof *g);
	if (!g)
		return s0__error_nomem(err);
	pthread_mutex_init(&g->mu, NULL);
	if (o->clock)
		g->clock = *o->clock;
	else
		s0_clock_real(&g->clock);
	g->chunk_bytes = chunk;
	g->mem_limit = o->memory_limit_bytes;
	g->exec_timeout_ms = o->exec_timeout_ms > 0 ? o->exec_timeout_ms : DEFAULT_EXEC_TIMEOUT_MS;
	g->next_pid = 1;
	atomic_init(&g->prefetch_stop, false);
	g->procd_version = s0__strdup(o->procd_version ? o->procd_version : DEFAULT_PROCD);
	g->default_cwd = s0__strdup(o->cwd ? o->cwd : DEFAULT_CWD);
	if (!g->procd_version || !g->default_cwd) {
		s0__guest_free(g);
		return s0__error_nomem(err);
	}
	if ((rc = load_env(&g->base_env, o->env_vars, err)) < 0) {
		s0__guest_free(g);
		return rc;
	}
	*out = g;
	return S0_OK;
}

int s0__guest_new(const s0__guest_opts *o, s0__guest **out, s0_error **err)
{
	s0__guest *g;
	int rc = s0__guest_alloc(o, &g, err);
	if (rc < 0)
		return rc;
	s0__proc *procd;
	if ((rc = s0__gproc_new(g, S0__PK_PROCD, 0, &procd, err)) < 0) {
		s0__guest_free(g);
		return rc;
	}
	procd->argv = calloc(2, sizeof *procd->argv);
	if (!procd->argv || !(procd->argv[0] = s0__strdup("procd")) ||
	    !(procd->cwd = s0__strdup("/"))) {
		s0__guest_free(g);
		return s0__error_nomem(err);
	}
	procd->argc = 1;
	*out = g;
	return S0_OK;
}

void s0__guest_free(s0__guest *g)
{
	if (!g)
		return;
	if (g->prefetch_started) {
		atomic_store(&g->prefetch_stop, true);
		pthread_join(g->prefetch_thr, NULL);
	}
	for (size_t i = 0; i < g->nprocs; i++)
		s0__gproc_free(g->procs[i]);
	free(g->procs);
	for (size_t i = 0; i < g->nctxs; i++)
		s0__ctx_free(g->ctxs[i]);
	free(g->ctxs);
	s0__vars_clear(&g->base_env);
	free(g->procd_version);
	free(g->default_cwd);
	free(g->siglog);
	s0__pager_unref(g->pager);
	s0__netpolicy_free(g->net);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

void s0__guest_bind_files(s0__guest *g, const struct s0__files_ns *ns)
{
	pthread_mutex_lock(&g->mu);
	g->ns = ns;
	pthread_mutex_unlock(&g->mu);
}

void s0__guest_set_network(s0__guest *g, s0__netpolicy *policy)
{
	pthread_mutex_lock(&g->mu);
	s0__netpolicy *old = g->net;
	g->net = policy;
	pthread_mutex_unlock(&g->mu);
	s0__netpolicy_free(old);
}

void s0__guest_set_damage_cb(s0__guest *g, s0__guest_damage_fn fn, void *payload)
{
	pthread_mutex_lock(&g->mu);
	g->on_damage = fn;
	g->damage_payload = payload;
	pthread_mutex_unlock(&g->mu);
}

int s0__guest_advance(s0__guest *g, int64_t ms, s0_error **err)
{
	if (ms < 0)
		return s0__error_set(err, S0_EINVAL, "invalid_request", "negative time");
	pthread_mutex_lock(&g->mu);
	/* saturate: a restored clock near the end of time must not overflow */
	s0__sched_advance_to(g, g->vt > INT64_MAX - ms ? INT64_MAX : g->vt + ms, NULL);
	s0__gproc_reap_orphans(g);
	pthread_mutex_unlock(&g->mu);
	return S0_OK;
}

int64_t s0__guest_vtime_ms(s0__guest *g)
{
	pthread_mutex_lock(&g->mu);
	int64_t v = g->vt;
	pthread_mutex_unlock(&g->mu);
	return v;
}

const char *s0__guest_procd_version(s0__guest *g)
{
	return g->procd_version;
}

void s0__guest_shutdown(s0__guest *g)
{
	pthread_mutex_lock(&g->mu);
	s0__proc *procd = s0__gproc_find(g, 1);
	if (procd && !procd->ended) { /* procd first (SES-04), then its children */
		int32_t(*v)[2] = realloc(g->siglog, (g->nsig + 1) * sizeof *v);
		if (v) {
			g->siglog = v;
			g->capsig = g->nsig + 1;
			g->siglog[g->nsig][0] = 1;
			g->siglog[g->nsig][1] = 15;
			g->nsig++;
		}
		s0__gproc_end(procd, S0__PS_STOPPED, 0);
	}
	for (size_t i = 0; i < g->nprocs; i++) /* no virtual time passes: no grace */
		s0__gproc_stop(g, g->procs[i], 0);
	pthread_mutex_unlock(&g->mu);
}

int s0__guest_spawn(s0__guest *g, const s0__spawn_req *r, int32_t *pid_out, s0_error **err)
{
	pthread_mutex_lock(&g->mu);
	s0__vars vars = {0};
	s0__proc *p = NULL;
	int rc = s0__vars_copy(&vars, &g->base_env, false) < 0 ? s0__error_nomem(err)
	                                                         : load_env(&vars, r->env, err);
	if (rc == S0_OK)
		rc = s0__sched_spawn_argv(g, 1, r->argv, r->argc, r->cwd ? r->cwd : g->default_cwd,
		                          &vars, r->owner, &p, err);
	s0__vars_clear(&vars);
	if (rc == S0_OK) {
		*pid_out = p->pid;
		s0__gproc_arm(g, p, r->ttl_ms, r->idle_timeout_ms, r->expire_signal,
		              r->stop_grace_ms);
		s0__sched_run(g, p);
		s0__gproc_reap_orphans(g);
	}
	pthread_mutex_unlock(&g->mu);
	return rc;
}

static int not_found(s0_error **err, int32_t pid)
{
	return s0__error_set(err, S0_ENOTFOUND, "not_found", "no process %d", (int)pid);
}

static void info_of(const s0__proc *p, s0__proc_info *out)
{
	memset(out, 0, sizeof *out);
	out->pid = p->pid;
	out->ppid = p->ppid;
	out->state = p->state;
	out->ended = p->ended;
	out->exit_code = p->exit_code;
	out->heap_bytes = s0__heap_size(p->heap);
	for (int i = 0; i < S0__NFD; i++)
		out->open_files += p->fd[i].kind == S0__FD_FILE;
	out->sockets = (uint32_t)p->nports;
	out->expired = p->expired;
	out->stdin_bytes = p->in.len;
	out->stdin_closed = p->in_eof;
}

int s0__guest_proc_get(s0__guest *g, int32_t pid, s0__proc_info *out, s0_error **err)
{
	pthread_mutex_lock(&g->mu);
	s0__proc *p = s0__gproc_find(g, pid);
	int rc = p ? S0_OK : not_found(err, pid);
	if (p)
		info_of(p, out);
	pthread_mutex_unlock(&g->mu);
	return rc;
}

int s0__guest_signal(s0__guest *g, int32_t pid, int signo, s0_error **err)
{
	pthread_mutex_lock(&g->mu);
	s0__proc *p = s0__gproc_find(g, pid);
	int rc = p ? s0__gproc_signal(g, p, signo, err) : not_found(err, pid);
	if (rc == S0_OK && signo == 18 && p->sleeping &&
	    (p->wake_at <= g->vt || p->wake_at == S0__WAKE_ON_INPUT))
		s0__sched_run(g, p); /* CONT of an overdue sleeper, or of a reader whose
		                        input came while it was stopped (it waits again if not) */
	pthread_mutex_unlock(&g->mu);
	return rc;
}

int s0__guest_stop(s0__guest *g, int32_t pid, int64_t grace_ms, bool disown, s0_error **err)
{
	pthread_mutex_lock(&g->mu);
	s0__proc *p = s0__gproc_find(g, pid);
	int rc = p ? S0_OK : not_found(err, pid);
	if (p && p->pid == 1)
		rc = s0__error_set(err, S0_EFORBIDDEN, "permission_denied",
		                   "procd (PID 1) cannot be signalled");
	if (rc == S0_OK) {
		s0__gproc_stop(g, p, grace_ms);
		if (disown)
			p->owner = S0__OWN_NONE;
		s0__gproc_reap_orphans(g);
	}
	pthread_mutex_unlock(&g->mu);
	return rc;
}

static int move_buf(s0__buf *dst, s0__buf *src)
{
	int rc = dst && src->len && s0__buf_put(dst, src->data, src->len) < 0 ? -1 : 0;
	if (!rc)
		s0__buf_reset(src);
	return rc;
}

int s0__guest_take_output(s0__guest *g, int32_t pid, s0__buf *out, s0__buf *errb, s0__buf *raw,
                          s0_error **err)
{
	pthread_mutex_lock(&g->mu);
	s0__proc *p = s0__gproc_find(g, pid);
	int rc = p ? S0_OK : not_found(err, pid);
	if (p && (move_buf(out, &p->io.out) < 0 || move_buf(errb, &p->io.err) < 0 ||
	          move_buf(raw, &p->io.raw) < 0))
		rc = s0__error_nomem(err);
	pthread_mutex_unlock(&g->mu);
	return rc;
}

int s0__guest_write_input(s0__guest *g, int32_t pid, const void *data, size_t len, bool eof,
                          s0_error **err)
{
	pthread_mutex_lock(&g->mu);
	s0__proc *p = s0__gproc_find(g, pid);
	int rc = p ? S0_OK : not_found(err, pid);
	if (p && p->ended)
		rc = s0__error_set(err, S0_ECONFLICT, "process_not_running", "process %d has ended",
		                   (int)pid);
	else if (p && len && s0__buf_put(&p->in, data, len) < 0)
		rc = s0__error_nomem(err);
	if (p && rc == S0_OK)
		p->active_vt = g->vt;
	if (p && rc == S0_OK && eof)
		p->in_eof = true;
	if (p && rc == S0_OK && p->sleeping && p->wake_at == S0__WAKE_ON_INPUT)
		s0__sched_run(g, p); /* a session's `read` waiting for input */
	pthread_mutex_unlock(&g->mu);
	return rc;
}

void s0__guest_reap(s0__guest *g, int32_t pid)
{
	pthread_mutex_lock(&g->mu);
	s0__proc *p = s0__gproc_find(g, pid);
	if (p && p->ended && !p->busy && pid != 1)
		s0__gproc_remove(g, p);
	pthread_mutex_unlock(&g->mu);
}

void s0__guest_lock(s0__guest *g)
{
	pthread_mutex_lock(&g->mu);
}

void s0__guest_unlock(s0__guest *g)
{
	pthread_mutex_unlock(&g->mu);
}

int s0__guest_heaps_locked(s0__guest *g, s0__guest_heapref **out, size_t *n_out,
                           s0_error **err)
{
	s0__guest_heapref *v = calloc(g->nprocs ? g->nprocs : 1, sizeof *v);
	if (!v)
		return s0__error_nomem(err);
	for (size_t i = 0; i < g->nprocs; i++) {
		v[i].pid = g->procs[i]->pid;
		v[i].heap = s0__heap_ref(g->procs[i]->heap);
	}
	*out = v;
	*n_out = g->nprocs;
	return S0_OK;
}

void s0__guest_heap_stats(s0__guest *g, s0__heap_stats *out)
{
	memset(out, 0, sizeof *out);
	pthread_mutex_lock(&g->mu);
	for (size_t i = 0; i < g->nprocs; i++) {
		s0__heap_stats s;
		s0__heap_stats_get(g->procs[i]->heap, &s);
		out->size_bytes += s.size_bytes;
		out->chunks += s.chunks;
		out->zero += s.zero;
		out->resident += s.resident;
		out->lazy += s.lazy;
		out->damaged += s.damaged;
		out->dirty += s.dirty;
		out->fetched_on_touch += s.fetched_on_touch;
		out->prefetched += s.prefetched;
	}
	pthread_mutex_unlock(&g->mu);
}
