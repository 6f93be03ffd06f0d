/*
 * The gvisor driver's vtable (gvisor.h): probe, open (with the reclaim of
 * what an earlier process left under the same state directory), start
 * (bundle, `runsc run --detach`), readiness (a command really runs), stop
 * (the cgroup's processes killed, the carrier detached; runsc's records,
 * cgroups, tmpfs, network and bundle in the background, gv_stop.c), and the
 * terminal proof, after that background half, from the resources
 * themselves (runsc's record, cgroups, host processes naming the runtime
 * id, the bundle).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "local/runtime/gvisor/gv_int.h"
#include "local/runtime/gvisor/gv_pagefile.h"
#include "local/runtime/gvisor/procd/procd_proto.h"
#include "local/runtime/sim/sessions.h"

#define RUNSC_TIMEOUT_MS 60000

static int unavailable(s0_error **err, const char *what)
{
	return s0__error_set(err, S0_EUNAVAILABLE, "runtime_unavailable",
	                     "the gvisor runtime cannot run here: %s", what);
}

static bool exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

static int gv_probe(s0_error **err)
{
	if (geteuid() != 0)
		return unavailable(err, "it needs root (runsc, cgroups, loop devices)");
	char *runsc = NULL;
	int rc = s0__gv_find_runsc(&runsc, err);
	free(runsc);
	if (rc < 0)
		return rc;
	if (!exists("/dev/fuse"))
		return unavailable(err, "no /dev/fuse");
	if (!exists("/dev/loop-control"))
		return unavailable(err, "no /dev/loop-control (loop devices)");
	static const char *const ctl[] = {"memory", "pids", "cpu", NULL};
	for (size_t i = 0; ctl[i]; i++) {
		char p[64];
		snprintf(p, sizeof p, "/sys/fs/cgroup/%s/tasks", ctl[i]);
		if (!exists(p))
			return s0__error_set(err, S0_EUNAVAILABLE, "runtime_unavailable",
			                     "the gvisor runtime cannot run here: no cgroup v1 %s "
			                     "hierarchy at /sys/fs/cgroup/%s",
			                     ctl[i], ctl[i]);
	}
	if ((rc = s0__carrier_probe(err)) < 0)
		return rc;
	char *procd = NULL; /* the sandbox's init */
	rc = s0__gv_procd_find(&procd, err);
	free(procd);
	if (rc < 0)
		return rc;
	if (!getenv("S0_GVISOR_TEMPLATE") && !exists("/bin/busybox"))
		return unavailable(err, "no /bin/busybox for the template tree (install "
		                        "busybox-static) and S0_GVISOR_TEMPLATE unset");
	return S0_OK;
}

static bool good_id(const char *id)
{
	if (!id || !*id || strlen(id) > S0__GV_ID_MAX || id[0] == '.' || id[0] == '-')
		return false;
	for (const char *c = id; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_' && *c != '.')
			return false;
	return true;
}

static void rm_rf(const char *p)
{
	char *const argv[] = {"/bin/rm", "-rf", (char *)p, NULL};
	s0__gv_result res;
	s0__gv_run(argv, NULL, 0, 60000, &res, NULL);
	s0__gv_result_clear(&res);
}

/* SIGKILL every host process run with our runsc --root (the sandbox,
 * gofer and exec processes of an earlier process of this state
 * directory), then wait (bounded) until they are gone and reaped. */
static void kill_runsc_processes(s0__rt_host *h)
{
	char *flag = s0__asprintf("--root=%s", h->runsc_root);
	if (!flag)
		return;
	for (int round = 0; round < 300; round++) {
		bool any = false;
		DIR *d = opendir("/proc");
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (!isdigit((unsigned char)de->d_name[0]))
				continue;
			char p[300], buf[8192];
			snprintf(p, sizeof p, "/proc/%s/cmdline", de->d_name);
			int fd = open(p, O_RDONLY | O_CLOEXEC);
			ssize_t len = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
			if (fd >= 0)
				close(fd);
			if (len <= 0)
				continue;
			buf[len] = 0;
			for (ssize_t i = 0; i < len; i += (ssize_t)strlen(buf + i) + 1)
				if (!strcmp(buf + i, flag)) {
					kill(atoi(de->d_name), SIGKILL);
					any = true;
					break;
				}
		}
		if (d)
			closedir(d);
		s0__gv_reap_orphans();
		if (!any)
			break;
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
	}
	free(flag);
}

/* Remove every runsc sandbox, cgroup and bundle an earlier process of
 * this state directory left (it crashed or was killed). */
static void reclaim(s0__rt_host *h)
{
	kill_runsc_processes(h);
	char *bundles = s0__asprintf("%s/bundles", h->dir);
	DIR *d = bundles ? opendir(bundles) : NULL;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' || !good_id(de->d_name))
			continue;
		const char *args[] = {"delete", "--force", de->d_name, NULL};
		s0__gv_result res;
		s0__gv_runsc(h, args, RUNSC_TIMEOUT_MS, true, &res, NULL);
		s0__gv_result_clear(&res);
		s0__gv_cgroup_remove(de->d_name);
		char *b = s0__asprintf("%s/%s", bundles, de->d_name);
		char what[600];
		for (int i = 0; b && i < 64 && s0__gv_mount_under(b, what, sizeof what); i++)
			umount2(what + 6, MNT_DETACH); /* "mount <path>" */
		if (b)
			rm_rf(b);
		free(b);
	}
	if (d)
		closedir(d);
	free(bundles);
	s0__carrier_reclaim(h->carriers, NULL); /* mounts and loops of dead carriers */
	h->images_ok = s0__gv_images_open(h, NULL) == S0_OK; /* and their image directories */
	s0__gv_reap_orphans();
}

/* runsc --network=none keeps a bind mount of an empty network namespace
 * in its root directory: gone with the host. */
static void drop_null_netns(s0__rt_host *h)
{
	char *p = h->runsc_root ? s0__asprintf("%s/null-netns", h->runsc_root) : NULL;
	if (p && umount2(p, MNT_DETACH) == 0)
		unlink(p);
	free(p);
}

static void host_free(s0__rt_host *h)
{
	s0__gv_fin_wait_all(h); /* stops finishing in the background */
	drop_null_netns(h);
	s0__gv_pagefile_wait_all(10000); /* their sandboxes are stopped: files closed */
	s0__gv_hub_close(h->hub);
	s0__gv_images_close(h);
	s0__gv_cgroup_parent_remove();
	if (h->own_dir && h->dir)
		rm_rf(h->dir);
	free(h->runsc);
	free(h->version);
	free(h->dir);
	free(h->runsc_root);
	free(h->carriers);
	free(h->procd);
	pthread_mutex_destroy(&h->mu);
	free(h);
}

static int gv_open(const s0__rt_host_opts *o, s0__rt_host **out, s0_error **err)
{
	int rc = gv_probe(err);
	if (rc < 0)
		return rc;
	s0__rt_host *h = calloc(1, sizeof *h);
	if (!h)
		return s0__error_nomem(err);
	pthread_mutex_init(&h->mu, NULL);
	h->no_memory = o && o->no_memory;
	if (o && o->clock)
		h->clock = *o->clock;
	else
		s0_clock_real(&h->clock);
	if (o && o->state_dir) {
		h->dir = s0__asprintf("%s/gvisor", o->state_dir);
	} else {
		char tmpl[] = "/tmp/s0-gvisor.XXXXXX";
		h->dir = mkdtemp(tmpl) ? s0__strdup(tmpl) : NULL;
		h->own_dir = h->dir != NULL;
	}
	rc = s0__gv_find_runsc(&h->runsc, err);
	if (rc == S0_OK)
		rc = s0__gv_procd_find(&h->procd, err);
	if (rc == S0_OK && !h->dir)
		rc = s0__error_set(err, S0_EIO, "runtime_unavailable",
		                   "cannot make the gvisor state directory: %s", strerror(errno));
	if (rc == S0_OK && (!(h->runsc_root = s0__asprintf("%s/runsc", h->dir)) ||
	                    !(h->carriers = s0__asprintf("%s/carriers", h->dir))))
		rc = s0__error_nomem(err);
	char *bundles = rc == S0_OK ? s0__asprintf("%s/bundles", h->dir) : NULL;
	if (rc == S0_OK && (!bundles || (mkdir(h->dir, 0700) < 0 && errno != EEXIST) ||
	                    (mkdir(h->runsc_root, 0700) < 0 && errno != EEXIST) ||
	                    (mkdir(bundles, 0700) < 0 && errno != EEXIST)))
		rc = s0__error_set(err, S0_EIO, "runtime_unavailable", "cannot make %s: %s",
		                   h->dir, strerror(errno));
	free(bundles);
	if (rc == S0_OK) {
		char *const argv[] = {h->runsc, "--version", NULL};
		s0__gv_result res;
		rc = s0__gv_run(argv, NULL, 0, 30000, &res, err);
		if (rc == S0_OK && res.status != 0)
			rc = unavailable(err, "runsc --version failed");
		if (rc == S0_OK) {
			char *nl = strchr(res.out.data ? res.out.data : "", '\n');
			if (nl)
				*nl = 0;
			h->version = s0__strdup(res.out.data ? res.out.data : "runsc");
		}
		s0__gv_result_clear(&res);
	}
	if (rc < 0) {
		host_free(h);
		return rc;
	}
	s0__gv_subreaper();
	reclaim(h);
	char *netdir = s0__asprintf("%s/net", h->dir);
	rc = netdir ? s0__gv_hub_open(netdir, &h->hub, err) : s0__error_nomem(err);
	free(netdir);
	if (rc < 0) {
		host_free(h);
		return rc;
	}
	*out = h;
	return S0_OK;
}

static void gv_close(s0__rt_host *h)
{
	if (h)
		host_free(h);
}

static uint32_t gv_caps(s0__rt_host *h)
{
	return S0__RT_CAP_CONTEXTS | S0__RT_CAP_SESSIONS | S0__RT_CAP_REAL_PROCESSES |
	       S0__RT_CAP_KERNEL_FS | S0__RT_CAP_NETWORK |
	       (s0__gv_mem_missing(h) ? 0 : S0__RT_CAP_MEMORY);
}

/* The template tree of gv_root.c: $S0_GVISOR_TEMPLATE, else busybox. */
static int gv_root_tree(s0__rt_host *h, char **dir_out, s0_error **err)
{
	const char *env = getenv("S0_GVISOR_TEMPLATE");
	char *dir = env && *env ? s0__strdup(env) : s0__asprintf("%s/template", h->dir);
	if (!dir)
		return s0__error_nomem(err);
	int rc = exists(dir) ? S0_OK : s0__gv_busybox_tree(dir, err);
	if (rc < 0) {
		free(dir);
		return rc;
	}
	*dir_out = dir;
	return S0_OK;
}

static void gen_free(s0__rt_gen *g)
{
	s0__gv_ckpt_unref(g->ck); /* a source the engine holds keeps its own reference */
	s0__gv_ctxs_free(g->ctxs);
	s0__gv_ses_free(g->ses);
	s0__gv_pd_close(g->procd);
	free(g->procd_dir);
	free(g->id);
	free(g->sandbox_id);
	free(g->root);
	free(g->bundle);
	s0__gv_argv_free(g->env);
	free(g);
}

/* Tear down what a generation made: sandbox, cgroups, bundle. */
static void teardown(s0__rt_host *h, const char *id, const char *bundle)
{
	const char *args[] = {"delete", "--force", id, NULL};
	s0__gv_result res;
	s0__gv_runsc(h, args, RUNSC_TIMEOUT_MS, true, &res, NULL);
	s0__gv_result_clear(&res);
	s0__gv_cgroup_remove(id);
	if (bundle)
		rm_rf(bundle);
	s0__gv_reap_orphans();
}

/* Detach the generation's carrier (its sandbox is gone): a mount still
 * busy for a moment after runsc's processes died is retried, briefly. */
static void carrier_end(s0__rt_gen *g, s0__carrier_stats *stats)
{
	if (!g->carrier)
		return;
	for (int i = 0; i < 200; i++) {
		s0_error *e = NULL;
		int rc = s0__carrier_detach(g->carrier, &e);
		bool busy = rc == S0_ECONFLICT;
		if (rc < 0 && !busy)
			fprintf(stderr, "gvisor: carrier %s: %s\n", g->id, e ? s0_error_message(e) : "?");
		s0_error_free(e);
		if (!busy)
			break;
		s0__gv_reap_orphans();
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
	}
	if (stats)
		s0__carrier_stats_get(g->carrier, stats);
	s0__carrier_free(g->carrier); /* a carrier still busy is kept for reclaim */
	g->carrier = NULL;
}

static int env_from(const cJSON *vars, char ***out, s0_error **err)
{
	int n = cJSON_IsObject(vars) ? cJSON_GetArraySize(vars) : 0;
	char **e = calloc((size_t)n + 1, sizeof *e);
	if (!e)
		return s0__error_nomem(err);
	*out = e;
	if (vars && !cJSON_IsObject(vars) && !cJSON_IsNull(vars))
		return s0__error_set(err, S0_EINVAL, "invalid_request", "env_vars must be an object");
	int i = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, vars)
	{
		if (!cJSON_IsString(it) || !it->string || !*it->string || strchr(it->string, '='))
			return s0__error_set(err, S0_EINVAL, "invalid_request",
			                     "env_vars must map names to strings");
		if (!(e[i++] = s0__asprintf("%s=%s", it->string, it->valuestring)))
			return s0__error_nomem(err);
	}
	return S0_OK;
}

/* The generation's network (a restore: the slot of the capture), in a
 * thread of its own while the carrier attaches. */
typedef struct net_job {
	s0__rt_gen *g;
	s0__rt_image *img;
	int rc;
	s0_error *err;
} net_job;

static void *net_main(void *arg)
{
	net_job *j = arg;
	s0__rt_gen *g = j->g;
	j->rc = j->img ? s0__gv_restore_net(g, j->img, &j->err)
	               : s0__gv_net_prepare(g->h->hub, g->id, -1, &g->net, &j->err);
	return NULL;
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

static int gv_start(s0__rt_host *h, const s0__rt_start *r, s0__rt_gen **out, s0_error **err)
{
	s0__rt_image *img = r ? r->image : NULL; /* freed below in every case */
	int bad = S0_OK;
	if (!r || !r->runtime_id || !r->sandbox_id || (r->n_ephemeral && !r->ephemeral))
		bad = s0__error_set(err, S0_EINVAL, "invalid_request",
		                    "a runtime start needs a sandbox id and a runtime id");
	else if (!good_id(r->runtime_id) || !good_id(r->sandbox_id))
		bad = s0__error_set(err, S0_EINVAL, "invalid_request",
		                    "runtime and sandbox ids must be 1..%d of [A-Za-z0-9_.-]",
		                    S0__GV_ID_MAX);
	s0__rt_gen *g = bad < 0 ? NULL : calloc(1, sizeof *g);
	if (!g) {
		s0__gv_image_free(img);
		return bad < 0 ? bad : s0__error_nomem(err);
	}
	g->h = h;
	g->generation = r->generation;
	g->started_ms = h->clock.now_unix_ms(h->clock.ctx);
	g->id = s0__strdup(r->runtime_id);
	g->sandbox_id = s0__strdup(r->sandbox_id);
	g->bundle = s0__asprintf("%s/bundles/%s", h->dir, r->runtime_id);
	g->ctxs = s0__gv_ctxs_new(g);
	g->ses = s0__gv_ses_new(g); /* session attempts (gv_sessions.c) */
	int rc = g->id && g->sandbox_id && g->bundle && g->ctxs && g->ses ? S0_OK
	                                                                  : s0__error_nomem(err);
	if (rc == S0_OK)
		rc = env_from(r->env_vars, &g->env, err);
	if (rc == S0_OK)
		rc = s0__gv_bundle_check(r, err);
	if (rc == S0_OK && !r->dev) /* no branch given: a plain directory tree */
		rc = s0__gv_root_attach(h, r->sandbox_id, &g->root, err);
	if (rc == S0_OK && mkdir(g->bundle, 0700) < 0 && errno != EEXIST)
		rc = s0__error_set(err, S0_EIO, "runtime_unavailable", "cannot make %s: %s",
		                   g->bundle, strerror(errno));
	int64_t t0 = s0__gv_now_us(), t_net = 0, t_carrier = 0, t_bundle = 0;
	bool restoring = img != NULL;
	/* the tmpfs mounts first: the carrier's mount namespace copies them */
	if (rc == S0_OK)
		rc = s0__gv_tmpfs_make(g, r, err);
	/* the network is made while the carrier attaches (both take ms) */
	net_job nj = {.g = g, .img = img, .rc = S0_OK};
	pthread_t nt;
	bool net_thread = false;
	if (rc == S0_OK && !(net_thread = pthread_create(&nt, NULL, net_main, &nj) == 0))
		net_main(&nj);
	const char *files_root = g->root;
	if (rc == S0_OK && r->dev) { /* the RootFS branch as kernel ext4 */
		s0__carrier_opts co = {.dev = r->dev, .state_dir = h->carriers, .id = g->id};
		rc = s0__carrier_attach(&co, &g->carrier, err);
		if (rc == S0_OK && !(g->root = s0__strdup(s0__carrier_root(g->carrier))))
			rc = s0__error_nomem(err);
		files_root = rc == S0_OK ? s0__carrier_host_root(g->carrier) : NULL;
	}
	t_carrier = s0__gv_now_us();
	if (net_thread)
		pthread_join(nt, NULL);
	t_net = s0__gv_now_us();
	if (nj.rc < 0 && rc == S0_OK)
		rc = s0__error_put(err, nj.err);
	else
		s0_error_free(nj.err);
	if (rc == S0_OK)
		/* procd, PID 1: a restore's is the one captured (MEM-11) */
		rc = s0__gv_init_stage(g, img ? s0__gv_image_procd(img) : NULL, err);
	if (rc == S0_OK)
		rc = s0__gv_bundle_write(g, r, err);
	if (rc == S0_OK) {
		rc = s0__gv_files_open(&g->files, files_root, (const char *const *)g->rt_paths,
		                       (const char *const *)g->rt_dirs, g->n_rt, err);
		g->files_open = rc == S0_OK;
	}
	if (rc == S0_OK && r->files_changed) { /* the files API's changes, for file watches */
		g->files_changed = r->files_changed;
		g->files_watched = r->files_watched;
		g->files_changed_arg = r->files_changed_arg;
		g->files.ns.hook = files_hook;
		g->files.ns.hook_wanted = files_hook_wanted;
		g->files.ns.hook_arg = g;
		/* the guest's own changes (gv_watch.c), while someone listens */
		rc = s0__gv_watch_start(g, &g->files.watch, err);
	}
	t_bundle = s0__gv_now_us();
	if (rc == S0_OK && img) /* a memory image continues (gv_restore.c) */
		rc = s0__gv_restore_run(g, img, err);
	else if (rc == S0_OK) {
		char *bflag = s0__asprintf("--bundle=%s", g->bundle);
		const char *args[] = {"run", "--detach", bflag, g->id, NULL};
		rc = bflag ? s0__gv_init_run(g, args, false, err) : s0__error_nomem(err);
		free(bflag);
	}
	s0__gv_image_free(img);
	if (rc == S0_OK) {
		int64_t t_run = s0__gv_now_us();
		s0__gv_trace(g->id,
		             "start tmpfs+carrier=%.1fms net-join=%.1fms procd+bundle+files=%.1fms "
		             "%s=%.1fms total=%.1fms",
		             (t_carrier - t0) / 1e3, (t_net - t_carrier) / 1e3, (t_bundle - t_net) / 1e3,
		             restoring ? "restore" : "run+hello", (t_run - t_bundle) / 1e3, (t_run - t0) / 1e3);
	}
	if (rc < 0) {
		s0__gv_watch_stop(g->files.watch);
		g->files.watch = NULL;
		if (g->files_open)
			s0__gv_files_close(&g->files);
		if (g->bundle && g->id)
			teardown(h, g->id, NULL);
		carrier_end(g, NULL);
		s0__gv_tmpfs_drop(g);
		s0__gv_net_free(g->net);
		if (g->bundle)
			rm_rf(g->bundle);
		gen_free(g);
		return rc;
	}
	pthread_mutex_lock(&h->mu);
	h->live++;
	pthread_mutex_unlock(&h->mu);
	*out = g;
	return S0_OK;
}

/* Readiness: a first command really runs through procd (gv_init.c). */
static int gv_ready(s0__rt_gen *g, s0_error **err)
{
	int64_t t0 = s0__gv_now_us();
	char *cmd[] = {"/bin/sh", "-c", "echo s0-ready", NULL};
	s0__gv_pp *pp = NULL;
	s0_error *why = NULL;
	int rc = s0__gv_pp_spawn(g->procd, cmd, NULL, "/", false, RUNSC_TIMEOUT_MS, &pp, &why);
	s0__buf out = {0}, errb = {0};
	int status = -1;
	for (int i = 0; rc == S0_OK && i < RUNSC_TIMEOUT_MS / 100 && !s0__gv_pp_exited(pp, &status);
	     i++)
		s0__gv_pp_read(pp, &out, &errb, 100);
	if (pp)
		s0__gv_pp_read(pp, &out, &errb, 0);
	s0__gv_pp_free(pp);
	s0__buf_put(&out, "", 1);
	s0__buf_put(&errb, "", 1);
	bool ok = rc == S0_OK && status == 0 && !strcmp(out.data, "s0-ready\n");
	s0__gv_trace(g->id, "ready %.1fms", (s0__gv_now_us() - t0) / 1e3);
	if (!ok)
		rc = s0__error_set(err, S0_EUNAVAILABLE, "procd_not_ready",
		                   "sandbox runtime did not become ready: %.300s",
		                   why ? s0_error_message(why) : errb.data);
	s0_error_free(why);
	s0__buf_free(&out);
	s0__buf_free(&errb);
	return ok ? S0_OK : rc;
}

static void *net_free_main(void *arg)
{
	s0__gv_net_free(arg); /* the kernel's veth teardown: tens of ms */
	return NULL;
}

/* The rest of a stop, in the background once the sandbox's processes are
 * gone (gv_stop.c), while the carrier detaches and the engine seals,
 * publishes and commits: runsc's records of the dead sandbox, the
 * cgroups, the tmpfs mounts and the network (in parallel), then the
 * bundle (last: the next open's reclaim starts from it). @p arg is a shell
 * generation holding only these; gv_terminal_proof() joins this first. */
static void stop_finish(void *arg)
{
	s0__rt_gen *g = arg;
	s0__rt_host *h = g->h;
	int64_t t0 = s0__gv_now_us();
	pthread_t nt;
	bool net_thread = g->net && pthread_create(&nt, NULL, net_free_main, g->net) == 0;
	if (!net_thread)
		s0__gv_net_free(g->net);
	g->net = NULL;
	teardown(h, g->id, NULL);
	int64_t t1 = s0__gv_now_us();
	s0__gv_tmpfs_drop(g); /* after the sandbox is gone: nothing holds them */
	if (net_thread)
		pthread_join(nt, NULL);
	int64_t t2 = s0__gv_now_us();
	if (s0__gv_rm_tree(g->bundle) < 0)
		rm_rf(g->bundle);
	int64_t t3 = s0__gv_now_us();
	s0__gv_trace(g->id, "stop-finish runsc-delete+cgroups=%.1fms tmpfs+net-join=%.1fms "
	             "bundle=%.1fms total=%.1fms",
	             (t1 - t0) / 1e3, (t2 - t1) / 1e3, (t3 - t2) / 1e3, (t3 - t0) / 1e3);
	gen_free(g);
	pthread_mutex_lock(&h->mu);
	h->live--;
	pthread_mutex_unlock(&h->mu);
}

/* A generation holding what stop_finish() removes, moved out of @p g. */
static s0__rt_gen *finish_shell(s0__rt_gen *g)
{
	s0__rt_gen *f = calloc(1, sizeof *f);
	if (f && !(f->id = s0__strdup(g->id))) {
		free(f);
		f = NULL;
	}
	if (!f)
		return NULL;
	f->h = g->h;
	f->bundle = g->bundle;
	f->net = g->net;
	f->rt_paths = g->rt_paths;
	f->rt_dirs = g->rt_dirs;
	f->n_rt = g->n_rt;
	g->bundle = NULL;
	g->net = NULL;
	g->rt_paths = g->rt_dirs = NULL;
	g->n_rt = 0;
	return f;
}

static void *early_sync_main(void *arg)
{
	s0_error *e = NULL;
	s0__carrier_sync(arg, &e); /* a failure shows again in the detach's syncfs */
	s0_error_free(e);
	return NULL;
}

/* How long the fast stop waits for the sandbox's processes to exit after
 * SIGKILL before it falls back to `runsc delete --force`, ms. */
#define KILL_WAIT_MS 10000

/* procd, PID 1, is gone: the runsc sandbox ended without a stop(). */
static bool gv_exited(s0__rt_gen *g)
{
	return g && g->procd && s0__gv_pd_gone(g->procd);
}

static void gv_stop(s0__rt_gen *g)
{
	if (!g)
		return;
	s0__rt_host *h = g->h;
	int64_t t0 = s0__gv_now_us();
	s0__gv_ctxs_free(g->ctxs); /* the contexts' and sessions' processes first */
	g->ctxs = NULL;
	s0__gv_ses_free(g->ses);
	g->ses = NULL;
	s0__gv_watch_stop(g->files.watch); /* its marks gone before the carrier detaches */
	g->files.watch = NULL;
	if (g->files_open)
		s0__gv_files_close(&g->files);
	g->files_open = false;
	pthread_mutex_lock(&h->mu);
	s0__gv_ckpt *ck = g->ck;
	g->ck = NULL;
	pthread_mutex_unlock(&h->mu);
	s0__gv_ckpt_unref(ck);
	if (!g->carrier)
		s0__gv_root_sync(g->root, NULL);
	int64_t t1 = s0__gv_now_us();
	/* ext4's dirty data starts for the branch while the processes die (the
	 * detach's own syncfs then has only what they wrote meanwhile) */
	pthread_t st;
	bool early_sync = g->carrier && pthread_create(&st, NULL, early_sync_main, g->carrier) == 0;
	/* every process of the sandbox gone (SIGKILL to its cgroup, waited for
	 * through pidfds) instead of a `runsc delete --force` here */
	bool killed = s0__gv_kill_wait(g->id, KILL_WAIT_MS) == 0;
	if (early_sync)
		pthread_join(st, NULL);
	if (!killed)
		teardown(h, g->id, NULL);
	int64_t t2 = s0__gv_now_us();
	s0__rt_gen *rest = finish_shell(g);
	if (rest) /* runsc's records, cgroups, tmpfs, network, bundle: meanwhile */
		s0__gv_fin_start(h, g->id, stop_finish, rest);
	s0__carrier_stats cs = {0};
	carrier_end(g, &cs); /* every byte on the branch, unmounted (runtime.h stop) */
	int64_t t3 = s0__gv_now_us();
	s0__gv_trace(g->id,
	             "stop procs+files=%.1fms kill+early-syncfs=%.1fms%s carrier=%.1fms (holders %.1f syncfs %.1f "
	             "unmount %.1f loop %.1f fuse %.1f) total=%.1fms",
	             (t1 - t0) / 1e3, (t2 - t1) / 1e3, killed ? "" : " (runsc delete)",
	             (t3 - t2) / 1e3, cs.holders_us / 1e3, cs.syncfs_us / 1e3, cs.unmount_us / 1e3,
	             cs.loop_us / 1e3, cs.fuse_us / 1e3, (t3 - t0) / 1e3);
	s0__gv_trace(g->id, "carrier fuse reads=%llu (%.1f MiB) writes=%llu (%.1f MiB, %.0f KiB each)",
	             (unsigned long long)cs.reads, cs.read_bytes / 1048576.0,
	             (unsigned long long)cs.writes, cs.write_bytes / 1048576.0,
	             cs.writes ? cs.write_bytes / 1024.0 / (double)cs.writes : 0.0);
	if (!rest) { /* out of memory: all of it here */
		teardown(h, g->id, NULL);
		s0__gv_tmpfs_drop(g);
		s0__gv_net_free(g->net);
		rm_rf(g->bundle);
		pthread_mutex_lock(&h->mu);
		h->live--;
		pthread_mutex_unlock(&h->mu);
	}
	gen_free(g);
}

/* A host process whose command line names the runtime id (runsc's
 * sandbox, gofer and exec processes carry it). */
static bool process_named(const char *id, char *what, size_t n)
{
	DIR *d = opendir("/proc");
	if (!d)
		return false;
	struct dirent *de;
	bool found = false;
	size_t idlen = strlen(id);
	while (!found && (de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		char p[300], buf[8192];
		snprintf(p, sizeof p, "/proc/%s/cmdline", de->d_name);
		int fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t len = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (len <= 0)
			continue; /* zombies have no command line: not a resource */
		bool runsc = false, named = false;
		for (ssize_t i = 0; i < len; i += (ssize_t)strlen(buf + i) + 1) {
			buf[len] = 0;
			const char *a = buf + i;
			runsc = runsc || strstr(a, "runsc") || !strncmp(a, "--root=", 7);
			named = named || (!strncmp(a, id, idlen) && (!a[idlen] || a[idlen] == ' '));
		}
		if (runsc && named) {
			snprintf(what, n, "process %s", de->d_name);
			found = true;
		}
	}
	closedir(d);
	return found;
}

/* The carrier record of a runtime: attached until its detach removed it. */
static bool carrier_left(s0__rt_host *h, const char *id, char *what, size_t n)
{
	char *rec = s0__asprintf("%s/%s.carrier", h->carriers, id);
	bool left = rec && exists(rec);
	if (left)
		snprintf(what, n, "carrier %s", rec);
	free(rec);
	return left;
}

static bool net_left(s0__rt_host *h, const char *id, char *what, size_t n)
{
	char *dir = s0__asprintf("%s/net", h->dir);
	bool left = dir && s0__gv_net_present(dir, id, what, n);
	free(dir);
	return left;
}

/* runsc's record of a container: "<sandbox id>_sandbox:<container id>.state"
 * in its --root (what `runsc state` reads), without starting runsc. */
static bool runsc_record(s0__rt_host *h, const char *id, char *what, size_t n)
{
	DIR *d = opendir(h->runsc_root);
	struct dirent *de;
	size_t idlen = strlen(id);
	bool found = false;
	while (d && !found && (de = readdir(d))) {
		const char *c = strstr(de->d_name, "_sandbox:");
		size_t len = strlen(de->d_name);
		found = c && len > 6 && !strcmp(de->d_name + len - 6, ".state") &&
		        (size_t)(de->d_name + len - 6 - (c + 9)) == idlen && !strncmp(c + 9, id, idlen);
		if (found)
			snprintf(what, n, "runsc sandbox %s (%s/%s)", id, h->runsc_root, de->d_name);
	}
	if (d)
		closedir(d);
	return found;
}

static int gv_terminal_proof(s0__rt_host *h, const char *runtime_id, s0_error **err)
{
	char what[600] = "";
	if (!good_id(runtime_id))
		return s0__error_set(err, S0_EINVAL, "invalid_request", "bad runtime id");
	int64_t t0 = s0__gv_now_us();
	s0__gv_fin_wait(h, runtime_id); /* the background half of its stop (gv_stop.c) */
	int64_t t1 = s0__gv_now_us();
	char *bundle = s0__asprintf("%s/bundles/%s", h->dir, runtime_id);
	if (!bundle)
		return s0__error_nomem(err);
	if (runsc_record(h, runtime_id, what, sizeof what))
		; /* runsc still knows the sandbox */
	else if (s0__gv_mount_under(bundle, what, sizeof what))
		; /* a runtime tmpfs still mounted */
	else if (carrier_left(h, runtime_id, what, sizeof what))
		; /* its carrier (mount, loop device, FUSE server) still attached */
	else if (net_left(h, runtime_id, what, sizeof what))
		; /* its network namespace, veth pair and hub chain */
	else if (exists(bundle))
		snprintf(what, sizeof what, "bundle %s", bundle);
	else if (!s0__gv_cgroup_present(runtime_id, what, sizeof what))
		process_named(runtime_id, what, sizeof what);
	free(bundle);
	s0__gv_trace(runtime_id, "proof wait=%.1fms checks=%.1fms%s%s", (t1 - t0) / 1e3,
	             (s0__gv_now_us() - t1) / 1e3, *what ? " LEFT: " : "", what);
	if (*what)
		return s0__error_set(err, S0_EUNAVAILABLE, "resource_leak",
		                     "runtime %s still holds %s", runtime_id, what);
	return S0_OK;
}

/* runsc pause (no program runs), freeze the mounted ext4 (FIFREEZE: every
 * byte on the branch, no write until thawed), fn, thaw, runsc resume. The
 * thaw and resume always follow: a frozen mount's writers are unkillable. */
static int gv_cut(s0__rt_gen *g, int (*fn)(void *arg, s0_error **err), void *arg,
                  s0_error **err)
{
	const char *pause[] = {"pause", g->id, NULL}, *resume[] = {"resume", g->id, NULL};
	s0__gv_result res;
	int rc = s0__gv_runsc(g->h, pause, RUNSC_TIMEOUT_MS, false, &res, err);
	s0__gv_result_clear(&res);
	if (rc < 0)
		return rc;
	const char *root = g->carrier ? s0__carrier_host_root(g->carrier) : g->root;
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool frozen = false;
	if (fd < 0) {
		rc = s0__error_set(err, S0_EUNAVAILABLE, "runtime_unavailable", "cannot open %s: %s",
		                   root, strerror(errno));
	} else if (g->carrier) {
		frozen = ioctl(fd, FIFREEZE, 0) == 0;
		if (!frozen)
			rc = s0__error_set(err, S0_EUNAVAILABLE, "runtime_unavailable",
			                   "cannot freeze the sandbox's filesystem: %s", strerror(errno));
	} else if (syncfs(fd) < 0) {
		rc = s0__error_set(err, S0_EUNAVAILABLE, "runtime_unavailable", "cannot sync %s: %s",
		                   root, strerror(errno));
	}
	if (rc == S0_OK)
		rc = fn(arg, err);
	if (frozen)
		ioctl(fd, FITHAW, 0);
	if (fd >= 0)
		close(fd);
	s0_error *re = NULL;
	if (s0__gv_runsc(g->h, resume, RUNSC_TIMEOUT_MS, false, &res, &re) < 0 && rc == S0_OK)
		rc = s0__error_put(err, re);
	else
		s0_error_free(re);
	s0__gv_result_clear(&res);
	return rc;
}

static const s0__files_ns *gv_files(s0__rt_gen *g)
{
	return g->files_open ? &g->files.ns : NULL;
}

static int gv_network_apply(s0__rt_gen *g, s0__netpolicy *policy, s0_error **err)
{
	int rc = s0__gv_net_apply(g->net, policy, err); /* NULL: nothing leaves */
	s0__netpolicy_free(policy);
	return rc;
}

static void gv_clock_sync(s0__rt_gen *g, int64_t now_ms)
{
	(void)g;
	(void)now_ms; /* real time */
}

static cJSON *gv_inspect(s0__rt_gen *g)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "runsc", g->h->version ? g->h->version : "");
	cJSON_AddStringToObject(o, "container", g->id);
	cJSON_AddStringToObject(o, "root", g->root);
	cJSON *net = s0__gv_net_inspect(g->net);
	if (!net || !cJSON_AddItemToObject(o, "network", net))
		cJSON_Delete(net);
	cJSON_AddStringToObject(o, "procd", g->procd ? s0__gv_pd_version(g->procd) : "");
	cJSON_AddStringToObject(o, "procd_build", g->procd_build);
	int running = s0__gv_ctxs_running(g->ctxs);
	if (running >= 0) /* unknown while a contexts call runs */
		cJSON_AddNumberToObject(o, "contexts_running", running);
	return o;
}

static int gv_proc_call(s0__rt_gen *g, const s0__rt_proc_call *call, cJSON **data_out,
                        int *status_out, s0_error **err)
{
	if (call->op >= S0__RT_SES_CREATE) /* sessions run by procd (gv_sessions.c) */
		return s0__gv_ses_call(g->ses, call, data_out, status_out, err);
	return s0__gv_ctx_call(g->ctxs, call, data_out, status_out, err);
}

/* Sessions: the simulated runtime's registry, attempts run by procd
 * (gv_sessions.c); a new generation recovers them (SES-01..05), a memory
 * restore keeps their attempts (gv_restore.c). */
static void gv_sessions_adopt(s0__rt_gen *g, s0__sessions *s, bool restored)
{
	s0__gv_ses_adopt(g->ses, s, restored); /* restored: the attempts of the image */
}

static int gv_sessions_new(s0__rt_host *h, int64_t generation, s0__sessions **out,
                           s0_error **err)
{
	s0__sessions_opts o = {.clock = &h->clock, .generation = generation};
	return s0__sessions_new(&o, out, err);
}

static int gv_sessions_save(s0__sessions *s, void **buf, size_t *len, s0_error **err)
{
	return s0__sessions_serialize(s, buf, len, err);
}

static int gv_sessions_load(s0__rt_host *h, const void *buf, size_t len, int64_t generation,
                            s0__sessions **out, s0_error **err)
{
	s0__sessions_opts o = {.clock = &h->clock, .generation = generation};
	return s0__sessions_deserialize(buf, len, &o, out, err);
}

static int no_memory(s0__rt_host *h, s0_error **err)
{
	return s0__error_set(err, S0_EUNAVAILABLE, "memory_unsupported",
	                     "the gvisor runtime cannot take memory checkpoints here: %s",
	                     s0__gv_mem_missing(h));
}

static const char *gv_procd_version(s0__rt_gen *g)
{
	return g && g->procd_build[0] ? g->procd_build : S0__PD_VERSION; /* recorded (MEM-11) */
}

static int gv_image_restore(s0__rt_host *h, const s0__rt_image_data *d,
                            const s0__rt_restore_opts *o, s0__rt_image **out, s0_error **err)
{
	(void)o; /* lazy: pages.img served from the engine as runsc loads it (gv_pagefile.h) */
	if (s0__gv_mem_missing(h))
		return no_memory(h, err);
	return s0__gv_image_restore(h, d, out, err);
}

const s0__rt_driver s0__rt_gvisor_driver = {
	.name = "gvisor",
	.description = "gVisor (runsc, systrap): real programs in a sandbox kernel, network policies "
	               "enforced by nftables in a private hub namespace; file watches see the files "
	               "API's changes and the guest's own (host inotify)",
	.probe = gv_probe,
	.open = gv_open,
	.close = gv_close,
	.caps = gv_caps,
	.root_tree = gv_root_tree,
	.fingerprint = s0__gv_fingerprint,
	.start = gv_start,
	.ready = gv_ready,
	.exited = gv_exited,
	.stop = gv_stop,
	.terminal_proof = gv_terminal_proof,
	.cut = gv_cut,
	.files = gv_files,
	.network_apply = gv_network_apply,
	.clock_sync = gv_clock_sync,
	.inspect = gv_inspect,
	.proc_call = gv_proc_call,
	.sessions_adopt = gv_sessions_adopt,
	.sessions_new = gv_sessions_new,
	.sessions_free = s0__sessions_free,
	.sessions_save = gv_sessions_save,
	.sessions_load = gv_sessions_load,
	.capture = s0__gv_capture,
	.procd_version = gv_procd_version,
	.image_restore = gv_image_restore,
	.image_free = s0__gv_image_free,
	.connect_port = s0__gv_connect_port,
};
