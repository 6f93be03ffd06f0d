/* The public s0_local API (sandbox0/local.h) over the lifecycle engine. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/client_internal.h"
#include "local/api/stream_local.h"
#include "local/api/transport.h"
#include "local/lifecycle/engine_open.h"
#include "local/objects/backends.h"
#include "local/runtime/runtime.h"
#include "local/local_internal.h"

int s0_local_options_init(s0_local_options *opts, uint32_t version)
{
	if (!opts || version != S0_LOCAL_OPTIONS_VERSION)
		return S0_EINVAL;
	s0_local_options d = S0_LOCAL_OPTIONS_INIT;
	*opts = d;
	return S0_OK;
}

/* Exclusive lock on <dir>/lock, holding our pid (docs/decisions.md). */
static int lock_dir(const char *dir, int *fd_out, s0_error **err)
{
	char *path = s0__asprintf("%s/lock", dir);
	if (!path)
		return s0__error_nomem(err);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	free(path);
	if (fd < 0)
		return s0__error_set(err, S0_EIO, "data_dir", "cannot open %s/lock: %s", dir,
		                     strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		char pid[32] = "";
		ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		close(fd);
		return s0__error_set(err, S0_ECONFLICT, "data_dir_locked",
		                     "data directory %s is in use by process %s", dir,
		                     *pid ? pid : "(unknown)");
	}
	char pid[32];
	int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
		close(fd);
		return s0__error_set(err, S0_EIO, "data_dir", "cannot write %s/lock", dir);
	}
	*fd_out = fd;
	return S0_OK;
}

static int engine_options(s0_local *l, const s0_local_options *o, s0__engine_options *eo,
                          s0_error **err)
{
	memset(eo, 0, sizeof *eo);
	if (o->manual_clock) {
		int rc = s0_manual_clock_new(o->manual_clock_start_unix_ms, 0, &l->manual, err);
		if (rc < 0)
			return rc;
		s0_manual_clock_get(l->manual, &eo->clock);
		eo->manual_clock = true;
	} else if (o->clock) {
		eo->clock = *o->clock;
	} else {
		s0_clock_real(&eo->clock);
	}
	eo->node_cpu_millis = o->node_cpu_millis ? o->node_cpu_millis : 8000;
	eo->node_memory_bytes = o->node_memory_bytes ? o->node_memory_bytes : 16LL << 30;
	eo->warm_carriers = o->warm_carriers ? o->warm_carriers : 16;
	eo->max_active_runtimes = o->max_active_runtimes ? o->max_active_runtimes : 64;
	eo->rootfs_size_bytes = o->rootfs_size_bytes ? o->rootfs_size_bytes : 1ULL << 30;
	eo->no_memory = o->disable_memory_checkpoints != 0;
	eo->memory_image_limit_bytes = o->memory_image_limit_bytes;
	eo->run_limit_ms = o->continuous_run_limit_ms;
	eo->no_webhook_outbox = o->disable_webhook_outbox != 0;
	eo->runtime = o->runtime; /* resolved (and probed) by the engine's open */
	/* a URL (an S3 bucket) is borrowed: the engine reads it during its open only */
	const s0__objbackend *be = o->object_store ? s0__objbackend_find(o->object_store) : NULL;
	eo->object_store = be ? (be->scheme ? o->object_store : be->name) : NULL;
	eo->key_file = o->key_file;
	eo->meta = o->meta && *o->meta ? o->meta : NULL;
	eo->advertise = o->advertise_url && *o->advertise_url ? o->advertise_url : NULL;
	eo->lease_ms = o->node_lease_ms;
	return S0_OK;
}

/* The runtime and object store names exist (before anything is made on
 * disk; whether the runtime can run here is the engine's open's question). */
static int check_names(const s0_local_options *o, s0_error **err)
{
	const s0__rt_driver *d;
	int rc = s0__rt_driver_find(o->runtime, &d, err);
	if (rc < 0)
		return rc;
	if (o->object_store && !s0__objbackend_find(o->object_store)) {
		char known[128];
		s0__objbackend_names(known, sizeof known);
		return s0__error_set(err, S0_EINVAL, "object_store_unknown",
		                     "s0_local_options.object_store \"%s\" is not one of %s",
		                     o->object_store, known);
	}
	if (o->meta && *o->meta && strncmp(o->meta, "postgres://", 11) &&
	    strncmp(o->meta, "postgresql://", 13)) /* the value itself may hold a password */
		return s0__error_set(err, S0_EINVAL, "bad_meta_url",
		                     "s0_local_options.meta must be a postgres:// or postgresql:// URL");
	return S0_OK;
}

int s0_local_open(const char *data_dir, const s0_local_options *opts, s0_local **out,
                  s0_error **err)
{
	s0_local_options d = S0_LOCAL_OPTIONS_INIT;
	if (!opts)
		opts = &d;
	if (!data_dir || !*data_dir || !out)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "data_dir and out are required");
	if (opts->version != S0_LOCAL_OPTIONS_VERSION)
		return s0__error_set(err, S0_EINVAL, "options_version",
		                     "s0_local_options.version %u is not %u", opts->version,
		                     S0_LOCAL_OPTIONS_VERSION);
	if (opts->node_lease_ms < 0 || (opts->node_lease_ms > 0 && opts->node_lease_ms < 300))
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "node_lease_ms must be 0 (30 s) or at least 300");
	if (opts->advertise_url && *opts->advertise_url &&
	    strncmp(opts->advertise_url, "http://", 7) && strncmp(opts->advertise_url, "https://", 8))
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "advertise_url must be an http:// or https:// URL");
	if (opts->continuous_run_limit_ms < 0)
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "continuous_run_limit_ms must be >= 0 (0 = no limit)");
	int rc = check_names(opts, err);
	if (rc < 0)
		return rc;
	if (s0__global_ensure() < 0)
		return s0__error_set(err, S0_ERROR, "global_init", "libsodium/libcurl init failed");
	if (mkdir(data_dir, 0700) < 0 && errno != EEXIST)
		return s0__error_set(err, S0_EIO, "data_dir", "cannot create %s: %s", data_dir,
		                     strerror(errno));
	s0_local *l = calloc(1, sizeof *l);
	if (!l)
		return s0__error_nomem(err);
	l->lock_fd = -1;
	l->team = s0__strdup(opts->team_id ? opts->team_id : "team_local");
	l->zero_time_compat = opts->zero_time_compat != 0;
	l->dir = s0__strdup(data_dir);
	s0__engine_options eo;
	rc = l->team && l->dir ? lock_dir(data_dir, &l->lock_fd, err) : s0__error_nomem(err);
	if (rc == S0_OK)
		rc = engine_options(l, opts, &eo, err);
	if (rc == S0_OK)
		rc = s0__engine_open(data_dir, &eo, &l->engine, err);
	if (rc < 0) {
		l->engine = NULL;
		s0_local_close(l);
		return rc;
	}
	if (l->manual) { /* a manual clock never goes back across a reopen */
		int64_t last = s0__engine_latest_recorded_ms(l->engine);
		int64_t now = s0_manual_clock_now(l->manual);
		if (last > now)
			s0_manual_clock_advance(l->manual, last - now);
	}
	s0__obj_inc();
	l->counted = true;
	*out = l;
	return S0_OK;
}

void s0_local_close(s0_local *l)
{
	if (!l)
		return;
	s0__engine_close(l->engine);
	if (l->lock_fd >= 0)
		close(l->lock_fd);
	s0_manual_clock_free(l->manual);
	free(l->team);
	free(l->dir);
	if (l->counted)
		s0__obj_dec();
	free(l);
}

s0__engine *s0__local_engine(s0_local *l)
{
	return l->engine;
}

/* ---- the clock of in-process clients ---- */

static int64_t lc_now(void *ctx)
{
	s0_local *l = ctx;
	return l->engine->opt.clock.now_unix_ms(l->engine->opt.clock.ctx);
}

static int64_t lc_mono(void *ctx)
{
	s0_local *l = ctx;
	return l->engine->opt.clock.monotonic_ms(l->engine->opt.clock.ctx);
}

/* On a manual clock a client's sleep first lets runnable background work
 * finish (so waits see what the server would have done by then), then
 * advances virtual time; on a real clock it just sleeps. */
static int lc_sleep(void *ctx, int64_t ms, s0_cancel_token *cancel)
{
	s0_local *l = ctx;
	if (!l->manual)
		return l->engine->opt.clock.sleep_ms(l->engine->opt.clock.ctx, ms, cancel);
	if (s0_cancel_token_is_canceled(cancel))
		return S0_ECANCELED;
	s0__engine_quiesce(l->engine, 5000);
	if (s0_cancel_token_is_canceled(cancel))
		return S0_ECANCELED;
	s0_local_clock_advance(l, ms, NULL);
	return S0_OK;
}

int s0_client_new_local(s0_local *l, const s0_client_options *opts, s0_client **out,
                        s0_error **err)
{
	if (!l || !out)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "local and out are required");
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	if (opts) {
		if (opts->version != S0_CLIENT_OPTIONS_VERSION)
			return s0__error_set(err, S0_EINVAL, "options_version",
			                     "s0_client_options.version %u is not %u", opts->version,
			                     S0_CLIENT_OPTIONS_VERSION);
		o = *opts;
	}
	s0_clock clk = {S0_CLOCK_VERSION, l, lc_now, lc_mono, lc_sleep};
	o.clock = &clk;
	o.request_timeout_ms = S0_TIMEOUT_INFINITE;
	s0__router_opts ro = {0};
	ro.team_id = l->team;
	ro.zero_time_compat = l->zero_time_compat;
	void *tctx = NULL;
	int rc = s0__local_transport_new(l->engine, &ro, &tctx, err);
	if (rc < 0)
		return rc;
	char *label = s0__asprintf("local:%s", l->dir);
	if (!label) {
		s0__local_transport_ops.free(tctx);
		return s0__error_nomem(err);
	}
	rc = s0__client_new_with_transport(&o, &s0__local_transport_ops, tctx, label, out, err);
	free(label);
	return rc;
}

/* ---- time, faults, inspection, templates ---- */

int s0_local_clock_advance(s0_local *l, int64_t ms, s0_error **err)
{
	if (!l->manual)
		return s0__error_set(err, S0_EUNSUPPORTED, "not_manual_clock",
		                     "the backend was not opened with a manual clock");
	if (ms < 0)
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "clock advance of %lld ms: the clock only moves forward (ms >= 0)",
		                     (long long)ms);
	s0_manual_clock_advance(l->manual, ms);
	s0__engine_controller_pass(l->engine);
	return S0_OK;
}

int64_t s0_local_now_unix_ms(s0_local *l)
{
	return s0__engine_now(l->engine);
}

int s0_local_quiesce(s0_local *l, int64_t timeout_ms, s0_error **err)
{
	if (s0__engine_quiesce(l->engine, timeout_ms) < 0)
		return s0__error_set(err, S0_ETIMEDOUT, "quiesce", "background work still running");
	return S0_OK;
}

int s0_local_restart_manager(s0_local *l, s0_error **err)
{
	return s0__engine_restart_manager(l->engine, err);
}

int s0_local_fault_arm(s0_local *l, const char *name, int32_t mode, int64_t count,
                       int64_t delay_ms, s0_error **err)
{
	int rc = s0__faults_arm(l->engine->faults, name, mode, count, delay_ms, err);
	s0__engine_kick(l->engine);
	return rc;
}

int s0_local_fault_release(s0_local *l, const char *name, s0_error **err)
{
	(void)err;
	s0__faults_release(l->engine->faults, name);
	s0__engine_kick(l->engine);
	return S0_OK;
}

int s0_local_inspect(s0_local *l, const char *sandbox_id, char **json_out, s0_error **err)
{
	return s0__engine_inspect(l->engine, sandbox_id, json_out, err);
}

int s0_local_template_build(s0_local *l, const char *name, const char *dir,
                            const s0_template_options *opts, s0_error **err)
{
	s0_template_options d = S0_TEMPLATE_OPTIONS_INIT;
	if (!opts)
		opts = &d;
	if (opts->version != S0_TEMPLATE_OPTIONS_VERSION)
		return s0__error_set(err, S0_EINVAL, "options_version", "bad s0_template_options version");
	if (s0__is_blank(name) || strlen(name) > 255 || strchr(name, '/'))
		return s0__error_set(err, S0_EINVAL, "invalid_argument",
		                     "template name must be 1..255 characters without '/'");
	for (const char *p = name; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			return s0__error_set(err, S0_EINVAL, "invalid_argument",
			                     "template names are lowercase");
	return s0__engine_template_build(l->engine, name, dir, opts->size_bytes,
	                                 opts->ephemeral_mounts, err);
}

int s0_local_gc(s0_local *l, s0_error **err)
{
	return s0__engine_gc(l->engine, err);
}

int s0_local_stream_open(s0_local *local, const s0_stream_options *opts, s0_stream **out,
                         s0_error **err)
{
	if (!local || !out)
		return s0__error_set(err, S0_EINVAL, "invalid_argument", "local and out are required");
	return s0__stream_local_open(local->engine, local->team, opts, out, err);
}
