/*
 * The memory-cgroup guard of the carrier (carrier_int.h, docs/security.md
 * SEC-75). On cgroup v1, reclaim charged to a memory cgroup at its limit
 * waits for pages under writeback (the legacy memcg path of the kernel's
 * reclaim); when this process both writes through the mount and serves the
 * FUSE disk under that mount, a server thread allocating in reclaim waits
 * for writeback only it can complete: measured as a permanent hang
 * (tests/unit/carrier/check_pressure.c). So a carrier refuses to start in a
 * process whose v1 memory cgroup, or an ancestor, has a limit below the
 * machine's memory. cgroup v2 reclaim does not wait on writeback there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "local/runtime/carrier/carrier_int.h"

/* The v1 memory hierarchy's mount point (from /proc/self/mounts). */
static bool memory_mount(char *out, size_t n)
{
	FILE *f = fopen("/proc/self/mounts", "re");
	if (!f)
		return false;
	char src[256], mnt[512], type[64], opts[512];
	bool found = false;
	while (!found && fscanf(f, "%255s %511s %63s %511s %*d %*d", src, mnt, type, opts) == 4) {
		if (strcmp(type, "cgroup") != 0)
			continue;
		for (char *save = NULL, *o = strtok_r(opts, ",", &save); o; o = strtok_r(NULL, ",", &save))
			if (strcmp(o, "memory") == 0) {
				snprintf(out, n, "%s", mnt);
				found = true;
			}
	}
	fclose(f);
	return found;
}

/* This process's v1 memory cgroup path ("/a/b"), from /proc/self/cgroup. */
static bool memory_path(char *out, size_t n)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return false;
	char line[1024];
	bool found = false;
	while (!found && fgets(line, sizeof line, f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = 0;
		for (char *save = NULL, *o = strtok_r(c1 + 1, ",", &save); o; o = strtok_r(NULL, ",", &save))
			if (strcmp(o, "memory") == 0)
				found = true;
		if (found) {
			c2[1 + strcspn(c2 + 1, "\n")] = 0;
			snprintf(out, n, "%s", c2 + 1);
		}
	}
	fclose(f);
	return found;
}

static unsigned long long read_ull(const char *path)
{
	FILE *f = fopen(path, "re");
	unsigned long long v = 0;
	if (f && fscanf(f, "%llu", &v) != 1)
		v = 0;
	if (f)
		fclose(f);
	return v;
}

bool s0__carrier_memcg_limited(char *why, size_t why_len)
{
	char mnt[512], path[1024];
	if (!memory_mount(mnt, sizeof mnt) || !memory_path(path, sizeof path))
		return false; /* cgroup v2 or no memory controller */
	unsigned long long ram = 0;
	FILE *f = fopen("/proc/meminfo", "re");
	if (!f || fscanf(f, "MemTotal: %llu kB", &ram) != 1)
		ram = 0;
	if (f)
		fclose(f);
	ram *= 1024;
	for (;;) { /* the cgroup and each ancestor up to the root */
		char file[1600];
		snprintf(file, sizeof file, "%s%s/memory.limit_in_bytes", mnt,
		         strcmp(path, "/") ? path : "");
		unsigned long long lim = read_ull(file);
		if (lim && ram && lim < ram) {
			snprintf(why, why_len,
			         "this process's memory cgroup %s (v1) is limited to %llu bytes: reclaim "
			         "there waits for writeback that this process's FUSE server must do "
			         "(docs/security.md SEC-75); run it in an unlimited memory cgroup",
			         path, lim);
			return true;
		}
		char *slash = strrchr(path, '/');
		if (!slash || slash == path)
			break;
		*slash = 0;
	}
	return false;
}
