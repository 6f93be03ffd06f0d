/*
 * Fuzz target: the files API's path checks (s0__path_normalize and the
 * mount-point set, local/rootfs/path.h). Beyond "no crash" it checks the
 * contract: an accepted path is absolute and canonical (no empty, `.` or
 * `..` components, no trailing slash but "/"), within S0__PATH_MAX,
 * normalising it again changes nothing, and s0__path_is_under agrees with
 * s0__mountset_owner.
 *
 * Input: one flags byte (bit 0: S0__PATH_CLAMP), then the path bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "local/rootfs/path.h"

static void check_canonical(const char *p)
{
	size_t n = strlen(p);
	if (p[0] != '/' || n > S0__PATH_MAX || (n > 1 && p[n - 1] == '/'))
		abort();
	const char *it = p, *comp;
	size_t len;
	while (s0__path_next(&it, &comp, &len)) {
		if (len == 0 || len > S0__NAME_MAX || (len == 1 && comp[0] == '.') ||
		    (len == 2 && comp[0] == '.' && comp[1] == '.') || memchr(comp, '/', len))
			abort();
	}
	if (strstr(p, "//"))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 3 * S0__PATH_MAX)
		return 0;
	unsigned flags = data[0] & 1 ? S0__PATH_CLAMP : 0;
	const char *in = (const char *)data + 1;
	size_t len = size - 1;
	char *out = NULL;
	s0_error *err = NULL;
	int rc = s0__path_normalize(in, len, flags, &out, &err);
	if (rc != S0_OK) {
		if (!err || out)
			abort(); /* a refusal carries an error and no result */
		s0_error_free(err);
		return 0;
	}
	check_canonical(out);
	char *again = NULL;
	if (s0__path_normalize(out, strlen(out), 0, &again, NULL) != S0_OK || strcmp(again, out))
		abort();
	free(again);
	/* base and join agree with each other */
	const char *base = s0__path_base(out);
	if (strcmp(out, "/") != 0) {
		char *dir = strndup(out, (size_t)(base - out) > 1 ? (size_t)(base - out) - 1 : 1);
		char *joined = dir ? s0__path_join(dir, base) : NULL;
		if (joined && strcmp(joined, out))
			abort();
		free(joined);
		free(dir);
	}
	/* mount-point ownership: the owner is a mount the path lies under */
	s0__mountset m = {0};
	for (size_t i = 0; i < 4; i++)
		s0__mountset_add(&m, s0__builtin_mounts[i], strlen(s0__builtin_mounts[i]), NULL);
	s0__mountset_add(&m, out, strlen(out), NULL);
	const char *owner = s0__mountset_owner(&m, out);
	if (strcmp(out, "/") != 0 && (!owner || !s0__path_is_under(out, owner)))
		abort();
	s0__mountset_clear(&m);
	free(out);
	return 0;
}
