/* Compatibility fingerprints (ckpt.h): the comparison; drivers fill them (runtime.h). */
#include "local/checkpoint/ckpt.h"

#include <string.h>

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
