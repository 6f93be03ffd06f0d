/* Shared steps of the files endpoints (docs/wire.md §3.9–§3.10). */
#ifndef S0_API_FILES_COMMON_H
#define S0_API_FILES_COMMON_H

#include "local/api/api_internal.h"
#include "local/fsview/router.h"

/* A 400 with a procd code (`invalid_request`, `invalid_paths`). */
void s0__files_invalid(s0__rctx *c, const char *wire, const char *msg);
/*
 * The required query parameter key as (bytes, length): absent or empty is
 * 400 invalid_request "<key> is required". Returns false after replying.
 */
bool s0__files_param(s0__rctx *c, const char *key, char **out, size_t *len);
/* Whether the query has key=true (procd compares with the literal "true"). */
bool s0__files_flag(s0__rctx *c, const char *key);
/* Pin the runtime (waking a paused sandbox); false after replying. */
bool s0__files_begin(s0__rctx *c, s0__runtime_access **acc, const s0__files_ns **ns);
/* Reply {"<key>": true} with status. */
void s0__files_done(s0__rctx *c, int status, const char *key);

#endif
