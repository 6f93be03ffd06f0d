/*
 * Concurrent pauses join one durable operation (PTX-07), through the router
 * over the real engine (what the in-process transport calls) and through
 * the public client made by s0_client_new_local(): many threads
 * post memory pauses at once to one running sandbox, round after round;
 * every answer is a success naming the same operation, none is a 409. A
 * memory pause's preparation runs without the sandbox lock, which once
 * left a window where a second pause saw neither a recorded operation nor
 * a free runtime (docs/decisions.md "Concurrent pauses"). The mixed cases:
 * a filesystem-only pause during a memory pause joins it; a memory pause
 * over a recorded filesystem-only pause is a 409. The publication is held
 * (fault point object_store@after-seal) while the pauses arrive, so each
 * finds the operation in flight rather than already done.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "common/json.h"
#include "local_fixture.h"
#include "router_call.h"
#include "sandbox0/sandbox0.h"
#include "server_test.h"

static lf f;

#define CALL(...) CALL_(__VA_ARGS__, .pad_ = 0)
#define CALL_(m, p, ...) rc_call(f.engine, m, p, &(rc_opts){__VA_ARGS__})

enum { THREADS = 32 };

static void setup(void)
{
	lf_open(&f, false);
}

static void teardown(void)
{
	lf_close(&f);
}

typedef struct pauser {
	pthread_t th;
	const char *path;
	const char *body;
	pthread_barrier_t *go;
	int status;
	int64_t op_id;
	char code[64];
} pauser;

static void *pause_thread(void *arg)
{
	pauser *p = arg;
	pthread_barrier_wait(p->go);
	rc_result r = CALL("POST", p->path, .body = p->body);
	p->status = r.status;
	p->op_id = s0__json_i64(r.data, "operation_id", -1);
	const char *code = r.status >= 400 ? rc_err_code(&r) : "";
	s0__strlcpy(p->code, code ? code : "?", sizeof p->code);
	rc_free(&r);
	return NULL;
}

/* THREADS pauses with these bodies (alternating) at once; every answer must
 * be 200 and carry the same operation id, which is returned. */
static int64_t pause_together(const char *path, const char *const bodies[2])
{
	pauser p[THREADS];
	pthread_barrier_t go;
	pthread_barrier_init(&go, NULL, THREADS);
	for (int i = 0; i < THREADS; i++) {
		p[i] = (pauser){.path = path, .body = bodies[i % 2], .go = &go};
		ck_assert_int_eq(pthread_create(&p[i].th, NULL, pause_thread, &p[i]), 0);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(p[i].th, NULL);
	pthread_barrier_destroy(&go);
	for (int i = 0; i < THREADS; i++) {
		ck_assert_msg(p[i].status == 200, "pause %d (%s) answered %d %s", i, p[i].body,
		              p[i].status, p[i].code);
		ck_assert_msg(p[i].op_id > 0, "pause %d: no operation_id", i);
		ck_assert_msg(p[i].op_id == p[0].op_id, "pause %d joined operation %lld, not %lld", i,
		              (long long)p[i].op_id, (long long)p[0].op_id);
	}
	return p[0].op_id;
}

static void hold(bool on)
{
	s0_error *err = NULL;
	int rc = on ? s0_local_fault_arm(f.local, "object_store@after-seal", S0_FAULT_HOLD, 0, 0, &err)
	            : s0_local_fault_release(f.local, "object_store@after-seal", &err);
	ck_assert_msg(rc == S0_OK, "fault: %s", err ? s0_error_message(err) : "?");
}

static void expect_sandbox(const char *path, const char *status, bool paused)
{
	rc_result r = CALL("GET", path);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(s0__json_str0(r.data, "status"), status);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(r.data, "paused")) == paused);
	rc_free(&r);
}

static char *claim(void)
{
	rc_result r = CALL("POST", "/api/v1/sandboxes", .body = "{\"template\":\"default\"}");
	ck_assert_msg(r.status == 201, "claim: %d %s", r.status, r.resp.body.data);
	char *p = NULL;
	ck_assert_int_ge(asprintf(&p, "/api/v1/sandboxes/%s", s0__json_str0(r.data, "sandbox_id")),
	                 0);
	rc_free(&r);
	return p;
}

static char *sub(const char *p, const char *suffix)
{
	char *s = NULL;
	ck_assert_int_ge(asprintf(&s, "%s%s", p, suffix), 0);
	return s;
}

/* Then resume with memory and check the /tmp file the memory pause kept. */
static void resume_memory(const char *p)
{
	char *rp = sub(p, "/resume");
	rc_result r = CALL("POST", rp, .body = "{\"memory\":true}");
	ck_assert_msg(r.status == 200, "resume: %d %s", r.status, r.resp.body.data);
	rc_free(&r);
	lf_quiesce(&f);
	expect_sandbox(p, "running", false);
	free(rp);
}

/* PTX-07: THREADS memory pauses at once, many rounds: one operation each. */
START_TEST(ptx07_concurrent_memory_pauses_join)
{
	char *p = claim(), *pp = sub(p, "/pause");
	static const char *const memory[2] = {"{\"memory\":true}", "{\"memory\":true}"};
	long rounds = s0_test_iterations(12);
	int64_t last = 0;
	for (long round = 0; round < rounds; round++) {
		hold(true);
		int64_t op = pause_together(pp, memory);
		ck_assert_int_gt(op, last); /* a new operation each round */
		last = op;
		hold(false);
		lf_quiesce(&f);
		expect_sandbox(p, "paused", true);
		resume_memory(p);
	}
	free(pp);
	free(p);
}
END_TEST

/* PTX-07: filesystem-only and memory pauses at once: the first one to be
 * recorded or prepared decides; the others join it or, for a memory pause
 * over a recorded filesystem-only one, answer 409 — never a second operation. */
START_TEST(ptx07_mixed_pauses_one_operation)
{
	char *p = claim(), *pp = sub(p, "/pause");
	/* a memory pause first, then filesystem-only ones during it: they join */
	hold(true);
	rc_result r = CALL("POST", pp, .body = "{\"memory\":true}");
	ck_assert_int_eq(r.status, 200);
	int64_t op = s0__json_i64(r.data, "operation_id", -1);
	rc_free(&r);
	r = CALL("POST", pp, .body = "{}");
	ck_assert_int_eq(r.status, 200);
	ck_assert_int_eq(s0__json_i64(r.data, "operation_id", -1), op);
	rc_free(&r);
	hold(false);
	lf_quiesce(&f);
	expect_sandbox(p, "paused", true);
	resume_memory(p);

	/* a filesystem-only pause recorded: a memory pause does not join it */
	hold(true);
	r = CALL("POST", pp, .body = "{\"memory\":false}");
	ck_assert_int_eq(r.status, 200);
	op = s0__json_i64(r.data, "operation_id", -1);
	ck_assert_int_gt(op, 0);
	rc_free(&r);
	r = CALL("POST", pp, .body = "{\"memory\":true}");
	ck_assert_msg(r.status == 409, "%d %s", r.status, r.resp.body.data);
	ck_assert_str_eq(rc_err_code(&r), "conflict");
	rc_free(&r);
	r = CALL("POST", pp);
	ck_assert_int_eq(r.status, 200);
	ck_assert_int_eq(s0__json_i64(r.data, "operation_id", -1), op);
	rc_free(&r);
	hold(false);
	lf_quiesce(&f);
	expect_sandbox(p, "paused", true);
	resume_memory(p);

	/* both kinds at once, many rounds: one operation per round, and every
	 * 409 is a memory pause that came after a filesystem-only one */
	static const char *const mixed[2] = {"{\"memory\":true}", "{}"};
	for (long round = 0; round < s0_test_iterations(6); round++) {
		hold(true);
		pauser q[THREADS];
		pthread_barrier_t go;
		pthread_barrier_init(&go, NULL, THREADS);
		for (int i = 0; i < THREADS; i++) {
			q[i] = (pauser){.path = pp, .body = mixed[i % 2], .go = &go};
			ck_assert_int_eq(pthread_create(&q[i].th, NULL, pause_thread, &q[i]), 0);
		}
		for (int i = 0; i < THREADS; i++)
			pthread_join(q[i].th, NULL);
		pthread_barrier_destroy(&go);
		int64_t one = 0;
		for (int i = 0; i < THREADS; i++) {
			if (q[i].status == 409) {
				ck_assert_msg(i % 2 == 0, "a filesystem-only pause answered 409");
				continue;
			}
			ck_assert_msg(q[i].status == 200, "pause %d: %d %s", i, q[i].status, q[i].code);
			if (!one)
				one = q[i].op_id;
			ck_assert_int_eq(q[i].op_id, one);
		}
		ck_assert_int_gt(one, 0);
		hold(false);
		lf_quiesce(&f);
		expect_sandbox(p, "paused", true);
		resume_memory(p);
	}
	free(pp);
	free(p);
}
END_TEST

typedef struct client_pauser {
	pthread_t th;
	s0_client *c;
	const char *id;
	pthread_barrier_t *go;
	int rc, http;
	int64_t op_id;
} client_pauser;

static void *client_pause_thread(void *arg)
{
	client_pauser *p = arg;
	pthread_barrier_wait(p->go);
	s0_lifecycle_result *lr = NULL;
	s0_error *err = NULL;
	p->rc = s0_sandbox_pause(p->c, p->id, S0_BOOL_TRUE, &lr, &err);
	if (p->rc == S0_OK) {
		p->http = s0_lifecycle_result_http_status(lr);
		cJSON *j = cJSON_Parse(s0_lifecycle_result_json(lr));
		p->op_id = s0__json_i64(j, "operation_id", -1);
		cJSON_Delete(j);
	}
	s0_lifecycle_result_free(lr);
	s0_error_free(err);
	return NULL;
}

/* PTX-07 through the public C client over the in-process transport
 * (s0_client_new_local): THREADS memory pauses per round, one operation. */
START_TEST(ptx07_concurrent_memory_pauses_join_in_process_client)
{
	s0_client *c = NULL;
	s0_error *err = NULL;
	ck_assert_int_eq(s0_client_new_local(f.local, NULL, &c, &err), S0_OK);
	s0_sandbox_info *sb = NULL;
	ck_assert_int_eq(s0_sandbox_claim(c, "default", NULL, NULL, &sb, &err), S0_OK);
	char *id = strdup(s0_sandbox_info_id(sb));
	s0_sandbox_info_free(sb);
	for (long round = 0; round < s0_test_iterations(6); round++) {
		hold(true);
		client_pauser p[THREADS];
		pthread_barrier_t go;
		pthread_barrier_init(&go, NULL, THREADS);
		for (int i = 0; i < THREADS; i++) {
			p[i] = (client_pauser){.c = c, .id = id, .go = &go};
			ck_assert_int_eq(pthread_create(&p[i].th, NULL, client_pause_thread, &p[i]), 0);
		}
		for (int i = 0; i < THREADS; i++)
			pthread_join(p[i].th, NULL);
		pthread_barrier_destroy(&go);
		for (int i = 0; i < THREADS; i++) {
			ck_assert_msg(p[i].rc == S0_OK, "pause %d: %s", i, s0_strerror(p[i].rc));
			ck_assert_int_eq(p[i].http, 200);
			ck_assert_int_gt(p[i].op_id, 0);
			ck_assert_int_eq(p[i].op_id, p[0].op_id);
		}
		hold(false);
		lf_quiesce(&f);
		s0_lifecycle_result *lr = NULL;
		ck_assert_int_eq(s0_sandbox_resume(c, id, S0_BOOL_TRUE, &lr, &err), S0_OK);
		s0_lifecycle_result_free(lr);
		lf_quiesce(&f);
	}
	free(id);
	s0_client_free(c);
}
END_TEST

Suite *s0_pause_join_suite(void)
{
	Suite *s = suite_create("pause_join");
	TCase *tc = tcase_create("pause_join");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, ptx07_concurrent_memory_pauses_join);
	tcase_add_test(tc, ptx07_mixed_pauses_one_operation);
	tcase_add_test(tc, ptx07_concurrent_memory_pauses_join_in_process_client);
	suite_add_tcase(s, tc);
	return s;
}
