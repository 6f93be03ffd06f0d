/*
 * Supervised sessions (docs/wire.md §8.3, §8.4 item 2): shapes, the journal
 * with seq cursors and 410, Idempotency-Key, restart policy, desired
 * state, signals, durability (sink, serialize) and runtime_recovery after
 * a filesystem-only replacement. Behaviour rows: SES-01, SES-02, SES-03,
 * SES-04, SES-05 (module level: the lead drives the replacement), and
 * SES-06's "no recovery attempt" half (with the same guest; the image
 * round trip is in tests/unit/checkpoint). The second tier (PUT spec,
 * attempts, inputs, terminal) is named after docs/wire.md §8.3 (no rows exist).
 */
#include "rtsuites.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>

static rtfix F;
static s0__sessions *S;
static int n_events, n_updates, n_deletes;

static void on_event(void *p, const char *id, int64_t seq, const char *json)
{
	(void)p, (void)id, (void)seq, (void)json;
	n_events++;
}

static void on_session(void *p, const char *id, const char *json)
{
	(void)p, (void)id;
	if (json)
		n_updates++;
	else
		n_deletes++;
}

static void setup(void)
{
	rtfix_open(&F, NULL);
	n_events = n_updates = n_deletes = 0;
	s0__sessions_opts o = {.clock = &F.clock, .generation = 1,
	                       .sink = {.event = on_event, .session = on_session}};
	ck_assert_int_eq(s0__sessions_new(&o, &S, NULL), S0_OK);
}

static void teardown(void)
{
	s0__sessions_free(S);
	rtfix_close(&F);
}

/* Create from a JSON spec; returns the session (asserts the status). */
static cJSON *create(const char *json, const char *key, int want_status)
{
	cJSON *b = rtfix_json(json), *d = NULL;
	s0_error *e = NULL;
	int status = 0;
	int rc = s0__sessions_create_json(S, F.g, b, key, &d, &status, &e);
	ck_assert_msg(rc == S0_OK, "create %s: %s", json, e ? s0_error_message(e) : "?");
	ck_assert_int_eq(status, want_status);
	cJSON_Delete(b);
	return d;
}

static cJSON *get(const char *id)
{
	cJSON *d = NULL;
	s0_error *e = NULL;
	int rc = s0__sessions_get_json(S, F.g, id, &d, &e);
	ck_assert_msg(rc == S0_OK, "get: %s", e ? s0_error_message(e) : "?");
	return d;
}

static cJSON *events(const char *id, const char *after, const char *limit, int want_rc,
                     const char *want_msg)
{
	cJSON *d = NULL;
	s0_error *e = NULL;
	ck_assert_int_eq(s0__sessions_events_json(S, F.g, id, after, limit, &d, &e), want_rc);
	if (want_msg)
		ASSERT_STR(s0_error_message(e), want_msg);
	s0_error_free(e);
	return d;
}

/* "type[:stream]" of every event after `after`, joined by spaces. */
static char *types(const char *id, const char *after)
{
	cJSON *d = events(id, after, NULL, S0_OK, NULL), *ev;
	static char buf[4096];
	buf[0] = 0;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItem(d, "events"))
	{
		const cJSON *st = cJSON_GetObjectItem(ev, "stream");
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s%s%s", buf[0] ? " " : "",
		         rtfix_str(ev, "type"), st ? ":" : "", st ? st->valuestring : "");
	}
	cJSON_Delete(d);
	return buf;
}

static const char *phase(const char *id)
{
	static char buf[32];
	cJSON *d = get(id);
	snprintf(buf, sizeof buf, "%s", rtfix_str(d, "phase"));
	cJSON_Delete(d);
	return buf;
}

static char *sid(cJSON *d)
{
	char *s = strdup(rtfix_str(d, "id"));
	cJSON_Delete(d);
	return s;
}

START_TEST(create_shape_and_journal)
{
	cJSON *d = create("{\"command\":[\"sh\",\"-c\",\"echo hello; echo err >&2\"]}", NULL, 201);
	ck_assert_int_eq(strncmp(rtfix_str(d, "id"), "ses_", 4), 0);
	char *spec = cJSON_PrintUnformatted(cJSON_GetObjectItem(d, "spec"));
	ASSERT_STR(spec,
	           "{\"command\":[\"sh\",\"-c\",\"echo hello; echo err >&2\"],\"io\":{\"mode\":"
	           "\"pipes\",\"terminal\":{\"rows\":24,\"cols\":80,\"term\":\"xterm-256color\"}},"
	           "\"lifecycle\":{\"desired_state\":\"running\",\"restart\":{\"policy\":\"never\","
	           "\"max_restarts\":5,\"window_seconds\":60,\"initial_backoff_ms\":250,"
	           "\"max_backoff_ms\":5000},\"runtime_recovery\":\"restart\",\"idle_timeout_seconds\""
	           ":0,\"max_lifetime_seconds\":0,\"stop_grace_period_seconds\":10},\"readiness\":{"
	           "\"type\":\"process\",\"timeout_ms\":30000},\"event_retention\":{\"max_bytes\":"
	           "67108864,\"max_age_seconds\":86400}}");
	free(spec);
	ck_assert_int_eq(rtfix_int(d, "spec_version"), 1);
	ASSERT_STR(rtfix_str(d, "phase"), "exited");
	ck_assert_int_eq(rtfix_int(d, "runtime_generation"), 1);
	ck_assert_int_eq(rtfix_int(d, "restart_count"), 0);
	cJSON *att = cJSON_GetObjectItem(d, "attempt");
	ck_assert_int_eq(strncmp(rtfix_str(att, "id"), "att_", 4), 0);
	ck_assert_int_eq(rtfix_int(att, "number"), 1);
	ck_assert_int_gt(rtfix_int(att, "pid"), 1);
	ck_assert_int_eq(rtfix_int(att, "exit_code"), 0);
	ASSERT_STR(rtfix_str(att, "finished_at"), "2023-11-14T22:13:20Z");
	cJSON *cur = cJSON_GetObjectItem(d, "cursor");
	ck_assert_int_eq(rtfix_int(cur, "earliest"), 1);
	ck_assert_int_eq(rtfix_int(cur, "latest"), 7);
	ASSERT_STR(rtfix_str(d, "last_activity_at"), "2023-11-14T22:13:20Z");
	char *id = sid(d);
	ASSERT_STR(types(id, NULL), "session.created attempt.starting attempt.started session.ready "
	                            "output:stdout output:stderr attempt.exited");
	d = events(id, "4", "1", S0_OK, NULL);
	cJSON *ev = cJSON_GetArrayItem(cJSON_GetObjectItem(d, "events"), 0);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "events")), 1);
	ck_assert_int_eq(rtfix_int(ev, "seq"), 5);
	ASSERT_STR(rtfix_str(ev, "session_id"), id);
	ASSERT_STR(rtfix_str(ev, "data_base64"), "aGVsbG8K");
	ck_assert_int_eq(rtfix_int(ev, "runtime_generation"), 1);
	ck_assert_int_eq(strncmp(rtfix_str(ev, "attempt_id"), "att_", 4), 0);
	ASSERT_STR(rtfix_str(ev, "occurred_at"), "2023-11-14T22:13:20Z");
	cJSON_Delete(d);
	ASSERT_STR(types(id, "6"), "attempt.exited");
	ASSERT_STR(types(id, "7"), "");
	ck_assert_int_eq(n_events, 7);
	ck_assert_int_gt(n_updates, 0);
	free(id);
}
END_TEST

START_TEST(events_query_validation)
{
	char *id = sid(create("{\"command\":[\"true\"]}", NULL, 201));
	events(id, "-1", NULL, S0_EINVAL, "after must be a non-negative integer");
	events(id, "x", NULL, S0_EINVAL, "after must be a non-negative integer");
	events(id, NULL, "0", S0_EINVAL, "limit must be between 1 and 10000");
	events(id, NULL, "10001", S0_EINVAL, "limit must be between 1 and 10000");
	cJSON_Delete(events(id, "99", "10000", S0_OK, NULL));
	cJSON *d = NULL;
	s0_error *e = NULL;
	ck_assert_int_eq(s0__sessions_events_json(S, F.g, "ses_nope", NULL, NULL, &d, &e), S0_ENOTFOUND);
	ASSERT_STR(s0_error_reason(e), "session_not_found");
	s0_error_free(e);
	free(id);
}
END_TEST

START_TEST(retention_and_410)
{
	char *id = sid(create("{\"command\":[\"sh\",\"-c\",\"echo 1; sleep 1; echo 2; sleep 1; "
	                      "echo 3; sleep 100\"],\"event_retention\":{\"max_bytes\":900}}",
	                      NULL, 201));
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(s0__guest_advance(F.g, 1000, NULL), S0_OK);
		ck_assert_int_eq(s0__sessions_sync(S, F.g, NULL), S0_OK);
	}
	cJSON *d = get(id);
	cJSON *cur = cJSON_GetObjectItem(d, "cursor");
	int64_t earliest = rtfix_int(cur, "earliest"), latest = rtfix_int(cur, "latest");
	ck_assert_int_eq(latest, 7);
	ck_assert_int_gt(earliest, 1);
	cJSON_Delete(d);
	cJSON *x = events(id, "0", NULL, S0_EGONE, NULL);
	ck_assert_ptr_null(x);
	char after[32];
	snprintf(after, sizeof after, "%lld", (long long)(earliest - 1));
	d = events(id, after, NULL, S0_OK, NULL);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "events")), latest - earliest + 1);
	cJSON_Delete(d);
	s0_error *e = NULL;
	ck_assert_int_eq(s0__sessions_events_json(S, F.g, id, "0", NULL, &d, &e), S0_EGONE);
	ASSERT_STR(s0_error_reason(e), "event_cursor_expired");
	s0_error_free(e);
	/* age: everything older than max_age_seconds goes */
	char *id2 = sid(create("{\"command\":[\"true\"],\"event_retention\":{\"max_age_seconds\":60}}",
	                       NULL, 201));
	s0_manual_clock_advance(F.mc, 61000);
	cJSON_Delete(events(id2, "6", NULL, S0_OK, NULL));
	d = get(id2);
	cur = cJSON_GetObjectItem(d, "cursor");
	ck_assert_int_eq(rtfix_int(cur, "earliest"), rtfix_int(cur, "latest") + 1);
	cJSON_Delete(d);
	events(id2, "2", NULL, S0_EGONE, NULL);
	free(id2);
	free(id);
}
END_TEST

START_TEST(idempotency_key)
{
	cJSON *a = create("{\"command\":[\"sleep\",\"9\"],\"env\":{\"B\":\"2\",\"A\":\"1\"}}", "k1", 201);
	cJSON *b = create("{\"env\":{\"A\":\"1\",\"B\":\"2\"},\"command\":[\"sleep\",\"9\"],"
	                  "\"io\":{\"mode\":\"pipes\"}}", "k1", 200);
	ASSERT_STR(rtfix_str(a, "id"), rtfix_str(b, "id"));
	cJSON_Delete(b);
	cJSON *body = rtfix_json("{\"command\":[\"sleep\",\"10\"]}");
	cJSON *d = NULL;
	s0_error *e = NULL;
	int st = 0;
	ck_assert_int_eq(s0__sessions_create_json(S, F.g, body, "k1", &d, &st, &e), S0_ECONFLICT);
	ASSERT_STR(s0_error_reason(e), "session_conflict");
	s0_error_free(e);
	cJSON_Delete(body);
	cJSON *c = create("{\"command\":[\"sleep\",\"9\"]}", "k2", 201);
	ck_assert_str_ne(rtfix_str(a, "id"), rtfix_str(c, "id"));
	ck_assert_int_eq(s0__sessions_list_json(S, F.g, &d, NULL), S0_OK);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "sessions")), 2);
	cJSON_Delete(d);
	cJSON_Delete(a);
	cJSON_Delete(c);
}
END_TEST

/* A create refused with invalid_request (and msg, when given). */
static void spec_refused(const char *json, const char *msg)
{
	cJSON *b = rtfix_json(json), *d = NULL;
	s0_error *e = NULL;
	int st;
	ck_assert_int_eq(s0__sessions_create_json(S, F.g, b, NULL, &d, &st, &e), S0_EINVAL);
	ASSERT_STR(s0_error_reason(e), "invalid_request");
	if (msg)
		ASSERT_STR(s0_error_message(e), msg);
	s0_error_free(e);
	cJSON_Delete(b);
}

START_TEST(invalid_specs)
{
	static const char *const bad[][2] = {
		{"{}", "command is required"},
		{"{\"command\":[]}", "command is required"},
		{"{\"command\":[\"\"]}", "command must be non-empty strings"},
		{"{\"command\":[\"ls\"],\"io\":{\"mode\":\"tty\"}}", "io.mode is invalid"},
		{"{\"command\":[\"ls\"],\"io\":{\"terminal\":{\"rows\":0}}}", NULL},
		{"{\"command\":[\"ls\"],\"lifecycle\":{\"restart\":{\"policy\":\"sometimes\"}}}",
		 "lifecycle.restart.policy is invalid"},
		{"{\"command\":[\"ls\"],\"lifecycle\":{\"runtime_recovery\":\"resume\"}}", NULL},
		{"{\"command\":[\"ls\"],\"lifecycle\":{\"desired_state\":\"paused\"}}", NULL},
		{"{\"command\":[\"ls\"],\"readiness\":{\"type\":\"output\"}}", NULL},
		{"{\"command\":[\"ls\"],\"env\":{\"A\":1}}", "env must map variable names to strings"},
		{"{\"command\":[\"ls\"],\"event_retention\":{\"max_bytes\":0}}", NULL},
		{"{\"command\":[\"ls\"],\"lifecycle\":\"x\"}", "lifecycle must be an object"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		spec_refused(bad[i][0], bad[i][1]);
}
END_TEST

START_TEST(restart_policy)
{
	char *id = sid(create("{\"command\":[\"sh\",\"-c\",\"exit 1\"],\"lifecycle\":{\"restart\":"
	                      "{\"policy\":\"on_failure\",\"max_restarts\":2}}}", NULL, 201));
	ASSERT_STR(phase(id), "backoff");
	ck_assert_int_eq(s0__guest_advance(F.g, 250, NULL), S0_OK);
	ASSERT_STR(phase(id), "backoff");
	ck_assert_int_eq(s0__guest_advance(F.g, 500, NULL), S0_OK);
	cJSON *d = get(id);
	ASSERT_STR(rtfix_str(d, "phase"), "failed");
	ck_assert_int_eq(rtfix_int(d, "restart_count"), 2);
	ck_assert_int_eq(rtfix_int(cJSON_GetObjectItem(d, "attempt"), "number"), 3);
	cJSON_Delete(d);
	ck_assert_ptr_nonnull(strstr(types(id, NULL), "session.backoff"));
	ck_assert_ptr_nonnull(strstr(types(id, NULL), "session.failed"));
	char *ok = sid(create("{\"command\":[\"true\"],\"lifecycle\":{\"restart\":"
	                      "{\"policy\":\"on_failure\"}}}", NULL, 201));
	ASSERT_STR(phase(ok), "exited");
	char *al = sid(create("{\"command\":[\"true\"],\"lifecycle\":{\"restart\":"
	                      "{\"policy\":\"always\",\"initial_backoff_ms\":0}}}", NULL, 201));
	d = get(al);
	ASSERT_STR(rtfix_str(d, "phase"), "failed");
	ck_assert_int_eq(rtfix_int(d, "restart_count"), 5);
	cJSON_Delete(d);
	free(al);
	free(ok);
	free(id);
}
END_TEST

START_TEST(desired_state_signal_delete)
{
	char *id = sid(create("{\"command\":[\"sleep\",\"100\"]}", NULL, 201));
	ASSERT_STR(phase(id), "running");
	int32_t pid;
	ck_assert_int_eq(s0__sessions_pid(S, id, &pid, NULL), S0_OK);
	cJSON *b = rtfix_json("{\"state\":\"stopped\"}"), *d = NULL;
	ck_assert_int_eq(s0__sessions_desired_json(S, F.g, id, b, &d, NULL), S0_OK);
	ASSERT_STR(rtfix_str(d, "phase"), "stopped");
	ck_assert_int_eq(rtfix_int(d, "spec_version"), 2);
	cJSON *lc = cJSON_GetObjectItem(cJSON_GetObjectItem(d, "spec"), "lifecycle");
	ASSERT_STR(rtfix_str(lc, "desired_state"), "stopped");
	ASSERT_STR(rtfix_str(cJSON_GetObjectItem(d, "attempt"), "reason"), "stopped");
	cJSON_Delete(d);
	cJSON_Delete(b);
	s0__proc_info pi;
	ck_assert_int_eq(s0__guest_proc_get(F.g, pid, &pi, NULL), S0_ENOTFOUND);
	b = rtfix_json("{\"state\":\"running\"}");
	ck_assert_int_eq(s0__sessions_desired_json(S, F.g, id, b, &d, NULL), S0_OK);
	ASSERT_STR(rtfix_str(d, "phase"), "running");
	ck_assert_int_eq(rtfix_int(cJSON_GetObjectItem(d, "attempt"), "number"), 2);
	cJSON_Delete(d);
	cJSON_Delete(b);
	b = rtfix_json("{\"state\":\"paused\"}");
	ck_assert_int_eq(s0__sessions_desired_json(S, F.g, id, b, &d, NULL), S0_EINVAL);
	cJSON_Delete(b);
	b = rtfix_json("{\"signal\":\"TERM\",\"expected_attempt_id\":\"att_other\"}");
	s0_error *e = NULL;
	ck_assert_int_eq(s0__sessions_signal_json(S, F.g, id, b, &d, &e), S0_ECONFLICT);
	ASSERT_STR(s0_error_reason(e), "session_conflict");
	s0_error_free(e);
	cJSON_Delete(b);
	b = rtfix_json("{\"signal\":\"TERM\"}");
	ck_assert_int_eq(s0__sessions_signal_json(S, F.g, id, b, &d, NULL), S0_OK);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(d, "accepted")));
	cJSON_Delete(d);
	d = get(id);
	ASSERT_STR(rtfix_str(d, "phase"), "exited");
	ck_assert_int_eq(rtfix_int(cJSON_GetObjectItem(d, "attempt"), "exit_code"), 143);
	cJSON_Delete(d);
	ck_assert_int_eq(s0__sessions_signal_json(S, F.g, id, b, &d, NULL), S0_ECONFLICT);
	cJSON_Delete(b);
	ck_assert_ptr_nonnull(strstr(types(id, NULL), "signal.sent"));
	ck_assert_int_eq(s0__sessions_delete_json(S, F.g, id, &d, NULL), S0_OK);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(d, "deleted")));
	cJSON_Delete(d);
	ck_assert_int_eq(n_deletes, 1);
	ck_assert_int_eq(s0__sessions_get_json(S, F.g, id, &d, NULL), S0_ENOTFOUND);
	ck_assert_int_eq(s0__sessions_delete_json(S, F.g, id, &d, NULL), S0_ENOTFOUND);
	free(id);
}
END_TEST

START_TEST(pty_and_readiness)
{
	char *id = sid(create("{\"command\":[\"sh\",\"-c\",\"echo a; echo b >&2; sleep 1; "
	                      "echo ready; sleep 50\"],\"io\":{\"mode\":\"pty\"},\"readiness\":"
	                      "{\"type\":\"output\",\"output\":\"ready\"}}", NULL, 201));
	ASSERT_STR(phase(id), "starting");
	ASSERT_STR(types(id, NULL), "session.created attempt.starting attempt.started output:pty");
	ck_assert_int_eq(s0__guest_advance(F.g, 1000, NULL), S0_OK);
	ASSERT_STR(phase(id), "running");
	ASSERT_STR(types(id, "4"), "output:pty session.ready");
	free(id);
}
END_TEST

/* SES-01..SES-05 at module level: the lead shuts the old guest down and
 * calls s0__sessions_runtime_replaced with the new generation's guest. */
START_TEST(runtime_replacement)
{
	char *a = sid(create("{\"command\":[\"sh\",\"-c\",\"echo before; sleep 100\"]}", NULL, 201));
	char *b = sid(create("{\"command\":[\"sleep\",\"100\"],\"lifecycle\":{\"runtime_recovery\":"
	                     "\"stop\"}}", NULL, 201));
	char *c = sid(create("{\"command\":[\"true\"]}", NULL, 201));
	char *d = sid(create("{\"command\":[\"sleep\",\"100\"],\"lifecycle\":{\"desired_state\":"
	                     "\"stopped\"}}", NULL, 201));
	int32_t pid_a;
	ck_assert_int_eq(s0__sessions_pid(S, a, &pid_a, NULL), S0_OK);
	s0__guest_shutdown(F.g);
	cJSON *insp = s0__guest_inspect(F.g);
	cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(insp, "signal_log"), 0);
	ck_assert_int_eq(rtfix_int(first, "pid"), 1); /* SES-04: procd first */
	cJSON_Delete(insp);
	ck_assert_int_eq(s0__sessions_sync(S, F.g, NULL), S0_OK);
	ASSERT_STR(phase(a), "running"); /* the teardown is no exit */
	s0__guest *g2;
	s0__guest_opts o = {.clock = &F.clock};
	ck_assert_int_eq(s0__guest_new(&o, &g2, NULL), S0_OK);
	rtfix_set_guest(&F, g2);
	ck_assert_int_eq(s0__sessions_runtime_replaced(S, F.g, 2, NULL), S0_OK);
	cJSON *x = get(a);
	ASSERT_STR(rtfix_str(x, "phase"), "running");
	ck_assert_int_eq(rtfix_int(x, "runtime_generation"), 2);
	cJSON *att = cJSON_GetObjectItem(x, "attempt");
	ck_assert_int_eq(rtfix_int(att, "number"), 2);
	ck_assert_int_eq(rtfix_int(att, "runtime_generation"), 2);
	ck_assert_int_eq(rtfix_int(x, "restart_count"), 0);
	cJSON_Delete(x);
	ASSERT_STR(types(a, NULL), "session.created attempt.starting attempt.started session.ready "
	                           "output:stdout attempt.exited attempt.starting attempt.started "
	                           "session.ready output:stdout");
	cJSON *ev = events(a, "5", "1", S0_OK, NULL);
	cJSON *ex = cJSON_GetArrayItem(cJSON_GetObjectItem(ev, "events"), 0);
	ASSERT_STR(rtfix_str(ex, "reason"), "runtime_replaced");
	ck_assert_ptr_null(cJSON_GetObjectItem(ex, "exit_code"));
	ck_assert_int_eq(rtfix_int(ex, "runtime_generation"), 2);
	cJSON_Delete(ev);
	ASSERT_STR(phase(b), "stopped");
	ASSERT_STR(phase(c), "exited");
	ASSERT_STR(phase(d), "stopped");
	ASSERT_STR(types(c, NULL), "session.created attempt.starting attempt.started session.ready "
	                           "attempt.exited");
	free(a);
	free(b);
	free(c);
	free(d);
}
END_TEST

START_TEST(memory_restored_same_guest)
{
	char *a = sid(create("{\"command\":[\"sleep\",\"100\"]}", NULL, 201));
	int32_t p0, p1;
	ck_assert_int_eq(s0__sessions_pid(S, a, &p0, NULL), S0_OK);
	int before = n_events;
	ck_assert_int_eq(s0__sessions_memory_restored(S, F.g, 2, NULL), S0_OK);
	ck_assert_int_eq(s0__sessions_pid(S, a, &p1, NULL), S0_OK);
	ck_assert_int_eq(p0, p1);
	ck_assert_int_eq(n_events, before);
	cJSON *x = get(a);
	ck_assert_int_eq(rtfix_int(x, "runtime_generation"), 2);
	ck_assert_int_eq(rtfix_int(x, "restart_count"), 0);
	cJSON_Delete(x);
	free(a);
}
END_TEST

START_TEST(serialize_round_trip)
{
	char *a = sid(create("{\"command\":[\"sh\",\"-c\",\"echo x; sleep 10\"]}", "key", 201));
	char *b = sid(create("{\"command\":[\"false\"],\"lifecycle\":{\"restart\":{\"policy\":"
	                     "\"on_failure\"}}}", NULL, 201));
	cJSON *l1 = NULL, *l2 = NULL;
	ck_assert_int_eq(s0__sessions_list_json(S, NULL, &l1, NULL), S0_OK);
	void *blob;
	size_t len;
	ck_assert_int_eq(s0__sessions_serialize(S, &blob, &len, NULL), S0_OK);
	s0__sessions *s2;
	s0__sessions_opts o = {.clock = &F.clock};
	ck_assert_int_eq(s0__sessions_deserialize(blob, len, &o, &s2, NULL), S0_OK);
	ck_assert_int_eq(s0__sessions_list_json(s2, NULL, &l2, NULL), S0_OK);
	char *t1 = cJSON_PrintUnformatted(l1), *t2 = cJSON_PrintUnformatted(l2);
	ASSERT_STR(t1, t2);
	cJSON *body = rtfix_json("{\"command\":[\"sh\",\"-c\",\"echo x; sleep 10\"]}"), *d;
	int st;
	ck_assert_int_eq(s0__sessions_create_json(s2, NULL, body, "key", &d, &st, NULL), S0_OK);
	ck_assert_int_eq(st, 200);
	cJSON_Delete(d);
	cJSON_Delete(body);
	for (size_t cut = 0; cut < len; cut += len / 7 + 1) {
		s0__sessions *bad = NULL;
		s0_error *e = NULL;
		ck_assert_int_eq(s0__sessions_deserialize(blob, cut, &o, &bad, &e), S0_ECORRUPT);
		s0_error_free(e);
	}
	((char *)blob)[0] ^= 1;
	ck_assert_int_eq(s0__sessions_deserialize(blob, len, &o, &s2, NULL), S0_ECORRUPT);
	s0__sessions_free(s2);
	free(t1);
	free(t2);
	free(blob);
	cJSON_Delete(l1);
	cJSON_Delete(l2);
	free(a);
	free(b);
}
END_TEST

static void advance(int64_t ms)
{
	ck_assert_int_eq(s0__guest_advance(F.g, ms, NULL), S0_OK);
}

/* The session's attempt ended by its idle timeout: journal, phase, reason, exit code. */
static void assert_idle_expired(const char *id)
{
	cJSON *d = get(id);
	ASSERT_STR(rtfix_str(d, "phase"), "exited");
	cJSON *att = cJSON_GetObjectItem(d, "attempt");
	ASSERT_STR(rtfix_str(att, "reason"), "idle_timeout");
	ck_assert_int_eq(rtfix_int(att, "exit_code"), 143);
	cJSON_Delete(d);
	const char *t = types(id, NULL);
	size_t n = strlen(t), k = strlen("attempt.stopping attempt.exited session.expired");
	ck_assert_msg(n >= k && !strcmp(t + n - k, "attempt.stopping attempt.exited session.expired"),
	              "%s", t);
	d = events(id, NULL, NULL, S0_OK, NULL);
	cJSON *evs = cJSON_GetObjectItem(d, "events");
	ASSERT_STR(rtfix_str(cJSON_GetArrayItem(evs, cJSON_GetArraySize(evs) - 1), "reason"),
	           "idle_timeout");
	cJSON_Delete(d);
}

/* Session id still runs ms - 1 virtual ms from now and ends idle at ms. */
static void idle_ends_in(const char *id, int64_t ms)
{
	advance(ms - 1);
	ASSERT_STR(phase(id), "running");
	advance(1);
	assert_idle_expired(id);
}

/* lifecycle.idle_timeout_seconds ends the attempt exactly at the deadline,
 * whatever the restart policy; 0 never does. */
START_TEST(idle_timeout_expires)
{
	char *id = sid(create("{\"command\":[\"sleep\",\"100\"],\"lifecycle\":{"
	                      "\"idle_timeout_seconds\":3,\"restart\":{\"policy\":\"always\"}}}",
	                      NULL, 201));
	char *off = sid(create("{\"command\":[\"sleep\",\"100000\"]}", NULL, 201));
	idle_ends_in(id, 3000);
	advance(60000);
	ASSERT_STR(phase(id), "exited");
	advance(99000 * 1000);
	ASSERT_STR(phase(off), "running");
	free(off);
	free(id);
}
END_TEST

/* Output and signals push the idle deadline. */
START_TEST(idle_timeout_activity)
{
	char *id = sid(create("{\"command\":[\"sh\",\"-c\",\"sleep 2; echo a; sleep 100\"],"
	                      "\"lifecycle\":{\"idle_timeout_seconds\":3}}", NULL, 201));
	advance(4999); /* output at 2000 */
	ASSERT_STR(phase(id), "running");
	cJSON *b = rtfix_json("{\"signal\":\"WINCH\"}"), *d = NULL;
	ck_assert_int_eq(s0__sessions_signal_json(S, F.g, id, b, &d, NULL), S0_OK);
	cJSON_Delete(b);
	cJSON_Delete(d);
	idle_ends_in(id, 3000);
	ck_assert_ptr_nonnull(strstr(types(id, NULL), "output:stdout signal.sent"));
	free(id);
}
END_TEST

/* The idle deadline lives in the attempt's process: a memory image keeps it. */
START_TEST(idle_timeout_survives_checkpoint)
{
	char *id = sid(create("{\"command\":[\"sleep\",\"100\"],\"lifecycle\":{"
	                      "\"idle_timeout_seconds\":3}}", NULL, 201));
	int32_t p0, p1;
	ck_assert_int_eq(s0__sessions_pid(S, id, &p0, NULL), S0_OK);
	advance(1000);
	rtfix_roundtrip(&F);
	ck_assert_int_eq(s0__sessions_memory_restored(S, F.g, 2, NULL), S0_OK);
	ck_assert_int_eq(s0__sessions_pid(S, id, &p1, NULL), S0_OK);
	ck_assert_int_eq(p0, p1);
	idle_ends_in(id, 2000);
	free(id);
}
END_TEST

/* ---- the second tier (docs/wire.md §8.3 rows Replace spec, New attempt, Input,
 * Resize; §8.4 item 3) ---- */

typedef int (*ses_body_fn)(s0__sessions *, s0__guest *, const char *, const cJSON *, cJSON **,
                           s0_error **);

/* One body call; returns the data (want_rc S0_OK) or NULL after checking
 * the code and, when given, the reason. */
static cJSON *t2(ses_body_fn fn, const char *id, const char *json, int want_rc,
                 const char *want_reason)
{
	cJSON *b = json ? rtfix_json(json) : NULL, *d = NULL;
	s0_error *e = NULL;
	int rc = fn(S, F.g, id, b, &d, &e);
	ck_assert_msg(rc == want_rc, "%s: %d (%s)", json ? json : "(null)", rc,
	              e ? s0_error_message(e) : "ok");
	if (want_reason)
		ASSERT_STR(s0_error_reason(e), want_reason);
	s0_error_free(e);
	cJSON_Delete(b);
	return d;
}

static int32_t pid_of(const char *id)
{
	int32_t pid;
	ck_assert_int_eq(s0__sessions_pid(S, id, &pid, NULL), S0_OK);
	return pid;
}

static char *attempt_id(const char *id)
{
	cJSON *d = get(id);
	char *a = strdup(rtfix_str(cJSON_GetObjectItem(d, "attempt"), "id"));
	cJSON_Delete(d);
	return a;
}

/* The `reason` of the last event of a type. */
static char *last_reason(const char *id, const char *type)
{
	static char buf[64];
	cJSON *d = events(id, NULL, NULL, S0_OK, NULL), *ev;
	buf[0] = 0;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItem(d, "events"))
		if (!strcmp(rtfix_str(ev, "type"), type) && cJSON_GetObjectItem(ev, "reason"))
			snprintf(buf, sizeof buf, "%s", rtfix_str(ev, "reason"));
	cJSON_Delete(d);
	return buf;
}

/* The stdout bytes (base64) of every output event, concatenated as text. */
static char *outputs(const char *id)
{
	static char buf[1024];
	cJSON *d = events(id, NULL, NULL, S0_OK, NULL), *ev;
	buf[0] = 0;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItem(d, "events"))
		if (!strcmp(rtfix_str(ev, "type"), "output"))
			snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", buf[0] ? " " : "",
			         rtfix_str(ev, "data_base64"));
	cJSON_Delete(d);
	return buf;
}

START_TEST(api_8_3_replace_spec)
{
	char *id = sid(create("{\"command\":[\"sleep\",\"100\"]}", NULL, 201));
	int32_t p1 = pid_of(id);
	/* the same normalised spec: nothing changes */
	cJSON *d = t2(s0__sessions_replace_json, id,
	              "{\"command\":[\"sleep\",\"100\"],\"io\":{\"mode\":\"pipes\"}}", S0_OK, NULL);
	ck_assert_int_eq(rtfix_int(d, "spec_version"), 1);
	cJSON_Delete(d);
	/* the restart policy alone: a new spec_version, the same attempt */
	d = t2(s0__sessions_replace_json, id, "{\"command\":[\"sleep\",\"100\"],\"lifecycle\":"
	       "{\"restart\":{\"policy\":\"always\"}}}", S0_OK, NULL);
	ck_assert_int_eq(rtfix_int(d, "spec_version"), 2);
	ck_assert_int_eq(rtfix_int(cJSON_GetObjectItem(d, "attempt"), "number"), 1);
	ASSERT_STR(rtfix_str(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(d, "spec"),
	                     "lifecycle"), "restart"), "policy"), "always");
	cJSON_Delete(d);
	ck_assert_int_eq(pid_of(id), p1);
	/* a changed command: the attempt is replaced under the new spec */
	d = t2(s0__sessions_replace_json, id,
	       "{\"command\":[\"sh\",\"-c\",\"echo v2; sleep 100\"]}", S0_OK, NULL);
	ck_assert_int_eq(rtfix_int(d, "spec_version"), 3);
	ASSERT_STR(rtfix_str(d, "phase"), "running");
	cJSON *att = cJSON_GetObjectItem(d, "attempt");
	ck_assert_int_eq(rtfix_int(att, "number"), 2);
	ck_assert_int_ne(rtfix_int(att, "pid"), p1);
	cJSON_Delete(d);
	s0__proc_info pi;
	ck_assert_int_eq(s0__guest_proc_get(F.g, p1, &pi, NULL), S0_ENOTFOUND);
	ASSERT_STR(last_reason(id, "attempt.stopping"), "spec_changed");
	ASSERT_STR(outputs(id), "djIK"); /* "v2\n" */
	ck_assert_int_eq(rtfix_int(cJSON_GetObjectItem(d = get(id), "attempt"), "number"), 2);
	cJSON_Delete(d);
	/* desired state stopped in the spec stops it; running again starts one */
	d = t2(s0__sessions_replace_json, id, "{\"command\":[\"sh\",\"-c\",\"echo v2; sleep 100\"],"
	       "\"lifecycle\":{\"desired_state\":\"stopped\"}}", S0_OK, NULL);
	ASSERT_STR(rtfix_str(d, "phase"), "stopped");
	cJSON_Delete(d);
	d = t2(s0__sessions_replace_json, id, "{\"command\":[\"sh\",\"-c\",\"echo v2; sleep 100\"]}",
	       S0_OK, NULL);
	ASSERT_STR(rtfix_str(d, "phase"), "running");
	ck_assert_int_eq(rtfix_int(cJSON_GetObjectItem(d, "attempt"), "number"), 3);
	ck_assert_int_eq(rtfix_int(d, "spec_version"), 5);
	cJSON_Delete(d);
	/* a terminal session with a changed command runs again */
	char *ex = sid(create("{\"command\":[\"true\"]}", NULL, 201));
	d = t2(s0__sessions_replace_json, ex, "{\"command\":[\"sh\",\"-c\",\"echo again\"]}", S0_OK,
	       NULL);
	ASSERT_STR(rtfix_str(d, "phase"), "exited");
	ck_assert_int_eq(rtfix_int(cJSON_GetObjectItem(d, "attempt"), "number"), 2);
	cJSON_Delete(d);
	/* errors */
	t2(s0__sessions_replace_json, id, "{}", S0_EINVAL, "invalid_request");
	t2(s0__sessions_replace_json, id, "{\"command\":[\"ls\"],\"io\":{\"mode\":\"tty\"}}", S0_EINVAL,
	   "invalid_request");
	t2(s0__sessions_replace_json, "ses_nope", "{\"command\":[\"ls\"]}", S0_ENOTFOUND,
	   "session_not_found");
	free(ex);
	free(id);
}
END_TEST

START_TEST(api_8_3_new_attempt)
{
	char *id = sid(create("{\"command\":[\"sleep\",\"100\"]}", NULL, 201));
	int32_t p1 = pid_of(id);
	t2(s0__sessions_attempt_json, id, NULL, S0_ECONFLICT, "session_conflict");
	t2(s0__sessions_attempt_json, id, "{\"replace_current\":false}", S0_ECONFLICT,
	   "session_conflict");
	t2(s0__sessions_attempt_json, id, "{\"replace_current\":\"yes\"}", S0_EINVAL,
	   "invalid_request");
	cJSON *d = t2(s0__sessions_attempt_json, id, "{\"replace_current\":true}", S0_OK, NULL);
	ASSERT_STR(rtfix_str(d, "phase"), "running");
	ck_assert_int_eq(rtfix_int(cJSON_GetObjectItem(d, "attempt"), "number"), 2);
	ck_assert_int_eq(rtfix_int(d, "spec_version"), 1);
	cJSON_Delete(d);
	ck_assert_int_ne(pid_of(id), p1);
	ASSERT_STR(last_reason(id, "attempt.stopping"), "replaced");
	ASSERT_STR(last_reason(id, "attempt.exited"), "stopped");
	/* an exited session gets a new attempt without a body */
	char *ex = sid(create("{\"command\":[\"sh\",\"-c\",\"echo hi\"]}", NULL, 201));
	d = t2(s0__sessions_attempt_json, ex, NULL, S0_OK, NULL);
	ck_assert_int_eq(rtfix_int(cJSON_GetObjectItem(d, "attempt"), "number"), 2);
	ASSERT_STR(rtfix_str(d, "phase"), "exited");
	cJSON_Delete(d);
	ASSERT_STR(outputs(ex), "aGkK aGkK");
	t2(s0__sessions_attempt_json, "ses_nope", NULL, S0_ENOTFOUND, "session_not_found");
	free(ex);
	free(id);
}
END_TEST

static cJSON *input(const char *id, const char *json, int want_rc, const char *want_reason)
{
	return t2(s0__sessions_input_json, id, json, want_rc, want_reason);
}

START_TEST(api_8_3_inputs_reach_stdin)
{
	char *id = sid(create("{\"command\":[\"sh\",\"-c\",\"read X; echo got $X\"]}", NULL, 201));
	ASSERT_STR(phase(id), "running"); /* the read waits for input */
	char *att = attempt_id(id);
	/* "hello\n" */
	cJSON *d = input(id, "{\"input_id\":\"i1\",\"data_base64\":\"aGVsbG8K\"}", S0_OK, NULL);
	ASSERT_STR(rtfix_str(d, "input_id"), "i1");
	ASSERT_STR(rtfix_str(d, "attempt_id"), att);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(d, "accepted")));
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(d, "duplicate")));
	cJSON_Delete(d);
	ASSERT_STR(types(id, "4"), "input.accepted output:stdout attempt.exited");
	ASSERT_STR(outputs(id), "Z290IGhlbGxvCg=="); /* "got hello\n" */
	ASSERT_STR(last_reason(id, "input.accepted"), "i1");
	ASSERT_STR(phase(id), "exited");
	/* a replay answers again, whatever the attempt's state now */
	d = input(id, "{\"input_id\":\"i1\",\"data_base64\":\"aGVsbG8K\"}", S0_OK, NULL);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(d, "duplicate")));
	ASSERT_STR(rtfix_str(d, "attempt_id"), att);
	cJSON_Delete(d);
	input(id, "{\"input_id\":\"i1\",\"data_base64\":\"aGkK\"}", S0_ECONFLICT, "session_conflict");
	input(id, "{\"input_id\":\"i1\",\"data_base64\":\"aGVsbG8K\",\"eof\":true}", S0_ECONFLICT,
	      "session_conflict");
	input(id, "{\"input_id\":\"i2\",\"data_base64\":\"aGkK\"}", S0_ECONFLICT, "session_conflict");
	free(att);
	/* partial lines wait for the rest; eof ends the second read */
	char *id2 = sid(create("{\"command\":[\"sh\",\"-c\",\"read X; echo got $X; read Y || "
	                       "echo eof\"]}", NULL, 201));
	cJSON_Delete(input(id2, "{\"input_id\":\"a\",\"data_base64\":\"YWI=\"}", S0_OK, NULL));
	ASSERT_STR(outputs(id2), "");
	input(id2, "{\"input_id\":\"b\",\"data_base64\":\"Yw==\",\"expected_attempt_id\":\"att_x\"}",
	      S0_ECONFLICT, "session_conflict");
	cJSON_Delete(input(id2, "{\"input_id\":\"b\",\"data_base64\":\"Ywo=\"}", S0_OK, NULL));
	ASSERT_STR(outputs(id2), "Z290IGFiYwo="); /* "got abc\n" */
	ASSERT_STR(phase(id2), "running");
	cJSON_Delete(input(id2, "{\"input_id\":\"c\",\"eof\":true}", S0_OK, NULL));
	ASSERT_STR(outputs(id2), "Z290IGFiYwo= ZW9mCg==");
	ASSERT_STR(phase(id2), "exited");
	/* stdin closed by eof */
	char *id3 = sid(create("{\"command\":[\"sleep\",\"100\"]}", NULL, 201));
	cJSON_Delete(input(id3, "{\"input_id\":\"e\",\"eof\":true}", S0_OK, NULL));
	input(id3, "{\"input_id\":\"f\",\"data_base64\":\"eA==\"}", S0_ECONFLICT, "session_conflict");
	/* bad requests */
	input(id3, "{}", S0_EINVAL, "invalid_request");
	input(id3, "{\"input_id\":\"\"}", S0_EINVAL, "invalid_request");
	input(id3, "{\"input_id\":7}", S0_EINVAL, "invalid_request");
	input(id3, "{\"input_id\":\"g\",\"data_base64\":\"!!\"}", S0_EINVAL, "invalid_request");
	input(id3, "{\"input_id\":\"g\",\"eof\":\"yes\"}", S0_EINVAL, "invalid_request");
	input(id3, "{\"input_id\":\"g\",\"expected_attempt_id\":1}", S0_EINVAL, "invalid_request");
	input("ses_nope", "{\"input_id\":\"g\"}", S0_ENOTFOUND, "session_not_found");
	free(id3);
	free(id2);
	free(id);
}
END_TEST

/* 429 input_buffer_full past S0__SES_STDIN_MAX unread bytes. */
START_TEST(api_8_3_input_buffer_full)
{
	char *id = sid(create("{\"command\":[\"sleep\",\"100\"]}", NULL, 201));
	size_t n = 40000, b64n = sodium_base64_encoded_len(n, sodium_base64_VARIANT_ORIGINAL);
	unsigned char *raw = calloc(1, n);
	char *b64 = malloc(b64n), *body = malloc(b64n + 64);
	sodium_bin2base64(b64, b64n, raw, n, sodium_base64_VARIANT_ORIGINAL);
	snprintf(body, b64n + 64, "{\"input_id\":\"big1\",\"data_base64\":\"%s\"}", b64);
	cJSON_Delete(input(id, body, S0_OK, NULL));
	snprintf(body, b64n + 64, "{\"input_id\":\"big2\",\"data_base64\":\"%s\"}", b64);
	input(id, body, S0_ETHROTTLED, "input_buffer_full");
	const char *wire;
	int status;
	s0_error_to_wire(S0_ETHROTTLED, "input_buffer_full", &wire, &status, NULL);
	ASSERT_STR(wire, "input_buffer_full");
	ck_assert_int_eq(status, 429);
	/* a refused input is not remembered: the same id can come again */
	snprintf(body, b64n + 64, "{\"input_id\":\"big2\",\"data_base64\":\"eA==\"}");
	cJSON_Delete(input(id, body, S0_OK, NULL));
	free(body);
	free(b64);
	free(raw);
	free(id);
}
END_TEST

START_TEST(api_8_3_terminal_resize)
{
	char *id = sid(create("{\"command\":[\"sleep\",\"100\"],\"io\":{\"mode\":\"pty\"}}", NULL,
	                      201));
	char *att = attempt_id(id);
	cJSON *d = t2(s0__sessions_terminal_json, id, "{\"rows\":40,\"cols\":120}", S0_OK, NULL);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(d, "resized")));
	cJSON_Delete(d);
	char body[160];
	snprintf(body, sizeof body, "{\"rows\":1,\"cols\":65535,\"expected_attempt_id\":\"%s\"}", att);
	cJSON_Delete(t2(s0__sessions_terminal_json, id, body, S0_OK, NULL));
	ASSERT_STR(types(id, "4"), "terminal.resized terminal.resized");
	ASSERT_STR(last_reason(id, "terminal.resized"), "1x65535");
	ASSERT_STR(phase(id), "running"); /* WINCH is ignored */
	static const char *const bad[] = {
		"{}", "{\"rows\":0,\"cols\":80}", "{\"rows\":24,\"cols\":65536}",
		"{\"rows\":24.5,\"cols\":80}", "{\"rows\":\"24\",\"cols\":80}", "{\"rows\":24}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		t2(s0__sessions_terminal_json, id, bad[i], S0_EINVAL, "invalid_request");
	t2(s0__sessions_terminal_json, id, "{\"rows\":24,\"cols\":80,\"expected_attempt_id\":"
	   "\"att_x\"}", S0_ECONFLICT, "session_conflict");
	t2(s0__sessions_terminal_json, "ses_nope", "{\"rows\":24,\"cols\":80}", S0_ENOTFOUND,
	   "session_not_found");
	char *pipes = sid(create("{\"command\":[\"sleep\",\"100\"]}", NULL, 201));
	t2(s0__sessions_terminal_json, pipes, "{\"rows\":24,\"cols\":80}", S0_ECONFLICT,
	   "pty_unavailable");
	char *ex = sid(create("{\"command\":[\"true\"],\"io\":{\"mode\":\"pty\"}}", NULL, 201));
	t2(s0__sessions_terminal_json, ex, "{\"rows\":24,\"cols\":80}", S0_ECONFLICT,
	   "session_conflict");
	free(ex);
	free(pipes);
	free(att);
	free(id);
}
END_TEST

/* The second-tier state (input ids, terminal size) is in the blob; a
 * waiting `read` survives a memory restore into the same guest. */
START_TEST(api_8_3_tier2_state_serialized)
{
	char *id = sid(create("{\"command\":[\"sh\",\"-c\",\"read A; echo a=$A; read B; "
	                      "echo b=$B\"]}", NULL, 201));
	cJSON_Delete(input(id, "{\"input_id\":\"one\",\"data_base64\":\"MQo=\"}", S0_OK, NULL));
	ck_assert_int_eq(s0__sessions_memory_restored(S, F.g, 2, NULL), S0_OK);
	void *blob;
	size_t len;
	ck_assert_int_eq(s0__sessions_serialize(S, &blob, &len, NULL), S0_OK);
	ck_assert_int_eq(memcmp(blob, "S0SES003", 8), 0);
	s0__sessions *s2;
	s0__sessions_opts o = {.clock = &F.clock, .generation = 2};
	ck_assert_int_eq(s0__sessions_deserialize(blob, len, &o, &s2, NULL), S0_OK);
	s0__sessions_free(S);
	S = s2;
	cJSON *d = input(id, "{\"input_id\":\"one\",\"data_base64\":\"MQo=\"}", S0_OK, NULL);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(d, "duplicate")));
	cJSON_Delete(d);
	input(id, "{\"input_id\":\"one\",\"data_base64\":\"Mgo=\"}", S0_ECONFLICT, "session_conflict");
	cJSON_Delete(input(id, "{\"input_id\":\"two\",\"data_base64\":\"Mgo=\"}", S0_OK, NULL));
	ASSERT_STR(outputs(id), "YT0xCg== Yj0yCg=="); /* "a=1\n", "b=2\n" */
	ASSERT_STR(phase(id), "exited");
	for (size_t cut = 0; cut < len; cut += len / 9 + 1) {
		s0__sessions *bad = NULL;
		s0_error *e = NULL;
		ck_assert_int_eq(s0__sessions_deserialize(blob, cut, &o, &bad, &e), S0_ECORRUPT);
		s0_error_free(e);
	}
	free(blob);
	free(id);
}
END_TEST


/* ---- deadlines: max lifetime, stop grace, readiness timeout (docs/wire.md §8.3
 * ExecutionSessionSpec rows lifecycle.max_lifetime_seconds,
 * stop_grace_period_seconds, readiness) ---- */

/* Advance virtual time by ms, then the session is in phase want. */
static void phase_after(const char *id, int64_t ms, const char *want)
{
	advance(ms);
	ASSERT_STR(phase(id), want);
}

static cJSON *desired(const char *id, const char *state)
{
	char body[64];
	snprintf(body, sizeof body, "{\"state\":\"%s\"}", state);
	return t2(s0__sessions_desired_json, id, body, S0_OK, NULL);
}

/* The current attempt's number, and (reason non-NULL) its reason and exit code. */
static void assert_attempt(const char *id, const char *reason, int exit_code, int number)
{
	cJSON *d = get(id), *att = cJSON_GetObjectItem(d, "attempt");
	ck_assert_int_eq(rtfix_int(att, "number"), number);
	if (reason) {
		ASSERT_STR(rtfix_str(att, "reason"), reason);
		ck_assert_int_eq(rtfix_int(att, "exit_code"), exit_code);
	}
	cJSON_Delete(d);
}

/* The journal ends with `tail`. */
static void assert_tail(const char *id, const char *tail)
{
	const char *t = types(id, NULL);
	size_t n = strlen(t), k = strlen(tail);
	ck_assert_msg(n >= k && !strcmp(t + n - k, tail), "journal [%s] does not end [%s]", t, tail);
}

/* lifecycle.max_lifetime_seconds counts from the session's creation (not
 * the attempt's start), ends the attempt exactly then (TERM: 143) and is
 * not restarted; no new attempt may start afterwards. */
START_TEST(max_lifetime_from_creation)
{
	char *id = sid(create("{\"command\":[\"sh\",\"-c\",\"sleep 3; exit 1\"],\"lifecycle\":{"
	                      "\"max_lifetime_seconds\":5,\"restart\":{\"policy\":\"always\","
	                      "\"initial_backoff_ms\":1000}}}", NULL, 201));
	phase_after(id, 3000, "backoff");
	phase_after(id, 1000, "running"); /* attempt 2 from 4000 */
	phase_after(id, 999, "running");
	phase_after(id, 1, "exited");
	assert_attempt(id, "max_lifetime", 143, 2);
	assert_tail(id, "attempt.stopping attempt.exited session.expired");
	ASSERT_STR(last_reason(id, "session.expired"), "max_lifetime");
	ASSERT_STR(last_reason(id, "attempt.stopping"), "max_lifetime");
	phase_after(id, 60000, "exited");
	t2(s0__sessions_attempt_json, id, NULL, S0_ECONFLICT, "session_conflict");
	/* desired running past the lifetime records the expiry again, starts nothing */
	cJSON_Delete(desired(id, "stopped"));
	cJSON_Delete(desired(id, "running"));
	ASSERT_STR(phase(id), "exited");
	assert_tail(id, "session.expired");
	ck_assert_int_eq(pid_of(id), 0);
	/* a backoff that outlives the lifetime expires without an attempt */
	char *b = sid(create("{\"command\":[\"false\"],\"lifecycle\":{\"max_lifetime_seconds\":2,"
	                     "\"restart\":{\"policy\":\"always\",\"initial_backoff_ms\":5000}}}",
	                     NULL, 201));
	ASSERT_STR(phase(b), "backoff");
	phase_after(b, 1999, "backoff");
	phase_after(b, 1, "exited");
	assert_tail(b, "session.backoff session.expired");
	free(b);
	free(id);
}
END_TEST

/* stop_grace_period_seconds: a stop sends TERM; a process that ignores it
 * (trap '' TERM) gets KILL exactly when the grace ends (137); one that
 * does not ends at once (143). */
START_TEST(stop_grace_then_kill)
{
	char *id = sid(create("{\"command\":[\"sh\",\"-c\",\"trap '' TERM; sleep 100\"],"
	                      "\"lifecycle\":{\"stop_grace_period_seconds\":2}}", NULL, 201));
	char *plain = sid(create("{\"command\":[\"sleep\",\"100\"],\"lifecycle\":{"
	                         "\"stop_grace_period_seconds\":2}}", NULL, 201));
	cJSON_Delete(desired(id, "stopped"));
	cJSON_Delete(desired(plain, "stopped"));
	ASSERT_STR(phase(plain), "stopped");
	assert_attempt(plain, "stopped", 143, 1);
	ASSERT_STR(phase(id), "stopping");
	assert_tail(id, "attempt.stopping");
	phase_after(id, 1999, "stopping");
	phase_after(id, 1, "stopped");
	assert_attempt(id, "stopped", 137, 1);
	assert_tail(id, "attempt.stopping attempt.exited");
	/* desired running during a grace starts the next attempt once it exits */
	cJSON_Delete(desired(id, "running"));
	ASSERT_STR(phase(id), "running");
	cJSON_Delete(desired(id, "stopped"));
	cJSON_Delete(desired(id, "running"));
	ASSERT_STR(phase(id), "stopping");
	phase_after(id, 2000, "running");
	assert_attempt(id, NULL, 0, 3);
	/* replace_current waits for the grace too */
	cJSON_Delete(t2(s0__sessions_attempt_json, id, "{\"replace_current\":true}", S0_OK, NULL));
	ASSERT_STR(phase(id), "stopping");
	ASSERT_STR(last_reason(id, "attempt.stopping"), "replaced");
	phase_after(id, 2000, "running");
	assert_attempt(id, NULL, 0, 4);
	/* delete: the process outlives its session until the grace ends, then is reaped */
	int32_t pid = pid_of(id);
	cJSON *d = NULL;
	ck_assert_int_eq(s0__sessions_delete_json(S, F.g, id, &d, NULL), S0_OK);
	cJSON_Delete(d);
	s0__proc_info pi;
	ck_assert_int_eq(s0__guest_proc_get(F.g, pid, &pi, NULL), S0_OK);
	ck_assert(!pi.ended);
	advance(1999);
	ck_assert_int_eq(s0__guest_proc_get(F.g, pid, &pi, NULL), S0_OK);
	advance(1);
	ck_assert_int_eq(s0__guest_proc_get(F.g, pid, &pi, NULL), S0_ENOTFOUND);
	free(plain);
	free(id);
}
END_TEST

/* An idle expiry is a stop too: TERM at the deadline, KILL after the grace;
 * the journal shows attempt.stopping (idle_timeout) at the deadline. */
START_TEST(idle_expiry_honours_grace)
{
	char *id = sid(create("{\"command\":[\"sh\",\"-c\",\"trap '' TERM; sleep 100\"],"
	                      "\"lifecycle\":{\"idle_timeout_seconds\":3,"
	                      "\"stop_grace_period_seconds\":1}}", NULL, 201));
	phase_after(id, 2999, "running");
	phase_after(id, 1, "stopping");
	assert_tail(id, "attempt.stopping");
	ASSERT_STR(last_reason(id, "attempt.stopping"), "idle_timeout");
	phase_after(id, 999, "stopping");
	phase_after(id, 1, "exited");
	assert_attempt(id, "idle_timeout", 137, 1);
	assert_tail(id, "attempt.stopping attempt.exited session.expired");
	free(id);
}
END_TEST

/* readiness timeout_ms ends an attempt that never became ready; it is an
 * attempt failure: `never` ends `failed` (session.failed readiness_timeout),
 * `on_failure` restarts. delay readiness is met delay_ms after the start. */
START_TEST(readiness_timeout_and_delay)
{
	char *id = sid(create("{\"command\":[\"sleep\",\"100\"],\"readiness\":{\"type\":"
	                      "\"output\",\"output\":\"ready\",\"timeout_ms\":2000}}", NULL, 201));
	char *rs = sid(create("{\"command\":[\"sh\",\"-c\",\"trap '' TERM; sleep 100\"],"
	                      "\"lifecycle\":{\"stop_grace_period_seconds\":1,\"restart\":{"
	                      "\"policy\":\"on_failure\",\"initial_backoff_ms\":500}},"
	                      "\"readiness\":{\"type\":\"output\",\"output\":\"ready\","
	                      "\"timeout_ms\":2000}}", NULL, 201));
	char *dl = sid(create("{\"command\":[\"sleep\",\"100\"],\"readiness\":{\"type\":"
	                      "\"delay\",\"delay_ms\":1000}}", NULL, 201));
	char *ok = sid(create("{\"command\":[\"sh\",\"-c\",\"sleep 1; echo ready; sleep 100\"],"
	                      "\"readiness\":{\"type\":\"output\",\"output\":\"ready\","
	                      "\"timeout_ms\":2000}}", NULL, 201));
	ASSERT_STR(phase(dl), "starting");
	phase_after(dl, 999, "starting");
	phase_after(dl, 1, "running");
	assert_tail(dl, "attempt.started session.ready");
	phase_after(id, 999, "starting");
	ASSERT_STR(phase(rs), "starting");
	phase_after(id, 1, "failed");
	assert_attempt(id, "readiness_timeout", 143, 1);
	assert_tail(id, "attempt.stopping attempt.exited session.failed");
	ASSERT_STR(last_reason(id, "session.failed"), "readiness_timeout");
	ASSERT_STR(phase(rs), "stopping");
	phase_after(rs, 1000, "backoff");
	assert_attempt(rs, "readiness_timeout", 137, 1);
	phase_after(rs, 500, "starting");
	assert_attempt(rs, NULL, 0, 2);
	ASSERT_STR(phase(ok), "running"); /* ready at 1000, before its timeout */
	phase_after(ok, 60000, "running");
	ASSERT_STR(phase(dl), "running");
	free(ok);
	free(dl);
	free(rs);
	free(id);
}
END_TEST

/* A stop in its grace period and the session's deadlines survive a memory
 * round trip (guest S0GST003, sessions S0SES003); an S0SES002 blob loads. */
START_TEST(deadlines_survive_checkpoint)
{
	char *id = sid(create("{\"command\":[\"sh\",\"-c\",\"trap '' TERM; sleep 100\"],"
	                      "\"lifecycle\":{\"stop_grace_period_seconds\":2,"
	                      "\"max_lifetime_seconds\":10}}", NULL, 201));
	cJSON_Delete(desired(id, "stopped"));
	advance(1000);
	rtfix_roundtrip(&F);
	ck_assert_int_eq(s0__sessions_memory_restored(S, F.g, 2, NULL), S0_OK);
	void *blob;
	size_t len;
	ck_assert_int_eq(s0__sessions_serialize(S, &blob, &len, NULL), S0_OK);
	s0__sessions *s2;
	s0__sessions_opts o = {.clock = &F.clock, .generation = 2};
	ck_assert_int_eq(s0__sessions_deserialize(blob, len, &o, &s2, NULL), S0_OK);
	s0__sessions_free(S);
	S = s2;
	ASSERT_STR(phase(id), "stopping");
	phase_after(id, 999, "stopping");
	phase_after(id, 1, "stopped");
	assert_attempt(id, "stopped", 137, 1);
	/* the creation time came through: the lifetime still ends at 10 s */
	cJSON_Delete(desired(id, "running"));
	phase_after(id, 7999, "running");
	phase_after(id, 1, "stopping"); /* TERM is ignored: KILL after the grace */
	ASSERT_STR(last_reason(id, "attempt.stopping"), "max_lifetime");
	phase_after(id, 2000, "exited");
	assert_attempt(id, "max_lifetime", 137, 2);
	/* S0SES002: the same blob without the 18-byte deadline trailer */
	free(blob);
	ck_assert_int_eq(s0__sessions_serialize(S, &blob, &len, NULL), S0_OK);
	((char *)blob)[7] = '2';
	ck_assert_int_eq(s0__sessions_deserialize(blob, len, &o, &s2, NULL), S0_ECORRUPT);
	ck_assert_int_eq(s0__sessions_deserialize(blob, len - 18, &o, &s2, NULL), S0_OK);
	s0__sessions_free(S);
	S = s2;
	ASSERT_STR(phase(id), "exited");
	cJSON_Delete(desired(id, "stopped"));
	cJSON_Delete(desired(id, "running")); /* created_vt unknown: counted from now */
	ASSERT_STR(phase(id), "running");
	phase_after(id, 9999, "running");
	phase_after(id, 1, "stopping");
	phase_after(id, 2000, "exited");
	assert_attempt(id, "max_lifetime", 137, 3);
	free(blob);
	free(id);
}
END_TEST

/* `cat` of stdin in an attempt waits for EOF like `read` waits for a line;
 * a `read` stopped (STOP) while its input came resumes on CONT. */
/* A misspelt member of a spec (at any level) or of a body is refused naming
 * its path; every wire key of the SDK's ExecutionSession* models passes. */
START_TEST(unknown_fields_refused)
{
	static const char *const bad[][2] = {
		{"{\"command\":[\"ls\"],\"lifecyle\":{}}", "unknown field \"lifecyle\""},
		{"{\"command\":[\"ls\"],\"lifecycle\":{\"restart\":{\"polcy\":\"always\"}}}",
		 "unknown field \"lifecycle.restart.polcy\""},
		{"{\"command\":[\"ls\"],\"lifecycle\":{\"idle_timeout\":5}}",
		 "unknown field \"lifecycle.idle_timeout\""},
		{"{\"command\":[\"ls\"],\"io\":{\"mod\":\"pty\"}}", "unknown field \"io.mod\""},
		{"{\"command\":[\"ls\"],\"io\":{\"terminal\":{\"rows\":5,\"colz\":5}}}",
		 "unknown field \"io.terminal.colz\""},
		{"{\"command\":[\"ls\"],\"readiness\":{\"timeout\":5}}",
		 "unknown field \"readiness.timeout\""},
		{"{\"command\":[\"ls\"],\"event_retention\":{\"max_age\":5}}",
		 "unknown field \"event_retention.max_age\""},
		{"{\"comand\":[\"ls\"]}", "unknown field \"comand\""},
		{"{\"command\":\"sh\"}", "command must be an array of strings"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		spec_refused(bad[i][0], bad[i][1]);
	static const char full[] =
		"{\"name\":\"n\",\"command\":[\"sh\",\"-c\",\"read X; echo got $X; sleep 100\"],"
		"\"cwd\":\"/tmp\",\"env\":{\"A\":\"1\"},\"io\":{\"mode\":\"pipes\",\"terminal\":{\"rows\":"
		"24,\"cols\":80,\"term\":\"xterm\"}},\"lifecycle\":{\"desired_state\":\"running\","
		"\"restart\":{\"policy\":\"never\",\"max_restarts\":1,\"window_seconds\":60,"
		"\"initial_backoff_ms\":10,\"max_backoff_ms\":20},\"runtime_recovery\":\"stop\","
		"\"idle_timeout_seconds\":0,\"max_lifetime_seconds\":0,\"stop_grace_period_seconds\":1},"
		"\"readiness\":{\"type\":\"process\",\"delay_ms\":0,\"output\":\"x\",\"timeout_ms\":100},"
		"\"event_retention\":{\"max_bytes\":1048576,\"max_age_seconds\":600}}";
	char *id = sid(create(full, NULL, 201));
	ASSERT_STR(phase(id), "running");
	cJSON_Delete(t2(s0__sessions_replace_json, id, "{\"command\":[\"ls\"],\"readiness\":"
	                "{\"type\":\"process\",\"delay\":1}}",
	                S0_EINVAL, "invalid_request"));
	cJSON_Delete(t2(s0__sessions_desired_json, id, "{\"state\":\"stopped\",\"force\":true}",
	                S0_EINVAL, "invalid_request"));
	cJSON_Delete(t2(s0__sessions_signal_json, id, "{\"signal\":\"TERM\",\"expected\":\"x\"}",
	                S0_EINVAL, "invalid_request"));
	cJSON_Delete(t2(s0__sessions_attempt_json, id, "{\"replace\":true}", S0_EINVAL,
	                "invalid_request"));
	cJSON_Delete(t2(s0__sessions_terminal_json, id, "{\"rows\":5,\"cols\":5,\"pty\":true}",
	                S0_EINVAL, "invalid_request"));
	/* the report's case: "data" for "data_base64" delivered nothing with 202 */
	cJSON *b = rtfix_json("{\"input_id\":\"d1\",\"data\":\"hello\\n\"}"), *d = NULL;
	s0_error *e = NULL;
	ck_assert_int_eq(s0__sessions_input_json(S, F.g, id, b, &d, &e), S0_EINVAL);
	ASSERT_STR(s0_error_message(e), "unknown field \"data\"");
	s0_error_free(e);
	cJSON_Delete(b);
	ASSERT_STR(phase(id), "running");
	d = get(id);
	ck_assert_int_eq(rtfix_int(d, "spec_version"), 1); /* the refused PUT and desired-state */
	cJSON_Delete(d);
	/* the refused input_id is still free; every wire key of the input model */
	cJSON_Delete(input(id, "{\"input_id\":\"d1\",\"expected_attempt_id\":null,"
	                       "\"data_base64\":\"aGVsbG8K\",\"eof\":false}",
	                   S0_OK, NULL));
	ASSERT_STR(outputs(id), "Z290IGhlbGxvCg=="); /* "got hello\n" */
	cJSON_Delete(t2(s0__sessions_signal_json, id,
	                "{\"signal\":\"TERM\",\"expected_attempt_id\":null}", S0_OK, NULL));
	free(id);
}
END_TEST

START_TEST(cat_waits_and_read_resumes_after_cont)
{
	char *c = sid(create("{\"command\":[\"sh\",\"-c\",\"cat; echo done\"]}", NULL, 201));
	cJSON_Delete(input(c, "{\"input_id\":\"a\",\"data_base64\":\"YWIK\"}", S0_OK, NULL));
	ASSERT_STR(outputs(c), "");
	ASSERT_STR(phase(c), "running");
	cJSON_Delete(input(c, "{\"input_id\":\"b\",\"data_base64\":\"Yw==\",\"eof\":true}",
	                   S0_OK, NULL));
	ASSERT_STR(outputs(c), "YWIKY2RvbmUK"); /* "ab\ncdone\n" */
	ASSERT_STR(phase(c), "exited");
	char *r = sid(create("{\"command\":[\"sh\",\"-c\",\"read X; echo got $X\"]}", NULL, 201));
	cJSON_Delete(t2(s0__sessions_signal_json, r, "{\"signal\":\"STOP\"}", S0_OK, NULL));
	cJSON_Delete(input(r, "{\"input_id\":\"a\",\"data_base64\":\"aGkK\"}", S0_OK, NULL));
	ASSERT_STR(outputs(r), "");
	cJSON_Delete(t2(s0__sessions_signal_json, r, "{\"signal\":\"CONT\"}", S0_OK, NULL));
	ASSERT_STR(outputs(r), "Z290IGhpCg=="); /* "got hi\n" */
	ASSERT_STR(phase(r), "exited");
	free(r);
	free(c);
}
END_TEST

Suite *rt_sessions_suite(void)
{
	Suite *s = suite_create("runtime-sessions");
	TCase *t = tcase_create("sessions");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, create_shape_and_journal);
	tcase_add_test(t, events_query_validation);
	tcase_add_test(t, retention_and_410);
	tcase_add_test(t, idempotency_key);
	tcase_add_test(t, invalid_specs);
	tcase_add_test(t, restart_policy);
	tcase_add_test(t, desired_state_signal_delete);
	tcase_add_test(t, pty_and_readiness);
	tcase_add_test(t, runtime_replacement);
	tcase_add_test(t, memory_restored_same_guest);
	tcase_add_test(t, serialize_round_trip);
	tcase_add_test(t, idle_timeout_expires);
	tcase_add_test(t, idle_timeout_activity);
	tcase_add_test(t, idle_timeout_survives_checkpoint);
	tcase_add_test(t, api_8_3_replace_spec);
	tcase_add_test(t, api_8_3_new_attempt);
	tcase_add_test(t, api_8_3_inputs_reach_stdin);
	tcase_add_test(t, api_8_3_input_buffer_full);
	tcase_add_test(t, api_8_3_terminal_resize);
	tcase_add_test(t, api_8_3_tier2_state_serialized);
	tcase_add_test(t, max_lifetime_from_creation);
	tcase_add_test(t, stop_grace_then_kill);
	tcase_add_test(t, idle_expiry_honours_grace);
	tcase_add_test(t, readiness_timeout_and_delay);
	tcase_add_test(t, deadlines_survive_checkpoint);
	tcase_add_test(t, cat_waits_and_read_resumes_after_cont);
	tcase_add_test(t, unknown_fields_refused);
	suite_add_tcase(s, t);
	return s;
}
