/*
 * Processes across runtime generations (docs/behaviours.md FS-02's process part,
 * FS-04, SES-01..06) and memory pause/resume (MEM-, MFB-, TTL-07/08),
 * through the public client (sandbox0/contexts.h) over the in-process
 * transport on a manual clock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "common/http.h"
#include "local/api/transport.h"
#include "local/lifecycle/engine_internal.h"
#include "local/local_internal.h"
#include "local/objects/objstore.h"
#include "lt.h"
#include "suites.h"

/* ---- helpers over sandbox0/contexts.h ---- */

static cJSON *parse_ok(char *text)
{
	cJSON *j = cJSON_Parse(text);
	s0_free(text);
	ck_assert_ptr_nonnull(j);
	return j;
}

#define mk_repl lt_repl

/* Exec in a context; returns its stdout (malloc'd, trailing newline cut). */
static char *run(lt *t, const char *id, const char *ctx, const char *cmd)
{
	return lt_sh(t, id, ctx, cmd, NULL);
}

/* One call of the process family; the data parsed (status optional). */
static cJSON *call(lt *t, const char *method, const char *id, const char *suffix,
                   const char *body, const char *key, int *status)
{
	char *out = NULL;
	LT_OK(s0_runtime_call(t->c, method, id, suffix, body, key, status, &out, &e_));
	return parse_ok(out);
}

static cJSON *session_get(lt *t, const char *id, const char *sid)
{
	char sfx[160];
	snprintf(sfx, sizeof sfx, "/sessions/%s", sid);
	return call(t, "GET", id, sfx, NULL, NULL, NULL);
}

/* A session running argv given as a JSON array text; returns its id. */
static char *mk_session(lt *t, const char *id, const char *command_json, const char *lifecycle)
{
	char body[512];
	snprintf(body, sizeof body, "{\"command\":%s%s%s}", command_json,
	         lifecycle ? ",\"lifecycle\":" : "", lifecycle ? lifecycle : "");
	int status = 0;
	cJSON *s = call(t, "POST", id, "/sessions", body, NULL, &status);
	ck_assert_int_eq(status, 201);
	char *sid = strdup(cJSON_GetObjectItem(s, "id")->valuestring);
	cJSON_Delete(s);
	return sid;
}

static const char *phase_of(const cJSON *s)
{
	return cJSON_GetObjectItem(s, "phase")->valuestring;
}

static int attempt_number(const cJSON *s)
{
	const cJSON *a = cJSON_GetObjectItem(s, "attempt");
	return a ? cJSON_GetObjectItem(a, "number")->valueint : 0;
}

static int attempt_pid(const cJSON *s)
{
	const cJSON *a = cJSON_GetObjectItem(s, "attempt");
	const cJSON *p = a ? cJSON_GetObjectItem(a, "pid") : NULL;
	return p ? p->valueint : 0;
}

/* Filesystem-only cycle through the wait helpers. */
static void fs_cycle(lt *t, const char *id)
{
	lt_pause(t, id);
	lt_quiesce(t);
	lt_resume(t, id);
}

/* FS-04: an FS cycle keeps no process state. */
START_TEST(fs04_fs_cycle_keeps_no_process_state)
{
	LT_ROW("FS-04");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	char *ctx = mk_repl(&t, id);
	free(run(&t, id, ctx, "x=42; cd /tmp"));
	char *pid = run(&t, id, ctx, "sleep 1000 > /workspace/bg.log & echo $!");
	ck_assert_int_gt(atoi(pid), 1);
	char *v = run(&t, id, ctx, "echo \"x=$x\"");
	ck_assert_str_eq(v, "x=42");
	free(v);
	v = run(&t, id, ctx, "ps");
	ck_assert_ptr_nonnull(strstr(v, "sleep"));
	free(v);

	fs_cycle(&t, id);

	char *out = NULL;
	s0_error *err = NULL;
	LT_EXPECT(s0_context_get(t.c, id, ctx, &out, &err), err, S0_ENOTFOUND, "context_not_found");
	char *ctx2 = mk_repl(&t, id);
	v = run(&t, id, ctx2, "echo \"x=$x\"");
	ck_assert_str_eq(v, "x=");
	free(v);
	v = run(&t, id, ctx2, "pwd");
	ck_assert_str_eq(v, "/workspace");
	free(v);
	v = run(&t, id, ctx2, "ps");
	ck_assert_ptr_null(strstr(v, "sleep"));
	free(v);
	free(ctx2);
	free(pid);
	free(ctx);
	free(id);
	lt_close(&t);
}
END_TEST

/* FS-02 (process part): env_vars apply to processes of the new generation. */
START_TEST(fs02_env_vars_in_new_generation)
{
	LT_ROW("FS-02");
	lt t;
	lt_open(&t, NULL);
	const char *env[] = {"GREETING=hello", NULL};
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.env_vars = env;
	char *id = lt_claim(&t, NULL, &cfg);
	char *ctx = mk_repl(&t, id);
	char *v = run(&t, id, ctx, "echo $GREETING");
	ck_assert_str_eq(v, "hello");
	free(v);
	free(ctx);
	fs_cycle(&t, id);
	ctx = mk_repl(&t, id);
	v = run(&t, id, ctx, "env");
	ck_assert_ptr_nonnull(strstr(v, "GREETING=hello"));
	free(v);
	free(ctx);
	free(id);
	lt_close(&t);
}
END_TEST

/* Contexts: create 201 (cmd with wait_until_done), list, get, delete, errors. */
START_TEST(ctx_endpoints_through_client)
{
	LT_ROW("API-8.1");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	lt_write(&t, id, "/workspace/hello.txt", "hi there");
	int status = 0;
	cJSON *c = call(&t, "POST", id, "/contexts",
	                "{\"type\":\"cmd\",\"cmd\":{\"command\":[\"cat\",\"/workspace/hello.txt\"]},"
	                "\"wait_until_done\":true}", NULL, &status);
	ck_assert_int_eq(status, 201);
	ck_assert_str_eq(cJSON_GetObjectItem(c, "stdout")->valuestring, "hi there");
	ck_assert_int_eq(cJSON_GetObjectItem(c, "exit_code")->valueint, 0);
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(c, "running")));
	char *cid = strdup(cJSON_GetObjectItem(c, "id")->valuestring);
	cJSON_Delete(c);
	cJSON *l = call(&t, "GET", id, "/contexts", NULL, NULL, &status);
	ck_assert_int_eq(status, 200);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(l, "contexts")), 1);
	cJSON_Delete(l);
	char *out = NULL;
	s0_error *err = NULL;
	LT_OK(s0_context_delete(t.c, id, cid, &e_));
	LT_EXPECT(s0_context_get(t.c, id, cid, &out, &err), err, S0_ENOTFOUND, "context_not_found");
	LT_EXPECT(s0_context_create(t.c, id, "{\"type\":\"cmd\"}", &out, &err), err, S0_EINVAL,
	          "invalid_request");
	LT_EXPECT(s0_runtime_call(t.c, "GET", id, "/sessions/nope", NULL, NULL, NULL, NULL, &err),
	          err, S0_ENOTFOUND, "session_not_found");
	free(cid);
	free(id);
	lt_close(&t);
}
END_TEST

/* A context's ttl_sec runs on the backend clock: the guest's virtual time
 * catches up when the sandbox's processes are reached, and the context's
 * process is killed exactly 5 s after it started. */
START_TEST(ctx_ttl_ends_on_backend_clock)
{
	LT_ROW("API-8.1");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	char *out = NULL;
	s0_error *err = NULL;
	char *cid = lt_context(&t, id, "{\"type\":\"repl\",\"ttl_sec\":5}");
	cJSON *c = NULL;
	lt_advance(&t, 4999);
	LT_OK(s0_context_get(t.c, id, cid, &out, &e_));
	c = parse_ok(out);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(c, "running")));
	cJSON_Delete(c);
	lt_advance(&t, 1);
	LT_OK(s0_context_get(t.c, id, cid, &out, &e_));
	c = parse_ok(out);
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(c, "running")));
	ck_assert_str_eq(cJSON_GetObjectItem(c, "state")->valuestring, "killed");
	ck_assert_int_eq(cJSON_GetObjectItem(c, "exit_code")->valueint, 137);
	cJSON_Delete(c);
	LT_EXPECT(s0_context_exec(t.c, id, cid, "echo hi", &out, &err), err, S0_EGONE,
	          "process_finished");
	free(cid);
	free(id);
	lt_close(&t);
}
END_TEST

/* The state of context cid ("running" while it runs). */
static char *ctx_state(lt *t, const char *id, const char *cid)
{
	char *out = NULL;
	LT_OK(s0_context_get(t->c, id, cid, &out, &e_));
	cJSON *c = parse_ok(out);
	const cJSON *st = cJSON_GetObjectItem(c, "state");
	char *s = strdup(cJSON_IsTrue(cJSON_GetObjectItem(c, "running")) ? "running"
	                 : cJSON_IsString(st)                             ? st->valuestring
	                                                                  : "?");
	cJSON_Delete(c);
	return s;
}

/* Time that passed with no request still counts: a memory image holds the
 * guest as of the pause, so deadlines due before it fire, and the rest of
 * a lifetime runs on after the resume. */
START_TEST(ctx_deadlines_count_time_before_a_memory_pause)
{
	LT_ROW("API-8.1");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	char *due = lt_context(&t, id, "{\"type\":\"repl\",\"ttl_sec\":30}");
	char *idle = lt_context(&t, id, "{\"type\":\"repl\",\"idle_timeout_sec\":30}");
	char *later = lt_context(&t, id, "{\"type\":\"repl\",\"ttl_sec\":60}");
	lt_advance(&t, 40000); /* nobody looks */
	LT_OK(lt_wait_rc(&t, id, true, S0_BOOL_TRUE, &e_));
	lt_advance(&t, 100000); /* paused time does not count */
	LT_OK(lt_wait_rc(&t, id, false, S0_BOOL_TRUE, &e_));
	char *s = ctx_state(&t, id, due);
	ck_assert_str_eq(s, "killed");
	free(s);
	s = ctx_state(&t, id, idle);
	ck_assert_str_eq(s, "killed");
	free(s);
	s = ctx_state(&t, id, later);
	ck_assert_str_eq(s, "running");
	free(s);
	lt_advance(&t, 19999);
	s = ctx_state(&t, id, later);
	ck_assert_str_eq(s, "running");
	free(s);
	lt_advance(&t, 1);
	s = ctx_state(&t, id, later);
	ck_assert_str_eq(s, "killed");
	free(s);
	free(due);
	free(idle);
	free(later);
	free(id);
	lt_close(&t);
}
END_TEST

/* Whether the events page of a session holds an output event with data
 * (base64) before an event of type `later` (seq order). */
static bool output_before(lt *t, const char *id, const char *sid, const char *b64,
                          const char *later)
{
	char sfx[200];
	snprintf(sfx, sizeof sfx, "/sessions/%s/events?after=0", sid);
	cJSON *p = call(t, "GET", id, sfx, NULL, NULL, NULL);
	int64_t out_seq = -1, later_seq = -1;
	const cJSON *ev;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItem(p, "events"))
	{
		const char *type = cJSON_GetObjectItem(ev, "type")->valuestring;
		const cJSON *d = cJSON_GetObjectItem(ev, "data_base64");
		int64_t seq = (int64_t)cJSON_GetObjectItem(ev, "seq")->valuedouble;
		if (!strcmp(type, "output") && cJSON_IsString(d) && !strcmp(d->valuestring, b64) &&
		    out_seq < 0)
			out_seq = seq;
		if (!strcmp(type, later) && later_seq < 0 && out_seq >= 0)
			later_seq = seq;
	}
	cJSON_Delete(p);
	return out_seq >= 0 && later_seq > out_seq;
}

/* SES-01 and SES-02: identity and journal survive an FS replacement; the
 * default runtime_recovery restarts the active session in the new generation. */
START_TEST(ses01_02_journal_survives_and_restart_recovery)
{
	LT_ROW("SES-01");
	LT_ROW("SES-02");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	char *sid = mk_session(&t, id, "[\"sh\",\"-c\",\"echo one; sleep 1000\"]", NULL);
	cJSON *s = session_get(&t, id, sid);
	ck_assert_str_eq(phase_of(s), "running");
	int n0 = attempt_number(s);
	int64_t g0 = lt_generation(&t, id);
	cJSON_Delete(s);

	fs_cycle(&t, id);

	s = session_get(&t, id, sid);
	ck_assert_str_eq(cJSON_GetObjectItem(s, "id")->valuestring, sid);
	ck_assert_str_eq(phase_of(s), "running");
	ck_assert_int_eq(attempt_number(s), n0 + 1);
	const cJSON *a = cJSON_GetObjectItem(s, "attempt");
	ck_assert_int_eq((int64_t)cJSON_GetObjectItem(a, "runtime_generation")->valuedouble, g0 + 1);
	cJSON_Delete(s);
	/* "one\n" of the first attempt precedes the new attempt's start */
	ck_assert(output_before(&t, id, sid, "b25lCg==", "attempt.started"));
	free(sid);
	free(id);
	lt_close(&t);
}
END_TEST

/* The same across a backend restart (docs/wire.md §8: "a durable event
 * journal"): the metadata store keeps the registry, saved at the pause
 * commit and at close, so a reopened backend keeps the session's id and
 * journal and recovers it by its runtime_recovery. */
START_TEST(ses01_02_sessions_survive_a_backend_reopen)
{
	LT_ROW("SES-01");
	LT_ROW("SES-02");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	char *sid = mk_session(&t, id, "[\"sh\",\"-c\",\"echo one; sleep 1000\"]", NULL);
	cJSON *s = session_get(&t, id, sid);
	int n0 = attempt_number(s);
	cJSON_Delete(s);
	lt_pause(&t, id); /* FS pause, then a restart while paused */
	lt_reopen(&t);
	lt_resume(&t, id);
	s = session_get(&t, id, sid);
	ck_assert_str_eq(phase_of(s), "running");
	ck_assert_int_eq(attempt_number(s), n0 + 1);
	cJSON_Delete(s);
	ck_assert(output_before(&t, id, sid, "b25lCg==", "attempt.started"));

	lt_reopen(&t); /* running: saved at close, recovered on the next open */
	lt_quiesce(&t);
	lt_assert_running(&t, id);
	s = session_get(&t, id, sid);
	ck_assert_str_eq(phase_of(s), "running");
	ck_assert_int_eq(attempt_number(s), n0 + 2);
	cJSON_Delete(s);

	/* deleting a session or the sandbox removes what is stored */
	char sfx[160];
	snprintf(sfx, sizeof sfx, "/sessions/%s", sid);
	cJSON_Delete(call(&t, "DELETE", id, sfx, NULL, NULL, NULL));
	lt_reopen(&t);
	lt_quiesce(&t);
	cJSON *l = call(&t, "GET", id, "/sessions", NULL, NULL, NULL);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(l, "sessions")), 0);
	cJSON_Delete(l);
	free(sid);
	free(id);
	lt_close(&t);
}
END_TEST

/* SES-03: runtime_recovery stop leaves the session stopped, journal kept. */
START_TEST(ses03_recovery_stop)
{
	LT_ROW("SES-03");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	char *sid = mk_session(&t, id, "[\"sh\",\"-c\",\"echo one; sleep 1000\"]",
	                       "{\"runtime_recovery\":\"stop\"}");
	fs_cycle(&t, id);
	cJSON *s = session_get(&t, id, sid);
	ck_assert_str_eq(phase_of(s), "stopped");
	cJSON_Delete(s);
	ck_assert(output_before(&t, id, sid, "b25lCg==", "attempt.exited"));
	free(sid);
	free(id);
	lt_close(&t);
}
END_TEST

/* SES-04 and SES-05: teardown never records normal exits; only sessions
 * active at replacement restart. */
START_TEST(ses04_05_only_active_sessions_restart)
{
	LT_ROW("SES-04");
	LT_ROW("SES-05");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	const char *always = "{\"restart\":{\"policy\":\"never\"},\"runtime_recovery\":\"restart\"}";
	char *exited = mk_session(&t, id, "[\"true\"]", always);
	char *stopped = mk_session(&t, id, "[\"sleep\",\"1000\"]", always);
	char *active = mk_session(&t, id, "[\"sleep\",\"1000\"]", always);
	char sfx[160];
	snprintf(sfx, sizeof sfx, "/sessions/%s/desired-state", stopped);
	cJSON_Delete(call(&t, "PUT", id, sfx, "{\"state\":\"stopped\"}", NULL, NULL));
	cJSON *s = session_get(&t, id, exited);
	ck_assert_str_eq(phase_of(s), "exited");
	int ne = attempt_number(s);
	cJSON_Delete(s);
	s = session_get(&t, id, stopped);
	ck_assert_str_eq(phase_of(s), "stopped");
	int ns = attempt_number(s);
	cJSON_Delete(s);
	s = session_get(&t, id, active);
	int na = attempt_number(s);
	cJSON_Delete(s);

	fs_cycle(&t, id);

	s = session_get(&t, id, exited);
	ck_assert_str_eq(phase_of(s), "exited");
	ck_assert_int_eq(attempt_number(s), ne);
	cJSON_Delete(s);
	s = session_get(&t, id, stopped);
	ck_assert_str_eq(phase_of(s), "stopped");
	ck_assert_int_eq(attempt_number(s), ns);
	cJSON_Delete(s);
	s = session_get(&t, id, active);
	ck_assert_str_eq(phase_of(s), "running");
	ck_assert_int_eq(attempt_number(s), na + 1);
	ck_assert_int_gt(attempt_pid(s), 1);
	cJSON_Delete(s);
	/* SES-04: the interrupted attempt carries no exit code from the teardown */
	snprintf(sfx, sizeof sfx, "/sessions/%s/events?after=0", active);
	cJSON *p = call(&t, "GET", id, sfx, NULL, NULL, NULL);
	const cJSON *ev;
	int replaced = 0;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItem(p, "events"))
	{
		if (strcmp(cJSON_GetObjectItem(ev, "type")->valuestring, "attempt.exited"))
			continue;
		ck_assert_ptr_null(cJSON_GetObjectItem(ev, "exit_code"));
		const cJSON *r = cJSON_GetObjectItem(ev, "reason");
		replaced += cJSON_IsString(r) && !strcmp(r->valuestring, "runtime_replaced");
	}
	ck_assert_int_eq(replaced, 1);
	cJSON_Delete(p);
	free(exited);
	free(stopped);
	free(active);
	free(id);
	lt_close(&t);
}
END_TEST

/* Session create with an Idempotency-Key: 201, then 200 for the same spec,
 * 409 session_conflict for another; events page cursor and 400s; delete. */
START_TEST(ses_idempotency_events_delete)
{
	LT_ROW("API-8.3");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	const char *spec = "{\"command\":[\"sh\",\"-c\",\"echo a; echo b\"]}";
	int status = 0;
	cJSON *s1 = call(&t, "POST", id, "/sessions", spec, "key-1", &status);
	ck_assert_int_eq(status, 201);
	cJSON *s2 = call(&t, "POST", id, "/sessions", spec, "key-1", &status);
	ck_assert_int_eq(status, 200);
	ck_assert_str_eq(cJSON_GetObjectItem(s1, "id")->valuestring,
	                 cJSON_GetObjectItem(s2, "id")->valuestring);
	s0_error *err = NULL;
	LT_EXPECT(s0_runtime_call(t.c, "POST", id, "/sessions", "{\"command\":[\"true\"]}", "key-1",
	                          NULL, NULL, &err),
	          err, S0_ECONFLICT, "session_conflict");
	char *sid = strdup(cJSON_GetObjectItem(s1, "id")->valuestring);
	cJSON_Delete(s1);
	cJSON_Delete(s2);
	char sfx[200];
	snprintf(sfx, sizeof sfx, "/sessions/%s/events?after=0&limit=2", sid);
	cJSON *p = call(&t, "GET", id, sfx, NULL, NULL, &status);
	ck_assert_int_eq(status, 200);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(p, "events")), 2);
	ck_assert_ptr_nonnull(cJSON_GetObjectItem(cJSON_GetObjectItem(p, "cursor"), "latest"));
	cJSON_Delete(p);
	snprintf(sfx, sizeof sfx, "/sessions/%s/events?limit=0", sid);
	LT_EXPECT(s0_runtime_call(t.c, "GET", id, sfx, NULL, NULL, NULL, NULL, &err), err, S0_EINVAL,
	          NULL);
	snprintf(sfx, sizeof sfx, "/sessions/%s", sid);
	cJSON_Delete(call(&t, "DELETE", id, sfx, NULL, NULL, &status));
	ck_assert_int_eq(status, 200);
	LT_EXPECT(s0_runtime_call(t.c, "GET", id, sfx, NULL, NULL, NULL, NULL, &err), err,
	          S0_ENOTFOUND, "session_not_found");
	cJSON *l = call(&t, "GET", id, "/sessions", NULL, NULL, &status);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(l, "sessions")), 0);
	cJSON_Delete(l);
	free(sid);
	free(id);
	lt_close(&t);
}
END_TEST

/* Auto-resume on access applies to contexts (TTL-07's FS half). */
START_TEST(ttl07_fs_wake_by_context_request)
{
	LT_ROW("TTL-07");
	lt t;
	lt_open(&t, NULL);
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.auto_resume = S0_BOOL_TRUE;
	char *id = lt_claim(&t, NULL, &cfg);
	char *ctx = mk_repl(&t, id);
	free(run(&t, id, ctx, "y=7"));
	int64_t g0 = lt_generation(&t, id);
	lt_pause(&t, id);
	lt_quiesce(&t);
	char *ctx2 = mk_repl(&t, id); /* wakes the sandbox */
	ck_assert_int_eq(lt_generation(&t, id), g0 + 1);
	char *v = run(&t, id, ctx2, "echo \"y=$y\"");
	ck_assert_str_eq(v, "y=");
	free(v);
	free(ctx2);
	free(ctx);
	free(id);
	lt_close(&t);
}
END_TEST

/* ---- memory pause and resume ---- */

static int mem_pause_rc(lt *t, const char *id, s0_error **err)
{
	return lt_wait_rc(t, id, true, S0_BOOL_TRUE, err);
}

static int mem_resume_rc(lt *t, const char *id, s0_error **err)
{
	return lt_wait_rc(t, id, false, S0_BOOL_TRUE, err);
}

static void mem_pause(lt *t, const char *id)
{
	LT_OK(mem_pause_rc(t, id, &e_));
	lt_quiesce(t);
	lt_assert_paused(t, id);
}

static void mem_resume(lt *t, const char *id)
{
	LT_OK(mem_resume_rc(t, id, &e_));
	lt_assert_running(t, id);
}

/* A sandbox with a REPL variable, a background job and /tmp/x. */
typedef struct procs {
	char *id, *ctx, *pid;
} procs;

static void procs_setup(lt *t, procs *p, const s0_sandbox_config *cfg)
{
	p->id = lt_claim(t, NULL, cfg);
	p->ctx = mk_repl(t, p->id);
	free(run(t, p->id, p->ctx, "x=42"));
	p->pid = run(t, p->id, p->ctx, "sleep 1000 > /workspace/bg.log & echo $!");
	free(run(t, p->id, p->ctx, "echo kept > /tmp/x"));
}

static void procs_free(procs *p)
{
	free(p->id);
	free(p->ctx);
	free(p->pid);
}

/* Whether the processes, variable and /tmp file of procs_setup survived. */
static bool procs_restored(lt *t, const procs *p)
{
	char *out = NULL;
	s0_error *err = NULL;
	if (s0_context_get(t->c, p->id, p->ctx, &out, &err) < 0) {
		s0_error_free(err);
		return false;
	}
	s0_free(out);
	char *v = run(t, p->id, p->ctx, "echo \"x=$x\"");
	bool ok = !strcmp(v, "x=42");
	free(v);
	v = run(t, p->id, p->ctx, "ps");
	ok = ok && strstr(v, "sleep") != NULL;
	free(v);
	ok = ok && lt_file_is(t, p->id, "/tmp/x", "kept\n");
	return ok;
}

/* Whether the sandbox runs fresh processes: the old context, the job and /tmp/x are gone. */
static bool procs_fresh(lt *t, const procs *p)
{
	char *out = NULL;
	s0_error *err = NULL;
	int rc = s0_context_get(t->c, p->id, p->ctx, &out, &err);
	s0_error_free(err);
	s0_free(out);
	if (rc != S0_ENOTFOUND)
		return false;
	char *c2 = mk_repl(t, p->id);
	char *v = run(t, p->id, c2, "ps");
	bool ok = strstr(v, "sleep") == NULL;
	free(v);
	free(c2);
	return ok && lt_stat_rc(t, p->id, "/tmp/x") == S0_ENOTFOUND;
}

/* MEM-03, MEM-04: a memory cycle keeps PIDs, variables, /tmp; new runtime_id, g+1. */
START_TEST(mem03_04_memory_cycle_restores_execution_image)
{
	LT_ROW("MEM-03");
	LT_ROW("MEM-04");
	lt t;
	lt_open(&t, NULL);
	procs p;
	procs_setup(&t, &p, NULL);
	int64_t g0 = lt_generation(&t, p.id);
	char *rt0 = lt_runtime_id(&t, p.id);
	double cpu_running = lt_inum(&t, NULL, "node.cpu_used_millis");
	mem_pause(&t, p.id);
	ck_assert_double_lt(lt_inum(&t, NULL, "node.cpu_used_millis"), cpu_running);
	mem_resume(&t, p.id);
	ck_assert_int_eq(lt_generation(&t, p.id), g0 + 1);
	char *rt1 = lt_runtime_id(&t, p.id);
	ck_assert_str_ne(rt0, rt1);
	ck_assert(procs_restored(&t, &p));
	/* the same PID for the job */
	char *v = run(&t, p.id, p.ctx, "echo $!");
	ck_assert_str_eq(v, p.pid);
	free(v);
	LT_OK(s0_sandbox_delete(t.c, p.id, &e_));
	lt_quiesce(&t);
	free(rt0);
	free(rt1);
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* MEM-06: a resume without memory after a memory pause is filesystem-only. */
START_TEST(mem06_plain_resume_is_filesystem_only)
{
	LT_ROW("MEM-06");
	lt t;
	lt_open(&t, NULL);
	procs p;
	procs_setup(&t, &p, NULL);
	mem_pause(&t, p.id);
	lt_resume(&t, p.id);
	ck_assert(procs_fresh(&t, &p));
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* MEM-07: after an FS pause a memory resume succeeds with fresh processes. */
START_TEST(mem07_memory_resume_after_fs_pause)
{
	LT_ROW("MEM-07");
	lt t;
	lt_open(&t, NULL);
	procs p;
	procs_setup(&t, &p, NULL);
	lt_write(&t, p.id, "/workspace/f.txt", "files stay");
	int64_t g0 = lt_generation(&t, p.id);
	lt_pause(&t, p.id);
	lt_quiesce(&t);
	mem_resume(&t, p.id);
	ck_assert_int_eq(lt_generation(&t, p.id), g0 + 1);
	ck_assert(procs_fresh(&t, &p));
	ck_assert(lt_file_is(&t, p.id, "/workspace/f.txt", "files stay"));
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* MFB-07: a capture failure ends `failed` with paused true, no image; a later
 * memory resume recovers filesystem-only. */
START_TEST(mfb07_capture_failure_reports_failed)
{
	LT_ROW("MFB-07");
	lt t;
	lt_open(&t, NULL);
	procs p;
	procs_setup(&t, &p, NULL);
	lt_write(&t, p.id, "/workspace/before.txt", "committed before");
	lt_pause(&t, p.id);
	lt_quiesce(&t);
	lt_resume(&t, p.id);
	free(p.ctx);
	p.ctx = mk_repl(&t, p.id);
	LT_OK(s0_local_fault_arm(t.local, "capture@after-authorize", S0_FAULT_FAIL, 1, 0, &e_));
	s0_error *err = NULL;
	LT_EXPECT(mem_pause_rc(&t, p.id, &err), err, S0_ELIFECYCLE, NULL);
	lt_quiesce(&t);
	s0_sandbox_info *sb = lt_get(&t, p.id);
	ck_assert_int_eq(s0_sandbox_info_status(sb), S0_STATUS_FAILED);
	ck_assert(s0_sandbox_info_paused(sb));
	ck_assert_str_eq(s0_sandbox_info_runtime_id(sb), "");
	s0_sandbox_info_free(sb);
	mem_resume(&t, p.id);
	ck_assert(procs_fresh(&t, &p));
	ck_assert(lt_file_is(&t, p.id, "/workspace/before.txt", "committed before"));
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* MFB-03/04/05: a restore failing after authorisation: resumed false, then a
 * filesystem-only replacement at g+2 with fresh processes. */
START_TEST(mfb03_05_failed_restore_falls_back)
{
	LT_ROW("MFB-03");
	LT_ROW("MFB-04");
	LT_ROW("MFB-05");
	lt t;
	lt_open(&t, NULL);
	procs p;
	procs_setup(&t, &p, NULL);
	int64_t g0 = lt_generation(&t, p.id);
	mem_pause(&t, p.id);
	char *head = lt_head(&t, p.id);
	LT_OK(s0_local_fault_arm(t.local, "restore", S0_FAULT_FAIL, 1, 0, &e_));
	/* holds the replacement's readiness (the failed restore never gets there) */
	LT_OK(s0_local_fault_arm(t.local, "resume_delay", S0_FAULT_HOLD, 0, 0, &e_));
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_resume(t.c, p.id, S0_BOOL_TRUE, &lr, &e_));
	ck_assert(!s0_lifecycle_result_resumed(lr));
	s0_lifecycle_result_free(lr);
	s0_sandbox_info *sb = lt_get(&t, p.id);
	ck_assert_int_eq(s0_sandbox_info_status(sb), S0_STATUS_STARTING);
	ck_assert(s0_sandbox_info_paused(sb));
	s0_sandbox_info_free(sb);
	char *head2 = lt_head(&t, p.id);
	ck_assert_str_eq(head, head2);
	LT_OK(s0_local_fault_release(t.local, "resume_delay", &e_));
	mem_resume(&t, p.id);
	ck_assert_int_eq(lt_generation(&t, p.id), g0 + 2);
	ck_assert(procs_fresh(&t, &p));
	free(head);
	free(head2);
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* TTL-07 (memory half): an automatic wake restores the retained image. */
START_TEST(ttl07_memory_wake_restores)
{
	LT_ROW("TTL-07");
	lt t;
	lt_open(&t, NULL);
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.auto_resume = S0_BOOL_TRUE;
	procs p;
	procs_setup(&t, &p, &cfg);
	mem_pause(&t, p.id);
	ck_assert(procs_restored(&t, &p)); /* the context request wakes it */
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* TTL-08: an automatic wake whose restore fails ends running with fresh processes. */
START_TEST(ttl08_memory_wake_restore_failure_falls_back)
{
	LT_ROW("TTL-08");
	lt t;
	lt_open(&t, NULL);
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.auto_resume = S0_BOOL_TRUE;
	procs p;
	procs_setup(&t, &p, &cfg);
	int64_t g0 = lt_generation(&t, p.id);
	mem_pause(&t, p.id);
	LT_OK(s0_local_fault_arm(t.local, "restore", S0_FAULT_FAIL, 1, 0, &e_));
	int status = 0;
	for (int i = 0; i < 200; i++) {
		s0_error *err = NULL;
		char *out = NULL;
		int rc = s0_runtime_call(t.c, "GET", p.id, "/contexts", NULL, NULL, &status, &out, &err);
		s0_free(out);
		s0_error_free(err);
		if (rc == S0_OK)
			break;
		lt_quiesce(&t);
		lt_nap_ms(10);
	}
	ck_assert_int_eq(status, 200);
	lt_assert_running(&t, p.id);
	ck_assert_int_eq(lt_generation(&t, p.id), g0 + 2);
	ck_assert(procs_fresh(&t, &p));
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* SES-06: after a memory restore sessions keep their PID, no recovery attempt. */
START_TEST(ses06_memory_restore_keeps_sessions)
{
	LT_ROW("SES-06");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	char *sid = mk_session(&t, id, "[\"sleep\",\"1000\"]", NULL);
	cJSON *s = session_get(&t, id, sid);
	int pid = attempt_pid(s), n = attempt_number(s);
	cJSON_Delete(s);
	mem_pause(&t, id);
	mem_resume(&t, id);
	s = session_get(&t, id, sid);
	ck_assert_str_eq(phase_of(s), "running");
	ck_assert_int_eq(attempt_pid(s), pid);
	ck_assert_int_eq(attempt_number(s), n);
	ck_assert_int_eq(cJSON_GetObjectItem(s, "restart_count")->valueint, 0);
	cJSON_Delete(s);

	/* the image carries them: a backend that reopened in between (its
	 * in-memory registry gone) restores the same sessions and journal */
	mem_pause(&t, id);
	lt_reopen(&t);
	mem_resume(&t, id);
	s = session_get(&t, id, sid);
	ck_assert_str_eq(phase_of(s), "running");
	ck_assert_int_eq(attempt_pid(s), pid);
	ck_assert_int_eq(attempt_number(s), n);
	ck_assert_int_eq(cJSON_GetObjectItem(s, "restart_count")->valueint, 0);
	cJSON_Delete(s);
	cJSON *l = call(&t, "GET", id, "/sessions", NULL, NULL, NULL);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(l, "sessions")), 1);
	cJSON_Delete(l);
	free(sid);
	free(id);
	lt_close(&t);
}
END_TEST


/* ---- the sessions' second tier (docs/wire.md §8.3 rows Replace spec, New
 * attempt, Input, Resize; §8.4 item 3) through the client ---- */

/* A process-family call expected to fail with code and reason. */
static void call_fails(lt *t, const char *method, const char *id, const char *suffix,
                       const char *body, int code, const char *reason)
{
	s0_error *err = NULL;
	LT_EXPECT(s0_runtime_call(t->c, method, id, suffix, body, NULL, NULL, NULL, &err), err, code,
	          reason);
}

static cJSON *ses_input(lt *t, const char *id, const char *sid, const char *body, bool dup)
{
	char sfx[200];
	snprintf(sfx, sizeof sfx, "/sessions/%s/inputs", sid);
	int status = 0;
	cJSON *r = call(t, "POST", id, sfx, body, NULL, &status);
	ck_assert_int_eq(status, 202);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(r, "accepted")));
	ck_assert(cJSON_IsBool(cJSON_GetObjectItem(r, "duplicate")));
	ck_assert_int_eq(cJSON_IsTrue(cJSON_GetObjectItem(r, "duplicate")), dup);
	return r;
}

START_TEST(api_8_3_session_tier2_through_client)
{
	LT_ROW("API-8.3");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	char *sid = mk_session(&t, id, "[\"sh\",\"-c\",\"read X; echo got $X\"]", NULL);
	char sfx[200];
	/* Input: the bytes reach the attempt's stdin; a replay is a duplicate */
	cJSON *r = ses_input(&t, id, sid, "{\"input_id\":\"i1\",\"data_base64\":\"aGVsbG8K\"}", false);
	ck_assert_str_eq(cJSON_GetObjectItem(r, "input_id")->valuestring, "i1");
	ck_assert_int_eq(strncmp(cJSON_GetObjectItem(r, "attempt_id")->valuestring, "att_", 4), 0);
	cJSON_Delete(r);
	ck_assert(output_before(&t, id, sid, "Z290IGhlbGxvCg==", "attempt.exited")); /* got hello */
	cJSON_Delete(ses_input(&t, id, sid, "{\"input_id\":\"i1\",\"data_base64\":\"aGVsbG8K\"}",
	                       true));
	snprintf(sfx, sizeof sfx, "/sessions/%s/inputs", sid);
	call_fails(&t, "POST", id, sfx, "{\"input_id\":\"i1\",\"data_base64\":\"eAo=\"}", S0_ECONFLICT,
	           "session_conflict");
	call_fails(&t, "POST", id, sfx, "{\"input_id\":\"i2\",\"data_base64\":\"eAo=\"}", S0_ECONFLICT,
	           "session_conflict"); /* not running */
	call_fails(&t, "POST", id, sfx, "{\"data_base64\":\"eAo=\"}", S0_EINVAL, "invalid_request");
	call_fails(&t, "POST", id, "/sessions/ses_nope/inputs", "{\"input_id\":\"i\"}", S0_ENOTFOUND,
	           "session_not_found");
	/* New attempt: 201; 409 while one runs unless replace_current */
	snprintf(sfx, sizeof sfx, "/sessions/%s/attempts", sid);
	int status = 0;
	r = call(&t, "POST", id, sfx, NULL, NULL, &status);
	ck_assert_int_eq(status, 201);
	ck_assert_int_eq(attempt_number(r), 2);
	ck_assert_str_eq(phase_of(r), "running");
	cJSON_Delete(r);
	call_fails(&t, "POST", id, sfx, "{}", S0_ECONFLICT, "session_conflict");
	r = call(&t, "POST", id, sfx, "{\"replace_current\":true}", NULL, &status);
	ck_assert_int_eq(status, 201);
	ck_assert_int_eq(attempt_number(r), 3);
	cJSON_Delete(r);
	call_fails(&t, "POST", id, "/sessions/ses_nope/attempts", NULL, S0_ENOTFOUND,
	           "session_not_found");
	/* Replace spec: a changed command (and io) starts a new attempt */
	snprintf(sfx, sizeof sfx, "/sessions/%s", sid);
	r = call(&t, "PUT", id, sfx, "{\"command\":[\"sh\",\"-c\",\"echo v2; sleep 100\"],\"io\":"
	         "{\"mode\":\"pty\"}}", NULL, &status);
	ck_assert_int_eq(status, 200);
	ck_assert_int_eq(cJSON_GetObjectItem(r, "spec_version")->valueint, 2);
	ck_assert_int_eq(attempt_number(r), 4);
	ck_assert_str_eq(phase_of(r), "running");
	cJSON_Delete(r);
	call_fails(&t, "PUT", id, sfx, "{\"command\":[]}", S0_EINVAL, "invalid_request");
	call_fails(&t, "PUT", id, "/sessions/ses_nope", "{\"command\":[\"ls\"]}", S0_ENOTFOUND,
	           "session_not_found");
	/* Resize */
	snprintf(sfx, sizeof sfx, "/sessions/%s/terminal", sid);
	r = call(&t, "PUT", id, sfx, "{\"rows\":30,\"cols\":100}", NULL, &status);
	ck_assert_int_eq(status, 200);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(r, "resized")));
	cJSON_Delete(r);
	call_fails(&t, "PUT", id, sfx, "{\"rows\":0,\"cols\":100}", S0_EINVAL, "invalid_request");
	call_fails(&t, "PUT", id, sfx, "{\"rows\":30,\"cols\":100,\"expected_attempt_id\":\"att_x\"}",
	           S0_ECONFLICT, "session_conflict");
	call_fails(&t, "PUT", id, "/sessions/ses_nope/terminal", "{\"rows\":3,\"cols\":3}",
	           S0_ENOTFOUND, "session_not_found");
	snprintf(sfx, sizeof sfx, "/sessions/%s/events?after=0", sid);
	r = call(&t, "GET", id, sfx, NULL, NULL, NULL);
	const cJSON *ev, *last = NULL;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItem(r, "events")) last = ev;
	ck_assert_str_eq(cJSON_GetObjectItem(last, "type")->valuestring, "terminal.resized");
	ck_assert_str_eq(cJSON_GetObjectItem(last, "reason")->valuestring, "30x100");
	cJSON_Delete(r);
	/* 429 input_buffer_full on the wire; the streaming routes stay 501 */
	char *idle = mk_session(&t, id, "[\"sleep\",\"100\"]", NULL);
	size_t n = 53332; /* 39999 bytes */
	char *big = malloc(n + 64);
	memcpy(big, "{\"input_id\":\"b1\",\"data_base64\":\"", 32);
	memset(big + 32, 'A', n);
	strcpy(big + 32 + n, "\"}");
	cJSON_Delete(ses_input(&t, id, idle, big, false));
	big[14] = '2'; /* "b2" */
	snprintf(sfx, sizeof sfx, "/sessions/%s/inputs", idle);
	s0_error *err = NULL;
	ck_assert_int_eq(s0_runtime_call(t.c, "POST", id, sfx, big, NULL, NULL, NULL, &err),
	                 S0_ETHROTTLED);
	ck_assert_str_eq(s0_error_reason(err), "input_buffer_full");
	ck_assert_int_eq(s0_error_http_status(err), 429);
	s0_error_free(err);
	free(big);
	/* the attach is a WebSocket (docs/wire.md §8.2): a plain GET is 426 */
	snprintf(sfx, sizeof sfx, "/sessions/%s/ws", sid);
	call_fails(&t, "GET", id, sfx, NULL, S0_EINVAL, "bad_request");
	snprintf(sfx, sizeof sfx, "/sessions/%s/events/stream", sid);
	call_fails(&t, "GET", id, sfx, NULL, S0_EUNSUPPORTED, "not_implemented");
	free(idle);
	free(sid);
	free(id);
	lt_close(&t);
}
END_TEST

/* SES-06 style for the second tier: a `read` waiting for input, the input
 * ids and the terminal size survive a memory pause and resume. */
START_TEST(api_8_3_session_inputs_survive_memory_cycle)
{
	LT_ROW("API-8.3");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	char *sid = mk_session(&t, id, "[\"sh\",\"-c\",\"read A; echo a=$A; read B; echo b=$B\"]",
	                       NULL);
	cJSON_Delete(ses_input(&t, id, sid, "{\"input_id\":\"one\",\"data_base64\":\"MQo=\"}", false));
	cJSON *s = session_get(&t, id, sid);
	int pid = attempt_pid(s);
	cJSON_Delete(s);
	mem_pause(&t, id);
	mem_resume(&t, id);
	s = session_get(&t, id, sid);
	ck_assert_str_eq(phase_of(s), "running");
	ck_assert_int_eq(attempt_pid(s), pid);
	ck_assert_int_eq(attempt_number(s), 1);
	cJSON_Delete(s);
	cJSON_Delete(ses_input(&t, id, sid, "{\"input_id\":\"one\",\"data_base64\":\"MQo=\"}", true));
	char sfx[200];
	snprintf(sfx, sizeof sfx, "/sessions/%s/inputs", sid);
	call_fails(&t, "POST", id, sfx, "{\"input_id\":\"one\",\"data_base64\":\"Mgo=\"}",
	           S0_ECONFLICT, "session_conflict");
	cJSON_Delete(ses_input(&t, id, sid, "{\"input_id\":\"two\",\"data_base64\":\"Mgo=\"}", false));
	ck_assert(output_before(&t, id, sid, "YT0xCg==", "input.accepted")); /* a=1, then "two" */
	ck_assert(output_before(&t, id, sid, "Yj0yCg==", "attempt.exited")); /* b=2 */
	s = session_get(&t, id, sid);
	ck_assert_str_eq(phase_of(s), "exited");
	ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(s, "attempt"), "exit_code")->valueint,
	                 0);
	cJSON_Delete(s);
	free(sid);
	free(id);
	lt_close(&t);
}
END_TEST

/* lifecycle.max_lifetime_seconds and stop_grace_period_seconds through the
 * client on the backend clock: TERM exactly at creation + 5 s, ignored
 * (trap '' TERM), KILL exactly 2 s later — across a memory pause and
 * resume in the middle of the grace; the journal tells why. */
START_TEST(api_8_3_session_lifetime_and_grace_through_client)
{
	LT_ROW("API-8.3");
	lt t;
	lt_open(&t, NULL);
	char *id = lt_claim(&t, NULL, NULL);
	char *sid = mk_session(&t, id, "[\"sh\",\"-c\",\"trap '' TERM; sleep 1000\"]",
	                       "{\"max_lifetime_seconds\":5,\"stop_grace_period_seconds\":2}");
	lt_advance(&t, 4999);
	cJSON *s = session_get(&t, id, sid);
	ck_assert_str_eq(phase_of(s), "running");
	int pid = attempt_pid(s);
	cJSON_Delete(s);
	lt_advance(&t, 1);
	s = session_get(&t, id, sid);
	ck_assert_str_eq(phase_of(s), "stopping");
	cJSON_Delete(s);
	mem_pause(&t, id);
	mem_resume(&t, id);
	s = session_get(&t, id, sid);
	ck_assert_str_eq(phase_of(s), "stopping");
	ck_assert_int_eq(attempt_pid(s), pid);
	cJSON_Delete(s);
	lt_advance(&t, 1999);
	s = session_get(&t, id, sid);
	ck_assert_str_eq(phase_of(s), "stopping");
	cJSON_Delete(s);
	lt_advance(&t, 1);
	s = session_get(&t, id, sid);
	ck_assert_str_eq(phase_of(s), "exited");
	const cJSON *a = cJSON_GetObjectItem(s, "attempt");
	ck_assert_str_eq(cJSON_GetObjectItem(a, "reason")->valuestring, "max_lifetime");
	ck_assert_int_eq(cJSON_GetObjectItem(a, "exit_code")->valueint, 137);
	cJSON_Delete(s);
	char sfx[200];
	snprintf(sfx, sizeof sfx, "/sessions/%s/events?after=0", sid);
	cJSON *r = call(&t, "GET", id, sfx, NULL, NULL, NULL);
	char seen[256] = "";
	const cJSON *ev;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItem(r, "events"))
	{
		const char *type = cJSON_GetObjectItem(ev, "type")->valuestring;
		const cJSON *why = cJSON_GetObjectItem(ev, "reason");
		if (strncmp(type, "attempt.st", 10) && strcmp(type, "attempt.exited") &&
		    strcmp(type, "session.expired"))
			continue;
		snprintf(seen + strlen(seen), sizeof seen - strlen(seen), "%s%s(%s)", seen[0] ? " " : "",
		         type, why ? why->valuestring : "");
	}
	ck_assert_str_eq(seen, "attempt.starting() attempt.started() attempt.stopping(max_lifetime) "
	                       "attempt.exited(max_lifetime) session.expired(max_lifetime)");
	cJSON_Delete(r);
	free(sid);
	free(id);
	lt_close(&t);
}
END_TEST

/* ---- memory pause and resume: admission, fallbacks, inspection ---- */

/* One raw POST …/{id}/<action> through the in-process transport (bodies the
 * public client never sends); returns the HTTP status, *body the reply. */
static int raw_post(lt *t, const char *id, const char *action, const char *body, char **reply)
{
	char path[200];
	snprintf(path, sizeof path, "/api/v1/sandboxes/%s/%s", id, action);
	return lt_raw(t, "POST", path, body, reply);
}

/* The sorted key names of the `data` object of a reply ("a,b,c"). */
static char *data_keys(const char *reply)
{
	cJSON *j = cJSON_Parse(reply);
	ck_assert_ptr_nonnull(j);
	const cJSON *d = cJSON_GetObjectItem(j, "data");
	char buf[256] = "";
	const cJSON *it;
	cJSON_ArrayForEach(it, d)
	{
		strcat(buf, it->string);
		strcat(buf, ",");
	}
	cJSON_Delete(j);
	return strdup(buf);
}

/* Wait until the sandbox reaches status (GET), advancing nothing. */
static void wait_status(lt *t, const char *id, int status)
{
	for (int i = 0; i < 400 && lt_status(t, id) != status; i++) {
		lt_quiesce(t);
		lt_nap_ms(5);
	}
	ck_assert_int_eq(lt_status(t, id), status);
}

static double mem_num(lt *t, const char *path)
{
	char p[128];
	snprintf(p, sizeof p, "memory.%s", path);
	return lt_inum(t, NULL, p);
}

/* Retained images listed for a sandbox (inspection). */
static int retained_images_of(lt *t, const char *id, char *gen_out, size_t n)
{
	cJSON *j = lt_inspect(t, NULL);
	const cJSON *arr = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "memory"), "retained_images");
	int count = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, arr)
	{
		if (strcmp(cJSON_GetObjectItem(it, "sandbox_id")->valuestring, id))
			continue;
		count++;
		if (gen_out)
			snprintf(gen_out, n, "%s",
			         cJSON_GetObjectItem(it, "rootfs_generation")->valuestring);
	}
	cJSON_Delete(j);
	return count;
}

static bool obj_present(s0__objstore *os, const s0__objid *id)
{
	bool has = false;
	LT_OK(s0__objstore_has(os, NULL, id, &has, &e_));
	return has;
}

static char *mem_image_of(lt *t, const char *id)
{
	cJSON *j = lt_inspect(t, id);
	const char *s = lt_str(j, "sandbox.mem_image");
	char *out = strdup(s ? s : "");
	cJSON_Delete(j);
	return out;
}

/* Nothing of a refused or failed memory pause changed: same runtime, generation,
 * head and processes; no reservation, capture or operation left. */
static void assert_untouched(lt *t, procs *p, const char *rt0, int64_t g0, const char *head0)
{
	lt_assert_running(t, p->id);
	char *rt1 = lt_runtime_id(t, p->id);
	ck_assert_str_eq(rt0, rt1);
	free(rt1);
	ck_assert_int_eq(lt_generation(t, p->id), g0);
	char *head1 = lt_head(t, p->id);
	ck_assert_str_eq(head0, head1);
	free(head1);
	ck_assert(procs_restored(t, p));
	char *v = run(t, p->id, p->ctx, "echo $!");
	ck_assert_str_eq(v, p->pid);
	free(v);
	ck_assert_double_eq(mem_num(t, "reservation.reserved_bytes"), 0);
	ck_assert_double_eq(mem_num(t, "reservation.reservations"), 0);
	ck_assert_double_eq(mem_num(t, "captures_in_flight"), 0);
	ck_assert_double_eq(mem_num(t, "captures"), 0);
	ck_assert_int_eq(lt_pending_ops(t, p->id), 0);
}

/* MEM-01: no body, empty body, {} and {"memory":false} are filesystem-only on
 * both calls (same reply shape, fresh processes); a broken body is 400 and
 * changes nothing. */
START_TEST(mem01_fs_equivalent_bodies_and_bad_body)
{
	LT_ROW("MEM-01");
	lt t;
	lt_open(&t, NULL);
	static const char *const forms[] = {NULL, "", "{}", "{\"memory\":false}"};
	char *pause_keys = NULL, *resume_keys = NULL;
	for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
		procs p;
		procs_setup(&t, &p, NULL);
		char *reply = NULL;
		ck_assert_int_eq(raw_post(&t, p.id, "pause", forms[i], &reply), 200);
		char *k = data_keys(reply);
		free(reply);
		if (!pause_keys)
			pause_keys = strdup(k);
		ck_assert_str_eq(k, pause_keys);
		free(k);
		lt_quiesce(&t);
		lt_assert_paused(&t, p.id);
		ck_assert_int_eq(retained_images_of(&t, p.id, NULL, 0), 0);
		ck_assert_int_eq(raw_post(&t, p.id, "resume", forms[i], &reply), 200);
		k = data_keys(reply);
		free(reply);
		if (!resume_keys)
			resume_keys = strdup(k);
		ck_assert_str_eq(k, resume_keys);
		free(k);
		lt_quiesce(&t);
		lt_assert_running(&t, p.id);
		ck_assert(procs_fresh(&t, &p));
		procs_free(&p);
	}
	ck_assert_str_eq(pause_keys, "sandbox_id,paused,status,operation_id,runtime_generation,");
	ck_assert_str_eq(resume_keys, "sandbox_id,resumed,");
	free(pause_keys);
	free(resume_keys);
	/* malformed or wrongly typed: 400, nothing changed */
	procs p;
	procs_setup(&t, &p, NULL);
	char *rt0 = lt_runtime_id(&t, p.id);
	int64_t g0 = lt_generation(&t, p.id);
	char *head0 = lt_head(&t, p.id);
	static const char *const bad[] = {"{\"memory\":", "{\"memory\":\"yes\"}", "[1]"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *reply = NULL;
		ck_assert_int_eq(raw_post(&t, p.id, "pause", bad[i], &reply), 400);
		ck_assert_ptr_nonnull(strstr(reply, "bad_request"));
		free(reply);
	}
	lt_quiesce(&t);
	assert_untouched(&t, &p, rt0, g0, head0);
	free(rt0);
	free(head0);
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* MEM-02: without memory checkpoints a memory pause is 503 and changes
 * nothing; a memory resume there is filesystem-only (decision 6). */
START_TEST(mem02_no_checkpoint_engine_refuses_memory_pause)
{
	LT_ROW("MEM-02");
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.manual_clock = 1;
	o.disable_memory_checkpoints = 1;
	lt t;
	lt_open(&t, &o);
	procs p;
	procs_setup(&t, &p, NULL);
	char *rt0 = lt_runtime_id(&t, p.id);
	int64_t g0 = lt_generation(&t, p.id);
	char *head0 = lt_head(&t, p.id);
	s0_lifecycle_result *lr = NULL;
	s0_error *err = NULL;
	ck_assert_int_eq(s0_sandbox_pause(t.c, p.id, S0_BOOL_TRUE, &lr, &err), S0_EUNAVAILABLE);
	/* the answer names the missing piece the runtime gave */
	ck_assert_msg(strstr(s0_error_message(err), "memory checkpoints are off"), "%s",
	              s0_error_message(err));
	s0_error_free(err);
	err = NULL;
	lt_quiesce(&t);
	assert_untouched(&t, &p, rt0, g0, head0);
	lt_pause(&t, p.id);
	lt_quiesce(&t);
	mem_resume(&t, p.id);
	ck_assert(procs_fresh(&t, &p));
	free(rt0);
	free(head0);
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* MEM-05: the head moved while memory-paused (rootfs restore): fresh
 * processes on the new head. */
START_TEST(mem05_rootfs_restore_while_memory_paused)
{
	LT_ROW("MEM-05");
	lt t;
	lt_open(&t, NULL);
	procs p;
	procs_setup(&t, &p, NULL);
	lt_write(&t, p.id, "/workspace/a.txt", "snapshot content");
	s0_snapshot_info *snap = NULL;
	LT_OK(s0_snapshot_create(t.c, p.id, "s1", NULL, 0, &snap, &e_));
	lt_write(&t, p.id, "/workspace/a.txt", "after snapshot");
	mem_pause(&t, p.id);
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_restore(t.c, p.id, s0_snapshot_info_id(snap), &lr, &e_));
	s0_lifecycle_result_free(lr);
	lt_assert_paused(&t, p.id);
	mem_resume(&t, p.id);
	ck_assert(procs_fresh(&t, &p));
	ck_assert(lt_file_is(&t, p.id, "/workspace/a.txt", "snapshot content"));
	s0_snapshot_info_free(snap);
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* MEM-09: a snapshot of a memory-paused sandbox holds the filesystem only. */
START_TEST(mem09_snapshot_of_memory_paused_is_fs_only)
{
	LT_ROW("MEM-09");
	lt t;
	lt_open(&t, NULL);
	procs p;
	procs_setup(&t, &p, NULL);
	lt_write(&t, p.id, "/workspace/f.txt", "in the snapshot");
	mem_pause(&t, p.id);
	char *head = lt_head(&t, p.id);
	s0_snapshot_info *snap = NULL;
	LT_OK(s0_snapshot_create(t.c, p.id, "s1", NULL, 0, &snap, &e_));
	s0_sandbox_info *sb = NULL;
	LT_OK(s0_sandbox_claim(t.c, "default", s0_snapshot_info_id(snap), NULL, &sb, &e_));
	procs q = {.id = strdup(s0_sandbox_info_id(sb)), .ctx = strdup(p.ctx), .pid = NULL};
	s0_sandbox_info_free(sb);
	lt_assert_running(&t, q.id);
	ck_assert(procs_fresh(&t, &q));
	ck_assert(lt_file_is(&t, q.id, "/workspace/f.txt", "in the snapshot"));
	/* the snapshot's claim retains no image; only the source keeps its own */
	ck_assert_int_eq(retained_images_of(&t, q.id, NULL, 0), 0);
	char gen[128] = "";
	ck_assert_int_eq(retained_images_of(&t, p.id, gen, sizeof gen), 1);
	ck_assert_str_eq(gen, head);
	char *img = mem_image_of(&t, q.id);
	ck_assert_str_eq(img, "");
	free(img);
	s0_snapshot_info_free(snap);
	free(head);
	procs_free(&q);
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* MEM-04 (inspection half): while paused the lease is gone and one image
 * bound to the sandbox and its head is listed; DELETE removes it. */
START_TEST(mem04_retained_image_listed_and_deleted)
{
	LT_ROW("MEM-04");
	lt t;
	lt_open(&t, NULL);
	procs p;
	procs_setup(&t, &p, NULL);
	double cpu0 = lt_inum(&t, NULL, "node.cpu_used_millis");
	mem_pause(&t, p.id);
	ck_assert_int_eq(lt_runtimes_of(&t, p.id), 0);
	ck_assert_double_lt(lt_inum(&t, NULL, "node.cpu_used_millis"), cpu0);
	char *rt = lt_runtime_id(&t, p.id);
	ck_assert_str_eq(rt, "");
	free(rt);
	char gen[128] = "";
	ck_assert_int_eq(retained_images_of(&t, p.id, gen, sizeof gen), 1);
	char *head = lt_head(&t, p.id);
	ck_assert_str_eq(gen, head);
	char *img = mem_image_of(&t, p.id);
	s0__objid iid;
	ck_assert_int_eq(s0__objid_parse(img, &iid, NULL), S0_OK);
	s0__objstore *os = s0__storage_objstore(s0__local_engine(t.local)->storage);
	LT_OK(s0_local_gc(t.local, &e_));
	ck_assert(obj_present(os, &iid));
	LT_OK(s0_sandbox_delete(t.c, p.id, &e_));
	lt_quiesce(&t);
	ck_assert_int_eq(retained_images_of(&t, p.id, NULL, 0), 0);
	LT_OK(s0_local_gc(t.local, &e_));
	ck_assert(!obj_present(os, &iid));
	free(img);
	free(head);
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* MEM-08: a TTL pause after a memory cycle captures nothing; a memory
 * resume then starts fresh processes. */
START_TEST(mem08_ttl_pause_after_memory_cycle_is_fs_only)
{
	LT_ROW("MEM-08");
	lt t;
	lt_open(&t, NULL);
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.set |= S0_CONFIG_SET_TTL;
	cfg.ttl_sec = 600;
	procs p;
	procs_setup(&t, &p, &cfg);
	mem_pause(&t, p.id);
	mem_resume(&t, p.id);
	ck_assert(procs_restored(&t, &p));
	double captures = mem_num(&t, "captures");
	lt_advance(&t, 601 * 1000);
	lt_quiesce(&t);
	wait_status(&t, p.id, S0_STATUS_PAUSED);
	lt_assert_paused(&t, p.id);
	ck_assert_double_eq(mem_num(&t, "captures"), captures);
	ck_assert_int_eq(retained_images_of(&t, p.id, NULL, 0), 0);
	mem_resume(&t, p.id);
	ck_assert(procs_fresh(&t, &p));
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* MFB-01: no retained image (removed from the store): fresh processes. */
START_TEST(mfb01_missing_image_gives_fresh_processes)
{
	LT_ROW("MFB-01");
	lt t;
	lt_open(&t, NULL);
	procs p;
	procs_setup(&t, &p, NULL);
	lt_write(&t, p.id, "/workspace/f.txt", "files intact");
	mem_pause(&t, p.id);
	char *img = mem_image_of(&t, p.id);
	s0__objid iid;
	ck_assert_int_eq(s0__objid_parse(img, &iid, NULL), S0_OK);
	s0__objstore *os = s0__storage_objstore(s0__local_engine(t.local)->storage);
	uint64_t gone = 0;
	LT_OK(s0__objstore_delete(os, &iid, 1, &gone, NULL, &e_));
	ck_assert_int_eq((int)gone, 1);
	mem_resume(&t, p.id);
	ck_assert(procs_fresh(&t, &p));
	ck_assert(lt_file_is(&t, p.id, "/workspace/f.txt", "files intact"));
	free(img);
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* MFB-02: one fingerprint field of the carriers changed between pause and
 * resume: fresh processes each time; nothing changed: restored. */
START_TEST(mfb02_fingerprint_mismatch_falls_back)
{
	LT_ROW("MFB-02");
	lt t;
	lt_open(&t, NULL);
	static const char *const fields[] = {"runtime_version", "platform", "cpu_features"};
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		procs p;
		procs_setup(&t, &p, NULL);
		mem_pause(&t, p.id);
		char f[64];
		snprintf(f, sizeof f, "carrier_fingerprint@%s", fields[i]);
		LT_OK(s0_local_fault_arm(t.local, f, S0_FAULT_FAIL, 0, 0, &e_));
		mem_resume(&t, p.id);
		LT_OK(s0_local_fault_release(t.local, f, &e_));
		ck_assert_msg(procs_fresh(&t, &p), "field %s", fields[i]);
		procs_free(&p);
	}
	procs p;
	procs_setup(&t, &p, NULL);
	mem_pause(&t, p.id);
	mem_resume(&t, p.id);
	ck_assert(procs_restored(&t, &p));
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* MFB-08: an uncertain capture is not retried, retains nothing, and the
 * sandbox reads failed/paused only after the terminal proof. */
START_TEST(mfb08_uncertain_capture)
{
	LT_ROW("MFB-08");
	lt t;
	lt_open(&t, NULL);
	procs p;
	procs_setup(&t, &p, NULL);
	LT_OK(s0_local_fault_arm(t.local, "capture_uncertain", S0_FAULT_FAIL, 0, 0, &e_));
	LT_OK(s0_local_fault_arm(t.local, "resource_leak:runsc", S0_FAULT_HOLD, 0, 0, &e_));
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_pause(t.c, p.id, S0_BOOL_TRUE, &lr, &e_));
	s0_lifecycle_result_free(lr);
	lt_quiesce(&t);
	/* the proof is held: the lease stays, not yet failed */
	ck_assert_int_eq(lt_runtimes_of(&t, p.id), 1);
	ck_assert_int_ne(lt_status(&t, p.id), S0_STATUS_FAILED);
	ck_assert_int_ne(lt_status(&t, p.id), S0_STATUS_PAUSED);
	LT_OK(s0_local_fault_release(t.local, "resource_leak:runsc", &e_));
	lt_quiesce(&t);
	wait_status(&t, p.id, S0_STATUS_FAILED);
	s0_sandbox_info *sb = lt_get(&t, p.id);
	ck_assert(s0_sandbox_info_paused(sb));
	s0_sandbox_info_free(sb);
	ck_assert_int_eq(lt_runtimes_of(&t, p.id), 0);
	cJSON *j = lt_inspect(&t, NULL);
	ck_assert_double_eq(lt_num(j, "faults.capture_uncertain.hits"), 1);
	cJSON_Delete(j);
	ck_assert_double_eq(mem_num(&t, "captures"), 0);
	ck_assert_int_eq(retained_images_of(&t, p.id, NULL, 0), 0);
	LT_OK(s0_local_fault_release(t.local, "capture_uncertain", &e_));
	procs_free(&p);
	lt_close(&t);
}
END_TEST

typedef struct pause_arg {
	const char *id;
} pause_arg;

static int bg_mem_pause(lt *t, void *arg, s0_error **err)
{
	s0_lifecycle_result *lr = NULL;
	int rc = s0_sandbox_pause(t->c, ((pause_arg *)arg)->id, S0_BOOL_TRUE, &lr, err);
	s0_lifecycle_result_free(lr);
	return rc;
}

/* The running sandbox is untouched by a cancelled preparation. */

/* MFB-09: preparation held past its deadline: 503, running, same runtime. */
START_TEST(mfb09_prepare_stall_past_deadline)
{
	LT_ROW("MFB-09");
	lt t;
	lt_open(&t, NULL);
	procs p;
	procs_setup(&t, &p, NULL);
	char *rt0 = lt_runtime_id(&t, p.id);
	int64_t g0 = lt_generation(&t, p.id);
	char *head0 = lt_head(&t, p.id);
	LT_OK(s0_local_fault_arm(t.local, "prepare_stall", S0_FAULT_HOLD, 0, 0, &e_));
	pause_arg a = {p.id};
	lt_bg b;
	lt_bg_start(&b, &t, bg_mem_pause, &a);
	lt_wait_fault_hits(&t, "prepare_stall", 1);
	lt_advance_until_done(&t, &b, 1000, 2000);
	ck_assert_int_eq(lt_bg_join(&b), S0_EUNAVAILABLE);
	lt_bg_free(&b);
	LT_OK(s0_local_fault_release(t.local, "prepare_stall", &e_));
	lt_quiesce(&t);
	assert_untouched(&t, &p, rt0, g0, head0);
	free(rt0);
	free(head0);
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* MFB-10: the whole budget held until the deadline: 503
 * reservation_unavailable, running; released before: the pause completes. */
START_TEST(mfb10_full_reservation)
{
	LT_ROW("MFB-10");
	lt t;
	lt_open(&t, NULL);
	procs p;
	procs_setup(&t, &p, NULL);
	char *rt0 = lt_runtime_id(&t, p.id);
	int64_t g0 = lt_generation(&t, p.id);
	char *head0 = lt_head(&t, p.id);
	LT_OK(s0_local_fault_arm(t.local, "upload_budget_hold", S0_FAULT_HOLD, 0, 0, &e_));
	pause_arg a = {p.id};
	lt_bg b;
	lt_bg_start(&b, &t, bg_mem_pause, &a);
	lt_advance_until_done(&t, &b, 1000, 2000);
	ck_assert_int_eq(lt_bg_join(&b), S0_EUNAVAILABLE);
	ck_assert_str_eq(s0_error_reason(b.err), "reservation_unavailable");
	lt_bg_free(&b);
	lt_quiesce(&t);
	/* still held (migration stand-in): nothing of ours reserved */
	LT_OK(s0_local_fault_release(t.local, "upload_budget_hold", &e_));
	assert_untouched(&t, &p, rt0, g0, head0);
	/* released before the deadline: the same request completes */
	LT_OK(s0_local_fault_arm(t.local, "upload_budget_hold", S0_FAULT_HOLD, 0, 0, &e_));
	lt_bg_start(&b, &t, bg_mem_pause, &a);
	lt_wait_fault_hits(&t, "upload_budget_hold", 0);
	for (int i = 0; i < 5; i++) {
		lt_nap_ms(5);
		lt_advance(&t, 1000);
	}
	ck_assert(!__atomic_load_n(&b.done, __ATOMIC_SEQ_CST));
	LT_OK(s0_local_fault_release(t.local, "upload_budget_hold", &e_));
	lt_advance_until_done(&t, &b, 250, 400);
	ck_assert_int_eq(lt_bg_join(&b), S0_OK);
	lt_bg_free(&b);
	lt_quiesce(&t);
	wait_status(&t, p.id, S0_STATUS_PAUSED);
	ck_assert_int_eq(retained_images_of(&t, p.id, NULL, 0), 1);
	mem_resume(&t, p.id);
	ck_assert(procs_restored(&t, &p));
	free(rt0);
	free(head0);
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* MFB-11: an image over the per-image limit is refused at admission. */
START_TEST(mfb11_image_over_limit_refused)
{
	LT_ROW("MFB-11");
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.manual_clock = 1;
	o.memory_image_limit_bytes = 4096;
	lt t;
	lt_open(&t, &o);
	procs p;
	procs_setup(&t, &p, NULL);
	char *rt0 = lt_runtime_id(&t, p.id);
	int64_t g0 = lt_generation(&t, p.id);
	char *head0 = lt_head(&t, p.id);
	s0_lifecycle_result *lr = NULL;
	s0_error *err = NULL;
	LT_EXPECT(s0_sandbox_pause(t.c, p.id, S0_BOOL_TRUE, &lr, &err), err, S0_ECONFLICT, NULL);
	lt_quiesce(&t);
	assert_untouched(&t, &p, rt0, g0, head0);
	ck_assert_double_ge(mem_num(&t, "reservation.refused"), 1);
	free(rt0);
	free(head0);
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* MFB-12: the reservation is held until the source is terminal, then back
 * to baseline; the image stays and a memory resume restores. */
START_TEST(mfb12_reservation_released_after_terminal_proof)
{
	LT_ROW("MFB-12");
	lt t;
	lt_open(&t, NULL);
	procs p;
	procs_setup(&t, &p, NULL);
	ck_assert_double_eq(mem_num(&t, "reservation.reserved_bytes"), 0);
	LT_OK(s0_local_fault_arm(t.local, "resource_leak:mount", S0_FAULT_HOLD, 0, 0, &e_));
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_pause(t.c, p.id, S0_BOOL_TRUE, &lr, &e_));
	s0_lifecycle_result_free(lr);
	lt_quiesce(&t);
	ck_assert_double_gt(mem_num(&t, "reservation.reserved_bytes"), 0);
	ck_assert_double_eq(mem_num(&t, "reservation.reservations"), 1);
	LT_OK(s0_local_fault_release(t.local, "resource_leak:mount", &e_));
	lt_quiesce(&t);
	wait_status(&t, p.id, S0_STATUS_PAUSED);
	ck_assert_double_eq(mem_num(&t, "reservation.reserved_bytes"), 0);
	ck_assert_double_eq(mem_num(&t, "reservation.reservations"), 0);
	ck_assert_int_eq(retained_images_of(&t, p.id, NULL, 0), 1);
	mem_resume(&t, p.id);
	ck_assert(procs_restored(&t, &p));
	char *v = run(&t, p.id, p.ctx, "echo $!");
	ck_assert_str_eq(v, p.pid);
	free(v);
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* MFB-06: the fallback's intent survives a manager restart and a reopen;
 * exactly one replacement runs, at g+2. */
static void mfb06_case(bool reopen)
{
	lt t;
	lt_open(&t, NULL);
	procs p;
	procs_setup(&t, &p, NULL);
	lt_write(&t, p.id, "/workspace/f.txt", "committed");
	int64_t g0 = lt_generation(&t, p.id);
	mem_pause(&t, p.id);
	LT_OK(s0_local_fault_arm(t.local, "restore", S0_FAULT_FAIL, 1, 0, &e_));
	LT_OK(s0_local_fault_arm(t.local, "carrier@fallback", S0_FAULT_HOLD, 0, 0, &e_));
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_resume(t.c, p.id, S0_BOOL_TRUE, &lr, &e_));
	ck_assert(!s0_lifecycle_result_resumed(lr));
	s0_lifecycle_result_free(lr);
	lt_quiesce(&t);
	ck_assert_int_eq(lt_status(&t, p.id), S0_STATUS_STARTING);
	ck_assert_int_eq(lt_runtimes_of(&t, p.id), 0);
	if (reopen)
		lt_reopen(&t); /* faults go with the process */
	else
		LT_OK(s0_local_restart_manager(t.local, &e_));
	/* after a reopen the held fault is gone, so the controller the open
	 * kicked may already have run the recorded fallback: starting or
	 * running, never back to paused */
	int st = lt_status(&t, p.id);
	if (reopen)
		ck_assert_msg(st == S0_STATUS_STARTING || st == S0_STATUS_RUNNING, "status %d", st);
	else
		ck_assert_int_eq(st, S0_STATUS_STARTING);
	if (!reopen)
		LT_OK(s0_local_fault_release(t.local, "carrier@fallback", &e_));
	lt_quiesce(&t);
	lt_advance(&t, 1000);
	lt_quiesce(&t);
	wait_status(&t, p.id, S0_STATUS_RUNNING);
	lt_assert_running(&t, p.id);
	ck_assert_int_eq(lt_generation(&t, p.id), g0 + 2);
	ck_assert_int_eq(lt_runtimes_of(&t, p.id), 1);
	ck_assert_int_eq(lt_pending_ops(&t, p.id), 0);
	ck_assert_double_eq(lt_inum(&t, p.id, "sandbox.operation_counts.resume_fallback"), 1);
	ck_assert(lt_file_is(&t, p.id, "/workspace/f.txt", "committed"));
	ck_assert(procs_fresh(&t, &p));
	procs_free(&p);
	lt_close(&t);
}

START_TEST(mfb06_fallback_survives_manager_restart)
{
	LT_ROW("MFB-06");
	mfb06_case(false);
}
END_TEST

START_TEST(mfb06_fallback_survives_reopen)
{
	LT_ROW("MFB-06");
	mfb06_case(true);
}
END_TEST

/* MFB-03 held reclaim: with `resource_leak:mount` armed the failed restore
 * target is not proven absent, so its lease is held, GET stays `starting`,
 * node capacity counts one lease and no replacement starts; clearing the
 * fault lets the filesystem-only replacement run. */
START_TEST(mfb03_failed_target_reclaim_held_by_terminal_proof)
{
	LT_ROW("MFB-03");
	lt t;
	lt_open(&t, NULL);
	procs p;
	procs_setup(&t, &p, NULL);
	int64_t g0 = lt_generation(&t, p.id);
	double cpu_one = lt_inum(&t, NULL, "node.cpu_used_millis");
	mem_pause(&t, p.id);
	ck_assert_double_eq(lt_inum(&t, NULL, "node.cpu_used_millis"), 0);
	double started = lt_inum(&t, NULL, "node.runtimes_started");
	LT_OK(s0_local_fault_arm(t.local, "restore", S0_FAULT_FAIL, 1, 0, &e_));
	LT_OK(s0_local_fault_arm(t.local, "resource_leak:mount", S0_FAULT_HOLD, 0, 0, &e_));
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_resume(t.c, p.id, S0_BOOL_TRUE, &lr, &e_));
	ck_assert(!s0_lifecycle_result_resumed(lr));
	s0_lifecycle_result_free(lr);
	for (int i = 0; i < 3; i++) {
		lt_quiesce(&t);
		lt_advance(&t, 1000);
	}
	lt_quiesce(&t);
	ck_assert_int_eq(lt_status(&t, p.id), S0_STATUS_STARTING);
	ck_assert_int_eq(lt_runtimes_of(&t, p.id), 1); /* the failed target, held */
	ck_assert_double_eq(lt_inum(&t, NULL, "node.cpu_used_millis"), cpu_one);
	ck_assert_double_eq(lt_inum(&t, NULL, "node.runtimes_started"), started + 1);
	ck_assert_int_eq(lt_pending_ops(&t, p.id), 1);
	LT_OK(s0_local_fault_release(t.local, "resource_leak:mount", &e_));
	lt_quiesce(&t);
	lt_advance(&t, 1000);
	lt_quiesce(&t);
	wait_status(&t, p.id, S0_STATUS_RUNNING);
	lt_assert_running(&t, p.id);
	ck_assert_int_eq(lt_generation(&t, p.id), g0 + 2);
	ck_assert_int_eq(lt_runtimes_of(&t, p.id), 1);
	ck_assert_double_eq(lt_inum(&t, NULL, "node.cpu_used_millis"), cpu_one);
	ck_assert_double_eq(lt_inum(&t, NULL, "node.runtimes_started"), started + 2);
	ck_assert(procs_fresh(&t, &p));
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* Sandboxes listed (parent and children). */
static size_t sandbox_count(lt *t)
{
	s0_sandbox_page *page = NULL;
	LT_OK(s0_sandbox_list(t->c, NULL, &page, &e_));
	size_t n = s0_sandbox_page_length(page);
	s0_sandbox_page_free(page);
	return n;
}

static int mem_fork_rc(lt *t, const char *id, const char *key, s0_sandbox_info **out,
                       s0_error **err)
{
	s0_fork_options fo = S0_FORK_OPTIONS_INIT;
	fo.memory = 1;
	fo.idempotency_key = key;
	return s0_sandbox_fork(t->c, id, &fo, out, err);
}

/* MEM-13: a memory fork answers 503 capture_pending while the capture is
 * held, then 201 with the child for the same key; the key never yields a
 * second child; the parent keeps its runtime_id and generation; a memory
 * resume of the child restores the processes. */
START_TEST(mem13_memory_fork_pending_then_child)
{
	LT_ROW("MEM-13");
	lt t;
	lt_open(&t, NULL);
	procs p;
	procs_setup(&t, &p, NULL);
	lt_write(&t, p.id, "/workspace/f.txt", "forked");
	int64_t g0 = lt_generation(&t, p.id);
	char *rt0 = lt_runtime_id(&t, p.id);
	size_t n0 = sandbox_count(&t);
	double caps = mem_num(&t, "captures");
	LT_OK(s0_local_fault_arm(t.local, "prepare_stall", S0_FAULT_HOLD, 0, 0, &e_));
	s0_sandbox_info *sb = NULL;
	s0_error *err = NULL;
	LT_EXPECT(mem_fork_rc(&t, p.id, "k-13", &sb, &err), err, S0_EUNAVAILABLE, "capture_pending");
	ck_assert_double_eq(mem_num(&t, "captures"), caps);
	ck_assert_uint_eq(sandbox_count(&t), n0);
	LT_OK(s0_local_fault_release(t.local, "prepare_stall", &e_));
	LT_OK(mem_fork_rc(&t, p.id, "k-13", &sb, &e_));
	char *cid = strdup(s0_sandbox_info_id(sb));
	ck_assert(s0_sandbox_info_paused(sb));
	ck_assert_int_eq(s0_sandbox_info_status(sb), S0_STATUS_PAUSED);
	s0_sandbox_info_free(sb);
	ck_assert_double_eq(mem_num(&t, "captures"), caps + 1);
	ck_assert_int_eq(retained_images_of(&t, cid, NULL, 0), 1);
	/* the same key again: the same child, no capture */
	LT_OK(mem_fork_rc(&t, p.id, "k-13", &sb, &e_));
	ck_assert_str_eq(s0_sandbox_info_id(sb), cid);
	s0_sandbox_info_free(sb);
	ck_assert_double_eq(mem_num(&t, "captures"), caps + 1);
	ck_assert_uint_eq(sandbox_count(&t), n0 + 1);
	/* the parent keeps running, same runtime and generation, same processes */
	lt_assert_running(&t, p.id);
	char *rt1 = lt_runtime_id(&t, p.id);
	ck_assert_str_eq(rt0, rt1);
	ck_assert_int_eq(lt_generation(&t, p.id), g0);
	ck_assert(procs_restored(&t, &p));
	/* the child's memory resume restores the captured processes */
	procs q = {.id = cid, .ctx = strdup(p.ctx), .pid = strdup(p.pid)};
	mem_resume(&t, q.id);
	ck_assert(procs_restored(&t, &q));
	ck_assert(lt_file_is(&t, q.id, "/workspace/f.txt", "forked"));
	free(rt0);
	free(rt1);
	procs_free(&q);
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* MFB-14: restoring the parent fails during a memory fork; repeating the
 * key gives the same failure, no new capture and no child. */
START_TEST(mfb14_parent_restore_failure_is_replayed)
{
	LT_ROW("MFB-14");
	lt t;
	lt_open(&t, NULL);
	procs p;
	procs_setup(&t, &p, NULL);
	size_t n0 = sandbox_count(&t);
	double caps = mem_num(&t, "captures");
	LT_OK(s0_local_fault_arm(t.local, "restore", S0_FAULT_FAIL, 1, 0, &e_));
	s0_sandbox_info *sb = NULL;
	s0_error *err = NULL;
	int rc = mem_fork_rc(&t, p.id, "k-14", &sb, &err);
	ck_assert_int_lt(rc, 0);
	int code = s0_error_code(err);
	char *msg = strdup(s0_error_message(err));
	s0_error_free(err);
	err = NULL;
	double caps1 = mem_num(&t, "captures");
	ck_assert_double_eq(caps1, caps + 1);
	ck_assert_uint_eq(sandbox_count(&t), n0);
	/* the fault is spent: a recapture would succeed; the key replays */
	int rc2 = mem_fork_rc(&t, p.id, "k-14", &sb, &err);
	ck_assert_int_eq(rc2, rc);
	ck_assert_int_eq(s0_error_code(err), code);
	ck_assert_str_eq(s0_error_message(err), msg);
	s0_error_free(err);
	ck_assert_double_eq(mem_num(&t, "captures"), caps1);
	ck_assert_uint_eq(sandbox_count(&t), n0);
	lt_assert_running(&t, p.id);
	free(msg);
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* MFB-13: a DELETE during capture preparation records termination intent
 * (GET terminating) while the source keeps its lease; the preparation is
 * cancelled (the pause answers conflict, nothing reserved) and then the
 * delete completes: 404. `resource_leak:runsc` holds the final reclaim so
 * the terminating state is observable. */
START_TEST(mfb13_delete_during_preparation)
{
	LT_ROW("MFB-13");
	lt t;
	lt_open(&t, NULL);
	procs p;
	procs_setup(&t, &p, NULL);
	LT_OK(s0_local_fault_arm(t.local, "prepare_stall", S0_FAULT_HOLD, 0, 0, &e_));
	LT_OK(s0_local_fault_arm(t.local, "resource_leak:runsc", S0_FAULT_HOLD, 0, 0, &e_));
	pause_arg a = {p.id};
	lt_bg b;
	lt_bg_start(&b, &t, bg_mem_pause, &a);
	lt_wait_fault_hits(&t, "prepare_stall", 1);
	LT_OK(s0_sandbox_delete(t.c, p.id, &e_));
	ck_assert_int_eq(lt_status(&t, p.id), S0_STATUS_TERMINATING);
	ck_assert_int_eq(lt_runtimes_of(&t, p.id), 1);
	ck_assert_int_eq(lt_bg_join(&b), S0_ECONFLICT);
	lt_bg_free(&b);
	lt_quiesce(&t);
	ck_assert_int_eq(lt_status(&t, p.id), S0_STATUS_TERMINATING);
	ck_assert_int_eq(lt_runtimes_of(&t, p.id), 1);
	ck_assert_double_eq(mem_num(&t, "captures_in_flight"), 0);
	ck_assert_double_eq(mem_num(&t, "reservation.reserved_bytes"), 0);
	LT_OK(s0_local_fault_release(t.local, "resource_leak:runsc", &e_));
	LT_OK(s0_local_fault_release(t.local, "prepare_stall", &e_));
	lt_quiesce(&t);
	lt_advance(&t, 1000);
	lt_quiesce(&t);
	s0_sandbox_info *sb = NULL;
	s0_error *err = NULL;
	for (int i = 0; i < 400; i++) {
		int rc = s0_sandbox_get(t.c, p.id, &sb, &err);
		s0_sandbox_info_free(sb);
		sb = NULL;
		if (rc == S0_ENOTFOUND)
			break;
		s0_error_free(err);
		err = NULL;
		lt_quiesce(&t);
		lt_nap_ms(5);
	}
	LT_EXPECT(s0_sandbox_get(t.c, p.id, &sb, &err), err, S0_ENOTFOUND, NULL);
	s0_error_free(err);
	ck_assert_int_eq(lt_runtimes_of(&t, p.id), 0);
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* GC window: a GC between the capture's batch commit and the operation
 * record keeps the image (pinned in memory until recorded). */
START_TEST(mem_gc_between_capture_and_record_keeps_image)
{
	LT_ROW("MEM-04");
	lt t;
	lt_open(&t, NULL);
	procs p;
	procs_setup(&t, &p, NULL);
	LT_OK(s0_local_fault_arm(t.local, "capture@before-record", S0_FAULT_HOLD, 0, 0, &e_));
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_pause(t.c, p.id, S0_BOOL_TRUE, &lr, &e_));
	s0_lifecycle_result_free(lr);
	lt_wait_fault_hits(&t, "capture@before-record", 1);
	LT_OK(s0_local_gc(t.local, &e_));
	LT_OK(s0_local_fault_release(t.local, "capture@before-record", &e_));
	lt_quiesce(&t);
	wait_status(&t, p.id, S0_STATUS_PAUSED);
	ck_assert_int_eq(retained_images_of(&t, p.id, NULL, 0), 1);
	LT_OK(s0_local_gc(t.local, &e_));
	mem_resume(&t, p.id);
	ck_assert(procs_restored(&t, &p));
	procs_free(&p);
	lt_close(&t);
}
END_TEST

Suite *s0_local_memory_suite(void)
{
	Suite *s = suite_create("memory");
	TCase *tc = tcase_create("processes");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, fs04_fs_cycle_keeps_no_process_state);
	tcase_add_test(tc, fs02_env_vars_in_new_generation);
	tcase_add_test(tc, ctx_endpoints_through_client);
	tcase_add_test(tc, ses01_02_journal_survives_and_restart_recovery);
	tcase_add_test(tc, ses01_02_sessions_survive_a_backend_reopen);
	tcase_add_test(tc, ses03_recovery_stop);
	tcase_add_test(tc, ses04_05_only_active_sessions_restart);
	tcase_add_test(tc, ses_idempotency_events_delete);
	tcase_add_test(tc, ttl07_fs_wake_by_context_request);
	tcase_add_test(tc, ctx_ttl_ends_on_backend_clock);
	tcase_add_test(tc, ctx_deadlines_count_time_before_a_memory_pause);
	suite_add_tcase(s, tc);
	TCase *tm = tcase_create("memory");
	tcase_set_timeout(tm, 120);
	tcase_add_test(tm, mem03_04_memory_cycle_restores_execution_image);
	tcase_add_test(tm, api_8_3_session_lifetime_and_grace_through_client);
	tcase_add_test(tm, mem06_plain_resume_is_filesystem_only);
	tcase_add_test(tm, mem07_memory_resume_after_fs_pause);
	tcase_add_test(tm, mfb07_capture_failure_reports_failed);
	tcase_add_test(tm, mfb03_05_failed_restore_falls_back);
	tcase_add_test(tm, ttl07_memory_wake_restores);
	tcase_add_test(tm, ttl08_memory_wake_restore_failure_falls_back);
	tcase_add_test(tm, ses06_memory_restore_keeps_sessions);
	tcase_add_test(tm, api_8_3_session_tier2_through_client);
	tcase_add_test(tm, api_8_3_session_inputs_survive_memory_cycle);
	suite_add_tcase(s, tm);
	TCase *ta = tcase_create("memory_admission");
	tcase_set_timeout(ta, 120);
	tcase_add_test(ta, mem01_fs_equivalent_bodies_and_bad_body);
	tcase_add_test(ta, mem02_no_checkpoint_engine_refuses_memory_pause);
	tcase_add_test(ta, mem04_retained_image_listed_and_deleted);
	tcase_add_test(ta, mem05_rootfs_restore_while_memory_paused);
	tcase_add_test(ta, mem08_ttl_pause_after_memory_cycle_is_fs_only);
	tcase_add_test(ta, mem09_snapshot_of_memory_paused_is_fs_only);
	tcase_add_test(ta, mfb01_missing_image_gives_fresh_processes);
	tcase_add_test(ta, mfb02_fingerprint_mismatch_falls_back);
	tcase_add_test(ta, mfb08_uncertain_capture);
	tcase_add_test(ta, mfb09_prepare_stall_past_deadline);
	tcase_add_test(ta, mfb10_full_reservation);
	tcase_add_test(ta, mfb11_image_over_limit_refused);
	tcase_add_test(ta, mfb12_reservation_released_after_terminal_proof);
	tcase_add_test(ta, mfb06_fallback_survives_manager_restart);
	tcase_add_test(ta, mfb06_fallback_survives_reopen);
	tcase_add_test(ta, mem_gc_between_capture_and_record_keeps_image);
	tcase_add_test(ta, mfb03_failed_target_reclaim_held_by_terminal_proof);
	tcase_add_test(ta, mem13_memory_fork_pending_then_child);
	tcase_add_test(ta, mfb14_parent_restore_failure_is_replayed);
	tcase_add_test(ta, mfb13_delete_during_preparation);
	suite_add_tcase(s, ta);
	return s;
}
