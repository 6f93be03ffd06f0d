/* The client object and the one request path every endpoint goes through. */
#ifndef S0_CLIENT_INTERNAL_H
#define S0_CLIENT_INTERNAL_H

#include <cjson/cJSON.h>

#include "client/transport.h"
#include "common/http.h"
#include "common/internal.h"

struct s0_client {
	char *base_url; /* normalised, no trailing slash; "local:<dir>" in process */
	char *token;    /* NULL when blank */
	char *user_agent;
	char *team_id;
	s0__headers extra;
	int64_t request_timeout_ms; /* S0_TIMEOUT_INFINITE for none */
	s0_clock clock;
	s0_cancel_token *cancel; /* borrowed */
	const s0__transport_ops *ops;
	void *tctx;
};

/*
 * Make a client over an arbitrary transport (the HTTP one, or the local
 * backend's in-process one). Takes ownership of tctx (freed with ops->free,
 * also on failure). label is what s0_client_base_url() reports.
 */
int s0__client_new_with_transport(const s0_client_options *opts, const s0__transport_ops *ops,
                                  void *tctx, const char *label, s0_client **out,
                                  s0_error **err);

/* One API call. Paths are built by the endpoint (segments already escaped). */
typedef struct s0__call {
	const char *method;
	const char *path;            /* "/api/v1/…" */
	const char *query;           /* raw query without '?', or NULL */
	const cJSON *json;           /* JSON body, or NULL */
	const void *raw;             /* raw body (octet-stream) when has_raw */
	size_t raw_len;
	bool has_raw;
	const char *idempotency_key; /* nullable */
	const char *sandbox_id;      /* error context, nullable */
	s0_cancel_token *cancel;     /* extra token besides the client's, nullable */
	int64_t timeout_ms;          /* > 0: cap on the client's request timeout (wait deadlines) */
	bool raw_reply;              /* a 2xx body that is not JSON is the caller's (file reads) */
	/* long-poll (docs/wire.md "Long-poll"): sent as If-None-Match (nullable), and
	 * `Prefer: wait=N` when > 0; a 304 then is a success with no data */
	const char *if_none_match;
	int32_t prefer_wait_s;
} s0__call;

typedef struct s0__reply {
	int status;
	s0__http_response http;
	cJSON *root;        /* parsed body when JSON, else NULL */
	const cJSON *data;  /* root's "data" member (may be NULL) */
} s0__reply;

/*
 * Perform a call. On S0_OK the reply holds a 2xx response; a non-empty body
 * must be a success envelope (whatever its Content-Type), else S0_EPROTOCOL
 * -- except with raw_reply, where only a JSON-typed body is decoded. A
 * non-2xx response becomes an error through the wire table (code, reason,
 * request id, Retry-After…).
 * *sent (nullable) tells, for S0_ETRANSPORT, whether the request may have
 * reached the server.
 */
int s0__client_call(s0_client *c, const s0__call *call, s0__reply *reply, bool *sent,
                    s0_error **err);
void s0__reply_free(s0__reply *r);

/* Call, then build the result from the reply's data with fn (nullable). */
typedef int (*s0__from_json_fn)(const cJSON *data, int status, void **out, s0_error **err);
int s0__call_into(s0_client *c, const s0__call *call, s0__from_json_fn fn, void **out,
                  s0_error **err);

/* Build an error from a non-2xx response (exposed for tests). */
s0_error *s0__error_from_response(const s0__http_response *resp, int64_t now_unix_ms,
                                  const char *sandbox_id);

/* Check an id argument: non-NULL, non-blank, at most 255 bytes. */
int s0__check_id(const char *what, const char *id, s0_error **err);
/* "/api/v1/sandboxes/<escaped id><suffix>" (malloc'd), or NULL on OOM. */
char *s0__sandbox_path(const char *sandbox_id, const char *suffix);

/* Result object constructors from a JSON object (borrowed; copied). */
int s0__sandbox_info_from_json(const cJSON *obj, s0_sandbox_info **out, s0_error **err);
int s0__lifecycle_result_from_json(const cJSON *obj, int http_status,
                                   s0_lifecycle_result **out, s0_error **err);

#endif
