/*
 * Any node accepts any call (docs/scaling.md "Several nodes"): a call for
 * a sandbox whose runtime runs on another live node is forwarded there
 * over the node channel — HTTP to the owner's advertised URL through the
 * client's libcurl transport, authenticated with X-S0-Node-Auth
 * (lifecycle/nodeauth.c) — and its answer returned as it came. A call
 * that arrives over the channel is served here, never forwarded again.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client/transport.h"
#include "local/api/forward.h"
#include "local/api/router.h"

#define FORWARD_TIMEOUT_MS 150000 /* a held long-poll (Prefer: wait) answers first */
#define CONNECT_TIMEOUT_MS 2000
#define PEERS_MAX 64

/* One libcurl transport per peer URL, kept for the process (their
 * connections are reused; the transport is thread-safe). */
static struct {
	pthread_mutex_t mu;
	char *url[PEERS_MAX];
	void *ctx[PEERS_MAX];
	size_t n;
} peers = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void *peer_transport(const char *url)
{
	void *ctx = NULL;
	pthread_mutex_lock(&peers.mu);
	for (size_t i = 0; i < peers.n && !ctx; i++)
		if (!strcmp(peers.url[i], url))
			ctx = peers.ctx[i];
	if (!ctx && peers.n < PEERS_MAX) {
		s0__http_transport_config cfg = {.base_url = url,
		                                 .connect_timeout_ms = CONNECT_TIMEOUT_MS};
		char *copy = s0__strdup(url);
		if (copy && s0__http_transport_new(&cfg, &ctx, NULL) == S0_OK) {
			peers.url[peers.n] = copy;
			peers.ctx[peers.n++] = ctx;
		} else {
			free(copy);
			ctx = NULL;
		}
	}
	pthread_mutex_unlock(&peers.mu);
	return ctx;
}

/* The sandbox id of /api/v1/sandboxes/{id}[/…] into id, or false. */
static bool sandbox_of(const char *path, char id[S0__ID_MAX])
{
	static const char prefix[] = "/api/v1/sandboxes/";
	if (strncmp(path, prefix, sizeof prefix - 1))
		return false;
	const char *s = path + sizeof prefix - 1;
	size_t n = strcspn(s, "/");
	if (!n || n >= S0__ID_MAX)
		return false;
	memcpy(id, s, n);
	id[n] = '\0';
	return true;
}

static bool hop_by_hop(const char *name)
{
	static const char *const h[] = {"Host", "Content-Length", "Connection", "Transfer-Encoding",
	                                "Expect", "Keep-Alive", "Date", S0__NODE_AUTH_HEADER};
	for (size_t i = 0; i < sizeof h / sizeof h[0]; i++)
		if (!strcasecmp(name, h[i]))
			return true;
	return false;
}

/* The raw target "path[?query]" (malloc'd). */
static char *target_of(const s0__http_request *req)
{
	return req->query && *req->query ? s0__asprintf("%s?%s", req->path, req->query)
	                                 : s0__strdup(req->path);
}

int s0__node_call(s0__engine *e, const char *url, const s0__http_request *req,
                  int64_t timeout_ms, s0__http_response *resp, bool *sent)
{
	*sent = false;
	void *ctx = peer_transport(url);
	char *target = target_of(req);
	s0__http_request out = *req;
	memset(&out.headers, 0, sizeof out.headers);
	int rc = ctx && target ? S0_OK : S0_ENOMEM;
	if (rc == S0_OK && s0__headers_copy(&out.headers, &req->headers, hop_by_hop) < 0)
		rc = S0_ENOMEM;
	char auth[S0__NODE_AUTH_MAX];
	const char *signed_already = s0__headers_get(&req->headers, S0__NODE_AUTH_HEADER);
	if (rc == S0_OK) {
		if (!e && signed_already)
			s0__strlcpy(auth, signed_already, sizeof auth);
		else
			s0__engine_node_sign(e, req->method, target, req->body,
			                     req->has_body ? req->body_len : 0, auth);
		if (s0__headers_add(&out.headers, S0__NODE_AUTH_HEADER, auth) < 0)
			rc = S0_ENOMEM;
	}
	s0__http_response got = {0};
	if (rc == S0_OK) {
		s0_error *err = NULL;
		rc = s0__http_transport_ops.send(ctx, &out, timeout_ms, NULL, &got, sent, &err);
		s0_error_free(err);
	}
	if (rc == S0_OK) {
		resp->status = got.status;
		if (s0__headers_copy(&resp->headers, &got.headers, hop_by_hop) < 0)
			rc = S0_ENOMEM;
		if (rc == S0_OK && got.body.len && s0__buf_put(&resp->body, got.body.data,
		                                               got.body.len) < 0)
			rc = S0_ENOMEM;
	}
	s0__http_response_free(&got);
	s0__headers_free(&out.headers);
	free(target);
	return rc;
}

int s0__router_forward(s0__engine *e, const s0__http_request *req, const char *path,
                       const char *request_id, s0__http_response *resp, bool *unreachable)
{
	*unreachable = false;
	char id[S0__ID_MAX];
	if (!sandbox_of(path, id))
		return 0;
	const char *auth = s0__headers_get(&req->headers, S0__NODE_AUTH_HEADER);
	if (auth) { /* over the node channel: serve it here */
		char *target = target_of(req);
		if (!target)
			return S0_ENOMEM;
		s0_error *err = NULL;
		int rc = s0__engine_node_verify(e, auth, req->method, target, req->body,
		                                req->has_body ? req->body_len : 0, &err);
		free(target);
		if (rc == S0_OK)
			return 0;
		rc = s0__router_reply_error(resp, request_id, 401, "unauthorized", s0_error_message(err));
		s0_error_free(err);
		return rc < 0 ? rc : 1;
	}
	s0__owner_kind kind;
	char url[512];
	if (s0__engine_owner(e, id, &kind, url, sizeof url, NULL) < 0 || kind != S0__OWNER_PEER)
		return 0; /* here, nowhere, or lapsed (taken over soon): served here */
	bool sent = false;
	int rc = url[0] ? s0__node_call(e, url, req, FORWARD_TIMEOUT_MS, resp, &sent) : S0_ETRANSPORT;
	if (rc == S0_OK)
		return 1;
	if (rc == S0_ENOMEM)
		return rc;
	s0__http_response_free(resp);
	memset(resp, 0, sizeof *resp);
	if (!sent || !strcmp(req->method, "GET")) {
		*unreachable = true; /* served here as far as the shared store allows */
		return 0;
	}
	rc = s0__router_reply_error(resp, request_id, 503, "unavailable",
	                            "the node running this sandbox did not answer; retry");
	if (rc == S0_OK)
		s0__headers_add(&resp->headers, "Retry-After", "1");
	return rc < 0 ? rc : 1;
}
