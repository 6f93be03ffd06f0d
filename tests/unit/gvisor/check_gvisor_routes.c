/*
 * Public routes on the gvisor runtime, as a user runs them: `s0 serve
 * --runtime gvisor` (the python3 root tree of $S0_TEST_PYTHON_TREE as the
 * default template), the services API through the client library and the
 * route through plain HTTP without a key. A `cmd` service runs the real
 * `python3 -m http.server` inside the sandbox; its answer crosses the
 * backend's hub (gv_port.c) under a block-all policy; the same public URL
 * answers after a filesystem-only pause (the inbound GET wakes the sandbox
 * and the command runs again in the new generation) and after a memory
 * pause (the restored server answers: no command started again); a wake
 * that fails answers 503 sandbox_resume_failed; a 100 MiB answer and
 * 24 MiB requests (with their length and chunked) stream through with
 * the server's peak RSS growing by less than 8 MiB; a WebSocket upgrade
 * relays bytes both ways (PUB-11, PUB-12, PUB-13).
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "../cli/cli_harness.h"
#include "../server/http_client.h"
#include "common/buf.h"
#include "common/json.h"
#include "sandbox0/sandbox0.h"

#define FILE_TEXT "served by python3 inside gVisor\n"

/* A python upload service: a POST body (with its length, or chunked) read
 * as it comes, the answer "<bytes> <sum of the bytes>"; a GET upgrades to
 * a WebSocket (the handshake of RFC 6455) and echoes the bytes after it. */
static const char UP_PY[] =
	"import http.server\n"
	"class H(http.server.BaseHTTPRequestHandler):\n"
	"    def chunks(self):\n"
	"        if self.headers.get('Transfer-Encoding', '') == 'chunked':\n"
	"            while True:\n"
	"                n = int(self.rfile.readline().split(b';')[0], 16)\n"
	"                if n == 0:\n"
	"                    self.rfile.readline()\n"
	"                    return\n"
	"                while n:\n"
	"                    b = self.rfile.read(min(n, 65536))\n"
	"                    n -= len(b)\n"
	"                    yield b\n"
	"                self.rfile.readline()\n"
	"        left = int(self.headers.get('Content-Length', '0'))\n"
	"        while left:\n"
	"            b = self.rfile.read(min(left, 65536))\n"
	"            if not b:\n"
	"                return\n"
	"            left -= len(b)\n"
	"            yield b\n"
	"    def do_GET(self):\n"
	"        import base64, hashlib\n"
	"        key = self.headers.get('Sec-WebSocket-Key', '') + "
	"'258EAFA5-E914-47DA-95CA-C5AB0DC85B11'\n"
	"        self.send_response(101)\n"
	"        self.send_header('Upgrade', 'websocket')\n"
	"        self.send_header('Connection', 'Upgrade')\n"
	"        self.send_header('Sec-WebSocket-Accept', "
	"base64.b64encode(hashlib.sha1(key.encode()).digest()).decode())\n"
	"        self.end_headers()\n"
	"        self.wfile.flush()\n"
	"        while True:\n"
	"            b = self.connection.recv(65536)\n"
	"            if not b:\n"
	"                break\n"
	"            self.connection.sendall(b)\n"
	"        self.close_connection = True\n"
	"    def do_POST(self):\n"
	"        n = s = 0\n"
	"        for b in self.chunks():\n"
	"            n += len(b)\n"
	"            s += sum(b)\n"
	"        out = ('%d %d' % (n, s)).encode()\n"
	"        self.send_response(200)\n"
	"        self.send_header('Content-Length', str(len(out)))\n"
	"        self.end_headers()\n"
	"        self.wfile.write(out)\n"
	"http.server.HTTPServer(('', 8001), H).serve_forever()\n";

typedef struct fx {
	char *home, *data;
	serve_proc sv;
	s0_client *c;
	char auth[160];
} fx;

/* An API call with the key: the parsed envelope (asserts the status). */
static cJSON *api(fx *f, const char *method, const char *path, const char *body, long status)
{
	char *url = s0__asprintf("%s%s", f->sv.url, path);
	const char *h[] = {f->auth, "Content-Type: application/json", NULL};
	th_req q = {.method = method, .url = url, .headers = h, .body = body,
	            .body_len = body ? strlen(body) : 0, .timeout_ms = 120000};
	th_resp r;
	ck_assert_int_eq(th_do(&q, &r), 0);
	ck_assert_msg(r.status == status, "%s %s: %ld %s", method, path, r.status, r.body);
	cJSON *j = cJSON_Parse(r.body);
	th_resp_free(&r);
	free(url);
	return j;
}

/* GET /r/{pid}{rest} without a key (the answer in *r). */
static void route_get(fx *f, const char *pid, const char *rest, th_resp *r)
{
	char *url = s0__asprintf("%s/r/%s%s", f->sv.url, pid, rest);
	th_req q = {.url = url, .timeout_ms = 120000};
	ck_assert_int_eq(th_do(&q, r), 0);
	free(url);
}

/* The route answers the file, from python's http.server. */
static void assert_served(fx *f, const char *pid)
{
	th_resp r;
	route_get(f, pid, "/hello.txt", &r);
	ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
	ck_assert_str_eq(r.body, FILE_TEXT);
	char *server = th_header(&r, "Server");
	ck_assert_msg(server && strstr(server, "Python/3"), "Server: %s", server ? server : "-");
	free(server);
	th_resp_free(&r);
}

/* The ids of the sandbox's contexts, as "a,b," (free()). */
static char *context_ids(fx *f, const char *sb)
{
	char *p = s0__asprintf("/api/v1/sandboxes/%s/contexts", sb);
	cJSON *j = api(f, "GET", p, NULL, 200);
	const cJSON *d = cJSON_GetObjectItem(j, "data"), *c;
	const cJSON *list = cJSON_IsArray(d) ? d : cJSON_GetObjectItem(d, "contexts");
	s0__buf b = S0__BUF_INIT;
	cJSON_ArrayForEach(c, list) s0__buf_printf(&b, "%s,", s0__json_str(c, "id"));
	s0__buf_put(&b, "", 1);
	cJSON_Delete(j);
	free(p);
	return s0__buf_detach(&b, NULL);
}

static int64_t generation(fx *f, const char *sb)
{
	char *p = s0__asprintf("/api/v1/sandboxes/%s", sb);
	cJSON *j = api(f, "GET", p, NULL, 200);
	int64_t g = (int64_t)cJSON_GetObjectItem(cJSON_GetObjectItem(j, "data"),
	                                         "runtime_generation")->valuedouble;
	cJSON_Delete(j);
	free(p);
	return g;
}

static void pause_sb(fx *f, const char *sb, bool memory)
{
	s0_wait_options wo = S0_WAIT_OPTIONS_INIT;
	wo.memory = memory ? S0_BOOL_TRUE : S0_BOOL_FALSE;
	s0_error *e = NULL;
	int rc = s0_sandbox_pause_and_wait(f->c, sb, &wo, NULL, &e);
	ck_assert_msg(rc == S0_OK, "pause: %s", e ? s0_error_message(e) : "?");
}

/* A field of /proc/<pid>/status in KiB ("VmRSS", "VmHWM"). */
static long status_kib(pid_t pid, const char *field)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	long v = -1;
	size_t n = strlen(field);
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, field, n) && line[n] == ':')
			v = atol(line + n + 1);
	fclose(f);
	ck_assert_int_ge(v, 0);
	return v;
}

/* A short answer, kept. */
static size_t keep_body(void *data, size_t size, size_t n, void *arg)
{
	return s0__buf_put(arg, data, size * n) < 0 ? 0 : size * n;
}

/* Bytes of a GET of the route, counted as they come (none kept). */
static size_t count_body(void *data, size_t size, size_t n, void *arg)
{
	(void)data;
	*(size_t *)arg += size * n;
	return size * n;
}

/* 100 MiB from python inside (a file of its /tmp) through the route: the
 * body streams through `s0 serve` (route_body.h), whose peak RSS grows by
 * a bound while it does (PUB-12). */
static void big_download(fx *f, const char *sb, const char *pid)
{
	char *ctx = NULL;
	s0_error *e = NULL;
	int rc = s0_context_create(
		f->c, sb,
		"{\"type\":\"cmd\",\"wait_until_done\":true,\"cmd\":{\"command\":[\"python3\",\"-c\","
		"\"import os; open('/tmp/big.bin','wb').write(os.urandom(1<<20)*100); "
		"os.symlink('/tmp/big.bin','/srv/big.bin')\"]}}",
		&ctx, &e);
	ck_assert_msg(rc == S0_OK, "make the file: %s", e ? s0_error_message(e) : "?");
	ck_assert_ptr_nonnull(strstr(ctx, "\"exit_code\":0"));
	s0_free(ctx);
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/clear_refs", (int)f->sv.pid);
	FILE *cr = fopen(path, "w"); /* "5": the peak RSS starts again from now */
	ck_assert_ptr_nonnull(cr);
	fputs("5", cr);
	fclose(cr);
	long rss0 = status_kib(f->sv.pid, "VmRSS");
	char *url = s0__asprintf("%s/r/%s/big.bin", f->sv.url, pid);
	size_t got = 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CURL *h = curl_easy_init();
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, count_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &got);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 120L);
	ck_assert_int_eq(curl_easy_perform(h), CURLE_OK);
	long status = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(h);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_int_eq(status, 200);
	ck_assert_uint_eq(got, (size_t)100 << 20);
	long peak = status_kib(f->sv.pid, "VmHWM");
	double s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("100 MiB through the route: %.2f s (%.0f MiB/s); s0 serve RSS %ld KiB before, "
	       "peak %ld KiB during\n", s, 100 / s, rss0, peak);
	ck_assert_msg(peak - rss0 < 8 * 1024, "s0 serve grew by %ld KiB streaming 100 MiB",
	              peak - rss0);
	free(url);
}

/* The upload's bytes, made as curl asks for them (none kept). */
typedef struct up_src {
	size_t sent, total;
	unsigned long long sum;
} up_src;

static size_t up_read(char *buf, size_t size, size_t n, void *arg)
{
	up_src *u = arg;
	size_t k = size * n;
	if (k > u->total - u->sent)
		k = u->total - u->sent;
	for (size_t i = 0; i < k; i++) {
		buf[i] = (char)((u->sent + i) * 7 % 251);
		u->sum += (unsigned char)buf[i];
	}
	u->sent += k;
	return k;
}

/* A 24 MiB POST through the route, with its length or chunked: the
 * service reads it all as it comes (its count and sum answer), and the
 * server's peak RSS grows by a bound (route_upload.h; PUB-12). */
static void big_upload(fx *f, const char *pid, bool chunked)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/clear_refs", (int)f->sv.pid);
	FILE *cr = fopen(path, "w");
	ck_assert_ptr_nonnull(cr);
	fputs("5", cr);
	fclose(cr);
	long rss0 = status_kib(f->sv.pid, "VmRSS");
	char *url = s0__asprintf("%s/r/%s/upload", f->sv.url, pid);
	up_src src = {.total = (size_t)24 << 20};
	s0__buf got = S0__BUF_INIT;
	struct curl_slist *h = curl_slist_append(NULL, chunked ? "Transfer-Encoding: chunked"
	                                                       : "Expect:");
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CURL *c = curl_easy_init();
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_READFUNCTION, up_read);
	curl_easy_setopt(c, CURLOPT_READDATA, &src);
	if (!chunked)
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)src.total);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &got);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
	ck_assert_int_eq(curl_easy_perform(c), CURLE_OK);
	long status = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s0__buf_put(&got, "", 1);
	ck_assert_msg(status == 200, "%ld %s", status, got.data);
	char want[64];
	snprintf(want, sizeof want, "%zu %llu", src.total, src.sum);
	ck_assert_str_eq(got.data, want);
	long peak = status_kib(f->sv.pid, "VmHWM");
	double s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("24 MiB POST (%s) through the route: %.2f s (%.0f MiB/s); s0 serve RSS %ld KiB "
	       "before, peak %ld KiB during\n",
	       chunked ? "chunked" : "with its length", s, 24 / s, rss0, peak);
	ck_assert_msg(peak - rss0 < 8 * 1024, "s0 serve grew by %ld KiB taking 24 MiB",
	              peak - rss0);
	s0__buf_free(&got);
	free(url);
}

/* A WebSocket upgrade through the route (route_tunnel.h): the service's
 * 101 with its Sec-WebSocket-Accept comes back, and bytes go both ways
 * after it as they are — a short message and 4 MiB (more than the
 * buffers of both directions) echoed whole (PUB-13). */
static void ws_tunnel(fx *f, const char *pid)
{
	int port = 0;
	ck_assert_int_eq(sscanf(f->sv.url, "http://127.0.0.1:%d", &port), 1);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	struct timeval tv = {30, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	char *head = s0__asprintf("GET /r/%s/ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n"
	                          "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
	                          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
	                          pid);
	ck_assert_int_eq(send(fd, head, strlen(head), MSG_NOSIGNAL), (ssize_t)strlen(head));
	free(head);
	char resp[4096];
	size_t n = 0;
	while (n < sizeof resp - 1) {
		ssize_t k = recv(fd, resp + n, 1, 0); /* byte by byte: nothing after the head */
		ck_assert_int_eq(k, 1);
		n++;
		resp[n] = 0;
		if (n >= 4 && !memcmp(resp + n - 4, "\r\n\r\n", 4))
			break;
	}
	ck_assert_msg(!strncmp(resp, "HTTP/1.1 101", 12), "%s", resp);
	ck_assert_msg(strstr(resp, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), "%s", resp); /* RFC 6455 1.3 */
	size_t total = (size_t)4 << 20, sent = 0, got = 0;
	char *out = malloc(total), *in = malloc(total);
	memcpy(out, "hello tunnel", 12);
	for (size_t i = 12; i < total; i++)
		out[i] = (char)(i * 13 % 251);
	while (got < total) { /* write and read interleaved: both directions hold data */
		struct pollfd pf = {fd, (short)(POLLIN | (sent < total ? POLLOUT : 0)), 0};
		ck_assert_int_gt(poll(&pf, 1, 30000), 0);
		if (sent < total && pf.revents & POLLOUT) {
			ssize_t k = send(fd, out + sent, total - sent < 65536 ? total - sent : 65536,
			                 MSG_NOSIGNAL | MSG_DONTWAIT);
			if (k > 0)
				sent += (size_t)k;
		}
		if (!(pf.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		ssize_t k = recv(fd, in + got, total - got, MSG_DONTWAIT);
		if (k > 0)
			got += (size_t)k;
		else
			ck_assert_msg(k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK),
			              "echo ended at %zu of %zu", got, total);
	}
	size_t bad = 0;
	while (bad < total && in[bad] == out[bad])
		bad++;
	ck_assert_msg(bad == total, "the echo differs from byte %zu of %zu (%02x, not %02x)", bad,
	              total, bad < total ? (unsigned char)in[bad] : 0,
	              bad < total ? (unsigned char)out[bad] : 0);
	close(fd);
	free(in);
	free(out);
}

static void fx_open(fx *f)
{
	memset(f, 0, sizeof *f);
	const char *tree = getenv("S0_TEST_PYTHON_TREE");
	ck_assert_msg(tree && *tree, "S0_TEST_PYTHON_TREE unset: run scripts/test gvisor");
	f->home = s0_test_tmpdir("gvroutes");
	h_env_reset(f->home);
	h_env_set("S0_RUNTIME", NULL);
	h_env_set("S0_GVISOR_TEMPLATE", tree); /* the default template: python3 */
	f->data = s0__asprintf("%s/data", f->home);
	const char *extra[] = {"--runtime", "gvisor", "--enable-admin", NULL};
	ck_assert(h_serve_start(&f->sv, f->data, extra));
	snprintf(f->auth, sizeof f->auth, "Authorization: Bearer %s", f->sv.key);
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	o.base_url = f->sv.url;
	o.token = f->sv.key;
	ck_assert_int_eq(s0_client_new(&o, &f->c, NULL), S0_OK);
}

static void fx_close(fx *f)
{
	s0_client_free(f->c);
	ck_assert_int_eq(h_serve_stop(&f->sv), 0);
	free(f->sv.out);
	s0_test_rmrf(f->home);
	free(f->data);
	free(f->home);
}

START_TEST(route_serves_python_across_pauses)
{
	fx f;
	fx_open(&f);
	cJSON *j = api(&f, "POST", "/api/v1/sandboxes",
	               "{\"template\":\"default\",\"config\":{\"auto_resume\":true,"
	               "\"network\":{\"mode\":\"block-all\"}}}",
	               201);
	char *sb = strdup(s0__json_str(cJSON_GetObjectItem(j, "data"), "sandbox_id"));
	cJSON_Delete(j);
	s0_error *e = NULL;
	ck_assert_int_eq(s0_files_write(f.c, sb, "/srv/hello.txt", FILE_TEXT, strlen(FILE_TEXT), &e),
	                 S0_OK);
	ck_assert_int_eq(s0_files_write(f.c, sb, "/srv/up.py", UP_PY, strlen(UP_PY), &e), S0_OK);
	char *json = NULL;
	int rc = s0_sandbox_services_update(
		f.c, sb,
		"[{\"id\":\"web\",\"port\":8000,\"runtime\":{\"type\":\"cmd\",\"command\":"
		"[\"python3\",\"-m\",\"http.server\",\"8000\"],\"cwd\":\"/srv\"},"
		"\"ingress\":{\"public\":true,\"routes\":[{\"id\":\"all\",\"resume\":true}]}},"
		"{\"id\":\"up\",\"port\":8001,\"runtime\":{\"type\":\"cmd\",\"command\":"
		"[\"python3\",\"/srv/up.py\"]},\"ingress\":{\"public\":true}}]",
		&json, &e);
	ck_assert_msg(rc == S0_OK, "services: %s", e ? s0_error_message(e) : "?");
	j = cJSON_Parse(json);
	const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "services"), 0);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(v, "publishable")));
	const char *url = s0__json_str(v, "public_url"), *r = url ? strstr(url, "/r/") : NULL;
	ck_assert_ptr_nonnull(r);
	char *pid = strndup(r + 3, strcspn(r + 3, "/"));
	v = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "services"), 1);
	url = s0__json_str(v, "public_url");
	r = url ? strstr(url, "/r/") : NULL;
	ck_assert_ptr_nonnull(r);
	char *up_pid = strndup(r + 3, strcspn(r + 3, "/"));
	cJSON_Delete(j);
	s0_free(json);

	/* running: the first GET starts the command, then python answers */
	assert_served(&f, pid);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 10; i++)
		assert_served(&f, pid);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("route GET to python3 inside gVisor: %.1f ms each (10)\n",
	       ((t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6) / 10);
	char *ctx0 = context_ids(&f, sb);
	ck_assert_msg(strchr(ctx0, ',') == strrchr(ctx0, ','), "contexts: %s", ctx0);
	int64_t gen0 = generation(&f, sb);

	/* filesystem-only pause: the GET wakes it, the command runs again */
	pause_sb(&f, sb, false);
	assert_served(&f, pid);
	ck_assert_int_eq(generation(&f, sb), gen0 + 1);
	char *ctx1 = context_ids(&f, sb);
	ck_assert_str_ne(ctx1, ctx0);

	/* memory pause: the restored server answers (no command started again) */
	pause_sb(&f, sb, true);
	assert_served(&f, pid);
	ck_assert_int_eq(generation(&f, sb), gen0 + 2);
	char *ctx2 = context_ids(&f, sb);
	ck_assert_str_eq(ctx2, ctx1);

	/* a wake that fails: 503 sandbox_resume_failed, the sandbox stays paused */
	pause_sb(&f, sb, false);
	cJSON_Delete(api(&f, "POST", "/admin/v1/faults", "{\"name\":\"capacity\",\"mode\":\"fail\"}",
	                 200));
	th_resp resp;
	route_get(&f, pid, "/hello.txt", &resp);
	ck_assert_msg(resp.status == 503, "%ld %s", resp.status, resp.body);
	ck_assert_ptr_nonnull(strstr(resp.body, "sandbox_resume_failed"));
	th_resp_free(&resp);
	cJSON_Delete(api(&f, "DELETE", "/admin/v1/faults?name=capacity", NULL, 200));
	assert_served(&f, pid); /* the next GET wakes it */
	big_download(&f, sb, pid);
	big_upload(&f, up_pid, false);
	big_upload(&f, up_pid, true);
	ws_tunnel(&f, up_pid);

	free(ctx2);
	free(ctx1);
	free(ctx0);
	free(up_pid);
	free(pid);
	free(sb);
	fx_close(&f);
}
END_TEST

static Suite *gvisor_routes_suite(void)
{
	Suite *s = suite_create("gvisor-routes");
	TCase *tc = tcase_create("routes");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, route_serves_python_across_pauses);
	suite_add_tcase(s, tc);
	return s;
}

S0_TEST_MAIN(gvisor_routes_suite)
