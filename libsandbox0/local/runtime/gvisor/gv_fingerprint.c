/*
 * The gvisor driver's compatibility fingerprint and memory capability
 * (gv_mem.h): what decides whether `runsc restore` can continue an image —
 *  - runtime_version: runsc's version line and the size of its binary (a
 *    rebuilt runsc of the same version differs in size); procd's build is
 *    not in it (MEM-11): a capture retains the procd binary it was taken
 *    with and a restore runs that one (docs/memory-gvisor.md "procd of a
 *    restore"), so the build is only recorded (s0__gv_procd_build());
 *  - platform: OS/architecture, the runsc platform and the runtime
 *    options that change the image (overlay, file access, network);
 *  - cpu_features: a hash of the host's /proc/cpuinfo flags (runsc saves
 *    the CPUID in the image and refuses another CPU's).
 * A mismatch makes the engine resume filesystem-only (MFB-02).
 */
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "local/runtime/gvisor/gv_int.h"

/* The runsc options an image depends on (gv_runsc.c passes them to every call). */
#define RUNSC_CONFIG "systrap/overlay2=none/file-access=shared/net=sandbox"

/* The CPU flags line of /proc/cpuinfo, hashed (FNV-1a 64: a fingerprint, not
 * a secret), as "flags-<hex>"; "flags-unknown" when unreadable. */
static void cpu_flags(char *out, size_t n)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	uint64_t h = 0xcbf29ce484222325ULL;
	bool found = false;
	while (f && !found && getline(&line, &cap, f) > 0) {
		if (strncmp(line, "flags", 5))
			continue;
		found = true;
		for (const char *p = line; *p; p++)
			h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	}
	free(line);
	if (f)
		fclose(f);
	if (found)
		snprintf(out, n, "flags-%016llx", (unsigned long long)h);
	else
		snprintf(out, n, "flags-unknown");
}

void s0__gv_procd_build(const char *path, char *out, size_t n)
{
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	crypto_generichash_state st;
	unsigned char h[16], buf[65536];
	crypto_generichash_init(&st, NULL, 0, sizeof h);
	ssize_t got = fd < 0 ? -1 : 0;
	while (fd >= 0 && (got = read(fd, buf, sizeof buf)) > 0)
		crypto_generichash_update(&st, buf, (unsigned long long)got);
	if (fd >= 0)
		close(fd);
	crypto_generichash_final(&st, h, sizeof h);
	if (got < 0) {
		snprintf(out, n, "pd-unknown");
		return;
	}
	char hex[13];
	sodium_bin2hex(hex, sizeof hex, h, 6);
	snprintf(out, n, "pd-%s", hex);
}

void s0__gv_fingerprint(s0__rt_host *h, s0__rt_fp *out)
{
	const char *v = h->version ? h->version : "runsc";
	if (!strncmp(v, "runsc version ", 14))
		v += 14;
	struct stat st;
	char ver[64];
	snprintf(ver, sizeof ver, "%.32s/%lld", v,
	         h->runsc && stat(h->runsc, &st) == 0 ? (long long)st.st_size : -1LL);
	s0__rt_fp_host(out, ver);
	size_t n = strlen(out->platform);
	snprintf(out->platform + n, sizeof out->platform - n, "/%s", RUNSC_CONFIG);
	cpu_flags(out->cpu_features, sizeof out->cpu_features);
}

const char *s0__gv_mem_missing(s0__rt_host *h)
{
	if (h->no_memory)
		return "memory checkpoints are turned off for this deployment";
	if (!h->images_ok)
		return "no image directory (<state>/gvisor/images cannot be made)";
	if (!h->version || strncmp(h->version, "runsc version go-", 17))
		return "runsc is not the pinned Go-built release (scripts/install-runsc.sh): "
		       "older builds cannot checkpoint on systrap";
	return NULL;
}
