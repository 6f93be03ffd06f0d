/*
 * JSON for the CLI's output, on cJSON: the library hands results over as
 * compact JSON text; the CLI re-indents them (-o json), re-encodes them as
 * YAML (-o yaml) and builds the few objects of its own (list, fork,
 * snapshot list, file info). cJSON keeps object keys in order; numbers are
 * doubles, printed back without a fraction when they are integers.
 */
#ifndef S0_CLI_JSON_H
#define S0_CLI_JSON_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef cJSON cj;

/* Parse JSON text with cJSON (nesting <= 64); NULL and a static message on error. */
cj *cj_parse(const char *text, size_t len, const char **why);
void cj_free(cj *v);

/* Builders (out of memory ends the program). */
cj *cj_null(void);
cj *cj_bool(bool b);
cj *cj_str(const char *s); /* NULL makes a JSON null */
cj *cj_int(int64_t v);
cj *cj_num(double v);
cj *cj_object(void);
cj *cj_array(void);
/* Append (or replace, for objects) and take ownership of @val. */
void cj_set(cj *obj, const char *key, cj *val);
void cj_push(cj *arr, cj *val);
/* Detach the member @key (NULL when absent); the caller owns it. */
cj *cj_take(cj *obj, const char *key);

/* Member @key (case-sensitive), NULL when absent or @obj is not an object. */
const cj *cj_get(const cj *obj, const char *key);
/* String member, NULL when absent or not a string. */
const char *cj_get_str(const cj *obj, const char *key);
bool cj_is_null(const cj *v);
cj *cj_dup(const cj *v);

/* A number's text: integers (|v| < 2^53) without a fraction, others in the
 * shortest of %.15g / %.17g that reads back the same; in @buf. */
const char *cj_num_text(const cj *v, char buf[32]);

/* Pretty text: 2-space indent and Go's encoder escapes (<, >, & as \u00XX),
 * with a trailing newline; malloc'd. */
char *cj_pretty(const cj *v);
/* Compact text; malloc'd. */
char *cj_compact(const cj *v);

#endif
