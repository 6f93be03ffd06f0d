/*
 * `s0 sandbox attach <sandbox-id> <context-id>`: a context's stream
 * (docs/wire.md §8.2) on the terminal. Each line of stdin is sent as an
 * input, and its output printed (stdout and pty output on stdout, stderr on
 * stderr) before the next line is read, so a REPL works line by line; a
 * `cmd` context's output streams until it exits. The exit status is the
 * process's when it exits; at the end of stdin the command prints what the
 * process still writes until it exits or is quiet for half a second, then
 * detaches (the process goes on) with status 0; a pause ends it with status 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Print one output message; true when it was the terminal done (*exit_code set). */
static bool show(const char *msg, const char *waiting_for, bool *answered, int *exit_code)
{
	cj *m = cj_parse(msg, strlen(msg), NULL);
	const char *type = cj_get_str(m, "type");
	bool end = false;
	if (type && !strcmp(type, "output")) {
		const char *src = cj_get_str(m, "source"), *data = cj_get_str(m, "data");
		fputs(data ? data : "", src && !strcmp(src, "stderr") ? stderr : stdout);
		fflush(stdout);
	} else if (type && !strcmp(type, "done")) {
		const char *rid = cj_get_str(m, "request_id");
		const cj *code = cj_get(m, "exit_code");
		if (cJSON_IsNumber(code) || cj_get_str(m, "state")) {
			end = true;
			*exit_code = cJSON_IsNumber(code) ? code->valueint : 0;
		} else if (rid && waiting_for && !strcmp(rid, waiting_for)) {
			*answered = true;
		}
	} else if (type && !strcmp(type, "error")) {
		const char *e = cj_get_str(m, "error");
		fprintf(stderr, "Error: %s\n", e ? e : "refused");
		*answered = true;
	}
	cj_free(m);
	return end;
}

/* Quiet time after the end of stdin before detaching (ms). */
#define QUIET_MS 500

/* Receive until the answer to rid (NULL: until QUIET_MS pass without a
 * message). 1: the process exited (*code), 0: answered or quiet, -1: the
 * stream ended otherwise (reported). */
static int pump(s0_stream *st, const char *rid, int *code)
{
	for (;;) {
		char *msg = NULL;
		s0_error *err = NULL;
		int r = s0_stream_recv(st, rid ? S0_TIMEOUT_INFINITE : QUIET_MS, &msg, NULL, &err);
		if (r == S0_ETIMEDOUT && !rid) {
			s0_error_free(err);
			return 0;
		}
		if (r == S0_ITEROVER) {
			const char *why = NULL;
			int cc = s0_stream_close_code(st, &why);
			fprintf(stderr, "Attach ended: %s (%d)\n", why && *why ? why : "closed", cc);
			s0_error_free(err);
			return -1;
		}
		if (r < 0) {
			cli_fail("attaching", err, r);
			return -1;
		}
		bool answered = false;
		bool end = show(msg, rid, &answered, code);
		s0_free(msg);
		if (end)
			return 1;
		if (answered)
			return 0;
	}
}

static int run_attach(cli *c)
{
	int rc = cli_connect(c);
	if (rc)
		return rc;
	s0_stream_options o = S0_STREAM_OPTIONS_INIT;
	o.kind = S0_STREAM_CONTEXT;
	o.sandbox_id = c->args[0];
	o.id = c->args[1];
	s0_stream *st = NULL;
	s0_error *err = NULL;
	int r = s0_stream_open(c->client, &o, &st, &err);
	if (r < 0)
		return cli_fail("attaching", err, r);
	char line[65536];
	int code = 0, n = 0, state = 0;
	while (state == 0 && fgets(line, sizeof line, stdin)) {
		char rid[32];
		snprintf(rid, sizeof rid, "line-%d", ++n);
		cj *msg = cj_object();
		cj_set(msg, "type", cj_str("input"));
		cj_set(msg, "data", cj_str(line));
		cj_set(msg, "request_id", cj_str(rid));
		char *text = cj_compact(msg);
		cj_free(msg);
		r = s0_stream_send(st, text, strlen(text), &err);
		free(text);
		if (r < 0) {
			s0_stream_free(st);
			return cli_fail("attaching", err, r);
		}
		state = pump(st, rid, &code);
	}
	if (state == 0) /* end of input: what the process still writes, then detach */
		state = pump(st, NULL, &code);
	s0_stream_free(st); /* the process goes on */
	return state == 1 ? code : state < 0 ? 1 : 0;
}

const cli_cmd cmd_sandbox_attach = {
	.name = "attach", .args = "<sandbox-id> <context-id>",
	.summary = "Attach to a context: stdin lines in, its output out",
	.min_args = 2, .max_args = 2, .run = run_attach,
	.details = "Opens the context's stream (a WebSocket to the server, or in process with\n"
	           "--local). Each stdin line is sent as input and its output printed before\n"
	           "the next line; the exit status is the process's once it exits. At the end\n"
	           "of stdin it prints what the process still writes until it exits or is quiet\n"
	           "for 0.5 s, then detaches; the process goes on.\n",
};
