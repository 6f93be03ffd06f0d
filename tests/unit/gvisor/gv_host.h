/* Helpers of the gvisor engine tests (gv_host.c). */
#ifndef S0_TEST_GV_HOST_H
#define S0_TEST_GV_HOST_H

#include <stddef.h>

#include "lt.h"

/** Open a gvisor backend (manual clock) on the existing data directory @p dir into @p t. */
void gv_open_dir(lt *t, const char *dir);
/** What a killed backend left on the host naming @p dir (a process, a loop device, a mount)
 * but not naming @p except (nullable), into @p what; "" when nothing. */
void gv_leftovers_except(const char *dir, const char *except, char *what, size_t n);
/** gv_leftovers_except() without an exception. */
void gv_leftovers(const char *key, char *what, size_t n);

#endif
