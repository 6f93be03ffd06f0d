/*
 * Client benchmark (issue #22): the cost of one `GET /sandboxes/{id}`
 * through our client (s0_sandbox_get: request, wire decoding, the result
 * object) against the same request with raw libcurl on one reused
 * connection (body kept, not parsed), both against the same `s0 serve`,
 * interleaved in rounds in one run.
 *
 *   bench_client claim URL TOKEN          claim a sandbox, print its id
 *   bench_client get URL TOKEN ID [N]     time N GETs each way (default 2000),
 *                                          print "c_client_us <median>" and
 *                                          "raw_curl_us <median>" per GET
 *
 * run.sh starts the server, runs this and the bindings' equivalents, and
 * prints the table (README.md).
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sandbox0/sandbox0.h"

#define ROUNDS 9

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* This process's CPU time (all threads, user + system), microseconds. */
static double cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void die(const char *what, s0_error *e)
{
	fprintf(stderr, "bench_client: %s: %s\n", what, e ? s0_error_message(e) : "failed");
	exit(1);
}

static s0_client *client(const char *url, const char *token)
{
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	o.base_url = url;
	o.token = token;
	s0_client *c = NULL;
	s0_error *e = NULL;
	if (s0_client_new(&o, &c, &e) < 0)
		die("client", e);
	return c;
}

typedef struct body {
	char *p;
	size_t n, cap;
} body;

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
	body *b = ud;
	size_t n = size * nmemb;
	if (b->n + n > b->cap) {
		size_t cap = (b->n + n) * 2;
		char *q = realloc(b->p, cap);
		if (!q)
			return 0;
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->n, ptr, n);
	b->n += n;
	return n;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "claim")) {
		s0_client *c = client(argv[2], argv[3]);
		s0_sandbox_info *sb = NULL;
		s0_error *e = NULL;
		if (s0_sandbox_claim(c, "default", NULL, NULL, &sb, &e) < 0)
			die("claim", e);
		printf("%s\n", s0_sandbox_info_id(sb));
		s0_sandbox_info_free(sb);
		s0_client_free(c);
		return 0;
	}
	if (argc < 5 || strcmp(argv[1], "get")) {
		fprintf(stderr, "usage: bench_client claim URL TOKEN | get URL TOKEN ID [N]\n");
		return 2;
	}
	const char *url = argv[2], *token = argv[3], *id = argv[4];
	long n = argc > 5 ? atol(argv[5]) : 2000;
	if (n < 10)
		n = 10;
	s0_client *c = client(url, token);

	/* the raw request: the URL, headers and connection handling our client uses */
	char full[1024], auth[512], ua[128];
	snprintf(full, sizeof full, "%s/api/v1/sandboxes/%s", url, id);
	snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
	snprintf(ua, sizeof ua, "User-Agent: libsandbox0/%s", s0_version_string());
	CURL *h = curl_easy_init();
	struct curl_slist *hd = curl_slist_append(NULL, auth);
	hd = curl_slist_append(hd, "Accept: application/json");
	hd = curl_slist_append(hd, ua);
	body b = {0};
	curl_easy_setopt(h, CURLOPT_URL, full);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);

	double cs[ROUNDS], rs[ROUNDS], c_cpu = 0, r_cpu = 0;
	long per = n / ROUNDS > 0 ? n / ROUNDS : 1;
	for (int r = -1; r < ROUNDS; r++) { /* round -1 warms both connections up */
		double t0 = now_us(), u0 = cpu_us();
		for (long i = 0; i < per; i++) {
			s0_sandbox_info *sb = NULL;
			s0_error *e = NULL;
			if (s0_sandbox_get(c, id, &sb, &e) < 0)
				die("s0_sandbox_get", e);
			s0_sandbox_info_free(sb);
		}
		double t1 = now_us(), u1 = cpu_us();
		for (long i = 0; i < per; i++) {
			b.n = 0;
			long code = 0;
			if (curl_easy_perform(h) != CURLE_OK ||
			    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK || code != 200)
				die("raw GET", NULL);
		}
		double t2 = now_us(), u2 = cpu_us();
		if (r >= 0) {
			cs[r] = (t1 - t0) / (double)per;
			rs[r] = (t2 - t1) / (double)per;
			c_cpu += u1 - u0;
			r_cpu += u2 - u1;
		}
	}
	qsort(cs, ROUNDS, sizeof *cs, cmp_d);
	qsort(rs, ROUNDS, sizeof *rs, cmp_d);
	printf("c_client_us %.1f\nraw_curl_us %.1f\n", cs[ROUNDS / 2], rs[ROUNDS / 2]);
	printf("c_client_cpu %.1f\nraw_curl_cpu %.1f\n", c_cpu / (double)(per * ROUNDS),
	       r_cpu / (double)(per * ROUNDS));
	curl_slist_free_all(hd);
	curl_easy_cleanup(h);
	free(b.p);
	s0_client_free(c);
	return 0;
}
