#include "http_client.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct sink {
	char *data;
	size_t len;
} sink;

static size_t on_data(char *p, size_t sz, size_t n, void *ud)
{
	sink *s = ud;
	size_t add = sz * n;
	char *d = realloc(s->data, s->len + add + 1);
	if (!d)
		return 0;
	memcpy(d + s->len, p, add);
	s->data = d;
	s->len += add;
	d[s->len] = '\0';
	return add;
}

typedef struct src {
	const char *p;
	size_t left;
} src;

static size_t on_read(char *buf, size_t sz, size_t n, void *ud)
{
	src *s = ud;
	size_t k = sz * n < s->left ? sz * n : s->left;
	memcpy(buf, s->p, k);
	s->p += k;
	s->left -= k;
	return k;
}

int th_do(const th_req *q, th_resp *out)
{
	memset(out, 0, sizeof *out);
	CURL *c = curl_easy_init();
	if (!c)
		return -1;
	sink body = {0}, hdr = {0};
	src in = {q->body, q->body_len};
	struct curl_slist *hl = NULL;
	for (const char *const *h = q->headers; h && *h; h++)
		hl = curl_slist_append(hl, *h);
	if (q->chunked)
		hl = curl_slist_append(hl, "Transfer-Encoding: chunked");
	hl = curl_slist_append(hl, q->expect_continue ? "Expect: 100-continue" : "Expect:");
	curl_easy_setopt(c, CURLOPT_URL, q->url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, q->method ? q->method : "GET");
	if (q->method && !strcmp(q->method, "HEAD"))
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L); /* a HEAD answer has no body to wait for */
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &hdr);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, q->timeout_ms ? q->timeout_ms : 20000L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	if (q->unix_socket)
		curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, q->unix_socket);
	if (q->body) {
		curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(c, CURLOPT_READDATA, &in);
		if (!q->chunked)
			curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)q->body_len);
	}
	CURLcode rc = curl_easy_perform(c);
	out->curl_code = (int)rc;
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
	curl_easy_getinfo(c, CURLINFO_TOTAL_TIME, &out->seconds);
	out->body = body.data ? body.data : calloc(1, 1);
	out->body_len = body.len;
	out->headers = hdr.data ? hdr.data : calloc(1, 1);
	curl_slist_free_all(hl);
	curl_easy_cleanup(c);
	return rc == CURLE_OK ? 0 : -1;
}

void th_resp_free(th_resp *r)
{
	free(r->body);
	free(r->headers);
	memset(r, 0, sizeof *r);
}

char *th_header(const th_resp *r, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = r->headers; p && *p;) {
		const char *e = strstr(p, "\r\n");
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len > n && p[n] == ':' && !strncasecmp(p, name, n)) {
			const char *v = p + n + 1;
			while (*v == ' ')
				v++;
			return strndup(v, (size_t)(p + len - v));
		}
		p = e ? e + 2 : NULL;
	}
	return NULL;
}

char *th_url(int port, const char *path)
{
	char *u = NULL;
	if (asprintf(&u, "http://127.0.0.1:%d%s", port, path) < 0)
		return NULL;
	return u;
}

int th_simple(int port, const char *method, const char *path, const char *key,
              const char *json_body, th_resp *out)
{
	char auth[512];
	const char *hs[3] = {0};
	int n = 0;
	if (key) {
		snprintf(auth, sizeof auth, "Authorization: Bearer %s", key);
		hs[n++] = auth;
	}
	if (json_body)
		hs[n++] = "Content-Type: application/json";
	char *url = th_url(port, path);
	th_req q = {.method = method, .url = url, .headers = hs, .body = json_body,
	            .body_len = json_body ? strlen(json_body) : 0};
	int rc = th_do(&q, out);
	free(url);
	return rc;
}
