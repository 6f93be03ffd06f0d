/*
 * Supervised sessions on the gvisor runtime under the lifecycle engine,
 * through the public client (docs/local-backend.md "Runtime gvisor"):
 * a session's attempt is a real process run by procd; a filesystem-only
 * pause and resume keeps the session's id and journal, restarts an
 * active `restart` session in the new generation (SES-01, SES-02) and
 * leaves an active `stop` one stopped (SES-03); an exited one stays
 * exited (SES-05).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "common/json.h"
#include "lt.h"

static cJSON *call(lt *t, const char *method, const char *id, const char *suffix,
                   const char *body, int *status)
{
	char *out = NULL;
	LT_OK(s0_runtime_call(t->c, method, id, suffix, body, NULL, status, &out, &e_));
	cJSON *j = cJSON_Parse(out);
	s0_free(out);
	ck_assert_ptr_nonnull(j);
	return j;
}

static cJSON *session(lt *t, const char *id, const char *sid)
{
	char sfx[160];
	snprintf(sfx, sizeof sfx, "/sessions/%s", sid);
	return call(t, "GET", id, sfx, NULL, NULL);
}

static char *mk_session(lt *t, const char *id, const char *spec)
{
	int status = 0;
	cJSON *s = call(t, "POST", id, "/sessions", spec, &status);
	ck_assert_int_eq(status, 201);
	char *sid = strdup(s0__json_str(s, "id"));
	cJSON_Delete(s);
	return sid;
}

/* seq of the first event of @p type (with data @p b64 when given), after
 * seq @p after; -1 if none. */
static int64_t event_seq(lt *t, const char *id, const char *sid, const char *type,
                         const char *b64, int64_t after)
{
	char sfx[200];
	snprintf(sfx, sizeof sfx, "/sessions/%s/events?after=0", sid);
	cJSON *p = call(t, "GET", id, sfx, NULL, NULL);
	int64_t found = -1;
	const cJSON *ev;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItem(p, "events"))
	{
		int64_t seq = s0__json_i64(ev, "seq", 0);
		const char *d = s0__json_str(ev, "data_base64");
		if (found < 0 && seq > after && !strcmp(s0__json_str(ev, "type"), type) &&
		    (!b64 || (d && !strcmp(d, b64))))
			found = seq;
	}
	cJSON_Delete(p);
	return found;
}

/* The session in phase @p want (GET until then; a real process, bounded at 10 s). */
static cJSON *wait_phase(lt *t, const char *id, const char *sid, const char *want)
{
	for (int i = 0; i < 1000; i++) {
		cJSON *s = session(t, id, sid);
		if (!strcmp(s0__json_str(s, "phase"), want))
			return s;
		cJSON_Delete(s);
		usleep(10000);
	}
	ck_abort_msg("session %s never reached %s", sid, want);
	return NULL;
}

START_TEST(sessions_survive_a_filesystem_cycle)
{
	LT_ROW("SES-01");
	LT_ROW("SES-02");
	LT_ROW("SES-03");
	LT_ROW("SES-05");
	lt t;
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.manual_clock = 1;
	o.runtime = "gvisor";
	lt_open(&t, &o);
	char *id = lt_claim(&t, NULL, NULL);
	char *a = mk_session(&t, id, "{\"command\":[\"/bin/sh\",\"-c\",\"echo one; exec sleep "
	                             "1000\"]}");
	char *b = mk_session(&t, id, "{\"command\":[\"/bin/sleep\",\"1000\"],\"lifecycle\":"
	                             "{\"runtime_recovery\":\"stop\"}}");
	char *c = mk_session(&t, id, "{\"command\":[\"/bin/true\"]}");
	cJSON_Delete(wait_phase(&t, id, c, "exited"));
	cJSON *s = wait_phase(&t, id, a, "running");
	int pid = (int)s0__json_i64(cJSON_GetObjectItem(s, "attempt"), "pid", 0);
	ck_assert_int_gt(pid, 1);
	cJSON_Delete(s);
	int64_t one = -1;
	for (int i = 0; i < 1000 && one < 0; i++) { /* "one\n" journaled (a real process) */
		one = event_seq(&t, id, a, "output", "b25lCg==", 0);
		if (one < 0)
			usleep(10000);
	}
	ck_assert_int_gt(one, 0);
	/* the process really runs inside: procd's process table has it */
	char *ctx = lt_repl(&t, id);
	char cmd[64];
	snprintf(cmd, sizeof cmd, "cat /proc/%d/cmdline | tr '\\0' ' '", pid);
	char *v = lt_sh(&t, id, ctx, cmd, NULL);
	ck_assert_msg(strstr(v, "sleep 1000"), "%s", v);
	free(v);
	free(ctx);
	int64_t g0 = lt_generation(&t, id);

	lt_pause(&t, id);
	lt_quiesce(&t);
	lt_resume(&t, id);

	s = wait_phase(&t, id, a, "running");
	ck_assert_str_eq(s0__json_str(s, "id"), a);
	const cJSON *att = cJSON_GetObjectItem(s, "attempt");
	ck_assert_int_eq(s0__json_i64(att, "number", -1), 2);
	ck_assert_int_eq(s0__json_i64(att, "runtime_generation", -1), g0 + 1);
	cJSON_Delete(s);
	/* the journal kept "one\n" and the new attempt follows it */
	ck_assert_int_eq(event_seq(&t, id, a, "output", "b25lCg==", 0), one);
	ck_assert_int_gt(event_seq(&t, id, a, "attempt.started", NULL, one), one);
	for (int i = 0; i < 1000 && event_seq(&t, id, a, "output", "b25lCg==", one) < 0; i++)
		usleep(10000); /* the new attempt prints it again */
	ck_assert_int_gt(event_seq(&t, id, a, "output", "b25lCg==", one), one);
	cJSON_Delete(wait_phase(&t, id, b, "stopped"));
	s = wait_phase(&t, id, c, "exited");
	ck_assert_int_eq(s0__json_i64(cJSON_GetObjectItem(s, "attempt"), "number", -1), 1);
	cJSON_Delete(s);
	/* desired state stopped: TERM to the running attempt */
	char sfx[160];
	snprintf(sfx, sizeof sfx, "/sessions/%s/desired-state", a);
	cJSON_Delete(call(&t, "PUT", id, sfx, "{\"state\":\"stopped\"}", NULL));
	s = wait_phase(&t, id, a, "stopped");
	ck_assert_int_eq(s0__json_i64(cJSON_GetObjectItem(s, "attempt"), "exit_code", -1), 143);
	cJSON_Delete(s);
	free(a);
	free(b);
	free(c);
	free(id);
	lt_close(&t);
}
END_TEST

static Suite *gvisor_ses_local_suite(void)
{
	Suite *s = suite_create("gvisor-sessions-local");
	TCase *tc = tcase_create("engine");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, sessions_survive_a_filesystem_cycle);
	suite_add_tcase(s, tc);
	return s;
}

S0_TEST_MAIN(gvisor_ses_local_suite)
