/*
 * Named fault points of the local backend (docs/decisions.md "Faults and
 * inspection"; docs/behaviours.md "Fault points"). A point is hit by name ("node_channel") and
 * optionally a
 * step ("object_store@after-seal"); an armed "name" matches every step, an
 * armed "name@step" only that step.
 *
 * Thread safety: all functions are safe from any thread.
 */
#ifndef S0_FAULTS_H
#define S0_FAULTS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/internal.h"
#include "sandbox0/local.h"

typedef struct s0__faults s0__faults;

/* What a hit tells the caller. */
typedef enum s0__fault_act {
	S0__FAULT_NONE = 0, /* proceed */
	S0__FAULT_FAIL,     /* fail this step */
	S0__FAULT_HELD      /* the point is held: wait (s0__fault_wait) or retry later */
} s0__fault_act;

int s0__faults_new(const s0_clock *clock, s0__faults **out, s0_error **err);
void s0__faults_free(s0__faults *f);

/*
 * Whether the point is in the table of known points (faults.c): name alone,
 * or name with step (NULL: any). Arming is refused and hitting asserts
 * otherwise.
 */
bool s0__fault_known(const char *name, const char *step);

/*
 * Arm: mode is s0_fault_mode; count 0 = until released. S0_EINVAL bad
 * input, including a name (or name@step) not in the table, with a message
 * naming it; nothing is armed then.
 */
int s0__faults_arm(s0__faults *f, const char *name, int mode, int64_t count, int64_t delay_ms,
                   s0_error **err);
void s0__faults_release(s0__faults *f, const char *name);
/* Disarm everything (backend close). */
void s0__faults_release_all(s0__faults *f);

/*
 * Hit point (name, step: nullable). Consumes one count. DELAY sleeps on
 * the clock here and returns NONE; CRASH raises SIGKILL; FAIL returns
 * FAIL; HOLD returns HELD without blocking.
 */
s0__fault_act s0__fault_hit(s0__faults *f, const char *name, const char *step);
/* Like s0__fault_hit, but a HOLD blocks until released (request paths). */
s0__fault_act s0__fault_pass(s0__faults *f, const char *name, const char *step);
/* Whether the point is currently armed (does not consume). */
bool s0__fault_armed(s0__faults *f, const char *name, const char *step);
/* Whether any armed point's name starts with prefix (does not consume). */
bool s0__fault_any_armed(s0__faults *f, const char *prefix);
/* Count of hits recorded for a point (inspection). */
int64_t s0__fault_hits(s0__faults *f, const char *name);
/* Armed points as a JSON object {name: {mode, remaining, hits}} (inspection). */
struct cJSON;
struct cJSON *s0__faults_json(s0__faults *f);
/* Wait until the release-generation counter moves (any release), up to ms of real time. */
void s0__faults_wait_change(s0__faults *f, int64_t ms);

#endif
