/* Request bodies: size and depth caps, duplicate keys, optional JSON objects
 * (docs/wire.md §3.0, §6.1). */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "local/api/api_internal.h"

/* Objects with more members than this are checked by sorting their names. */
#define DUP_SORT_MIN 16

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A member name that appears twice among o's members, or NULL; S0_ENOMEM in *rc. */
static const char *dup_member(const cJSON *o, int *rc)
{
	size_t n = 0;
	for (const cJSON *m = o->child; m; m = m->next)
		n++;
	if (n < 2)
		return NULL;
	if (n <= DUP_SORT_MIN) {
		for (const cJSON *a = o->child; a; a = a->next)
			for (const cJSON *b = a->next; b; b = b->next)
				if (a->string && b->string && !strcmp(a->string, b->string))
					return a->string;
		return NULL;
	}
	/* O(n log n): a huge object of distinct keys must not cost n^2 compares */
	const char **names = malloc(n * sizeof *names);
	if (!names) {
		*rc = S0_ENOMEM;
		return NULL;
	}
	size_t k = 0;
	for (const cJSON *m = o->child; m; m = m->next)
		if (m->string)
			names[k++] = m->string;
	qsort(names, k, sizeof *names, cmp_name);
	const char *dup = NULL;
	for (size_t i = 1; i < k && !dup; i++)
		if (!strcmp(names[i - 1], names[i]))
			dup = names[i];
	free(names);
	return dup;
}

/* Recursion is bounded by the parse: callers ran s0__json_check's depth cap
 * (and cJSON refuses nesting past CJSON_NESTING_LIMIT anyway). */
const char *s0__json_duplicate_key(const cJSON *v, int *rc)
{
	*rc = S0_OK;
	if (!v || !(cJSON_IsObject(v) || cJSON_IsArray(v)))
		return NULL;
	if (cJSON_IsObject(v)) {
		const char *dup = dup_member(v, rc);
		if (dup || *rc < 0)
			return dup;
	}
	for (const cJSON *m = v->child; m; m = m->next) {
		const char *dup = s0__json_duplicate_key(m, rc);
		if (dup || *rc < 0)
			return dup;
	}
	return NULL;
}

/* Bytes of a key to quote in a message: at most 64, cut at a UTF-8 boundary. */
static size_t shown_len(const char *key)
{
	size_t n = strnlen(key, 65);
	if (n <= 64)
		return n;
	n = 64;
	while (n && ((unsigned char)key[n] & 0xC0) == 0x80)
		n--;
	return n;
}

static bool blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!strchr(" \t\r\n", s[i]))
			return false;
	return true;
}

/* Parse non-blank text that passed s0__json_check; NULL after replying 400. */
static cJSON *parse(s0__rctx *c, const char *s, size_t len)
{
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(s, len, &end, false);
	if (root && end && !blank(end, len - (size_t)(end - s))) {
		cJSON_Delete(root);
		s0__reply_invalid(c, "unexpected data after the JSON value at offset %zu",
		                  (size_t)(end - s));
		return NULL;
	}
	if (!root) {
		/* cJSON reports the failing position through end (its global
		 * error pointer is shared between threads) */
		size_t off = end && end >= s && end <= s + len ? (size_t)(end - s) : 0;
		s0__reply_invalid(c, "malformed JSON near offset %zu", off);
	}
	return root;
}

/* No body, a blank one or JSON null: fine unless required. */
static bool absent(s0__rctx *c, bool required)
{
	if (required)
		s0__reply_invalid(c, "request body is required");
	return !required;
}

bool s0__body_json(s0__rctx *c, bool required, cJSON **out)
{
	const s0__http_request *r = c->req;
	const char *s = r->body;
	size_t len = r->has_body && s ? r->body_len : 0;
	*out = NULL;
	if (len > S0__ROUTER_JSON_BODY_MAX) {
		s0__reply_err(c, 413, "request_too_large", "request body is too large (%zu > %zu bytes)",
		              len, S0__ROUTER_JSON_BODY_MAX);
		return false;
	}
	if (!len || blank(s, len))
		return absent(c, required);
	const char *bad = s0__json_check(s, len, S0__ROUTER_JSON_DEPTH_MAX);
	if (bad) {
		s0__reply_invalid(c, "%s", bad);
		return false;
	}
	cJSON *root = parse(c, s, len);
	if (!root)
		return false;
	if (cJSON_IsNull(root)) {
		cJSON_Delete(root);
		return absent(c, required);
	}
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		s0__reply_invalid(c, "request body must be a JSON object");
		return false;
	}
	/* cJSON keeps every member and lookups take the first; a body whose
	 * reading depends on which duplicate wins is refused, as strict
	 * decoders do (a proxy and this router could disagree otherwise) */
	int rc;
	const char *dup = s0__json_duplicate_key(root, &rc);
	if (dup || rc < 0) {
		if (rc < 0)
			c->oom = true;
		else
			s0__reply_invalid(c, "duplicate key \"%.*s%s\" in request body",
			                  (int)shown_len(dup), dup, dup[shown_len(dup)] ? "..." : "");
		cJSON_Delete(root);
		return false;
	}
	*out = root;
	return true;
}
