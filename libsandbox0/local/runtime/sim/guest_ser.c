/*
 * The guest's small state as a blob, and a guest rebuilt from it with
 * lazy heaps (guest.h, "for the checkpoint engine"). Format "S0GST003",
 * rtser.h encoding; every field is validated on the way back. Version 2
 * adds each process's deadlines (lifetime, idle timeout, last activity,
 * expiry signal and reason) after its stdin; version 3 adds its stop grace
 * (grace period, pending KILL) and ignored signals after those. Version 1
 * and 2 blobs still restore, their processes without what came later.
 */
#include "local/runtime/sim/guest_impl.h"
#include "local/runtime/rtser.h"

#include <stdlib.h>
#include <string.h>

#define MAGIC "S0GST003"
#define MAGIC_V2 "S0GST002"
#define MAGIC_V1 "S0GST001"
#define STR_MAX ((size_t)1 << 20)
#define MAX_PROCS 65536u

static void put_vars(s0__ser *s, const s0__vars *v)
{
	s0__ser_u32(s, (uint32_t)v->n);
	for (size_t i = 0; i < v->n; i++) {
		s0__ser_str(s, v->v[i].name);
		s0__ser_str(s, v->v[i].value);
		s0__ser_u8(s, v->v[i].exported);
	}
}

static void put_shout(s0__ser *s, const s0__shout *o)
{
	s0__ser_bytes(s, o->out.data, o->out.len);
	s0__ser_bytes(s, o->err.data, o->err.len);
	s0__ser_bytes(s, o->raw.data, o->raw.len);
}

static void put_proc(s0__ser *s, const s0__proc *p)
{
	s0__ser_u32(s, (uint32_t)p->pid);
	s0__ser_u32(s, (uint32_t)p->ppid);
	s0__ser_u8(s, p->kind);
	s0__ser_u8(s, p->state);
	s0__ser_u8(s, p->owner);
	s0__ser_u8(s, p->ended);
	s0__ser_u32(s, (uint32_t)p->exit_code);
	s0__ser_u32(s, p->argc);
	for (uint32_t i = 0; i < p->argc; i++)
		s0__ser_str(s, p->argv[i]);
	s0__ser_str(s, p->cwd);
	put_vars(s, &p->vars);
	s0__ser_u32(s, (uint32_t)p->last_status);
	s0__ser_u32(s, (uint32_t)p->last_bg);
	s0__ser_u64(s, p->seed);
	s0__ser_u64(s, s0__heap_size(p->heap));
	for (int i = 0; i < S0__NFD; i++) {
		s0__ser_u8(s, p->fd[i].kind);
		s0__ser_u8(s, p->fd[i].flags);
		s0__ser_str(s, p->fd[i].path);
		s0__ser_u64(s, p->fd[i].offset);
	}
	s0__ser_u8(s, p->script != NULL);
	s0__ser_str(s, p->script);
	s0__ser_u32(s, p->pc_stmt);
	s0__ser_u32(s, p->pc_cmd);
	s0__ser_u8(s, p->sleeping);
	s0__ser_i64(s, p->wake_at);
	put_shout(s, &p->io);
	s0__ser_bytes(s, p->in.data, p->in.len);
	s0__ser_u8(s, p->in_eof);
	s0__ser_i64(s, p->kill_at);
	s0__ser_i64(s, p->idle_ms);
	s0__ser_i64(s, p->active_vt);
	s0__ser_u8(s, p->expire_sig);
	s0__ser_u8(s, p->expired);
	s0__ser_i64(s, p->grace_ms);
	s0__ser_i64(s, p->grace_kill_at);
	s0__ser_u64(s, p->sig_ignored);
}

static void put_ctx(s0__ser *s, const s0__ctx *c)
{
	s0__ser_str(s, c->id);
	s0__ser_u8(s, c->type);
	s0__ser_str(s, c->alias);
	s0__ser_str(s, c->cwd);
	put_vars(s, &c->env_vars);
	s0__ser_u32(s, c->ncommand);
	for (uint32_t i = 0; i < c->ncommand; i++)
		s0__ser_str(s, c->command[i]);
	s0__ser_i64(s, c->created_at_ms);
	s0__ser_u32(s, (uint32_t)c->pid);
	s0__ser_u8(s, c->pty);
	s0__ser_u32(s, (uint32_t)c->rows);
	s0__ser_u32(s, (uint32_t)c->cols);
	s0__ser_u32(s, (uint32_t)c->idle_timeout_sec);
	s0__ser_u32(s, (uint32_t)c->ttl_sec);
	put_shout(s, &c->last);
}

int s0__guest_state_locked(s0__guest *g, void **buf_out, size_t *len_out,
                           uint64_t *sockets_dropped, s0_error **err)
{
	s0__ser s = {0};
	uint64_t socks = 0;
	s0__ser_raw(&s, MAGIC, 8);
	s0__ser_str(&s, g->procd_version);
	s0__ser_i64(&s, g->vt);
	s0__ser_u32(&s, (uint32_t)g->next_pid);
	s0__ser_u32(&s, g->chunk_bytes);
	s0__ser_u32(&s, (uint32_t)g->nprocs);
	for (size_t i = 0; i < g->nprocs; i++) {
		put_proc(&s, g->procs[i]);
		socks += g->procs[i]->nports;
	}
	s0__ser_u64(&s, g->sockets_dropped + socks);
	s0__ser_u32(&s, (uint32_t)g->nctxs);
	for (size_t i = 0; i < g->nctxs; i++)
		put_ctx(&s, g->ctxs[i]);
	if (s.oom) {
		s0__buf_free(&s.buf);
		return s0__error_nomem(err);
	}
	*buf_out = s0__buf_detach(&s.buf, len_out);
	if (sockets_dropped)
		*sockets_dropped = socks;
	return S0_OK;
}

/* ---- reading back ---- */

typedef struct rd {
	s0__de d;
	bool oom;
	int version; /**< 1, 2 or 3 (from the magic) */
} rd;

static char *get_str(rd *r)
{
	return s0__de_str(&r->d, STR_MAX, &r->oom);
}

static void get_vars(rd *r, s0__vars *v)
{
	uint32_t n = s0__de_u32(&r->d);
	for (uint32_t i = 0; i < n && !r->d.bad && !r->oom; i++) {
		char *name = get_str(r), *val = get_str(r);
		uint8_t ex = s0__de_u8(&r->d);
		if (name && val && !s0__var_name_ok(name, strlen(name)))
			s0__de_fail(&r->d);
		else if (name && val && s0__vars_set(v, name, val, ex ? S0__VAR_EXPORT : S0__VAR_LOCAL) < 0)
			r->oom = true;
		free(name);
		free(val);
	}
}

static void get_buf(rd *r, s0__buf *b, size_t max)
{
	size_t n;
	const void *p = s0__de_bytes(&r->d, max, &n);
	if (p && n && s0__buf_put(b, p, n) < 0)
		r->oom = true;
}

static void get_shout(rd *r, s0__shout *o)
{
	get_buf(r, &o->out, S0__PIPE_CAP);
	get_buf(r, &o->err, S0__PIPE_CAP);
	get_buf(r, &o->raw, S0__PIPE_CAP);
}

static char **get_strv(rd *r, uint32_t n)
{
	if (n > 4096) {
		s0__de_fail(&r->d);
		return NULL;
	}
	char **v = calloc(n + 1, sizeof *v);
	if (!v) {
		r->oom = true;
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++)
		v[i] = get_str(r);
	return v;
}

static void get_fds(rd *r, s0__proc *p)
{
	for (int i = 0; i < S0__NFD; i++) {
		s0__fd *f = &p->fd[i];
		f->kind = s0__de_u8(&r->d);
		f->flags = s0__de_u8(&r->d);
		char *path = get_str(r);
		f->offset = s0__de_u64(&r->d);
		if (f->kind > S0__FD_FILE || f->flags > 7 || (f->kind == S0__FD_FILE && (!path || !*path)))
			s0__de_fail(&r->d);
		if (f->kind == S0__FD_FILE)
			f->path = path;
		else
			free(path);
	}
}

static void get_proc_tail(rd *r, s0__proc *p)
{
	uint8_t has_script = s0__de_u8(&r->d);
	char *script = get_str(r);
	if (has_script)
		p->script = script;
	else
		free(script);
	p->pc_stmt = s0__de_u32(&r->d);
	p->pc_cmd = s0__de_u32(&r->d);
	p->sleeping = s0__de_u8(&r->d) != 0;
	p->wake_at = s0__de_i64(&r->d);
	get_shout(r, &p->io);
	get_buf(r, &p->in, STR_MAX);
	p->in_eof = s0__de_u8(&r->d) != 0;
	if (r->version < 2)
		return;
	p->kill_at = s0__de_i64(&r->d);
	p->idle_ms = s0__de_i64(&r->d);
	p->active_vt = s0__de_i64(&r->d);
	p->expire_sig = s0__de_u8(&r->d);
	p->expired = s0__de_u8(&r->d);
	if (p->kill_at < 0 || p->idle_ms < 0 || p->expire_sig > 64 || p->expired > S0__EXPIRY_IDLE)
		s0__de_fail(&r->d);
	if (r->version < 3)
		return;
	p->grace_ms = s0__de_i64(&r->d);
	p->grace_kill_at = s0__de_i64(&r->d);
	p->sig_ignored = s0__de_u64(&r->d);
	if (p->grace_ms < 0 || p->grace_kill_at < 0 ||
	    (p->sig_ignored & ((uint64_t)1 | (uint64_t)1 << 9 | (uint64_t)1 << 19)))
		s0__de_fail(&r->d);
}

/* One process record; *heap_size receives its heap's logical size. */
static s0__proc *get_proc(rd *r, uint64_t *heap_size)
{
	s0__proc *p = calloc(1, sizeof *p);
	if (!p) {
		r->oom = true;
		return NULL;
	}
	p->pid = (int32_t)s0__de_u32(&r->d);
	p->ppid = (int32_t)s0__de_u32(&r->d);
	p->kind = s0__de_u8(&r->d);
	p->state = s0__de_u8(&r->d);
	p->owner = s0__de_u8(&r->d);
	p->ended = s0__de_u8(&r->d) != 0;
	p->exit_code = (int32_t)s0__de_u32(&r->d);
	uint32_t argc = s0__de_u32(&r->d);
	p->argv = get_strv(r, argc);
	p->argc = p->argv ? argc : 0;
	p->cwd = get_str(r);
	get_vars(r, &p->vars);
	p->last_status = (int32_t)s0__de_u32(&r->d);
	p->last_bg = (int32_t)s0__de_u32(&r->d);
	p->seed = s0__de_u64(&r->d);
	*heap_size = s0__de_u64(&r->d);
	get_fds(r, p);
	get_proc_tail(r, p);
	if (p->pid <= 0 || p->kind > S0__PK_SCRIPT || p->state > S0__PS_CRASHED ||
	    p->owner > S0__OWN_SESSION || (p->kind == S0__PK_SCRIPT && !p->script))
		s0__de_fail(&r->d);
	for (uint32_t i = 0; i < p->argc; i++)
		if (!p->argv[i])
			s0__de_fail(&r->d);
	return p;
}

static s0__ctx *get_ctx(rd *r)
{
	s0__ctx *c = calloc(1, sizeof *c);
	if (!c) {
		r->oom = true;
		return NULL;
	}
	char *id = get_str(r);
	if (id && strlen(id) < sizeof c->id)
		memcpy(c->id, id, strlen(id) + 1);
	else
		s0__de_fail(&r->d);
	free(id);
	c->type = s0__de_u8(&r->d);
	c->alias = get_str(r);
	c->cwd = get_str(r);
	get_vars(r, &c->env_vars);
	c->ncommand = s0__de_u32(&r->d);
	c->command = get_strv(r, c->ncommand);
	if (!c->command)
		c->ncommand = 0;
	c->created_at_ms = s0__de_i64(&r->d);
	c->pid = (int32_t)s0__de_u32(&r->d);
	c->pty = s0__de_u8(&r->d) != 0;
	c->rows = (int32_t)s0__de_u32(&r->d);
	c->cols = (int32_t)s0__de_u32(&r->d);
	c->idle_timeout_sec = (int32_t)s0__de_u32(&r->d);
	c->ttl_sec = (int32_t)s0__de_u32(&r->d);
	get_shout(r, &c->last);
	if (c->type != S0__CTX_REPL && c->type != S0__CTX_CMD)
		s0__de_fail(&r->d);
	return c;
}

/* Give process p its heap from the images (or an empty one). */
static int attach_heap(s0__guest *g, s0__proc *p, uint64_t size, const s0__heap_image *heaps,
                       size_t nheaps, s0__pager *pager, s0_error **err)
{
	for (size_t i = 0; i < nheaps; i++) {
		if (heaps[i].pid != p->pid)
			continue;
		if (heaps[i].size_bytes != size || heaps[i].chunk_bytes != g->chunk_bytes)
			break;
		return s0__heap_new_lazy(g->chunk_bytes, size, heaps[i].pages, heaps[i].npages, pager,
		                         &p->heap, err);
	}
	if (size)
		return s0__error_set(err, S0_ECORRUPT, "corrupt",
		                     "no heap image for process %d of %llu bytes", (int)p->pid,
		                     (unsigned long long)size);
	return s0__heap_new(g->chunk_bytes, &p->heap, err);
}

static int read_procs(rd *r, s0__guest *g, const s0__heap_image *heaps, size_t nheaps,
                      s0__pager *pager, s0_error **err)
{
	uint32_t n = s0__de_u32(&r->d);
	if (n > MAX_PROCS || !(g->procs = calloc(n ? n : 1, sizeof *g->procs)))
		return n > MAX_PROCS ? (s0__de_fail(&r->d), S0_OK) : s0__error_nomem(err);
	g->capprocs = n ? n : 1;
	for (uint32_t i = 0; i < n && !r->d.bad && !r->oom; i++) {
		uint64_t size = 0;
		s0__proc *p = get_proc(r, &size);
		if (!p)
			break;
		g->procs[g->nprocs++] = p;
		if (p->pid >= g->next_pid || (i && p->pid <= g->procs[i - 1]->pid))
			s0__de_fail(&r->d);
		/* procd (PID 1) cannot be signalled: a deadline on it would fire
		 * forever without ending it and the scheduler would never advance */
		if (p->pid == 1 && (p->kill_at || p->idle_ms || p->grace_kill_at))
			s0__de_fail(&r->d);
		if (r->d.bad || r->oom)
			break;
		int rc = attach_heap(g, p, size, heaps, nheaps, pager, err);
		if (rc < 0)
			return rc;
	}
	return S0_OK;
}

static int read_ctxs(rd *r, s0__guest *g)
{
	uint32_t n = s0__de_u32(&r->d);
	if (n > MAX_PROCS || !(g->ctxs = calloc(n ? n : 1, sizeof *g->ctxs))) {
		if (n > MAX_PROCS)
			s0__de_fail(&r->d);
		else
			r->oom = true;
		return 0;
	}
	g->capctxs = n ? n : 1;
	for (uint32_t i = 0; i < n && !r->d.bad && !r->oom; i++) {
		s0__ctx *c = get_ctx(r);
		if (!c)
			break;
		g->ctxs[g->nctxs++] = c;
		if (!r->d.bad && !s0__gproc_find(g, c->pid))
			s0__de_fail(&r->d);
	}
	return 0;
}

static int read_state(rd *r, s0__guest *g, const s0__heap_image *heaps, size_t nheaps,
                      s0__pager *pager, s0_error **err)
{
	char magic[8];
	s0__de_raw(&r->d, magic, 8);
	r->version = !memcmp(magic, MAGIC, 8)      ? 3
	             : !memcmp(magic, MAGIC_V2, 8) ? 2
	             : !memcmp(magic, MAGIC_V1, 8) ? 1
	                                           : 0;
	if (!r->version)
		s0__de_fail(&r->d);
	char *pv = get_str(r);
	if (pv) {
		free(g->procd_version);
		g->procd_version = pv;
	}
	g->vt = s0__de_i64(&r->d);
	g->next_pid = (int32_t)s0__de_u32(&r->d);
	uint32_t chunk = s0__de_u32(&r->d);
	/* virtual time is ms since the first generation: negative or past 2^62
	 * (146 million years) is damage, and would overflow vt + offsets */
	if (chunk < S0__HEAP_CHUNK_MIN || chunk > S0__HEAP_CHUNK_MAX || (chunk & (chunk - 1)) ||
	    g->next_pid < 2 || g->vt < 0 || g->vt > ((int64_t)1 << 62))
		s0__de_fail(&r->d);
	else
		g->chunk_bytes = chunk;
	int rc = r->d.bad ? S0_OK : read_procs(r, g, heaps, nheaps, pager, err);
	g->sockets_dropped = s0__de_u64(&r->d);
	if (rc == S0_OK && !r->d.bad && !r->oom)
		read_ctxs(r, g);
	return rc;
}

int s0__guest_restore(const void *state, size_t len, const s0__guest_opts *o,
                      const s0__heap_image *heaps, size_t nheaps, s0__pager *pager,
                      s0__guest **out, s0_error **err)
{
	s0__guest *g;
	int rc = s0__guest_alloc(o, &g, err);
	if (rc < 0)
		return rc;
	rd r = {.oom = false};
	s0__de_init(&r.d, state, len);
	rc = read_state(&r, g, heaps, nheaps, pager, err);
	if (rc == S0_OK && r.oom)
		rc = s0__error_nomem(err);
	if (rc == S0_OK)
		rc = s0__de_done(&r.d, true, "guest state", err);
	if (rc < 0) {
		s0__guest_free(g);
		return rc;
	}
	g->pager = s0__pager_ref(pager);
	*out = g;
	return S0_OK;
}
