/* Inspection JSON (docs/decisions.md "Faults and inspection"). */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/lifecycle/engine_open.h"

cJSON *s0__engine_runtime_json(s0__engine *e)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *caps = o ? s0__rt_caps_json(e->rt_caps) : NULL;
	if (!caps || s0__json_add_str(o, "name", e->rt_drv ? e->rt_drv->name : "") < 0 ||
	    s0__json_add_str(o, "requested", e->rt_auto ? "auto" : e->rt_drv ? e->rt_drv->name
	                                                                     : "") < 0 ||
	    (e->rt_auto && *e->rt_why && s0__json_add_str(o, "reason", e->rt_why) < 0) ||
	    !cJSON_AddItemToObject(o, "capabilities", caps)) {
		cJSON_Delete(caps);
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static cJSON *node_json(s0__engine *e, const char *sandbox_id)
{
	cJSON *n = cJSON_CreateObject();
	size_t watchers = s0__engine_watch_subscribers(e->watch); /* not under e->mu */
	pthread_mutex_lock(&e->mu);
	s0__node *nd = &e->node;
	cJSON_AddNumberToObject(n, "cpu_total_millis", (double)nd->cpu_total);
	cJSON_AddNumberToObject(n, "cpu_used_millis", (double)nd->cpu_used);
	cJSON_AddNumberToObject(n, "memory_total_bytes", (double)nd->memory_total);
	cJSON_AddNumberToObject(n, "memory_used_bytes", (double)nd->memory_used);
	cJSON_AddNumberToObject(n, "carriers_total", nd->carriers_total);
	cJSON_AddNumberToObject(n, "carriers_used", nd->carriers_used);
	cJSON_AddNumberToObject(n, "watchers", (double)watchers);
	cJSON_AddNumberToObject(n, "nbd_used", nd->nbd_used);
	cJSON *drv = cJSON_AddObjectToObject(n, "runtime"); /* the driver and what it can do */
	if (drv && e->rt_drv) {
		cJSON_AddStringToObject(drv, "name", e->rt_drv->name);
		cJSON_AddStringToObject(drv, "description", e->rt_drv->description);
		cJSON_AddStringToObject(drv, "requested", e->rt_auto ? "auto" : e->rt_drv->name);
		if (e->rt_auto && *e->rt_why)
			cJSON_AddStringToObject(drv, "reason", e->rt_why);
		cJSON *caps = s0__rt_caps_json(e->rt_caps);
		if (!cJSON_AddItemToObject(drv, "capabilities", caps))
			cJSON_Delete(caps);
	}
	cJSON_AddNumberToObject(n, "runtimes_started", (double)nd->runtimes_started);
	cJSON_AddNumberToObject(n, "runtimes_stopped", (double)nd->runtimes_stopped);
	cJSON_AddNumberToObject(n, "runtimes_crashed", (double)nd->runtimes_crashed);
	cJSON_AddNumberToObject(n, "driver_stops", (double)nd->driver_stops);
	cJSON_AddNumberToObject(n, "reconciled_stops", (double)nd->reconciled_stops);
	s0__ctld_json(e, n);
	cJSON *rts = cJSON_AddArrayToObject(n, "runtimes");
	for (s0__runtime *rt = nd->runtimes; rt; rt = rt->next) {
		if (sandbox_id && strcmp(rt->sandbox_id, sandbox_id))
			continue;
		cJSON *r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "runtime_id", rt->id);
		cJSON_AddStringToObject(r, "sandbox_id", rt->sandbox_id);
		cJSON_AddNumberToObject(r, "cpu_millis", (double)rt->cpu_millis);
		cJSON_AddNumberToObject(r, "memory_bytes", (double)rt->memory_bytes);
		cJSON_AddBoolToObject(r, "starting", !rt->ready);
		if (!rt->ready) { /* being started by another thread: only its lease is stable */
			cJSON_AddItemToArray(rts, r);
			continue;
		}
		cJSON_AddNumberToObject(r, "runtime_generation", (double)rt->generation);
		cJSON_AddStringToObject(r, "attached_generation", rt->attached);
		cJSON_AddNumberToObject(r, "carrier", rt->carrier);
		cJSON_AddBoolToObject(r, "fenced", rt->fenced);
		cJSON_AddBoolToObject(r, "halted", rt->halted);
		cJSON_AddBoolToObject(r, "crashed", rt->crashed);
		cJSON_AddBoolToObject(r, "scheduler_record", rt->sched_record);
		cJSON_AddStringToObject(r, "alloc_dir", rt->alloc_dir ? rt->alloc_dir : "");
		cJSON_AddNumberToObject(r, "requests", (double)rt->requests);
		cJSON_AddNumberToObject(r, "started_at_unix_ms", (double)rt->started_at_ms); /* UC-14 */
		if (rt->volume) {
			int64_t dirty = 0, fetched = 0;
			s0__volume_stats(rt->volume, &dirty, &fetched);
			cJSON_AddNumberToObject(r, "dirty_chunks", (double)dirty);
			cJSON_AddNumberToObject(r, "chunks_fetched", (double)fetched);
		}
		/* the generation as its driver sees it (the simulated guest's
		 * processes, procd version, network), and the restored image */
		cJSON_AddStringToObject(r, "runtime", rt->drv ? rt->drv->name : "");
		cJSON_AddStringToObject(r, "restored_image", rt->restored_image);
		cJSON *gi = rt->gen && !rt->halted ? rt->drv->inspect(rt->gen) : NULL;
		if (gi && !cJSON_AddItemToObject(r, "guest", gi))
			cJSON_Delete(gi);
		cJSON_AddItemToArray(rts, r);
	}
	/* lifecycle locks held or awaited, per sandbox (tests order races with it) */
	cJSON *locks = cJSON_AddObjectToObject(n, "lifecycle_locks");
	for (s0__sblock *l = e->locks; locks && l; l = l->next)
		if (!sandbox_id || !strcmp(l->id, sandbox_id))
			cJSON_AddNumberToObject(locks, l->id, l->refs);
	pthread_mutex_unlock(&e->mu);
	return n;
}

static cJSON *ops_json(s0__engine *e, const char *sandbox_id)
{
	cJSON *arr = cJSON_CreateArray();
	s0__op_row *ops = NULL;
	size_t n = 0;
	if (s0__meta_op_pending(e->meta, &ops, &n, NULL) < 0)
		return arr;
	for (size_t i = 0; i < n; i++) {
		if (sandbox_id && strcmp(ops[i].sandbox_id, sandbox_id))
			continue;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "id", (double)ops[i].id);
		cJSON_AddStringToObject(o, "sandbox_id", ops[i].sandbox_id);
		cJSON_AddStringToObject(o, "kind", s0__op_kind_name(ops[i].kind));
		cJSON_AddStringToObject(o, "state", s0__op_state_name(ops[i].state));
		cJSON_AddStringToObject(o, "runtime_id", ops[i].runtime_id);
		cJSON_AddNumberToObject(o, "runtime_generation", (double)ops[i].generation);
		cJSON_AddStringToObject(o, "new_head", ops[i].new_head);
		cJSON_AddItemToArray(arr, o);
	}
	free(ops);
	return arr;
}

static void add_sandbox_facts(s0__engine *e, cJSON *root, const char *sandbox_id)
{
	s0__sandbox_row row = {0};
	if (s0__meta_sandbox_get(e->meta, NULL, sandbox_id, &row, NULL) < 0)
		return;
	cJSON *s = cJSON_AddObjectToObject(root, "sandbox");
	cJSON_AddStringToObject(s, "id", row.rec.id);
	cJSON_AddStringToObject(s, "head", row.head);
	cJSON_AddStringToObject(s, "image", row.image);
	cJSON_AddStringToObject(s, "config", row.rec.config_json ? row.rec.config_json : "{}");
	cJSON_AddNumberToObject(s, "runtime_generation", (double)row.rec.runtime_generation);
	cJSON_AddStringToObject(s, "mem_image", row.mem_image);
	cJSON_AddStringToObject(s, "mem_image_generation", row.mem_image_gen);
	s0__engine_inspect_usage(e, s, &row); /* UC-16 */
	cJSON *counts = cJSON_AddObjectToObject(s, "operation_counts");
	for (int k = 0; k < S0__OP_KIND_COUNT; k++) {
		int64_t c = 0;
		s0__meta_op_count(e->meta, sandbox_id, (s0__op_kind)k, &c, NULL);
		cJSON_AddNumberToObject(counts, s0__op_kind_name((s0__op_kind)k), (double)c);
	}
	s0__sandbox_rec_clear(&row.rec);
}

int s0__engine_inspect(s0__engine *e, const char *sandbox_id, char **out, s0_error **err)
{
	cJSON *root = cJSON_CreateObject();
	if (!root)
		return s0__error_nomem(err);
	cJSON_AddItemToObject(root, "node", node_json(e, sandbox_id));
	cJSON_AddItemToObject(root, "operations", ops_json(e, sandbox_id));
	cJSON_AddItemToObject(root, "faults", s0__faults_json(e->faults));
	char *st = s0__storage_stats_json(e->storage);
	cJSON *stj = st ? cJSON_Parse(st) : NULL;
	free(st);
	if (stj)
		cJSON_AddItemToObject(root, "storage", stj);
	cJSON *mem = s0__engine_mem_inspect(e);
	if (mem)
		cJSON_AddItemToObject(root, "memory", mem);
	if (sandbox_id)
		add_sandbox_facts(e, root, sandbox_id);
	*out = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return *out ? S0_OK : s0__error_nomem(err);
}

int s0__engine_export_generation(s0__engine *e, const char *gen, const char *path,
                                 s0_error **err)
{
	return s0__storage_export(e->storage, gen, path, err);
}
