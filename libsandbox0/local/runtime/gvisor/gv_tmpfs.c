/*
 * Runtime-only mounts of a generation (gv_int.h): /tmp and each of the
 * template's ephemeral mounts is a host tmpfs of its own under
 * <bundle>/rt/<n> (its size the mount's limit, else the memory lease),
 * bind-mounted into the sandbox, so the files view reads and writes what
 * programs see. Unmounted at stop; never on the root tree.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "local/runtime/gvisor/gv_int.h"

static bool builtin(const char *p)
{
	return !strcmp(p, "/tmp") || !strcmp(p, "/proc") || !strcmp(p, "/dev") ||
	       !strcmp(p, "/sys");
}

int s0__gv_tmpfs_make(s0__rt_gen *g, const s0__rt_start *r, s0_error **err)
{
	size_t cap = r->n_ephemeral + 1;
	g->rt_paths = calloc(cap + 1, sizeof *g->rt_paths);
	g->rt_dirs = calloc(cap + 1, sizeof *g->rt_dirs);
	char *base = s0__asprintf("%s/rt", g->bundle);
	if (!g->rt_paths || !g->rt_dirs || !base) {
		free(base);
		return s0__error_nomem(err);
	}
	int rc = S0_OK;
	if (mkdir(base, 0700) < 0 && errno != EEXIST)
		rc = s0__error_set(err, S0_EIO, "runtime_unavailable", "cannot make %s: %s", base,
		                   strerror(errno));
	for (size_t i = 0; rc == S0_OK && i < cap; i++) {
		const char *p = i == 0 ? "/tmp" : r->ephemeral[i - 1];
		uint64_t lim = i == 0 || !r->ephemeral_limits ? 0 : r->ephemeral_limits[i - 1];
		if (i > 0 && builtin(p))
			continue;
		bool dup = false;
		for (size_t k = 0; k < g->n_rt; k++)
			dup = dup || !strcmp(g->rt_paths[k], p);
		if (dup)
			continue;
		if (!lim)
			lim = r->memory_bytes > 0 ? (uint64_t)r->memory_bytes : 512ull << 20;
		char *dir = s0__asprintf("%s/%zu", base, g->n_rt);
		char opts[64];
		snprintf(opts, sizeof opts, "size=%llu,mode=1777", (unsigned long long)lim);
		if (!dir || !(g->rt_paths[g->n_rt] = s0__strdup(p))) {
			free(dir);
			rc = s0__error_nomem(err);
			break;
		}
		g->rt_dirs[g->n_rt++] = dir;
		if ((mkdir(dir, 0700) < 0 && errno != EEXIST) ||
		    mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
			rc = s0__error_set(err, S0_EIO, "runtime_unavailable",
			                   "cannot mount a tmpfs for %s at %s: %s", p, dir,
			                   strerror(errno));
	}
	free(base);
	return rc;
}

void s0__gv_tmpfs_drop(s0__rt_gen *g)
{
	for (size_t i = 0; i < g->n_rt; i++) {
		umount2(g->rt_dirs[i], MNT_DETACH);
		free(g->rt_dirs[i]);
		free(g->rt_paths[i]);
	}
	free(g->rt_dirs);
	free(g->rt_paths);
	g->rt_dirs = g->rt_paths = NULL;
	g->n_rt = 0;
}

bool s0__gv_mount_under(const char *prefix, char *what, size_t n)
{
	FILE *f = fopen("/proc/self/mounts", "re");
	if (!f)
		return false;
	char line[4096];
	size_t len = strlen(prefix);
	bool found = false;
	while (!found && fgets(line, sizeof line, f)) {
		char *sp = strchr(line, ' ');
		char *mp = sp ? sp + 1 : NULL;
		char *end = mp ? strchr(mp, ' ') : NULL;
		if (!end)
			continue;
		*end = 0;
		if (!strncmp(mp, prefix, len) && (mp[len] == '/' || !mp[len])) {
			snprintf(what, n, "mount %s", mp);
			found = true;
		}
	}
	fclose(f);
	return found;
}
