/*
 * Cgroups of the generations (gv_int.h): runsc makes
 * /sys/fs/cgroup/<controller>/s0-gvisor/<runtime id> from the bundle's
 * cgroupsPath and limits (cgroup v1 on this machine kind); this file finds
 * what is left of one and removes it, killing processes still inside.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "local/runtime/gvisor/gv_int.h"

static const char *const CONTROLLERS[] = {
	"memory", "pids", "cpu", "cpuacct", "cpuset", "blkio", "devices", "freezer",
	"net_cls", "net_prio", "perf_event", "hugetlb", "systemd", NULL,
};

static void cg_path(char *buf, size_t n, const char *ctl, const char *id)
{
	snprintf(buf, n, "/sys/fs/cgroup/%s/%s/%s", ctl, S0__GV_CGROUP_PARENT, id);
}

bool s0__gv_cgroup_present(const char *id, char *what, size_t n)
{
	for (size_t i = 0; CONTROLLERS[i]; i++) {
		char p[512];
		struct stat st;
		cg_path(p, sizeof p, CONTROLLERS[i], id);
		if (stat(p, &st) == 0) {
			if (what)
				snprintf(what, n, "cgroup %s", p);
			return true;
		}
	}
	return false;
}

/* SIGKILL every task listed in dir/cgroup.procs; true when there were any. */
static bool kill_tasks(const char *dir)
{
	char p[600];
	snprintf(p, sizeof p, "%s/cgroup.procs", dir);
	FILE *f = fopen(p, "re");
	if (!f)
		return false;
	int pid;
	bool any = false;
	while (fscanf(f, "%d", &pid) == 1) {
		kill(pid, SIGKILL);
		any = true;
	}
	fclose(f);
	return any;
}

void s0__gv_cgroup_remove(const char *id)
{
	for (size_t i = 0; CONTROLLERS[i]; i++) {
		char p[512];
		cg_path(p, sizeof p, CONTROLLERS[i], id);
		/* rmdir fails with EBUSY while tasks remain: kill, reap, retry
		 * (bounded: a task in uninterruptible sleep keeps its cgroup) */
		for (int tries = 0; tries < 200; tries++) {
			if (rmdir(p) == 0 || errno == ENOENT)
				break;
			if (errno != EBUSY)
				break;
			kill_tasks(p);
			s0__gv_reap_orphans();
			nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
		}
	}
}

void s0__gv_cgroup_parent_remove(void)
{
	for (size_t i = 0; CONTROLLERS[i]; i++) {
		char p[256];
		snprintf(p, sizeof p, "/sys/fs/cgroup/%s/%s", CONTROLLERS[i], S0__GV_CGROUP_PARENT);
		rmdir(p); /* fails while another host's generation runs: kept */
	}
}
