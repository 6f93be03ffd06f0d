/* Request bodies: size and depth caps, optional JSON objects (api.md §3.0, §6.1). */
#include <string.h>

#include "local/api/api_internal.h"

/* The hostile-input checks cJSON does not make: nesting depth, NUL bytes
 * (raw, or escaped as \u0000, which cJSON would silently truncate at) and
 * raw control characters inside strings (RFC 8259 §7). */
const char *s0__json_check(const char *s, size_t len, int max_depth)
{
	int depth = 0;
	bool in_str = false;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (!ch)
			return "NUL byte in JSON";
		if (in_str) {
			if (ch < 0x20)
				return "control character in a JSON string";
			if (ch == '\\' && i + 1 < len) {
				if (len - i >= 6 && !memcmp(s + i + 1, "u0000", 5))
					return "NUL character in a JSON string";
				i++;
			} else if (ch == '"') {
				in_str = false;
			}
		} else if (ch == '"') {
			in_str = true;
		} else if (ch == '{' || ch == '[') {
			if (++depth > max_depth)
				return "JSON nested too deeply";
		} else if (ch == '}' || ch == ']') {
			depth--;
		}
	}
	return NULL;
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
	*out = root;
	return true;
}
