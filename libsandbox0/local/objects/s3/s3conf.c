/* Parsing an S3 store URL (s3conf.h) with curl's URL parser. */
#include "local/objects/s3/s3conf.h"

#include <curl/curl.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

bool s0__s3conf_is_url(const char *name)
{
	return name && !strncmp(name, S0__S3_SCHEME, strlen(S0__S3_SCHEME));
}

void s0__s3conf_clear(s0__s3conf *c)
{
	free(c->endpoint);
	free(c->bucket);
	free(c->prefix);
	free(c->region);
	free(c->access_key);
	if (c->secret_key) {
		sodium_memzero(c->secret_key, strlen(c->secret_key));
		free(c->secret_key);
	}
	memset(c, 0, sizeof *c);
}

static int bad(s0_error **err, const char *what)
{
	return s0__error_set(err, S0_EINVAL, "object_store_url",
	                     "object store URL: %s (form: s3://BUCKET[/PREFIX]?endpoint=http://HOST:"
	                     "PORT[&region=R][&cache_mb=N][&gc_grace_s=S])",
	                     what);
}

/* Whether s is a plausible bucket name or prefix (no characters that need
 * escaping in a path or a signed query). */
static bool plain(const char *s, bool slash)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '.' || *s == '_' || *s == '-' || (slash && *s == '/')))
			return false;
	return true;
}

/* One "name=value" of the query into c. */
static int query_param(s0__s3conf *c, const char *kv, s0_error **err)
{
	const char *eq = strchr(kv, '=');
	if (!eq)
		return bad(err, "a query parameter has no value");
	size_t nlen = (size_t)(eq - kv);
	int vlen;
	char *v = curl_easy_unescape(NULL, eq + 1, 0, &vlen);
	if (!v)
		return s0__error_nomem(err);
	char *val = s0__strdup(v);
	curl_free(v);
	if (!val)
		return s0__error_nomem(err);
	int rc = S0_OK;
	if (nlen == 8 && !strncmp(kv, "endpoint", 8)) {
		size_t l = strlen(val);
		while (l && val[l - 1] == '/')
			val[--l] = '\0';
		if (strncmp(val, "http://", 7) && strncmp(val, "https://", 8))
			rc = bad(err, "endpoint must start with http:// or https://");
		free(c->endpoint);
		c->endpoint = val;
	} else if (nlen == 6 && !strncmp(kv, "region", 6)) {
		if (!*val || !plain(val, false))
			rc = bad(err, "region must be letters, digits, '-', '_' or '.'");
		free(c->region);
		c->region = val;
	} else if (nlen == 8 && !strncmp(kv, "cache_mb", 8)) {
		char *end;
		unsigned long long mb = strtoull(val, &end, 10);
		if (!*val || *end || mb == 0 || mb > (1ULL << 30))
			rc = bad(err, "cache_mb must be a positive number of MiB");
		c->cache_bytes = mb << 20;
		free(val);
	} else if (nlen == 10 && !strncmp(kv, "gc_grace_s", 10)) {
		char *end;
		unsigned long long sec = strtoull(val, &end, 10);
		if (!*val || *end || sec > 86400ull * 365)
			rc = bad(err, "gc_grace_s must be a number of seconds (at most a year)");
		c->gc_grace_ms = sec * 1000;
		free(val);
	} else {
		free(val);
		rc = s0__error_set(err, S0_EINVAL, "object_store_url",
		                   "object store URL: unknown parameter \"%.*s\" (known: endpoint, "
		                   "region, cache_mb, gc_grace_s)",
		                   (int)nlen, kv);
	}
	return rc;
}

static int parse_query(s0__s3conf *c, const char *q, s0_error **err)
{
	char *copy = s0__strdup(q ? q : "");
	if (!copy)
		return s0__error_nomem(err);
	int rc = S0_OK;
	char *save = NULL;
	for (char *kv = strtok_r(copy, "&", &save); rc == S0_OK && kv;
	     kv = strtok_r(NULL, "&", &save))
		rc = query_param(c, kv, err);
	free(copy);
	return rc;
}

/* Bucket and prefix from the URL's host and path. */
static int parse_location(s0__s3conf *c, CURLU *u, s0_error **err)
{
	char *host = NULL, *path = NULL;
	int rc = S0_OK;
	if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !host || !*host)
		rc = bad(err, "no bucket");
	else if (!plain(host, false))
		rc = bad(err, "the bucket name has characters other than letters, digits, '.', '_', '-'");
	if (rc == S0_OK && curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK)
		rc = bad(err, "unreadable path");
	const char *p = path ? path : "";
	while (*p == '/')
		p++;
	if (rc == S0_OK && !plain(p, true))
		rc = bad(err, "the prefix has characters other than letters, digits, '.', '_', '-', '/'");
	if (rc == S0_OK) {
		size_t l = strlen(p);
		while (l && p[l - 1] == '/')
			l--;
		c->bucket = s0__strdup(host);
		c->prefix = l ? s0__asprintf("%.*s/", (int)l, p) : s0__strdup("");
		if (!c->bucket || !c->prefix)
			rc = s0__error_nomem(err);
	}
	curl_free(host);
	curl_free(path);
	return rc;
}

static int credentials(s0__s3conf *c, s0_error **err)
{
	const char *ak = getenv("AWS_ACCESS_KEY_ID"), *sk = getenv("AWS_SECRET_ACCESS_KEY");
	if (!ak || !*ak || !sk || !*sk)
		return s0__error_set(err, S0_EINVAL, "object_store_credentials",
		                     "an S3 object store needs AWS_ACCESS_KEY_ID and "
		                     "AWS_SECRET_ACCESS_KEY in the environment (%s is unset)",
		                     !ak || !*ak ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY");
	c->access_key = s0__strdup(ak);
	c->secret_key = s0__strdup(sk);
	return c->access_key && c->secret_key ? S0_OK : s0__error_nomem(err);
}

int s0__s3conf_parse(const char *url, s0__s3conf *out, s0_error **err)
{
	memset(out, 0, sizeof *out);
	out->gc_grace_ms = (uint64_t)600 * 1000; /* the default; gc_grace_s= replaces it */
	if (!s0__s3conf_is_url(url))
		return bad(err, "it must start with s3://");
	CURLU *u = curl_url();
	if (!u)
		return s0__error_nomem(err);
	int rc = S0_OK;
	if (curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK)
		rc = bad(err, "not a URL");
	if (rc == S0_OK)
		rc = parse_location(out, u, err);
	char *q = NULL;
	if (rc == S0_OK) {
		CURLUcode qc = curl_url_get(u, CURLUPART_QUERY, &q, 0);
		if (qc != CURLUE_OK && qc != CURLUE_NO_QUERY)
			rc = bad(err, "unreadable query");
	}
	if (rc == S0_OK)
		rc = parse_query(out, q, err);
	curl_free(q);
	curl_url_cleanup(u);
	if (rc == S0_OK && !out->endpoint)
		rc = bad(err, "endpoint=http://HOST:PORT is required");
	if (rc == S0_OK && !out->region && !(out->region = s0__strdup("us-east-1")))
		rc = s0__error_nomem(err);
	if (rc == S0_OK && !out->cache_bytes)
		out->cache_bytes = (uint64_t)512 << 20;
	if (rc == S0_OK)
		rc = credentials(out, err);
	return rc;
}
