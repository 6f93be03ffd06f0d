/*
 * The OCI bundle of a generation (gv_int.h): config.json made with cJSON.
 * PID 1 is procd (gv_init.c), bound read-only from the bundle; /tmp and
 * the template's ephemeral mounts are host tmpfs bind-mounted in
 * (gv_tmpfs.c; never on the root tree); the capabilities are Docker's
 * default set without CAP_NET_RAW (docs/security.md); the cgroup is
 * S0__GV_CGROUP_PARENT/<runtime id> with the lease's limits.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "local/runtime/gvisor/gv_int.h"

/** Processes a generation may hold at once (the pids cgroup). */
#define S0__GV_PIDS_MAX 512
/** The lowest hard CPU cap of a generation, millicores: one core. Below it the
 * sentry and its systrap stubs are throttled mid-handoff and spend ~3x the CPU
 * (python3 -c: 0.31-0.37 s of CPU unthrottled, 0.84-1.03 s at 150m: 6 s wall). */
#define S0__GV_CPU_CAP_MIN_MILLIS 1000

static const char *const CAPS[] = {
	"CAP_CHOWN",  "CAP_DAC_OVERRIDE", "CAP_FSETID",     "CAP_FOWNER",
	"CAP_MKNOD",  "CAP_SETGID",       "CAP_SETUID",     "CAP_SETFCAP",
	"CAP_SETPCAP", "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL",
	"CAP_AUDIT_WRITE", NULL,
};

static cJSON *str_array(const char *const *v)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; a && v[i]; i++)
		if (!cJSON_AddItemToArray(a, cJSON_CreateString(v[i]))) {
			cJSON_Delete(a);
			return NULL;
		}
	return a;
}

static int add_mount(cJSON *mounts, const char *dst, const char *type, const char *src,
                     const char *const *opts)
{
	cJSON *m = cJSON_CreateObject();
	if (!m || !cJSON_AddItemToArray(mounts, m))
		return -1;
	int rc = s0__json_add_str(m, "destination", dst) | s0__json_add_str(m, "type", type) |
	         s0__json_add_str(m, "source", src);
	cJSON *o = str_array(opts);
	if (!o || !cJSON_AddItemToObject(m, "options", o)) {
		cJSON_Delete(o);
		return -1;
	}
	return rc;
}

/* An ephemeral path: absolute, no "." or ".." parts, no doubled slash. */
static bool good_path(const char *p)
{
	if (!p || p[0] != '/' || !p[1] || strlen(p) > 1024)
		return false;
	for (const char *s = p + 1; *s;) {
		const char *e = strchr(s, '/');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		s += n + (e ? 1 : 0);
		if (e && !*s)
			return false; /* trailing slash */
	}
	return true;
}

static int add_mounts(cJSON *root, s0__rt_gen *g)
{
	cJSON *m = cJSON_AddArrayToObject(root, "mounts");
	if (!m)
		return -1;
	static const char *const proc_o[] = {"nosuid", "noexec", "nodev", NULL};
	static const char *const dev_o[] = {"nosuid", "strictatime", "mode=755", "size=65536k",
	                                    NULL};
	static const char *const sys_o[] = {"nosuid", "noexec", "nodev", "ro", NULL};
	int rc = add_mount(m, "/proc", "proc", "proc", proc_o) |
	         add_mount(m, "/dev", "tmpfs", "tmpfs", dev_o) |
	         add_mount(m, "/sys", "sysfs", "sysfs", sys_o);
	/* /tmp and the ephemeral mounts: the host tmpfs of each (gv_tmpfs.c) */
	static const char *const bind_o[] = {"rbind", "rw", "nosuid", "nodev", NULL};
	for (size_t i = 0; rc == 0 && i < g->n_rt; i++)
		rc |= add_mount(m, g->rt_paths[i], "bind", g->rt_dirs[i], bind_o);
	/* procd's directory (gv_init.c), read-only, in the sandbox's own /dev */
	static const char *const procd_o[] = {"rbind", "ro", "nosuid", "nodev", NULL};
	if (rc == 0 && g->procd_dir)
		rc |= add_mount(m, S0__GV_PROCD_DIR, "bind", g->procd_dir, procd_o);
	return rc;
}

static int add_process(cJSON *root, s0__rt_gen *g)
{
	cJSON *p = cJSON_AddObjectToObject(root, "process");
	if (!p)
		return -1;
	const char *args[] = {S0__GV_PROCD_DIR "/" S0__GV_PROCD_NAME, NULL}; /* PID 1: procd */
	int rc = s0__json_add_bool(p, "terminal", false) | s0__json_add_str(p, "cwd", "/") |
	         s0__json_add_bool(p, "noNewPrivileges", true);
	cJSON *user = cJSON_AddObjectToObject(p, "user");
	rc |= !user || s0__json_add_i64(user, "uid", 0) || s0__json_add_i64(user, "gid", 0);
	cJSON *a = str_array(args);
	rc |= !a || !cJSON_AddItemToObject(p, "args", a);
	cJSON *env = cJSON_AddArrayToObject(p, "env");
	rc |= !env;
	static const char *const base[] = {
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root",
		"TERM=xterm", NULL};
	for (size_t i = 0; env && base[i]; i++)
		cJSON_AddItemToArray(env, cJSON_CreateString(base[i]));
	for (size_t i = 0; env && g->env && g->env[i]; i++)
		cJSON_AddItemToArray(env, cJSON_CreateString(g->env[i]));
	cJSON *caps = cJSON_AddObjectToObject(p, "capabilities");
	static const char *const sets[] = {"bounding", "effective", "permitted", NULL};
	for (size_t i = 0; caps && sets[i]; i++) {
		cJSON *c = str_array(CAPS);
		rc |= !c || !cJSON_AddItemToObject(caps, sets[i], c);
	}
	return rc | !caps;
}

static int add_linux(cJSON *root, s0__rt_gen *g, const s0__rt_start *r)
{
	cJSON *l = cJSON_AddObjectToObject(root, "linux");
	if (!l)
		return -1;
	char cg[S0__GV_ID_MAX + 32];
	snprintf(cg, sizeof cg, "/%s/%s", S0__GV_CGROUP_PARENT, g->id);
	int rc = s0__json_add_str(l, "cgroupsPath", cg);
	cJSON *ns = cJSON_AddArrayToObject(l, "namespaces");
	static const char *const kinds[] = {"pid", "network", "ipc", "uts", "mount", NULL};
	for (size_t i = 0; ns && kinds[i]; i++) {
		cJSON *n = cJSON_CreateObject();
		rc |= !n || !cJSON_AddItemToArray(ns, n) || s0__json_add_str(n, "type", kinds[i]);
		if (n && g->net && !strcmp(kinds[i], "network")) /* ours (gv_net.h) */
			rc |= s0__json_add_str(n, "path", s0__gv_net_path(g->net));
	}
	cJSON *res = cJSON_AddObjectToObject(l, "resources");
	cJSON *mem = res ? cJSON_AddObjectToObject(res, "memory") : NULL;
	cJSON *cpu = res ? cJSON_AddObjectToObject(res, "cpu") : NULL;
	cJSON *pids = res ? cJSON_AddObjectToObject(res, "pids") : NULL;
	if (!mem || !cpu || !pids)
		return -1;
	if (r->memory_bytes > 0)
		rc |= s0__json_add_i64(mem, "limit", r->memory_bytes);
	if (r->cpu_millis > 0) {
		/* millicores as Kubernetes maps a request: the weight under contention
		 * (cpu.shares, 1024 per core); the hard cap never below one core
		 * (S0__GV_CPU_CAP_MIN_MILLIS: systrap burns 3x the CPU when throttled,
		 * docs/local-backend.md "CPU") */
		int64_t cap = r->cpu_millis > S0__GV_CPU_CAP_MIN_MILLIS ? r->cpu_millis
		                                                        : S0__GV_CPU_CAP_MIN_MILLIS;
		int64_t shares = r->cpu_millis * 1024 / 1000;
		rc |= s0__json_add_i64(cpu, "shares", shares < 2 ? 2 : shares);
		rc |= s0__json_add_i64(cpu, "period", 100000);
		rc |= s0__json_add_i64(cpu, "quota", cap * 100);
	}
	rc |= s0__json_add_i64(pids, "limit", S0__GV_PIDS_MAX);
	return rc | !ns;
}

int s0__gv_bundle_check(const s0__rt_start *r, s0_error **err)
{
	for (size_t i = 0; i < r->n_ephemeral; i++)
		if (!good_path(r->ephemeral[i]))
			return s0__error_set(err, S0_EINVAL, "invalid_request",
			                     "bad ephemeral mount path \"%s\"",
			                     r->ephemeral[i] ? r->ephemeral[i] : "(null)");
	return S0_OK;
}

int s0__gv_bundle_write(s0__rt_gen *g, const s0__rt_start *r, s0_error **err)
{
	int rc = s0__gv_bundle_check(r, err);
	if (rc < 0)
		return rc;
	cJSON *c = cJSON_CreateObject();
	if (!c)
		return s0__error_nomem(err);
	int bad = s0__json_add_str(c, "ociVersion", "1.0.2") |
	          s0__json_add_str(c, "hostname", "sandbox");
	cJSON *root = cJSON_AddObjectToObject(c, "root");
	bad |= !root || s0__json_add_str(root, "path", g->root) ||
	       s0__json_add_bool(root, "readonly", false);
	bad |= add_process(c, g) | add_mounts(c, g) | add_linux(c, g, r);
	char *text = bad ? NULL : cJSON_Print(c);
	cJSON_Delete(c);
	if (!text)
		return s0__error_nomem(err);
	char *path = s0__asprintf("%s/config.json", g->bundle);
	if (!path || (mkdir(g->bundle, 0700) < 0 && errno != EEXIST)) {
		rc = s0__error_set(err, S0_EIO, "runtime_unavailable", "cannot make bundle %s: %s",
		                   g->bundle, strerror(errno));
	} else {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		size_t len = strlen(text);
		if (fd < 0 || write(fd, text, len) != (ssize_t)len)
			rc = s0__error_set(err, S0_EIO, "runtime_unavailable", "cannot write %s: %s",
			                   path, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	free(path);
	free(text);
	return rc;
}
