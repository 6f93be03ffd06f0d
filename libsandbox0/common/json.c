#include "common/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <string.h>

const char *s0__json_str(const cJSON *obj, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(it) ? it->valuestring : NULL;
}

const char *s0__json_str0(const cJSON *obj, const char *key)
{
	const char *s = s0__json_str(obj, key);
	return s ? s : "";
}

bool s0__json_bool(const cJSON *obj, const char *key, bool def)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsBool(it) ? cJSON_IsTrue(it) : def;
}

int64_t s0__json_i64(const cJSON *obj, const char *key, int64_t def)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
		return def;
	double d = it->valuedouble;
	if (d > 9.2e18 || d < -9.2e18)
		return def;
	return (int64_t)d;
}

int64_t s0__json_time(const cJSON *obj, const char *key)
{
	const char *s = s0__json_str(obj, key);
	int64_t t = 0;
	if (!s || s0__time_parse_rfc3339(s, &t) < 0)
		return 0;
	return t;
}

const char *s0__json_unknown_key(const cJSON *obj, const char *const *keys)
{
	const cJSON *it;
	if (!cJSON_IsObject(obj))
		return NULL;
	cJSON_ArrayForEach(it, obj)
	{
		size_t i = 0;
		while (keys[i] && strcmp(keys[i], it->string))
			i++;
		if (!keys[i])
			return it->string;
	}
	return NULL;
}

int s0__json_check_keys(const cJSON *obj, const char *const *keys, const char *path,
                        const char *reason, s0_error **err)
{
	const char *k = s0__json_unknown_key(obj, keys);
	if (!k)
		return S0_OK;
	return s0__error_set(err, S0_EINVAL, reason, "unknown field \"%s%s%.64s\"", path,
	                     *path ? "." : "", k);
}

char *s0__json_print(const cJSON *node)
{
	return node ? cJSON_PrintUnformatted(node) : NULL;
}

int s0__json_add_str(cJSON *obj, const char *key, const char *val)
{
	return cJSON_AddStringToObject(obj, key, val ? val : "") ? 0 : -1;
}

int s0__json_add_i64(cJSON *obj, const char *key, int64_t val)
{
	return cJSON_AddNumberToObject(obj, key, (double)val) ? 0 : -1;
}

int s0__json_add_bool(cJSON *obj, const char *key, bool val)
{
	return cJSON_AddBoolToObject(obj, key, val) ? 0 : -1;
}

int s0__json_add_time(cJSON *obj, const char *key, int64_t unix_ms, bool zero_time_for_unset)
{
	if (!unix_ms) {
		if (zero_time_for_unset)
			return s0__json_add_str(obj, key, "0001-01-01T00:00:00Z");
		return cJSON_AddNullToObject(obj, key) ? 0 : -1;
	}
	char buf[40];
	s0__time_format_rfc3339(unix_ms, buf, sizeof buf);
	return s0__json_add_str(obj, key, buf);
}

/* Length of the well-formed UTF-8 sequence that starts s[0] (a byte >= 0x80)
 * within avail bytes, 0 when it is not one (RFC 3629 §4: no overlong forms,
 * no surrogates, nothing past U+10FFFF, no truncated sequence). */
static size_t utf8_seq_len(const unsigned char *s, size_t avail)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xBF;
	size_t n;
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		lo = c == 0xE0 ? 0xA0 : 0x80;
		hi = c == 0xED ? 0x9F : 0xBF;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		lo = c == 0xF0 ? 0x90 : 0x80;
		hi = c == 0xF4 ? 0x8F : 0xBF;
	} else {
		return 0;
	}
	if (avail < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t k = 2; k < n; k++)
		if ((s[k] & 0xC0) != 0x80)
			return 0;
	return n;
}

char *s0__utf8_valid_copy(const char *s)
{
	size_t len = strlen(s), bad = 0;
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < len; i++) {
		size_t n = u[i] < 0x80 ? 1 : utf8_seq_len(u + i, len - i);
		if (!n)
			bad++;
		else
			i += n - 1;
	}
	char *out = malloc(len + bad * 2 + 1); /* each bad byte: 3 bytes of U+FFFD */
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		size_t n = u[i] < 0x80 ? 1 : utf8_seq_len(u + i, len - i);
		if (n) {
			memcpy(out + o, s + i, n);
			o += n;
			i += n;
		} else {
			memcpy(out + o, "\xEF\xBF\xBD", 3);
			o += 3;
			i++;
		}
	}
	out[o] = 0;
	return out;
}

/* The hostile-input checks cJSON does not make: nesting depth, NUL bytes
 * (raw, or escaped as \u0000, which cJSON would silently truncate at), raw
 * control characters inside strings (RFC 8259 §7) and text that is not
 * UTF-8 (RFC 8259 §8.1; cJSON copies such bytes through, and the answers
 * that echo a value would not be JSON). */
const char *s0__json_check(const char *s, size_t len, int max_depth)
{
	int depth = 0;
	bool in_str = false;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (!ch)
			return "NUL byte in JSON";
		if (ch >= 0x80) {
			size_t n = utf8_seq_len((const unsigned char *)s + i, len - i);
			if (!n)
				return "invalid UTF-8 in JSON";
			i += n - 1;
			continue;
		}
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

cJSON *s0__json_parse_arg(const char *text, const char *what, s0_error **err)
{
	const char *bad = text ? s0__json_check(text, strlen(text), S0__JSON_ARG_DEPTH_MAX) : NULL;
	if (bad) {
		s0__error_set(err, S0_EINVAL, "invalid_argument", "%s: %s", what, bad);
		return NULL;
	}
	cJSON *v = text ? cJSON_Parse(text) : NULL;
	if (!cJSON_IsObject(v)) {
		cJSON_Delete(v);
		s0__error_set(err, S0_EINVAL, "invalid_argument", "%s is not a JSON object", what);
		return NULL;
	}
	return v;
}
