/*
 * The in-process streams (sandbox0/streams.h) on a real backend: a context's
 * output by source in order, input echo with done per request, a signal's
 * terminal done and close 1000; a session attach replayed from a cursor; a
 * file watch with its events, ended by a pause (1001) and reopened after it
 * (the open wakes the sandbox); bad options and bad messages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "client_steps.h"
#include "common/internal.h"
#include "local_fixture.h"
#include "sandbox0/sandbox0.h"
#include "server_test.h"

static lf f;
static s0_client *c;

static void setup(void)
{
	lf_open(&f, false);
	ck_assert_int_eq(s0_client_new_local(f.local, NULL, &c, NULL), S0_OK);
}

static void teardown(void)
{
	s0_client_free(c);
	c = NULL;
	lf_close(&f);
}

static s0_stream *open_stream(int kind, const char *sb, const char *id, int64_t after)
{
	s0_stream_options o = S0_STREAM_OPTIONS_INIT;
	o.kind = kind;
	o.sandbox_id = sb;
	o.id = id;
	o.after = after;
	s0_stream *st = NULL;
	s0_error *err = NULL;
	int rc = s0_local_stream_open(f.local, &o, &st, &err);
	ck_assert_msg(rc == S0_OK, "open: %s", err ? s0_error_message(err) : "?");
	return st;
}

static void send_text(s0_stream *st, const char *json)
{
	ck_assert_int_eq(s0_stream_send(st, json, strlen(json), NULL), S0_OK);
}

START_TEST(context_output_order_input_echo_and_signal)
{
	char *sb = cs_claim(c, "default");
	char *cmd = cs_context(c, sb, "{\"type\":\"cmd\",\"cmd\":{\"command\":[\"sh\",\"-c\","
	                              "\"echo one; echo two >&2; echo three\"]}}");
	s0_stream *st = open_stream(S0_STREAM_CONTEXT, sb, cmd, 0);
	cJSON *m = cs_next(st);
	ck_assert_str_eq(cs_str(m, "type"), "output");
	ck_assert_str_eq(cs_str(m, "source"), "stdout");
	ck_assert_str_eq(cs_str(m, "data"), "one\nthree\n");
	cJSON_Delete(m);
	m = cs_next(st);
	ck_assert_str_eq(cs_str(m, "source"), "stderr");
	ck_assert_str_eq(cs_str(m, "data"), "two\n");
	cJSON_Delete(m);
	m = cs_next(st);
	ck_assert_str_eq(cs_str(m, "type"), "done");
	ck_assert_int_eq(cJSON_GetObjectItem(m, "exit_code")->valueint, 0);
	ck_assert_str_eq(cs_str(m, "state"), "stopped");
	cJSON_Delete(m);
	char *x = NULL;
	ck_assert_int_eq(s0_stream_recv(st, 0, &x, NULL, NULL), S0_ITEROVER);
	const char *why = NULL;
	ck_assert_int_eq(s0_stream_close_code(st, &why), 1000);
	ck_assert_str_eq(why, "process exited");
	s0_stream_free(st);

	char *repl = cs_context(c, sb, "{\"type\":\"repl\"}");
	st = open_stream(S0_STREAM_CONTEXT, sb, repl, 0);
	send_text(st, "{\"type\":\"input\",\"data\":\"echo hello\\n\",\"request_id\":\"r1\"}");
	send_text(st, "{\"type\":\"input\",\"data\":\"echo world\\n\",\"requestId\":\"r2\"}");
	const char *want[][2] = {{"output", "hello\n"}, {"done", "r1"},
	                         {"output", "world\n"}, {"done", "r2"}};
	for (int i = 0; i < 4; i++) {
		m = cs_next(st);
		ck_assert_str_eq(cs_str(m, "type"), want[i][0]);
		ck_assert_str_eq(cs_str(m, i % 2 ? "request_id" : "data"), want[i][1]);
		cJSON_Delete(m);
	}
	send_text(st, "{\"type\":\"signal\",\"signal\":\"KILL\"}");
	m = cs_next(st);
	ck_assert_str_eq(cs_str(m, "type"), "done");
	ck_assert_int_eq(cJSON_GetObjectItem(m, "exit_code")->valueint, 137);
	ck_assert_str_eq(cs_str(m, "state"), "killed");
	cJSON_Delete(m);
	ck_assert_int_eq(s0_stream_send(st, "{}", 2, NULL), S0_EGONE);
	s0_stream_free(st);
	free(repl);
	free(cmd);
	free(sb);
}
END_TEST

/* An input whose output is more than one queue's worth (64 KiB): all of it
 * goes out before the input's done (docs/wire.md §8.2 "after an input, the
 * output it made and then done"). */
START_TEST(context_input_done_after_all_its_output)
{
	char *sb = cs_claim(c, "default");
	size_t len = 200000;
	char *big = malloc(len);
	for (size_t i = 0; i < len; i++)
		big[i] = (char)('a' + i % 26);
	big[len - 1] = '\n';
	ck_assert_int_eq(s0_files_write(c, sb, "/big.txt", big, len, NULL), S0_OK);
	char *repl = cs_context(c, sb, "{\"type\":\"repl\"}");
	s0_stream *st = open_stream(S0_STREAM_CONTEXT, sb, repl, 0);
	send_text(st, "{\"type\":\"input\",\"data\":\"cat /big.txt\\n\",\"request_id\":\"r1\"}");
	size_t got = 0;
	for (;;) {
		cJSON *m = cs_next(st);
		if (!strcmp(cs_str(m, "type"), "done")) {
			ck_assert_str_eq(cs_str(m, "request_id"), "r1");
			cJSON_Delete(m);
			break;
		}
		ck_assert_str_eq(cs_str(m, "type"), "output");
		const char *d = cs_str(m, "data");
		ck_assert_int_eq(memcmp(d, big + got, strlen(d)), 0);
		got += strlen(d);
		cJSON_Delete(m);
	}
	ck_assert_uint_eq(got, len);
	s0_stream_free(st);
	free(big);
	free(repl);
	free(sb);
}
END_TEST

START_TEST(session_attach_replays_from_a_cursor)
{
	char *sb = cs_claim(c, "default");
	char *json = NULL;
	int status = 0;
	ck_assert_int_eq(s0_runtime_call(c, "POST", sb, "/sessions",
	                                 "{\"command\":[\"sh\",\"-c\",\"echo a; echo b; echo c\"]}",
	                                 NULL, &status, &json, NULL),
	                 S0_OK);
	cJSON *ses = cJSON_Parse(json);
	char *sid = strdup(cs_str(ses, "id"));
	cJSON_Delete(ses);
	s0_free(json);
	/* everything from the start, then again after the second event */
	s0_stream *all = open_stream(S0_STREAM_SESSION, sb, sid, 0);
	int64_t seqs[16];
	int n = 0;
	char *m = NULL;
	while (n < 16 && s0_stream_recv(all, 300, &m, NULL, NULL) == S0_OK) {
		cJSON *o = cJSON_Parse(m);
		s0_free(m);
		ck_assert_str_eq(cs_str(o, "type"), "event");
		seqs[n++] = (int64_t)cJSON_GetObjectItem(cJSON_GetObjectItem(o, "event"), "seq")
		                    ->valuedouble;
		cJSON_Delete(o);
	}
	ck_assert_int_ge(n, 3);
	for (int i = 1; i < n; i++)
		ck_assert_int_gt(seqs[i], seqs[i - 1]);
	s0_stream_free(all);
	s0_stream *tail = open_stream(S0_STREAM_SESSION, sb, sid, seqs[1]);
	for (int i = 2; i < n; i++) {
		cJSON *o = cs_next(tail);
		ck_assert_int_eq((int64_t)cJSON_GetObjectItem(cJSON_GetObjectItem(o, "event"), "seq")
		                         ->valuedouble,
		                 seqs[i]);
		cJSON_Delete(o);
	}
	ck_assert_int_eq(s0_stream_recv(tail, 0, &m, NULL, NULL), S0_ETIMEDOUT);
	send_text(tail, "{\"type\":\"nope\",\"request_id\":\"q\"}");
	cJSON *e = cs_next(tail);
	ck_assert_str_eq(cs_str(e, "type"), "error");
	ck_assert_str_eq(cs_str(e, "request_id"), "q");
	cJSON_Delete(e);
	s0_stream_free(tail);
	free(sid);
	free(sb);
}
END_TEST

START_TEST(file_watch_events_pause_and_reopen)
{
	char *sb = cs_claim(c, "default");
	ck_assert_int_eq(s0_files_mkdir(c, sb, "/workspace/d", false, NULL), S0_OK);
	s0_stream *st = open_stream(S0_STREAM_FILES_WATCH, sb, NULL, 0);
	send_text(st, "{\"action\":\"subscribe\",\"path\":\"/workspace/d\"}");
	cJSON *m = cs_next(st);
	ck_assert_str_eq(cs_str(m, "type"), "subscribed");
	ck_assert_str_eq(cs_str(m, "path"), "/workspace/d");
	char *wid = strdup(cs_str(m, "watch_id"));
	cJSON_Delete(m);
	ck_assert_int_eq(s0_files_write(c, sb, "/workspace/d/f", "1", 1, NULL), S0_OK);
	ck_assert_int_eq(s0_files_write(c, sb, "/workspace/other", "1", 1, NULL), S0_OK);
	ck_assert_int_eq(s0_files_delete(c, sb, "/workspace/d/f", NULL), S0_OK);
	const char *want[] = {"create", "write", "remove"};
	for (int i = 0; i < 3; i++) {
		m = cs_next(st);
		ck_assert_str_eq(cs_str(m, "event"), want[i]);
		ck_assert_str_eq(cs_str(m, "path"), "/workspace/d/f");
		ck_assert_str_eq(cs_str(m, "watch_id"), wid);
		cJSON_Delete(m);
	}
	ck_assert_int_eq(s0_sandbox_pause_and_wait(c, sb, NULL, NULL, NULL), S0_OK);
	char *x = NULL;
	ck_assert_int_eq(s0_stream_recv(st, 5000, &x, NULL, NULL), S0_ITEROVER);
	const char *why = NULL;
	ck_assert_int_eq(s0_stream_close_code(st, &why), 1001);
	ck_assert_str_eq(why, "sandbox paused");
	s0_stream_free(st);
	/* the open wakes it (auto_resume); the tree is there, subscribe again */
	st = open_stream(S0_STREAM_FILES_WATCH, sb, NULL, 0);
	send_text(st, "{\"action\":\"subscribe\",\"path\":\"/workspace/d\",\"recursive\":true}");
	m = cs_next(st);
	ck_assert_str_eq(cs_str(m, "type"), "subscribed");
	cJSON_Delete(m);
	send_text(st, "{\"action\":\"subscribe\",\"path\":\"/workspace/none\"}");
	m = cs_next(st);
	ck_assert_str_eq(cs_str(m, "type"), "error");
	cJSON_Delete(m);
	/* the directories a recursive mkdir or a write makes are told, outermost
	 * first; a recursive mkdir of what is there tells nothing */
	ck_assert_int_eq(s0_files_mkdir(c, sb, "/workspace/d/p/q", true, NULL), S0_OK);
	ck_assert_int_eq(s0_files_mkdir(c, sb, "/workspace/d/p/q", true, NULL), S0_OK);
	ck_assert_int_eq(s0_files_write(c, sb, "/workspace/d/r/s.txt", "1", 1, NULL), S0_OK);
	const char *made[] = {"create /workspace/d/p", "create /workspace/d/p/q",
	                      "create /workspace/d/r", "create /workspace/d/r/s.txt",
	                      "write /workspace/d/r/s.txt"};
	for (size_t i = 0; i < sizeof made / sizeof *made; i++) {
		m = cs_next(st);
		char got[256];
		snprintf(got, sizeof got, "%s %s", cs_str(m, "event"), cs_str(m, "path"));
		ck_assert_str_eq(got, made[i]);
		cJSON_Delete(m);
	}
	/* a text that is no JSON object ends the stream with 1007 */
	send_text(st, "[1,2]");
	ck_assert_int_eq(s0_stream_close_code(st, NULL), 1007);
	s0_stream_free(st);
	free(wid);
	free(sb);
}
END_TEST

/* ST-05: a stream holds at most 1024 watches (past them an error, room again
 * after an unsubscribe); a path that is not UTF-8 is sent with U+FFFD in
 * place of its bad bytes; a message cJSON would misread (a \u0000 that would cut
 * the path short) is refused with 1007, never taken as the shorter path. */
START_TEST(watch_bounds_and_nul_messages)
{
	char *sb = cs_claim(c, "default");
	s0_stream *st = open_stream(S0_STREAM_FILES_WATCH, sb, NULL, 0);
	/* a name that is not UTF-8 comes as U+FFFD for each such byte: a text
	 * message the client can take (a WebSocket peer fails on invalid UTF-8) */
	send_text(st, "{\"action\":\"subscribe\",\"path\":\"/workspace\"}");
	cJSON *m = cs_next(st);
	cJSON_Delete(m);
	ck_assert_int_eq(s0_files_write(c, sb, "/workspace/\xff\xfe.bin", "1", 1, NULL), S0_OK);
	m = cs_next(st);
	ck_assert_str_eq(cs_str(m, "event"), "create");
	ck_assert_str_eq(cs_str(m, "path"), "/workspace/\xEF\xBF\xBD\xEF\xBF\xBD.bin");
	cJSON_Delete(m);
	m = cs_next(st);
	ck_assert_str_eq(cs_str(m, "event"), "write");
	cJSON_Delete(m);
	s0_stream_free(st);
	st = open_stream(S0_STREAM_FILES_WATCH, sb, NULL, 0);
	char *first = NULL;
	for (int i = 0; i < 1024; i++) {
		send_text(st, "{\"action\":\"subscribe\",\"path\":\"/workspace\"}");
		m = cs_next(st);
		ck_assert_str_eq(cs_str(m, "type"), "subscribed");
		if (!first)
			first = strdup(cs_str(m, "watch_id"));
		cJSON_Delete(m);
	}
	send_text(st, "{\"action\":\"subscribe\",\"path\":\"/workspace\"}");
	m = cs_next(st);
	ck_assert_str_eq(cs_str(m, "type"), "error");
	ck_assert_str_eq(cs_str(m, "error"), "too many watches on this stream (at most 1024)");
	cJSON_Delete(m);
	char *unsub = s0__asprintf("{\"action\":\"unsubscribe\",\"watch_id\":\"%s\"}", first);
	send_text(st, unsub);
	m = cs_next(st);
	ck_assert_str_eq(cs_str(m, "type"), "unsubscribed");
	cJSON_Delete(m);
	send_text(st, "{\"action\":\"subscribe\",\"path\":\"/workspace\"}");
	m = cs_next(st);
	ck_assert_str_eq(cs_str(m, "type"), "subscribed");
	cJSON_Delete(m);
	/* "/workspace\u0000/x": refused whole, not a watch of /workspace */
	send_text(st, "{\"action\":\"subscribe\",\"path\":\"/workspace\\u0000/x\"}");
	char *x = NULL;
	ck_assert_int_eq(s0_stream_recv(st, 5000, &x, NULL, NULL), S0_ITEROVER);
	const char *why = NULL;
	ck_assert_int_eq(s0_stream_close_code(st, &why), 1007);
	ck_assert_str_eq(why, "NUL character in a JSON string");
	s0_stream_free(st);
	free(unsub);
	free(first);
	free(sb);
}
END_TEST

START_TEST(bad_stream_options_are_refused)
{
	char *sb = cs_claim(c, "default");
	s0_stream *st = NULL;
	s0_stream_options o = S0_STREAM_OPTIONS_INIT;
	s0_error *err = NULL;
	ck_assert_int_eq(s0_local_stream_open(f.local, &o, &st, NULL), S0_EINVAL); /* no kind */
	o.kind = S0_STREAM_CONTEXT;
	o.sandbox_id = sb;
	ck_assert_int_eq(s0_local_stream_open(f.local, &o, &st, NULL), S0_EINVAL); /* no id */
	o.id = "ctx-nope";
	ck_assert_int_eq(s0_local_stream_open(f.local, &o, &st, &err), S0_ENOTFOUND);
	ck_assert_str_eq(s0_error_reason(err), "context_not_found");
	s0_error_free(err);
	o.kind = S0_STREAM_SESSION;
	o.after = -1;
	ck_assert_int_eq(s0_local_stream_open(f.local, &o, &st, NULL), S0_EINVAL);
	o.kind = S0_STREAM_FILES_WATCH;
	o.after = 0;
	o.sandbox_id = "sb-nope";
	ck_assert_int_eq(s0_local_stream_open(f.local, &o, &st, NULL), S0_ENOTFOUND);
	o.version = 99;
	ck_assert_int_eq(s0_local_stream_open(f.local, &o, &st, NULL), S0_EINVAL);
	ck_assert_ptr_null(st);
	free(sb);
}
END_TEST

/* A stream's open wakes a paused sandbox; a wake that fails is S0_ERESUME
 * (503 sandbox_resume_failed on the wire) and the sandbox stays paused. */
START_TEST(stream_open_wakes_or_reports_a_failed_wake)
{
	char *sb = cs_claim(c, "default");
	ck_assert_int_eq(s0_sandbox_pause_and_wait(c, sb, NULL, NULL, NULL), S0_OK);
	ck_assert_int_eq(s0_local_fault_arm(f.local, "capacity", S0_FAULT_FAIL, 0, 0, NULL), S0_OK);
	s0_stream_options o = S0_STREAM_OPTIONS_INIT;
	o.kind = S0_STREAM_FILES_WATCH;
	o.sandbox_id = sb;
	s0_stream *st = NULL;
	s0_error *err = NULL;
	ck_assert_int_eq(s0_local_stream_open(f.local, &o, &st, &err), S0_ERESUME);
	ck_assert_str_eq(s0_error_reason(err), "resume_failed");
	s0_error_free(err);
	s0_sandbox_info *info = NULL;
	ck_assert_int_eq(s0_sandbox_get(c, sb, &info, NULL), S0_OK);
	ck_assert(s0_sandbox_info_paused(info));
	s0_sandbox_info_free(info);
	ck_assert_int_eq(s0_local_fault_release(f.local, "capacity", NULL), S0_OK);
	st = open_stream(S0_STREAM_FILES_WATCH, sb, NULL, 0);
	ck_assert_int_eq(s0_sandbox_get(c, sb, &info, NULL), S0_OK);
	ck_assert_int_eq(s0_sandbox_info_status(info), S0_STATUS_RUNNING);
	s0_sandbox_info_free(info);
	s0_stream_free(st);
	free(sb);
}
END_TEST

Suite *s0_streams_local_suite(void)
{
	Suite *s = suite_create("streams_local");
	TCase *tc = tcase_create("streams");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, context_output_order_input_echo_and_signal);
	tcase_add_test(tc, context_input_done_after_all_its_output);
	tcase_add_test(tc, session_attach_replays_from_a_cursor);
	tcase_add_test(tc, file_watch_events_pause_and_reopen);
	tcase_add_test(tc, watch_bounds_and_nul_messages);
	tcase_add_test(tc, bad_stream_options_are_refused);
	tcase_add_test(tc, stream_open_wakes_or_reports_a_failed_wake);
	suite_add_tcase(s, tc);
	return s;
}
