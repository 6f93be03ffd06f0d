/*
 * The gvisor runtime under the lifecycle engine (s0_local_options.runtime
 * = "gvisor"), through the public client: inspection names it, a context
 * runs a real program, a filesystem-only pause stops the generation (its
 * processes gone, the terminal proof given), a resume starts a new one
 * (runtime_id changes, runtime_generation + 1) on the same root tree, a
 * REPL context's stream (docs/wire.md §8.2) runs its inputs in that REPL, and
 * asking for the runtime where runsc is missing fails the open naming it.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "common/internal.h"
#include "common/json.h"
#include "local/runtime/gvisor/gvisor.h"
#include "lt.h"
#include "gv_host.h"

/* A file watch on @p id subscribed to /workspace recursively (sandbox0/streams.h). */
static s0_stream *watch_workspace(lt *t, const char *id)
{
	s0_stream_options o = S0_STREAM_OPTIONS_INIT;
	o.kind = S0_STREAM_FILES_WATCH;
	o.sandbox_id = id;
	s0_stream *st = NULL;
	ck_assert_int_eq(s0_local_stream_open(t->local, &o, &st, NULL), S0_OK);
	const char *sub = "{\"action\":\"subscribe\",\"path\":\"/workspace\",\"recursive\":true}";
	ck_assert_int_eq(s0_stream_send(st, sub, strlen(sub), NULL), S0_OK);
	return st;
}

/* The next message of @p st: its "event" (or "type"), then " ", its "path". */
static char *next_event(s0_stream *st)
{
	char *m = NULL;
	ck_assert_int_eq(s0_stream_recv(st, 5000, &m, NULL, NULL), S0_OK);
	cJSON *o = cJSON_Parse(m);
	s0_free(m);
	ck_assert_ptr_nonnull(o);
	const char *ev = s0__json_str(o, "event");
	char *out = s0__asprintf("%s %s", ev ? ev : s0__json_str0(o, "type"),
	                         s0__json_str0(o, "path"));
	cJSON_Delete(o);
	return out;
}

/* This process's inotify instances (the gvisor watcher holds one only while armed). */
static int inotify_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	ck_assert_ptr_nonnull(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		char link[300], to[64] = "";
		snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
		if (readlink(link, to, sizeof to - 1) > 0 && strstr(to, "inotify"))
			n++;
	}
	closedir(d);
	return n;
}

/* Wait up to 10 s for inotify_fds() to be @p want (or above it with @p at_least). */
static void wait_inotify(int want, bool at_least)
{
	int64_t until = s0__real_monotonic_ms() + 10000;
	int n;
	while ((n = inotify_fds()) != want && !(at_least && n > want) &&
	       s0__real_monotonic_ms() < until) {
		struct timespec ts = {0, 10 * 1000000L};
		nanosleep(&ts, NULL);
	}
	ck_assert_msg(n == want || (at_least && n > want), "%d inotify instances, want %d", n,
	              want);
}

static void open_gvisor(lt *t)
{
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.manual_clock = 1;
	o.runtime = "gvisor";
	lt_open(t, &o);
}

/* Run @p cmd in REPL @p ctx of sandbox @p id; its stdout (free()). */
static char *sh(lt *t, const char *id, const char *ctx, const char *cmd)
{
	return lt_sh(t, id, ctx, cmd, NULL);
}

/* The next message of @p st (waits up to 10 s: each input's answer is
 * queued when s0_stream_send() returns); its "type", "source" or
 * "request_id" and "data" joined as "type:source-or-rid:data". */
static char *next_msg(s0_stream *st)
{
	char *text = NULL;
	s0_error *e = NULL;
	int rc = s0_stream_recv(st, 10000, &text, NULL, &e);
	ck_assert_msg(rc == S0_OK, "recv: %d %s", rc, e ? s0_error_message(e) : "");
	cJSON *m = cJSON_Parse(text);
	s0_free(text);
	const char *src = s0__json_str(m, "source");
	const char *rid = s0__json_str(m, "request_id");
	char buf[256];
	snprintf(buf, sizeof buf, "%s:%s:%s", s0__json_str0(m, "type"),
	         src ? src : rid ? rid : "", s0__json_str0(m, "data"));
	cJSON_Delete(m);
	return strdup(buf);
}

/* Send input @p data with request id @p rid on @p st. */
static void send_input(s0_stream *st, const char *rid, const char *data)
{
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "type", "input");
	cJSON_AddStringToObject(m, "data", data);
	cJSON_AddStringToObject(m, "request_id", rid);
	char *text = cJSON_PrintUnformatted(m);
	cJSON_Delete(m);
	ck_assert_int_eq(s0_stream_send(st, text, strlen(text), NULL), S0_OK);
	free(text);
}

/* ST-01: a REPL context's stream (what `s0 sandbox attach` shows): each input runs
 * in the REPL, its output (by source) then a done with its request id, in
 * order (a byte that is not UTF-8 as U+FFFD); a variable set through the
 * stream is seen by a later run call. */
static void repl_stream_echoes(lt *t, const char *id)
{
	char *ctx = lt_repl(t, id);
	s0_stream_options o = S0_STREAM_OPTIONS_INIT;
	o.kind = S0_STREAM_CONTEXT;
	o.sandbox_id = id;
	o.id = ctx;
	s0_stream *st = NULL;
	s0_error *e = NULL;
	int rc = s0_local_stream_open(t->local, &o, &st, &e);
	ck_assert_msg(rc == S0_OK, "open: %s", e ? s0_error_message(e) : "?");
	send_input(st, "r1", "S0V=via-stream; echo repl-in\n");
	send_input(st, "r2", "echo two; echo err >&2\n");
	send_input(st, "r3", "printf 'a\\377b\\n'\n"); /* not UTF-8: U+FFFD, the stream goes on */
	const char *want[] = {"output:stdout:repl-in\n", "done:r1:", "output:stdout:two\n",
	                      "output:stderr:err\n", "done:r2:", "output:stdout:a\xEF\xBF\xBD" "b\n",
	                      "done:r3:"};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
		char *got = next_msg(st);
		ck_assert_str_eq(got, want[i]);
		free(got);
	}
	char *out = sh(t, id, ctx, "echo $S0V");
	ck_assert_str_eq(out, "via-stream");
	free(out);
	s0_stream_free(st);
	free(ctx);
}

/* Inspection names the runtime; a sandbox of the default template (the
 * driver's busybox tree, runtime.h root_tree) runs real programs on its
 * RootFS branch mounted through the carrier; the files API and the
 * programs see the same files; a write followed at once by a
 * filesystem-only pause is in the committed head (read back while paused,
 * from the RootFS); a recursive file watch of /workspace sees the files
 * API's changes in order, the programs' own (a later append again, a tree
 * made in one command whole) and the pause ends it with 1001 (ST-03); the
 * resume starts a new generation (runtime_id
 * changes, runtime_generation + 1) whose processes are new. */
START_TEST(engine_runs_gvisor_and_pauses)
{
	LT_ROW("FS-01");
	LT_ROW("ST-03");
	lt t;
	open_gvisor(&t);
	char *json = NULL;
	ck_assert_int_eq(s0_local_inspect(t.local, NULL, &json, NULL), S0_OK);
	cJSON *ins = cJSON_Parse(json);
	const cJSON *rt = cJSON_GetObjectItem(cJSON_GetObjectItem(ins, "node"), "runtime");
	ck_assert_str_eq(s0__json_str(rt, "name"), "gvisor");
	char *caps = cJSON_PrintUnformatted(cJSON_GetObjectItem(rt, "capabilities"));
	ck_assert_str_eq(caps, "[\"memory\",\"network\",\"contexts\",\"sessions\","
	                       "\"real_processes\",\"kernel_fs\"]");
	free(caps);
	cJSON_Delete(ins);
	s0_free(json);
	char *id = lt_claim(&t, NULL, NULL); /* the default template: the driver's busybox tree */
	lt_assert_running(&t, id);
	char *rt0 = lt_runtime_id(&t, id);
	int64_t gen0 = lt_generation(&t, id);
	char *ctx = lt_repl(&t, id);
	char *out = sh(&t, id, ctx, "uname -r; cat /proc/mounts | grep -c ' / '");
	ck_assert_msg(strstr(out, "gvisor"), "%s", out);
	free(out);
	/* ST-03: a file watch sees the files API's changes, in order */
	s0_stream *st = watch_workspace(&t, id);
	const char *want[] = {"subscribed /workspace", "create /workspace/api.txt",
	                      "write /workspace/api.txt", "create /workspace/d",
	                      "create /workspace/d/x", "write /workspace/d/x",
	                      "rename /workspace/d/x",
	                      "create /workspace/d/y", "remove /workspace/d",
	                      "create /workspace/p", "create /workspace/p/q",
	                      "create /workspace/r", "create /workspace/r/s",
	                      "write /workspace/r/s"};
	/* the files API and the programs: the same files, both ways */
	lt_write(&t, id, "/workspace/api.txt", "from the api\n");
	ck_assert_int_eq(s0_files_mkdir(t.c, id, "/workspace/d", false, NULL), S0_OK);
	lt_write(&t, id, "/workspace/d/x", "x");
	ck_assert_int_eq(s0_files_move(t.c, id, "/workspace/d/x", "/workspace/d/y", NULL), S0_OK);
	ck_assert_int_eq(s0_files_delete(t.c, id, "/workspace/d", NULL), S0_OK);
	/* the directories a recursive mkdir or a write makes, outermost first */
	ck_assert_int_eq(s0_files_mkdir(t.c, id, "/workspace/p/q", true, NULL), S0_OK);
	ck_assert_int_eq(s0_files_mkdir(t.c, id, "/workspace/p/q", true, NULL), S0_OK);
	lt_write(&t, id, "/workspace/r/s", "s");
	for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
		char *ev = next_event(st);
		ck_assert_str_eq(ev, want[i]);
		free(ev);
	}
	/* ST-03: and the programs' own changes (host inotify, gv_watch.c; armed by the
	 * files API calls above), once each: a new directory is watched before its event */
	out = sh(&t, id, ctx, "mkdir /workspace/g && echo ok");
	ck_assert_str_eq(out, "ok");
	free(out);
	char *ev = next_event(st);
	ck_assert_str_eq(ev, "create /workspace/g");
	free(ev);
	out = sh(&t, id, ctx, "cd /workspace/g && echo hi > f && mv f h && chmod 600 h && rm h && "
	                      "echo ok");
	ck_assert_str_eq(out, "ok");
	free(out);
	lt_write(&t, id, "/workspace/g/api", "a"); /* the files API's, once still */
	const char *guest[] = {"create /workspace/g/f", "write /workspace/g/f",
	                       "rename /workspace/g/f", "create /workspace/g/h",
	                       "chmod /workspace/g/h", "remove /workspace/g/h",
	                       "create /workspace/g/api", "write /workspace/g/api"};
	for (size_t i = 0; i < sizeof guest / sizeof *guest; i++) {
		ev = next_event(st);
		ck_assert_str_eq(ev, guest[i]);
		free(ev);
	}
	/* ST-03: a later append is told again (after the guest's own write and after
	 * the files API's), and a tree made in one command is told whole, parents
	 * first (what a new directory holds when its mark is added: a scan) */
	const char *const appends[] = {"echo 1 >> /workspace/g/ap && echo ok",
	                               "echo 2 >> /workspace/g/ap && echo ok", NULL,
	                               "echo 3 >> /workspace/g/ap && echo ok"};
	for (size_t i = 0; i < 4; i++) {
		if (appends[i]) {
			out = sh(&t, id, ctx, appends[i]);
			ck_assert_str_eq(out, "ok");
			free(out);
		} else {
			lt_write(&t, id, "/workspace/g/ap", "api");
		}
		if (!i) {
			ev = next_event(st);
			ck_assert_str_eq(ev, "create /workspace/g/ap");
			free(ev);
		}
		ev = next_event(st);
		ck_assert_str_eq(ev, "write /workspace/g/ap");
		free(ev);
	}
	out = sh(&t, id, ctx, "echo b > /workspace/g/$(printf '\\377')b && echo ok");
	ck_assert_str_eq(out, "ok");
	free(out);
	ev = next_event(st); /* a name that is not UTF-8: U+FFFD, the stream goes on */
	ck_assert_str_eq(ev, "create /workspace/g/\xEF\xBF\xBD" "b");
	free(ev);
	ev = next_event(st);
	ck_assert_str_eq(ev, "write /workspace/g/\xEF\xBF\xBD" "b");
	free(ev);
	out = sh(&t, id, ctx, "mkdir -p /workspace/m/n/o && echo x > /workspace/m/n/o/f && echo ok");
	ck_assert_str_eq(out, "ok");
	free(out);
	const char *tree[] = {"create /workspace/m", "create /workspace/m/n",
	                      "create /workspace/m/n/o", "create /workspace/m/n/o/f",
	                      "write /workspace/m/n/o/f"};
	for (size_t i = 0; i < sizeof tree / sizeof *tree; i++) {
		ev = next_event(st);
		ck_assert_str_eq(ev, tree[i]);
		free(ev);
	}
	/* the last unsubscribe disarms the watcher (no inotify instance while no
	 * watch, the stream still open); a new subscribe arms it again */
	ck_assert_int_ge(inotify_fds(), 1);
	const char *unsub = "{\"action\":\"unsubscribe\",\"watch_id\":\"w1\"}";
	ck_assert_int_eq(s0_stream_send(st, unsub, strlen(unsub), NULL), S0_OK);
	ev = next_event(st);
	ck_assert_str_eq(ev, "unsubscribed "); /* no path in it */
	free(ev);
	wait_inotify(0, false);
	const char *resub = "{\"action\":\"subscribe\",\"path\":\"/workspace/g\"}";
	ck_assert_int_eq(s0_stream_send(st, resub, strlen(resub), NULL), S0_OK);
	ev = next_event(st);
	ck_assert_str_eq(ev, "subscribed /workspace/g");
	free(ev);
	wait_inotify(1, true); /* armed by the thread within 100 ms */
	out = sh(&t, id, ctx, "echo again > /workspace/g/again && echo ok");
	ck_assert_str_eq(out, "ok");
	free(out);
	ev = next_event(st);
	ck_assert_str_eq(ev, "create /workspace/g/again");
	free(ev);
	ev = next_event(st);
	ck_assert_str_eq(ev, "write /workspace/g/again");
	free(ev);
	out = sh(&t, id, ctx, "cat /workspace/api.txt");
	ck_assert_str_eq(out, "from the api");
	free(out);
	out = sh(&t, id, ctx, "echo kept > /root/kept.txt; sleep 1000 & echo ok");
	ck_assert_str_eq(out, "ok");
	free(out);
	ck_assert(lt_file_is(&t, id, "/root/kept.txt", "kept\n"));
	free(ctx);

	lt_pause(&t, id); /* at once after the write */
	lt_assert_paused(&t, id);
	char *x = NULL; /* the pause ended the watch */
	ck_assert_int_eq(s0_stream_recv(st, 5000, &x, NULL, NULL), S0_ITEROVER);
	ck_assert_int_eq(s0_stream_close_code(st, NULL), 1001);
	s0_stream_free(st);
	ck_assert(lt_file_is(&t, id, "/root/kept.txt", "kept\n")); /* from the committed head */
	ck_assert(lt_file_is(&t, id, "/workspace/api.txt", "from the api\n"));
	lt_resume(&t, id);
	lt_assert_running(&t, id);
	char *rt1 = lt_runtime_id(&t, id);
	ck_assert_str_ne(rt0, rt1);
	ck_assert_int_eq(lt_generation(&t, id), gen0 + 1);
	ctx = lt_repl(&t, id);
	out = sh(&t, id, ctx, "cat /root/kept.txt; pgrep sleep | grep -c .; true");
	ck_assert_str_eq(out, "kept\n0"); /* the file stayed, the process did not */
	free(out);
	free(ctx);
	repl_stream_echoes(&t, id);
	free(rt0);
	free(rt1);
	free(id);
	lt_close(&t);
}
END_TEST

/* Where the backend dies: while running (no fault), or at a crash point
 * of a pause or of a resume (manager_restart@<point>, SIGKILL there). */
static const struct {
	const char *point; /* NULL: kill -9 while running */
	bool resume;       /* the point is on the resume (after a clean pause) */
} CRASHES[] = {
	{NULL, false},
	{"manager_restart@intent-recorded", false},
	{"manager_restart@published", false},
	{"manager_restart@committed", false},
	{"manager_restart@released", false},
	{"manager_restart@resume-ready", true},
};

/* REC-01, PTX-05: `kill -9` of the backend while a gvisor sandbox runs on
 * its carrier, and at each crash point of a pause and of a resume: the
 * next open reclaims the dead runtime's runsc sandbox, carrier (mounts,
 * loop device, FUSE server's namespace) and cgroups, nothing of it is
 * left on the host, and the sandbox comes back from its last committed
 * head (the write before the clean pause is there). */
START_TEST(crash_while_running_recovers)
{
	LT_ROW("REC-01");
	LT_ROW("PTX-05");
	const char *point = CRASHES[_i].point;
	bool on_resume = CRASHES[_i].resume;
	fprintf(stderr, "crash at %s%s\n", point ? point : "a running sandbox",
	        on_resume ? " (resume)" : "");
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); /* the killed child's daemons come here */
	char *dir = s0_test_tmpdir("gvcrash");
	char *idfile = malloc(strlen(dir) + 8);
	sprintf(idfile, "%s/id", dir);
	pid_t pid = fork();
	if (pid == 0) { /* the backend that dies */
		lt t;
		gv_open_dir(&t, dir);
		char *id = lt_claim(&t, NULL, NULL);
		char *ctx = lt_repl(&t, id);
		free(lt_sh(&t, id, ctx, "echo committed > /root/c.txt", NULL));
		lt_pause(&t, id);
		lt_resume(&t, id);
		free(ctx);
		ctx = lt_repl(&t, id);
		free(lt_sh(&t, id, ctx, "echo later > /root/l.txt; sleep 1000 & true", NULL));
		if (on_resume)
			lt_pause(&t, id);
		char *rid = lt_runtime_id(&t, id);
		FILE *f = fopen(idfile, "we");
		fprintf(f, "%s %s", id, *rid ? rid : "none");
		fclose(f);
		if (point) {
			s0_error *e = NULL;
			if (s0_local_fault_arm(t.local, point, S0_FAULT_CRASH, 1, 0, &e) != S0_OK)
				_exit(4);
			s0_sandbox_info *sb = NULL;
			if (on_resume)
				s0_sandbox_resume_and_wait(t.c, id, NULL, &sb, &e);
			else
				s0_sandbox_pause_and_wait(t.c, id, NULL, &sb, &e);
			lt_quiesce(&t);
			_exit(5); /* the crash point was not reached */
		}
		kill(getpid(), SIGKILL);
		_exit(3);
	}
	int st = 0;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "child status %d", st);
	FILE *f = fopen(idfile, "re");
	ck_assert_ptr_nonnull(f);
	char id[128] = "", rid[128] = "";
	ck_assert_int_eq(fscanf(f, "%127s %127s", id, rid), 2);
	fclose(f);
	char what[512];
	if (!point) {
		gv_leftovers(rid, what, sizeof what);
		ck_assert_msg(what[0], "the killed backend left nothing running?"); /* it runs on */
	}

	lt t;
	gv_open_dir(&t, dir);
	lt_quiesce(&t);
	if (lt_status(&t, id) != S0_STATUS_RUNNING)
		lt_resume(&t, id);
	lt_assert_running(&t, id);
	/* nothing of the dead runtimes: what runs under dir is the live one's */
	char *live = lt_runtime_id(&t, id);
	gv_leftovers_except(dir, live, what, sizeof what);
	ck_assert_msg(!what[0], "left after reopening (live %s, dead %s): %s", live, rid, what);
	free(live);
	char *ctx = lt_repl(&t, id);
	char *out = lt_sh(&t, id, ctx, "cat /root/c.txt; pgrep sleep | grep -c .; true", NULL);
	ck_assert_str_eq(out, "committed\n0");
	free(out);
	free(ctx);
	t.keep_dir = false;
	lt_close(&t);
	gv_leftovers(dir, what, sizeof what);
	ck_assert_msg(!what[0], "left after close: %s", what);
	free(idfile);
	free(dir);
}
END_TEST

/* A snapshot of a running gvisor sandbox is a consistent cut (runsc
 * pause, the mounted ext4 frozen, the branch published, thawed, resumed):
 * a sandbox claimed from it has what was written before and not what was
 * written after; the running sandbox carries on. */
START_TEST(snapshot_of_running_sandbox)
{
	lt t;
	open_gvisor(&t);
	char *id = lt_claim(&t, NULL, NULL);
	char *ctx = lt_repl(&t, id);
	free(lt_sh(&t, id, ctx, "echo before > /root/before.txt; X=kept", NULL));
	s0_snapshot_info *snap = NULL;
	s0_error *e = NULL;
	int rc = s0_snapshot_create(t.c, id, "cut", NULL, 0, &snap, &e);
	ck_assert_msg(rc == S0_OK, "snapshot: %s", e ? s0_error_message(e) : "?");
	char *out = lt_sh(&t, id, ctx, "echo after > /root/after.txt; echo $X", NULL);
	ck_assert_str_eq(out, "kept"); /* the same shell, paused and resumed */
	free(out);
	s0_sandbox_info *sb = NULL;
	rc = s0_sandbox_claim(t.c, "default", s0_snapshot_info_id(snap), NULL, &sb, &e);
	ck_assert_msg(rc == S0_OK, "claim from snapshot: %s", e ? s0_error_message(e) : "?");
	char *id2 = strdup(s0_sandbox_info_id(sb));
	s0_sandbox_info_free(sb);
	char *ctx2 = lt_repl(&t, id2);
	out = lt_sh(&t, id2, ctx2, "cat /root/before.txt; ls /root/after.txt 2>/dev/null; true", NULL);
	ck_assert_str_eq(out, "before");
	free(out);
	s0_snapshot_info_free(snap);
	free(ctx2);
	free(id2);
	free(ctx);
	free(id);
	lt_close(&t);
}
END_TEST

START_TEST(open_without_runsc_names_it)
{
	setenv("S0_RUNSC", "/nonexistent/runsc", 1);
	char *dir = s0_test_tmpdir("gvl");
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.manual_clock = 1;
	o.runtime = "gvisor";
	s0_local *l = NULL;
	s0_error *e = NULL;
	ck_assert_int_eq(s0_local_open(dir, &o, &l, &e), S0_EUNAVAILABLE);
	ck_assert_ptr_null(l);
	ck_assert_msg(strstr(s0_error_message(e), "S0_RUNSC"), "%s", s0_error_message(e));
	s0_error_free(e);
	unsetenv("S0_RUNSC");
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

static Suite *gvisor_local_suite(void)
{
	Suite *s = suite_create("gvisor-local");
	TCase *tc = tcase_create("engine");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, engine_runs_gvisor_and_pauses);
	tcase_add_test(tc, open_without_runsc_names_it);
	tcase_add_loop_test(tc, crash_while_running_recovers, 0,
	                    (int)(sizeof CRASHES / sizeof CRASHES[0]));
	tcase_add_test(tc, snapshot_of_running_sandbox);
	suite_add_tcase(s, tc);
	return s;
}

S0_TEST_MAIN(gvisor_local_suite)
