/* Percent-decoding, query parameters and Go-compatible scalar parsing. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "local/api/api_internal.h"

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

char *s0__pct_decode(const char *s, size_t n, bool plus_space, size_t *len_out)
{
	char *d = malloc(n + 1);
	if (!d)
		return NULL;
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		int hi, lo;
		if (s[i] == '%' && i + 2 < n &&
		    (hi = hexval(s[i + 1])) >= 0 && (lo = hexval(s[i + 2])) >= 0) {
			d[j++] = (char)(hi << 4 | lo);
			i += 2;
		} else {
			d[j++] = plus_space && s[i] == '+' ? ' ' : s[i];
		}
	}
	d[j] = '\0';
	*len_out = j;
	return d;
}

int s0__router_decode_path(const char *raw, char **out)
{
	size_t n = 0;
	char *d = s0__pct_decode(raw, strlen(raw), false, &n);
	if (!d)
		return -2;
	if (strlen(d) != n) {
		free(d);
		return -1;
	}
	*out = d;
	return 0;
}

/* Find key in the raw query; returns the raw value span (or NULL). */
static const char *find_key(const char *q, const char *key, size_t *vlen, bool *found,
                            bool *oom)
{
	size_t klen = strlen(key);
	for (const char *p = q; p && *p;) {
		const char *end = strchr(p, '&');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		size_t nlen = eq ? (size_t)(eq - p) : len, dlen = 0;
		char *name = s0__pct_decode(p, nlen, true, &dlen);
		if (!name) {
			*oom = true;
			return NULL;
		}
		bool match = dlen == klen && !memcmp(name, key, klen);
		free(name);
		if (match) {
			*found = true;
			*vlen = eq ? len - nlen - 1 : 0;
			return eq ? eq + 1 : p + len;
		}
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

bool s0__query_value(s0__rctx *c, const char *key, bool *present, char **out)
{
	*out = NULL;
	*present = false;
	size_t vlen = 0, dlen = 0;
	const char *v = find_key(c->req->query, key, &vlen, present, &c->oom);
	if (!*present)
		return !c->oom;
	char *d = s0__pct_decode(v, vlen, true, &dlen);
	if (!d) {
		c->oom = true;
		return false;
	}
	if (strlen(d) != dlen) {
		free(d);
		s0__reply_err(c, 400, "bad_request", "invalid request: %s contains a NUL byte", key);
		return false;
	}
	*out = d;
	return true;
}

int s0__parse_go_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
	static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
	for (size_t i = 0; i < 6; i++) {
		if (!strcmp(s, yes[i]) || !strcmp(s, no[i])) {
			*out = !strcmp(s, yes[i]);
			return 0;
		}
	}
	return -1;
}

int s0__parse_go_int(const char *s, int64_t *out)
{
	const char *p = s + (*s == '+' || *s == '-');
	if (!*p || strspn(p, "0123456789") != strlen(p))
		return -1;
	errno = 0;
	long long v = strtoll(s, NULL, 10);
	if (errno)
		return -1;
	*out = (int64_t)v;
	return 0;
}
