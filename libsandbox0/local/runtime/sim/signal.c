/* Signal names of contexts and sessions (docs/wire.md §8.1; guest.h s0__signal_parse). */
#include "local/runtime/sim/guest.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

int s0__signal_parse(const char *name, int *signo_out, s0_error **err)
{
	static const struct {
		const char *name;
		int no;
	} t[] = {{"HUP", 1},   {"INT", 2},   {"QUIT", 3},  {"KILL", 9},  {"USR1", 10},
	         {"USR2", 12}, {"TERM", 15}, {"CONT", 18}, {"STOP", 19}, {"WINCH", 28}};
	if (name && name[0] >= '0' && name[0] <= '9') {
		char *end;
		long v = strtol(name, &end, 10);
		if (!*end && v >= 1 && v <= 64) {
			*signo_out = (int)v;
			return S0_OK;
		}
	} else if (name) {
		const char *n = strncasecmp(name, "SIG", 3) ? name : name + 3;
		for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
			if (!strcasecmp(n, t[i].name)) {
				*signo_out = t[i].no;
				return S0_OK;
			}
		}
	}
	return s0__error_set(err, S0_EINVAL, "invalid_request", "unsupported signal");
}
