/* A real local backend (manual clock) in a temporary directory, for suites. */
#ifndef S0_LOCAL_FIXTURE_H
#define S0_LOCAL_FIXTURE_H

#include "sandbox0/local.h"
#include "local/lifecycle/engine.h"

typedef struct lf {
	char *dir;
	s0_local *local;
	s0__engine *engine;
} lf;

/* Open a backend with a manual clock; zero_time selects the compat mode. */
void lf_open(lf *f, bool zero_time);
void lf_close(lf *f);
/* Let background operations finish (asserts they do within 30 s). */
void lf_quiesce(lf *f);

#endif
