/* A small ordered JSON tree: parse, build, print (see json.h). */
#include "json.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_DEPTH 64

/* ---- building ---- */

static cj *node(cj_type t)
{
	cj *v = xmalloc(sizeof *v);
	memset(v, 0, sizeof *v);
	v->type = t;
	return v;
}

cj *cj_null(void)
{
	return node(CJ_NULL);
}

cj *cj_bool(bool b)
{
	cj *v = node(CJ_BOOL);
	v->b = b;
	return v;
}

cj *cj_str(const char *s)
{
	if (!s)
		return cj_null();
	cj *v = node(CJ_STRING);
	v->s = xstrdup(s);
	v->len = strlen(s);
	return v;
}

cj *cj_int(int64_t i)
{
	cj *v = node(CJ_NUMBER);
	v->s = xasprintf("%lld", (long long)i);
	v->len = strlen(v->s);
	return v;
}

cj *cj_object(void)
{
	return node(CJ_OBJECT);
}

cj *cj_array(void)
{
	return node(CJ_ARRAY);
}

void cj_free(cj *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		if (v->keys)
			free(v->keys[i]);
		cj_free(v->items[i]);
	}
	free(v->keys);
	free(v->items);
	free(v->s);
	free(v);
}

static void grow(cj *v)
{
	if (v->n < v->cap)
		return;
	v->cap = v->cap ? v->cap * 2 : 8;
	v->items = xrealloc(v->items, v->cap * sizeof *v->items);
	if (v->type == CJ_OBJECT)
		v->keys = xrealloc(v->keys, v->cap * sizeof *v->keys);
}

void cj_set(cj *obj, const char *key, cj *val)
{
	for (size_t i = 0; i < obj->n; i++)
		if (!strcmp(obj->keys[i], key)) {
			cj_free(obj->items[i]);
			obj->items[i] = val;
			return;
		}
	grow(obj);
	obj->keys[obj->n] = xstrdup(key);
	obj->items[obj->n++] = val;
}

void cj_push(cj *arr, cj *val)
{
	grow(arr);
	arr->items[arr->n++] = val;
}

cj *cj_take(cj *obj, const char *key)
{
	if (!obj || obj->type != CJ_OBJECT)
		return NULL;
	for (size_t i = 0; i < obj->n; i++)
		if (!strcmp(obj->keys[i], key)) {
			cj *v = obj->items[i];
			free(obj->keys[i]);
			memmove(obj->keys + i, obj->keys + i + 1, (obj->n - i - 1) * sizeof *obj->keys);
			memmove(obj->items + i, obj->items + i + 1,
			        (obj->n - i - 1) * sizeof *obj->items);
			obj->n--;
			return v;
		}
	return NULL;
}

const cj *cj_get(const cj *obj, const char *key)
{
	if (!obj || obj->type != CJ_OBJECT)
		return NULL;
	for (size_t i = 0; i < obj->n; i++)
		if (!strcmp(obj->keys[i], key))
			return obj->items[i];
	return NULL;
}

const char *cj_get_str(const cj *obj, const char *key)
{
	const cj *v = cj_get(obj, key);
	return v && v->type == CJ_STRING ? v->s : NULL;
}

bool cj_is_null(const cj *v)
{
	return !v || v->type == CJ_NULL;
}

cj *cj_dup(const cj *v)
{
	if (!v)
		return NULL;
	cj *d = node(v->type);
	d->b = v->b;
	if (v->s) {
		d->s = xmalloc(v->len + 1);
		memcpy(d->s, v->s, v->len + 1);
		d->len = v->len;
	}
	for (size_t i = 0; i < v->n; i++) {
		if (v->type == CJ_OBJECT)
			cj_set(d, v->keys[i], cj_dup(v->items[i]));
		else
			cj_push(d, cj_dup(v->items[i]));
	}
	return d;
}

/* ---- parsing ---- */

typedef struct parser {
	const char *p, *end;
	const char *why;
} parser;

static void skip_ws(parser *ps)
{
	while (ps->p < ps->end &&
	       (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static int hex4(const char *p, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char ch = p[i];
		v <<= 4;
		if (ch >= '0' && ch <= '9')
			v |= (unsigned)(ch - '0');
		else if (ch >= 'a' && ch <= 'f')
			v |= (unsigned)(ch - 'a' + 10);
		else if (ch >= 'A' && ch <= 'F')
			v |= (unsigned)(ch - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A string at ps->p (on the opening quote); the decoded bytes go to *out. */
static int parse_string(parser *ps, char **out, size_t *len_out)
{
	ps->p++;
	/* decoded text is never longer than the escaped text */
	const char *start = ps->p;
	while (ps->p < ps->end && *ps->p != '"') {
		if (*ps->p == '\\')
			ps->p++;
		ps->p++;
	}
	if (ps->p >= ps->end) {
		ps->why = "unterminated string";
		return -1;
	}
	const char *stop = ps->p++;
	char *o = xmalloc((size_t)(stop - start) + 1);
	size_t n = 0;
	for (const char *q = start; q < stop; q++) {
		if ((unsigned char)*q < 0x20) {
			free(o);
			ps->why = "control character in string";
			return -1;
		}
		if (*q != '\\') {
			o[n++] = *q;
			continue;
		}
		q++;
		switch (*q) {
		case '"': o[n++] = '"'; break;
		case '\\': o[n++] = '\\'; break;
		case '/': o[n++] = '/'; break;
		case 'b': o[n++] = '\b'; break;
		case 'f': o[n++] = '\f'; break;
		case 'n': o[n++] = '\n'; break;
		case 'r': o[n++] = '\r'; break;
		case 't': o[n++] = '\t'; break;
		case 'u': {
			unsigned cp, lo;
			if (stop - q < 5 || hex4(q + 1, &cp) < 0)
				goto bad;
			q += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && stop - q >= 7 && q[1] == '\\' &&
			    q[2] == 'u' && hex4(q + 3, &lo) == 0 && lo >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				q += 6;
			} else if (cp >= 0xd800 && cp < 0xe000) {
				cp = 0xfffd;
			}
			n += put_utf8(o + n, cp);
			break;
		}
		default:
			goto bad;
		}
	}
	o[n] = 0;
	*out = o;
	*len_out = n;
	return 0;
bad:
	free(o);
	ps->why = "bad escape in string";
	return -1;
}

static cj *parse_value(parser *ps, int depth);

static cj *parse_container(parser *ps, int depth, bool object)
{
	cj *v = node(object ? CJ_OBJECT : CJ_ARRAY);
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == (object ? '}' : ']')) {
		ps->p++;
		return v;
	}
	for (;;) {
		char *key = NULL;
		size_t klen;
		skip_ws(ps);
		if (object) {
			if (ps->p >= ps->end || *ps->p != '"' || parse_string(ps, &key, &klen) < 0) {
				if (!ps->why)
					ps->why = "expected a key";
				goto fail;
			}
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				free(key);
				ps->why = "expected ':'";
				goto fail;
			}
			ps->p++;
		}
		cj *item = parse_value(ps, depth + 1);
		if (!item) {
			free(key);
			goto fail;
		}
		if (object) {
			cj_set(v, key, item);
			free(key);
		} else {
			cj_push(v, item);
		}
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == (object ? '}' : ']')) {
			ps->p++;
			return v;
		}
		ps->why = object ? "expected ',' or '}'" : "expected ',' or ']'";
		goto fail;
	}
fail:
	cj_free(v);
	return NULL;
}

static cj *parse_value(parser *ps, int depth)
{
	if (depth > MAX_DEPTH) {
		ps->why = "nested too deeply";
		return NULL;
	}
	skip_ws(ps);
	if (ps->p >= ps->end) {
		ps->why = "unexpected end of input";
		return NULL;
	}
	char ch = *ps->p;
	if (ch == '{' || ch == '[')
		return parse_container(ps, depth, ch == '{');
	if (ch == '"') {
		cj *v = node(CJ_STRING);
		if (parse_string(ps, &v->s, &v->len) < 0) {
			free(v);
			return NULL;
		}
		return v;
	}
	static const struct { const char *word; cj_type t; bool b; } words[] = {
		{"true", CJ_BOOL, true}, {"false", CJ_BOOL, false}, {"null", CJ_NULL, false}};
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
		size_t wl = strlen(words[i].word);
		if ((size_t)(ps->end - ps->p) >= wl && !memcmp(ps->p, words[i].word, wl)) {
			ps->p += wl;
			cj *v = node(words[i].t);
			v->b = words[i].b;
			return v;
		}
	}
	const char *s = ps->p;
	if (ps->p < ps->end && *ps->p == '-')
		ps->p++;
	size_t digits = 0;
	while (ps->p < ps->end && strchr("0123456789.eE+-", *ps->p)) {
		ps->p++;
		digits++;
	}
	if (!digits) {
		ps->why = "unexpected character";
		return NULL;
	}
	cj *v = node(CJ_NUMBER);
	v->len = (size_t)(ps->p - s);
	v->s = xmalloc(v->len + 1);
	memcpy(v->s, s, v->len);
	v->s[v->len] = 0;
	return v;
}

cj *cj_parse(const char *text, size_t len, const char **why)
{
	parser ps = {text, text + len, NULL};
	cj *v = parse_value(&ps, 0);
	if (v) {
		skip_ws(&ps);
		if (ps.p != ps.end) {
			cj_free(v);
			v = NULL;
			ps.why = "trailing characters";
		}
	}
	if (!v && why)
		*why = ps.why ? ps.why : "invalid JSON";
	return v;
}

/* ---- printing ---- */

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
static void put_quoted(sbuf *b, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
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
	switch (v->type) {
	case CJ_NULL:
		sb_puts(b, "null");
		return;
	case CJ_BOOL:
		sb_puts(b, v->b ? "true" : "false");
		return;
	case CJ_NUMBER:
		sb_put(b, v->s, v->len);
		return;
	case CJ_STRING:
		put_quoted(b, v->s, v->len);
		return;
	case CJ_ARRAY:
	case CJ_OBJECT:
		break;
	}
	bool obj = v->type == CJ_OBJECT;
	if (!v->n) {
		sb_puts(b, obj ? "{}" : "[]");
		return;
	}
	sb_puts(b, obj ? "{" : "[");
	for (size_t i = 0; i < v->n; i++) {
		if (i)
			sb_puts(b, ",");
		if (pretty) {
			sb_puts(b, "\n");
			indent(b, level + 1);
		}
		if (obj) {
			put_quoted(b, v->keys[i], strlen(v->keys[i]));
			sb_puts(b, pretty ? ": " : ":");
		}
		emit(b, v->items[i], level + 1, pretty);
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
