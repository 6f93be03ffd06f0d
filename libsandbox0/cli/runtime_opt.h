/* The `--runtime` option of `s0 serve` and `s0 demo` (runtime_opt.c). */
#ifndef S0_CLI_RUNTIME_OPT_H
#define S0_CLI_RUNTIME_OPT_H

#include <sandbox0/local.h>

#include "cli.h"

/**
 * The runtime to ask s0_local_open() for: --runtime NAME, else
 * $S0_RUNTIME, else "auto" (gvisor where it can run, else sim). Borrowed
 * from @p c or the environment; never NULL. An unknown name is refused by
 * the open, not here.
 */
const char *cli_runtime_wanted(const cli *c);

/**
 * The runtime @p local runs ("sim", "gvisor"; malloc'd, never NULL) and,
 * in *reason_out (malloc'd or NULL), why "auto" passed over the others.
 * Blocking: one s0_local_inspect(). Thread-safe as that call.
 */
char *cli_runtime_chosen(s0_local *local, char **reason_out);

/**
 * When @p wanted is "auto", one line on stderr: "PROG: runtime auto: NAME
 * (REASON)". Nothing for an explicit runtime.
 */
void cli_runtime_say(const char *prog, const char *wanted, s0_local *local);

#endif
