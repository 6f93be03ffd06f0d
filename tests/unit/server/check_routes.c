/*
 * Public routes over `s0 serve` (docs/wire.md "Public routes"): the
 * services API of the official SDKs (GET/PUT …/services), the proxy at
 * /r/{public_id}/ and {public_id}.{domain} to the simulated runtime's
 * httpd, waking a paused sandbox for a `resume: true` route, a failed wake,
 * the auto_resume guard, team scoping and hostile input (PUB-01..PUB-08),
 * bodies streamed both ways and a client hanging up mid-body (PUB-12), a
 * silent port and one start of a command for many requests (PUB-14), the
 * bound on the handler threads one route holds (PUB-15).
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <sched.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "client_steps.h"
#include "common/json.h"
#include "local/lifecycle/engine_internal.h"
#include "local_fixture.h"
#include "sandbox0/sandbox0.h"
#include "sandbox0/server.h"
#include "server/route_hold.h"
#include "server_test.h"

/* method path with key and JSON body; the parsed answer (asserts status). */
static cJSON *call(const char *method, const char *path, const char *key, const char *body,
                   long status)
{
	th_resp r;
	ck_assert_int_eq(th_simple(cs_sv.port, method, path, key, body, &r), 0);
	ck_assert_msg(r.status == status, "%s %s: %ld %s", method, path, r.status, r.body);
	cJSON *j = resp_json(&r);
	th_resp_free(&r);
	return j;
}

static char *claim(const char *key, bool auto_resume)
{
	cJSON *j = call("POST", "/api/v1/sandboxes", key,
	                auto_resume ? "{\"template\":\"default\"}"
	                            : "{\"template\":\"default\",\"config\":{\"auto_resume\":false}}",
	                201);
	char *id = strdup(s0__json_str0(cJSON_GetObjectItem(j, "data"), "sandbox_id"));
	cJSON_Delete(j);
	return id;
}

static void write_file(const char *sb, const char *path, const char *text)
{
	char *p = s0__asprintf("/api/v1/sandboxes/%s/files?path=%s", sb, path);
	char *u = th_url(cs_sv.port, p);
	const char *h[] = {"Authorization: Bearer " KEY_A, NULL};
	th_req q = {.method = "POST", .url = u, .headers = h, .body = text, .body_len = strlen(text)};
	th_resp r;
	ck_assert_int_eq(th_do(&q, &r), 0);
	ck_assert_msg(r.status == 200, "write: %ld %s", r.status, r.body);
	th_resp_free(&r);
	free(u);
	free(p);
}

/* A web service on 8080 serving /www (httpd started by the route). */
#define WEB(routes)                                                                       \
	"{\"services\":[{\"id\":\"web\",\"port\":8080,\"runtime\":{\"type\":\"cmd\","           \
	"\"command\":[\"httpd\",\"-p\",\"8080\",\"-h\",\"/www\"]},\"ingress\":{\"public\":true," \
	"\"routes\":" routes "}}]}"

/* PUT the services of sb; the public id of the first (the caller's). */
static char *put_services(const char *sb, const char *json)
{
	char *p = s0__asprintf("/api/v1/sandboxes/%s/services", sb);
	cJSON *j = call("PUT", p, KEY_A, json, 200);
	const cJSON *s0 = cJSON_GetArrayItem(
		cJSON_GetObjectItem(cJSON_GetObjectItem(j, "data"), "services"), 0);
	const char *url = s0__json_str0(s0, "public_url");
	char *id = NULL;
	const char *r = url ? strstr(url, "/r/") : NULL;
	if (r) /* http://127.0.0.1:PORT/r/{id}/ */
		id = strndup(r + 3, strlen(r + 3) - 1);
	else if (url) /* http://{id}.{domain}/ */
		id = strndup(url + 7, strcspn(url + 7, "."));
	cJSON_Delete(j);
	free(p);
	return id;
}

/* GET (or method) /r/{id}{rest} without a key; the response. */
static void route_do(const char *method, const char *id, const char *rest, const char *host,
                     const char *body, th_resp *r)
{
	char *p = s0__asprintf("/r/%s%s", id, rest);
	char *u = th_url(cs_sv.port, p);
	char *hh = host ? s0__asprintf("Host: %s", host) : NULL;
	const char *h[] = {"Content-Type: text/plain", hh, NULL};
	th_req q = {.method = method, .url = u, .headers = h, .body = body,
	            .body_len = body ? strlen(body) : 0};
	ck_assert_msg(th_do(&q, r) == 0, "%s %s: curl error %d", method, rest, r->curl_code);
	free(hh);
	free(u);
	free(p);
}

static void pause_sb(const char *sb)
{
	s0_client *c = cs_client(cs_sv.srv, KEY_A, NULL);
	ck_assert_int_eq(s0_sandbox_pause_and_wait(c, sb, NULL, NULL, NULL), S0_OK);
	s0_client_free(c);
}

static cJSON *sandbox(const char *sb)
{
	char *p = s0__asprintf("/api/v1/sandboxes/%s", sb);
	cJSON *j = call("GET", p, KEY_A, NULL, 200);
	free(p);
	return j;
}

/* PUB-01: services as the SDKs define them: list, replace (create,
 * update), clear; a stable public id; views; another team sees nothing. */
START_TEST(services_replace_list_and_clear)
{
	char *sb = claim(KEY_A, true);
	char *p = s0__asprintf("/api/v1/sandboxes/%s/services", sb);
	cJSON *j = call("GET", p, KEY_A, NULL, 200);
	cJSON *d = cJSON_GetObjectItem(j, "data");
	ck_assert_str_eq(s0__json_str0(d, "sandbox_id"), sb);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "services")), 0);
	cJSON_Delete(j);

	char *id = put_services(sb, WEB("[{\"id\":\"all\",\"path_prefix\":\"/\",\"resume\":true}]"));
	ck_assert_ptr_nonnull(id);
	j = call("GET", p, KEY_A, NULL, 200);
	const cJSON *s = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "data"),
	                                                        "services"), 0);
	ck_assert_str_eq(s0__json_str0(s, "id"), "web");
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(s, "publishable")));
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(s, "publish_blockers")), 0);
	ck_assert_ptr_null(cJSON_GetObjectItem(s, "public_id")); /* ours, not the wire's */
	char want[128];
	snprintf(want, sizeof want, "http://127.0.0.1:%d/r/%s/", cs_sv.port, id);
	ck_assert_str_eq(s0__json_str0(s, "public_url"), want);
	cJSON_Delete(j);

	/* an update keeps the service's public id; a private service has none */
	char *id2 = put_services(sb, WEB("[{\"id\":\"api\",\"path_prefix\":\"/api\"}]"));
	ck_assert_str_eq(id2, id);
	j = call("PUT", p, KEY_A,
	         "{\"services\":[{\"id\":\"db\",\"port\":5432,\"ingress\":{\"public\":false}}]}", 200);
	s = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "data"), "services"), 0);
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(s, "publishable")));
	ck_assert_ptr_null(cJSON_GetObjectItem(s, "public_url"));
	cJSON_Delete(j);
	th_resp r;
	route_do("GET", id, "/", NULL, NULL, &r);
	ck_assert_int_eq(r.status, 404); /* the old public id routes nowhere now */
	th_resp_free(&r);

	/* team scoping: team B neither sees nor replaces A's services */
	cJSON_Delete(call("GET", p, KEY_B, NULL, 404));
	cJSON_Delete(call("PUT", p, KEY_B, "{\"services\":[]}", 404));
	cJSON_Delete(call("GET", p, NULL, NULL, 401));
	/* clear */
	j = call("PUT", p, KEY_A, "{\"services\":[]}", 200);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "data"),
	                                                        "services")), 0);
	cJSON_Delete(j);
	free(id2);
	free(id);
	free(p);
	free(sb);
}
END_TEST

/* PUB-02: bad services get a clear 400 and change nothing. */
START_TEST(services_bad_input)
{
	char *sb = claim(KEY_A, true), *off = claim(KEY_A, false);
	char *p = s0__asprintf("/api/v1/sandboxes/%s/services", sb);
	char *poff = s0__asprintf("/api/v1/sandboxes/%s/services", off);
	static const struct {
		const char *body, *msg;
	} bad[] = {
		{"{}", "services must be an array"},
		{"{\"services\":[{\"port\":80,\"ingress\":{\"public\":true}}]}", "needs an id"},
		{"{\"services\":[{\"id\":\"a\",\"port\":80}]}", "ingress"},
		{"{\"services\":[{\"id\":\"a\",\"port\":70000,\"ingress\":{\"public\":true}}]}", "port"},
		{"{\"services\":[{\"id\":\"a\",\"ingress\":{\"public\":true}},{\"id\":\"a\","
		 "\"ingress\":{\"public\":true}}]}",
		 "unique"},
		{"{\"services\":[{\"id\":\"a\",\"runtime\":{\"type\":\"manual\"},\"ingress\":{\"public\""
		 ":true,\"routes\":[{\"id\":\"r\",\"resume\":true}]}}]}",
		 "restartable cmd or function runtime"},
		{"{\"services\":[{\"id\":\"a\",\"runtime\":{\"type\":\"cmd\"},\"ingress\":{\"public\":"
		 "true}}]}",
		 "needs runtime.command"},
		{"{\"services\":[{\"id\":\"a\",\"ingress\":{\"public\":true,\"routes\":[{\"id\":\"r\","
		 "\"path_prefix\":\"/a/../b\"}]}}]}",
		 "path_prefix"},
		{"{\"services\":[{\"id\":\"a\",\"ingress\":{\"public\":true,\"routes\":[{\"id\":\"r\","
		 "\"auth\":{\"mode\":\"bearer\"}}]}}]}",
		 "auth modes"},
		{"{\"services\":[{\"id\":\"a\",\"ingress\":{\"public\":true,\"routes\":[{\"id\":\"r\","
		 "\"methods\":[\"get\"]}]}}]}",
		 "methods"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cJSON *j = call("PUT", p, KEY_A, bad[i].body, 400);
		ck_assert_msg(strstr(err_message(j), bad[i].msg), "%s: %s", bad[i].body,
		              err_message(j));
		cJSON_Delete(j);
	}
	/* resume: true needs the sandbox's auto_resume */
	cJSON *j = call("PUT", poff, KEY_A, WEB("[{\"id\":\"r\",\"resume\":true}]"), 400);
	ck_assert_ptr_nonnull(strstr(err_message(j), "auto_resume: true"));
	cJSON_Delete(j);
	j = call("GET", p, KEY_A, NULL, 200);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "data"),
	                                                        "services")), 0);
	cJSON_Delete(j);
	cJSON_Delete(call("PUT", "/api/v1/sandboxes/sb_nope/services", KEY_A, "{\"services\":[]}",
	                  404));
	free(poff);
	free(p);
	free(off);
	free(sb);
}
END_TEST

/* PUB-03: GET and POST with bodies reach the service in the sandbox,
 * path-based and by Host under the public domain; rewrite and methods. */
START_TEST(proxy_get_and_post)
{
	ck_assert_int_eq(s0_server_set_public_domain(cs_sv.srv, "Example.TEST", NULL), S0_OK);
	ck_assert_int_eq(s0_server_set_public_domain(cs_sv.srv, "other.test", NULL), S0_ECONFLICT);
	char *sb = claim(KEY_A, true);
	write_file(sb, "/www/index.html", "<h1>hello</h1>");
	write_file(sb, "/www/data.json", "{\"n\":1}");
	char *id = put_services(sb, WEB("[{\"id\":\"api\",\"path_prefix\":\"/api\","
	                                "\"rewrite_prefix\":\"/v1\",\"methods\":[\"POST\"]},"
	                                "{\"id\":\"site\",\"path_prefix\":\"/\",\"methods\":[\"GET\"]}]"));
	th_resp r;
	route_do("GET", id, "/", NULL, NULL, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body, "<h1>hello</h1>");
	char *ct = th_header(&r, "Content-Type");
	ck_assert_str_eq(ct, "text/html");
	free(ct);
	th_resp_free(&r);
	route_do("GET", id, "/data.json?x=1", NULL, NULL, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body, "{\"n\":1}");
	th_resp_free(&r);
	route_do("GET", id, "/missing", NULL, NULL, &r);
	ck_assert_int_eq(r.status, 404); /* the service's own 404 */
	th_resp_free(&r);

	/* a POST body of 1 MiB round-trips; the prefix is rewritten */
	size_t n = 1 << 20;
	char *big = malloc(n + 1);
	for (size_t i = 0; i < n; i++)
		big[i] = (char)('a' + i % 26);
	big[n] = 0;
	route_do("POST", id, "/api/items", NULL, big, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_uint_eq(r.body_len, n);
	ck_assert(!memcmp(r.body, big, n));
	char *m = th_header(&r, "X-Sim-Method"), *path = th_header(&r, "X-Sim-Path");
	ck_assert_str_eq(m, "POST");
	ck_assert_str_eq(path, "/v1/items");
	free(m);
	free(path);
	th_resp_free(&r);
	free(big);
	route_do("POST", id, "/index.html", NULL, "x", &r);
	ck_assert_int_eq(r.status, 405);
	th_resp_free(&r);

	/* by Host: {id}.example.test, any port, any case */
	char *host = s0__asprintf("%s.EXAMPLE.test:%d", id, cs_sv.port);
	char *u = th_url(cs_sv.port, "/index.html");
	char *hh = s0__asprintf("Host: %s", host);
	const char *h[] = {hh, NULL};
	th_req q = {.url = u, .headers = h};
	ck_assert_int_eq(th_do(&q, &r), 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body, "<h1>hello</h1>");
	th_resp_free(&r);
	/* an absolute name (one trailing dot) is the same host */
	char *hd = s0__asprintf("Host: %s.example.test.:%d", id, cs_sv.port);
	const char *hdots[] = {hd, NULL};
	th_req qd = {.url = u, .headers = hdots};
	ck_assert_int_eq(th_do(&qd, &r), 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body, "<h1>hello</h1>");
	th_resp_free(&r);
	free(hd);
	char *p = s0__asprintf("/api/v1/sandboxes/%s/services", sb);
	cJSON *j = call("GET", p, KEY_A, NULL, 200);
	char *want = s0__asprintf("http://%s.example.test/", id);
	const cJSON *d = cJSON_GetObjectItem(j, "data");
	ck_assert_str_eq(s0__json_str0(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "services"), 0),
	                               "public_url"),
	                 want);
	ck_assert_str_eq(s0__json_str0(d, "exposure_domain"), "example.test");
	cJSON_Delete(j);
	free(want);
	free(p);
	free(hh);
	free(u);
	free(host);
	free(id);
	free(sb);
}
END_TEST

/* PUB-04: hostile paths and unknown routes. */
/* The status of a raw request head sent to port (0 when no status line). */
static long raw_status(int port, const char *req)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	ck_assert_int_eq(send(fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
	char got[64] = {0};
	size_t n = 0;
	for (ssize_t k; n < sizeof got - 1 && (k = recv(fd, got + n, sizeof got - 1 - n, 0)) > 0;)
		n += (size_t)k;
	close(fd);
	long status = 0;
	return sscanf(got, "HTTP/1.1 %ld", &status) == 1 ? status : 0;
}

START_TEST(proxy_refuses_hostile_targets)
{
	char *sb = claim(KEY_A, true);
	char *id = put_services(sb, WEB("[{\"id\":\"all\"}]"));
	static const char *const hostile[] = {"/a/%2e%2e/b", "/a/%2E./b", "/a%2fb", "/a%5cb",
	                                      "/a/%00", "/a%0d%0aX-Evil:%201", "/a%0A",
	                                      "/a%1f", "/a%7F"};
	th_resp r;
	for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
		route_do("GET", id, hostile[i], NULL, NULL, &r);
		ck_assert_msg(r.status == 400, "%s: %ld", hostile[i], r.status);
		cJSON *j = resp_json(&r);
		ck_assert_str_eq(err_code(j), "bad_request");
		cJSON_Delete(j);
		th_resp_free(&r);
	}
	/* control characters outside the path never reach the service either: a
	 * bare CR in a header value (a second header to a server that ends lines
	 * at CR), a raw control character in the query or the method */
	static const char *const heads[][2] = {
		{"GET /r/", "/ HTTP/1.1\r\nHost: x\r\nX-A: a\rX-Evil: 1\r\nConnection: close\r\n\r\n"},
		{"GET /r/", "/ HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\nConnection: close\r\n\r\n"},
		{"GET /r/", "/?a=\x01b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"},
		{"GE\x01T /r/", "/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"}};
	for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
		char *req = s0__asprintf("%s%s%s", heads[i][0], id, heads[i][1]);
		long st = raw_status(cs_sv.port, req);
		ck_assert_msg(st == 400, "head %zu: %ld", i, st);
		free(req);
	}
	/* a body streams through (route_upload.h): 9 MiB reach the service and
	 * come back whole; a hostile path with a body is still 400 */
	size_t n = (9u << 20) + 1;
	char *big = malloc(n + 1);
	memset(big, 'x', n);
	big[n] = 0;
	route_do("POST", id, "/", NULL, big, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_uint_eq(r.body_len, n);
	th_resp_free(&r);
	route_do("POST", id, "/a/%2e%2e/b", NULL, big, &r);
	ck_assert_int_eq(r.status, 400);
	th_resp_free(&r);
	free(big);
	route_do("GET", "unknownpublicid", "/", NULL, NULL, &r);
	ck_assert_int_eq(r.status, 404);
	th_resp_free(&r);
	route_do("GET", "UPPER", "/", NULL, NULL, &r);
	ck_assert_int_eq(r.status, 404);
	th_resp_free(&r);
	/* Host: only one label of letters and digits directly under the domain names
	 * a route; anything else is no route (the API's 401 without a key) */
	ck_assert_int_eq(s0_server_set_public_domain(cs_sv.srv, "example.test", NULL), S0_OK);
	ck_assert_int_eq(s0_server_set_public_domain(cs_sv.srv, "bad_name!", NULL), S0_EINVAL);
	static const struct {
		const char *host;
		long status;
	} hosts[] = {{"unknownid.example.test", 404}, {"a.b.example.test", 401},
	             {"x_y.example.test", 401},      {"example.test", 401},
	             {"x.example.test.evil.test", 401}, {"x.example.test:99999x", 401},
	             {"unknownid.example.test.", 404}, {"unknownid.example.test..", 401},
	             {"example.test.", 401}};
	char *u = th_url(cs_sv.port, "/api/v1/sandboxes");
	for (size_t i = 0; i < sizeof hosts / sizeof hosts[0]; i++) {
		char *hh = s0__asprintf("Host: %s", hosts[i].host);
		const char *h[] = {hh, NULL};
		th_req q = {.url = u, .headers = h};
		ck_assert_int_eq(th_do(&q, &r), 0);
		ck_assert_msg(r.status == hosts[i].status, "%s: %ld", hosts[i].host, r.status);
		th_resp_free(&r);
		free(hh);
	}
	free(u);
	/* no key needed on a route, and an API path is no route */
	cJSON_Delete(call("GET", "/api/v1/sandboxes", NULL, NULL, 401));
	free(id);
	free(sb);
}
END_TEST

/* PUB-05: inbound HTTP to a paused sandbox's resume route wakes it and
 * gets the real answer (the service's command is run again in the new
 * generation); the public URL is the same across generations. */
START_TEST(inbound_http_wakes_a_paused_sandbox)
{
	char *sb = claim(KEY_A, true);
	write_file(sb, "/www/index.html", "persisted");
	char *id = put_services(sb, WEB("[{\"id\":\"all\",\"resume\":true}]"));
	th_resp r;
	route_do("GET", id, "/", NULL, NULL, &r);
	ck_assert_int_eq(r.status, 200);
	th_resp_free(&r);
	cJSON *j = sandbox(sb);
	int64_t gen = (int64_t)cJSON_GetObjectItem(cJSON_GetObjectItem(j, "data"),
	                                           "runtime_generation")->valuedouble;
	cJSON_Delete(j);
	pause_sb(sb);
	route_do("GET", id, "/", NULL, NULL, &r);
	ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
	ck_assert_str_eq(r.body, "persisted");
	th_resp_free(&r);
	j = sandbox(sb);
	const cJSON *d = cJSON_GetObjectItem(j, "data");
	ck_assert_str_eq(s0__json_str0(d, "status"), "running");
	ck_assert_int_gt((int64_t)cJSON_GetObjectItem(d, "runtime_generation")->valuedouble, gen);
	cJSON_Delete(j);
	char *id2 = put_services(sb, WEB("[{\"id\":\"all\",\"resume\":true}]"));
	ck_assert_str_eq(id2, id); /* same URL in the new generation */
	/* after a memory pause too: sockets never survive a checkpoint, so the
	 * restored generation runs the service's command again */
	s0_client *c = cs_client(cs_sv.srv, KEY_A, NULL);
	s0_wait_options wo = S0_WAIT_OPTIONS_INIT;
	wo.memory = S0_BOOL_TRUE;
	ck_assert_int_eq(s0_sandbox_pause_and_wait(c, sb, &wo, NULL, NULL), S0_OK);
	s0_client_free(c);
	route_do("GET", id, "/", NULL, NULL, &r);
	ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
	ck_assert_str_eq(r.body, "persisted");
	th_resp_free(&r);
	/* deleting the sandbox takes its route with it */
	char *del = s0__asprintf("/api/v1/sandboxes/%s", sb);
	cJSON_Delete(call("DELETE", del, KEY_A, NULL, 202));
	lf_quiesce(&cs_sv.f);
	route_do("GET", id, "/", NULL, NULL, &r);
	ck_assert_int_eq(r.status, 404);
	th_resp_free(&r);
	char *text = NULL;
	char owner[S0__ID_MAX];
	ck_assert_int_eq(s0__meta_services_get(cs_sv.f.engine->meta, sb, &text, NULL), S0_ENOTFOUND);
	ck_assert_int_eq(s0__meta_route_find(cs_sv.f.engine->meta, id, owner, NULL), S0_ENOTFOUND);
	free(del);
	free(id2);
	free(id);
	free(sb);
}
END_TEST

/* PUB-06: a wake that fails answers 503 sandbox_resume_failed; a route
 * without resume does not wake (503 unavailable) and the sandbox stays paused. */
START_TEST(failed_wake_and_no_resume_route)
{
	char *sb = claim(KEY_A, true);
	char *id = put_services(sb, WEB("[{\"id\":\"wake\",\"path_prefix\":\"/wake\",\"resume\":true},"
	                                "{\"id\":\"nowake\",\"path_prefix\":\"/\"}]"));
	pause_sb(sb);
	th_resp r;
	route_do("GET", id, "/", NULL, NULL, &r);
	ck_assert_int_eq(r.status, 503);
	cJSON *j = resp_json(&r);
	ck_assert_str_eq(err_code(j), "unavailable");
	cJSON_Delete(j);
	th_resp_free(&r);
	ck_assert_int_eq(s0_local_fault_arm(cs_sv.f.local, "capacity", S0_FAULT_FAIL, 0, 0, NULL), S0_OK);
	route_do("GET", id, "/wake", NULL, NULL, &r);
	ck_assert_int_eq(r.status, 503);
	j = resp_json(&r);
	ck_assert_str_eq(err_code(j), "sandbox_resume_failed");
	cJSON_Delete(j);
	th_resp_free(&r);
	ck_assert_int_eq(s0_local_fault_release(cs_sv.f.local, "capacity", NULL), S0_OK);
	j = sandbox(sb);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "data"), "paused")));
	cJSON_Delete(j);
	free(id);
	free(sb);
}
END_TEST

/* PUB-12: a client that hangs up in the middle of a streamed body
 * (route_upload.h) ends that request only: the handler sees the hang-up
 * and stops, the request completes within seconds though the server keeps
 * its default 60 s idle timeout (the suspended connection's socket is
 * watched for the hang-up) and the route answers the next one. */
START_TEST(client_hangs_up_mid_body)
{
	char *sb = claim(KEY_A, true);
	write_file(sb, "/www/index.html", "still here");
	char *id = put_services(sb, WEB("[{\"id\":\"all\"}]"));
	static const s0_server_api_key keys[] = {{KEY_A, "team_a"}};
	s0_server_options o = S0_SERVER_OPTIONS_INIT;
	o.api_keys = keys;
	o.api_keys_len = 1;
	s0_server *srv = NULL;
	ck_assert_int_eq(s0_server_new(cs_sv.f.local, &o, &srv, NULL), S0_OK);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)s0_server_port(srv)),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	char *head = s0__asprintf("POST /r/%s/ HTTP/1.1\r\nHost: x\r\n"
	                          "Content-Length: 10485760\r\n\r\n", id);
	ck_assert_int_eq(send(fd, head, strlen(head), MSG_NOSIGNAL), (ssize_t)strlen(head));
	char part[65536];
	memset(part, 'x', sizeof part);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(send(fd, part, sizeof part, MSG_NOSIGNAL), (ssize_t)sizeof part);
	close(fd); /* 256 KiB of 10 MiB sent */
	/* the default connection timeout (60 s): the hang-up itself must end it */
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until); /* srv->cv's clock */
	until.tv_sec += 5;
	pthread_mutex_lock(&srv->mu);
	while (srv->active && pthread_cond_timedwait(&srv->cv, &srv->mu, &until) == 0)
		;
	int active = srv->active;
	pthread_mutex_unlock(&srv->mu);
	ck_assert_int_eq(active, 0);
	char *p = s0__asprintf("/r/%s/", id);
	th_resp r;
	ck_assert_int_eq(th_simple(s0_server_port(srv), "GET", p, NULL, NULL, &r), 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body, "still here");
	th_resp_free(&r);
	s0_server_free(srv);
	free(p);
	free(head);
	free(id);
	free(sb);
}
END_TEST

/* PUB-07: auto_resume cannot be turned off while a resume route exists. */
START_TEST(auto_resume_guard)
{
	char *sb = claim(KEY_A, true);
	free(put_services(sb, WEB("[{\"id\":\"all\",\"resume\":true}]")));
	char *p = s0__asprintf("/api/v1/sandboxes/%s", sb);
	cJSON *j = call("PUT", p, KEY_A, "{\"config\":{\"auto_resume\":false}}", 409);
	ck_assert_ptr_nonnull(strstr(err_message(j), "resume: true"));
	cJSON_Delete(j);
	j = sandbox(sb);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "data"), "auto_resume")));
	cJSON_Delete(j);
	free(put_services(sb, WEB("[{\"id\":\"all\",\"resume\":false}]")));
	cJSON_Delete(call("PUT", p, KEY_A, "{\"config\":{\"auto_resume\":false}}", 200));
	free(p);
	free(sb);
}
END_TEST

/* PUB-01: services given at claim (config.services, the SDKs' claim option)
 * are checked before the sandbox exists and stored with it. */
START_TEST(claim_with_services)
{
	cJSON *j = call("POST", "/api/v1/sandboxes", KEY_A,
	                "{\"template\":\"default\",\"config\":{\"services\":[{\"id\":\"m\","
	                "\"port\":9000,\"runtime\":{\"type\":\"manual\"},\"ingress\":{\"public\":"
	                "true,\"routes\":[{\"id\":\"r\",\"resume\":true}]}}]}}",
	                400);
	ck_assert_ptr_nonnull(strstr(err_message(j), "restartable"));
	cJSON_Delete(j);
	j = call("GET", "/api/v1/sandboxes", KEY_A, NULL, 200);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "data"),
	                                                        "sandboxes")), 0);
	cJSON_Delete(j);
	j = call("POST", "/api/v1/sandboxes", KEY_A,
	         "{\"template\":\"default\",\"config\":{\"services\":[{\"id\":\"web\","
	         "\"port\":8080,\"ingress\":{\"public\":true}}]}}",
	         201);
	char *sb = strdup(s0__json_str0(cJSON_GetObjectItem(j, "data"), "sandbox_id"));
	cJSON_Delete(j);
	char *p = s0__asprintf("/api/v1/sandboxes/%s/services", sb);
	j = call("GET", p, KEY_A, NULL, 200);
	const cJSON *s = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "data"),
	                                                        "services"), 0);
	ck_assert_str_eq(s0__json_str0(s, "id"), "web");
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(s, "publishable")));
	cJSON_Delete(j);
	free(p);
	free(sb);
}
END_TEST

/* PUB-08: a port nothing listens on (manual runtime, or a cmd runtime whose
 * command fails) is a 502. */
START_TEST(nothing_listening_is_bad_gateway)
{
	char *sb = claim(KEY_A, true);
	char *id = put_services(sb, "{\"services\":[{\"id\":\"m\",\"port\":9000,\"runtime\":{\"type\""
	                            ":\"manual\"},\"ingress\":{\"public\":true}}]}");
	th_resp r;
	route_do("GET", id, "/", NULL, NULL, &r);
	ck_assert_int_eq(r.status, 502);
	cJSON *j = resp_json(&r);
	ck_assert_str_eq(err_code(j), "bad_gateway");
	cJSON_Delete(j);
	th_resp_free(&r);
	free(id);
	/* a cmd runtime whose command fails is a 502 at once, not a wait */
	id = put_services(sb, "{\"services\":[{\"id\":\"f\",\"port\":9001,\"runtime\":{\"type\""
	                      ":\"cmd\",\"command\":[\"false\"]},\"ingress\":{\"public\":true}}]}");
	route_do("GET", id, "/", NULL, NULL, &r);
	ck_assert_int_eq(r.status, 502);
	j = resp_json(&r);
	ck_assert_ptr_nonnull(strstr(err_message(j), "exited with status 1"));
	ck_assert(r.seconds < 10);
	cJSON_Delete(j);
	th_resp_free(&r);
	free(id);
	free(sb);
}
END_TEST

/* One concurrent route request (route_flood). */
typedef struct flood_req {
	const char *id, *method, *rest;
	th_resp r;
} flood_req;

static pthread_mutex_t flood_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t flood_cv = PTHREAD_COND_INITIALIZER;
static int flood_done;

static void *flood_main(void *arg)
{
	flood_req *q = arg;
	char *p = s0__asprintf("/r/%s%s", q->id, q->rest);
	char *u = th_url(cs_sv.port, p);
	const char *h[] = {"Content-Type: text/plain", NULL};
	bool post = !strcmp(q->method, "POST");
	th_req rq = {.method = q->method, .url = u, .headers = h, .body = post ? "x" : NULL,
	             .body_len = post ? 1 : 0};
	th_do(&rq, &q->r);
	free(u);
	free(p);
	pthread_mutex_lock(&flood_mu);
	flood_done++;
	pthread_cond_broadcast(&flood_cv);
	pthread_mutex_unlock(&flood_mu);
	return NULL;
}

/* Start n concurrent requests to /r/{id}{rest} on threads th (answers into
 * reqs); flood_done counts the answered ones. */
static void flood_start(pthread_t *th, flood_req *reqs, int n, const char *id,
                        const char *method, const char *rest)
{
	ck_assert_int_le(n, 64);
	pthread_mutex_lock(&flood_mu);
	flood_done = 0;
	pthread_mutex_unlock(&flood_mu);
	for (int i = 0; i < n; i++) {
		reqs[i] = (flood_req){.id = id, .method = method, .rest = rest};
		ck_assert_int_eq(pthread_create(&th[i], NULL, flood_main, &reqs[i]), 0);
	}
}

/* Wait (30 s at most) until n requests of the flood have answered. */
static void flood_wait(int n)
{
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 30;
	pthread_mutex_lock(&flood_mu);
	int w = 0;
	while (flood_done < n && w == 0)
		w = pthread_cond_timedwait(&flood_cv, &flood_mu, &dl);
	int done = flood_done;
	pthread_mutex_unlock(&flood_mu);
	ck_assert_msg(done >= n, "%d of %d answered in 30 s", done, n);
}

/* n concurrent requests to /r/{id}{rest}; each answer into reqs. */
static void route_flood(flood_req *reqs, int n, const char *id, const char *method,
                        const char *rest)
{
	pthread_t th[64];
	flood_start(th, reqs, n, id, method, rest);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

static int contexts_of(const char *sb)
{
	char *p = s0__asprintf("/api/v1/sandboxes/%s/contexts", sb);
	cJSON *j = call("GET", p, KEY_A, NULL, 200);
	const cJSON *d = cJSON_GetObjectItem(j, "data");
	int n = cJSON_GetArraySize(cJSON_IsArray(d) ? d : cJSON_GetObjectItem(d, "contexts"));
	cJSON_Delete(j);
	free(p);
	return n;
}

/* Ordinary requests are not starved: /healthz answers 200 within 2 s. */
static void assert_healthz_prompt(void)
{
	th_resp r;
	ck_assert_int_eq(th_simple(cs_sv.port, "GET", "/healthz", NULL, NULL, &r), 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert_msg(r.seconds < 2, "healthz took %.2f s", r.seconds);
	th_resp_free(&r);
}

/* PUB-14: a service's port that does not answer a connect (a full or hung
 * listener: fault port_no_answer) answers 504 at once and never starts the
 * command again; many such requests leave /healthz prompt and the server
 * stops promptly. A refused port starts the command once for many
 * concurrent requests, which all get the real answer. */
START_TEST(silent_port_is_gateway_timeout)
{
	enum { N = 24 }; /* under S0__ROUTE_HOLD_MAX: the bound is route_holds_are_bounded's */
	static flood_req reqs[N];
	char *sb = claim(KEY_A, true);
	write_file(sb, "/www/hello.txt", "hello");
	char *id = put_services(sb, WEB("[{\"id\":\"all\",\"path_prefix\":\"/\",\"resume\":true}]"));
	ck_assert_int_eq(s0_local_fault_arm(cs_sv.f.local, "port_no_answer", S0_FAULT_FAIL, 0, 0,
	                                    NULL),
	                 S0_OK);
	route_flood(reqs, N, id, "POST", "/up");
	for (int i = 0; i < N; i++) {
		ck_assert_msg(reqs[i].r.status == 504, "request %d: %ld %s", i, reqs[i].r.status,
		              reqs[i].r.body ? reqs[i].r.body : "");
		ck_assert_msg(reqs[i].r.seconds < 10, "request %d took %.2f s", i, reqs[i].r.seconds);
		cJSON *j = resp_json(&reqs[i].r);
		ck_assert_str_eq(err_code(j), "gateway_timeout");
		cJSON_Delete(j);
		th_resp_free(&reqs[i].r);
	}
	ck_assert_int_eq(contexts_of(sb), 0); /* no start on a silent port */
	assert_healthz_prompt();
	ck_assert_int_eq(s0_local_fault_release(cs_sv.f.local, "port_no_answer", NULL), S0_OK);

	/* refused: one start for all of them */
	route_flood(reqs, N, id, "GET", "/hello.txt");
	for (int i = 0; i < N; i++) {
		ck_assert_msg(reqs[i].r.status == 200, "request %d: %ld %s", i, reqs[i].r.status,
		              reqs[i].r.body ? reqs[i].r.body : "");
		ck_assert_str_eq(reqs[i].r.body, "hello");
		th_resp_free(&reqs[i].r);
	}
	ck_assert_int_eq(contexts_of(sb), 1);

	/* a command that never listens: its requests wait for the port (45 s
	 * budget); the server's stop ends those waits at once */
	char *id2 = put_services(sb, "{\"services\":[{\"id\":\"slow\",\"port\":9002,"
	                             "\"runtime\":{\"type\":\"cmd\",\"command\":[\"sleep\","
	                             "\"100\"]},\"ingress\":{\"public\":true}}]}");
	pthread_t th[4];
	flood_start(th, reqs, 4, id2, "GET", "/");
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (contexts_of(sb) < 2) { /* the start is in (explicit deadline) */
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ck_assert_msg(t1.tv_sec - t0.tv_sec < 30, "the command was not started in 30 s");
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	s0_server_free(cs_sv.srv);
	cs_sv.srv = NULL;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_msg(t1.tv_sec - t0.tv_sec < 5, "the server took %ld s to stop",
	              (long)(t1.tv_sec - t0.tv_sec));
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		/* 503 "the server is stopping", or the connection closed */
		ck_assert_msg(reqs[i].r.status == 503 || reqs[i].r.status == 0, "request %d: %ld", i,
		              reqs[i].r.status);
		ck_assert_msg(reqs[i].r.seconds < 10, "request %d took %.2f s", i, reqs[i].r.seconds);
		th_resp_free(&reqs[i].r);
	}
	free(id2);
	free(id);
	free(sb);
}
END_TEST

/* PUB-15: one route holds at most S0__ROUTE_HOLD_MAX handler threads: with
 * its sandbox's wake held (fault resume_delay), the requests past the bound
 * answer 503 with Retry-After at once and /healthz stays prompt; the held
 * ones get the real answer once the wake goes on. */
/* PUB-14: a command slow to listen (it sleeps 5 s of the backend's clock
 * first) is started once, also for requests refused after its start
 * returned and before it listens; they all get the real answer. */
START_TEST(slow_listener_started_once)
{
	enum { N = 16 };
	static flood_req first[1], late[N];
	pthread_t th1[1], th[N];
	char *sb = claim(KEY_A, true);
	write_file(sb, "/www/hello.txt", "hello");
	char *id = put_services(sb, "{\"services\":[{\"id\":\"web\",\"port\":8080,\"runtime\":"
	                            "{\"type\":\"cmd\",\"command\":[\"sh\",\"-c\",\"sleep 5; "
	                            "httpd -p 8080 -h /www\"]},\"ingress\":{\"public\":true}}]}");
	flood_start(th1, first, 1, id, "GET", "/hello.txt");
	for (int i = 0; contexts_of(sb) == 0; i++) /* the start returned; nothing listens yet */
		ck_assert_msg(i < 30000, "the command never started");
	flood_start(th, late, N, id, "GET", "/hello.txt");
	/* the late requests are all in the proxy (each holds a place of the route) */
	for (int i = 0; s0__route_hold_count(id) < 1 + N; i++) {
		ck_assert_msg(i < 10000000, "the late requests never all arrived");
		sched_yield();
	}
	ck_assert_int_eq(s0_local_clock_advance(cs_sv.f.local, 5000, NULL), S0_OK);
	pthread_join(th1[0], NULL);
	for (int i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	ck_assert_msg(first[0].r.status == 200, "first: %ld", first[0].r.status);
	th_resp_free(&first[0].r);
	for (int i = 0; i < N; i++) {
		ck_assert_msg(late[i].r.status == 200, "late request %d: %ld %s", i, late[i].r.status,
		              late[i].r.body ? late[i].r.body : "");
		ck_assert_str_eq(late[i].r.body, "hello");
		th_resp_free(&late[i].r);
	}
	ck_assert_int_eq(contexts_of(sb), 1); /* one start for all of them */
	free(id);
	free(sb);
}
END_TEST

START_TEST(route_holds_are_bounded)
{
	enum { N = S0__ROUTE_HOLD_MAX + 16 };
	static flood_req reqs[N];
	pthread_t th[N];
	char *sb = claim(KEY_A, true);
	write_file(sb, "/www/hello.txt", "hello");
	char *id = put_services(sb, WEB("[{\"id\":\"all\",\"path_prefix\":\"/\",\"resume\":true}]"));
	pause_sb(sb);
	ck_assert_int_eq(s0_local_fault_arm(cs_sv.f.local, "resume_delay", S0_FAULT_HOLD, 0, 0, NULL),
	                 S0_OK);
	flood_start(th, reqs, N, id, "GET", "/hello.txt");
	flood_wait(N - S0__ROUTE_HOLD_MAX); /* the refused ones, while the others wait */
	assert_healthz_prompt();
	ck_assert_int_eq(s0_local_fault_release(cs_sv.f.local, "resume_delay", NULL), S0_OK);
	for (int i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	int ok = 0, busy = 0;
	for (int i = 0; i < N; i++) {
		th_resp *q = &reqs[i].r;
		if (q->status == 200) {
			ck_assert_str_eq(q->body, "hello");
			ok++;
		} else {
			ck_assert_msg(q->status == 503, "request %d: %ld %s", i, q->status,
			              q->body ? q->body : "");
			char *ra = th_header(q, "Retry-After");
			ck_assert_ptr_nonnull(ra);
			free(ra);
			busy++;
		}
		th_resp_free(q);
	}
	ck_assert_int_eq(busy, N - S0__ROUTE_HOLD_MAX);
	ck_assert_int_eq(ok, S0__ROUTE_HOLD_MAX);
	free(id);
	free(sb);
}
END_TEST

static Suite *routes_suite(void)
{
	Suite *s = suite_create("routes");
	TCase *t = tcase_create("routes");
	tcase_set_timeout(t, 120);
	tcase_add_checked_fixture(t, cs_served_setup, cs_served_teardown);
	tcase_add_test(t, services_replace_list_and_clear);
	tcase_add_test(t, services_bad_input);
	tcase_add_test(t, proxy_get_and_post);
	tcase_add_test(t, proxy_refuses_hostile_targets);
	tcase_add_test(t, inbound_http_wakes_a_paused_sandbox);
	tcase_add_test(t, failed_wake_and_no_resume_route);
	tcase_add_test(t, auto_resume_guard);
	tcase_add_test(t, nothing_listening_is_bad_gateway);
	tcase_add_test(t, client_hangs_up_mid_body);
	tcase_add_test(t, claim_with_services);
	tcase_add_test(t, silent_port_is_gateway_timeout);
	tcase_add_test(t, slow_listener_started_once);
	tcase_add_test(t, route_holds_are_bounded);
	suite_add_tcase(s, t);
	return s;
}

Suite *s0_sse_suite(void); /* check_sse.c */

S0_TEST_MAIN(routes_suite, s0_sse_suite)
