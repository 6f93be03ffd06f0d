/* S3 requests over libcurl (s3http.h). */
#include "local/objects/s3/s3http.h"

#include <curl/curl.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "local/objects/s3/s3xml.h"

#define MAX_PARALLEL 32
#define ATTEMPTS 6
#define BACKOFF_FIRST_MS 25

struct s0__s3 {
	s0__s3conf conf;
	char *sigv4; /* "aws:amz:REGION:s3" */
	CURLSH *share;
	pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
};

/* One transfer of a call. */
typedef struct xfer {
	s0__s3req *rq;
	CURL *h;
	struct curl_slist *hdrs;
	char *url;
	s0__buf scratch; /* the body when rq->out is NULL */
	CURLcode cc;
	char errbuf[CURL_ERROR_SIZE];
	bool retry; /* the last attempt failed transiently */
} xfer;

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access a, void *u)
{
	(void)h;
	(void)a;
	s0__s3 *s = u;
	pthread_mutex_lock(&s->locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *u)
{
	(void)h;
	s0__s3 *s = u;
	pthread_mutex_unlock(&s->locks[data]);
}

static char *dup_or_null(const char *v, bool *ok)
{
	char *d = v ? s0__strdup(v) : NULL;
	if (v && !d)
		*ok = false;
	return d;
}

int s0__s3_new(const s0__s3conf *conf, s0__s3 **out, s0_error **err)
{
	s0__s3 *s = calloc(1, sizeof *s);
	if (!s)
		return s0__error_nomem(err);
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&s->locks[i], NULL);
	bool ok = true;
	s->conf.endpoint = dup_or_null(conf->endpoint, &ok);
	s->conf.bucket = dup_or_null(conf->bucket, &ok);
	s->conf.prefix = dup_or_null(conf->prefix, &ok);
	s->conf.region = dup_or_null(conf->region, &ok);
	s->conf.access_key = dup_or_null(conf->access_key, &ok);
	s->conf.secret_key = dup_or_null(conf->secret_key, &ok);
	s->conf.cache_bytes = conf->cache_bytes;
	s->sigv4 = s0__asprintf("aws:amz:%s:s3", conf->region);
	s->share = curl_share_init();
	if (!ok || !s->sigv4 || !s->share) {
		s0__s3_free(s);
		return s0__error_nomem(err);
	}
	curl_share_setopt(s->share, CURLSHOPT_LOCKFUNC, share_lock);
	curl_share_setopt(s->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
	curl_share_setopt(s->share, CURLSHOPT_USERDATA, s);
	curl_share_setopt(s->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
	curl_share_setopt(s->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
	*out = s;
	return S0_OK;
}

void s0__s3_free(s0__s3 *s)
{
	if (!s)
		return;
	if (s->share)
		curl_share_cleanup(s->share);
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_destroy(&s->locks[i]);
	s0__s3conf_clear(&s->conf);
	free(s->sigv4);
	free(s);
}

const char *s0__s3_endpoint(const s0__s3 *s)
{
	return s->conf.endpoint;
}

const char *s0__s3_prefix(const s0__s3 *s)
{
	return s->conf.prefix;
}

const char *s0__s3_bucket(const s0__s3 *s)
{
	return s->conf.bucket;
}

static size_t on_body(char *p, size_t size, size_t n, void *u)
{
	xfer *x = u;
	s0__buf *b = x->rq->out ? x->rq->out : &x->scratch;
	return s0__buf_put(b, p, size * n) == 0 ? size * n : 0;
}

static s0__buf *body_of(xfer *x)
{
	return x->rq->out ? x->rq->out : &x->scratch;
}

/* Make x's easy handle for one attempt. */
static int setup(s0__s3 *s, xfer *x, s0_error **err)
{
	s0__s3req *rq = x->rq;
	if (!x->url) {
		x->url = rq->key ? s0__asprintf("%s/%s/%s%s%s%s", s->conf.endpoint, s->conf.bucket,
		                                s->conf.prefix, rq->key, rq->query ? "?" : "",
		                                rq->query ? rq->query : "")
		                 : s0__asprintf("%s/%s%s%s", s->conf.endpoint, s->conf.bucket,
		                                rq->query ? "?" : "", rq->query ? rq->query : "");
		if (!x->url)
			return s0__error_nomem(err);
	}
	if (!x->h && !(x->h = curl_easy_init()))
		return s0__error_nomem(err);
	/* Only headers that are sent: this libcurl (7.88) signs a header given
	 * empty to remove it ("Content-Type:") although it never sends it, and
	 * the endpoint then refuses the signature. A PUT names its body's
	 * SHA-256 in x-amz-content-sha256, which S3 requires and libcurl then
	 * signs as the payload hash (it does not send the header itself), or
	 * UNSIGNED-PAYLOAD: hashing a pack costs both ends a pass over its
	 * bytes, and every object in it is verified on read anyway. */
	if (!x->hdrs && !strcmp(rq->method, "PUT")) {
		unsigned char sum[crypto_hash_sha256_BYTES];
		char hex[2 * crypto_hash_sha256_BYTES + 1] = "UNSIGNED-PAYLOAD", line[128];
		if (!rq->unsigned_body) {
			crypto_hash_sha256(sum, rq->body ? rq->body : (const void *)"", rq->len);
			sodium_bin2hex(hex, sizeof hex, sum, sizeof sum);
		}
		snprintf(line, sizeof line, "x-amz-content-sha256: %s", hex);
		struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/octet-stream");
		struct curl_slist *h2 = h ? curl_slist_append(h, line) : NULL;
		if (!h2) {
			curl_slist_free_all(h);
			return s0__error_nomem(err);
		}
		x->hdrs = h2;
	}
	CURL *h = x->h;
	curl_easy_reset(h);
	s0__buf_reset(body_of(x));
	rq->status = 0;
	rq->code[0] = '\0';
	x->errbuf[0] = '\0';
	curl_easy_setopt(h, CURLOPT_URL, x->url);
	curl_easy_setopt(h, CURLOPT_SHARE, s->share);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_AWS_SIGV4, s->sigv4);
	curl_easy_setopt(h, CURLOPT_USERNAME, s->conf.access_key);
	curl_easy_setopt(h, CURLOPT_PASSWORD, s->conf.secret_key);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, x->hdrs);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 2000L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 120000L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, x->errbuf);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(h, CURLOPT_PRIVATE, x);
	if (!strcmp(rq->method, "HEAD")) {
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	} else if (!strcmp(rq->method, "PUT")) {
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
		/* libcurl sends "Expect: 100-continue" with larger bodies and waits
		 * up to a second for the answer; the header cannot be removed (see
		 * above), so do not wait for it */
		curl_easy_setopt(h, CURLOPT_EXPECT_100_TIMEOUT_MS, 0L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->len);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body ? rq->body : "");
	} else if (strcmp(rq->method, "GET")) {
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
	} else if (rq->range) {
		curl_easy_setopt(h, CURLOPT_RANGE, rq->range);
	}
	return S0_OK;
}

/* Record the outcome of x's attempt. */
static void finish(xfer *x, CURLcode cc)
{
	x->cc = cc;
	x->rq->length = -1;
	if (cc == CURLE_OK) {
		curl_off_t cl = -1;
		curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &x->rq->status);
		if (curl_easy_getinfo(x->h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) == CURLE_OK)
			x->rq->length = (int64_t)cl;
	}
	long st = x->rq->status;
	x->retry = cc != CURLE_OK || st >= 500 || st == 429;
	if (cc == CURLE_OK && (st < 200 || st > 299)) {
		s0__buf *b = body_of(x);
		s0__s3xml_error_code(b->data, b->len, x->rq->code, sizeof x->rq->code);
	}
}

/* One attempt of the transfers flagged in todo, MAX_PARALLEL at a time. */
static int attempt(s0__s3 *s, xfer *xs, const bool *todo, size_t n, s0_error **err)
{
	CURLM *m = curl_multi_init();
	if (!m)
		return s0__error_nomem(err);
	size_t next = 0, running_n = 0;
	int rc = S0_OK;
	for (;;) {
		while (rc == S0_OK && running_n < MAX_PARALLEL && next < n) {
			size_t i = next++;
			if (!todo[i])
				continue;
			rc = setup(s, &xs[i], err);
			if (rc == S0_OK && curl_multi_add_handle(m, xs[i].h) != CURLM_OK)
				rc = s0__error_nomem(err);
			if (rc == S0_OK)
				running_n++;
		}
		if (running_n == 0)
			break;
		int still;
		curl_multi_perform(m, &still);
		CURLMsg *msg;
		int left;
		while ((msg = curl_multi_info_read(m, &left))) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			xfer *x;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
			finish(x, msg->data.result);
			curl_multi_remove_handle(m, msg->easy_handle);
			running_n--;
		}
		if (running_n && still)
			curl_multi_poll(m, NULL, 0, 1000, NULL);
		if (rc < 0 && running_n == 0)
			break;
	}
	curl_multi_cleanup(m);
	return rc;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

int s0__s3_run(s0__s3 *s, s0__s3req *rq, size_t n, s0_error **err)
{
	if (!n)
		return S0_OK;
	xfer *xs = calloc(n, sizeof *xs);
	bool *todo = calloc(n, sizeof *todo);
	if (!xs || !todo) {
		free(xs);
		free(todo);
		return s0__error_nomem(err);
	}
	for (size_t i = 0; i < n; i++) {
		xs[i].rq = &rq[i];
		todo[i] = true;
	}
	int rc = S0_OK;
	long backoff = BACKOFF_FIRST_MS;
	const xfer *failed = NULL;
	for (int a = 0; rc == S0_OK && a < ATTEMPTS; a++) {
		if (a) {
			sleep_ms(backoff);
			backoff *= 2;
		}
		rc = attempt(s, xs, todo, n, err);
		failed = NULL;
		for (size_t i = 0; i < n; i++) {
			todo[i] = todo[i] && xs[i].retry;
			if (todo[i] && !failed)
				failed = &xs[i];
		}
		if (!failed)
			break;
	}
	if (rc == S0_OK && failed) {
		if (failed->cc != CURLE_OK)
			rc = s0__error_set(err, S0_EUNAVAILABLE, "object_store",
			                   "S3 endpoint %s is unreachable after %d attempts: %s",
			                   s->conf.endpoint, ATTEMPTS,
			                   failed->errbuf[0] ? failed->errbuf
			                                     : curl_easy_strerror(failed->cc));
		else
			rc = s0__error_set(err, S0_EUNAVAILABLE, "object_store",
			                   "S3 endpoint %s answered HTTP %ld%s%s after %d attempts",
			                   s->conf.endpoint, failed->rq->status,
			                   failed->rq->code[0] ? " " : "", failed->rq->code, ATTEMPTS);
	}
	for (size_t i = 0; i < n; i++) {
		if (xs[i].h)
			curl_easy_cleanup(xs[i].h);
		curl_slist_free_all(xs[i].hdrs);
		free(xs[i].url);
		s0__buf_free(&xs[i].scratch);
	}
	free(xs);
	free(todo);
	return rc;
}

int s0__s3_check(const s0__s3 *s, const s0__s3req *rq, s0_error **err)
{
	long st = rq->status;
	if (st >= 200 && st <= 299)
		return S0_OK;
	const char *what = rq->key ? rq->key : "(bucket)";
	if (st == 404)
		return s0__error_set(err, S0_ENOTFOUND, "object_missing", "%s %s: not stored in bucket %s",
		                     rq->method, what, s->conf.bucket);
	if (st == 401 || st == 403)
		return s0__error_set(err, S0_EAUTH, "object_store_auth",
		                     "S3 endpoint %s refused the credentials from AWS_ACCESS_KEY_ID / "
		                     "AWS_SECRET_ACCESS_KEY for bucket %s (HTTP %ld %s)",
		                     s->conf.endpoint, s->conf.bucket, st,
		                     rq->code[0] ? rq->code : "AccessDenied");
	return s0__error_set(err, S0_EIO, "object_store", "S3 %s %s in bucket %s: HTTP %ld %s",
	                     rq->method, what, s->conf.bucket, st, rq->code);
}

int s0__s3_list(s0__s3 *s, const char *sub, const char *after, s0__s3xml_key_cb cb,
                void *payload, s0_error **err)
{
	char *pfx = s0__asprintf("%s%s", s->conf.prefix, sub);
	char *epfx = pfx ? curl_easy_escape(NULL, pfx, 0) : NULL;
	char *eafter = after ? curl_easy_escape(NULL, after, 0) : NULL;
	int rc = epfx && (!after || eafter) ? S0_OK : s0__error_nomem(err);
	char *token = NULL;
	s0__buf body = S0__BUF_INIT;
	while (rc == S0_OK) {
		char *etok = token ? curl_easy_escape(NULL, token, 0) : NULL;
		/* parameters in canonical (sorted) order, values escaped */
		char *q = s0__asprintf("%s%s%slist-type=2&prefix=%s%s%s", etok ? "continuation-token=" : "",
		                       etok ? etok : "", etok ? "&" : "", epfx,
		                       eafter ? "&start-after=" : "", eafter ? eafter : "");
		curl_free(etok);
		free(token);
		token = NULL;
		if (!q) {
			rc = s0__error_nomem(err);
			break;
		}
		s0__s3req rq = {.method = "GET", .query = q, .out = &body};
		rc = s0__s3_run(s, &rq, 1, err);
		if (rc == S0_OK)
			rc = s0__s3_check(s, &rq, err);
		if (rc == S0_OK)
			rc = s0__s3xml_list(body.data, body.len, cb, payload, &token, err);
		free(q);
		if (!token)
			break;
	}
	free(token);
	s0__buf_free(&body);
	curl_free(epfx);
	curl_free(eafter);
	free(pfx);
	return rc;
}
