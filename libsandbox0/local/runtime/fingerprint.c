/* The host part of a compatibility fingerprint (runtime.h s0__rt_fp_host). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "local/runtime/runtime.h"

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

void s0__rt_fp_host(s0__rt_fp *out, const char *runtime_version)
{
	memset(out, 0, sizeof *out);
	s0__strlcpy(out->runtime_version, runtime_version ? runtime_version : "",
	            sizeof out->runtime_version);
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
