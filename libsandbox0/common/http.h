/*
 * The one in-memory shape of an HTTP exchange, shared by the client's
 * transports (libsandbox0/client) and the local router (libsandbox0/local/api)
 * so that the in-process transport and the HTTP server cannot drift
 * (docs/architecture.md "Layers").
 */
#ifndef S0_HTTP_H
#define S0_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

typedef struct s0__header {
	char *name;
	char *value;
} s0__header;

typedef struct s0__headers {
	s0__header *items;
	size_t len;
	size_t cap;
} s0__headers;

/* Append a copy of (name, value); 0 or -1 on OOM. */
int s0__headers_add(s0__headers *h, const char *name, const char *value);
/* Append a copy of each header of src, in order, whose name skip (nullable:
 * none skipped) does not reject; 0 or -1 on OOM (dst then holds a prefix). */
int s0__headers_copy(s0__headers *dst, const s0__headers *src, bool (*skip)(const char *name));
/* Case-insensitive lookup of the first header with this name, or NULL. */
const char *s0__headers_get(const s0__headers *h, const char *name);
void s0__headers_free(s0__headers *h);

typedef struct s0__http_request {
	const char *method;  /* "GET", "POST", "PUT", "DELETE" */
	const char *path;    /* decoded path without query, e.g. /api/v1/sandboxes/x */
	const char *query;   /* raw query without '?', or NULL */
	s0__headers headers; /* request headers (Authorization, Content-Type…) */
	const void *body;    /* NULL when there is no body */
	size_t body_len;
	bool has_body;       /* distinguishes "no body" from an empty body */
	/* (nullable) a public route's body read as it comes, instead of body
	 * (server/route_upload.h) */
	struct s0__route_upload *upload;
} s0__http_request;

/*
 * A response body read as it comes instead of held in memory (the public
 * route proxy's, server/proxy.h; the HTTP server sends it with bounded
 * buffers). Implementations put this first in their own struct.
 */
typedef struct s0__http_body {
	/* Up to max bytes into buf: > 0 bytes, 0 at the end, S0__HTTP_BODY_AGAIN
	 * when none is ready (wait for fd to be readable), -1 when it failed.
	 * Never blocks. */
	ptrdiff_t (*read)(struct s0__http_body *b, char *buf, size_t max);
	void (*free)(struct s0__http_body *b); /* closes fd */
	int fd;                                /* readable when read() may go on */
	int64_t length;                        /* bytes in all, or -1: unknown */
	int64_t idle_ms;                       /* longest wait for more (0: none) */
	bool upgraded; /* a 101: read() gives the raw bytes of a connection the
	                  server relays both ways (server/route_tunnel.h) */
} s0__http_body;
#define S0__HTTP_BODY_AGAIN (-2)

typedef struct s0__http_response {
	int status;
	s0__headers headers; /* Content-Type, X-Request-ID, Retry-After… */
	s0__buf body;
	s0__http_body *stream; /* (nullable, owned) the body instead of body */
} s0__http_response;

void s0__http_response_free(s0__http_response *r);

/*
 * Query helpers: find the value of key in a raw query string, percent-decoded
 * (+ as space). Returns a malloc'd string, or NULL when absent. *present is
 * set to whether the key appears at all (a key without '=' has value "").
 */
char *s0__query_get(const char *query, const char *key, bool *present);
/* Append "key=value" (percent-encoded) to a query buffer, with '&' as needed. */
int s0__query_add(s0__buf *q, const char *key, const char *value);
/* Percent-encode a path segment (RFC 3986 unreserved kept). */
char *s0__url_escape(const char *s);

#endif
