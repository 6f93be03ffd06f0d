/*
 * The built-in shell (local/runtime/sim/shell.h): every builtin, expansion,
 * redirections, && || ;, background jobs, virtual time, errors. Each
 * test drives a REPL context through s0__ctx_exec_json.
 */
#include "rtsuites.h"

#include <stdio.h>
#include <stdlib.h>

#define OUT_EQ(f, id, cmd, want)                                                         \
	do {                                                                             \
		char *o_ = rtfix_out((f), (id), (cmd));                                  \
		ck_assert_msg(!strcmp(o_, (want)), "%s: got [%s] want [%s]", (cmd), o_, (want)); \
		free(o_);                                                                \
	} while (0)

static rtfix F;
static char *R;

static void setup(void)
{
	rtfix_open(&F, NULL);
	R = rtfix_repl(&F);
}

static void teardown(void)
{
	free(R);
	rtfix_close(&F);
}

START_TEST(echo_printf)
{
	OUT_EQ(&F, R, "echo hello   world", "hello world\n");
	OUT_EQ(&F, R, "echo -n a; echo b", "ab\n");
	OUT_EQ(&F, R, "echo", "\n");
	OUT_EQ(&F, R, "printf '%s-%d|%5s|%-3d|%x|%o|%c|%%\\n' a 42 r 7 255 8 xyz", "a-42|    r|7  |ff|10|x|%\n");
	OUT_EQ(&F, R, "printf '%s,' a b c", "a,b,c,");
	OUT_EQ(&F, R, "printf 'no newline'", "no newline");
	OUT_EQ(&F, R, "printf '%d' x; echo \" $?\"", "0 1\n");
	OUT_EQ(&F, R, "printf; echo $?", "2\n");
}
END_TEST

START_TEST(quotes_and_expansion)
{
	OUT_EQ(&F, R, "X=5; echo $X ${X}y \"$X\" '$X' \\$X", "5 5y 5 $X $X\n");
	OUT_EQ(&F, R, "echo \"a  b\" 'c  d' e\\ f", "a  b c  d e f\n");
	OUT_EQ(&F, R, "echo \"q\\\"q\" \"\\$\" \"\\\\\"", "q\"q $ \\\n");
	OUT_EQ(&F, R, "echo $NOPE x \"$NOPE\"y", "x y\n");
	OUT_EQ(&F, R, "echo [\"\"] [''] $ a$", "[] [] $ a$\n");
	OUT_EQ(&F, R, "false; echo $?; true; echo $?", "1\n0\n");
	OUT_EQ(&F, R, "echo a # a comment", "a\n");
	OUT_EQ(&F, R, "Y=1 Z=2; echo $Y$Z", "12\n");
	int32_t pid;
	ck_assert_int_eq(s0__ctx_pid(F.g, R, &pid, NULL), S0_OK);
	char want[32];
	snprintf(want, sizeof want, "%d\n", (int)pid);
	OUT_EQ(&F, R, "echo $$", want);
	OUT_EQ(&F, R, "echo [$!]", "[]\n");
}
END_TEST

START_TEST(export_unset_env)
{
	OUT_EQ(&F, R, "A=1; export B=2; env", "B=2\nPWD=/workspace\n");
	OUT_EQ(&F, R, "export A; env", "A=1\nB=2\nPWD=/workspace\n");
	OUT_EQ(&F, R, "C=3 env; env", "A=1\nB=2\nC=3\nPWD=/workspace\nA=1\nB=2\nPWD=/workspace\n");
	OUT_EQ(&F, R, "unset A B; env; echo [$A]", "PWD=/workspace\n[]\n");
	OUT_EQ(&F, R, "export 1x=2; echo $?", "1\n");
	OUT_EQ(&F, R, "export", "export PWD=/workspace\n");
	char *err = rtfix_err(&F, R, "unset -x");
	ck_assert_ptr_nonnull(strstr(err, "not a valid identifier"));
	free(err);
	OUT_EQ(&F, R, "env a; echo $?", "2\n");
}
END_TEST

START_TEST(and_or_sequence)
{
	OUT_EQ(&F, R, "false && echo a || echo b", "b\n");
	OUT_EQ(&F, R, "true && echo a || echo b", "a\n");
	OUT_EQ(&F, R, "true || echo a && echo c", "c\n");
	OUT_EQ(&F, R, "true && echo a; echo c", "a\nc\n");
	OUT_EQ(&F, R, "false || false; echo $?", "1\n");
	OUT_EQ(&F, R, "echo 1\necho 2", "1\n2\n");
	OUT_EQ(&F, R, "echo a &&\n echo b", "a\nb\n");
}
END_TEST

START_TEST(redirections)
{
	OUT_EQ(&F, R, "echo hi > /tmp/x; echo there >> /tmp/x; cat < /tmp/x", "hi\nthere\n");
	OUT_EQ(&F, R, "echo new > /tmp/x; cat /tmp/x", "new\n");
	OUT_EQ(&F, R, "cat /nope 2> /tmp/err; echo $?; cat /tmp/err",
	       "1\ncat: /nope: No such file or directory\n");
	OUT_EQ(&F, R, "cat /nope 2>&1", "cat: /nope: No such file or directory\n");
	OUT_EQ(&F, R, "echo out > /workspace/o.txt 2>&1; cat o.txt", "out\n");
	OUT_EQ(&F, R, "cd /tmp; echo rel > r; cat /tmp/r; cd /workspace", "rel\n");
	OUT_EQ(&F, R, "cat < /missing; echo $?", "1\n");
	char *err = rtfix_err(&F, R, "cat < /missing");
	ASSERT_STR(err, "sh: /missing: No such file or directory\n");
	free(err);
	OUT_EQ(&F, R, "echo x > /tmp; echo $?", "1\n");
	OUT_EQ(&F, R, "> /tmp/empty; cat /tmp/empty; echo [$?]", "[0]\n");
	char *f = rtfix_get(&F, "/tmp/x");
	ASSERT_STR(f, "new\n");
	free(f);
	OUT_EQ(&F, R, "echo x 3>&1; echo x 4>&7; echo $?", "x\n1\n");
}
END_TEST

START_TEST(files_builtins)
{
	OUT_EQ(&F, R, "mkdir -p /workspace/a/b && ls /workspace/a", "b\n");
	OUT_EQ(&F, R, "mkdir /workspace/a; echo $?", "1\n");
	OUT_EQ(&F, R, "mkdir /workspace/x/y; echo $?", "1\n");
	OUT_EQ(&F, R, "touch a/f1 a/.h && ls a && ls -a a", "b\nf1\n.h\nb\nf1\n");
	OUT_EQ(&F, R, "echo data > a/f1; touch a/f1; cat a/f1", "data\n");
	OUT_EQ(&F, R, "chmod 600 a/f1 && ls -l a/f1", "-rw-------          5 a/f1\n");
	OUT_EQ(&F, R, "chmod 9z a/f1; echo $?", "1\n");
	OUT_EQ(&F, R, "cp a/f1 a/f2 && cat a/f2", "data\n");
	OUT_EQ(&F, R, "cp a/f1 a/b && ls a/b", "f1\n");
	OUT_EQ(&F, R, "cp a a2; echo $?; cp -r a a2 && ls a2 a2/b", "1\na2:\nb\nf1\nf2\na2/b:\nf1\n");
	OUT_EQ(&F, R, "mv a2/f2 a2/f3 && ls a2", "b\nf1\nf3\n");
	OUT_EQ(&F, R, "mv a2/f3 a2/b && ls a2/b", "f1\nf3\n");
	OUT_EQ(&F, R, "mv /nope x; echo $?", "1\n");
	OUT_EQ(&F, R, "rm a2; echo $?", "1\n");
	OUT_EQ(&F, R, "rm -r a2 && ls; rm nope; echo $?; rm -f nope; echo $?", "a\n1\n0\n");
	OUT_EQ(&F, R, "ls nope; echo $?", "1\n");
	OUT_EQ(&F, R, "ls -l /workspace/a/b", "-rw-------          5 f1\n");
	OUT_EQ(&F, R, "ls -q; echo $?", "2\n");
	OUT_EQ(&F, R, "echo t > /tmp/t; ls /tmp; rm /tmp/t; ls /tmp", "t\n");
}
END_TEST

START_TEST(cd_pwd)
{
	OUT_EQ(&F, R, "pwd", "/workspace\n");
	OUT_EQ(&F, R, "cd /tmp; pwd; echo $PWD", "/tmp\n/tmp\n");
	OUT_EQ(&F, R, "cd ..; pwd", "/\n");
	OUT_EQ(&F, R, "cd workspace; pwd", "/workspace\n");
	OUT_EQ(&F, R, "cd /nope; echo $?; pwd", "1\n/workspace\n");
	OUT_EQ(&F, R, "echo f > /tmp/file; cd /tmp/file; echo $?", "1\n");
	OUT_EQ(&F, R, "HOME=/tmp; cd; pwd", "/tmp\n");
	OUT_EQ(&F, R, "unset HOME; cd; pwd", "/\n");
}
END_TEST

START_TEST(errors_and_exit)
{
	cJSON *d = rtfix_exec(&F, R, "nosuch arg");
	ASSERT_STR(rtfix_str(d, "stderr"), "sh: nosuch: command not found\n");
	ASSERT_STR(rtfix_str(d, "output_raw"), "sh: nosuch: command not found\n");
	ck_assert_ptr_null(cJSON_GetObjectItem(d, "exit_code"));
	cJSON_Delete(d);
	OUT_EQ(&F, R, "nosuch; echo $?", "127\n");
	OUT_EQ(&F, R, "/bin/echo via path", "via path\n");
	char *e = rtfix_err(&F, R, "echo \"unterminated");
	ASSERT_STR(e, "sh: syntax error: unterminated quote\n");
	free(e);
	OUT_EQ(&F, R, "echo a | cat; echo $?", "");
	OUT_EQ(&F, R, "echo $?", "2\n");
	OUT_EQ(&F, R, "; echo x", "");
	OUT_EQ(&F, R, "sh -x; echo $?", "2\n");
	d = rtfix_exec(&F, R, "echo bye; exit 3; echo never");
	ASSERT_STR(rtfix_str(d, "stdout"), "bye\n");
	ck_assert_int_eq(rtfix_int(d, "exit_code"), 3);
	ASSERT_STR(rtfix_str(d, "state"), "stopped");
	cJSON_Delete(d);
	char reason[64];
	ck_assert_int_eq(rtfix_exec_fail(&F, R, "echo", reason), S0_EGONE);
	ASSERT_STR(reason, "process_finished");
}
END_TEST

START_TEST(subshell)
{
	OUT_EQ(&F, R, "X=1; export Y=2; sh -c 'echo [$X][$Y]; X=9; cd /tmp'; echo $X; pwd",
	       "[][2]\n1\n/workspace\n");
	OUT_EQ(&F, R, "sh -c 'exit 4'; echo $?", "4\n");
	OUT_EQ(&F, R, "bash -c 'echo in' > /tmp/sub; cat /tmp/sub", "in\n");
	OUT_EQ(&F, R, "sh -c 'sh -c \"echo deep\"'", "deep\n");
}
END_TEST

START_TEST(sleep_virtual_time)
{
	int64_t t0 = s0__guest_vtime_ms(F.g);
	OUT_EQ(&F, R, "sleep 2; sleep 0.5; echo done", "done\n");
	ck_assert_int_eq(s0__guest_vtime_ms(F.g) - t0, 2500);
	OUT_EQ(&F, R, "sleep x; echo $?", "1\n");
	char reason[64];
	ck_assert_int_eq(rtfix_exec_fail(&F, R, "echo before; sleep 100; echo after", reason),
	                 S0_ETIMEDOUT);
	ASSERT_STR(reason, "exec_timeout");
	ck_assert_int_eq(s0__guest_vtime_ms(F.g) - t0, 2500 + 30000);
	OUT_EQ(&F, R, "echo still here", "still here\n");
}
END_TEST

START_TEST(background_jobs)
{
	OUT_EQ(&F, R, "sh -c 'echo a; sleep 1; echo b; sleep 10; echo c' >> /tmp/log &", "");
	char *log = rtfix_get(&F, "/tmp/log");
	ASSERT_STR(log, "a\n");
	free(log);
	char *ps = rtfix_out(&F, R, "ps");
	ck_assert_ptr_nonnull(strstr(ps, "echo a; sleep 1"));
	free(ps);
	cJSON *insp = s0__guest_inspect(F.g);
	char *txt = cJSON_PrintUnformatted(insp);
	ck_assert_ptr_nonnull(strstr(txt, "\"path\":\"/tmp/log\",\"offset\":2,\"mode\":\"a\""));
	free(txt);
	cJSON_Delete(insp);
	OUT_EQ(&F, R, "sleep 1; cat /tmp/log", "a\nb\n");
	ck_assert_int_eq(s0__guest_advance(F.g, 10000, NULL), S0_OK);
	log = rtfix_get(&F, "/tmp/log");
	ASSERT_STR(log, "a\nb\nc\n");
	free(log);
	ps = rtfix_out(&F, R, "ps");
	ck_assert_ptr_null(strstr(ps, "echo a"));
	free(ps);
	char *o = rtfix_out(&F, R, "echo x > /tmp/j & echo $!; cat /tmp/j");
	ck_assert_int_gt(atoi(o), 1);
	ck_assert_ptr_nonnull(strstr(o, "\nx\n"));
	free(o);
}
END_TEST

START_TEST(read_offsets)
{
	OUT_EQ(&F, R, "printf 'l1\\nl2\\nl3\\n' > /tmp/in", "");
	OUT_EQ(&F, R, "sh -c 'read A; sleep 5; read B; echo $A-$B > /tmp/out' < /tmp/in &", "");
	OUT_EQ(&F, R, "cat /tmp/out; echo $?", "1\n");
	OUT_EQ(&F, R, "sleep 5; cat /tmp/out", "l1-l2\n");
	OUT_EQ(&F, R, "read V < /tmp/in; echo $V; read W < /tmp/empty-missing; echo $?", "l1\n1\n");
}
END_TEST

START_TEST(kill_and_ps)
{
	char *pid = rtfix_out(&F, R, "sleep 100 & echo $!");
	pid[strcspn(pid, "\n")] = 0;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "kill -STOP %s; ps", pid);
	char *ps = rtfix_out(&F, R, cmd);
	ck_assert_ptr_nonnull(strstr(ps, "paused"));
	free(ps);
	snprintf(cmd, sizeof cmd, "kill -CONT %s; kill %s; echo $?; kill %s; echo $?", pid, pid, pid);
	OUT_EQ(&F, R, cmd, "0\n1\n");
	ps = rtfix_out(&F, R, "ps");
	ck_assert_ptr_null(strstr(ps, "sleep 100"));
	free(ps);
	OUT_EQ(&F, R, "kill 1; echo $?", "1\n");
	char *e = rtfix_err(&F, R, "kill 1");
	ASSERT_STR(e, "kill: (1) - Operation not permitted\n");
	free(e);
	OUT_EQ(&F, R, "kill -BOGUS 5; echo $?; kill; echo $?; kill x; echo $?", "2\n2\n1\n");
	OUT_EQ(&F, R, "kill -0 1; echo $?", "0\n");
	free(pid);
}
END_TEST

/* trap '' SIG ignores a signal (a job inherits it), trap - SIG restores the
 * default; KILL and STOP cannot be trapped; no other action is supported. */
START_TEST(trap_ignores_signals)
{
	OUT_EQ(&F, R, "trap; echo $?", "0\n");
	OUT_EQ(&F, R, "trap '' TERM SIGHUP; trap", "trap -- '' 1\ntrap -- '' 15\n");
	OUT_EQ(&F, R, "kill $$; echo alive $?", "alive 0\n");
	char *pid = rtfix_out(&F, R, "sleep 100 & echo $!");
	pid[strcspn(pid, "\n")] = 0;
	char cmd[160];
	snprintf(cmd, sizeof cmd, "kill %s; kill -0 %s; echo $?; kill -HUP %s; kill -0 %s; echo $?",
	         pid, pid, pid, pid);
	OUT_EQ(&F, R, cmd, "0\n0\n"); /* the job inherited both */
	snprintf(cmd, sizeof cmd, "kill -KILL %s; kill -0 %s; echo $?", pid, pid);
	OUT_EQ(&F, R, cmd, "1\n");
	OUT_EQ(&F, R, "trap - HUP; trap", "trap -- '' 15\n");
	OUT_EQ(&F, R, "trap '' KILL; echo $?; trap '' STOP; echo $?; trap '' BOGUS; echo $?",
	       "1\n1\n1\n");
	char *e = rtfix_err(&F, R, "trap '' KILL");
	ASSERT_STR(e, "trap: KILL: cannot be trapped\n");
	free(e);
	OUT_EQ(&F, R, "trap 'echo x' TERM; echo $?; trap ''; echo $?", "2\n2\n");
	OUT_EQ(&F, R, "trap - TERM; trap; echo end", "end\n");
	free(pid);
}
END_TEST

START_TEST(memory_builtins)
{
	OUT_EQ(&F, R, "alloc 3M; alloc 1500K; alloc -z 8M; echo $?", "0\n");
	char *h1 = rtfix_out(&F, R, "memhash");
	char *h2 = rtfix_out(&F, R, "memhash");
	ASSERT_STR(h1, h2);
	ck_assert_ptr_nonnull(strstr(h1, " 13070336\n"));
	OUT_EQ(&F, R, "memtouch 1M 10; echo $?", "0\n");
	char *h3 = rtfix_out(&F, R, "memhash");
	ck_assert_str_ne(h1, h3);
	s0__heap_stats st;
	s0__guest_heap_stats(F.g, &st);
	ck_assert_uint_eq(st.zero, 8);
	ck_assert_uint_eq(st.resident, 5);
	OUT_EQ(&F, R, "alloc; echo $?; alloc 1Q; echo $?; memtouch 100G 1; echo $?", "2\n2\n1\n");
	free(h1);
	free(h2);
	free(h3);
}
END_TEST

START_TEST(memory_limit)
{
	teardown();
	s0__guest_opts o = {.memory_limit_bytes = 8u << 20};
	rtfix_open(&F, &o);
	R = rtfix_repl(&F);
	OUT_EQ(&F, R, "alloc 6M; echo $?; alloc 4M; echo $?", "0\n1\n");
	char *e = rtfix_err(&F, R, "alloc 4M");
	ASSERT_STR(e, "alloc: cannot allocate 4194304 bytes: out of memory\n");
	free(e);
}
END_TEST

START_TEST(listen_sockets)
{
	OUT_EQ(&F, R, "listen 8080; echo $?; listen 8080; echo $?; listen 0; echo $?", "0\n1\n2\n");
	s0__proc_info pi;
	int32_t pid;
	ck_assert_int_eq(s0__ctx_pid(F.g, R, &pid, NULL), S0_OK);
	ck_assert_int_eq(s0__guest_proc_get(F.g, pid, &pi, NULL), S0_OK);
	ck_assert_uint_eq(pi.sockets, 1);
}
END_TEST

Suite *rt_shell_suite(void)
{
	Suite *s = suite_create("runtime-shell");
	TCase *t = tcase_create("shell");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, echo_printf);
	tcase_add_test(t, quotes_and_expansion);
	tcase_add_test(t, export_unset_env);
	tcase_add_test(t, and_or_sequence);
	tcase_add_test(t, redirections);
	tcase_add_test(t, files_builtins);
	tcase_add_test(t, cd_pwd);
	tcase_add_test(t, errors_and_exit);
	tcase_add_test(t, subshell);
	tcase_add_test(t, sleep_virtual_time);
	tcase_add_test(t, background_jobs);
	tcase_add_test(t, read_offsets);
	tcase_add_test(t, kill_and_ps);
	tcase_add_test(t, trap_ignores_signals);
	tcase_add_test(t, memory_builtins);
	tcase_add_test(t, memory_limit);
	tcase_add_test(t, listen_sockets);
	suite_add_tcase(s, t);
	return s;
}
