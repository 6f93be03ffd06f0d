/* Engine open/close, crash recovery, manager restart, templates. */
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "local/lifecycle/engine_open.h"

static void free_runtimes(s0__engine *e)
{
	while (e->node.runtimes)
		s0__engine_stop_runtime(e, e->node.runtimes);
}

static void drop_memory_state(s0__engine *e)
{
	pthread_mutex_lock(&e->mu);
	/* locks held or awaited by request threads stay; s0__engine_unlock frees them */
	for (s0__sblock **p = &e->locks; *p;) {
		s0__sblock *l = *p;
		if (l->refs > 0) {
			p = &l->next;
			continue;
		}
		*p = l->next;
		pthread_mutex_destroy(&l->mu);
		free(l);
	}
	while (e->wakes) {
		s0__wake *w = e->wakes;
		e->wakes = w->next;
		free(w);
	}
	e->kicks = 0;
	pthread_mutex_unlock(&e->mu);
}

void s0__engine_close(s0__engine *e)
{
	if (!e)
		return;
	if (e->faults)
		s0__faults_release_all(e->faults);
	s0__engine_lease_stop(e);
	s0__engine_controller_stop(e);
	pthread_mutex_lock(&e->mu);
	e->stopping = true; /* waits give up */
	while (e->wake_threads > 0)
		pthread_cond_wait(&e->cv, &e->mu);
	pthread_mutex_unlock(&e->mu);
	s0__engine_sessions_save_all(e); /* before the runtimes stop: as they ran */
	free_runtimes(e);
	drop_memory_state(e);
	s0__engine_sessions_free_all(e);
	s0__engine_mem_close(e);
	s0__engine_rt_close(e);
	s0__storage_close(e->storage);
	s0__meta_close(e->meta);
	s0__faults_free(e->faults);
	s0__engine_watch_free(e->watch);
	pthread_mutex_destroy(&e->mu);
	pthread_mutex_destroy(&e->fence.mu);
	pthread_mutex_destroy(&e->fence.tmu);
	pthread_cond_destroy(&e->fence.tcv);
	pthread_cond_destroy(&e->cv);
	free(e->dir);
	free((char *)e->opt.advertise);
	free(e);
}

static int template_build(s0__engine *e, const char *name, const char *dir, uint64_t size_bytes,
                          const s0__mounts *m, s0_error **err)
{
	s0__template_row t = {0};
	s0__strlcpy(t.name, name, sizeof t.name);
	t.volume_bytes = (int64_t)(size_bytes ? size_bytes : e->opt.rootfs_size_bytes);
	t.ephemeral_mounts_json = s0__mounts_to_json(m);
	if (!t.ephemeral_mounts_json)
		return s0__error_nomem(err);
	s0__engine_new_id("img_", t.image, sizeof t.image);
	t.created_at_ms = t.updated_at_ms = s0__engine_now(e); /* team_id "": public */
	int rc = s0__storage_template(e->storage, dir, (uint64_t)t.volume_bytes,
	                              (const char *const *)m->paths, m->n, t.generation, err);
	if (rc == S0_OK)
		rc = s0__meta_template_put(e->meta, &t, err);
	if (rc == S0_OK)
		s0__storage_unpin(e->storage, t.generation);
	s0__template_row_clear(&t);
	return rc;
}

int s0__engine_template_build(s0__engine *e, const char *name, const char *dir,
                              uint64_t size_bytes, const char *const *ephemeral, s0_error **err)
{
	cJSON *spec = cJSON_CreateObject();
	cJSON *arr = spec ? cJSON_AddArrayToObject(spec, "ephemeral_mounts") : NULL;
	int rc = arr ? S0_OK : s0__error_nomem(err);
	for (size_t i = 0; rc == S0_OK && ephemeral && ephemeral[i]; i++) {
		cJSON *it = cJSON_CreateString(ephemeral[i]);
		if (!it)
			rc = s0__error_nomem(err);
		else
			cJSON_AddItemToArray(arr, it);
	}
	s0__mounts m = {0};
	if (rc == S0_OK)
		rc = s0__mounts_from_spec(spec, &m, err);
	cJSON_Delete(spec);
	if (rc == S0_OK)
		rc = template_build(e, name, dir, size_bytes, &m, err);
	s0__mounts_free(&m);
	return rc;
}

int s0__engine_template_build_spec(s0__engine *e, const char *name, const char *dir,
                                   uint64_t size_bytes, const char *spec_json, s0_error **err)
{
	cJSON *spec = spec_json ? cJSON_Parse(spec_json) : NULL;
	if (spec_json && !spec)
		return s0__error_set(err, S0_EINVAL, "bad_request", "template spec is not JSON");
	s0__mounts m;
	int rc = s0__mounts_from_spec(spec, &m, err);
	cJSON_Delete(spec);
	if (rc == S0_OK)
		rc = template_build(e, name, dir, size_bytes, &m, err);
	s0__mounts_free(&m);
	return rc;
}

/*
 * After the previous process died, its runtimes are gone (REC-01..REC-09): pauses that never
 * published roll back, and every
 * sandbox that had a runtime recovers from its last committed head
 * (recover.c); published pauses and deletes continue on the controller.
 */
/* A new incarnation of the node: every allocation directory belongs to a
 * runtime of the previous process, which is gone. */
static void sweep_allocations(s0__engine *e)
{
	char *base = s0__asprintf("%s/allocs", e->dir);
	DIR *d = base ? opendir(base) : NULL;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *p = s0__asprintf("%s/%s", base, de->d_name);
		if (p)
			rmdir(p);
		free(p);
	}
	if (d)
		closedir(d);
	free(base);
}

static void recover_all(s0__engine *e)
{
	char **ids = NULL;
	size_t n = 0;
	if (s0__meta_sandbox_all(e->meta, &ids, &n, NULL) < 0)
		return;
	pthread_mutex_lock(&e->mu);
	e->seq = (int64_t)n + s0__engine_now(e);
	pthread_mutex_unlock(&e->mu);
	for (size_t i = 0; i < n; i++)
		s0__engine_recover_after_restart(e, ids[i]);
	s0__meta_free_ids(ids, n);
}

static int ensure_default_template(s0__engine *e, s0_error **err)
{
	s0__template_row t;
	if (s0__meta_template_get(e->meta, "default", &t, NULL) == S0_OK) {
		s0__template_row_clear(&t);
		return S0_OK;
	}
	char *tree = NULL; /* what the runtime's programs need to start (runtime.h) */
	int rc = e->rt_drv->root_tree(e->rt_host, &tree, err);
	if (rc == S0_OK)
		rc = s0__engine_template_build(e, "default", tree, 0, NULL, err);
	free(tree);
	return rc;
}

static int live_gens(void *payload, char ***ids, size_t *n, s0_error **err);

/* Every unfinished operation reads (a kind or state outside the table is
 * S0_EINVAL unknown_op_kind/unknown_op_state): the controller never runs
 * on a store it cannot read. */
static int readable_ops(s0__engine *e, s0_error **err)
{
	s0__op_row *ops = NULL;
	size_t n = 0;
	int rc = s0__meta_op_pending(e->meta, &ops, &n, err);
	free(ops);
	return rc;
}

int s0__engine_open(const char *dir, const s0__engine_options *opt, s0__engine **out,
                    s0_error **err)
{
	s0__engine *e = calloc(1, sizeof *e);
	if (!e)
		return s0__error_nomem(err);
	pthread_mutex_init(&e->mu, NULL);
	pthread_mutex_init(&e->fence.mu, NULL);
	pthread_mutex_init(&e->fence.tmu, NULL);
	pthread_cond_init(&e->fence.tcv, NULL);
	pthread_cond_init(&e->cv, NULL);
	e->opt = *opt;
	if (e->opt.lease_ms <= 0)
		e->opt.lease_ms = 30000;
	e->dir = s0__strdup(dir);
	e->opt.advertise = opt->advertise ? s0__strdup(opt->advertise) : NULL; /* kept */
	s0__node_init(&e->node, opt->node_cpu_millis, opt->node_memory_bytes, opt->warm_carriers);
	e->watch = s0__engine_watch_new();
	int rc = e->dir && e->watch && (!opt->advertise || e->opt.advertise) ? S0_OK
	                                                                     : s0__error_nomem(err);
	if (rc == S0_OK)
		rc = s0__engine_rt_open(e, err);
	if (rc == S0_OK)
		rc = s0__faults_new(&e->opt.clock, &e->faults, err);
	if (rc == S0_OK) /* a refused object store must not migrate the metadata first */
		rc = s0__storage_check(dir, opt->object_store, err);
	if (rc == S0_OK)
		rc = opt->meta ? s0__meta_open_backend("postgres", opt->meta, &e->meta, err)
		               : s0__meta_open(dir, &e->meta, err);
	if (rc == S0_OK) /* a row this library cannot read stops here, named */
		rc = readable_ops(e, err);
	if (rc == S0_OK)
		rc = s0__storage_open(dir, opt->object_store, opt->key_file, e->faults, &e->storage,
		                      err);
	if (rc == S0_OK) {
		s0__storage_set_roots(e->storage, live_gens, e);
		rc = s0__engine_mem_init(e, err);
	}
	if (rc == S0_OK)
		rc = s0__ctld_init(e, err);
	if (rc == S0_OK) /* this node's lease: a new epoch fences any earlier holder */
		rc = s0__engine_fence_open(e, err);
	if (rc == S0_OK) /* renewed from threads of its own (lease.c) */
		rc = s0__engine_lease_start(e, err);
	if (rc == S0_OK) /* where other nodes forward this node's sandboxes' calls */
		rc = s0__engine_advertise_open(e, err);
	if (rc == S0_OK) /* changes other nodes commit wake waiters here too */
		rc = s0__engine_listen_open(e, err);
	if (rc == S0_OK) {
		rc = ensure_default_template(e, err);
	}
	if (rc == S0_OK) {
		sweep_allocations(e);
		recover_all(e);
		rc = s0__engine_controller_start(e, err);
	}
	if (rc < 0) {
		s0__engine_close(e);
		return rc;
	}
	*out = e;
	return S0_OK;
}

int s0__engine_restart_manager(s0__engine *e, s0_error **err)
{
	s0__engine_controller_stop(e);
	drop_memory_state(e);
	/* the manager reloads everything from the metadata store; runtimes stay */
	return s0__engine_controller_start(e, err);
}

static int live_gens(void *payload, char ***ids, size_t *n, s0_error **err)
{
	s0__engine *e = payload;
	return s0__meta_live_generations(e->meta, ids, n, err);
}

int s0__engine_gc(s0__engine *e, s0_error **err)
{
	return s0__storage_gc(e->storage, err);
}
