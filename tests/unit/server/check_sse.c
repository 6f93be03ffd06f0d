/*
 * The session event stream over server-sent events on `s0 serve`
 * (docs/wire.md §8.4, server/sse.h): replay from `after=` and from
 * Last-Event-ID, live events, a clean end of the body when the sandbox
 * pauses, team scoping and the errors of the events GET (SSE-01..SSE-03).
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "client_steps.h"
#include "common/json.h"
#include "local_fixture.h"
#include "sandbox0/sandbox0.h"
#include "sandbox0/server.h"
#include "server_test.h"

/* A stream read on its own thread into a buffer the test waits on. */
typedef struct reader {
	pthread_t t;
	pthread_mutex_t mu;
	char *url, *last_event_id, *key;
	char body[1 << 16];
	size_t len;
	long status;
	char content_type[64];
	CURLcode rc;
	bool ended;
} reader;

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	reader *r = arg;
	pthread_mutex_lock(&r->mu);
	size_t k = n < sizeof r->body - 1 - r->len ? n : sizeof r->body - 1 - r->len;
	memcpy(r->body + r->len, p, k);
	r->len += k;
	r->body[r->len] = 0;
	pthread_mutex_unlock(&r->mu);
	return size * n;
}

static void *read_main(void *arg)
{
	reader *r = arg;
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	char auth[128], lei[64];
	snprintf(auth, sizeof auth, "Authorization: Bearer %s", r->key);
	h = curl_slist_append(h, auth);
	h = curl_slist_append(h, "Accept: text/event-stream");
	if (r->last_event_id) {
		snprintf(lei, sizeof lei, "Last-Event-ID: %s", r->last_event_id);
		h = curl_slist_append(h, lei);
	}
	curl_easy_setopt(c, CURLOPT_URL, r->url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 60000L);
	CURLcode rc = curl_easy_perform(c);
	long status = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	char *ct = NULL;
	curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
	pthread_mutex_lock(&r->mu);
	r->rc = rc;
	r->status = status;
	snprintf(r->content_type, sizeof r->content_type, "%s", ct ? ct : "");
	r->ended = true;
	pthread_mutex_unlock(&r->mu);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	return NULL;
}

static reader *start_reader(const char *sb, const char *ses, const char *query,
                            const char *last_event_id, const char *key)
{
	reader *r = calloc(1, sizeof *r);
	pthread_mutex_init(&r->mu, NULL);
	char path[256];
	snprintf(path, sizeof path, "/api/v1/sandboxes/%s/sessions/%s/events/stream%s", sb, ses,
	         query ? query : "");
	r->url = th_url(cs_sv.port, path);
	r->last_event_id = last_event_id ? strdup(last_event_id) : NULL;
	r->key = strdup(key);
	ck_assert_int_eq(pthread_create(&r->t, NULL, read_main, r), 0);
	return r;
}

/* Wait (real time, up to 10 s) until the body holds text or the stream ended. */
static bool wait_for(reader *r, const char *text)
{
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&r->mu);
		bool got = strstr(r->body, text) != NULL, ended = r->ended;
		pthread_mutex_unlock(&r->mu);
		if (got)
			return true;
		if (ended)
			return false;
		struct timespec t = {0, 10 * 1000000L};
		nanosleep(&t, NULL);
	}
	return false;
}

static void join_reader(reader *r)
{
	pthread_join(r->t, NULL);
}

static void free_reader(reader *r)
{
	pthread_mutex_destroy(&r->mu);
	free(r->url);
	free(r->last_event_id);
	free(r->key);
	free(r);
}

/* A session that printed two lines and exited: events 1..6. */
static char *session(s0_client *c, const char *sb)
{
	(void)c;
	char path[128];
	snprintf(path, sizeof path, "/api/v1/sandboxes/%s/sessions", sb);
	th_resp r;
	ck_assert_int_eq(th_simple(cs_sv.port, "POST", path, KEY_A,
	                           "{\"command\":[\"sh\",\"-c\",\"echo one; echo two\"]}", &r),
	                 0);
	ck_assert_msg(r.status == 201, "%ld %s", r.status, r.body);
	cJSON *j = resp_json(&r);
	char *id = strdup(s0__json_str0(cJSON_GetObjectItem(j, "data"), "id"));
	cJSON_Delete(j);
	th_resp_free(&r);
	return id;
}

/* SSE-01: replay from after= and from Last-Event-ID, then a clean end when
 * the sandbox pauses. */
START_TEST(sse_replays_and_ends_at_pause)
{
	s0_client *c = cs_client(cs_sv.srv, KEY_A, NULL);
	char *sb = cs_claim(c, "default"), *ses = session(c, sb);
	reader *all = start_reader(sb, ses, NULL, NULL, KEY_A);
	reader *from3 = start_reader(sb, ses, "?after=3", NULL, KEY_A);
	reader *lei = start_reader(sb, ses, NULL, "5", KEY_A);
	ck_assert(wait_for(all, "id: 6\n"));
	ck_assert(wait_for(from3, "id: 6\n"));
	ck_assert(wait_for(lei, "id: 6\n"));
	ck_assert_int_eq(s0_sandbox_pause_and_wait(c, sb, NULL, NULL, NULL), S0_OK);
	join_reader(all);
	join_reader(from3);
	join_reader(lei);
	/* all: 1..6; from3: 4..6 only, each an id and a data line of the event JSON */
	ck_assert_ptr_nonnull(strstr(all->body, "id: 1\ndata: {\"seq\":1,"));
	ck_assert_int_eq(from3->rc, CURLE_OK); /* the body ended cleanly */
	ck_assert_int_eq(from3->status, 200);
	ck_assert_str_eq(from3->content_type, "text/event-stream");
	ck_assert_ptr_null(strstr(from3->body, "id: 3\n"));
	ck_assert_ptr_nonnull(strstr(from3->body, "id: 4\ndata: {\"seq\":4,"));
	ck_assert_ptr_nonnull(strstr(from3->body, "\"type\":\"attempt.exited\""));
	ck_assert_ptr_null(strstr(lei->body, "id: 5\n"));
	ck_assert_ptr_nonnull(strstr(lei->body, "id: 6\n"));
	ck_assert_int_eq(lei->rc, CURLE_OK);
	free_reader(all);
	free_reader(from3);
	free_reader(lei);
	free(ses);
	free(sb);
	s0_client_free(c);
}
END_TEST

/* SSE-02: live events arrive on an open stream. */
START_TEST(sse_delivers_live_events)
{
	s0_client *c = cs_client(cs_sv.srv, KEY_A, NULL);
	char *sb = cs_claim(c, "default"), *ses = session(c, sb);
	reader *r = start_reader(sb, ses, "?after=6", NULL, KEY_A);
	ck_assert(wait_for(r, ": stream open\n\n"));
	char path[160];
	snprintf(path, sizeof path, "/api/v1/sandboxes/%s/sessions/%s/attempts", sb, ses);
	th_resp x;
	ck_assert_int_eq(th_simple(cs_sv.port, "POST", path, KEY_A, NULL, &x), 0);
	ck_assert_msg(x.status == 201, "%ld %s", x.status, x.body);
	th_resp_free(&x);
	ck_assert(wait_for(r, "id: 7\n"));
	ck_assert(wait_for(r, "\"type\":\"attempt.exited\""));
	ck_assert_int_eq(s0_sandbox_pause_and_wait(c, sb, NULL, NULL, NULL), S0_OK);
	join_reader(r);
	ck_assert_int_eq(r->rc, CURLE_OK);
	ck_assert_ptr_null(strstr(r->body, "id: 6\n"));
	free_reader(r);
	free(ses);
	free(sb);
	s0_client_free(c);
}
END_TEST

/* SSE-03: errors are the events GET's, as JSON envelopes before any stream. */
START_TEST(sse_errors_and_team_scoping)
{
	s0_client *c = cs_client(cs_sv.srv, KEY_A, NULL);
	char *sb = cs_claim(c, "default"), *ses = session(c, sb);
	char path[200];
	th_resp r;
	snprintf(path, sizeof path, "/api/v1/sandboxes/%s/sessions/%s/events/stream", sb, ses);
	ck_assert_int_eq(th_simple(cs_sv.port, "GET", path, KEY_B, NULL, &r), 0);
	ck_assert_int_eq(r.status, 404); /* another team */
	th_resp_free(&r);
	ck_assert_int_eq(th_simple(cs_sv.port, "GET", path, NULL, NULL, &r), 0);
	ck_assert_int_eq(r.status, 401);
	th_resp_free(&r);
	snprintf(path, sizeof path, "/api/v1/sandboxes/%s/sessions/ses_nope/events/stream", sb);
	ck_assert_int_eq(th_simple(cs_sv.port, "GET", path, KEY_A, NULL, &r), 0);
	ck_assert_int_eq(r.status, 404);
	th_resp_free(&r);
	snprintf(path, sizeof path, "/api/v1/sandboxes/%s/sessions/%s/events/stream?after=x", sb,
	         ses);
	ck_assert_int_eq(th_simple(cs_sv.port, "GET", path, KEY_A, NULL, &r), 0);
	ck_assert_int_eq(r.status, 400);
	th_resp_free(&r);
	free(ses);
	free(sb);
	s0_client_free(c);
}
END_TEST

static Suite *sse_suite(void)
{
	Suite *s = suite_create("sse");
	TCase *t = tcase_create("sse");
	tcase_set_timeout(t, 120);
	tcase_add_checked_fixture(t, cs_served_setup, cs_served_teardown);
	tcase_add_test(t, sse_replays_and_ends_at_pause);
	tcase_add_test(t, sse_delivers_live_events);
	tcase_add_test(t, sse_errors_and_team_scoping);
	suite_add_tcase(s, t);
	return s;
}

Suite *s0_sse_suite(void);
Suite *s0_sse_suite(void)
{
	return sse_suite();
}
