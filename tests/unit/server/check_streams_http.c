/*
 * The HTTP client's streams (s0_stream_open over HTTP: a WebSocket to
 * `s0 serve`) and the same calls on an in-process client: the same messages,
 * the route's errors before any upgrade, close codes.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <wslay/wslay.h>

#include "client_steps.h"
#include "common/internal.h"
#include "local_fixture.h"
#include "sandbox0/sandbox0.h"
#include "sandbox0/server.h"
#include "server_test.h"

static lf f;
static s0_server *srv;
static s0_client *http, *inproc;

static void setup(void)
{
	lf_open(&f, false);
	srv = cs_serve_keys(f.local);
	http = cs_client(srv, KEY_A, NULL);
	ck_assert_int_eq(s0_client_new_local(f.local, NULL, &inproc, NULL), S0_OK);
}

static void teardown(void)
{
	s0_client_free(http);
	s0_client_free(inproc);
	s0_server_free(srv);
	srv = NULL;
	lf_close(&f);
}

/* One REPL exchange and a KILL through s0_stream_open on client c. */
static void repl_round(s0_client *c)
{
	char *sb = cs_claim(c, "default");
	char *ctx = cs_context(c, sb, "{\"type\":\"repl\"}");
	s0_stream_options o = S0_STREAM_OPTIONS_INIT;
	o.kind = S0_STREAM_CONTEXT;
	o.sandbox_id = sb;
	o.id = ctx;
	s0_stream *st = NULL;
	s0_error *err = NULL;
	int rc = s0_stream_open(c, &o, &st, &err);
	ck_assert_msg(rc == S0_OK, "open: %s", err ? s0_error_message(err) : "?");
	const char *in = "{\"type\":\"input\",\"data\":\"echo over\\n\",\"request_id\":\"r1\"}";
	ck_assert_int_eq(s0_stream_send(st, in, strlen(in), NULL), S0_OK);
	cJSON *m = cs_next(st);
	ck_assert_str_eq(cs_str(m, "type"), "output");
	ck_assert_str_eq(cs_str(m, "data"), "over\n");
	cJSON_Delete(m);
	m = cs_next(st);
	ck_assert_str_eq(cs_str(m, "type"), "done");
	ck_assert_str_eq(cs_str(m, "request_id"), "r1");
	cJSON_Delete(m);
	const char *kill = "{\"type\":\"signal\",\"signal\":\"KILL\"}";
	ck_assert_int_eq(s0_stream_send(st, kill, strlen(kill), NULL), S0_OK);
	m = cs_next(st);
	ck_assert_str_eq(cs_str(m, "state"), "killed");
	cJSON_Delete(m);
	char *x = NULL;
	ck_assert_int_eq(s0_stream_recv(st, 5000, &x, NULL, NULL), S0_ITEROVER);
	const char *why = NULL;
	ck_assert_int_eq(s0_stream_close_code(st, &why), 1000);
	ck_assert_str_eq(why, "process exited");
	s0_stream_free(st);
	free(ctx);
	free(sb);
}

START_TEST(context_stream_over_http_and_in_process)
{
	repl_round(http);
	repl_round(inproc);
}
END_TEST

START_TEST(stream_errors_come_before_the_upgrade)
{
	char *sb = cs_claim(http, "default");
	s0_stream_options o = S0_STREAM_OPTIONS_INIT;
	o.kind = S0_STREAM_CONTEXT;
	o.sandbox_id = sb;
	o.id = "ctx-nope";
	s0_stream *st = NULL;
	s0_error *err = NULL;
	ck_assert_int_eq(s0_stream_open(http, &o, &st, &err), S0_ENOTFOUND);
	ck_assert_int_eq(s0_error_http_status(err), 404);
	ck_assert_str_eq(s0_error_wire_code(err), "context_not_found");
	s0_error_free(err);
	err = NULL;
	/* another team's sandbox is not found either */
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d", s0_server_port(srv));
	s0_client_options co = S0_CLIENT_OPTIONS_INIT;
	co.base_url = url;
	co.token = KEY_B;
	s0_client *b = NULL;
	ck_assert_int_eq(s0_client_new(&co, &b, NULL), S0_OK);
	o.kind = S0_STREAM_FILES_WATCH;
	o.id = NULL;
	ck_assert_int_eq(s0_stream_open(b, &o, &st, &err), S0_ENOTFOUND);
	s0_error_free(err);
	s0_client_free(b);
	o.kind = 7;
	ck_assert_int_eq(s0_stream_open(http, &o, &st, NULL), S0_EINVAL);
	ck_assert_ptr_null(st);
	free(sb);
}
END_TEST

START_TEST(file_watch_over_http)
{
	char *sb = cs_claim(http, "default");
	s0_stream_options o = S0_STREAM_OPTIONS_INIT;
	o.kind = S0_STREAM_FILES_WATCH;
	o.sandbox_id = sb;
	s0_stream *st = NULL;
	ck_assert_int_eq(s0_stream_open(http, &o, &st, NULL), S0_OK);
	const char *sub = "{\"action\":\"subscribe\",\"path\":\"/workspace\"}";
	ck_assert_int_eq(s0_stream_send(st, sub, strlen(sub), NULL), S0_OK);
	cJSON *m = cs_next(st);
	ck_assert_str_eq(cs_str(m, "type"), "subscribed");
	cJSON_Delete(m);
	ck_assert_int_eq(s0_files_write(http, sb, "/workspace/n.txt", "x", 1, NULL), S0_OK);
	m = cs_next(st);
	ck_assert_str_eq(cs_str(m, "event"), "create");
	ck_assert_str_eq(cs_str(m, "path"), "/workspace/n.txt");
	cJSON_Delete(m);
	s0_stream_free(st); /* a detach mid-stream */
	ck_assert_int_eq(s0_files_write(http, sb, "/workspace/n.txt", "y", 1, NULL), S0_OK);
	free(sb);
}
END_TEST

/* Open descriptors of this process (/proc/self/fd, less the DIR's own). */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	ck_assert_ptr_nonnull(d);
	int n = 0;
	while (readdir(d))
		n++;
	closedir(d);
	return n - 3; /* ".", ".." and the DIR's */
}

/* The server's requests still counted active (or its live WebSockets),
 * waited for up to 10 s to reach 0. */
static int server_count_after_wait(bool ws);

static int active_after_wait(void)
{
	return server_count_after_wait(false);
}

static int server_count_after_wait(bool ws)
{
	int64_t until = s0__real_monotonic_ms() + 10000;
	for (;;) {
		pthread_mutex_lock(&srv->mu);
		int active = ws ? srv->ws_live : srv->active;
		pthread_mutex_unlock(&srv->mu);
		if (!active || s0__real_monotonic_ms() >= until)
			return active;
		struct timespec t = {0, 5 * 1000000L};
		nanosleep(&t, NULL);
	}
}

/* Clients that ask for a context's WebSocket and reset the connection
 * before the 101: the server frees what it prepared for each (the stream,
 * its descriptors) and counts none of them active. */
START_TEST(clients_gone_before_the_upgrade_leak_nothing)
{
	char *sb = cs_claim(http, "default");
	char *ctx = cs_context(http, sb, "{\"type\":\"repl\"}");
	repl_round(http); /* the server's lazily made state exists before the count */
	ck_assert_int_eq(active_after_wait(), 0);
	int before = open_fds();
	char *head = s0__asprintf("GET /api/v1/sandboxes/%s/contexts/%s/ws HTTP/1.1\r\nHost: x\r\n"
	                          "Authorization: Bearer " KEY_A "\r\nConnection: Upgrade\r\n"
	                          "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
	                          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
	                          sb, ctx);
	struct sockaddr_in sa = {.sin_family = AF_INET,
	                         .sin_port = htons((uint16_t)s0_server_port(srv)),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	for (int i = 0; i < 64; i++) {
		ck_assert_int_eq(active_after_wait(), 0);
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
		ck_assert_int_eq(send(fd, head, strlen(head), MSG_NOSIGNAL), (ssize_t)strlen(head));
		for (;;) { /* until the server took the request (its handler runs) */
			pthread_mutex_lock(&srv->mu);
			int active = srv->active;
			pthread_mutex_unlock(&srv->mu);
			if (active)
				break;
			sched_yield();
		}
		struct linger lg = {1, 0}; /* close with a reset, before any answer */
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
		close(fd);
	}
	ck_assert_int_eq(active_after_wait(), 0);
	ck_assert_int_eq(server_count_after_wait(true), 0); /* each WebSocket freed */
	int64_t until = s0__real_monotonic_ms() + 10000; /* MHD closes after the count */
	int now = open_fds();
	while (now > before && s0__real_monotonic_ms() < until) {
		struct timespec t = {0, 5 * 1000000L};
		nanosleep(&t, NULL);
		now = open_fds();
	}
	ck_assert_int_eq(now, before);
	repl_round(http); /* the server still streams */
	free(head);
	free(ctx);
	free(sb);
}
END_TEST

/* ---- a peer that sends and does not read (wslay frames its messages) ---- */

typedef struct peer {
	int fd;
	size_t replies; /* messages received */
} peer;

static ssize_t peer_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags,
                         void *user)
{
	(void)flags;
	ssize_t n = send(((peer *)user)->fd, data, len, MSG_NOSIGNAL);
	if (n < 0)
		wslay_event_set_error(ctx, errno == EAGAIN ? WSLAY_ERR_WOULDBLOCK
		                                           : WSLAY_ERR_CALLBACK_FAILURE);
	return n;
}

static ssize_t peer_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
                         void *user)
{
	(void)flags;
	ssize_t n = recv(((peer *)user)->fd, buf, len, 0);
	if (n <= 0)
		wslay_event_set_error(ctx, n < 0 && errno == EAGAIN ? WSLAY_ERR_WOULDBLOCK
		                                                    : WSLAY_ERR_CALLBACK_FAILURE);
	return n > 0 ? n : -1;
}

static int peer_mask(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, void *user)
{
	(void)ctx;
	(void)user;
	memset(buf, 0x5a, len);
	return 0;
}

static void peer_msg(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg,
                     void *user)
{
	(void)ctx;
	if (arg->opcode == WSLAY_TEXT_FRAME)
		((peer *)user)->replies++;
}

/* This process's resident memory, bytes (the server runs in it). */
static long rss_bytes(void)
{
	FILE *fp = fopen("/proc/self/status", "re");
	ck_assert_ptr_nonnull(fp);
	char line[256];
	long kb = -1;
	while (fgets(line, sizeof line, fp))
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	fclose(fp);
	return kb * 1024;
}

/* ST-05: a client that keeps sending and never reads the answers (each as big
 * as its message: a subscribe of a missing 3.8 KB path echoes it in its error)
 * is read no further once its answers wait past the bound: its sends push back
 * and the server's memory stays put while it offers 64 MiB; once it reads,
 * every message sent has its answer. */
START_TEST(a_sender_that_never_reads_is_held_to_a_bound)
{
	char *sb = cs_claim(http, "default");
	char *head = s0__asprintf("GET /api/v1/sandboxes/%s/files/watch HTTP/1.1\r\nHost: x\r\n"
	                          "Authorization: Bearer " KEY_A "\r\nConnection: Upgrade\r\n"
	                          "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
	                          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
	                          sb);
	struct sockaddr_in sa = {.sin_family = AF_INET,
	                         .sin_port = htons((uint16_t)s0_server_port(srv)),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	peer p = {.fd = socket(AF_INET, SOCK_STREAM, 0)};
	ck_assert_int_ge(p.fd, 0);
	ck_assert_int_eq(connect(p.fd, (struct sockaddr *)&sa, sizeof sa), 0);
	ck_assert_int_eq(send(p.fd, head, strlen(head), MSG_NOSIGNAL), (ssize_t)strlen(head));
	char got[4096];
	size_t n = 0; /* the 101's head, byte by byte: nothing of the frames after it */
	while (n < 4 || memcmp(got + n - 4, "\r\n\r\n", 4)) {
		ck_assert_int_lt(n, sizeof got - 1);
		ck_assert_int_eq(recv(p.fd, got + n, 1, 0), 1);
		n++;
	}
	got[n] = 0;
	ck_assert_msg(strstr(got, " 101 "), "%s", got);
	ck_assert_int_eq(fcntl(p.fd, F_SETFL, fcntl(p.fd, F_GETFL) | O_NONBLOCK), 0);
	static const struct wslay_event_callbacks cbs = {peer_recv, peer_send, peer_mask, NULL,
	                                                 NULL,      NULL,      peer_msg};
	wslay_event_context_ptr ctx = NULL;
	ck_assert_int_eq(wslay_event_context_client_init(&ctx, &cbs, &p), 0);
	size_t sub_len = 0;
	char *sub = malloc(8192);
	sub_len += (size_t)sprintf(sub, "{\"action\":\"subscribe\",\"path\":\"/workspace");
	for (int i = 0; i < 1900; i++)
		sub_len += (size_t)sprintf(sub + sub_len, "/a");
	sub_len += (size_t)sprintf(sub + sub_len, "\"}");
	long before = rss_bytes(), peak = before;
	size_t queued = 0, offered = (64u << 20) / sub_len;
	for (;;) { /* send until 64 MiB went or the socket pushed back for 2 s */
		while (queued < offered && wslay_event_get_queued_msg_count(ctx) < 4) {
			struct wslay_event_msg m = {WSLAY_TEXT_FRAME, (const uint8_t *)sub, sub_len};
			ck_assert_int_eq(wslay_event_queue_msg(ctx, &m), 0);
			queued++;
		}
		ck_assert_int_eq(wslay_event_send(ctx), 0);
		long now = rss_bytes();
		peak = now > peak ? now : peak;
		if (queued == offered && !wslay_event_get_queued_msg_count(ctx))
			break; /* all of it went: the server read it all */
		if (!wslay_event_want_write(ctx))
			continue;
		struct pollfd pf = {p.fd, POLLOUT, 0};
		if (poll(&pf, 1, 2000) == 0)
			break; /* pushed back */
	}
	ck_assert_msg(peak - before < (24l << 20), "memory grew %ld MiB while %zu messages went",
	              (peak - before) >> 20, queued - wslay_event_get_queued_msg_count(ctx));
	ck_assert_uint_lt(queued, offered); /* the server stopped reading */
	int64_t until = s0__real_monotonic_ms() + 60000;
	while (p.replies < queued && s0__real_monotonic_ms() < until) { /* read; send the rest */
		struct pollfd pf = {p.fd, POLLIN | (wslay_event_want_write(ctx) ? POLLOUT : 0), 0};
		ck_assert_int_ge(poll(&pf, 1, 1000), 0);
		if (pf.revents & POLLIN)
			ck_assert_int_eq(wslay_event_recv(ctx), 0);
		ck_assert_int_eq(wslay_event_send(ctx), 0);
	}
	ck_assert_uint_eq(p.replies, queued); /* an answer for every message */
	wslay_event_context_free(ctx);
	close(p.fd);
	ck_assert_int_eq(server_count_after_wait(true), 0);
	free(sub);
	free(head);
	free(sb);
}
END_TEST

Suite *s0_streams_http_suite(void)
{
	Suite *s = suite_create("streams_http");
	TCase *tc = tcase_create("streams_http");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, context_stream_over_http_and_in_process);
	tcase_add_test(tc, stream_errors_come_before_the_upgrade);
	tcase_add_test(tc, file_watch_over_http);
	tcase_add_test(tc, clients_gone_before_the_upgrade_leak_nothing);
	tcase_add_test(tc, a_sender_that_never_reads_is_held_to_a_bound);
	suite_add_tcase(s, tc);
	return s;
}
