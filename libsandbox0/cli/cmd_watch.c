/*
 * `s0 sandbox files -s <id> watch <path> [-r]`: file changes under a path,
 * one line each, as they happen (docs/wire.md §8.2 "files/watch", through
 * s0_stream_open: a WebSocket to the server, or in process with --local).
 * Table output prints `Watching <path>` and then `<event> <path>` lines; -o
 * json prints each server message as one JSON line. It runs until the
 * stream ends — the sandbox pauses or is deleted (exit status 1, the reason
 * on stderr) — or it is interrupted.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const cli_flag watch_flags[] = {
	{"recursive", 'r', FLAG_BOOL, NULL, "watch every subdirectory too"},
	{0},
};

/* The subscribe message for path (malloc'd). */
static char *subscribe_json(const char *path, bool recursive)
{
	cj *o = cj_object();
	cj_set(o, "action", cj_str("subscribe"));
	cj_set(o, "path", cj_str(path));
	cj_set(o, "recursive", cj_bool(recursive));
	char *s = cj_compact(o);
	cj_free(o);
	return s;
}

/* One server message; 1 when it is a refusal (printed), 0 otherwise. */
static int show(cli *c, const char *msg)
{
	cj *m = cj_parse(msg, strlen(msg), NULL);
	const char *type = cj_get_str(m, "type");
	int rc = 0;
	if (type && !strcmp(type, "error")) {
		const char *e = cj_get_str(m, "error");
		fprintf(stderr, "Error watching files: %s\n", e ? e : "refused");
		rc = 1;
	} else if (c->format != OUT_TABLE) {
		printf("%s\n", msg);
	} else if (type && !strcmp(type, "subscribed")) {
		const char *p = cj_get_str(m, "path");
		printf("Watching %s\n", p ? p : "");
	} else if (type && !strcmp(type, "event")) {
		const char *ev = cj_get_str(m, "event"), *p = cj_get_str(m, "path");
		printf("%s %s\n", ev ? ev : "", p ? p : "");
	}
	fflush(stdout);
	cj_free(m);
	return rc;
}

static int run_watch(cli *c)
{
	const char *id = opt_str(c, "sandbox-id");
	if (!id || !*id)
		return cli_usage_error(c, "required flag \"sandbox-id\" not set");
	int rc = cli_connect(c);
	if (rc)
		return rc;
	s0_stream_options o = S0_STREAM_OPTIONS_INIT;
	o.kind = S0_STREAM_FILES_WATCH;
	o.sandbox_id = id;
	s0_stream *st = NULL;
	s0_error *err = NULL;
	int r = s0_stream_open(c->client, &o, &st, &err);
	if (r < 0)
		return cli_fail("watching files", err, r);
	char *sub = subscribe_json(c->args[0], opt_bool(c, "recursive"));
	r = s0_stream_send(st, sub, strlen(sub), &err);
	free(sub);
	while (r == S0_OK) {
		char *msg = NULL;
		r = s0_stream_recv(st, S0_TIMEOUT_INFINITE, &msg, NULL, &err);
		if (r == S0_OK && show(c, msg))
			r = S0_EINVAL; /* refused: already said */
		s0_free(msg);
	}
	if (r == S0_ITEROVER) {
		const char *why = NULL;
		int code = s0_stream_close_code(st, &why);
		fprintf(stderr, "Watch ended: %s (%d)\n", why && *why ? why : "closed", code);
		s0_error_free(err);
		rc = 1;
	} else if (r == S0_EINVAL && !err) {
		rc = 1;
	} else {
		rc = cli_fail("watching files", err, r);
	}
	s0_stream_free(st);
	return rc;
}

const cli_cmd cmd_files_watch = {
	.name = "watch", .args = "<path>", .summary = "Watch a path for file changes",
	.flags = watch_flags, .min_args = 1, .max_args = 1, .run = run_watch,
};
