/*
 * Contexts API (docs/wire.md §8.1, §8.4 item 1): request validation, the JSON
 * shapes of ContextResponse / ContextExecResponse, error reasons, signals,
 * and the process behind each context. Covers the process side of FS-02
 * (sandbox env_vars reach processes) and FS-04 (a fresh guest has no
 * context, process or variable of the previous one).
 */
#include "rtsuites.h"

#include <stdio.h>
#include <stdlib.h>

static rtfix F;

static void setup(void)
{
	rtfix_open(&F, NULL);
}

static void teardown(void)
{
	rtfix_close(&F);
}

/* Create from JSON text; returns data (asserts success). */
static cJSON *create(const char *json)
{
	cJSON *b = rtfix_json(json), *d = NULL;
	s0_error *e = NULL;
	int rc = s0__ctx_create_json(F.g, b, &d, &e);
	ck_assert_msg(rc == S0_OK, "create %s: %s", json, e ? s0_error_message(e) : "?");
	cJSON_Delete(b);
	return d;
}

/* Create from JSON text expecting an error code and reason. */
static void create_fails(const char *json, int code, const char *reason, const char *msg)
{
	cJSON *b = rtfix_json(json), *d = NULL;
	s0_error *e = NULL;
	ck_assert_int_eq(s0__ctx_create_json(F.g, b, &d, &e), code);
	ck_assert_ptr_null(d);
	ASSERT_STR(s0_error_reason(e), reason);
	if (msg)
		ASSERT_STR(s0_error_message(e), msg);
	s0_error_free(e);
	cJSON_Delete(b);
}

typedef int (*body_op)(s0__guest *, const char *, const cJSON *, cJSON **, s0_error **);

/* Call op(id, body JSON text); returns its code, *reason filled on errors. */
static int call(body_op op, const char *id, const char *json, cJSON **data, char reason[64])
{
	cJSON *b = rtfix_json(json), *d = NULL;
	s0_error *e = NULL;
	int rc = op(F.g, id, b, &d, &e);
	if (reason)
		snprintf(reason, 64, "%s", rc < 0 ? s0_error_reason(e) : "");
	s0_error_free(e);
	cJSON_Delete(b);
	if (data)
		*data = d;
	else
		cJSON_Delete(d);
	return rc;
}

static bool is_true(const cJSON *o, const char *k)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, k));
}

START_TEST(repl_shape)
{
	cJSON *d = create("{\"type\":\"repl\",\"repl\":{\"alias\":\"bash\"}}");
	ck_assert_int_eq(strncmp(rtfix_str(d, "id"), "ctx_", 4), 0);
	ASSERT_STR(rtfix_str(d, "type"), "repl");
	ASSERT_STR(rtfix_str(d, "alias"), "bash");
	ASSERT_STR(rtfix_str(d, "cwd"), "/workspace");
	ck_assert(cJSON_IsObject(cJSON_GetObjectItem(d, "env_vars")));
	ck_assert(is_true(d, "running"));
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(d, "paused")));
	ASSERT_STR(rtfix_str(d, "created_at"), "2023-11-14T22:13:20Z");
	ck_assert_ptr_null(cJSON_GetObjectItem(d, "exit_code"));
	ck_assert_ptr_null(cJSON_GetObjectItem(d, "state"));
	cJSON_Delete(d);
	d = create("{}");
	ASSERT_STR(rtfix_str(d, "type"), "repl");
	ASSERT_STR(rtfix_str(d, "alias"), "sh");
	cJSON_Delete(d);
}
END_TEST

START_TEST(cmd_wait_until_done)
{
	cJSON *d = create("{\"type\":\"cmd\",\"cmd\":{\"command\":[\"echo\",\"hi there\"]},"
	                  "\"wait_until_done\":true}");
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(d, "running")));
	ASSERT_STR(rtfix_str(d, "stdout"), "hi there\n");
	ASSERT_STR(rtfix_str(d, "output_raw"), "hi there\n");
	ck_assert_int_eq(rtfix_int(d, "exit_code"), 0);
	ASSERT_STR(rtfix_str(d, "state"), "stopped");
	cJSON_Delete(d);
	d = create("{\"type\":\"cmd\",\"cmd\":{\"command\":[\"sh\",\"-c\",\"echo o; echo e >&2; "
	           "sleep 3; exit 3\"]},\"wait_until_done\":true}");
	ASSERT_STR(rtfix_str(d, "stdout"), "o\n");
	ASSERT_STR(rtfix_str(d, "stderr"), "e\n");
	ASSERT_STR(rtfix_str(d, "output_raw"), "o\ne\n");
	ck_assert_int_eq(rtfix_int(d, "exit_code"), 3);
	ck_assert_int_eq(s0__guest_vtime_ms(F.g), 3000);
	cJSON_Delete(d);
	d = create("{\"cmd\":{\"command\":[\"nosuch\"]},\"wait_until_done\":true}");
	ck_assert_int_eq(rtfix_int(d, "exit_code"), 127);
	ASSERT_STR(rtfix_str(d, "stderr"), "sh: nosuch: command not found\n");
	cJSON_Delete(d);
}
END_TEST

START_TEST(cmd_async_and_get)
{
	cJSON *d = create("{\"type\":\"cmd\",\"cmd\":{\"command\":[\"sh\",\"-c\",\"echo start; "
	                  "sleep 10; echo end\"]}}");
	char *id = strdup(rtfix_str(d, "id"));
	ck_assert(is_true(d, "running"));
	cJSON_Delete(d);
	s0_error *e = NULL;
	ck_assert_int_eq(s0__ctx_get_json(F.g, id, &d, &e), S0_OK);
	ck_assert(is_true(d, "running"));
	ASSERT_STR(rtfix_str(d, "stdout"), "start\n");
	cJSON_Delete(d);
	ck_assert_int_eq(s0__guest_advance(F.g, 10000, NULL), S0_OK);
	ck_assert_int_eq(s0__ctx_get_json(F.g, id, &d, &e), S0_OK);
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(d, "running")));
	ASSERT_STR(rtfix_str(d, "stdout"), "start\nend\n");
	ASSERT_STR(rtfix_str(d, "state"), "stopped");
	ck_assert_int_eq(rtfix_int(d, "exit_code"), 0);
	cJSON_Delete(d);
	char reason[64];
	ck_assert_int_eq(call(s0__ctx_input_json, id, "{\"data\":\"x\"}", NULL, reason), S0_EGONE);
	ASSERT_STR(reason, "process_finished");
	ck_assert_int_eq(call(s0__ctx_signal_json, id, "{\"signal\":\"TERM\"}", NULL, reason),
	                 S0_ECONFLICT);
	ASSERT_STR(reason, "process_not_running");
	free(id);
}
END_TEST

START_TEST(invalid_requests)
{
	create_fails("{\"type\":\"cmd\",\"repl\":{}}", S0_EINVAL, "invalid_request",
	             "repl config requires type repl");
	create_fails("{\"type\":\"repl\",\"cmd\":{\"command\":[\"ls\"]}}", S0_EINVAL,
	             "invalid_request", "cmd config requires type cmd");
	create_fails("{\"type\":\"cmd\"}", S0_EINVAL, "invalid_request", "cmd.command is required");
	create_fails("{\"type\":\"cmd\",\"cmd\":{\"command\":[]}}", S0_EINVAL, "invalid_request",
	             "cmd.command is required");
	create_fails("{\"type\":\"cmd\",\"cmd\":{\"command\":[1]}}", S0_EINVAL, "invalid_request",
	             NULL);
	create_fails("{\"type\":\"shell\"}", S0_EINVAL, "invalid_request", NULL);
	create_fails("{\"ttl_sec\":-1}", S0_EINVAL, "invalid_request",
	             "idle_timeout_sec and ttl_sec must be >= 0");
	create_fails("{\"idle_timeout_sec\":-5}", S0_EINVAL, "invalid_request",
	             "idle_timeout_sec and ttl_sec must be >= 0");
	create_fails("{\"env_vars\":{\"A\":1}}", S0_EINVAL, "invalid_request", NULL);
	create_fails("{\"repl\":{\"alias\":\"python\",\"repl_config\":{\"name\":\"node\"}}}",
	             S0_EINVAL, "invalid_request", "repl alias and repl_config.name must match");
	create_fails("{\"wait_until_done\":\"yes\"}", S0_EINVAL, "invalid_request", NULL);
	create_fails("{\"pty_size\":{\"rows\":0,\"cols\":80}}", S0_EINVAL, "invalid_request", NULL);
	create_fails("[1]", S0_EINVAL, "invalid_request", NULL);
}
END_TEST

/* A body op refused with invalid_request and exactly msg. */
static void refused(body_op op, const char *id, const char *json, const char *msg)
{
	cJSON *b = rtfix_json(json), *d = NULL;
	s0_error *e = NULL;
	ck_assert_msg(op(F.g, id, b, &d, &e) == S0_EINVAL, "accepted: %s", json);
	ck_assert_ptr_null(d);
	ASSERT_STR(s0_error_reason(e), "invalid_request");
	ASSERT_STR(s0_error_message(e), msg);
	s0_error_free(e);
	cJSON_Delete(b);
}

/* A misspelt member is refused naming its path (the SDK's wire keys pass). */
START_TEST(unknown_fields_refused)
{
	create_fails("{\"type\":\"repl\",\"tll_sec\":5}", S0_EINVAL, "invalid_request",
	             "unknown field \"tll_sec\"");
	create_fails("{\"type\":\"cmd\",\"cmd\":{\"command\":[\"ls\"],\"args\":[]}}", S0_EINVAL,
	             "invalid_request", "unknown field \"cmd.args\"");
	create_fails("{\"repl\":{\"alais\":\"sh\"}}", S0_EINVAL, "invalid_request",
	             "unknown field \"repl.alais\"");
	create_fails("{\"pty_size\":{\"rows\":24,\"colums\":80}}", S0_EINVAL, "invalid_request",
	             "unknown field \"pty_size.colums\"");
	create_fails("{\"repl\":{\"repl_config\":{\"name\":\"sh\",\"promt\":{}}}}", S0_EINVAL,
	             "invalid_request", "unknown field \"repl.repl_config.promt\"");
	create_fails("{\"repl\":{\"repl_config\":{\"name\":\"sh\",\"ready\":{\"mod\":\"x\"}}}}",
	             S0_EINVAL, "invalid_request", "unknown field \"repl.repl_config.ready.mod\"");
	create_fails("{\"repl\":{\"repl_config\":{\"name\":\"sh\",\"candidates\":[{\"name\":\"sh\"},"
	             "{\"nam\":\"x\"}]}}}",
	             S0_EINVAL, "invalid_request",
	             "unknown field \"repl.repl_config.candidates[1].nam\"");
	/* the messages of the same report */
	create_fails("{\"ttl_sec\":100000000000000000000}", S0_EINVAL, "invalid_request",
	             "ttl_sec must be an integer in 0..2147483647");
	create_fails("{\"idle_timeout_sec\":1.5}", S0_EINVAL, "invalid_request",
	             "idle_timeout_sec must be an integer in 0..2147483647");
	create_fails("{\"type\":\"cmd\",\"cmd\":{\"command\":\"ls\"}}", S0_EINVAL, "invalid_request",
	             "cmd.command must be an array of strings");
	/* every wire key of CreateContextRequestToJSON (and the models it nests) */
	cJSON *d = create("{\"type\":\"repl\",\"repl\":{\"alias\":\"sh\",\"input\":\"X=1\","
	                  "\"repl_config\":{\"name\":\"sh\",\"display_name\":\"Shell\",\"description\":"
	                  "\"d\",\"candidates\":[{\"name\":\"sh\",\"args\":[]}],\"env\":[{\"name\":\"A\","
	                  "\"value\":\"1\",\"value_from\":\"x\"}],\"default_term\":\"xterm\",\"prompt\":"
	                  "{\"custom_prompt\":\"$ \"},\"ready\":{\"mode\":\"m\",\"token\":\"t\","
	                  "\"startup_delay_ms\":0}}},\"wait_until_done\":true,\"cwd\":\"/tmp\","
	                  "\"env_vars\":{\"B\":\"2\"},\"idle_timeout_sec\":0,\"ttl_sec\":0}");
	char *id = strdup(rtfix_str(d, "id"));
	cJSON_Delete(d);
	d = create("{\"type\":\"cmd\",\"cmd\":{\"command\":[\"sleep\",\"100\"]},"
	           "\"pty_size\":{\"rows\":24,\"cols\":80}}");
	char *cmd = strdup(rtfix_str(d, "id"));
	cJSON_Delete(d);
	refused(s0__ctx_input_json, id, "{\"dat\":\"echo hi\\n\"}", "unknown field \"dat\"");
	refused(s0__ctx_exec_json, id, "{\"data\":\"echo hi\",\"timeout\":5}",
	        "unknown field \"timeout\"");
	refused(s0__ctx_signal_json, cmd, "{\"signal\":\"TERM\",\"pid\":1}", "unknown field \"pid\"");
	refused(s0__ctx_resize_json, id, "{\"rows\":30,\"cols\":100,\"width\":1}",
	        "unknown field \"width\"");
	/* nothing was done: the REPL still has X=1, the cmd still runs */
	char reason[64];
	ck_assert_int_eq(call(s0__ctx_exec_json, id, "{\"data\":\"echo $X\"}", &d, reason), S0_OK);
	ASSERT_STR(rtfix_str(d, "stdout"), "1\n");
	cJSON_Delete(d);
	ck_assert_int_eq(s0__ctx_get_json(F.g, cmd, &d, NULL), S0_OK);
	ck_assert(is_true(d, "running"));
	cJSON_Delete(d);
	free(id);
	free(cmd);
}
END_TEST

START_TEST(list_get_delete)
{
	char *a = rtfix_repl(&F);
	cJSON *d = create("{\"type\":\"cmd\",\"cmd\":{\"command\":[\"true\"]}}");
	char *b = strdup(rtfix_str(d, "id"));
	cJSON_Delete(d);
	s0_error *e = NULL;
	ck_assert_int_eq(s0__ctx_list_json(F.g, &d, &e), S0_OK);
	cJSON *arr = cJSON_GetObjectItem(d, "contexts");
	ck_assert_int_eq(cJSON_GetArraySize(arr), 2);
	ASSERT_STR(rtfix_str(cJSON_GetArrayItem(arr, 0), "id"), a);
	ASSERT_STR(rtfix_str(cJSON_GetArrayItem(arr, 1), "id"), b);
	cJSON_Delete(d);
	int32_t pid;
	ck_assert_int_eq(s0__ctx_pid(F.g, a, &pid, NULL), S0_OK);
	ck_assert_int_eq(s0__ctx_delete_json(F.g, a, &d, &e), S0_OK);
	ck_assert(is_true(d, "deleted"));
	cJSON_Delete(d);
	ck_assert_int_eq(s0__ctx_get_json(F.g, a, &d, &e), S0_ENOTFOUND);
	ASSERT_STR(s0_error_reason(e), "context_not_found");
	s0_error_free(e);
	e = NULL;
	s0__proc_info pi;
	ck_assert_int_eq(s0__guest_proc_get(F.g, pid, &pi, NULL), S0_ENOTFOUND);
	ck_assert_int_eq(s0__ctx_delete_json(F.g, a, &d, NULL), S0_ENOTFOUND);
	ck_assert_int_eq(s0__ctx_list_json(F.g, &d, &e), S0_OK);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "contexts")), 1);
	cJSON_Delete(d);
	free(a);
	free(b);
}
END_TEST

START_TEST(input_and_exec)
{
	char *id = rtfix_repl(&F);
	cJSON *d;
	char reason[64];
	ck_assert_int_eq(call(s0__ctx_input_json, id, "{\"data\":\"X=7; echo $X\\n\"}", &d, NULL),
	                 S0_OK);
	ck_assert(is_true(d, "written"));
	cJSON_Delete(d);
	ck_assert_int_eq(s0__ctx_get_json(F.g, id, &d, NULL), S0_OK);
	ASSERT_STR(rtfix_str(d, "output_raw"), "7\n");
	cJSON_Delete(d);
	ck_assert_int_eq(call(s0__ctx_input_json, id, "{\"data\":\"echo par\"}", NULL, NULL), S0_OK);
	ck_assert_int_eq(call(s0__ctx_input_json, id, "{\"data\":\"tial\\n\"}", NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__ctx_get_json(F.g, id, &d, NULL), S0_OK);
	ASSERT_STR(rtfix_str(d, "output_raw"), "7\npartial\n");
	cJSON_Delete(d);
	ck_assert_int_eq(call(s0__ctx_input_json, id, "{\"data\":\"\"}", NULL, reason), S0_EINVAL);
	ASSERT_STR(reason, "invalid_request");
	ck_assert_int_eq(call(s0__ctx_exec_json, id, "{}", NULL, reason), S0_EINVAL);
	d = rtfix_exec(&F, id, "echo $X");
	ASSERT_STR(rtfix_str(d, "output_raw"), "7\n");
	ASSERT_STR(rtfix_str(d, "stdout"), "7\n");
	ASSERT_STR(rtfix_str(d, "stderr"), "");
	cJSON_Delete(d);
	ck_assert_int_eq(call(s0__ctx_exec_json, "ctx_nope", "{\"data\":\"x\"}", NULL, reason),
	                 S0_ENOTFOUND);
	ASSERT_STR(reason, "context_not_found");
	char big[70000];
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = 0;
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "data", big);
	s0_error *e = NULL;
	ck_assert_int_eq(s0__ctx_input_json(F.g, id, b, &d, &e), S0_ECONFLICT);
	ASSERT_STR(s0_error_reason(e), "input_buffer_full");
	s0_error_free(e);
	cJSON_Delete(b);
	free(id);
}
END_TEST

START_TEST(signals)
{
	char *id = rtfix_repl(&F);
	char reason[64];
	cJSON *d;
	ck_assert_int_eq(call(s0__ctx_signal_json, id, "{\"signal\":\"INT\"}", &d, NULL), S0_OK);
	ck_assert(is_true(d, "signaled"));
	cJSON_Delete(d);
	ck_assert_int_eq(call(s0__ctx_signal_json, id, "{\"signal\":\"sigstop\"}", NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__ctx_get_json(F.g, id, &d, NULL), S0_OK);
	ck_assert(is_true(d, "paused") && is_true(d, "running"));
	cJSON_Delete(d);
	ck_assert_int_eq(call(s0__ctx_exec_json, id, "{\"data\":\"echo\"}", NULL, reason),
	                 S0_ECONFLICT);
	ASSERT_STR(reason, "process_not_running");
	ck_assert_int_eq(call(s0__ctx_signal_json, id, "{\"signal\":\"CONT\"}", NULL, NULL), S0_OK);
	ck_assert_int_eq(call(s0__ctx_signal_json, id, "{\"signal\":\"BOGUS\"}", NULL, reason),
	                 S0_EINVAL);
	ck_assert_int_eq(call(s0__ctx_signal_json, id, "{}", NULL, reason), S0_EINVAL);
	ck_assert_int_eq(call(s0__ctx_signal_json, id, "{\"signal\":\"0\"}", NULL, reason), S0_EINVAL);
	ck_assert_int_eq(call(s0__ctx_signal_json, id, "{\"signal\":\"15\"}", NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__ctx_get_json(F.g, id, &d, NULL), S0_OK);
	ASSERT_STR(rtfix_str(d, "state"), "stopped");
	ck_assert_int_eq(rtfix_int(d, "exit_code"), 143);
	cJSON_Delete(d);
	d = create("{\"type\":\"cmd\",\"cmd\":{\"command\":[\"sleep\",\"50\"]}}");
	char *c = strdup(rtfix_str(d, "id"));
	cJSON_Delete(d);
	ck_assert_int_eq(call(s0__ctx_signal_json, c, "{\"signal\":\"KILL\"}", NULL, NULL), S0_OK);
	ck_assert_int_eq(s0__ctx_get_json(F.g, c, &d, NULL), S0_OK);
	ASSERT_STR(rtfix_str(d, "state"), "killed");
	ck_assert_int_eq(rtfix_int(d, "exit_code"), 137);
	cJSON_Delete(d);
	int sig;
	ck_assert_int_eq(s0__signal_parse("SigWinch", &sig, NULL), S0_OK);
	ck_assert_int_eq(sig, 28);
	ck_assert_int_eq(s0__signal_parse("65", &sig, NULL), S0_EINVAL);
	free(c);
	free(id);
}
END_TEST

START_TEST(resize_restart)
{
	char *id = rtfix_repl(&F);
	cJSON *d;
	char reason[64];
	ck_assert_int_eq(call(s0__ctx_resize_json, id, "{\"rows\":40,\"cols\":100}", &d, NULL), S0_OK);
	ck_assert(is_true(d, "resized"));
	cJSON_Delete(d);
	ck_assert_int_eq(call(s0__ctx_resize_json, id, "{\"rows\":0,\"cols\":100}", NULL, reason),
	                 S0_EINVAL);
	d = create("{\"type\":\"cmd\",\"cmd\":{\"command\":[\"sleep\",\"5\"]}}");
	char *c = strdup(rtfix_str(d, "id"));
	cJSON_Delete(d);
	ck_assert_int_eq(call(s0__ctx_resize_json, c, "{\"rows\":4,\"cols\":4}", NULL, reason),
	                 S0_ECONFLICT);
	ASSERT_STR(reason, "pty_unavailable");
	int32_t p0, p1;
	free(rtfix_out(&F, id, "V=1"));
	ck_assert_int_eq(s0__ctx_pid(F.g, id, &p0, NULL), S0_OK);
	ck_assert_int_eq(s0__ctx_restart_json(F.g, id, &d, NULL), S0_OK);
	ck_assert(is_true(d, "running"));
	cJSON_Delete(d);
	ck_assert_int_eq(s0__ctx_pid(F.g, id, &p1, NULL), S0_OK);
	ck_assert_int_ne(p0, p1);
	char *o = rtfix_out(&F, id, "echo [$V]");
	ASSERT_STR(o, "[]\n");
	free(o);
	free(c);
	free(id);
}
END_TEST

START_TEST(env_and_cwd)
{
	teardown();
	cJSON *env = rtfix_json("{\"SANDBOX\":\"yes\",\"B\":\"sandbox\"}");
	s0__guest_opts o = {.env_vars = env};
	rtfix_open(&F, &o);
	cJSON_Delete(env);
	cJSON *d = create("{\"env_vars\":{\"B\":\"ctx\"},\"cwd\":\"proj\"}");
	ASSERT_STR(rtfix_str(d, "cwd"), "/workspace/proj");
	ASSERT_STR(rtfix_str(cJSON_GetObjectItem(d, "env_vars"), "B"), "ctx");
	char *id = strdup(rtfix_str(d, "id"));
	cJSON_Delete(d);
	char *out = rtfix_out(&F, id, "env; pwd");
	ASSERT_STR(out, "B=ctx\nPWD=/workspace/proj\nSANDBOX=yes\n/workspace/proj\n");
	free(out);
	free(id);
	d = create("{\"type\":\"repl\",\"repl\":{\"input\":\"echo first\"},\"wait_until_done\":true}");
	ASSERT_STR(rtfix_str(d, "output_raw"), "first\n");
	cJSON_Delete(d);
}
END_TEST

START_TEST(fresh_guest_has_nothing)
{
	/* FS-04's runtime half: a new generation's guest knows no context,
	 * process or variable of the old one; FS-02: env_vars still apply. */
	char *id = rtfix_repl(&F);
	free(rtfix_out(&F, id, "V=1; sleep 100 > /tmp/held &"));
	s0__guest *g2;
	cJSON *env = rtfix_json("{\"A\":\"1\"}");
	s0__guest_opts o = {.clock = &F.clock, .env_vars = env};
	ck_assert_int_eq(s0__guest_new(&o, &g2, NULL), S0_OK);
	cJSON_Delete(env);
	rtfix_set_guest(&F, g2);
	cJSON *d;
	ck_assert_int_eq(s0__ctx_get_json(F.g, id, &d, NULL), S0_ENOTFOUND);
	cJSON *insp = s0__guest_inspect(F.g);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(insp, "processes")), 1);
	cJSON_Delete(insp);
	char *id2 = rtfix_repl(&F);
	char *out = rtfix_out(&F, id2, "echo [$V]; env");
	ASSERT_STR(out, "[]\nA=1\nPWD=/workspace\n");
	free(out);
	free(id2);
	free(id);
}
END_TEST

/* Advance the guest's virtual time by ms (asserts). */
static void advance(int64_t ms)
{
	ck_assert_int_eq(s0__guest_advance(F.g, ms, NULL), S0_OK);
}

/* Whether context id still runs; once ended, its state and exit code must be want_*. */
static bool ctx_running(const char *id, const char *want_state, int want_exit)
{
	cJSON *d = NULL;
	ck_assert_int_eq(s0__ctx_get_json(F.g, id, &d, NULL), S0_OK);
	bool running = is_true(d, "running");
	if (!running) {
		ASSERT_STR(rtfix_str(d, "state"), want_state);
		ck_assert_int_eq(rtfix_int(d, "exit_code"), want_exit);
	}
	cJSON_Delete(d);
	return running;
}

/* Create from JSON text; returns the context id (free()). */
static char *create_id(const char *json)
{
	cJSON *d = create(json);
	char *id = strdup(rtfix_str(d, "id"));
	cJSON_Delete(d);
	return id;
}

/* Context id still runs ms - 1 virtual ms from now and is killed (137) at ms. */
static void killed_in(const char *id, int64_t ms)
{
	advance(ms - 1);
	ck_assert(ctx_running(id, NULL, 0));
	advance(1);
	ck_assert(!ctx_running(id, "killed", 137));
}

/* A context whose deadline just fell: killed (137); exec and input 410, signal 409. */
static void assert_expired(const char *id)
{
	char reason[64];
	ck_assert(!ctx_running(id, "killed", 137));
	ck_assert_int_eq(call(s0__ctx_exec_json, id, "{\"data\":\"echo\"}", NULL, reason), S0_EGONE);
	ASSERT_STR(reason, "process_finished");
	ck_assert_int_eq(call(s0__ctx_input_json, id, "{\"data\":\"x\\n\"}", NULL, reason), S0_EGONE);
	ASSERT_STR(reason, "process_finished");
	ck_assert_int_eq(call(s0__ctx_signal_json, id, "{\"signal\":\"TERM\"}", NULL, reason),
	                 S0_ECONFLICT);
	ASSERT_STR(reason, "process_not_running");
}

/* ttl_sec ends the process (KILL) exactly at start + ttl_sec, for REPL and cmd. */
START_TEST(ttl_fires_at_deadline)
{
	char *r = create_id("{\"type\":\"repl\",\"ttl_sec\":5}");
	advance(1000);
	char *c = create_id("{\"type\":\"cmd\",\"cmd\":{\"command\":[\"sleep\",\"100\"]},\"ttl_sec\":2}");
	free(rtfix_out(&F, r, "echo busy")); /* activity does not extend a lifetime */
	killed_in(c, 2000);
	assert_expired(c);
	killed_in(r, 2000);
	assert_expired(r);
	ck_assert_int_eq(s0__guest_vtime_ms(F.g), 5000);
	/* a restart is a fresh process with a fresh lifetime */
	cJSON *d = NULL;
	ck_assert_int_eq(s0__ctx_restart_json(F.g, r, &d, NULL), S0_OK);
	cJSON_Delete(d);
	killed_in(r, 5000);
	free(r);
	free(c);
}
END_TEST

/* A foreground exec or wait_until_done run is cut at the lifetime. */
START_TEST(ttl_cuts_foreground_runs)
{
	char *r = create_id("{\"type\":\"repl\",\"ttl_sec\":2}");
	cJSON *d = rtfix_exec(&F, r, "echo a; sleep 10; echo b");
	ASSERT_STR(rtfix_str(d, "stdout"), "a\n");
	ASSERT_STR(rtfix_str(d, "state"), "killed");
	ck_assert_int_eq(rtfix_int(d, "exit_code"), 137);
	ck_assert_int_eq(s0__guest_vtime_ms(F.g), 2000);
	cJSON_Delete(d);
	d = create("{\"type\":\"cmd\",\"cmd\":{\"command\":[\"sh\",\"-c\",\"sleep 60; echo late\"]},"
	           "\"wait_until_done\":true,\"ttl_sec\":3}");
	ASSERT_STR(rtfix_str(d, "state"), "killed");
	ck_assert_int_eq(rtfix_int(d, "exit_code"), 137);
	ck_assert_ptr_null(cJSON_GetObjectItem(d, "stdout"));
	ck_assert_int_eq(s0__guest_vtime_ms(F.g), 5000);
	cJSON_Delete(d);
	free(r);
}
END_TEST

/* idle_timeout_sec counts from the last exec, input, signal, resize or output. */
START_TEST(idle_pushed_by_activity)
{
	char *r = create_id("{\"type\":\"repl\",\"idle_timeout_sec\":3}");
	advance(2000);
	free(rtfix_out(&F, r, "echo hi")); /* exec at 2000 */
	advance(2000);
	ck_assert_int_eq(call(s0__ctx_input_json, r, "{\"data\":\"x=1\\n\"}", NULL, NULL), S0_OK);
	advance(2000);
	ck_assert_int_eq(call(s0__ctx_signal_json, r, "{\"signal\":\"WINCH\"}", NULL, NULL), S0_OK);
	advance(2000);
	ck_assert_int_eq(call(s0__ctx_resize_json, r, "{\"rows\":30,\"cols\":90}", NULL, NULL), S0_OK);
	advance(2999); /* 8000 + 2999 */
	ck_assert(ctx_running(r, NULL, 0));
	/* a long exec is never idle; its end is activity */
	cJSON *d = rtfix_exec(&F, r, "sleep 20");
	ck_assert(!cJSON_GetObjectItem(d, "state"));
	cJSON_Delete(d);
	killed_in(r, 3000);
	assert_expired(r);
	ck_assert_int_eq(s0__guest_vtime_ms(F.g), 8000 + 2999 + 20000 + 3000);
	/* a cmd context's output is activity */
	char *c = create_id("{\"type\":\"cmd\",\"cmd\":{\"command\":[\"sh\",\"-c\",\"sleep 2; echo a; "
	                    "sleep 100\"]},\"idle_timeout_sec\":3}");
	killed_in(c, 5000);
	free(c);
	free(r);
}
END_TEST

/* 0 means no deadline. */
START_TEST(zero_deadlines_disable)
{
	char *r = create_id("{\"type\":\"repl\",\"ttl_sec\":0,\"idle_timeout_sec\":0}");
	char *c = create_id("{\"type\":\"cmd\",\"cmd\":{\"command\":[\"sleep\",\"100000\"]}}");
	advance(99999 * 1000);
	ck_assert(ctx_running(r, NULL, 0));
	ck_assert(ctx_running(c, NULL, 0));
	free(r);
	free(c);
}
END_TEST

/* A memory checkpoint carries the deadlines: they fire at the same virtual time. */
START_TEST(deadlines_survive_checkpoint)
{
	char *r = create_id("{\"type\":\"repl\",\"ttl_sec\":5}");
	char *i = create_id("{\"type\":\"repl\",\"idle_timeout_sec\":3}");
	advance(1000);
	free(rtfix_out(&F, i, "echo hi")); /* idle deadline 4000 */
	rtfix_roundtrip(&F);
	killed_in(i, 3000);
	assert_expired(i);
	advance(999);
	rtfix_roundtrip(&F); /* an expired process stays expired */
	ck_assert(!ctx_running(i, "killed", 137));
	killed_in(r, 1);
	assert_expired(r);
	free(r);
	free(i);
}
END_TEST

/* Version 1 (no deadlines) and 2 (no stop grace, no ignored signals) state
 * blobs still restore; a damaged version does not. */
START_TEST(v1_state_blob_restores)
{
	void *blob = NULL;
	size_t len = 0;
	/* procd only: its 26 deadline bytes (v2) and 24 grace/trap bytes (v3)
	 * precede the last 12 */
	s0__guest_lock(F.g);
	ck_assert_int_eq(s0__guest_state_locked(F.g, &blob, &len, NULL, NULL), S0_OK);
	s0__guest_unlock(F.g);
	ck_assert(!memcmp(blob, "S0GST003", 8));
	s0__guest_opts o = {.clock = &F.clock};
	s0__guest *g = NULL;
	char *b = blob;
	for (int v = 2; v >= 1; v--) {
		size_t cut = v == 2 ? 24 : 26;
		b[7] = (char)('0' + v); /* the longer layout under the older magic */
		ck_assert_int_eq(s0__guest_restore(blob, len, &o, NULL, 0, NULL, &g, NULL),
		                 S0_ECORRUPT);
		memmove(b + len - 12 - cut, b + len - 12, 12);
		len -= cut;
		ck_assert_int_eq(s0__guest_restore(blob, len, &o, NULL, 0, NULL, &g, NULL), S0_OK);
		rtfix_set_guest(&F, g);
		char *r = rtfix_repl(&F);
		char *o2 = rtfix_out(&F, r, "echo ok");
		ASSERT_STR(o2, "ok\n");
		free(o2);
		free(r);
	}
	free(blob);
}
END_TEST

Suite *rt_contexts_suite(void)
{
	Suite *s = suite_create("runtime-contexts");
	TCase *t = tcase_create("contexts");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, repl_shape);
	tcase_add_test(t, cmd_wait_until_done);
	tcase_add_test(t, cmd_async_and_get);
	tcase_add_test(t, invalid_requests);
	tcase_add_test(t, unknown_fields_refused);
	tcase_add_test(t, list_get_delete);
	tcase_add_test(t, input_and_exec);
	tcase_add_test(t, signals);
	tcase_add_test(t, resize_restart);
	tcase_add_test(t, env_and_cwd);
	tcase_add_test(t, fresh_guest_has_nothing);
	tcase_add_test(t, ttl_fires_at_deadline);
	tcase_add_test(t, ttl_cuts_foreground_runs);
	tcase_add_test(t, idle_pushed_by_activity);
	tcase_add_test(t, zero_deadlines_disable);
	tcase_add_test(t, deadlines_survive_checkpoint);
	tcase_add_test(t, v1_state_blob_restores);
	suite_add_tcase(s, t);
	return s;
}
