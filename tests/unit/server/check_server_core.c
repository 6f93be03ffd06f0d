/* The HTTP adapter over a stub handler: auth, request ids, limits, threads, shutdown. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/json.h"
#include "check_main.h"
#include "server_test.h"

static stub st;

static void setup(void)
{
	stub_init(&st);
}

static cJSON *get_json(int port, const char *method, const char *path, const char *key,
                       long *status)
{
	th_resp r;
	th_simple(port, method, path, key, NULL, &r);
	*status = r.status;
	cJSON *j = resp_json(&r);
	th_resp_free(&r);
	return j;
}

START_TEST(public_routes_need_no_key)
{
	s0_server *s = start_stub_server(&st, NULL);
	long status;
	cJSON *j = get_json(s0_server_port(s), "GET", "/healthz", NULL, &status);
	ck_assert_int_eq(status, 200);
	ck_assert_str_eq(s0__json_str0(j, "team"), "");
	cJSON_Delete(j);
	j = get_json(s0_server_port(s), "GET", "/metadata", NULL, &status);
	ck_assert_int_eq(status, 200);
	cJSON_Delete(j);
	s0_server_free(s);
}
END_TEST

static void expect_401(int port, const char *const *headers, const char *message)
{
	char *url = th_url(port, "/api/v1/sandboxes");
	th_req q = {.url = url, .headers = headers};
	th_resp r;
	ck_assert_int_eq(th_do(&q, &r), 0);
	ck_assert_int_eq(r.status, 401);
	cJSON *j = resp_json(&r);
	ck_assert_ptr_nonnull(j);
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(j, "success")));
	ck_assert_str_eq(err_code(j), "unauthorized");
	ck_assert_str_eq(err_message(j), message);
	char *rid = th_header(&r, "X-Request-ID");
	ck_assert_ptr_nonnull(rid);
	free(rid);
	char *ct = th_header(&r, "Content-Type");
	ck_assert_ptr_nonnull(strstr(ct, "application/json"));
	free(ct);
	cJSON_Delete(j);
	th_resp_free(&r);
	free(url);
}

START_TEST(auth_failures_are_401_envelopes)
{
	s0_server *s = start_stub_server(&st, NULL);
	int port = s0_server_port(s);
	expect_401(port, NULL, "missing authorization header");
	const char *basic[] = {"Authorization: Basic abc", NULL};
	expect_401(port, basic, "invalid authorization header format");
	const char *unknown[] = {"Authorization: Bearer s0_not_a_known_key_123", NULL};
	expect_401(port, unknown, "invalid token");
	const char *jwt[] = {"Authorization: Bearer eyJhbGciOi.x.y", NULL};
	expect_401(port, jwt, "invalid token");
	const char *prefix[] = {"Authorization: Bearer " KEY_A "x", NULL};
	expect_401(port, prefix, "invalid token");
	const char *team[] = {"Authorization: Bearer " KEY_A, "X-Team-ID: team_b", NULL};
	expect_401(port, team, "not a member of selected team");
	/* two selectors, the key's team first: the other one still selects a team
	 * the key is not a member of (not "the first one wins") */
	const char *two[] = {"Authorization: Bearer " KEY_A, "X-Team-ID: team_a",
	                     "X-Team-ID: team_b", NULL};
	expect_401(port, two, "not a member of selected team");
	/* with a body on the way the answer comes before it is read */
	th_resp r;
	ck_assert_int_eq(th_simple(port, "POST", "/api/v1/sandboxes", NULL, "{\"template\":\"x\"}", &r), 0);
	ck_assert_int_eq(r.status, 401);
	th_resp_free(&r);
	ck_assert_int_eq(st.calls, 0);
	s0_server_free(s);
}
END_TEST

START_TEST(keys_select_their_team)
{
	s0_server *s = start_stub_server(&st, NULL);
	int port = s0_server_port(s);
	long status;
	cJSON *j = get_json(port, "GET", "/api/v1/sandboxes", KEY_A, &status);
	ck_assert_int_eq(status, 200);
	ck_assert_str_eq(s0__json_str0(j, "team"), "team_a");
	cJSON_Delete(j);
	j = get_json(port, "GET", "/api/v1/sandboxes", KEY_B, &status);
	ck_assert_str_eq(s0__json_str0(j, "team"), "team_b");
	cJSON_Delete(j);
	/* scheme is case-insensitive; a matching team selector is fine */
	char *url = th_url(port, "/x");
	const char *hs[] = {"Authorization: bearer " KEY_A, "X-Team-ID: team_a", NULL};
	th_req q = {.url = url, .headers = hs};
	th_resp r;
	th_do(&q, &r);
	ck_assert_int_eq(r.status, 200);
	th_resp_free(&r);
	free(url);
	s0_server_free(s);
}
END_TEST

START_TEST(anonymous_team_for_requests_without_a_key)
{
	s0_server_options o = S0_SERVER_OPTIONS_INIT;
	o.anonymous_team_id = "team_local";
	s0_server *s = start_stub_server(&st, &o);
	long status;
	cJSON *j = get_json(s0_server_port(s), "GET", "/api/v1/sandboxes", NULL, &status);
	ck_assert_int_eq(status, 200);
	ck_assert_str_eq(s0__json_str0(j, "team"), "team_local");
	cJSON_Delete(j);
	j = get_json(s0_server_port(s), "GET", "/api/v1/sandboxes", "s0_wrong_key_12345", &status);
	ck_assert_int_eq(status, 401);
	cJSON_Delete(j);
	s0_server_free(s);
}
END_TEST

START_TEST(request_id_echoed_or_generated)
{
	s0_server *s = start_stub_server(&st, NULL);
	int port = s0_server_port(s);
	char *url = th_url(port, "/healthz");
	const char *hs[] = {"X-Request-ID: my-req-42", NULL};
	th_req q = {.url = url, .headers = hs};
	th_resp r;
	th_do(&q, &r);
	char *rid = th_header(&r, "X-Request-ID");
	ck_assert_str_eq(rid, "my-req-42");
	ck_assert_str_eq(st.last_rid, "my-req-42");
	free(rid);
	th_resp_free(&r);
	/* absent or malformed: a fresh UUID, also on 401s */
	const char *bad[] = {"X-Request-ID: has space", NULL};
	q.headers = bad;
	th_do(&q, &r);
	rid = th_header(&r, "X-Request-ID");
	ck_assert_uint_eq(strlen(rid), 36);
	free(rid);
	th_resp_free(&r);
	free(url);
	url = th_url(port, "/api/v1/sandboxes");
	q = (th_req){.url = url};
	th_do(&q, &r);
	ck_assert_int_eq(r.status, 401);
	rid = th_header(&r, "X-Request-ID");
	ck_assert_uint_eq(strlen(rid), 36);
	free(rid);
	th_resp_free(&r);
	free(url);
	s0_server_free(s);
}
END_TEST

START_TEST(raw_path_and_query_reach_the_handler)
{
	s0_server *s = start_stub_server(&st, NULL);
	long status;
	cJSON *j = get_json(s0_server_port(s), "GET",
	                    "/api/v1/sandboxes/a%2Fb/files?path=%2Fx%26y&mkdir=true&flag", KEY_A,
	                    &status);
	ck_assert_int_eq(status, 200);
	ck_assert_str_eq(s0__json_str0(j, "path"), "/api/v1/sandboxes/a%2Fb/files");
	ck_assert_str_eq(s0__json_str0(j, "query"), "path=%2Fx%26y&mkdir=true&flag");
	cJSON_Delete(j);
	s0_server_free(s);
}
END_TEST

static void post_413(int port, const char *path, const char *body, size_t len, bool chunked,
                     bool expect, const char *code)
{
	char *url = th_url(port, path);
	const char *hs[] = {"Authorization: Bearer " KEY_A, NULL};
	th_req q = {.method = "POST", .url = url, .headers = hs, .body = body, .body_len = len,
	            .chunked = chunked, .expect_continue = expect};
	th_resp r;
	th_do(&q, &r);
	ck_assert_int_eq(r.status, 413);
	cJSON *j = resp_json(&r);
	ck_assert_str_eq(err_code(j), code);
	cJSON_Delete(j);
	th_resp_free(&r);
	free(url);
}

/* With and without Expect: 100-continue. */
static void expect_413(int port, const char *path, size_t len, bool chunked, const char *code)
{
	char *body = malloc(len);
	memset(body, 'x', len);
	post_413(port, path, body, len, chunked, false, code);
	post_413(port, path, body, len, chunked, true, code);
	free(body);
}

START_TEST(bodies_over_the_limit_are_413)
{
	s0_server *s = start_stub_server(&st, NULL);
	int port = s0_server_port(s);
	expect_413(port, "/api/v1/sandboxes", 1025, false, "request_too_large");
	expect_413(port, "/api/v1/sandboxes", 5000, true, "request_too_large");
	expect_413(port, "/api/v1/sandboxes/x/files", 4097, false, "file_too_large");
	expect_413(port, "/api/v1/sandboxes/x/files", 4097, true, "file_too_large");
	expect_413(port, "/api/v1/sandboxes/x/files", 3 << 20, false, "file_too_large");
	ck_assert_int_eq(st.calls, 0);
	/* at the limit it goes through */
	char body[1024];
	memset(body, ' ', sizeof body);
	body[0] = '{';
	body[sizeof body - 1] = '}';
	char *url = th_url(port, "/api/v1/sandboxes");
	const char *hs[] = {"Authorization: Bearer " KEY_A, NULL};
	th_req q = {.method = "POST", .url = url, .headers = hs, .body = body,
	            .body_len = sizeof body, .expect_continue = true};
	th_resp r;
	th_do(&q, &r);
	ck_assert_int_eq(r.status, 200);
	cJSON *j = resp_json(&r);
	ck_assert_int_eq(s0__json_i64(j, "body_len", 0), 1024);
	cJSON_Delete(j);
	th_resp_free(&r);
	free(url);
	s0_server_free(s);
}
END_TEST

/* GET a request target of exactly target_len bytes ("/echo?q=aaa…") with extra headers. */
static void get_long(int port, size_t target_len, const char *const *extra, th_resp *out)
{
	char *url = th_url(port, "/echo?q=");
	size_t base = strlen(url), prefix = strlen("/echo?q=");
	ck_assert_uint_ge(target_len, prefix);
	char *full = malloc(base - prefix + target_len + 1);
	memcpy(full, url, base);
	memset(full + base, 'a', target_len - prefix);
	full[base - prefix + target_len] = '\0';
	const char *hs[260] = {"Authorization: Bearer " KEY_A};
	size_t n = 1;
	for (; extra && extra[n - 1] && n < 259; n++)
		hs[n] = extra[n - 1];
	hs[n] = NULL;
	th_req q = {.url = full, .headers = hs};
	th_do(&q, out);
	free(full);
	free(url);
}

static void expect_head_error(const th_resp *r, long status, const char *what)
{
	ck_assert_int_eq(r->status, status);
	cJSON *j = resp_json(r);
	ck_assert_msg(j, "not an envelope: %.200s", r->body ? r->body : "");
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(j, "success")));
	ck_assert_str_eq(err_code(j), "bad_request");
	ck_assert_ptr_nonnull(strstr(err_message(j), what));
	cJSON_Delete(j);
	char *rid = th_header(r, "X-Request-ID");
	ck_assert_ptr_nonnull(rid);
	free(rid);
}

static char *header_of(const char *name, size_t value_len)
{
	size_t n = strlen(name);
	char *h = malloc(n + 2 + value_len + 1);
	memcpy(h, name, n);
	memcpy(h + n, ": ", 2);
	memset(h + n + 2, 'v', value_len);
	h[n + 2 + value_len] = '\0';
	return h;
}

/* A request line or headers past our limits get our JSON envelope (414/431),
 * not libmicrohttpd's built-in HTML page: its connection pool is sized so
 * such heads reach the server's own checks (server_internal.h). */
START_TEST(long_request_heads_get_json_envelopes)
{
	s0_server *s = start_stub_server(&st, NULL);
	int port = s0_server_port(s);
	th_resp r;
	/* at the limit: through, with the whole query */
	get_long(port, S0__SERVER_URI_MAX, NULL, &r);
	ck_assert_int_eq(r.status, 200);
	cJSON *j = resp_json(&r);
	ck_assert_uint_eq(strlen(s0__json_str0(j, "query")), S0__SERVER_URI_MAX - strlen("/echo?"));
	cJSON_Delete(j);
	th_resp_free(&r);
	get_long(port, S0__SERVER_URI_MAX + 1, NULL, &r);
	expect_head_error(&r, 414, "request URI is too long");
	th_resp_free(&r);
	/* past libmicrohttpd's default 32 KiB pool, where it used to answer itself */
	get_long(port, 100 << 10, NULL, &r);
	expect_head_error(&r, 414, "request URI is too long");
	th_resp_free(&r);
	/* one big header, then many ordinary ones */
	char *ok = header_of("X-Big", S0__SERVER_HEADERS_MAX - 1024);
	const char *hs1[] = {ok, NULL};
	get_long(port, 64, hs1, &r);
	ck_assert_int_eq(r.status, 200);
	th_resp_free(&r);
	free(ok);
	char *big = header_of("X-Big", 60 << 10);
	const char *hs2[] = {big, NULL};
	get_long(port, 64, hs2, &r);
	expect_head_error(&r, 431, "request header fields are too large");
	th_resp_free(&r);
	free(big);
	char *many[200];
	const char *hs3[201];
	for (int i = 0; i < 200; i++) {
		many[i] = header_of("X-Many", 200);
		hs3[i] = many[i];
	}
	hs3[200] = NULL;
	get_long(port, 64, hs3, &r);
	expect_head_error(&r, 431, "request header fields are too large");
	th_resp_free(&r);
	for (int i = 0; i < 200; i++)
		free(many[i]);
	ck_assert_int_eq(st.calls, 2);
	/* past the pool itself only libmicrohttpd can answer (documented): no
	 * crash, the handler is not called, and the server keeps serving */
	get_long(port, 512 << 10, NULL, &r);
	ck_assert(r.status == 0 || r.status == 414 || r.status == 431);
	th_resp_free(&r);
	ck_assert_int_eq(st.calls, 2);
	long status;
	j = get_json(port, "GET", "/healthz", NULL, &status);
	ck_assert_int_eq(status, 200);
	cJSON_Delete(j);
	s0_server_free(s);
}
END_TEST

typedef struct getter {
	int port;
	const char *path;
	long status;
	pthread_t t;
} getter;

static void *do_get(void *arg)
{
	getter *g = arg;
	th_resp r;
	th_simple(g->port, "GET", g->path, KEY_A, NULL, &r);
	g->status = r.status;
	th_resp_free(&r);
	return NULL;
}

/* docs/decisions.md: /healthz and GETs answer promptly while more requests than
 * any pool could hold are blocked waiting for a wake. */
START_TEST(healthz_is_prompt_while_many_requests_block)
{
	enum { N = 40 };
	s0_server *s = start_stub_server(&st, NULL);
	getter g[N];
	for (int i = 0; i < N; i++) {
		g[i] = (getter){.port = s0_server_port(s), .path = "/block"};
		pthread_create(&g[i].t, NULL, do_get, &g[i]);
	}
	ck_assert(stub_wait_blocked(&st, N));
	for (int k = 0; k < 3; k++) {
		th_resp r;
		th_simple(s0_server_port(s), "GET", "/healthz", NULL, NULL, &r);
		ck_assert_int_eq(r.status, 200);
		ck_assert_msg(r.seconds < 1.0, "healthz took %.3f s", r.seconds);
		th_resp_free(&r);
		th_simple(s0_server_port(s), "GET", "/api/v1/sandboxes/x", KEY_A, NULL, &r);
		ck_assert_int_eq(r.status, 200);
		ck_assert_msg(r.seconds < 1.0, "GET took %.3f s", r.seconds);
		th_resp_free(&r);
	}
	stub_release(&st);
	for (int i = 0; i < N; i++) {
		pthread_join(g[i].t, NULL);
		ck_assert_int_eq(g[i].status, 200);
	}
	s0_server_free(s);
}
END_TEST

static int connect_port(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A client that stops sending mid-request is cut off after the timeout. */
START_TEST(slow_client_is_disconnected)
{
	s0_server_options o = S0_SERVER_OPTIONS_INIT;
	o.connection_timeout_ms = 1000;
	s0_server *s = start_stub_server(&st, &o);
	int fd = connect_port(s0_server_port(s));
	ck_assert_int_ge(fd, 0);
	const char *partial = "POST /api/v1/sandboxes HTTP/1.1\r\nHost: x\r\nContent-Length: 100";
	ck_assert_int_gt(write(fd, partial, strlen(partial)), 0);
	struct timeval tv = {.tv_sec = 5};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	int64_t t0 = s0__real_monotonic_ms();
	char buf[256];
	ssize_t n = read(fd, buf, sizeof buf);
	int64_t waited = s0__real_monotonic_ms() - t0;
	ck_assert_int_le(n, 0);
	ck_assert_int_lt(waited, 4500);
	close(fd);
	/* others are served meanwhile and after */
	th_resp r;
	th_simple(s0_server_port(s), "GET", "/healthz", NULL, NULL, &r);
	ck_assert_int_eq(r.status, 200);
	th_resp_free(&r);
	ck_assert_int_eq(st.calls, 1);
	s0_server_free(s);
}
END_TEST

START_TEST(connection_limit_refuses_extra_connections)
{
	s0_server_options o = S0_SERVER_OPTIONS_INIT;
	o.connection_limit = 2;
	s0_server *s = start_stub_server(&st, &o);
	getter g[2];
	for (int i = 0; i < 2; i++) {
		g[i] = (getter){.port = s0_server_port(s), .path = "/block"};
		pthread_create(&g[i].t, NULL, do_get, &g[i]);
	}
	ck_assert(stub_wait_blocked(&st, 2));
	th_resp r;
	char *url = th_url(s0_server_port(s), "/healthz");
	th_req q = {.url = url, .timeout_ms = 3000};
	th_do(&q, &r);
	ck_assert_int_eq(r.status, 0);
	th_resp_free(&r);
	stub_release(&st);
	for (int i = 0; i < 2; i++) {
		pthread_join(g[i].t, NULL);
		ck_assert_int_eq(g[i].status, 200);
	}
	/* the slots free up once the finished connections are torn down */
	for (int i = 0; i < 50; i++) {
		th_do(&q, &r);
		if (r.status == 200)
			break;
		th_resp_free(&r);
		usleep(50000);
	}
	ck_assert_int_eq(r.status, 200);
	th_resp_free(&r);
	free(url);
	s0_server_free(s);
}
END_TEST

static void *free_server(void *arg)
{
	s0_server_free(arg);
	return NULL;
}

/* Clean shutdown: stop accepting, let the request in flight finish. */
START_TEST(shutdown_finishes_requests_in_flight)
{
	s0_server *s = start_stub_server(&st, NULL);
	int port = s0_server_port(s);
	getter g = {.port = port, .path = "/block"};
	pthread_create(&g.t, NULL, do_get, &g);
	ck_assert(stub_wait_blocked(&st, 1));
	pthread_t ft;
	pthread_create(&ft, NULL, free_server, s);
	/* the listening socket goes away while the request is still held */
	int fd = -1;
	for (int i = 0; i < 100; i++) {
		fd = connect_port(port);
		if (fd < 0)
			break;
		close(fd);
		usleep(20000);
	}
	ck_assert_int_lt(fd, 0);
	stub_release(&st);
	pthread_join(g.t, NULL);
	ck_assert_int_eq(g.status, 200);
	pthread_join(ft, NULL);
}
END_TEST

typedef struct log_sink {
	pthread_mutex_t mu;
	char lines[8][800];
	int n;
} log_sink;

static void on_log(const char *line, void *payload)
{
	log_sink *l = payload;
	pthread_mutex_lock(&l->mu);
	if (l->n < 8)
		s0__strlcpy(l->lines[l->n++], line, sizeof l->lines[0]);
	pthread_mutex_unlock(&l->mu);
}

START_TEST(one_access_log_line_per_request)
{
	static log_sink sink = {.mu = PTHREAD_MUTEX_INITIALIZER};
	s0_server_options o = S0_SERVER_OPTIONS_INIT;
	o.log_cb = on_log;
	o.log_payload = &sink;
	s0_server *s = start_stub_server(&st, &o);
	char *url = th_url(s0_server_port(s), "/api/v1/sandboxes?limit=5");
	const char *hs[] = {"Authorization: Bearer " KEY_A, "X-Request-ID: rid-1", NULL};
	th_req q = {.url = url, .headers = hs};
	th_resp r;
	th_do(&q, &r);
	th_resp_free(&r);
	q.headers = NULL;
	th_do(&q, &r);
	th_resp_free(&r);
	free(url);
	s0_server_free(s);
	ck_assert_int_eq(sink.n, 2);
	/* lines come in completion order, which connections may swap */
	int first = strstr(sink.lines[0], "rid-1") ? 0 : 1;
	ck_assert_ptr_nonnull(
		strstr(sink.lines[first], "127.0.0.1 rid-1 team_a \"GET /api/v1/sandboxes\" 200 "));
	ck_assert_ptr_nonnull(strstr(sink.lines[1 - first], " - \"GET /api/v1/sandboxes\" 401 "));
}
END_TEST

START_TEST(unix_socket_server)
{
	char *dir = s0_test_tmpdir("srv");
	char *path = NULL;
	ck_assert_int_ge(asprintf(&path, "%s/s0.sock", dir), 0);
	s0_server_options o = S0_SERVER_OPTIONS_INIT;
	o.unix_socket_path = path;
	s0_server *s = start_stub_server(&st, &o);
	ck_assert_int_eq(s0_server_port(s), 0);
	struct stat sb;
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_int_eq(sb.st_mode & 0777, 0600);
	th_req q = {.url = "http://localhost/healthz", .unix_socket = path};
	th_resp r;
	th_do(&q, &r);
	ck_assert_int_eq(r.status, 200);
	th_resp_free(&r);
	/* a live listener on the path is not replaced */
	s0__server_config cfg = {.opts = &o, .handler = stub_handler, .handler_ctx = &st};
	s0_server *s2 = NULL;
	s0_error *err = NULL;
	ck_assert_int_eq(s0__server_new(&cfg, &s2, &err), S0_ECONFLICT);
	ck_assert_str_eq(s0_error_reason(err), "address_in_use");
	s0_error_free(err);
	s0_server_free(s);
	ck_assert_int_ne(stat(path, &sb), 0);
	/* a stale socket file is replaced */
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	s0__strlcpy(sa.sun_path, path, sizeof sa.sun_path);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	close(fd);
	s = start_stub_server(&st, &o);
	s0_server_free(s);
	free(path);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

static int try_new(const s0_server_options *o, s0_error **err)
{
	s0__server_config cfg = {.opts = o, .handler = stub_handler, .handler_ctx = &st};
	s0_server *s = NULL;
	int rc = s0__server_new(&cfg, &s, err);
	s0_server_free(s);
	return rc;
}

START_TEST(bad_options_are_rejected)
{
	s0_server_options o;
	ck_assert_int_eq(s0_server_options_init(&o, 99), S0_EINVAL);
	ck_assert_int_eq(s0_server_options_init(&o, S0_SERVER_OPTIONS_VERSION), S0_OK);
	s0_server_api_key bad[] = {{"sk_not_ours_123456", "t"}};
	o.api_keys = bad;
	o.api_keys_len = 1;
	ck_assert_int_eq(try_new(&o, NULL), S0_EINVAL);
	s0_server_api_key dup[] = {{KEY_A, "t1"}, {KEY_A, "t2"}};
	o.api_keys = dup;
	o.api_keys_len = 2;
	ck_assert_int_eq(try_new(&o, NULL), S0_EINVAL);
	s0_server_api_key blank[] = {{KEY_A, ""}};
	o.api_keys = blank;
	o.api_keys_len = 1;
	ck_assert_int_eq(try_new(&o, NULL), S0_EINVAL);
	o.api_keys = NULL;
	o.api_keys_len = 0;
	o.port = 70000;
	ck_assert_int_eq(try_new(&o, NULL), S0_EINVAL);
	o.port = 0;
	o.listen_address = "localhost";
	ck_assert_int_eq(try_new(&o, NULL), S0_EINVAL);
	o.listen_address = NULL;
	o.version = 7;
	ck_assert_int_eq(try_new(&o, NULL), S0_EINVAL);
	/* a port in use */
	s0_server *s = start_stub_server(&st, NULL);
	s0_server_options o2 = S0_SERVER_OPTIONS_INIT;
	o2.port = s0_server_port(s);
	s0_error *err = NULL;
	ck_assert_int_eq(try_new(&o2, &err), S0_ECONFLICT);
	ck_assert_str_eq(s0_error_reason(err), "address_in_use");
	s0_error_free(err);
	s0_server_free(s);
	s0_server_free(NULL);
	ck_assert_int_eq(s0_server_port(NULL), 0);
}
END_TEST

START_TEST(ipv6_loopback)
{
	s0_server_options o = S0_SERVER_OPTIONS_INIT;
	o.listen_address = "::1";
	s0__server_config cfg = {.opts = &o, .handler = stub_handler, .handler_ctx = &st};
	s0_server *s = NULL;
	if (s0__server_new(&cfg, &s, NULL) < 0)
		return; /* no IPv6 on this machine */
	char *url = NULL;
	ck_assert_int_ge(asprintf(&url, "http://[::1]:%d/healthz", s0_server_port(s)), 0);
	th_req q = {.url = url};
	th_resp r;
	th_do(&q, &r);
	ck_assert_int_eq(r.status, 200);
	th_resp_free(&r);
	free(url);
	s0_server_free(s);
}
END_TEST

Suite *s0_server_core_suite(void)
{
	Suite *s = suite_create("server_core");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, public_routes_need_no_key);
	tcase_add_test(tc, auth_failures_are_401_envelopes);
	tcase_add_test(tc, keys_select_their_team);
	tcase_add_test(tc, anonymous_team_for_requests_without_a_key);
	tcase_add_test(tc, request_id_echoed_or_generated);
	tcase_add_test(tc, raw_path_and_query_reach_the_handler);
	tcase_add_test(tc, bodies_over_the_limit_are_413);
	tcase_add_test(tc, long_request_heads_get_json_envelopes);
	tcase_add_test(tc, healthz_is_prompt_while_many_requests_block);
	tcase_add_test(tc, slow_client_is_disconnected);
	tcase_add_test(tc, connection_limit_refuses_extra_connections);
	tcase_add_test(tc, shutdown_finishes_requests_in_flight);
	tcase_add_test(tc, one_access_log_line_per_request);
	tcase_add_test(tc, unix_socket_server);
	tcase_add_test(tc, bad_options_are_rejected);
	tcase_add_test(tc, ipv6_loopback);
	suite_add_tcase(s, tc);
	return s;
}
