/*
 * The simulated runtime behind the runtime seam (sim.h): one generation is
 * a runtime tmpfs, the files view over the attached RootFS and that tmpfs,
 * and a guest bound to it. The host keeps the ids of the generations it
 * started and has not stopped: the terminal proof of an id is its absence
 * from that set (a stopped generation freed its guest, tmpfs and view).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "local/fsview/router.h"
#include "local/fsview/tmpfs.h"
#include "local/runtime/sim/guest.h"
#include "local/runtime/sim/httpd.h"
#include "local/runtime/sim/image.h"
#include "local/runtime/sim/sessions.h"
#include "local/runtime/sim/sim_int.h"

/* A generation still holding its resources (started, not stopped). */
typedef struct live_id {
	char *id;
	struct live_id *next;
} live_id;

struct s0__rt_host {
	s0_clock clock;
	bool no_memory;
	pthread_mutex_t mu; /* live */
	live_id *live;
};

struct s0__rt_gen {
	s0__rt_host *h;
	char *id;
	char *sandbox_id; /* for files_changed */
	void (*files_changed)(void *arg, const char *sandbox_id, const char *event,
	                      const char *path);
	bool (*files_watched)(void *arg, const char *sandbox_id);
	void *files_changed_arg;
	int64_t generation;
	s0__tmpfs *tmpfs;
	s0__files_ns ns;
	bool ns_ready;
	s0__guest *guest;
	pthread_mutex_t mu; /* synced_ms */
	int64_t synced_ms;  /* engine time the guest's virtual time last caught up to */
	s0__sim_image_ref image; /* what capture() hands out */
};

/* A restored image not yet started: its guest and tmpfs. */
struct s0__rt_image {
	s0__guest *guest;
	s0__tmpfs *tmpfs;
};

static void sim_image_free(s0__rt_image *img)
{
	if (!img)
		return;
	s0__guest_free(img->guest);
	s0__tmpfs_free(img->tmpfs);
	free(img);
}

static int sim_probe(s0_error **err)
{
	(void)err;
	return S0_OK; /* runs wherever the library runs */
}

static int sim_open(const s0__rt_host_opts *o, s0__rt_host **out, s0_error **err)
{
	s0__rt_host *h = calloc(1, sizeof *h);
	if (!h)
		return s0__error_nomem(err);
	if (o && o->clock)
		h->clock = *o->clock;
	else
		s0_clock_real(&h->clock);
	h->no_memory = o && o->no_memory;
	pthread_mutex_init(&h->mu, NULL);
	*out = h;
	return S0_OK;
}

static void sim_close(s0__rt_host *h)
{
	if (!h)
		return;
	while (h->live) {
		live_id *n = h->live->next;
		free(h->live->id);
		free(h->live);
		h->live = n;
	}
	pthread_mutex_destroy(&h->mu);
	free(h);
}

static uint32_t sim_caps(s0__rt_host *h)
{
	uint32_t c = S0__RT_CAP_VIRTUAL_TIME | S0__RT_CAP_NETWORK | S0__RT_CAP_CONTEXTS |
	             S0__RT_CAP_SESSIONS;
	return h->no_memory ? c : c | S0__RT_CAP_MEMORY;
}

static int sim_root_tree(s0__rt_host *h, char **dir_out, s0_error **err)
{
	(void)h;
	(void)err;
	*dir_out = NULL; /* the guest's shell is built in: the standard empty tree */
	return S0_OK;
}

static void sim_fingerprint(s0__rt_host *h, s0__rt_fp *out)
{
	(void)h;
	s0__rt_fp_host(out, "s0-sim/1");
}

static int live_add(s0__rt_host *h, const char *id)
{
	live_id *l = calloc(1, sizeof *l);
	if (!l || !(l->id = s0__strdup(id))) {
		free(l);
		return S0_ENOMEM;
	}
	pthread_mutex_lock(&h->mu);
	l->next = h->live;
	h->live = l;
	pthread_mutex_unlock(&h->mu);
	return S0_OK;
}

static void live_remove(s0__rt_host *h, const char *id)
{
	live_id *gone = NULL;
	pthread_mutex_lock(&h->mu);
	for (live_id **p = &h->live; *p; p = &(*p)->next)
		if (!strcmp((*p)->id, id)) {
			gone = *p;
			*p = gone->next;
			break;
		}
	pthread_mutex_unlock(&h->mu);
	if (gone)
		free(gone->id);
	free(gone);
}

/* A fresh runtime tmpfs (/tmp, /proc, /dev, /sys) plus the template's
 * ephemeral mounts with their size limits. */
static int new_tmpfs(s0__rt_host *h, const s0__rt_start *r, s0__tmpfs **out, s0_error **err)
{
	int rc = s0__tmpfs_new_runtime_clock(&h->clock, NULL, 0, out, err);
	for (size_t i = 0; rc == S0_OK && i < r->n_ephemeral; i++) {
		s0_error *e = NULL;
		uint64_t limit = r->ephemeral_limits ? r->ephemeral_limits[i] : 0;
		rc = s0__tmpfs_add_mount(*out, r->ephemeral[i], strlen(r->ephemeral[i]), 0777, 0,
		                         limit, &e);
		if (rc == S0_ECONFLICT) { /* listed twice, or one of the built-ins */
			s0_error_free(e);
			rc = S0_OK;
		} else if (rc < 0) {
			s0__error_put(err, e);
		}
	}
	return rc;
}

static void gen_free(s0__rt_gen *g)
{
	if (g->guest) /* graceful shutdown: procd first, then its children (SES-04) */
		s0__guest_shutdown(g->guest);
	s0__sim_httpd_forget(g->guest);
	s0__guest_free(g->guest);
	if (g->ns_ready)
		s0__files_ns_clear(&g->ns);
	s0__tmpfs_free(g->tmpfs);
	pthread_mutex_destroy(&g->mu);
	free(g->id);
	free(g->sandbox_id);
	free(g);
}

/* The files view's hook (fsview/router.h) onto the engine's files_changed. */
static void files_hook(void *arg, const char *event, const char *path)
{
	s0__rt_gen *g = arg;
	g->files_changed(g->files_changed_arg, g->sandbox_id, event, path);
}

static bool files_hook_wanted(void *arg)
{
	s0__rt_gen *g = arg;
	return !g->files_watched || g->files_watched(g->files_changed_arg, g->sandbox_id);
}

static int sim_start(s0__rt_host *h, const s0__rt_start *r, s0__rt_gen **out, s0_error **err)
{
	s0__rt_image *img = r ? r->image : NULL; /* ours to free, whatever happens */
	if (!r || !r->rootfs || !r->runtime_id || (r->n_ephemeral && !r->ephemeral)) {
		sim_image_free(img);
		return s0__error_set(err, S0_EINVAL, "invalid_request",
		                     "a runtime start needs a RootFS and a runtime id");
	}
	s0__rt_gen *g = calloc(1, sizeof *g);
	if (!g || !(g->id = s0__strdup(r->runtime_id))) {
		free(g);
		sim_image_free(img);
		return s0__error_nomem(err);
	}
	g->h = h;
	g->generation = r->generation;
	pthread_mutex_init(&g->mu, NULL);
	int rc = S0_OK;
	if (img && img->tmpfs) { /* /tmp and ephemeral mounts as captured */
		g->tmpfs = img->tmpfs;
		img->tmpfs = NULL;
	} else {
		rc = new_tmpfs(h, r, &g->tmpfs, err);
	}
	if (rc == S0_OK) /* a restored one too: its new times follow the engine clock */
		s0__tmpfs_set_clock(g->tmpfs, &h->clock);
	if (rc == S0_OK)
		rc = s0__files_ns_init(&g->ns, r->rootfs, g->tmpfs, r->ephemeral, r->n_ephemeral, err);
	g->ns_ready = rc == S0_OK;
	if (rc == S0_OK && r->files_changed && r->sandbox_id) {
		if (!(g->sandbox_id = s0__strdup(r->sandbox_id)))
			rc = s0__error_nomem(err);
		g->files_changed = r->files_changed;
		g->files_changed_arg = r->files_changed_arg;
		g->files_watched = r->files_watched;
		g->ns.hook = files_hook;
		g->ns.hook_wanted = files_hook_wanted;
		g->ns.hook_arg = g;
	}
	if (rc == S0_OK && img && img->guest) {
		g->guest = img->guest;
		img->guest = NULL;
	} else if (rc == S0_OK) {
		s0__guest_opts go = {.clock = &h->clock,
		                     .env_vars = cJSON_IsObject(r->env_vars) ? r->env_vars : NULL};
		rc = s0__guest_new(&go, &g->guest, err);
	}
	if (rc == S0_OK) {
		s0__guest_bind_files(g->guest, &g->ns);
		g->synced_ms = h->clock.now_unix_ms(h->clock.ctx);
		if (live_add(h, g->id) < 0)
			rc = s0__error_nomem(err);
	}
	sim_image_free(img);
	if (rc < 0) {
		gen_free(g);
		return rc;
	}
	*out = g;
	return S0_OK;
}

static int sim_ready(s0__rt_gen *g, s0_error **err)
{
	s0__proc_info pi;
	if (!g->guest || s0__guest_proc_get(g->guest, 1, &pi, NULL) < 0 ||
	    pi.state != S0__PS_RUNNING)
		return s0__error_set(err, S0_EUNAVAILABLE, "procd_not_ready",
		                     "sandbox runtime did not become ready");
	return S0_OK;
}

static void sim_stop(s0__rt_gen *g)
{
	if (!g)
		return;
	s0__rt_host *h = g->h;
	char *id = g->id;
	g->id = NULL;
	gen_free(g);
	live_remove(h, id);
	free(id);
}

static int sim_terminal_proof(s0__rt_host *h, const char *runtime_id, s0_error **err)
{
	bool present = false;
	pthread_mutex_lock(&h->mu);
	for (live_id *l = h->live; l && !present; l = l->next)
		present = !strcmp(l->id, runtime_id);
	pthread_mutex_unlock(&h->mu);
	if (present)
		return s0__error_set(err, S0_EUNAVAILABLE, "resource_leak",
		                     "runtime %s still holds its guest and tmpfs", runtime_id);
	return S0_OK;
}

static int sim_cut(s0__rt_gen *g, int (*fn)(void *arg, s0_error **err), void *arg,
                   s0_error **err)
{
	(void)g; /* the guest writes through the engine's RootFS handle: nothing to quiesce */
	return fn(arg, err);
}

static const s0__files_ns *sim_files(s0__rt_gen *g)
{
	return g->ns_ready ? &g->ns : NULL;
}

static int sim_network_apply(s0__rt_gen *g, s0__netpolicy *policy, s0_error **err)
{
	(void)err;
	s0__guest_set_network(g->guest, policy);
	return S0_OK;
}

static void sim_clock_sync(s0__rt_gen *g, int64_t now_ms)
{
	pthread_mutex_lock(&g->mu);
	int64_t d = now_ms - g->synced_ms;
	if (d > 0)
		g->synced_ms = now_ms;
	pthread_mutex_unlock(&g->mu);
	if (d > 0)
		s0__guest_advance(g->guest, d, NULL);
}

/* Guest summary: procd version, process count and PIDs, the network. */
static cJSON *sim_inspect(s0__rt_gen *g)
{
	cJSON *gi = s0__guest_inspect(g->guest);
	cJSON *o = gi ? cJSON_CreateObject() : NULL;
	if (!o) {
		cJSON_Delete(gi);
		return NULL;
	}
	const cJSON *pv = cJSON_GetObjectItem(gi, "procd_version");
	const cJSON *ps = cJSON_GetObjectItem(gi, "processes");
	if (cJSON_IsString(pv))
		cJSON_AddStringToObject(o, "procd_version", pv->valuestring);
	cJSON_AddNumberToObject(o, "processes", cJSON_GetArraySize(ps));
	cJSON *net = cJSON_DetachItemFromObject(gi, "network");
	if (!cJSON_AddItemToObject(o, "network", net))
		cJSON_Delete(net);
	cJSON *pids = cJSON_AddArrayToObject(o, "pids");
	const cJSON *p;
	cJSON_ArrayForEach(p, ps)
	{
		const cJSON *pid = cJSON_GetObjectItem(p, "pid");
		if (pids && cJSON_IsNumber(pid))
			cJSON_AddItemToArray(pids, cJSON_CreateNumber(pid->valuedouble));
	}
	cJSON_Delete(gi);
	return o;
}

s0__guest *s0__sim_guest(s0__rt_gen *g)
{
	return g->guest;
}

static int sim_connect_port(s0__rt_gen *g, int port, int *fd_out, s0_error **err)
{
	return s0__sim_httpd_connect(g->guest, &g->ns, (uint32_t)port, fd_out, err);
}

static void sim_sessions_adopt(s0__rt_gen *g, s0__sessions *s, bool restored)
{
	if (!s)
		return;
	if (restored) /* restored sessions keep their attempts (SES-06) */
		s0__sessions_memory_restored(s, g->guest, g->generation, NULL);
	else
		s0__sessions_runtime_replaced(s, g->guest, g->generation, NULL);
}

static int sim_sessions_new(s0__rt_host *h, int64_t generation, s0__sessions **out,
                            s0_error **err)
{
	s0__sessions_opts o = {.clock = &h->clock, .generation = generation};
	return s0__sessions_new(&o, out, err);
}

static int sim_sessions_save(s0__sessions *s, void **buf, size_t *len, s0_error **err)
{
	return s0__sessions_serialize(s, buf, len, err);
}

static int sim_sessions_load(s0__rt_host *h, const void *buf, size_t len, int64_t generation,
                             s0__sessions **out, s0_error **err)
{
	s0__sessions_opts o = {.clock = &h->clock, .generation = generation};
	return s0__sessions_deserialize(buf, len, &o, out, err);
}

static int sim_capture(s0__rt_gen *g, s0__rt_image_src *out, s0_error **err)
{
	if (g->h->no_memory)
		return s0__error_set(err, S0_EUNAVAILABLE, "memory_unsupported",
		                     "memory checkpoints are off in this deployment");
	g->image = (s0__sim_image_ref){.guest = g->guest, .tmpfs = g->tmpfs};
	s0__sim_image_src(&g->image, out);
	return S0_OK;
}

static const char *sim_procd_version(s0__rt_gen *g)
{
	return s0__guest_procd_version(g->guest);
}

static int sim_image_restore(s0__rt_host *h, const s0__rt_image_data *d,
                             const s0__rt_restore_opts *o, s0__rt_image **out, s0_error **err)
{
	if (h->no_memory)
		return s0__error_set(err, S0_EUNAVAILABLE, "memory_unsupported",
		                     "memory checkpoints are off in this deployment");
	s0__rt_image *img = calloc(1, sizeof *img);
	if (!img)
		return s0__error_nomem(err);
	s0__guest_opts go = {.clock = &h->clock};
	int rc = s0__sim_image_build(d, &go, o, &img->guest, &img->tmpfs, err);
	if (rc < 0) {
		free(img);
		return rc;
	}
	*out = img;
	return S0_OK;
}

const s0__rt_driver s0__rt_sim_driver = {
	.name = "sim",
	.description = "simulated guest: built-in shell, virtual time, real RootFS and tmpfs data",
	.probe = sim_probe,
	.open = sim_open,
	.close = sim_close,
	.caps = sim_caps,
	.root_tree = sim_root_tree,
	.fingerprint = sim_fingerprint,
	.start = sim_start,
	.ready = sim_ready,
	.stop = sim_stop,
	.terminal_proof = sim_terminal_proof,
	.cut = sim_cut,
	.files = sim_files,
	.network_apply = sim_network_apply,
	.clock_sync = sim_clock_sync,
	.inspect = sim_inspect,
	.proc_call = s0__sim_proc_call,
	.sessions_adopt = sim_sessions_adopt,
	.sessions_new = sim_sessions_new,
	.sessions_free = s0__sessions_free,
	.sessions_save = sim_sessions_save,
	.sessions_load = sim_sessions_load,
	.capture = sim_capture,
	.procd_version = sim_procd_version,
	.image_restore = sim_image_restore,
	.image_free = sim_image_free,
	.connect_port = sim_connect_port,
};
