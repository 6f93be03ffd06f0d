/*
 * unit-cli: the s0 program as a user runs it (docs/wire.md §5, docs/behaviours.md CL-17,
 * docs/decisions.md "Local mode outside tests").
 *
 * Golden transcripts (golden/NAME.txt, ids and times normalised) pin the
 * -o json|yaml outputs, the text outputs, the error lines and the exit
 * status of each failure class: not found, conflict, usage, unreachable
 * server. They run against an embedded backend (--local DIR) and against
 * `s0 serve` on 127.0.0.1 port 0 started and stopped by the test. Then: the
 * server refuses unauthenticated and wrong-key requests with 401 and changes
 * nothing; the per-user local server is started on first use and found
 * again; the config file and the precedence of --api-url; `s0 demo`.
 *
 * Nothing sleeps: the server is awaited through its "Listening on" line,
 * and processes through pidfds, each with a bound.
 */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "cli_fixture.h"

/* The id in a JSON output ("id": "…"); fails the test when absent. */
static char *json_id(const cli_run *r, const char *key)
{
	char *id = h_json_str(r->out, key);
	ck_assert_msg(id != NULL, "no \"%s\" in: %s / %s", key, r->out, r->err);
	return id;
}

/* ---- the sandbox commands, one transcript per connection kind ---- */

/* Run `s0 <conn…> <rest…>` into the transcript. */
static cli_run conn_cmd(transcript *t, const char *const *conn, const char *const *rest)
{
	const char *argv[48];
	int n = 0;
	for (const char *const *c = conn; *c && n < 24; c++)
		argv[n++] = *c;
	for (const char *const *r = rest; *r && n < 47; r++)
		argv[n++] = *r;
	argv[n] = NULL;
	return t_cmd(t, argv);
}

/* The same scenario through any connection (prefix = the connection flags). */
/* embedded: --local, where each command pauses the running sandboxes when it
 * ends (so they keep their files) and the next request resumes them. */
static void lifecycle_scenario(transcript *t, const char *const *conn, bool embedded)
{
#define CMD(...) conn_cmd(t, conn, A(__VA_ARGS__))
	cli_run r = CMD("sandbox", "create", "-t", "default", "-o", "json");
	h_expect_exit(&r, 0);
	char *id = json_id(&r, "id");
	h_run_free(&r);
	r = CMD("sandbox", "get", id, "-o", "json");
	h_expect_exit(&r, 0);
	h_run_free(&r);
	r = CMD("sandbox", "get", id, "-o", "yaml");
	h_run_free(&r);
	r = CMD("sandbox", "status", id, "-o", "json");
	h_run_free(&r);
	r = CMD("sandbox", "list", "-o", "json");
	h_run_free(&r);
	/* --local: auto-resume stays on, or the sandbox paused by the last command
	 * would not come back for the next one */
	r = CMD("sandbox", "update", id, "--ttl", "600", "--auto-resume", embedded ? "true" : "false",
	        "-o", "json");
	h_expect_exit(&r, 0);
	h_run_free(&r);
	r = CMD("sandbox", "refresh", id, "-o", "json");
	h_run_free(&r);
	r = CMD("sandbox", "files", "-s", id, "write", "/workspace/hello.txt", "--data", "hi <&>");
	h_expect_exit(&r, 0);
	h_run_free(&r);
	r = CMD("sandbox", "files", "-s", id, "ls", "/workspace", "-o", "json");
	h_run_free(&r);
	r = CMD("sandbox", "files", "-s", id, "cat", "/workspace/hello.txt");
	ck_assert_str_eq(r.out, "hi <&>");
	h_run_free(&r);
	r = CMD("sandbox", "files", "-s", id, "stat", "/workspace/hello.txt", "-o", "json");
	h_run_free(&r);
	r = CMD("sandbox", "files", "-s", id, "mv", "/workspace/hello.txt", "/workspace/d/h.txt");
	h_run_free(&r);
	r = CMD("sandbox", "files", "-s", id, "rm", "/workspace/d");
	h_run_free(&r);
	r = CMD("sandbox", "snapshot", "create", id, "-n", "first", "-d", "one", "-o", "json");
	h_expect_exit(&r, 0);
	char *snap = json_id(&r, "id");
	h_run_free(&r);
	r = CMD("sandbox", "snapshot", "list", id, "-o", "json");
	h_run_free(&r);
	r = CMD("sandbox", "snapshot", "get", snap, "-o", "yaml");
	h_run_free(&r);
	/* conflict: restore needs a paused sandbox (with --local the last command
	 * paused it, so the restore goes through) */
	r = CMD("sandbox", "snapshot", "restore", id, snap);
	h_expect_exit(&r, embedded ? 0 : 1);
	h_run_free(&r);
	r = CMD("sandbox", "fork", id, "-o", "json");
	h_expect_exit(&r, 0);
	char *child = json_id(&r, "id");
	h_run_free(&r);
	r = CMD("sandbox", "pause", id, "--wait", "-o", "json");
	h_expect_exit(&r, 0);
	h_run_free(&r);
	r = CMD("sandbox", "snapshot", "restore", id, snap, "-o", "json");
	h_expect_exit(&r, 0);
	h_run_free(&r);
	r = CMD("sandbox", "resume", id, "--wait", "--timeout", "30", "-o", "json");
	h_expect_exit(&r, 0);
	h_run_free(&r);
	r = CMD("sandbox", "pause", id);
	h_expect_exit(&r, 0);
	h_run_free(&r);
	r = CMD("sandbox", "resume", id);
	h_run_free(&r);
	r = CMD("sandbox", "delete", child);
	h_expect_exit(&r, 0);
	h_run_free(&r);
	r = CMD("sandbox", "snapshot", "delete", snap);
	h_run_free(&r);
	/* not found */
	r = CMD("sandbox", "get", child);
	h_expect_exit(&r, 1);
	h_run_free(&r);
	r = CMD("sandbox", "delete", child);
	h_expect_exit(&r, 1);
	h_run_free(&r);
	r = CMD("sandbox", "files", "-s", id, "cat", "/workspace/missing");
	h_expect_exit(&r, 1);
	h_run_free(&r);
	r = CMD("sandbox", "snapshot", "get", snap);
	h_expect_exit(&r, 1);
	h_run_free(&r);
	r = CMD("sandbox", "delete", id);
	h_expect_exit(&r, 0);
	h_run_free(&r);
	free(id);
	free(snap);
	free(child);
#undef CMD
}

START_TEST(embedded_golden)
{
	char *dir = h_path_in("embedded");
	transcript *t = t_new("embedded");
	t_note(t, "every command opens the backend on DIR (--local); the simulated runtime "
	          "lives in that process, so each command pauses the running sandboxes when it "
	          "ends and the next request resumes them");
	lifecycle_scenario(t, A("--local", dir), true);
	ck_assert(t_check(t));
	t_free(t);
	free(dir);
}
END_TEST

START_TEST(usage_golden)
{
	char *dir = h_path_in("embedded");
	char *port = NULL;
	ck_assert_int_ge(asprintf(&port, "http://127.0.0.1:%d", h_closed_port()), 0);
	transcript *t = t_new("usage");
	t_note(t, "usage errors exit 2 with a usage line; failures exit 1");
	cli_run r;
#define RUN(want, ...)                     \
	do {                                   \
		r = t_cmd(t, A(__VA_ARGS__));      \
		h_expect_exit(&r, want);             \
		h_run_free(&r);                    \
	} while (0)
	RUN(2, "sandbox", "get");
	RUN(2, "sandbox", "get", "a", "b");
	RUN(2, "sandbox", "nope");
	RUN(2, "sandbox");
	RUN(2, "sandbox", "list", "--bogus");
	RUN(2, "sandbox", "list", "--limit", "0");
	RUN(2, "sandbox", "list", "--status", "sleeping");
	RUN(2, "sandbox", "list", "--paused", "maybe");
	RUN(2, "-o", "xml", "sandbox", "list");
	RUN(2, "sandbox", "pause", "sb_x", "--timeout", "5");
	RUN(2, "sandbox", "pause", "sb_x", "--wait", "--timeout", "-1");
	RUN(2, "sandbox", "update", "sb_x");
	RUN(2, "sandbox", "update", "sb_x", "--auto-resume", "yes");
	RUN(2, "sandbox", "files", "ls");
	RUN(2, "sandbox", "files", "-s", "sb_x", "write", "/a");
	RUN(2, "sandbox", "get", "sb_x", "--local", dir, "--api-url", "http://127.0.0.1:1");
	RUN(2, "sandbox", "create", "--ttl", "-5", "-t", "default");
	RUN(1, "sandbox", "create");
	RUN(1, "--api-url", port, "sandbox", "list");
	RUN(1, "--api-url", port, "--token", "s0_test", "sandbox", "list");
	RUN(1, "--api-url", port, "--token", "s0_test", "sandbox", "pause", "sb_x", "--wait",
	    "--timeout", "1");
	RUN(1, "-c", "/nonexistent/config.yaml", "sandbox", "list");
	RUN(0, "help", "sandbox", "resume");
#undef RUN
	ck_assert(t_check(t));
	t_free(t);
	free(port);
	free(dir);
}
END_TEST

/* pause/resume --wait as text: progress lines, then the final line. */
START_TEST(wait_text_output)
{
	char *dir = h_path_in("embedded");
	cli_run r = h_run(A("--local", dir, "sandbox", "create", "-t", "default", "-o", "json"), NULL);
	h_expect_exit(&r, 0);
	char *id = json_id(&r, "id");
	h_run_free(&r);
	r = h_run(A("--local", dir, "sandbox", "pause", id, "--wait"), NULL);
	h_expect_exit(&r, 0);
	ck_assert_msg(strstr(r.out, "pausing ") && strstr(r.out, ": status "), "%s", r.out);
	ck_assert_msg(!strchr(r.out, '\r'), "no \\r when stdout is not a terminal: %s", r.out);
	char *final = NULL;
	ck_assert_int_ge(asprintf(&final, "Sandbox %s paused (runtime_generation ", id), 0);
	ck_assert_msg(strstr(r.out, final), "%s", r.out);
	free(final);
	h_run_free(&r);
	r = h_run(A("--local", dir, "sandbox", "resume", id, "--wait"), NULL);
	h_expect_exit(&r, 0);
	ck_assert_msg(strstr(r.out, "resumed: running, runtime_generation "), "%s", r.out);
	h_run_free(&r);
	/* a memory pause retains an image; a memory resume restores it */
	r = h_run(A("--local", dir, "sandbox", "pause", id, "--memory", "--wait"), NULL);
	h_expect_exit(&r, 0);
	ck_assert_int_ge(asprintf(&final, "Sandbox %s paused with memory (runtime_generation ", id),
	                 0);
	ck_assert_msg(strstr(r.out, final), "%s", r.out);
	free(final);
	h_run_free(&r);
	r = h_run(A("--local", dir, "sandbox", "resume", id, "--memory", "--wait"), NULL);
	h_expect_exit(&r, 0);
	ck_assert_msg(strstr(r.out, "resumed with memory: running, runtime_generation "), "%s",
	              r.out);
	h_run_free(&r);
	free(id);
	free(dir);
}
END_TEST


/* exec exits with the remote exit code; run keeps state in its REPL context
 * (issue #8: exec/run into a context, docs/wire.md §8.1). */
START_TEST(exec_and_run)
{
	char *dir = h_path_in("exec");
	cli_run r = h_run(A("--local", dir, "sandbox", "create", "-t", "default", "-o", "json"), NULL);
	h_expect_exit(&r, 0);
	char *id = json_id(&r, "id");
	h_run_free(&r);
	r = h_run(A("--local", dir, "sandbox", "exec", id, "echo", "hello", "world"), NULL);
	h_expect_exit(&r, 0);
	ck_assert_str_eq(r.out, "hello world\n");
	h_run_free(&r);
	r = h_run(A("--local", dir, "sandbox", "exec", id, "--", "ls", "/nonexistent"), NULL);
	ck_assert_msg(r.status != 0, "a failing command exits non-zero: %s", r.err);
	ck_assert_msg(strstr(r.err, "nonexistent"), "the command's stderr: %s", r.err);
	h_run_free(&r);
	/* after the command word every word is the command's, flags included */
	r = h_run(A("--local", dir, "sandbox", "exec", id, "sh", "-c", "exit 3"), NULL);
	h_expect_exit(&r, 3);
	h_run_free(&r);
	r = h_run(A("--local", dir, "sandbox", "exec", id, "echo", "-n", "-o", "x"), NULL);
	h_expect_exit(&r, 0);
	ck_assert_str_eq(r.out, "-o x");
	h_run_free(&r);
	r = h_run(A("--local", dir, "sandbox", "run", id, "X=42; cd /var/tmp; echo x=$X; pwd"), NULL);
	h_expect_exit(&r, 0);
	ck_assert_str_eq(r.out, "x=42\n/var/tmp\n");
	ck_assert_msg(strstr(r.err, "context ctx_"), "the context id is on stderr: %s", r.err);
	h_run_free(&r);
	r = h_run(A("--local", dir, "sandbox", "exec", "sb_missing", "true"), NULL);
	h_expect_exit(&r, 1);
	ck_assert_msg(strstr(r.err, "Error executing command"), "%s", r.err);
	h_run_free(&r);
	free(id);
	free(dir);
}
END_TEST

/* create -f: a YAML config file and a JSON claim request from stdin. */
START_TEST(create_from_config_file)
{
	char *dir = h_path_in("embedded"), *file = h_path_in("sandbox.yaml");
	FILE *f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fputs("# SandboxConfig\nttl: 300\nhard_ttl: 900\nauto_resume: false\n"
	      "env_vars:\n  GREETING: hello\n",
	      f);
	fclose(f);
	cli_run r = h_run(A("--local", dir, "sandbox", "create", "-t", "default", "-f", file, "-o",
	                    "json"),
	                  NULL);
	h_expect_exit(&r, 0);
	char *id = json_id(&r, "id");
	h_run_free(&r);
	r = h_run(A("--local", dir, "sandbox", "get", id, "-o", "json"), NULL);
	h_expect_exit(&r, 0);
	ck_assert_msg(strstr(r.out, "\"auto_resume\": false"), "%s", r.out);
	ck_assert_msg(!strstr(r.out, "\"hard_expires_at\": null"), "%s", r.out);
	h_run_free(&r);
	free(id);
	r = h_run(A("--local", dir, "sandbox", "create", "-f", "-", "-o", "json"),
	          "{\"template\": \"default\", \"config\": {\"ttl\": 60}}");
	h_expect_exit(&r, 0);
	id = json_id(&r, "id");
	h_run_free(&r);
	free(id);
	r = h_run(A("--local", dir, "sandbox", "create", "-f", "-"), "template: [unclosed");
	h_expect_exit(&r, 1);
	ck_assert_msg(!strncmp(r.err, "Error building sandbox create request: parse -:", 47), "%s",
	              r.err);
	h_run_free(&r);
	free(file);
	free(dir);
}
END_TEST

/* ---- s0 serve ---- */

static bool serve_start(serve_proc *s, const char *data, const char *const *extra)
{
	ck_assert_msg(h_serve_start(s, data, extra), "s0 serve did not start");
	return true;
}

START_TEST(serve_golden)
{
	char *data = h_path_in("served");
	serve_proc s;
	if (!serve_start(&s, data, NULL))
		goto out;
	ck_assert_msg(!strncmp(s.key, "s0_", 3), "no key printed: %s", s.out);
	/* the key is stored for the CLI, 0600 */
	char *tok = h_path_in("served/cli-token");
	struct stat st;
	ck_assert_int_eq(stat(tok, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	free(tok);
	transcript *t = t_new("serve");
	t_note(t, "the same scenario against s0 serve on 127.0.0.1 port 0");
	lifecycle_scenario(t, A("--api-url", s.url, "--token", s.key), false);
	ck_assert(t_check(t));
	t_free(t);
	ck_assert_int_eq(h_serve_stop(&s), 0);
	ck_assert_msg(strstr(s.out, "Stopped."), "%s", s.out);
	char *sj = h_path_in("served/server.json");
	ck_assert_msg(access(sj, F_OK) != 0, "server.json is removed on a clean stop");
	free(sj);
	/* a second start keeps the key and prints none */
	free(s.out);
	if (serve_start(&s, data, NULL)) {
		ck_assert_str_eq(s.key, "");
		ck_assert_int_eq(h_serve_stop(&s), 0);
	}
	free(s.out);
out:
	free(data);
}
END_TEST

/* Run conn + rest without a transcript. */
static cli_run run_conn(const char *const *conn, const char *const *rest)
{
	const char *argv[48];
	int n = 0;
	for (const char *const *c = conn; *c && n < 24; c++)
		argv[n++] = *c;
	for (const char *const *r = rest; *r && n < 47; r++)
		argv[n++] = *r;
	argv[n] = NULL;
	return h_run(argv, NULL);
}

/* `s0 sandbox files watch` against s0 serve: the events as lines, live, and
 * the end when the sandbox pauses (exit 1, the reason on stderr); then
 * `s0 sandbox attach` to a REPL context line by line. */
START_TEST(files_watch_over_serve)
{
	char *data = h_path_in("watch");
	serve_proc s;
	if (!serve_start(&s, data, NULL))
		goto out;
	const char *const *conn = A("--api-url", s.url, "--token", s.key);
	cli_run r = run_conn(conn, A("sandbox", "create", "-t", "default", "-o", "json"));
	h_expect_exit(&r, 0);
	char *id = json_id(&r, "id");
	h_run_free(&r);
	r = run_conn(conn, A("sandbox", "files", "-s", id, "mkdir", "/workspace/w"));
	h_expect_exit(&r, 0);
	h_run_free(&r);
	int fd = -1;
	pid_t pid = h_spawn(A("--api-url", s.url, "--token", s.key, "sandbox", "files", "-s", id,
	                      "watch", "/workspace/w"),
	                    &fd);
	char *got = h_read_until(fd, "Watching /workspace/w\n", 30000);
	ck_assert_ptr_nonnull(got);
	free(got);
	r = run_conn(conn, A("sandbox", "files", "-s", id, "write", "/workspace/w/a.txt",
	                           "--data", "x"));
	h_expect_exit(&r, 0);
	h_run_free(&r);
	got = h_read_until(fd, "write /workspace/w/a.txt\n", 30000);
	ck_assert_ptr_nonnull(got);
	ck_assert_msg(strstr(got, "create /workspace/w/a.txt\n"), "%s", got);
	free(got);
	r = run_conn(conn, A("sandbox", "pause", id, "--wait"));
	h_expect_exit(&r, 0);
	h_run_free(&r);
	ck_assert_msg(h_wait_gone(pid, 30000), "the watch did not end with the pause");
	int st = 0;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 1);
	close(fd);
	/* attach: a REPL line by line, then its exit status (the pause ended the
	 * REPL the run below makes a new one on the woken sandbox) */
	r = run_conn(conn, A("sandbox", "run", id, "X=41"));
	h_expect_exit(&r, 0);
	const char *ctx = strstr(r.err, "context ");
	ck_assert_ptr_nonnull(ctx);
	char ctx_id[64] = "";
	sscanf(ctx, "context %63s", ctx_id);
	h_run_free(&r);
	const char *argv[16];
	int n = 0;
	for (const char *const *c = conn; *c; c++)
		argv[n++] = *c;
	argv[n++] = "sandbox";
	argv[n++] = "attach";
	argv[n++] = id;
	argv[n++] = ctx_id;
	argv[n] = NULL;
	r = h_run(argv, "echo x=$X\necho err >&2\nexit 4\n");
	h_expect_exit(&r, 4);
	ck_assert_msg(!strncmp(r.out, "x=41\n", 5), "%s", r.out);
	/* a PTY context merges its streams; without one stderr goes to stderr */
	ck_assert_msg(strstr(r.out, "err\n") || !strcmp(r.err, "err\n"), "%s | %s", r.out, r.err);
	h_run_free(&r);
	/* nothing to send: the process has exited, its status comes at once */
	r = h_run(argv, "");
	h_expect_exit(&r, 4);
	h_run_free(&r);
	free(id);
	ck_assert_int_eq(h_serve_stop(&s), 0);
	free(s.out);
out:
	free(data);
}
END_TEST

/* Unauthenticated and wrong-key requests get 401 and change nothing. */
START_TEST(serve_rejects_bad_keys)
{
	char *data = h_path_in("served");
	serve_proc s;
	if (!serve_start(&s, data, NULL))
		goto out;
	cli_run r = h_run(A("--api-url", s.url, "--token", s.key, "sandbox", "create", "-t",
	                    "default", "-o", "json"),
	                  NULL);
	h_expect_exit(&r, 0);
	char *id = json_id(&r, "id");
	h_run_free(&r);
	char *sb_path = NULL, *pause_path = NULL, *file_path = NULL;
	ck_assert_int_ge(asprintf(&sb_path, "/api/v1/sandboxes/%s", id), 0);
	ck_assert_int_ge(asprintf(&pause_path, "/api/v1/sandboxes/%s/pause", id), 0);
	ck_assert_int_ge(asprintf(&file_path, "/api/v1/sandboxes/%s/files?path=/workspace/x", id),
	                 0);
	const char *bad[] = {NULL, "Bearer s0_wrongwrongwrongwrong", "Bearer ", "Basic czA6eA==",
	                     "Bearer not-a-key"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_int_eq(h_http(s.url, "GET", "/api/v1/sandboxes", bad[i], NULL), 401);
		ck_assert_int_eq(h_http(s.url, "POST", "/api/v1/sandboxes", bad[i],
		                        "{\"template\":\"default\"}"),
		                 401);
		ck_assert_int_eq(h_http(s.url, "DELETE", sb_path, bad[i], NULL), 401);
		ck_assert_int_eq(h_http(s.url, "POST", pause_path, bad[i], NULL), 401);
		ck_assert_int_eq(h_http(s.url, "POST", file_path, bad[i], "data"), 401);
		ck_assert_int_eq(h_http(s.url, "POST", "/admin/v1/faults", bad[i], "{}"), 401);
	}
	/* health needs no key */
	ck_assert_int_eq(h_http(s.url, "GET", "/healthz", NULL, NULL), 200);
	/* the CLI with a wrong key: 401 on stderr, exit 1 */
	r = h_run(A("--api-url", s.url, "--token", "s0_wrongwrongwrongwrong", "sandbox", "delete",
	            id),
	          NULL);
	h_expect_exit(&r, 1);
	ck_assert_str_eq(r.err, "Error deleting sandbox: sandbox0 API error (401): unauthorized - "
	                        "invalid token\n");
	h_run_free(&r);
	/* nothing changed: one sandbox, still running, no file */
	r = h_run(A("--api-url", s.url, "--token", s.key, "sandbox", "list", "-o", "json"), NULL);
	h_expect_exit(&r, 0);
	ck_assert_msg(strstr(r.out, "\"Count\": 1,"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "\"status\": \"running\""), "%s", r.out);
	h_run_free(&r);
	r = h_run(A("--api-url", s.url, "--token", s.key, "sandbox", "files", "-s", id, "stat",
	            "/workspace/x"),
	          NULL);
	h_expect_exit(&r, 1);
	h_run_free(&r);
	ck_assert_int_eq(h_serve_stop(&s), 0);
	free(s.out);
	free(sb_path);
	free(pause_path);
	free(file_path);
	free(id);
out:
	free(data);
}
END_TEST

/* SIGTERM: no new connections, the request in flight finishes, the backend
 * closes cleanly (what it committed is there on the next start). */
START_TEST(serve_stops_after_inflight)
{
	char *data = h_path_in("served");
	serve_proc s;
	serve_start(&s, data, NULL);
	const char body[] = "{\"template\":\"default\"}";
	int fd = h_connect(s.url);
	ck_assert_int_ge(fd, 0);
	char *head = NULL;
	ck_assert_int_ge(asprintf(&head,
	                          "POST /api/v1/sandboxes HTTP/1.1\r\nHost: x\r\n"
	                          "Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
	                          "Content-Length: %zu\r\nExpect: 100-continue\r\n\r\n",
	                          s.key, strlen(body)),
	                 0);
	ck_assert_int_eq(write(fd, head, strlen(head)), (ssize_t)strlen(head));
	free(head);
	/* "100 Continue": the server has started the request (it counts as in flight) */
	ck_assert_int_eq(h_read_status(fd), 100);
	ck_assert_int_eq(kill(s.pid, SIGTERM), 0);
	/* it waits for the request in flight: still there a moment later */
	ck_assert_msg(!h_wait_gone(s.pid, 300), "s0 serve exited with a request in flight");
	/* new connections are refused meanwhile */
	ck_assert_int_eq(h_http(s.url, "GET", "/healthz", NULL, NULL), 0);
	ck_assert_int_eq(write(fd, body, strlen(body)), (ssize_t)strlen(body));
	ck_assert_int_eq(h_read_status(fd), 201);
	close(fd);
	ck_assert_int_eq(h_serve_stop(&s), 0);
	ck_assert_msg(strstr(s.out, "Received SIGTERM") && strstr(s.out, "Stopped."), "%s", s.out);
	free(s.out);
	/* the sandbox it created is in the data directory */
	cli_run r = h_run(A("--local", data, "sandbox", "list", "-o", "json"), NULL);
	h_expect_exit(&r, 0);
	ck_assert_msg(strstr(r.out, "\"Count\": 1,"), "%s", r.out);
	h_run_free(&r);
	free(data);
}
END_TEST

/* A stop signal pauses the running sandboxes first: a write made through the
 * server is there after a restart (the runtimes live in the server process). */
START_TEST(serve_stop_keeps_writes)
{
	char *data = h_path_in("served");
	static const char key[] = "s0_keepkeepkeepkeepkeepkeepkeep0123456789";
	serve_proc s;
	serve_start(&s, data, A("--token", key));
	cli_run r = h_run(A("--api-url", s.url, "--token", key, "sandbox", "create", "-t",
	                    "default", "-o", "json"),
	                  NULL);
	h_expect_exit(&r, 0);
	char *id = json_id(&r, "id");
	h_run_free(&r);
	r = h_run(A("--api-url", s.url, "--token", key, "sandbox", "files", "-s", id, "write",
	            "/workspace/kept.txt", "--data", "still here"),
	          NULL);
	h_expect_exit(&r, 0);
	h_run_free(&r);
	ck_assert_int_eq(h_serve_stop(&s), 0);
	ck_assert_msg(strstr(s.out, "Paused ") && strstr(s.out, id) && strstr(s.out, "Stopped."),
	              "%s", s.out);
	free(s.out);
	serve_start(&s, data, A("--token", key));
	r = h_run(A("--api-url", s.url, "--token", key, "sandbox", "files", "-s", id, "cat",
	            "/workspace/kept.txt"),
	          NULL);
	h_expect_exit(&r, 0);
	ck_assert_str_eq(r.out, "still here");
	h_run_free(&r);
	ck_assert_int_eq(h_serve_stop(&s), 0);
	free(s.out);
	/* a bad --token is refused before the data directory is touched */
	char *fresh = h_path_in("never-made");
	r = h_run(A("serve", "--data", fresh, "--token", "s0_short"), NULL);
	h_expect_exit(&r, 1);
	ck_assert_msg(strstr(r.err, "--token must"), "%s", r.err);
	ck_assert_int_ne(access(fresh, F_OK), 0);
	h_run_free(&r);
	free(fresh);
	free(id);
	free(data);
}
END_TEST

/* --local: the command pauses the sandbox on exit, the next one resumes it. */
START_TEST(local_write_then_cat)
{
	char *dir = h_path_in("embedded");
	cli_run r = h_run(A("--local", dir, "sandbox", "create", "-t", "default", "-o", "json"),
	                  NULL);
	h_expect_exit(&r, 0);
	char *id = json_id(&r, "id");
	h_run_free(&r);
	r = h_run(A("--local", dir, "sandbox", "files", "-s", id, "write", "/workspace/k.txt",
	            "--data", "kept"),
	          NULL);
	h_expect_exit(&r, 0);
	h_run_free(&r);
	r = h_run(A("--local", dir, "sandbox", "files", "-s", id, "cat", "/workspace/k.txt"), NULL);
	h_expect_exit(&r, 0);
	ck_assert_str_eq(r.out, "kept");
	h_run_free(&r);
	free(id);
	free(dir);
}
END_TEST

/* A bad --token is refused before anything is written; a bad cli-token is
 * named in the error. */
START_TEST(serve_bad_token)
{
	char *data = h_path_in("served");
	char *tok = h_path_in("served/cli-token");
	cli_run r = h_run(A("serve", "--data", data, "--token", "s0_short"), NULL);
	ck_assert_msg(r.status != 0, "accepted s0_short: %s", r.out);
	ck_assert_msg(strstr(r.err, "--token"), "%s", r.err);
	h_run_free(&r);
	ck_assert_msg(access(tok, F_OK) != 0, "the refused key was stored");
	/* a later start works and makes a key */
	serve_proc s;
	serve_start(&s, data, NULL);
	ck_assert_msg(!strncmp(s.key, "s0_", 3), "%s", s.out);
	ck_assert_int_eq(h_serve_stop(&s), 0);
	free(s.out);
	/* a bad stored key: the error names the file */
	FILE *f = fopen(tok, "w");
	ck_assert_ptr_nonnull(f);
	fputs("s0_bad\n", f);
	fclose(f);
	ck_assert_int_eq(chmod(tok, 0600), 0);
	r = h_run(A("serve", "--data", data), NULL);
	ck_assert_int_ne(r.status, 0);
	ck_assert_msg(strstr(r.err, tok) && strstr(r.err, "valid key"), "%s", r.err);
	h_run_free(&r);
	free(tok);
	free(data);
}
END_TEST

/* --runtime: sim can be named; an unknown runtime is a clear error naming
 * it (and the known ones), and nothing is served. Without --runtime (and
 * $S0_RUNTIME) the server asks for auto: where gvisor cannot run (here: runsc
 * made missing with S0_RUNSC) it serves sim and says why on stderr, and
 * asking for gvisor there fails naming the missing piece. */
START_TEST(serve_runtime_choice)
{
	char *data = h_path_in("served");
	cli_run r = h_run(A("serve", "--data", data, "--runtime", "gvisor-nope"), NULL);
	ck_assert_msg(r.status != 0, "accepted an unknown runtime: %s", r.out);
	ck_assert_msg(strstr(r.err, "unknown runtime \"gvisor-nope\"") && strstr(r.err, "sim") &&
	                  strstr(r.err, "gvisor"),
	              "%s", r.err);
	h_run_free(&r);
	char *sj = h_path_in("served/server.json");
	ck_assert_msg(access(sj, F_OK) != 0, "a refused runtime announced a server");
	free(sj);
	serve_proc s;
	serve_start(&s, data, A("--runtime", "sim"));
	ck_assert_msg(strstr(s.out, "runtime sim"), "%s", s.out);
	ck_assert_int_eq(h_serve_stop(&s), 0);
	free(s.out);
	/* an empty name is the default ($S0_RUNTIME, sim in these tests), and the
	 * banner says which (it said "runtime )") */
	serve_start(&s, data, A("--runtime", ""));
	ck_assert_msg(strstr(s.out, "runtime sim)"), "%s", s.out);
	ck_assert_int_eq(h_serve_stop(&s), 0);
	free(s.out);
	/* the default is auto: gvisor cannot run without runsc, so sim, and why */
	h_env_set("S0_RUNTIME", NULL);
	h_env_set("S0_RUNSC", "/nonexistent/runsc");
	serve_start(&s, data, NULL);
	ck_assert_msg(strstr(s.out, "runtime sim)"), "%s", s.out);
	ck_assert_int_eq(h_serve_stop(&s), 0);
	free(s.out);
	char *err_path = h_path_in("served.serve-stderr");
	FILE *f = fopen(err_path, "r");
	ck_assert_ptr_nonnull(f);
	char line[1024] = "";
	bool said = false;
	while (!said && fgets(line, sizeof line, f))
		said = strstr(line, "s0 serve: runtime auto: sim (gvisor: ") != NULL;
	fclose(f);
	ck_assert_msg(said, "no \"runtime auto: sim (gvisor: …)\" line on stderr");
	free(err_path);
	/* asking for gvisor where it cannot run: an error naming the piece */
	r = h_run(A("serve", "--data", data, "--runtime", "gvisor"), NULL);
	ck_assert_msg(r.status != 0, "gvisor served without runsc: %s", r.out);
	ck_assert_msg(strstr(r.err, geteuid() == 0 ? "S0_RUNSC=/nonexistent/runsc" : "root"), "%s",
	              r.err);
	h_run_free(&r);
	free(data);
}
END_TEST

/* The config file and the precedence of docs/wire.md §1.2. */
START_TEST(config_and_precedence)
{
	char *data = h_path_in("served");
	serve_proc s;
	if (!serve_start(&s, data, NULL))
		goto out;
	char *dead = NULL;
	ck_assert_int_ge(asprintf(&dead, "http://127.0.0.1:%d", h_closed_port()), 0);
	char *cfg = h_path_in("config.yaml");
	FILE *f = fopen(cfg, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "current-profile: dev\nprofiles:\n  dev:\n    api-url: %s\n"
	           "    token: ${MY_S0_KEY}\n  broken:\n    api-url: %s\n    token: s0_x\n"
	           "output:\n  format: json\n",
	        s.url, dead);
	fclose(f);
	h_env_set("MY_S0_KEY", s.key);
	/* the profile's URL and ${VAR} token, and output.format json */
	cli_run r = h_run(A("-c", cfg, "sandbox", "list"), NULL);
	h_expect_exit(&r, 0);
	ck_assert_msg(strstr(r.out, "\"Count\": 0"), "%s", r.out);
	h_run_free(&r);
	/* -o beats output.format */
	r = h_run(A("-c", cfg, "-o", "table", "sandbox", "list"), NULL);
	h_expect_exit(&r, 0);
	ck_assert_str_eq(r.out, "No sandboxes found.\n");
	h_run_free(&r);
	/* -p picks another profile */
	r = h_run(A("-c", cfg, "-p", "broken", "sandbox", "list"), NULL);
	h_expect_exit(&r, 1);
	h_run_free(&r);
	/* SANDBOX0_BASE_URL beats the profile; --api-url beats SANDBOX0_BASE_URL */
	h_env_set("SANDBOX0_BASE_URL", dead);
	r = h_run(A("-c", cfg, "sandbox", "list"), NULL);
	h_expect_exit(&r, 1);
	ck_assert_msg(strstr(r.err, "Error listing sandboxes: "), "%s", r.err);
	h_run_free(&r);
	r = h_run(A("-c", cfg, "--api-url", s.url, "sandbox", "list"), NULL);
	h_expect_exit(&r, 0);
	h_run_free(&r);
	/* SANDBOX0_TOKEN beats the profile's token; --token beats SANDBOX0_TOKEN */
	h_env_set("SANDBOX0_TOKEN", "s0_wrongwrongwrongwrong");
	r = h_run(A("-c", cfg, "--api-url", s.url, "sandbox", "list"), NULL);
	h_expect_exit(&r, 1);
	ck_assert_msg(strstr(r.err, "(401)"), "%s", r.err);
	h_run_free(&r);
	r = h_run(A("-c", cfg, "--api-url", s.url, "--token", s.key, "sandbox", "list"), NULL);
	h_expect_exit(&r, 0);
	h_run_free(&r);
	ck_assert_int_eq(h_serve_stop(&s), 0);
	free(s.out);
	free(cfg);
	free(dead);
out:
	free(data);
}
END_TEST

/* With no API URL the CLI starts the per-user server once and finds it again. */
START_TEST(local_mode_autostart)
{
	cli_run r = h_run(A("sandbox", "create", "-t", "default", "-o", "json"), NULL);
	h_expect_exit(&r, 0);
	ck_assert_msg(strstr(r.err, "s0: started a local server at http://127.0.0.1:"), "%s", r.err);
	char *id = json_id(&r, "id");
	h_run_free(&r);
	char *sj = h_path_in("data/server.json"), *tok = h_path_in("data/cli-token");
	struct stat st;
	ck_assert_int_eq(stat(tok, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	FILE *f = fopen(sj, "r");
	ck_assert_ptr_nonnull(f);
	char buf[1024] = {0};
	ck_assert_uint_gt(fread(buf, 1, sizeof buf - 1, f), 0);
	fclose(f);
	char *pid_s = strstr(buf, "\"pid\": ");
	ck_assert_ptr_nonnull(pid_s);
	pid_t pid = (pid_t)atol(pid_s + 7);
	/* the second command reuses it, quietly; the sandbox is still in its memory */
	r = h_run(A("sandbox", "get", id, "-o", "json"), NULL);
	h_expect_exit(&r, 0);
	ck_assert_str_eq(r.err, "");
	ck_assert_msg(strstr(r.out, "\"runtime_generation\": 1,"), "%s", r.out);
	h_run_free(&r);
	r = h_run(A("sandbox", "pause", id, "--wait", "-o", "json"), NULL);
	h_expect_exit(&r, 0);
	h_run_free(&r);
	/* stop it as a user would, and the next command starts a fresh one */
	ck_assert_int_eq(kill(pid, SIGTERM), 0);
	ck_assert(h_wait_gone(pid, 30000));
	ck_assert_msg(access(sj, F_OK) != 0, "server.json removed");
	r = h_run(A("sandbox", "get", id, "-o", "json"), NULL);
	h_expect_exit(&r, 0);
	ck_assert_msg(strstr(r.err, "s0: started a local server"), "%s", r.err);
	ck_assert_msg(strstr(r.out, "\"status\": \"paused\""), "%s", r.out);
	h_run_free(&r);
	f = fopen(sj, "r");
	ck_assert_ptr_nonnull(f);
	memset(buf, 0, sizeof buf);
	ck_assert_uint_gt(fread(buf, 1, sizeof buf - 1, f), 0);
	fclose(f);
	pid_s = strstr(buf, "\"pid\": ");
	ck_assert_ptr_nonnull(pid_s);
	pid = (pid_t)atol(pid_s + 7);
	ck_assert_int_eq(kill(pid, SIGTERM), 0);
	ck_assert(h_wait_gone(pid, 30000));
	free(id);
	free(sj);
	free(tok);
}
END_TEST

/* Several first commands at once: one server starts, the others use it. */
START_TEST(local_mode_race)
{
	enum { N = 5 };
	pid_t kids[N];
	for (int i = 0; i < N; i++) {
		kids[i] = fork();
		ck_assert_int_ge(kids[i], 0);
		if (kids[i] == 0) {
			cli_run r = h_run(A("sandbox", "list", "-o", "json"), NULL);
			int code = r.status != 0 ? 1 : strstr(r.err, "s0: started a local server") ? 10 : 0;
			if (code == 1)
				fprintf(stderr, "exit %d: %s%s", r.status, r.out, r.err);
			_exit(code);
		}
	}
	int started = 0;
	for (int i = 0; i < N; i++) {
		int ws = 0;
		ck_assert_int_eq(waitpid(kids[i], &ws, 0), kids[i]);
		ck_assert(WIFEXITED(ws));
		ck_assert_msg(WEXITSTATUS(ws) == 0 || WEXITSTATUS(ws) == 10, "a command failed");
		started += WEXITSTATUS(ws) == 10;
	}
	ck_assert_int_eq(started, 1);
	char *sj = h_path_in("data/server.json");
	FILE *f = fopen(sj, "r");
	ck_assert_ptr_nonnull(f);
	char buf[1024] = {0};
	ck_assert_uint_gt(fread(buf, 1, sizeof buf - 1, f), 0);
	fclose(f);
	char *pid_s = strstr(buf, "\"pid\": ");
	ck_assert_ptr_nonnull(pid_s);
	pid_t pid = (pid_t)atol(pid_s + 7);
	ck_assert_int_eq(kill(pid, SIGTERM), 0);
	ck_assert(h_wait_gone(pid, 30000));
	free(sj);
}
END_TEST

START_TEST(demo_runs)
{
	char *data = h_path_in("demo");
	cli_run r = h_run(A("demo", "--data", data), NULL);
	h_expect_exit(&r, 0);
	ck_assert_msg(strstr(r.out, "DONE: 0 expectation(s) failed"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "Timeline:"), "%s", r.out);
	/* the memory step ran (not skipped) and its state survived */
	ck_assert_msg(strstr(r.out, "ok   the REPL variable GREETING survived"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "ok   the background `sleep 100000` kept its PID"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "ok   /tmp/scratch survived"), "%s", r.out);
	ck_assert_msg(!strstr(r.out, "not available"), "%s", r.out);
	h_run_free(&r);
	/* the default is auto: where gvisor cannot run (runsc made missing), sim, saying why */
	h_env_set("S0_RUNTIME", NULL);
	h_env_set("S0_RUNSC", "/nonexistent/runsc");
	char *data2 = h_path_in("demo-auto");
	r = h_run(A("demo", "--data", data2), NULL);
	h_expect_exit(&r, 0);
	ck_assert_msg(strstr(r.out, "runtime sim (simulated; RootFS and storage are real), chosen by "
	                            "auto because gvisor: "),
	              "%s", r.out);
	h_run_free(&r);
	free(data2);
	free(data);
}
END_TEST

/* --source: a missing or pseudo-filesystem source is an error; FIFOs and
 * devices in a tree are skipped (no hang), files over the cap are not copied. */
START_TEST(demo_source_checks)
{
	char *data = h_path_in("demo");
	cli_run r = h_run(A("demo", "--data", data, "--source", "/nonexistent/tree"), NULL);
	h_expect_exit(&r, 1);
	ck_assert_msg(strstr(r.err, "/nonexistent/tree: No such file or directory"), "%s", r.err);
	h_run_free(&r);
	r = h_run(A("demo", "--data", data, "--source", "/proc"), NULL);
	h_expect_exit(&r, 1);
	ck_assert_msg(strstr(r.err, "pseudo filesystem"), "%s", r.err);
	h_run_free(&r);
	char *src = h_path_in("src"), *pkg = h_path_in("src/pkg"), *file = h_path_in("src/pkg/a.txt");
	char *fifo = h_path_in("src/pkg/fifo"), *big = h_path_in("src/big");
	char *bigf = h_path_in("src/big/huge.bin");
	ck_assert_int_eq(mkdir(src, 0755), 0);
	ck_assert_int_eq(mkdir(pkg, 0755), 0);
	ck_assert_int_eq(mkdir(big, 0755), 0);
	FILE *f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fputs("hello", f);
	fclose(f);
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	int fd = open(bigf, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 40ll << 20), 0); /* sparse, over the 24 MiB cap */
	close(fd);
	r = h_run(A("demo", "--data", data, "--source", src), NULL);
	ck_assert_msg(strstr(r.out, "staged 1 files (0.0 MiB)"), "%s", r.out);
	h_run_free(&r);
	free(src);
	free(pkg);
	free(file);
	free(fifo);
	free(big);
	free(bigf);
	free(data);
}
END_TEST

static Suite *cli_suite(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("embedded");
	tcase_add_checked_fixture(tc, h_home_setup, h_home_teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, embedded_golden);
	tcase_add_test(tc, usage_golden);
	tcase_add_test(tc, wait_text_output);
	tcase_add_test(tc, exec_and_run);
	tcase_add_test(tc, create_from_config_file);
	tcase_add_test(tc, demo_runs);
	tcase_add_test(tc, local_write_then_cat);
	tcase_add_test(tc, demo_source_checks);
	suite_add_tcase(s, tc);
	tc = tcase_create("serve");
	tcase_add_checked_fixture(tc, h_home_setup, h_home_teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, serve_golden);
	tcase_add_test(tc, files_watch_over_serve);
	tcase_add_test(tc, serve_rejects_bad_keys);
	tcase_add_test(tc, serve_stops_after_inflight);
	tcase_add_test(tc, serve_stop_keeps_writes);
	tcase_add_test(tc, serve_bad_token);
	tcase_add_test(tc, serve_runtime_choice);
	tcase_add_test(tc, config_and_precedence);
	tcase_add_test(tc, local_mode_autostart);
	tcase_add_test(tc, local_mode_race);
	suite_add_tcase(s, tc);
	return s;
}

Suite *cli_teams_suite(void); /* check_cli_teams.c */
Suite *cli_service_suite(void); /* check_cli_service.c */

S0_TEST_MAIN(cli_suite, cli_teams_suite, cli_service_suite)
