/*
 * `s0 sandbox exec` and `s0 sandbox run` (issue #8: what the official CLI
 * lacks): a one-shot command in a `cmd` context, or a line of the simulated
 * shell in a REPL context whose variables, cwd and background jobs persist
 * across runs (and across memory pause/resume). docs/wire.md §8.1: exec exits
 * locally with the remote non-zero exit code.
 */
#include <stdlib.h>
#include <string.h>

#include <sandbox0/contexts.h>

#include "cli.h"

/* Print stdout/stderr of a context result (output_raw when both are empty)
 * and return the exit code it carries (0 when the process has not exited). */
static int print_result(const char *json)
{
	cj *r = cj_parse(json, strlen(json), NULL);
	if (!r)
		return 0;
	const char *out = cj_get_str(r, "stdout"), *errs = cj_get_str(r, "stderr");
	if ((!out || !*out) && (!errs || !*errs))
		out = cj_get_str(r, "output_raw");
	if (out)
		fputs(out, stdout);
	if (errs)
		fputs(errs, stderr);
	fflush(stdout);
	const cj *code = cj_get(r, "exit_code");
	int rc = cJSON_IsNumber(code) ? code->valueint : 0;
	cj_free(r);
	return rc;
}

/* The remaining positional arguments joined by spaces (a shell line). */
static char *join_args(const cli *c, int from)
{
	size_t n = 1;
	for (int i = from; i < c->nargs; i++)
		n += strlen(c->args[i]) + 1;
	char *s = xmalloc(n);
	s[0] = '\0';
	for (int i = from; i < c->nargs; i++) {
		if (i > from)
			strcat(s, " ");
		strcat(s, c->args[i]);
	}
	return s;
}

static char *cmd_request(const cli *c)
{
	cj *argv = cj_array();
	for (int i = 1; i < c->nargs; i++)
		cj_push(argv, cj_str(c->args[i]));
	cj *cmd = cj_object(), *req = cj_object();
	cj_set(cmd, "command", argv);
	cj_set(req, "type", cj_str("cmd"));
	cj_set(req, "cmd", cmd);
	cj_set(req, "wait_until_done", cj_bool(true));
	char *text = cj_compact(req);
	cj_free(req);
	return text;
}

/* Exec the line in an existing context; prints the result. */
static int exec_in(cli *c, const char *ctx, const char *line)
{
	char *res = NULL;
	s0_error *err = NULL;
	int rc = s0_context_exec(c->client, c->args[0], ctx, line, &res, &err);
	if (rc < 0)
		return cli_fail("running in context", err, rc);
	int code = print_result(res);
	s0_free(res);
	return code ? (code > 255 ? CLI_EXIT_FAIL : code) : CLI_EXIT_OK;
}

static int run_exec(cli *c)
{
	int rc = cli_connect(c);
	if (rc)
		return rc;
	const char *ctx = opt_str(c, "context");
	if (ctx) {
		char *line = join_args(c, 1);
		rc = exec_in(c, ctx, line);
		free(line);
		return rc;
	}
	char *req = cmd_request(c), *res = NULL;
	s0_error *err = NULL;
	rc = s0_context_create(c->client, c->args[0], req, &res, &err);
	free(req);
	if (rc < 0)
		return cli_fail("executing command", err, rc);
	int code = print_result(res);
	s0_free(res);
	return code ? (code > 255 ? CLI_EXIT_FAIL : code) : CLI_EXIT_OK;
}

static int run_run(cli *c)
{
	int rc = cli_connect(c);
	if (rc)
		return rc;
	const char *ctx = opt_str(c, "context");
	char *made = NULL;
	if (!ctx) {
		char *res = NULL;
		s0_error *err = NULL;
		rc = s0_context_create(c->client, c->args[0], "{\"type\":\"repl\"}", &res, &err);
		if (rc < 0)
			return cli_fail("creating a REPL context", err, rc);
		cj *r = cj_parse(res, strlen(res), NULL);
		made = r && cj_get_str(r, "id") ? xstrdup(cj_get_str(r, "id")) : NULL;
		cj_free(r);
		s0_free(res);
		if (!made)
			return cli_failf("creating a REPL context", "the reply names no context id");
		if (opt_str(c, "local")) /* each --local command ends with an FS pause */
			fprintf(stderr, "context %s (gone after this --local command)\n", made);
		else
			fprintf(stderr, "context %s (reuse it with --context %s)\n", made, made);
		ctx = made;
	}
	char *line = join_args(c, 1);
	rc = exec_in(c, ctx, line);
	free(line);
	free(made);
	return rc;
}

static const cli_flag exec_flags[] = {
	{"context", 0, FLAG_STR, "ID", "run the words as a shell line in this REPL context"},
	{0},
};

const cli_cmd cmd_sandbox_exec = {
	.name = "exec", .args = "<sandbox-id> <command> [args…]",
	.summary = "Run a command in a sandbox and print its output",
	.flags = exec_flags, .min_args = 2, .max_args = 256, .flags_end_after = 2, .run = run_exec,
	.details = "Runs the command as a one-shot `cmd` context and waits for it; the exit\n"
	           "status is the command's. s0's own flags go before the command word: what\n"
	           "follows it is the command's (`exec ID sh -c 'exit 3'`); put `--` before a\n"
	           "command word that starts with '-'. With --context ID the words form one\n"
	           "line for that REPL context.\n"
	           "The runtime is simulated: commands are those of its built-in shell\n"
	           "(echo, printf, cat, ls, mkdir, rm, mv, cp, touch, env, ps, kill, sleep…).\n",
};

const cli_cmd cmd_sandbox_run = {
	.name = "run", .args = "<sandbox-id> <shell line…>",
	.summary = "Run a shell line in a REPL context (state persists)",
	.flags = exec_flags, .min_args = 2, .max_args = 256, .flags_end_after = 2, .run = run_run,
	.details = "Creates a REPL context (its id is printed on stderr) unless --context names\n"
	           "one, and runs the line there: variables, the working directory and\n"
	           "background jobs live in the context's process memory, so they persist to\n"
	           "the next run and across a memory pause and resume (against a server: each\n"
	           "--local command ends with a filesystem pause, which ends the context).\n",
};
