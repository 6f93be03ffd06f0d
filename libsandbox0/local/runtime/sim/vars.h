/*
 * Shell variables of one simulated process: a name-sorted list of
 * (name, value, exported). The exported ones are the process environment.
 *
 * @threadsafety plain value; the guest lock serialises access.
 */
#ifndef S0_RUNTIME_SIM_VARS_H
#define S0_RUNTIME_SIM_VARS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/internal.h"

/** One variable. Strings are owned. */
typedef struct s0__var {
	char *name;
	char *value;
	bool exported;
} s0__var;

/** A variable list (zero-initialised = empty). */
typedef struct s0__vars {
	s0__var *v; /**< sorted by name (bytewise) */
	size_t n, cap;
} s0__vars;

/** Export flag modes for s0__vars_set(). */
enum { S0__VAR_KEEP = 0, S0__VAR_EXPORT = 1, S0__VAR_LOCAL = 2 };

/** Whether @p name is a valid variable name ([A-Za-z_][A-Za-z0-9_]*). */
bool s0__var_name_ok(const char *name, size_t len);

/** The value of @p name, or NULL. @return (transfer none) */
const char *s0__vars_get(const s0__vars *v, const char *name);
/** The record of @p name, or NULL. @return (transfer none) */
s0__var *s0__vars_find(const s0__vars *v, const char *name);

/**
 * Set @p name (copied) to @p value (copied; NULL keeps the current value or
 * makes "" for a new one).
 * @param mode S0__VAR_KEEP (new variables are local), S0__VAR_EXPORT or S0__VAR_LOCAL.
 * @retval S0_OK @retval S0_ENOMEM (list unchanged)
 */
int s0__vars_set(s0__vars *v, const char *name, const char *value, int mode);

/** Remove @p name (absent is fine). */
void s0__vars_unset(s0__vars *v, const char *name);

/** Deep copy @p src into empty @p dst. @p exported_only drops local ones. */
int s0__vars_copy(s0__vars *dst, const s0__vars *src, bool exported_only);

/** Free everything; leaves an empty list. */
void s0__vars_clear(s0__vars *v);

#endif
