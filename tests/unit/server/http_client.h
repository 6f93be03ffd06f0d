/* A small libcurl client for the server tests. */
#ifndef S0_TEST_HTTP_CLIENT_H
#define S0_TEST_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct th_resp {
	long status;       /* 0 when the exchange failed */
	int curl_code;     /* CURLcode */
	char *body;        /* NUL-terminated */
	size_t body_len;
	char *headers;     /* raw header block */
	double seconds;    /* total time */
} th_resp;

typedef struct th_req {
	const char *method;       /* default GET */
	const char *url;          /* full URL */
	const char *unix_socket;  /* nullable */
	const char *const *headers; /* NULL-terminated "Name: value" */
	const void *body;         /* nullable */
	size_t body_len;
	bool chunked;             /* send without Content-Length */
	bool expect_continue;     /* send Expect: 100-continue (curl's own choice) */
	long timeout_ms;          /* 0 = 20000 */
} th_req;

/* Perform; returns 0 when an HTTP response arrived. Free with th_resp_free. */
int th_do(const th_req *q, th_resp *out);
void th_resp_free(th_resp *r);
/* Value of a response header (case-insensitive), malloc'd, or NULL. */
char *th_header(const th_resp *r, const char *name);
/* "http://127.0.0.1:<port><path>" (malloc'd). */
char *th_url(int port, const char *path);
/* Shortcut: method + path on a port with an optional bearer key and JSON body. */
int th_simple(int port, const char *method, const char *path, const char *key,
              const char *json_body, th_resp *out);

#endif
