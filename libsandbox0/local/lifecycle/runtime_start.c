/*
 * Starting a runtime generation for a sandbox (RTX-02..RTX-05): lease a carrier and exact
 * CPU/memory, attach the
 * committed head lazily, start a generation of the engine's runtime driver
 * on it (runtime/runtime.h: runtime-only mounts, processes, files view),
 * prove readiness, and only then report it. Shared by claim, resume,
 * wake-up and crash recovery.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/lifecycle/engine_internal.h"
#include "local/checkpoint/ckpt.h"
#include "local/objects/objid.h"
#include "local/rootfs/rootfs.h"
#include "local/runtime/runtime.h"

#define DEFAULT_MEMORY (512LL << 20)

/* Probe and open driver @p d for @p e. */
static int rt_open_one(s0__engine *e, const s0__rt_driver *d, s0_error **err)
{
	int rc = d->probe(err);
	s0__rt_host_opts ho = {.clock = &e->opt.clock, .state_dir = e->dir,
	                       .no_memory = e->opt.no_memory};
	if (rc == S0_OK)
		rc = d->open(&ho, &e->rt_host, err);
	if (rc < 0)
		return rc;
	e->rt_drv = d;
	e->rt_caps = d->caps(e->rt_host);
	e->opt.runtime = d->name; /* the caller's string is not kept */
	return S0_OK;
}

/* "auto": the first runtime that probes and opens, else sim; e->rt_why
 * says why the others were passed over (/healthz, inspection). */
static int rt_open_auto(s0__engine *e, s0_error **err)
{
	const s0__rt_driver *d;
	e->rt_auto = true;
	s0__rt_driver_auto(&d, e->rt_why, sizeof e->rt_why);
	if (strcmp(d->name, "sim")) {
		s0_error *why = NULL;
		if (rt_open_one(e, d, &why) == S0_OK)
			return S0_OK;
		snprintf(e->rt_why, sizeof e->rt_why, "%s: %s", d->name,
		         why ? s0_error_message(why) : "unavailable");
		s0_error_free(why);
		e->rt_host = NULL;
		s0__rt_driver_find("sim", &d, NULL);
	}
	return rt_open_one(e, d, err);
}

int s0__engine_rt_open(s0__engine *e, s0_error **err)
{
	if (e->opt.runtime && !strcmp(e->opt.runtime, "auto"))
		return rt_open_auto(e, err);
	const s0__rt_driver *d;
	int rc = s0__rt_driver_find(e->opt.runtime, &d, err);
	return rc < 0 ? rc : rt_open_one(e, d, err);
}

void s0__engine_rt_close(s0__engine *e)
{
	if (e->rt_drv)
		e->rt_drv->close(e->rt_host);
	e->rt_host = NULL;
}

void s0__engine_resources(const s0__sandbox_row *row, int64_t *cpu, int64_t *mem)
{
	*mem = DEFAULT_MEMORY;
	cJSON *cfg = cJSON_Parse(row->rec.config_json ? row->rec.config_json : "{}");
	const cJSON *res = cJSON_GetObjectItemCaseSensitive(cfg, "resources");
	int64_t m = s0__parse_memory(s0__json_str(res, "memory"));
	if (m > 0)
		*mem = m;
	cJSON_Delete(cfg);
	*cpu = *mem / (4LL << 20); /* 1 millicore per 4 MiB, at least 150m (docs/wire.md §3.1) */
	if (*cpu < 150)
		*cpu = 150;
}

/* Fault points that stand in for a missing carrier, capacity, device… */
static int placement_faults(s0__engine *e, s0_error **err)
{
	static const struct {
		const char *name, *msg;
	} pts[] = {
		{"carrier", "no compatible ready carrier is available"},
		{"capacity", "node capacity is exhausted"},
		{"nbd_device", "no block device attach slot is available"},
		{"node_channel", "node channel is unavailable"},
	};
	for (size_t i = 0; i < sizeof pts / sizeof pts[0]; i++)
		if (s0__fault_hit(e->faults, pts[i].name, "resume") != S0__FAULT_NONE)
			return s0__error_set(err, S0_EUNAVAILABLE, pts[i].name, "%s", pts[i].msg);
	return S0_OK;
}

static int quota_check(s0__engine *e, s0_error **err)
{
	int active = 0;
	for (s0__runtime *rt = e->node.runtimes; rt; rt = rt->next)
		active++;
	if (active >= e->opt.max_active_runtimes)
		return s0__error_set(err, S0_EQUOTA, "quota_exceeded",
		                     "active sandbox quota exceeded (%d)", e->opt.max_active_runtimes);
	return S0_OK;
}

/* Stop the runtime's generation (its processes, tmpfs and files view) and
 * drop its writable branch (never published here); its leases stay. The
 * handles are detached under the engine lock (inspection reads them) and
 * freed outside it. */
static bool halt(s0__engine *e, s0__runtime *rt)
{
	pthread_mutex_lock(&e->mu);
	if (rt->halted) {
		pthread_mutex_unlock(&e->mu);
		return false;
	}
	s0__volume *v = rt->volume;
	s0__rt_gen *g = rt->gen;
	rt->gen = NULL;
	rt->volume = NULL;
	rt->halted = true;
	pthread_mutex_unlock(&e->mu);
	if (g) /* graceful: procd first, then its children (SES-04) */
		rt->drv->stop(g);
	s0__volume_free(v);
	return true;
}

/* The allocation directory on the node (REC-07): <data>/allocs/<runtime_id>. */
static int make_allocation(s0__engine *e, s0__runtime *rt, s0_error **err)
{
	char *base = s0__asprintf("%s/allocs", e->dir);
	rt->alloc_dir = base ? s0__asprintf("%s/%s", base, rt->id) : NULL;
	int rc = rt->alloc_dir ? S0_OK : s0__error_nomem(err);
	if (rc == S0_OK && ((mkdir(base, 0700) < 0 && errno != EEXIST) ||
	                    mkdir(rt->alloc_dir, 0700) < 0))
		rc = s0__error_set(err, S0_EUNAVAILABLE, "allocation",
		                   "cannot create the allocation directory: %s", strerror(errno));
	free(base);
	rt->sched_record = rc == S0_OK;
	return rc;
}

/* The scheduler forgets the allocation and the node removes its directory;
 * with `alloc_record_purge` the record is purged early and the directory
 * stays behind, so the terminal proof keeps failing until it is gone. */
static void drop_allocation(s0__engine *e, s0__runtime *rt, bool planned)
{
	pthread_mutex_lock(&e->mu);
	bool had = rt->sched_record;
	rt->sched_record = false;
	pthread_mutex_unlock(&e->mu);
	if (!had)
		return;
	if (planned && s0__fault_hit(e->faults, "alloc_record_purge", NULL) != S0__FAULT_NONE)
		return;
	if (rt->alloc_dir)
		rmdir(rt->alloc_dir);
}

static void abandon(s0__engine *e, s0__runtime *rt)
{
	halt(e, rt);
	drop_allocation(e, rt, false);
	pthread_mutex_lock(&e->mu);
	s0__node_release(&e->node, rt);
	pthread_mutex_unlock(&e->mu);
}

/*
 * Restore a memory image for rt (docs/decisions.md "Restore of memory"): the
 * checkpoint engine reads and verifies it, the driver rebuilds it. 1 =
 * restored into *img (and *ses: the image's sessions when this process no
 * longer holds the registry, i.e. the backend restarted since the
 * capture); 0 = not restorable (missing, damaged, incompatible, head moved:
 * MEM-05, MFB-01/02), fall back to fresh processes; S0_ERESUME = failed
 * after the restore was authorised (MFB-03).
 */
static int restore_image(s0__engine *e, const s0__sandbox_row *row, const char *image,
                         s0__rt_image **img, struct s0__sessions **ses, s0_error **err)
{
	s0__objid iid;
	if (!image || !*image || s0__objid_parse(image, &iid, NULL) < 0)
		return 0;
	if (!(e->rt_caps & S0__RT_CAP_MEMORY))
		return 0; /* this runtime keeps no images: fresh processes */
	s0__ckpt_fp fp;
	s0__engine_fingerprint(e, row, &fp);
	s0__ckpt_restore_opts ro = {
		.sandbox_id = row->rec.id,
		.rootfs_generation = row->head,
		.dest = &fp,
		.sessions = !s0__engine_sessions_find(e, row->rec.id),
	};
	s0__ckpt_restored rs = {0}; /* set by a restore that succeeds */
	s0_error *rerr = NULL;
	int rc = s0__ckpt_restore(e->ckpt, &iid, &ro, &rs, &rerr);
	if (rc == S0_ERESUME) {
		s0_error *w = s0__error_make(S0_ERESUME, "restore_failed", "memory restore failed");
		s0__error_set_cause(w, rerr);
		return s0__error_put(err, w);
	}
	s0__rt_restore_opts o = {.prefetch = true};
	if (rc == S0_OK && (rc = e->rt_drv->image_restore(e->rt_host, &rs.data, &o, img, &rerr)) < 0) {
		/* authorised and the driver could not rebuild it (a chunk damaged or
		 * gone, found before anything ran): a failed restore (MFB-03) */
		s0__ckpt_restored_clear(&rs);
		s0_error *w = s0__error_make(S0_ERESUME, "restore_failed", "memory restore failed");
		s0__error_set_cause(w, rerr);
		return s0__error_put(err, w);
	}
	if (rc == S0_OK && rs.sessions &&
	    e->rt_drv->sessions_load(e->rt_host, rs.sessions, rs.sessions_len,
	                             row->rec.runtime_generation, ses, &rerr) < 0) {
		e->rt_drv->image_free(*img);
		*img = NULL;
		rc = S0_ECORRUPT;
	}
	s0__ckpt_restored_clear(&rs); /* the rebuilt image holds its own pager reference */
	s0_error_free(rerr);
	return rc == S0_OK ? 1 : 0;
}

int s0__engine_start_runtime(s0__engine *e, s0__sandbox_row *row, const char *ephemeral_json,
                             s0__runtime **out, s0_error **err)
{
	return s0__engine_start_runtime_mem(e, row, ephemeral_json, NULL, NULL, out, err);
}

int s0__engine_start_runtime_mem(s0__engine *e, s0__sandbox_row *row, const char *ephemeral_json,
                                 const char *mem_image, bool *restored_out, s0__runtime **out,
                                 s0_error **err)
{
	s0__rt_image *img = NULL;
	struct s0__sessions *img_ses = NULL;
	bool restored = false;
	if (restored_out)
		*restored_out = false;
	int64_t cpu, mem;
	s0__engine_resources(row, &cpu, &mem);
	int rc = placement_faults(e, err);
	s0__runtime *rt = NULL;
	if (rc == S0_OK) {
		pthread_mutex_lock(&e->mu);
		rc = quota_check(e, err);
		if (rc == S0_OK)
			rc = s0__node_lease(&e->node, row->rec.id, cpu, mem, &rt, err);
		pthread_mutex_unlock(&e->mu);
	}
	if (rc < 0) { /* no carrier, capacity or quota now: worth a retry (Retry-After: 1) */
		if (err && *err)
			s0__error_set_http(*err, 0, NULL, NULL, 1000);
		return rc;
	}
	rt->generation = row->rec.runtime_generation + 1;
	rt->started_at_ms = s0__engine_now(e);
	/* the generation is this node's before anything of it exists */
	if ((rc = s0__engine_fence_claim(e, row->rec.id, rt->generation, err)) < 0) {
		pthread_mutex_lock(&e->mu);
		s0__node_release(&e->node, rt);
		pthread_mutex_unlock(&e->mu);
		return rc;
	}
	if ((rc = make_allocation(e, rt, err)) < 0) {
		abandon(e, rt);
		return rc;
	}
	s0__mounts mounts;
	if ((rc = s0__mounts_from_json(ephemeral_json, &mounts, err)) < 0) {
		abandon(e, rt);
		return rc;
	}
	rt->drv = e->rt_drv;
	rt->host = e->rt_host;
	if (s0__fault_hit(e->faults, "object_store", "attach") != S0__FAULT_NONE) {
		rc = s0__error_set(err, S0_EUNAVAILABLE, "object_store",
		                   "sandbox rootfs store is unavailable");
	} else {
		s0_error *cause = NULL;
		s0__strlcpy(rt->attached, row->head, sizeof rt->attached);
		rc = s0__volume_attach(e->storage, row->head, &rt->volume, &cause);
		if (rc == S0_OK) /* file times follow the engine clock */
			s0__rootfs_set_clock(s0__volume_rootfs(rt->volume), &e->opt.clock);
		bool kernel_fs = e->rt_caps & S0__RT_CAP_KERNEL_FS;
		if (rc == S0_OK && kernel_fs) /* the kernel mounts the branch: libext2fs lets go */
			rc = s0__volume_lend(rt->volume, &cause);
		if (rc == S0_OK && mem_image) {
			int r = restore_image(e, row, mem_image, &img, &img_ses, err);
			if (r < 0) {
				/* authorised and failed (MFB-03): stop the target and
				 * consume g+1, but keep its lease; it is released only
				 * after the terminal proof (resume.c, the fallback step),
				 * before any replacement starts. *out names it. */
				s0_error_free(cause);
				s0__mounts_free(&mounts);
				halt(e, rt);
				drop_allocation(e, rt, false);
				row->rec.runtime_generation++;
				*out = rt;
				return r;
			}
			restored = r == 1;
		}
		if (rc == S0_OK && restored && img_ses) {
			/* the image's, for a registry this process lost */
			s0__engine_sessions_set(e, row->rec.id, img_ses);
			img_ses = NULL;
		}
		/* the generation: runtime-only mounts, processes, files view */
		cJSON *cfg = cJSON_Parse(row->rec.config_json ? row->rec.config_json : "{}");
		s0__rt_start req = {
			.sandbox_id = row->rec.id,
			.runtime_id = rt->id,
			.generation = rt->generation,
			.rootfs = rt->volume ? s0__volume_rootfs(rt->volume) : NULL,
			.dev = rt->volume && kernel_fs ? s0__volume_dev(rt->volume) : NULL,
			.ephemeral = (const char *const *)mounts.paths,
			.ephemeral_limits = mounts.limits,
			.n_ephemeral = mounts.n,
			.env_vars = cJSON_GetObjectItemCaseSensitive(cfg, "env_vars"),
			.cpu_millis = cpu,
			.memory_bytes = mem,
			.image = img,
			.files_changed = s0__engine_watch_files_event, /* file watches */
			.files_watched = s0__engine_watch_files_wanted,
			.files_changed_arg = e->watch,
		};
		img = NULL; /* start() frees it in every case */
		if (rc == S0_OK)
			rc = rt->drv->start(rt->host, &req, &rt->gen, &cause);
		else
			rt->drv->image_free(req.image);
		cJSON_Delete(cfg);
		if (rc < 0 && restored) {
			/* the driver could not continue the image (runsc restore
			 * failed or was killed): a failed restore, as above (MFB-03) */
			s0_error_free(cause);
			s0__mounts_free(&mounts);
			halt(e, rt);
			drop_allocation(e, rt, false);
			row->rec.runtime_generation++;
			*out = rt;
			return s0__error_set(err, S0_ERESUME, "restore_failed", "memory restore failed");
		}
		if (rc == S0_OK && restored)
			s0__strlcpy(rt->restored_image, mem_image, sizeof rt->restored_image);
		if (rc < 0) { /* the cause's text kept: callers of an operation see only this one */
			char *m = s0__asprintf("sandbox rootfs store is unavailable: %s",
			                       cause ? s0_error_message(cause) : "?");
			s0_error *w = s0__error_make(S0_EUNAVAILABLE, "object_store",
			                             m ? m : "sandbox rootfs store is unavailable");
			free(m);
			s0__error_set_cause(w, cause);
			rc = s0__error_put(err, w);
		}
	}
	s0__mounts_free(&mounts);
	if (img_ses)
		e->rt_drv->sessions_free(img_ses);
	if (rc < 0) {
		abandon(e, rt);
		return rc;
	}
	/* step 4: the sandbox's network policy on the new runtime (RTX-04) */
	if ((rc = s0__engine_apply_network(e, row->rec.config_json, rt, err)) < 0) {
		abandon(e, rt);
		return rc;
	}
	/* readiness proof (step 6): procd answers the first command */
	s0__fault_pass(e->faults, "resume_delay", NULL);
	if (s0__fault_hit(e->faults, "procd_not_ready", NULL) != S0__FAULT_NONE ||
	    rt->drv->ready(rt->gen, NULL) < 0) {
		abandon(e, rt);
		row->rec.runtime_generation++; /* a started target consumes its generation */
		return s0__error_set(err, S0_EUNAVAILABLE, "procd_not_ready",
		                     "sandbox runtime did not become ready");
	}
	/* sessions active at the replacement follow runtime_recovery (SES-01..05);
	 * restored ones keep their attempts (SES-06) */
	struct s0__sessions *ses = s0__engine_sessions_find(e, row->rec.id);
	if (ses)
		rt->drv->sessions_adopt(rt->gen, ses, restored);
	if (restored_out)
		*restored_out = restored;
	pthread_mutex_lock(&e->mu);
	rt->ready = true; /* publishes every field written above */
	pthread_mutex_unlock(&e->mu);
	row->rec.runtime_generation = rt->generation;
	s0__strlcpy(row->rec.runtime_id, rt->id, sizeof row->rec.runtime_id);
	snprintf(row->rec.pod_name, sizeof row->rec.pod_name, "pod-%s", rt->id + 3);
	row->rec.status = S0_STATUS_RUNNING;
	row->rec.paused = false;
	row->rec.expires_at_ms = row->rec.ttl_sec > 0 ? s0__engine_now(e) + row->rec.ttl_sec * 1000LL : 0;
	*out = rt;
	return S0_OK;
}

void s0__engine_quiesce_runtime(s0__engine *e, s0__runtime *rt)
{
	pthread_mutex_lock(&e->mu);
	s0__rt_gen *g = rt->halted ? NULL : rt->gen;
	rt->gen = NULL;
	pthread_mutex_unlock(&e->mu);
	if (g) /* its bytes on the branch, its mounts gone (runtime.h stop) */
		rt->drv->stop(g);
}

bool s0__engine_halt_runtime(s0__engine *e, s0__runtime *rt)
{
	pthread_mutex_lock(&e->mu);
	rt->fenced = true;
	while (rt->pins > 0)
		pthread_cond_wait(&e->cv, &e->mu);
	pthread_mutex_unlock(&e->mu);
	bool was_running = halt(e, rt);
	if (was_running)
		drop_allocation(e, rt, true);
	return was_running;
}

void s0__engine_release_runtime(s0__engine *e, s0__runtime *rt)
{
	pthread_mutex_lock(&e->mu);
	s0__node_release(&e->node, rt);
	pthread_mutex_unlock(&e->mu);
}

/* Stop a runtime and return its resources at once (claim failures, close):
 * fence it, let pinned requests finish, then drop its volume and leases. */
void s0__engine_stop_runtime(s0__engine *e, s0__runtime *rt)
{
	s0__engine_halt_runtime(e, rt);
	s0__engine_release_runtime(e, rt);
}
