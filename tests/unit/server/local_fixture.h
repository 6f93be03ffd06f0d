/* A real local backend (manual clock) in a temporary directory, for suites. */
#ifndef S0_LOCAL_FIXTURE_H
#define S0_LOCAL_FIXTURE_H

#include "sandbox0/local.h"
#include "local/lifecycle/engine.h"

typedef struct lf {
	char *dir;
	s0_local *local;
	s0__engine *engine;
	bool zero_time;
} lf;

/* Open a backend with a manual clock; zero_time selects the compat mode. */
void lf_open(lf *f, bool zero_time);
void lf_close(lf *f);
/* Let background operations finish (asserts they do within 30 s). */
void lf_quiesce(lf *f);
/* A crash and a restart of the process on the same directory: the
 * controller stops first (no lifecycle step runs after this point, as after
 * a SIGKILL), the backend closes (its runtimes go with it) and opens again
 * with the same options, running its restart recovery. */
void lf_restart(lf *f);

#endif
