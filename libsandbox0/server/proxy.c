/* Public routes: the request's public id and route, the wake, the connect
 * through the runtime seam and the relay (proxy_http.c; the answer's body
 * streamed by route_body.c) (proxy.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "common/json.h"
#include "local/api/router.h"
#include "local/lifecycle/services.h"
#include "local/runtime/runtime.h"
#include "server/proxy.h"
#include "server/proxy_http.h"
#include "server/route_hold.h"
#include "server/svc_start.h"

#define LABEL_MAX S0__PUBLIC_ID_MAX
#define DEFAULT_TIMEOUT_S 60

/* The name of a Host value without its port, lower case and without the
 * one trailing dot of an absolute name ("id.domain." is "id.domain");
 * false when it is no host name. */
static bool host_name(const char *host, char *out, size_t n)
{
	size_t len = strcspn(host, ":");
	if (!len || len >= n)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)host[i]) && host[i] != '.' && host[i] != '-')
			return false;
	const char *port = host + len;
	if (*port && (!port[1] || strspn(port + 1, "0123456789") != strlen(port + 1)))
		return false;
	size_t name_len = len > 1 && host[len - 1] == '.' ? len - 1 : len;
	for (size_t i = 0; i < name_len; i++)
		out[i] = (char)tolower((unsigned char)host[i]);
	out[name_len] = 0;
	return true;
}

/* The label of a host name directly under domain, or NULL. */
static const char *label_under(const char *name, const char *domain, char *label)
{
	size_t n = strlen(name), d = strlen(domain);
	if (!d || n <= d + 1 || name[n - d - 1] != '.' || strcasecmp(name + n - d, domain))
		return NULL;
	if (n - d - 1 >= LABEL_MAX || memchr(name, '.', n - d - 1))
		return NULL;
	memcpy(label, name, n - d - 1);
	label[n - d - 1] = 0;
	return label;
}

bool s0__route_is_public(const char *raw_path, const char *host, const char *domain)
{
	if (raw_path && !strncmp(raw_path, "/r/", 3))
		return true;
	char name[256], label[LABEL_MAX];
	return domain && host && host_name(host, name, sizeof name) &&
	       label_under(name, domain, label);
}

/* A public id: lowercase letters and digits. */
static bool id_ok(const char *s)
{
	size_t n = strlen(s);
	if (!n || n >= LABEL_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* Whether c starts a percent-encoded control character (%00-%1f, %7f). */
static bool encoded_control(const char *c)
{
	if (c[0] != '%' || !isxdigit((unsigned char)c[1]) || !isxdigit((unsigned char)c[2]))
		return false;
	return c[1] == '0' || c[1] == '1' || (c[1] == '7' && (c[2] == 'f' || c[2] == 'F'));
}

/* A path the service may see: printable, no dot segments, no encoded
 * slash, backslash, dot or control character (so prefix matching means
 * what it says, and no decoded CR or LF reaches the service's headers). */
static bool path_ok(const char *p)
{
	if (p[0] != '/')
		return false;
	for (const char *c = p; *c; c++) {
		if ((unsigned char)*c <= 0x20 || *c == 0x7f || *c == '\\')
			return false;
		if (*c == '%' && c[1] && c[2] &&
		    (!strncasecmp(c, "%2f", 3) || !strncasecmp(c, "%5c", 3) ||
		     !strncasecmp(c, "%2e", 3) || encoded_control(c)))
			return false;
	}
	for (const char *s = p; s; s = strchr(s + 1, '/')) {
		size_t n = strcspn(s + 1, "/");
		if ((n == 1 && s[1] == '.') || (n == 2 && s[1] == '.' && s[2] == '.'))
			return false;
	}
	return true;
}

/* Whether s is a token (RFC 9110 tchar: a method or a header name). */
static bool token_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("!#$%&'*+-.^_`|~", *s))
			return false;
	return true;
}

/* Whether a request head may go to the service as it is: a token method, a
 * query and header values without control characters (a bare CR ends a
 * line for some servers: a header the client smuggled in), token names. */
static bool head_ok(const s0__http_request *req)
{
	if (!token_ok(req->method))
		return false;
	for (const char *c = req->query ? req->query : ""; *c; c++)
		if ((unsigned char)*c <= 0x20 || *c == 0x7f)
			return false;
	for (size_t i = 0; i < req->headers.len; i++) {
		if (!token_ok(req->headers.items[i].name))
			return false;
		for (const char *c = req->headers.items[i].value; *c; c++)
			if (((unsigned char)*c < 0x20 && *c != '\t') || *c == 0x7f)
				return false;
	}
	return true;
}

static const char *str_of(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Whether prefix matches path at a segment boundary. */
static bool prefix_matches(const char *prefix, const char *path)
{
	size_t n = strlen(prefix);
	return !strncmp(prefix, path, n) &&
	       (!path[n] || path[n] == '/' || (n && prefix[n - 1] == '/'));
}

/* The route of a service for path and method: longest matching prefix.
 * *method_ok false when a route matches the path but not the method. */
static const cJSON *pick_route(const cJSON *service, const char *path, const char *method,
                               bool *method_ok)
{
	const cJSON *routes =
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(service, "ingress"),
	                                         "routes");
	const cJSON *best = NULL, *r;
	size_t best_len = 0;
	bool path_hit = false;
	*method_ok = true;
	cJSON_ArrayForEach(r, routes)
	{
		const char *pp = str_of(r, "path_prefix") ? str_of(r, "path_prefix") : "/";
		if (!prefix_matches(pp, path))
			continue;
		path_hit = true;
		const cJSON *ms = cJSON_GetObjectItemCaseSensitive(r, "methods"), *m;
		bool allowed = !cJSON_GetArraySize(ms);
		cJSON_ArrayForEach(m, ms) allowed = allowed || !strcmp(m->valuestring, method) ||
		                                    (!strcmp(method, "HEAD") &&
		                                     !strcmp(m->valuestring, "GET"));
		if (allowed && (!best || strlen(pp) > best_len)) {
			best = r;
			best_len = strlen(pp);
		}
	}
	if (!best && path_hit)
		*method_ok = false;
	return best;
}

static bool hop_by_hop(const char *name)
{
	static const char *const drop[] = {"connection", "keep-alive", "transfer-encoding",
	                                   "te",         "upgrade",    "proxy-authorization",
	                                   "proxy-authenticate", "trailer", "content-length",
	                                   "host",       "expect"};
	for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++)
		if (!strcasecmp(name, drop[i]))
			return true;
	return false;
}

static int fail(s0__http_response *resp, const char *rid, int status, const char *wire,
                const char *msg)
{
	return s0__router_reply_error(resp, rid, status, wire, msg);
}

/* A header of the client's request the service does not get as sent: hop
 * by hop, or an X-Forwarded-* one (request_headers sets those itself). */
static bool not_forwarded(const char *name)
{
	return hop_by_hop(name) || !strncasecmp(name, "X-Forwarded-", 12);
}

/* The protocol a request asks to upgrade to (`Connection: upgrade` and
 * `Upgrade`), or NULL. */
static const char *upgrade_of(const s0__http_request *req)
{
	const char *conn = s0__headers_get(&req->headers, "Connection");
	return conn && strcasestr(conn, "upgrade") && !req->upload
	               ? s0__headers_get(&req->headers, "Upgrade")
	               : NULL;
}

/* The request's headers for the service, plus Host and X-Forwarded-*. */
static int request_headers(const s0__http_request *req, int port, const char *fwd_prefix,
                           s0__headers *h)
{
	const char *host = s0__headers_get(&req->headers, "Host");
	char local[32];
	snprintf(local, sizeof local, "127.0.0.1:%d", port);
	int bad = s0__headers_add(h, "Host", host ? host : local);
	if (!bad)
		bad = s0__headers_copy(h, &req->headers, not_forwarded);
	if (!bad && host)
		bad = s0__headers_add(h, "X-Forwarded-Host", host);
	if (!bad)
		bad = s0__headers_add(h, "X-Forwarded-Proto", "http");
	if (!bad && fwd_prefix)
		bad = s0__headers_add(h, "X-Forwarded-Prefix", fwd_prefix);
	if (!bad && upgrade_of(req)) /* hop by hop, but the upgrade is the service's */
		bad = s0__headers_add(h, "Upgrade", upgrade_of(req));
	return bad ? S0_ENOMEM : S0_OK;
}

/* Relay the request over fd (closed here) into resp. */
static int relay_http(int fd, int port, const char *path, const s0__http_request *req,
                      const char *fwd_prefix, long timeout_s, const char *rid,
                      s0__http_response *resp)
{
	s0__headers h = {0};
	char *target = s0__asprintf("%s%s%s", path, req->query ? "?" : "",
	                            req->query ? req->query : "");
	int rc = target ? request_headers(req, port, fwd_prefix, &h) : S0_ENOMEM;
	s0__http_response got = {0};
	const char *why = "out of memory";
	if (rc == S0_OK) {
		s0__proxy_req pr = {.method = req->method, .target = target, .headers = &h,
		                    .body = req->body, .body_len = req->body_len,
		                    .has_body = req->has_body,
		                    .response_max = S0__ROUTE_RESPONSE_MAX,
		                    .timeout_ms = (int64_t)timeout_s * 1000, .stream = true,
		                    .upgrade = upgrade_of(req) != NULL, .upload = req->upload};
		rc = s0__proxy_exchange(fd, &pr, &got, &why);
	}
	if (!got.stream)
		close(fd); /* else the body's (streamed after this returns) */
	s0__headers_free(&h);
	free(target);
	if (rc == S0_OK) {
		resp->status = got.status;
		if (s0__headers_copy(&resp->headers, &got.headers, hop_by_hop) < 0)
			rc = S0_ENOMEM;
		const char *up = got.status == 101 ? s0__headers_get(&got.headers, "Upgrade") : NULL;
		if (rc == S0_OK && up && s0__headers_add(&resp->headers, "Upgrade", up) < 0)
			rc = S0_ENOMEM;
		if (rc == S0_OK && rid && s0__headers_add(&resp->headers, "X-Request-ID", rid) < 0)
			rc = S0_ENOMEM;
		resp->body = got.body;
		got.body = (s0__buf){0};
		resp->stream = got.stream;
		got.stream = NULL;
	} else if (rc != S0_ENOMEM) {
		char msg[160];
		snprintf(msg, sizeof msg, "the service did not answer: %s", why);
		rc = fail(resp, rid, rc == S0_ETIMEDOUT ? 504 : 502,
		          rc == S0_ETIMEDOUT ? "gateway_timeout" : "bad_gateway", msg);
	}
	s0__http_response_free(&got);
	return rc;
}

/* The public id and the path after it; false: the target is hostile. */
static bool split_target(const s0__http_request *req, const char *domain, char *id,
                         const char **rest, bool *by_host)
{
	const char *host = s0__headers_get(&req->headers, "Host");
	char name[256];
	*by_host = false;
	if (domain && host && host_name(host, name, sizeof name) && label_under(name, domain, id)) {
		*by_host = true;
		*rest = req->path;
		return true;
	}
	const char *p = req->path + 3; /* "/r/" */
	size_t n = strcspn(p, "/");
	if (!n || n >= LABEL_MAX)
		return false;
	memcpy(id, p, n);
	id[n] = 0;
	*rest = p[n] ? p + n : "/";
	return true;
}

static int route_proxy(s0__engine *e, const char *domain, const s0__http_request *req,
                       const char *rid, s0_cancel_token *stop, s0__http_response *resp);

int s0__route_proxy(s0__engine *e, const char *domain, const s0__http_request *req,
                    const char *rid, s0_cancel_token *stop, s0__http_response *resp)
{
	char id[LABEL_MAX];
	const char *rest;
	bool by_host;
	if (!split_target(req, domain, id, &rest, &by_host) || !id_ok(id))
		return fail(resp, rid, 404, "not_found", "route not found");
	if (!s0__route_hold_take(id)) {
		int rc = fail(resp, rid, 503, "unavailable",
		              "too many requests are waiting on this route; retry later");
		if (rc == S0_OK && s0__headers_add(&resp->headers, "Retry-After", "1") < 0)
			rc = S0_ENOMEM;
		return rc;
	}
	int rc = route_proxy(e, domain, req, rid, stop, resp);
	s0__route_hold_drop(id);
	return rc;
}

static int route_proxy(s0__engine *e, const char *domain, const s0__http_request *req,
                       const char *rid, s0_cancel_token *stop, s0__http_response *resp)
{
	char id[LABEL_MAX], prefix[LABEL_MAX + 4];
	const char *rest;
	bool by_host;
	if (!split_target(req, domain, id, &rest, &by_host) || !id_ok(id))
		return fail(resp, rid, 404, "not_found", "route not found");
	if (!path_ok(rest))
		return fail(resp, rid, 400, "bad_request",
		            "invalid route path: dot segments, encoded slashes and control "
		            "characters are refused");
	if (!head_ok(req))
		return fail(resp, rid, 400, "bad_request",
		            "invalid request: control characters in the method, query or a "
		            "header are refused");
	if (req->has_body && req->body_len > S0__ROUTE_BODY_MAX)
		return fail(resp, rid, 413, "request_too_large", "request body is too large");
	s0_error *err = NULL;
	s0__route_target t;
	if (s0__engine_route_resolve(e, id, &t, &err) < 0) {
		s0__route_target_clear(&t);
		return s0__router_reply_s0_error(resp, rid, err);
	}
	bool method_ok;
	const cJSON *route = pick_route(t.service, rest, req->method, &method_ok);
	const cJSON *ports = cJSON_GetObjectItemCaseSensitive(t.service, "port");
	int port = cJSON_IsNumber(ports) ? ports->valueint : 0;
	bool no_routes = !cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(t.service, "ingress"), "routes"));
	int rc;
	if (!port) {
		rc = fail(resp, rid, 404, "not_found", "route not found: the service has no port");
	} else if (!route && !no_routes) {
		rc = method_ok ? fail(resp, rid, 404, "not_found", "no route of the service matches")
		               : fail(resp, rid, 405, "method_not_allowed",
		                      "the route does not allow this method");
	} else {
		bool resume = route && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(route, "resume"));
		const cJSON *to = route ? cJSON_GetObjectItemCaseSensitive(route, "timeout_seconds")
		                        : NULL;
		long timeout_s = cJSON_IsNumber(to) ? (long)to->valuedouble : DEFAULT_TIMEOUT_S;
		s0__runtime_access *a = NULL;
		rc = resume ? s0__engine_runtime_begin(e, t.team, t.sandbox_id,
		                                       S0__ROUTER_WAKE_BUDGET_MS, &a, &err)
		            : s0__engine_runtime_pin_running(e, t.team, t.sandbox_id, &a, &err);
		int fd = -1;
		if (rc == S0_OK)
			rc = s0__svc_connect(a, t.sandbox_id, t.service, port, S0__ROUTER_WAKE_BUDGET_MS,
			                     stop, &fd, &err);
		char *path = NULL;
		const char *pp = route && str_of(route, "path_prefix") ? str_of(route, "path_prefix")
		                                                        : "/";
		const char *rw = route ? str_of(route, "rewrite_prefix") : NULL;
		if (rc == S0_OK && rw) {
			const char *tail = rest + strlen(pp);
			if (rw[strlen(rw) - 1] == '/' && *tail == '/')
				tail++;
			path = s0__asprintf("%s%s%s", rw, *tail && *tail != '/' && rw[strlen(rw) - 1] != '/'
			                                          ? "/"
			                                          : "",
			                    tail);
		}
		snprintf(prefix, sizeof prefix, "/r/%s", id);
		if (rc == S0_OK && rw && !path) {
			close(fd);
			rc = S0_ENOMEM;
		} else if (rc == S0_OK) {
			rc = relay_http(fd, port, path ? path : rest, req, by_host ? NULL : prefix,
			                timeout_s, rid, resp);
		} else if (rc == S0_EUNAVAILABLE && err && s0_error_reason(err) &&
		           !strcmp(s0_error_reason(err), "not_running")) {
			s0_error_free(err);
			rc = fail(resp, rid, 503, "unavailable",
			          "sandbox is not running and this route does not resume it");
		} else if (err && s0_error_reason(err) &&
		           (!strcmp(s0_error_reason(err), "port_no_answer") ||
		            !strcmp(s0_error_reason(err), "gateway_timeout"))) {
			/* a silent port or a start in flight past the budget: at once */
			rc = s0__router_reply_error(resp, rid, 504, "gateway_timeout",
			                            s0_error_message(err));
			s0_error_free(err);
		} else if (rc == S0_EUNAVAILABLE && err && s0_error_reason(err) &&
		           !strcmp(s0_error_reason(err), "port_not_listening")) {
			rc = s0__router_reply_error(resp, rid, 502, "bad_gateway", s0_error_message(err));
			s0_error_free(err);
		} else {
			rc = s0__router_reply_s0_error(resp, rid, err);
		}
		free(path);
		if (a)
			s0__engine_runtime_end(a);
	}
	s0__route_target_clear(&t);
	return rc == S0_ENOMEM ? S0_ENOMEM : S0_OK;
}
