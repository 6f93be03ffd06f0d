/* Header lists and query strings for the shared HTTP exchange shape. */
#include "common/http.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/internal.h"

int s0__headers_add(s0__headers *h, const char *name, const char *value)
{
	if (h->len == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 8;
		s0__header *items = realloc(h->items, cap * sizeof *items);
		if (!items)
			return -1;
		h->items = items;
		h->cap = cap;
	}
	char *n = s0__strdup(name), *v = s0__strdup(value ? value : "");
	if (!n || !v) {
		free(n);
		free(v);
		return -1;
	}
	h->items[h->len].name = n;
	h->items[h->len].value = v;
	h->len++;
	return 0;
}

int s0__headers_copy(s0__headers *dst, const s0__headers *src, bool (*skip)(const char *name))
{
	for (size_t i = 0; i < src->len; i++)
		if ((!skip || !skip(src->items[i].name)) &&
		    s0__headers_add(dst, src->items[i].name, src->items[i].value) < 0)
			return -1;
	return 0;
}

const char *s0__headers_get(const s0__headers *h, const char *name)
{
	for (size_t i = 0; i < h->len; i++)
		if (!strcasecmp(h->items[i].name, name))
			return h->items[i].value;
	return NULL;
}

void s0__headers_free(s0__headers *h)
{
	for (size_t i = 0; i < h->len; i++) {
		free(h->items[i].name);
		free(h->items[i].value);
	}
	free(h->items);
	h->items = NULL;
	h->len = h->cap = 0;
}

void s0__http_response_free(s0__http_response *r)
{
	s0__headers_free(&r->headers);
	s0__buf_free(&r->body);
	if (r->stream)
		r->stream->free(r->stream);
	r->stream = NULL;
}

static char *unescape(const char *s, size_t n)
{
	/* '+' means space in query strings; curl does not do that part */
	char *tmp = s0__strndup(s, n);
	if (!tmp)
		return NULL;
	for (char *p = tmp; *p; p++)
		if (*p == '+')
			*p = ' ';
	int outlen = 0;
	char *u = curl_easy_unescape(NULL, tmp, (int)strlen(tmp), &outlen);
	free(tmp);
	if (!u)
		return NULL;
	char *d = s0__strndup(u, (size_t)outlen);
	curl_free(u);
	return d;
}

char *s0__query_get(const char *query, const char *key, bool *present)
{
	if (present)
		*present = false;
	if (!query)
		return NULL;
	size_t klen = strlen(key);
	const char *p = query;
	while (*p) {
		const char *end = strchr(p, '&');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		size_t nlen = eq ? (size_t)(eq - p) : len;
		char *name = unescape(p, nlen);
		bool match = name && strlen(name) == klen && !memcmp(name, key, klen);
		free(name);
		if (match) {
			if (present)
				*present = true;
			return eq ? unescape(eq + 1, len - nlen - 1) : s0__strdup("");
		}
		if (!end)
			break;
		p = end + 1;
	}
	return NULL;
}

char *s0__url_escape(const char *s)
{
	char *e = curl_easy_escape(NULL, s, (int)strlen(s));
	if (!e)
		return NULL;
	char *d = s0__strdup(e);
	curl_free(e);
	return d;
}

int s0__query_add(s0__buf *q, const char *key, const char *value)
{
	char *k = s0__url_escape(key), *v = s0__url_escape(value ? value : "");
	int rc = -1;
	if (k && v)
		rc = s0__buf_printf(q, "%s%s=%s", q->len ? "&" : "", k, v);
	free(k);
	free(v);
	return rc;
}
