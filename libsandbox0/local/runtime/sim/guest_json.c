/* Inspection JSON of the simulated guest (guest.h s0__guest_inspect). */
#include "local/runtime/sim/guest_impl.h"

#include "common/json.h"
#include "local/runtime/netpolicy.h"

static const char *fd_mode(uint8_t flags)
{
	if (flags & S0__FD_APPEND)
		return "a";
	if ((flags & S0__FD_READ) && (flags & S0__FD_WRITE))
		return "rw";
	return flags & S0__FD_WRITE ? "w" : "r";
}

static cJSON *fds_json(const s0__proc *p)
{
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; a && i < S0__NFD; i++) {
		const s0__fd *f = &p->fd[i];
		if (f->kind != S0__FD_FILE)
			continue;
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(a, o))
			return cJSON_Delete(o), cJSON_Delete(a), NULL;
		if (s0__json_add_i64(o, "fd", i) | s0__json_add_str(o, "path", f->path) |
		    s0__json_add_i64(o, "offset", (int64_t)f->offset) |
		    s0__json_add_str(o, "mode", fd_mode(f->flags)))
			return cJSON_Delete(a), NULL;
	}
	return a;
}

static cJSON *proc_json(const s0__proc *p)
{
	cJSON *o = cJSON_CreateObject(), *argv = cJSON_CreateArray(), *socks = cJSON_CreateArray();
	cJSON *fds = fds_json(p);
	bool ok = o && argv && socks && fds;
	for (uint32_t i = 0; ok && i < p->argc; i++)
		ok = cJSON_AddItemToArray(argv, cJSON_CreateString(p->argv[i]));
	for (size_t i = 0; ok && i < p->nports; i++)
		ok = cJSON_AddItemToArray(socks, cJSON_CreateNumber(p->ports[i]));
	if (ok) {
		ok = !(s0__json_add_i64(o, "pid", p->pid) | s0__json_add_i64(o, "ppid", p->ppid) |
		       s0__json_add_str(o, "state", s0__proc_state_name(p->state)) |
		       s0__json_add_str(o, "cwd", p->cwd ? p->cwd : "/") |
		       s0__json_add_i64(o, "heap_bytes", (int64_t)s0__heap_size(p->heap)));
		if (ok && p->ended)
			ok = !s0__json_add_i64(o, "exit_code", p->exit_code);
		cJSON_AddItemToObject(o, "argv", argv);
		cJSON_AddItemToObject(o, "fds", fds);
		cJSON_AddItemToObject(o, "sockets", socks);
		argv = fds = socks = NULL;
	}
	cJSON_Delete(argv);
	cJSON_Delete(fds);
	cJSON_Delete(socks);
	if (!ok)
		cJSON_Delete(o);
	return ok ? o : NULL;
}

static cJSON *heap_json(s0__guest *g)
{
	s0__heap_stats t = {0};
	for (size_t i = 0; i < g->nprocs; i++) {
		s0__heap_stats s;
		s0__heap_stats_get(g->procs[i]->heap, &s);
		t.chunks += s.chunks, t.zero += s.zero, t.resident += s.resident, t.lazy += s.lazy;
		t.damaged += s.damaged, t.dirty += s.dirty, t.fetched_on_touch += s.fetched_on_touch;
		t.prefetched += s.prefetched, t.size_bytes += s.size_bytes;
	}
	cJSON *o = cJSON_CreateObject();
	if (o && (s0__json_add_i64(o, "bytes", (int64_t)t.size_bytes) |
	          s0__json_add_i64(o, "chunks", (int64_t)t.chunks) |
	          s0__json_add_i64(o, "zero", (int64_t)t.zero) |
	          s0__json_add_i64(o, "resident", (int64_t)t.resident) |
	          s0__json_add_i64(o, "lazy", (int64_t)t.lazy) |
	          s0__json_add_i64(o, "damaged", (int64_t)t.damaged) |
	          s0__json_add_i64(o, "dirty", (int64_t)t.dirty) |
	          s0__json_add_i64(o, "fetched_on_touch", (int64_t)t.fetched_on_touch) |
	          s0__json_add_i64(o, "prefetched", (int64_t)t.prefetched)))
		return cJSON_Delete(o), NULL;
	return o;
}

static bool add_lists(s0__guest *g, cJSON *o)
{
	cJSON *procs = cJSON_AddArrayToObject(o, "processes");
	cJSON *ctxs = cJSON_AddArrayToObject(o, "contexts");
	cJSON *log = cJSON_AddArrayToObject(o, "signal_log");
	bool ok = procs && ctxs && log;
	for (size_t i = 0; ok && i < g->nprocs; i++)
		ok = cJSON_AddItemToArray(procs, proc_json(g->procs[i]));
	for (size_t i = 0; ok && i < g->nctxs; i++)
		ok = cJSON_AddItemToArray(ctxs, cJSON_CreateString(g->ctxs[i]->id));
	for (size_t i = 0; ok && i < g->nsig; i++) {
		cJSON *e = cJSON_CreateObject();
		ok = e && cJSON_AddItemToArray(log, e) && !s0__json_add_i64(e, "pid", g->siglog[i][0]) &&
		     !s0__json_add_i64(e, "signal", g->siglog[i][1]);
	}
	return ok;
}

/* The simulated network: applied or not, its mode and rules, decisions so far. */
static bool add_network(s0__guest *g, cJSON *o)
{
	cJSON *n = cJSON_AddObjectToObject(o, "network");
	return n && !s0__json_add_bool(n, "applied", g->net != NULL) &&
	       (!g->net || !s0__json_add_str(n, "mode", s0__netpolicy_mode(g->net))) &&
	       !s0__json_add_i64(n, "rules", (int64_t)s0__netpolicy_rule_count(g->net)) &&
	       !s0__json_add_i64(n, "connections_allowed", (int64_t)g->net_allowed) &&
	       !s0__json_add_i64(n, "connections_denied", (int64_t)g->net_denied);
}

cJSON *s0__guest_inspect(s0__guest *g)
{
	pthread_mutex_lock(&g->mu);
	cJSON *o = cJSON_CreateObject();
	bool ok = o && !s0__json_add_str(o, "procd_version", g->procd_version) &&
	          !s0__json_add_i64(o, "virtual_time_ms", g->vt) &&
	          !s0__json_add_i64(o, "sockets_dropped", (int64_t)g->sockets_dropped) &&
	          add_network(g, o) && add_lists(g, o);
	cJSON *h = ok ? heap_json(g) : NULL;
	if (h && !cJSON_AddItemToObject(o, "heap", h)) {
		cJSON_Delete(h);
		h = NULL;
	}
	pthread_mutex_unlock(&g->mu);
	if (!ok || !h) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}
