/*
 * Long-poll over `s0 serve` (docs/wire.md "Long-poll", docs/threading.md
 * "Parked connections"): a conditional GET with `Prefer: wait` is parked on
 * the server's event loop, holding no thread, and answers when the sandbox
 * changes, when its time passes or when the client leaves; the client's
 * waits use it so they return when the change happens, not a poll interval
 * later.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "client_steps.h"
#include "local_fixture.h"
#include "sandbox0/sandbox0.h"
#include "sandbox0/server.h"
#include "server/loop.h"
#include "server_test.h"

static lf f;
static s0_server *srv;

static void setup(void)
{
	lf_open(&f, false);
	srv = cs_serve_keys(f.local);
}

static void teardown(void)
{
	s0_server_free(srv);
	srv = NULL;
	lf_close(&f);
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* An HTTP client whose polls sleep 5 s: a wait that ends sooner was woken. */
static s0_client *slow_poller(void)
{
	return cs_client(srv, KEY_A, NULL);
}

static int pause_now(s0_client *c, const char *id)
{
	s0_lifecycle_result *res = NULL;
	int rc = s0_sandbox_pause(c, id, S0_BOOL_UNSET, &res, NULL);
	s0_lifecycle_result_free(res);
	return rc;
}

/* Wait (real time, bounded) until the server holds n parked connections. */
static bool parked_reaches(size_t n)
{
	int64_t until = mono_ms() + 10000;
	while (mono_ms() < until) {
		if (s0__loop_count(srv->loop) == n)
			return true;
		usleep(1000);
	}
	return false;
}

typedef struct waiter {
	pthread_t t;
	s0_client *c;
	const char *id;
	int64_t timeout_ms;
	s0_cancel_token *cancel;
	int rc;
	int status;
	int64_t done_ms;
} waiter;

static void *wait_paused(void *arg)
{
	waiter *w = arg;
	s0_wait_options o = S0_WAIT_OPTIONS_INIT;
	o.poll_initial_ms = o.poll_max_ms = 5000;
	o.timeout_ms = w->timeout_ms;
	o.cancel = w->cancel;
	s0_sandbox_info *info = NULL;
	w->rc = s0_sandbox_wait(w->c, w->id, S0_STATUS_MASK(S0_STATUS_PAUSED), NULL, &o, &info,
	                        NULL);
	w->status = info ? s0_sandbox_info_status(info) : -1;
	s0_sandbox_info_free(info);
	w->done_ms = mono_ms();
	return NULL;
}

START_TEST(wait_over_http_returns_on_the_change)
{
	s0_client *c = slow_poller(), *other = slow_poller();
	char *id = cs_claim(c, "default");
	waiter w = {.c = c, .id = id, .timeout_ms = 30000};
	pthread_create(&w.t, NULL, wait_paused, &w);
	ck_assert_msg(parked_reaches(1), "the wait's GET was not parked");
	int64_t t0 = mono_ms();
	ck_assert_int_eq(pause_now(other, id), S0_OK);
	pthread_join(w.t, NULL);
	ck_assert_int_eq(w.rc, S0_OK);
	ck_assert_int_eq(w.status, S0_STATUS_PAUSED);
	/* well under the 5 s poll interval: the parked GET answered the change */
	fprintf(stderr, "CL-18: the wait ended %lld ms after the pause returned (polls: 5000 ms)\n",
	        (long long)(w.done_ms - t0));
	ck_assert_msg(w.done_ms - t0 < 1000, "wait ended %lld ms after the pause",
	              (long long)(w.done_ms - t0));
	ck_assert_uint_eq(s0__loop_count(srv->loop), 0);
	/* resume_and_wait and pause_and_wait end as promptly */
	int64_t t1 = mono_ms();
	ck_assert_int_eq(s0_sandbox_resume_and_wait(c, id, NULL, NULL, NULL), S0_OK);
	ck_assert_int_eq(s0_sandbox_pause_and_wait(c, id, NULL, NULL, NULL), S0_OK);
	fprintf(stderr, "CL-18: resume_and_wait + pause_and_wait over HTTP: %lld ms\n",
	        (long long)(mono_ms() - t1));
	ck_assert_msg(mono_ms() - t1 < 3000, "resume + pause took %lld ms",
	              (long long)(mono_ms() - t1));
	s0_client_free(c);
	s0_client_free(other);
	free(id);
}
END_TEST

START_TEST(wait_over_http_keeps_its_deadline)
{
	s0_client *c = slow_poller();
	char *id = cs_claim(c, "default");
	waiter w = {.c = c, .id = id, .timeout_ms = 3500};
	int64_t t0 = mono_ms();
	wait_paused(&w);
	ck_assert_int_eq(w.rc, S0_ETIMEDOUT);
	int64_t took = w.done_ms - t0;
	ck_assert_msg(took >= 3400 && took < 4500, "a 3.5 s wait took %lld ms", (long long)took);
	ck_assert_msg(parked_reaches(0), "a parked GET outlived its wait");
	s0_client_free(c);
	free(id);
}
END_TEST

START_TEST(canceled_wait_leaves_no_parked_connection)
{
	s0_client *c = slow_poller();
	char *id = cs_claim(c, "default");
	s0_cancel_token *tok = NULL;
	ck_assert_int_eq(s0_cancel_token_new(&tok, NULL), S0_OK);
	waiter w = {.c = c, .id = id, .timeout_ms = 30000, .cancel = tok};
	pthread_create(&w.t, NULL, wait_paused, &w);
	ck_assert(parked_reaches(1));
	int64_t t0 = mono_ms();
	s0_cancel_token_cancel(tok);
	pthread_join(w.t, NULL);
	ck_assert_int_eq(w.rc, S0_ECANCELED);
	ck_assert_msg(w.done_ms - t0 < 500, "cancel took %lld ms", (long long)(w.done_ms - t0));
	/* the server sees the hang-up and lets the connection go */
	ck_assert_msg(parked_reaches(0), "the server kept the abandoned long-poll");
	s0_cancel_token_free(tok);
	s0_client_free(c);
	free(id);
}
END_TEST

/* GET /sandboxes/{id} with extra header lines. */
static void get_with(const char *id, const char *key, const char *h1, const char *h2,
                     th_resp *out)
{
	char path[160];
	snprintf(path, sizeof path, "/api/v1/sandboxes/%s", id);
	char *url = th_url(s0_server_port(srv), path);
	char auth[96];
	snprintf(auth, sizeof auth, "Authorization: Bearer %s", key);
	const char *hdrs[] = {auth, h1, h2, NULL};
	th_req q = {.url = url, .headers = hdrs};
	th_do(&q, out);
	free(url);
}

START_TEST(conditional_get_and_prefer_wait_on_the_wire)
{
	s0_client *c = slow_poller();
	char *id = cs_claim(c, "default");
	th_resp r;
	get_with(id, KEY_A, NULL, NULL, &r);
	ck_assert_int_eq(r.status, 200);
	char *etag = th_header(&r, "ETag");
	ck_assert_ptr_nonnull(etag);
	ck_assert(!strncmp(etag, "W/\"", 3));
	char *pa = th_header(&r, "Preference-Applied");
	ck_assert_ptr_null(pa); /* not asked */
	th_resp_free(&r);
	char inm[160], stale[] = "If-None-Match: W/\"0-0\"";
	snprintf(inm, sizeof inm, "If-None-Match: %s", etag);
	/* a plain conditional GET: 304 at once, no body */
	get_with(id, KEY_A, inm, NULL, &r);
	ck_assert_int_eq(r.status, 304);
	ck_assert_uint_eq(r.body_len, 0);
	ck_assert_msg(r.seconds < 1.0, "took %.3f s", r.seconds);
	th_resp_free(&r);
	/* held for the time asked, then 304 with the preference applied */
	get_with(id, KEY_A, inm, "Prefer: wait=1", &r);
	ck_assert_int_eq(r.status, 304);
	ck_assert_msg(r.seconds >= 0.9 && r.seconds < 2.5, "held %.3f s", r.seconds);
	pa = th_header(&r, "Preference-Applied");
	ck_assert_str_eq(pa, "wait=1");
	free(pa);
	th_resp_free(&r);
	/* a tag that no longer matches: the new state at once */
	get_with(id, KEY_A, stale, "Prefer: wait=10", &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_msg(r.seconds < 1.0, "took %.3f s", r.seconds);
	th_resp_free(&r);
	/* a wait that is not delta-seconds (RFC 7240 §4.3: 1*DIGIT) is ignored:
	 * answered at once, no preference applied */
	const char *bad[] = {"Prefer: wait=1e9", "Prefer: wait=2.5", "Prefer: wait=3x",
	                     "Prefer: wait=-1"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		get_with(id, KEY_A, inm, bad[i], &r);
		ck_assert_int_eq(r.status, 304);
		ck_assert_msg(r.seconds < 0.5, "%s: held %.3f s", bad[i], r.seconds);
		pa = th_header(&r, "Preference-Applied");
		ck_assert_msg(!pa, "%s: %s", bad[i], pa);
		th_resp_free(&r);
	}
	/* another team's sandbox is 404 at once, never held */
	get_with(id, KEY_B, inm, "Prefer: wait=10", &r);
	ck_assert_int_eq(r.status, 404);
	ck_assert_msg(r.seconds < 1.0, "took %.3f s", r.seconds);
	th_resp_free(&r);
	ck_assert_uint_eq(s0__loop_count(srv->loop), 0);
	free(etag);
	s0_client_free(c);
	free(id);
}
END_TEST

static int raw_connect(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
	struct timeval tv = {.tv_sec = 20};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	return fd;
}

/* The status line's code of the response on fd (reads the head), or 0. */
static int raw_status_of(int fd)
{
	char buf[2048];
	size_t n = 0;
	while (n < sizeof buf - 1) {
		ssize_t k = recv(fd, buf + n, sizeof buf - 1 - n, 0);
		if (k <= 0)
			break;
		n += (size_t)k;
		buf[n] = '\0';
		if (strstr(buf, "\r\n\r\n"))
			break;
	}
	buf[n] = '\0';
	int code = 0;
	return sscanf(buf, "HTTP/1.1 %d", &code) == 1 ? code : 0;
}

START_TEST(many_parked_long_polls_do_not_starve_requests)
{
	enum { N = 150 };
	s0_client *c = slow_poller();
	char *id = cs_claim(c, "default");
	th_resp r;
	get_with(id, KEY_A, NULL, NULL, &r);
	char *etag = th_header(&r, "ETag");
	th_resp_free(&r);
	char req[512];
	snprintf(req, sizeof req,
	         "GET /api/v1/sandboxes/%s HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
	         "If-None-Match: %s\r\nPrefer: wait=30\r\n\r\n",
	         id, KEY_A, etag);
	int fds[N];
	for (int i = 0; i < N; i++) {
		fds[i] = raw_connect(s0_server_port(srv));
		ck_assert_int_eq(send(fds[i], req, strlen(req), 0), (ssize_t)strlen(req));
	}
	ck_assert_msg(parked_reaches(N), "parked %zu of %d", s0__loop_count(srv->loop), N);
	/* ordinary requests are served at once meanwhile */
	for (int k = 0; k < 5; k++) {
		th_simple(s0_server_port(srv), "GET", "/healthz", NULL, NULL, &r);
		ck_assert_int_eq(r.status, 200);
		ck_assert_msg(r.seconds < 1.0, "healthz took %.3f s", r.seconds);
		th_resp_free(&r);
	}
	s0_sandbox_info *info = NULL;
	ck_assert_int_eq(s0_sandbox_get(c, id, &info, NULL), S0_OK);
	s0_sandbox_info_free(info);
	/* one change answers every one of them with the new state */
	int64_t t0 = mono_ms();
	ck_assert_int_eq(pause_now(c, id), S0_OK);
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(raw_status_of(fds[i]), 200);
		close(fds[i]);
	}
	ck_assert_msg(mono_ms() - t0 < 5000, "answering %d took %lld ms", N,
	              (long long)(mono_ms() - t0));
	ck_assert(parked_reaches(0));
	free(etag);
	s0_client_free(c);
	free(id);
}
END_TEST

START_TEST(shutdown_answers_parked_long_polls)
{
	s0_client *c = slow_poller();
	char *id = cs_claim(c, "default");
	th_resp r;
	get_with(id, KEY_A, NULL, NULL, &r);
	char *etag = th_header(&r, "ETag");
	th_resp_free(&r);
	char req[512];
	snprintf(req, sizeof req,
	         "GET /api/v1/sandboxes/%s HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
	         "If-None-Match: %s\r\nPrefer: wait=30\r\n\r\n",
	         id, KEY_A, etag);
	int fd = raw_connect(s0_server_port(srv));
	ck_assert_int_eq(send(fd, req, strlen(req), 0), (ssize_t)strlen(req));
	ck_assert(parked_reaches(1));
	int64_t t0 = mono_ms();
	s0_server_free(srv);
	srv = NULL;
	ck_assert_int_eq(raw_status_of(fd), 304);
	ck_assert_msg(mono_ms() - t0 < 5000, "shutdown took %lld ms", (long long)(mono_ms() - t0));
	close(fd);
	free(etag);
	s0_client_free(c);
	free(id);
}
END_TEST

/* A crash and restart of the served backend, serving again on the same port
 * (so clients of the old server reach the new one). */
static void restart_server(void)
{
	int port = s0_server_port(srv);
	s0_server_free(srv); /* parked long-polls are answered; then refused */
	srv = NULL;
	lf_restart(&f);
	srv = cs_serve_keys_on(f.local, port);
}

static int64_t generation_of(s0_client *c, const char *id)
{
	s0_sandbox_info *info = NULL;
	ck_assert_int_eq(s0_sandbox_get(c, id, &info, NULL), S0_OK);
	int64_t g = s0_sandbox_info_runtime_generation(info);
	s0_sandbox_info_free(info);
	return g;
}

typedef struct pauser {
	pthread_t t;
	s0_client *c;
	const char *id;
	int rc;
	char reason[64], action[64];
	int status;     /* of the sandbox it returned, or of its error's last one */
	int64_t gen;
	int64_t done_ms;
} pauser;

static void *pause_and_wait_thread(void *arg)
{
	pauser *p = arg;
	s0_wait_options o = S0_WAIT_OPTIONS_INIT;
	o.timeout_ms = 30000;
	s0_sandbox_info *info = NULL;
	s0_error *err = NULL;
	p->rc = s0_sandbox_pause_and_wait(p->c, p->id, &o, &info, &err);
	p->done_ms = mono_ms();
	const s0_sandbox_info *last = p->rc == S0_OK ? info : s0_error_last_sandbox(err);
	p->status = last ? s0_sandbox_info_status(last) : -1;
	p->gen = last ? s0_sandbox_info_runtime_generation(last) : -1;
	snprintf(p->reason, sizeof p->reason, "%s", err ? s0_error_reason(err) : "");
	snprintf(p->action, sizeof p->action, "%s", err && s0_error_action(err)
	                                                 ? s0_error_action(err) : "");
	s0_sandbox_info_free(info);
	s0_error_free(err);
	return NULL;
}

/* CL-19: the pause's intent is recorded and answered, the node channel keeps
 * it from publishing, and the server process dies there (the lifecycle_soak
 * crash loop's case). The restart's recovery supersedes the unpublished
 * pause and runs a replacement generation: the waiting pause_and_wait ends
 * with the lifecycle error at its next look, not at its 30 s deadline. */
START_TEST(superseded_pause_ends_the_wait_after_a_restart)
{
	s0_client *c = cs_client(srv, KEY_A, NULL);
	char *id = cs_claim(c, "default");
	int64_t g = generation_of(c, id);
	ck_assert_int_eq(s0_local_fault_arm(f.local, "node_channel@pause", S0_FAULT_FAIL, 0, 0,
	                                    NULL), S0_OK);
	pauser p = {.c = c, .id = id};
	pthread_create(&p.t, NULL, pause_and_wait_thread, &p);
	/* accepted, looked at once, and now held on the server */
	ck_assert_msg(parked_reaches(1), "the wait's GET was not parked");
	restart_server();
	int64_t t0 = mono_ms();
	pthread_join(p.t, NULL);
	fprintf(stderr, "CL-19: the superseded pause's wait ended %lld ms after the restart\n",
	        (long long)(p.done_ms - t0));
	ck_assert_int_eq(p.rc, S0_ELIFECYCLE);
	ck_assert_str_eq(p.reason, "pause_superseded");
	ck_assert_str_eq(p.action, "pause");
	ck_assert_int_eq(p.status, S0_STATUS_RUNNING);
	ck_assert_int_eq(p.gen, g + 1); /* the replacement from the committed head */
	ck_assert_msg(p.done_ms - t0 < 5000, "the wait ended %lld ms after the restart",
	              (long long)(p.done_ms - t0));
	/* pausing again pauses the replacement */
	s0_sandbox_info *info = NULL;
	ck_assert_int_eq(s0_sandbox_pause_and_wait(c, id, NULL, &info, NULL), S0_OK);
	ck_assert_int_eq(s0_sandbox_info_status(info), S0_STATUS_PAUSED);
	ck_assert_int_eq(s0_sandbox_info_runtime_generation(info), g + 1);
	s0_sandbox_info_free(info);
	s0_client_free(c);
	free(id);
}
END_TEST

/* A member of the `data` of a GET's JSON body, printed (the caller's). */
static char *data_member(const th_resp *r, const char *k)
{
	cJSON *j = resp_json(r);
	ck_assert_ptr_nonnull(j);
	char *v = cJSON_PrintUnformatted(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "data"), k));
	cJSON_Delete(j);
	ck_assert_ptr_nonnull(v);
	return v;
}

/* CL-18: a restarted server never answers 304 (nor holds a long-poll) for a
 * tag of the previous process, even when the sandbox's state is the same:
 * the tag's epoch is new with every open. */
START_TEST(etag_changes_across_a_restart)
{
	static const char *const fields[] = {"status", "paused", "runtime_generation",
	                                     "runtime_id", "updated_at"};
	s0_client *c = slow_poller();
	char *id = cs_claim(c, "default");
	ck_assert_int_eq(s0_sandbox_pause_and_wait(c, id, NULL, NULL, NULL), S0_OK);
	th_resp r;
	get_with(id, KEY_A, NULL, NULL, &r);
	ck_assert_int_eq(r.status, 200);
	char *etag = th_header(&r, "ETag"), *before[5];
	for (int i = 0; i < 5; i++)
		before[i] = data_member(&r, fields[i]);
	th_resp_free(&r);
	restart_server();
	char inm[160];
	snprintf(inm, sizeof inm, "If-None-Match: %s", etag);
	get_with(id, KEY_A, inm, "Prefer: wait=5", &r);
	ck_assert_int_eq(r.status, 200); /* neither 304 nor held */
	ck_assert_msg(r.seconds < 1.0, "took %.3f s", r.seconds);
	char *etag2 = th_header(&r, "ETag");
	ck_assert_ptr_nonnull(etag2);
	ck_assert_str_ne(etag, etag2);
	for (int i = 0; i < 5; i++) { /* the same state */
		char *now = data_member(&r, fields[i]);
		ck_assert_msg(!strcmp(now, before[i]), "%s: %s, was %s", fields[i], now, before[i]);
		free(now);
		free(before[i]);
	}
	th_resp_free(&r);
	/* the new tag is the current one */
	snprintf(inm, sizeof inm, "If-None-Match: %s", etag2);
	get_with(id, KEY_A, inm, NULL, &r);
	ck_assert_int_eq(r.status, 304);
	th_resp_free(&r);
	free(etag);
	free(etag2);
	s0_client_free(c);
	free(id);
}
END_TEST

Suite *s0_server_longpoll_suite(void)
{
	Suite *s = suite_create("server_longpoll");
	TCase *tc = tcase_create("longpoll");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, wait_over_http_returns_on_the_change);
	tcase_add_test(tc, wait_over_http_keeps_its_deadline);
	tcase_add_test(tc, canceled_wait_leaves_no_parked_connection);
	tcase_add_test(tc, conditional_get_and_prefer_wait_on_the_wire);
	tcase_add_test(tc, many_parked_long_polls_do_not_starve_requests);
	tcase_add_test(tc, shutdown_answers_parked_long_polls);
	tcase_add_test(tc, superseded_pause_ends_the_wait_after_a_restart);
	tcase_add_test(tc, etag_changes_across_a_restart);
	suite_add_tcase(s, tc);
	return s;
}
