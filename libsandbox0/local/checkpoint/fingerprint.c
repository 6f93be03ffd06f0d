/* Compatibility fingerprints (ckpt.h). */
#include "local/checkpoint/ckpt.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

static void cpu_features(char *out, size_t n)
{
	out[0] = 0;
#if defined(__x86_64__) || defined(__i386__)
	__builtin_cpu_init();
	static const char *const names[] = {"sse4.2", "avx", "avx2", "avx512f", "aes", "pclmul",
	                                    "bmi2", "popcnt", "fma"};
	const int have[] = {__builtin_cpu_supports("sse4.2"), __builtin_cpu_supports("avx"),
	                    __builtin_cpu_supports("avx2"), __builtin_cpu_supports("avx512f"),
	                    __builtin_cpu_supports("aes"), __builtin_cpu_supports("pclmul"),
	                    __builtin_cpu_supports("bmi2"), __builtin_cpu_supports("popcnt"),
	                    __builtin_cpu_supports("fma")};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (have[i])
			snprintf(out + strlen(out), n - strlen(out), "%s%s", out[0] ? "," : "", names[i]);
#endif
	if (!out[0])
		snprintf(out, n, "generic");
}

void s0__ckpt_fp_host(s0__ckpt_fp *out)
{
	memset(out, 0, sizeof *out);
	snprintf(out->runtime_version, sizeof out->runtime_version, "s0-sim/1");
	struct utsname u;
	char plat[sizeof u.sysname + sizeof u.machine + 2];
	if (uname(&u) == 0)
		snprintf(plat, sizeof plat, "%s/%s", u.sysname, u.machine);
	else
		snprintf(plat, sizeof plat, "unknown");
	s0__strlcpy(out->platform, plat, sizeof out->platform);
	for (char *p = out->platform; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	cpu_features(out->cpu_features, sizeof out->cpu_features);
}

const char *s0__ckpt_fp_mismatch(const s0__ckpt_fp *a, const s0__ckpt_fp *b)
{
	if (strcmp(a->runtime_version, b->runtime_version))
		return "runtime_version";
	if (strcmp(a->platform, b->platform))
		return "platform";
	if (strcmp(a->cpu_features, b->cpu_features))
		return "cpu_features";
	if (strcmp(a->template_image, b->template_image))
		return "template_image";
	if (a->cpu_millis != b->cpu_millis)
		return "cpu_millis";
	if (a->memory_bytes != b->memory_bytes)
		return "memory_bytes";
	return NULL; /* procd_version is recorded, not compared (MEM-11) */
}
