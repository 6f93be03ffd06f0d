/* The s0_local object (shared by local.c and the server glue). */
#ifndef S0_LOCAL_INTERNAL_H
#define S0_LOCAL_INTERNAL_H

#include <stdbool.h>

#include "common/internal.h"
#include "local/lifecycle/engine.h"
#include "sandbox0/local.h"

struct s0_local {
	s0__engine *engine;
	s0_manual_clock *manual; /* owned when opened with manual_clock */
	char *dir;
	char *team; /* team of in-process clients */
	bool zero_time_compat;
	int lock_fd;
	bool counted;
};

s0__engine *s0__local_engine(s0_local *l);

#endif
