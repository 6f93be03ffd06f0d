/* s0__carrier_probe (carrier.h): what a carrier needs, without mounting. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "local/runtime/carrier/carrier_int.h"

#define CAP_SYS_ADMIN_BIT 21

static int missing(s0_error **err, const char *what, const char *why)
{
	return s0__error_set(err, S0_EUNAVAILABLE, "carrier_unavailable",
	                     "carrier unavailable: %s: %s", what, why);
}

static bool has_cap_sys_admin(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return false;
	char line[256];
	bool ok = false;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "CapEff:", 7) == 0) {
			unsigned long long caps = strtoull(line + 7, NULL, 16);
			ok = (caps >> CAP_SYS_ADMIN_BIT) & 1;
			break;
		}
	}
	fclose(f);
	return ok;
}

static bool has_ext4(void)
{
	FILE *f = fopen("/proc/filesystems", "re");
	if (!f)
		return false;
	char line[128];
	bool ok = false;
	while (!ok && fgets(line, sizeof line, f)) {
		char *tab = strrchr(line, '\t');
		ok = tab && strcmp(tab + 1, "ext4\n") == 0;
	}
	fclose(f);
	return ok;
}

int s0__carrier_probe(s0_error **err)
{
	if (geteuid() != 0)
		return missing(err, "root", "the process is not running as root");
	if (!has_cap_sys_admin())
		return missing(err, "CAP_SYS_ADMIN", "not in the effective capability set");
	const char *devs[] = {"/dev/fuse", "/dev/loop-control"};
	for (size_t i = 0; i < 2; i++) {
		int fd = open(devs[i], O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return missing(err, devs[i], strerror(errno));
		close(fd);
	}
	if (!has_ext4())
		return missing(err, "ext4", "not in /proc/filesystems");
	char why[512];
	if (s0__carrier_memcg_limited(why, sizeof why))
		return missing(err, "memory cgroup", why);
	return S0_OK;
}
