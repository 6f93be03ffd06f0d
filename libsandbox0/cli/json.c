/* JSON through cJSON: parse, build, print (see json.h). */
#include "json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_DEPTH 64

/* cJSON returns NULL when malloc fails; the CLI ends there, as xmalloc does. */
static cj *must(cj *v)
{
	if (!v)
		out_of_memory();
	return v;
}

/* ---- parsing ---- */

static bool too_deep(const cj *v, int depth)
{
	if (depth > MAX_DEPTH)
		return true;
	for (const cj *c = v->child; c; c = c->next)
		if (too_deep(c, depth + 1))
			return true;
	return false;
}

cj *cj_parse(const char *text, size_t len, const char **why)
{
	const char *end = NULL, *w = NULL;
	/* ParseWithLength accepts trailing text: take its end and check it */
	cj *v = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (!v) {
		w = "invalid JSON";
	} else {
		while (end < text + len && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r'))
			end++;
		if (end != text + len)
			w = "trailing characters";
		else if (too_deep(v, 0))
			w = "nested too deeply";
	}
	if (w) {
		cJSON_Delete(v);
		if (why)
			*why = w;
		return NULL;
	}
	return v;
}

void cj_free(cj *v)
{
	cJSON_Delete(v);
}

/* ---- building ---- */

cj *cj_null(void)
{
	return must(cJSON_CreateNull());
}

cj *cj_bool(bool b)
{
	return must(cJSON_CreateBool(b));
}

cj *cj_str(const char *s)
{
	return s ? must(cJSON_CreateString(s)) : cj_null();
}

cj *cj_int(int64_t v)
{
	return must(cJSON_CreateNumber((double)v));
}

cj *cj_num(double v)
{
	return must(cJSON_CreateNumber(v));
}

cj *cj_object(void)
{
	return must(cJSON_CreateObject());
}

cj *cj_array(void)
{
	return must(cJSON_CreateArray());
}

void cj_set(cj *obj, const char *key, cj *val)
{
	bool ok = cJSON_GetObjectItemCaseSensitive(obj, key)
	                  ? cJSON_ReplaceItemInObjectCaseSensitive(obj, key, val)
	                  : cJSON_AddItemToObject(obj, key, val);
	if (!ok)
		must(NULL);
}

void cj_push(cj *arr, cj *val)
{
	if (!cJSON_AddItemToArray(arr, val))
		must(NULL);
}

cj *cj_take(cj *obj, const char *key)
{
	return cJSON_IsObject(obj) ? cJSON_DetachItemFromObjectCaseSensitive(obj, key) : NULL;
}

const cj *cj_get(const cj *obj, const char *key)
{
	return cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

const char *cj_get_str(const cj *obj, const char *key)
{
	const cj *v = cj_get(obj, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

bool cj_is_null(const cj *v)
{
	return !v || cJSON_IsNull(v);
}

cj *cj_dup(const cj *v)
{
	return v ? must(cJSON_Duplicate(v, true)) : NULL;
}

/* ---- printing ---- */

const char *cj_num_text(const cj *v, char buf[32])
{
	double d = v->valuedouble;
	if (!isfinite(d))
		return "null";
	if (d > -9007199254740992.0 && d < 9007199254740992.0 && d == (double)(long long)d) {
		snprintf(buf, 32, "%lld", (long long)d);
		return buf;
	}
	snprintf(buf, 32, "%.15g", d);
	if (strtod(buf, NULL) != d)
		snprintf(buf, 32, "%.17g", d);
	return buf;
}

typedef struct sbuf {
	char *d;
	size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		while (b->n + n + 1 > b->cap)
			b->cap = b->cap ? b->cap * 2 : 256;
		b->d = xrealloc(b->d, b->cap);
	}
	memcpy(b->d + b->n, s, n);
	b->n += n;
	b->d[b->n] = 0;
}

static void sb_puts(sbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

/* Length of a valid UTF-8 sequence at p (1..4), 0 if invalid. */
static size_t utf8_len(const unsigned char *p, size_t left)
{
	unsigned char c = p[0];
	size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
	           (c & 0xf8) == 0xf0 ? 4 : 0;
	if (!n || n > left || (n == 2 && c < 0xc2))
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* Quote like Go's encoding/json with HTML escaping (the official CLI's encoder). */
static void put_quoted(sbuf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t len = s ? strlen(s) : 0;
	sb_put(b, "\"", 1);
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < len;) {
		unsigned char c = p[i];
		char esc[8];
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			sb_put(b, esc, 2);
			i++;
		} else if (c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f') {
			esc[0] = '\\';
			esc[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : c == '\b' ? 'b' : 'f';
			sb_put(b, esc, 2);
			i++;
		} else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			sb_put(b, esc, 6);
			i++;
		} else if (c < 0x80) {
			sb_put(b, (const char *)p + i, 1);
			i++;
		} else {
			size_t n = utf8_len(p + i, len - i);
			if (!n) {
				sb_puts(b, "\\ufffd");
				i++;
			} else if (n == 3 && c == 0xe2 && p[i + 1] == 0x80 &&
			           (p[i + 2] == 0xa8 || p[i + 2] == 0xa9)) {
				sb_puts(b, p[i + 2] == 0xa8 ? "\\u2028" : "\\u2029");
				i += 3;
			} else {
				sb_put(b, (const char *)p + i, n);
				i += n;
			}
		}
	}
	sb_put(b, "\"", 1);
}

static void indent(sbuf *b, int level)
{
	for (int i = 0; i < level; i++)
		sb_put(b, "  ", 2);
}

static void emit(sbuf *b, const cj *v, int level, bool pretty)
{
	char num[32];
	switch (v->type & 0xff) {
	case cJSON_NULL:
		sb_puts(b, "null");
		return;
	case cJSON_False:
		sb_puts(b, "false");
		return;
	case cJSON_True:
		sb_puts(b, "true");
		return;
	case cJSON_Number:
		sb_puts(b, cj_num_text(v, num));
		return;
	case cJSON_String:
		put_quoted(b, v->valuestring);
		return;
	case cJSON_Raw:
		sb_puts(b, v->valuestring ? v->valuestring : "null");
		return;
	case cJSON_Array:
	case cJSON_Object:
		break;
	default:
		sb_puts(b, "null");
		return;
	}
	bool obj = cJSON_IsObject(v);
	if (!v->child) {
		sb_puts(b, obj ? "{}" : "[]");
		return;
	}
	sb_puts(b, obj ? "{" : "[");
	for (const cj *c = v->child; c; c = c->next) {
		if (c != v->child)
			sb_puts(b, ",");
		if (pretty) {
			sb_puts(b, "\n");
			indent(b, level + 1);
		}
		if (obj) {
			put_quoted(b, c->string);
			sb_puts(b, pretty ? ": " : ":");
		}
		emit(b, c, level + 1, pretty);
	}
	if (pretty) {
		sb_puts(b, "\n");
		indent(b, level);
	}
	sb_puts(b, obj ? "}" : "]");
}

char *cj_pretty(const cj *v)
{
	sbuf b = {0};
	emit(&b, v, 0, true);
	sb_puts(&b, "\n");
	return b.d;
}

char *cj_compact(const cj *v)
{
	sbuf b = {0};
	emit(&b, v, 0, false);
	if (!b.d)
		sb_puts(&b, "");
	return b.d;
}
