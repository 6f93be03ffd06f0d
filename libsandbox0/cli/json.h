/*
 * A small ordered JSON tree for the CLI's output: the library hands results
 * over as compact JSON text; the CLI re-indents them (-o json), re-encodes
 * them as YAML (-o yaml) and builds the few objects of its own (list, fork,
 * snapshot list, file info). Object keys keep their order, numbers keep
 * their text, so nothing is rounded or reordered on the way through.
 */
#ifndef S0_CLI_JSON_H
#define S0_CLI_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum cj_type { CJ_NULL, CJ_BOOL, CJ_NUMBER, CJ_STRING, CJ_ARRAY, CJ_OBJECT } cj_type;

typedef struct cj cj;
struct cj {
	cj_type type;
	bool b;        /* CJ_BOOL */
	char *s;       /* CJ_STRING (UTF-8, may hold NULs: see len) or CJ_NUMBER text */
	size_t len;    /* bytes of s */
	size_t n, cap; /* items of an array or object */
	char **keys;   /* CJ_OBJECT */
	cj **items;    /* CJ_ARRAY / CJ_OBJECT values */
};

/* Parse JSON text (depth <= 64); NULL and a static message on error. */
cj *cj_parse(const char *text, size_t len, const char **why);
void cj_free(cj *v);

cj *cj_null(void);
cj *cj_bool(bool b);
cj *cj_str(const char *s); /* NULL makes a JSON null */
cj *cj_int(int64_t v);
cj *cj_object(void);
cj *cj_array(void);
/* Append (or replace, for objects) and take ownership of @val. */
void cj_set(cj *obj, const char *key, cj *val);
void cj_push(cj *arr, cj *val);
/* Detach the member @key (NULL when absent); the caller owns it. */
cj *cj_take(cj *obj, const char *key);

const cj *cj_get(const cj *obj, const char *key);
/* String member, NULL when absent or not a string. */
const char *cj_get_str(const cj *obj, const char *key);
bool cj_is_null(const cj *v);
cj *cj_dup(const cj *v);

/* Pretty text: 2-space indent and Go's encoder escapes (<, >, & as \u00XX),
 * with a trailing newline; malloc'd. */
char *cj_pretty(const cj *v);
/* Compact text; malloc'd. */
char *cj_compact(const cj *v);

#endif
