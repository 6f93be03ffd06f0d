/*
 * Fixture of the runtime tests: a RootFS on a test device, a fresh runtime
 * tmpfs, the files namespace over both, a manual clock and a guest bound
 * to them; helpers to drive contexts and read their JSON answers.
 */
#ifndef S0_TEST_RTFIX_H
#define S0_TEST_RTFIX_H

#include <cjson/cJSON.h>

#include "rt_support.h"
#include "local/fsview/router.h"
#include "local/runtime/sim/contexts.h"
#include "local/runtime/sim/guest.h"
#include "local/runtime/sim/sessions.h"


typedef struct rtfix {
	rt_fs fs;
	s0__tmpfs *tmp;
	s0__files_ns ns;
	s0_manual_clock *mc;
	s0_clock clock;
	s0__guest *g;
} rtfix;

/* Open everything; o (nullable) gives guest options (the clock is the fixture's). */
void rtfix_open(rtfix *f, const s0__guest_opts *o);
/* Replace the guest (its old one freed) by g, bound to the fixture's files. */
void rtfix_set_guest(rtfix *f, s0__guest *g);
void rtfix_close(rtfix *f);
/* Capture the guest's state blob and replace the guest by one restored
 * from it (a memory checkpoint's round trip; heaps must be empty). */
void rtfix_roundtrip(rtfix *f);

/* Parse JSON text (asserts). */
cJSON *rtfix_json(const char *text);
/* Create a REPL context; returns its id (free()). */
char *rtfix_repl(rtfix *f);
/* Exec in a context, asserting success; returns the ContextExecResponse. */
cJSON *rtfix_exec(rtfix *f, const char *id, const char *cmd);
/* Exec and return a copy of stdout (free()). */
char *rtfix_out(rtfix *f, const char *id, const char *cmd);
/* Exec and return a copy of stderr (free()). */
char *rtfix_err(rtfix *f, const char *id, const char *cmd);
/* Exec; the error code, with its reason in *reason (static copy) when non-NULL. */
int rtfix_exec_fail(rtfix *f, const char *id, const char *cmd, char reason[64]);
/* The string member of o (asserts present). */
const char *rtfix_str(const cJSON *o, const char *key);
/* The integer member of o (asserts present). */
int64_t rtfix_int(const cJSON *o, const char *key);
/* Write / read a file through the namespace (asserts). */
void rtfix_put(rtfix *f, const char *path, const char *data);
char *rtfix_get(rtfix *f, const char *path);

#define ASSERT_STR(a, b) ck_assert_str_eq((a), (b))

#endif
