/* Typed accessors over cJSON used by every JSON reader and writer. */
#ifndef S0_JSON_H
#define S0_JSON_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/internal.h"

/* String member or NULL (absent, null or not a string). */
const char *s0__json_str(const cJSON *obj, const char *key);
/* Like s0__json_str, but "" instead of NULL. */
const char *s0__json_str0(const cJSON *obj, const char *key);
/* Boolean member; def when absent or not a bool. */
bool s0__json_bool(const cJSON *obj, const char *key, bool def);
/* Integer member; def when absent or not a number. */
int64_t s0__json_i64(const cJSON *obj, const char *key, int64_t def);
/* Timestamp member (RFC 3339) in unix ms; 0 when null, absent, zero time or bad. */
int64_t s0__json_time(const cJSON *obj, const char *key);
/*
 * Request objects that must have only known members (a misspelt field must
 * not pass as an absent one). @p keys is NULL-terminated. unknown_key gives
 * the first member of @p obj not in @p keys, or NULL (also when obj is not an
 * object). check_keys turns it into S0_EINVAL with @p reason and the message
 * `unknown field "<path>.<key>"` (no dot when @p path is empty).
 */
const char *s0__json_unknown_key(const cJSON *obj, const char *const *keys);
int s0__json_check_keys(const cJSON *obj, const char *const *keys, const char *path,
                        const char *reason, s0_error **err);
/* Compact text of a node (malloc'd), or NULL. */
char *s0__json_print(const cJSON *node);
/* Add helpers returning 0 or -1 (OOM). */
int s0__json_add_str(cJSON *obj, const char *key, const char *val);
int s0__json_add_i64(cJSON *obj, const char *key, int64_t val);
int s0__json_add_bool(cJSON *obj, const char *key, bool val);
/* Add an RFC 3339 time, or null when unix_ms is 0 (zero_time: the Go zero time). */
int s0__json_add_time(cJSON *obj, const char *key, int64_t unix_ms, bool zero_time_for_unset);

/* RFC 3339 <-> unix ms. Parse returns 0 and sets *out, or -1 on bad input. */
int s0__time_parse_rfc3339(const char *s, int64_t *out);
/* The instants RFC 3339 can write: 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z. */
#define S0__RFC3339_MIN_MS (-62135596800000LL)
#define S0__RFC3339_MAX_MS 253402300799999LL
/*
 * Format into buf (>= 32 bytes), UTC with millisecond precision when
 * non-zero. Instants outside the RFC 3339 range are clamped to it.
 */
void s0__time_format_rfc3339(int64_t unix_ms, char *buf, size_t n);
/* Retry-After value (delta seconds or HTTP date) -> ms from now_unix_ms; -1 if invalid. */
int64_t s0__retry_after_parse(const char *value, int64_t now_unix_ms);

/*
 * Checks to make on hostile JSON text before cJSON parses it: nesting
 * deeper than max_depth, NUL bytes (raw or \u0000, which cJSON would
 * silently cut a string at) and raw control characters in strings
 * (RFC 8259 §7). Returns NULL when fine, else a static message.
 */
const char *s0__json_check(const char *s, size_t len, int max_depth);

/*
 * A copy of NUL-terminated @p s with every byte that does not belong to
 * well-formed UTF-8 (RFC 3629) replaced by U+FFFD, as a WebSocket text frame
 * needs (RFC 6455 §8.1: else the peer fails the connection). @return
 * (transfer full) the copy, or NULL when out of memory.
 */
char *s0__utf8_valid_copy(const char *s);

/* Nesting accepted in JSON text a caller hands the client (cJSON's own cap). */
#define S0__JSON_ARG_DEPTH_MAX 1000

/*
 * A caller's JSON object argument (extra_json, a policy, a request body),
 * checked with s0__json_check first. NULL with S0_EINVAL
 * `invalid_argument` ("<what> is not a JSON object", or "<what>: NUL
 * character in a JSON string"…) when @p text is NULL, not an object or
 * hostile. @return (transfer full)
 */
cJSON *s0__json_parse_arg(const char *text, const char *what, s0_error **err);

#endif
