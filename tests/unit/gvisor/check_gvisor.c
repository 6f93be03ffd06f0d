/*
 * The gvisor runtime driver (local/runtime/gvisor/gvisor.h) for real, as
 * root with runsc installed (scripts/install-runsc.sh; part 45-gvisor):
 * probe errors, a generation's start, readiness, contexts running real
 * programs (REPL state, cmd exit codes, stdin, signals), the cgroup
 * limits, isolation from the host, the root tree outliving a generation,
 * the terminal proof, bad input leaving nothing behind, and the reclaim of
 * what a crashed process left. Each test ends with nothing of its
 * runtimes left (runsc record, cgroups, processes: the terminal proof).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "common/json.h"
#include "local/runtime/gvisor/gvisor.h"
#include "local/runtime/runtime.h"

typedef struct gv_fix {
	const s0__rt_driver *d;
	char *dir;
	s0__rt_host *h;
	s0__rt_gen *g;
	char rid[48];
} gv_fix;

static const char *const EPHEMERAL[] = {"/scratch"};
static const uint64_t EPHEMERAL_LIMITS[] = {1 << 20};

static void fix_open(gv_fix *f)
{
	memset(f, 0, sizeof *f);
	ck_assert_int_eq(s0__rt_driver_find("gvisor", &f->d, NULL), S0_OK);
	s0_error *e = NULL;
	int rc = f->d->probe(&e);
	ck_assert_msg(rc == S0_OK, "gvisor cannot run here: %s", e ? s0_error_message(e) : "?");
	f->dir = s0_test_tmpdir("gv");
	s0__rt_host_opts o = {.state_dir = f->dir};
	rc = f->d->open(&o, &f->h, &e);
	ck_assert_msg(rc == S0_OK, "open: %s", e ? s0_error_message(e) : "?");
}

static int try_start(gv_fix *f, const char *sandbox, int64_t gen, const char *const *eph,
                     size_t n_eph, s0_error **e)
{
	snprintf(f->rid, sizeof f->rid, "rt-gv-%s-%lld", sandbox, (long long)gen);
	cJSON *env = cJSON_Parse("{\"GV_VAR\":\"from-env\"}");
	s0__rt_start req = {
		.sandbox_id = sandbox,
		.runtime_id = f->rid,
		.generation = gen,
		.ephemeral = eph,
		.ephemeral_limits = EPHEMERAL_LIMITS,
		.n_ephemeral = n_eph,
		.env_vars = env,
		.cpu_millis = 500,
		.memory_bytes = 256LL << 20,
	};
	int rc = f->d->start(f->h, &req, &f->g, e);
	cJSON_Delete(env);
	return rc;
}

static void fix_start(gv_fix *f, const char *sandbox, int64_t gen)
{
	s0_error *e = NULL;
	int rc = try_start(f, sandbox, gen, EPHEMERAL, 1, &e);
	ck_assert_msg(rc == S0_OK, "start: %s", e ? s0_error_message(e) : "?");
	rc = f->d->ready(f->g, &e);
	ck_assert_msg(rc == S0_OK, "ready: %s", e ? s0_error_message(e) : "?");
}

static void fix_stop(gv_fix *f)
{
	s0_error *e = NULL;
	ck_assert_int_eq(f->d->terminal_proof(f->h, f->rid, &e), S0_EUNAVAILABLE);
	ck_assert_str_eq(s0_error_reason(e), "resource_leak");
	s0_error_free(e);
	e = NULL;
	f->d->stop(f->g);
	f->g = NULL;
	int rc = f->d->terminal_proof(f->h, f->rid, &e);
	ck_assert_msg(rc == S0_OK, "terminal proof: %s", e ? s0_error_message(e) : "?");
	/* the stop finishes in the background (gv_stop.c): once the proof
	 * answered, what it stands for is gone from the host itself */
	char p[600];
	snprintf(p, sizeof p, "/sys/fs/cgroup/pids/s0-gvisor/%s", f->rid);
	ck_assert_msg(access(p, F_OK) != 0, "%s left after the proof", p);
	snprintf(p, sizeof p, "%s/gvisor/bundles/%s", f->dir, f->rid);
	ck_assert_msg(access(p, F_OK) != 0, "%s left after the proof", p);
	snprintf(p, sizeof p, "%s/gvisor/runsc/%s_sandbox:%s.state", f->dir, f->rid, f->rid);
	ck_assert_msg(access(p, F_OK) != 0, "%s left after the proof", p);
	snprintf(p, sizeof p, "%s/gvisor/net/%s", f->dir, f->rid);
	ck_assert_msg(access(p, F_OK) != 0, "%s left after the proof", p);
}

static void fix_close(gv_fix *f)
{
	if (f->g)
		f->d->stop(f->g);
	f->d->close(f->h);
	s0_test_rmrf(f->dir);
	free(f->dir);
}

static int call(gv_fix *f, int op, const char *id, const char *body, cJSON **out, int *st,
                s0_error **e)
{
	cJSON *b = body ? cJSON_Parse(body) : NULL;
	ck_assert(!body || b);
	s0__rt_proc_call c = {.op = op, .id = id, .body = b};
	int rc = f->d->proc_call(f->g, &c, out, st, e);
	cJSON_Delete(b);
	return rc;
}

static cJSON *call_ok(gv_fix *f, int op, const char *id, const char *body, int status)
{
	cJSON *d = NULL;
	int st = 0;
	s0_error *e = NULL;
	int rc = call(f, op, id, body, &d, &st, &e);
	ck_assert_msg(rc == S0_OK, "call %d: %s", op, e ? s0_error_message(e) : "?");
	ck_assert_int_eq(st, status);
	return d;
}

static char *new_ctx(gv_fix *f, const char *body)
{
	cJSON *d = call_ok(f, S0__RT_CTX_CREATE, NULL, body, 201);
	char *id = strdup(s0__json_str(d, "id"));
	cJSON_Delete(d);
	return id;
}

/* Exec @p code in REPL @p id; its stdout (free()). */
static char *sh(gv_fix *f, const char *id, const char *code)
{
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "data", code);
	char *text = cJSON_PrintUnformatted(b);
	cJSON_Delete(b);
	cJSON *d = call_ok(f, S0__RT_CTX_EXEC, id, text, 200);
	free(text);
	char *out = strdup(s0__json_str(d, "stdout") ? s0__json_str(d, "stdout") : "");
	cJSON_Delete(d);
	return out;
}

static void assert_sh(gv_fix *f, const char *id, const char *code, const char *want)
{
	char *got = sh(f, id, code);
	ck_assert_msg(!strcmp(got, want), "%s: got \"%s\", want \"%s\"", code, got, want);
	free(got);
}

static char *read_text(const char *path)
{
	FILE *fp = fopen(path, "re");
	if (!fp)
		return NULL;
	char buf[256] = "";
	size_t n = fread(buf, 1, sizeof buf - 1, fp);
	fclose(fp);
	buf[n] = 0;
	return strdup(buf);
}

/* Asking for gvisor where runsc is missing names the missing piece;
 * "auto" then falls back to sim and says why. */
START_TEST(probe_names_missing_runsc)
{
	const s0__rt_driver *d = NULL;
	ck_assert_int_eq(s0__rt_driver_find("gvisor", &d, NULL), S0_OK);
	setenv("S0_RUNSC", "/nonexistent/runsc", 1);
	s0_error *e = NULL;
	ck_assert_int_eq(d->probe(&e), S0_EUNAVAILABLE);
	ck_assert_str_eq(s0_error_reason(e), "runtime_unavailable");
	ck_assert_msg(strstr(s0_error_message(e), "S0_RUNSC=/nonexistent/runsc"), "%s",
	              s0_error_message(e));
	s0_error_free(e);
	e = NULL;
	s0__rt_host *h = NULL;
	ck_assert_int_eq(d->open(&(s0__rt_host_opts){0}, &h, &e), S0_EUNAVAILABLE);
	ck_assert_ptr_null(h);
	s0_error_free(e);
	/* "auto" falls back to sim, saying why gvisor cannot run */
	const s0__rt_driver *a = NULL;
	char why[512];
	s0__rt_driver_auto(&a, why, sizeof why);
	ck_assert_str_eq(a->name, "sim");
	ck_assert_msg(strstr(why, "gvisor: ") && strstr(why, "S0_RUNSC"), "%s", why);
	unsetenv("S0_RUNSC");
	/* ... and is gvisor where it can run */
	ck_assert_int_eq(s0__rt_driver_find("auto", &a, NULL), S0_OK);
	ck_assert_str_eq(a->name, "gvisor");
	char *path = NULL;
	ck_assert_int_eq(s0__gv_find_runsc(&path, NULL), S0_OK);
	ck_assert_ptr_nonnull(path);
	free(path);
}
END_TEST

/* A REPL is one real shell keeping its state; stdout and stderr apart;
 * the sandbox's env_vars; a cmd context's exit code; capabilities. */
START_TEST(contexts_run_real_programs)
{
	gv_fix f;
	fix_open(&f);
	uint32_t caps = f.d->caps(f.h);
	ck_assert(caps & S0__RT_CAP_CONTEXTS);
	ck_assert(caps & S0__RT_CAP_REAL_PROCESSES);
	ck_assert(caps & S0__RT_CAP_MEMORY); /* the pinned runsc checkpoints (docs/memory-gvisor.md) */
	fix_start(&f, "sbctx", 1);
	char *id = new_ctx(&f, "{\"type\":\"repl\"}");
	assert_sh(&f, id, "X=41; cd /root", "");
	assert_sh(&f, id, "echo $((X+1)) $(pwd) $GV_VAR", "42 /root from-env\n");
	/* stderr is apart from stdout */
	cJSON *b = cJSON_Parse("{\"data\":\"echo out; echo err >&2\"}");
	char *text = cJSON_PrintUnformatted(b);
	cJSON_Delete(b);
	cJSON *d = call_ok(&f, S0__RT_CTX_EXEC, id, text, 200);
	free(text);
	ck_assert_str_eq(s0__json_str(d, "stdout"), "out\n");
	ck_assert_str_eq(s0__json_str(d, "stderr"), "err\n");
	ck_assert_str_eq(s0__json_str(d, "output_raw"), "out\nerr\n");
	cJSON_Delete(d);
	/* gVisor's own kernel answers */
	char *v = sh(&f, id, "cat /proc/version");
	ck_assert_msg(strstr(v, "gvisor"), "%s", v);
	free(v);
	/* a cmd context: argv, exit code, state */
	d = call_ok(&f, S0__RT_CTX_CREATE, NULL,
	            "{\"type\":\"cmd\",\"cmd\":{\"command\":[\"/bin/sh\",\"-c\",\"echo hi; exit "
	            "3\"]},\"wait_until_done\":true}",
	            201);
	ck_assert_str_eq(s0__json_str(d, "stdout"), "hi\n");
	ck_assert_int_eq(s0__json_i64(d, "exit_code", -1), 3);
	ck_assert_str_eq(s0__json_str(d, "state"), "stopped");
	ck_assert(!s0__json_bool(d, "running", true));
	cJSON_Delete(d);
	/* list, get, delete; an unknown id */
	d = call_ok(&f, S0__RT_CTX_LIST, NULL, NULL, 200);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "contexts")), 2);
	cJSON_Delete(d);
	d = call_ok(&f, S0__RT_CTX_GET, id, NULL, 200);
	ck_assert(s0__json_bool(d, "running", false));
	ck_assert_str_eq(s0__json_str(d, "type"), "repl");
	cJSON_Delete(d);
	d = call_ok(&f, S0__RT_CTX_DELETE, id, NULL, 200);
	ck_assert(s0__json_bool(d, "deleted", false));
	cJSON_Delete(d);
	s0_error *e = NULL;
	int st;
	ck_assert_int_eq(call(&f, S0__RT_CTX_GET, id, NULL, &d, &st, &e), S0_ENOTFOUND);
	ck_assert_str_eq(s0_error_reason(e), "context_not_found");
	s0_error_free(e);
	e = NULL;
	/* bad input: a cmd without its command; a sessions call without a registry */
	ck_assert_int_eq(call(&f, S0__RT_CTX_CREATE, NULL, "{\"type\":\"cmd\"}", &d, &st, &e),
	                 S0_EINVAL);
	s0_error_free(e);
	e = NULL;
	ck_assert_int_eq(call(&f, S0__RT_SES_LIST, NULL, NULL, &d, &st, &e), S0_EINVAL);
	s0_error_free(e);
	free(id);
	fix_stop(&f);
	fix_close(&f);
}
END_TEST

/* stdin reaches a cmd context's program; a signal ends a running one. */
START_TEST(contexts_stdin_and_signals)
{
	gv_fix f;
	fix_open(&f);
	fix_start(&f, "sbsig", 1);
	char *id = new_ctx(&f, "{\"type\":\"cmd\",\"cmd\":{\"command\":[\"/bin/sh\",\"-c\","
	                       "\"read l; echo got:$l\"]}}");
	cJSON *d = call_ok(&f, S0__RT_CTX_EXEC, id, "{\"data\":\"abc\\n\"}", 200);
	ck_assert_str_eq(s0__json_str(d, "stdout"), "got:abc\n");
	ck_assert_int_eq(s0__json_i64(d, "exit_code", -1), 0);
	cJSON_Delete(d);
	s0_error *e = NULL;
	int st;
	ck_assert_int_eq(call(&f, S0__RT_CTX_INPUT, id, "{\"data\":\"x\"}", &d, &st, &e),
	                 S0_EGONE);
	ck_assert_str_eq(s0_error_reason(e), "process_finished");
	s0_error_free(e);
	e = NULL;
	free(id);
	id = new_ctx(&f, "{\"type\":\"cmd\",\"cmd\":{\"command\":[\"/bin/sleep\",\"100\"]}}");
	ck_assert_int_eq(call(&f, S0__RT_CTX_SIGNAL, id, "{\"signal\":\"NOPE\"}", &d, &st, &e),
	                 S0_EINVAL);
	s0_error_free(e);
	e = NULL;
	d = call_ok(&f, S0__RT_CTX_SIGNAL, id, "{\"signal\":\"KILL\"}", 200);
	ck_assert(s0__json_bool(d, "signaled", false));
	cJSON_Delete(d);
	d = call_ok(&f, S0__RT_CTX_GET, id, NULL, 200);
	ck_assert(!s0__json_bool(d, "running", true));
	ck_assert_msg(!strcmp(s0__json_str(d, "state"), "killed"), "state %s exit %lld",
	              s0__json_str(d, "state"), (long long)s0__json_i64(d, "exit_code", -1));
	ck_assert_int_eq(s0__json_i64(d, "exit_code", -1), 137);
	cJSON_Delete(d);
	free(id);
	fix_stop(&f);
	fix_close(&f);
}
END_TEST

/* The generation's cgroup holds the lease's limits; the host's files and
 * processes are not visible inside; /tmp and ephemeral mounts are tmpfs
 * that never reach the root tree. */
START_TEST(limits_and_isolation)
{
	gv_fix f;
	fix_open(&f);
	fix_start(&f, "sbiso", 1);
	char p[256];
	snprintf(p, sizeof p, "/sys/fs/cgroup/memory/s0-gvisor/%s/memory.limit_in_bytes", f.rid);
	char *v = read_text(p);
	ck_assert_msg(v, "no %s", p);
	ck_assert_str_eq(v, "268435456\n");
	free(v);
	snprintf(p, sizeof p, "/sys/fs/cgroup/pids/s0-gvisor/%s/pids.max", f.rid);
	ck_assert_str_eq((v = read_text(p)), "512\n");
	free(v);
	snprintf(p, sizeof p, "/sys/fs/cgroup/cpu/s0-gvisor/%s/cpu.cfs_quota_us", f.rid);
	/* 500m: weight 512, the cap one core (gv_bundle.c) */
	ck_assert_str_eq((v = read_text(p)), "100000\n");
	free(v);
	snprintf(p, sizeof p, "/sys/fs/cgroup/cpu/s0-gvisor/%s/cpu.shares", f.rid);
	ck_assert_str_eq((v = read_text(p)), "512\n");
	free(v);
	/* a host file outside the root tree */
	char marker[128];
	snprintf(marker, sizeof marker, "%s/host-secret", f.dir);
	int fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "secret\n", 7), 7);
	close(fd);
	char *id = new_ctx(&f, "{\"type\":\"repl\"}");
	char code[256];
	snprintf(code, sizeof code, "cat %s 2>/dev/null || echo unseen", marker);
	assert_sh(&f, id, code, "unseen\n");
	assert_sh(&f, id, "cat /proc/1/root/etc/hostname 2>/dev/null || echo none", "none\n");
	/* only the sandbox's processes: PID 1 and few others, no host daemons */
	char *ps = sh(&f, id, "ls /proc | grep -c '^[0-9]'");
	ck_assert_int_lt(atoi(ps), 10);
	free(ps);
	/* /tmp and /scratch are tmpfs inside; writes there never reach the tree */
	assert_sh(&f, id, "echo t > /tmp/t; echo s > /scratch/s; cat /tmp/t /scratch/s", "t\ns\n");
	snprintf(p, sizeof p, "%s/gvisor/roots/sbiso/tmp/t", f.dir);
	ck_assert_int_ne(access(p, F_OK), 0);
	snprintf(p, sizeof p, "%s/gvisor/roots/sbiso/scratch/s", f.dir);
	ck_assert_int_ne(access(p, F_OK), 0);
	/* and a write to the root tree reaches it at once (--overlay2=none) */
	assert_sh(&f, id, "echo kept > /root/kept.txt", "");
	snprintf(p, sizeof p, "%s/gvisor/roots/sbiso/root/kept.txt", f.dir);
	ck_assert_str_eq((v = read_text(p)), "kept\n");
	free(v);
	free(id);
	fix_stop(&f);
	fix_close(&f);
}
END_TEST

/* The root tree outlives a generation: a file written in generation 1 is
 * there in generation 2, whose processes are new. */
START_TEST(root_tree_outlives_generation)
{
	gv_fix f;
	fix_open(&f);
	fix_start(&f, "sbgen", 1);
	char *id = new_ctx(&f, "{\"type\":\"repl\"}");
	assert_sh(&f, id, "echo one > /root/gen.txt; sleep 1000 & echo started", "started\n");
	free(id);
	fix_stop(&f);
	fix_start(&f, "sbgen", 2);
	id = new_ctx(&f, "{\"type\":\"repl\"}");
	assert_sh(&f, id, "cat /root/gen.txt; pgrep sleep | grep -c . ; true", "one\n0\n");
	free(id);
	fix_stop(&f);
	fix_close(&f);
}
END_TEST

/* Bad input is refused and leaves nothing behind. */
START_TEST(bad_start_leaves_nothing)
{
	gv_fix f;
	fix_open(&f);
	static const char *const bad_eph[] = {"/ok/../escape"};
	s0_error *e = NULL;
	ck_assert_int_eq(try_start(&f, "sbbad", 1, bad_eph, 1, &e), S0_EINVAL);
	ck_assert_msg(strstr(s0_error_message(e), "/ok/../escape"), "%s", s0_error_message(e));
	s0_error_free(e);
	e = NULL;
	ck_assert_ptr_null(f.g);
	ck_assert_int_eq(f.d->terminal_proof(f.h, f.rid, &e), S0_OK);
	ck_assert_int_eq(try_start(&f, "sb/slash", 1, NULL, 0, &e), S0_EINVAL);
	s0_error_free(e);
	e = NULL;
	ck_assert_int_eq(f.d->terminal_proof(f.h, "bad/id", &e), S0_EINVAL);
	s0_error_free(e);
	fix_close(&f);
}
END_TEST

/* What a process that died without stopping left (its runsc sandbox,
 * cgroups, bundle) is reclaimed when the next one opens the same state
 * directory. */
START_TEST(reclaim_after_crash)
{
	gv_fix f;
	fix_open(&f);
	fix_start(&f, "sbcrash", 1);
	s0_error *e = NULL;
	ck_assert_int_eq(f.d->terminal_proof(f.h, f.rid, &e), S0_EUNAVAILABLE);
	s0_error_free(e);
	e = NULL;
	/* the "crash": the host and generation are abandoned, never stopped
	 * (their memory leaks in this test process, as a killed one's would) */
	f.g = NULL;
	f.h = NULL;
	s0__rt_host *h2 = NULL;
	s0__rt_host_opts o = {.state_dir = f.dir};
	ck_assert_int_eq(f.d->open(&o, &h2, &e), S0_OK);
	int rc = f.d->terminal_proof(h2, f.rid, &e);
	ck_assert_msg(rc == S0_OK, "after reclaim: %s", e ? s0_error_message(e) : "?");
	f.h = h2;
	fix_close(&f);
}
END_TEST

static char *files_get(gv_fix *f, const char *path, int *rc_out)
{
	void *data = NULL;
	size_t len = 0;
	s0_error *e = NULL;
	int rc = s0__files_read(f->d->files(f->g), path, strlen(path), 0, -1, &data, &len, &e);
	s0_error_free(e);
	if (rc_out)
		*rc_out = rc;
	return rc == S0_OK ? data : NULL;
}

static void files_put(gv_fix *f, const char *path, const char *text)
{
	s0_error *e = NULL;
	int rc = s0__files_write(f->d->files(f->g), path, strlen(path), text, strlen(text), &e);
	ck_assert_msg(rc == S0_OK, "write %s: %s", path, e ? s0_error_message(e) : "?");
}

/* The files view of a running generation is what its programs see, both
 * ways, on the root tree and on the runtime tmpfs mounts; `..` and
 * symlinks (absolute or relative) never leave the tree. */
START_TEST(files_view_coherent_and_contained)
{
	gv_fix f;
	fix_open(&f);
	fix_start(&f, "sbfiles", 1);
	char *id = new_ctx(&f, "{\"type\":\"repl\"}");
	files_put(&f, "/workspace/deep/in.txt", "from the api\n");
	files_put(&f, "/tmp/t.txt", "tmp from the api\n");
	files_put(&f, "/scratch/s.txt", "scratch from the api\n");
	assert_sh(&f, id, "cat /workspace/deep/in.txt /tmp/t.txt /scratch/s.txt",
	          "from the api\ntmp from the api\nscratch from the api\n");
	assert_sh(&f, id, "echo from inside > /root/out.txt; echo t2 > /tmp/t2", "");
	int rc;
	char *got = files_get(&f, "/root/out.txt", &rc);
	ck_assert_str_eq(got, "from inside\n");
	free(got);
	ck_assert_str_eq((got = files_get(&f, "/tmp/t2", &rc)), "t2\n");
	free(got);
	/* stat and list */
	s0__fileinfo *fi = NULL;
	ck_assert_int_eq(s0__files_stat(f.d->files(f.g), "/root/out.txt", 13, &fi, NULL), S0_OK);
	ck_assert_int_eq(fi->size_bytes, 12);
	ck_assert_int_eq(fi->type, S0_FILE_TYPE_FILE);
	s0__fileinfo_free(fi);
	s0__filelist *l = NULL;
	ck_assert_int_eq(s0__files_list(f.d->files(f.g), "/workspace/deep", 15, &l, NULL), S0_OK);
	ck_assert_uint_eq(l->len, 1);
	ck_assert_str_eq(l->items[0].path, "/workspace/deep/in.txt");
	s0__filelist_free(l);
	s0_error *e = NULL;
	ck_assert_int_eq(s0__files_stat(f.d->files(f.g), "/nope", 5, &fi, &e), S0_ENOTFOUND);
	ck_assert_str_eq(s0_error_reason(e), "file_not_found");
	s0_error_free(e);
	/* escapes: a host file outside the tree, through symlinks and `..` */
	char marker[256], code[1400];
	snprintf(marker, sizeof marker, "%s/host-secret", f.dir);
	FILE *fp = fopen(marker, "we");
	fputs("secret\n", fp);
	fclose(fp);
	snprintf(code, sizeof code,
	         "ln -s %s /root/abs; ln -s ../../../../../../../..%s /root/rel; "
	         "ln -s /proc/self/root/etc/hostname /root/magic",
	         marker, marker);
	assert_sh(&f, id, code, "");
	ck_assert_ptr_null(files_get(&f, "/root/abs", &rc));
	ck_assert_int_eq(rc, S0_ENOTFOUND);
	ck_assert_ptr_null(files_get(&f, "/root/rel", &rc));
	ck_assert_int_eq(rc, S0_ENOTFOUND);
	ck_assert_ptr_null(files_get(&f, "/root/magic", &rc));
	char path[300];
	snprintf(path, sizeof path, "/../../../../..%s", marker);
	ck_assert_ptr_null(files_get(&f, path, &rc));
	/* a write through an escaping symlink replaces the link, never the target */
	files_put(&f, "/root/abs", "replaced\n");
	fp = fopen(marker, "re");
	char buf[64] = "";
	ck_assert_ptr_nonnull(fgets(buf, sizeof buf, fp));
	fclose(fp);
	ck_assert_str_eq(buf, "secret\n");
	free(id);
	fix_stop(&f);
	fix_close(&f);
}
END_TEST

/* A root tree with python3 (scripts/gvisor-python-tree.sh, made by part
 * 45-gvisor into $S0_TEST_PYTHON_TREE) as the template: real python3
 * runs a script the files API wrote, keeps state in a REPL shell, and is
 * the REPL of the alias "python". */
START_TEST(python3_runs_from_a_debian_tree)
{
	const char *tree = getenv("S0_TEST_PYTHON_TREE");
	ck_assert_msg(tree && *tree, "S0_TEST_PYTHON_TREE unset: run scripts/test gvisor");
	setenv("S0_GVISOR_TEMPLATE", tree, 1);
	gv_fix f;
	fix_open(&f);
	fix_start(&f, "sbpy", 1);
	files_put(&f, "/workspace/script.py",
	          "import json, hashlib, sys\n"
	          "print(json.dumps({'answer': 6 * 7, 'v': sys.version_info[0]}))\n"
	          "print(hashlib.sha256(b'sandbox').hexdigest()[:8])\n");
	cJSON *d = call_ok(&f, S0__RT_CTX_CREATE, NULL,
	                   "{\"type\":\"cmd\",\"cmd\":{\"command\":[\"python3\","
	                   "\"/workspace/script.py\"]},\"wait_until_done\":true}",
	                   201);
	ck_assert_str_eq(s0__json_str(d, "stdout"), "{\"answer\": 42, \"v\": 3}\nb7ad5674\n");
	ck_assert_int_eq(s0__json_i64(d, "exit_code", -1), 0);
	cJSON_Delete(d);
	char *id = new_ctx(&f, "{\"type\":\"repl\"}");
	assert_sh(&f, id, "python3 -c 'import sys; sys.exit(3)'; echo rc=$?", "rc=3\n");
	free(id);
	/* the alias "python" (the official SDKs' default language of `run`) is
	 * a Python REPL: state between execs, a final expression's repr, blocks
	 * with blank lines, a traceback on stderr and the REPL lives on */
	id = new_ctx(&f, "{\"type\":\"repl\",\"repl\":{\"alias\":\"python\"}}");
	assert_sh(&f, id, "x = 40\n", "");
	assert_sh(&f, id, "x + 2", "42\n");
	assert_sh(&f, id, "def f(n):\n    return n * 2\n\nprint(f(x))\n", "80\n");
	d = call_ok(&f, S0__RT_CTX_EXEC, id, "{\"data\":\"1/0\"}", 200);
	ck_assert_str_eq(s0__json_str(d, "stdout"), "");
	ck_assert_ptr_nonnull(strstr(s0__json_str(d, "stderr"), "ZeroDivisionError"));
	ck_assert_ptr_null(strstr(s0__json_str(d, "stderr"), "<string>")); /* no driver frame */
	cJSON_Delete(d);
	assert_sh(&f, id, "print('alive', x)", "alive 40\n");
	/* each exec's output is its own: nothing of an earlier exec's end marker */
	for (int i = 0; i < 20; i++) {
		char code[64], want[32];
		snprintf(code, sizeof code, "{\"data\":\"x = %d\\nx\"}", i);
		snprintf(want, sizeof want, "%d\n", i);
		d = call_ok(&f, S0__RT_CTX_EXEC, id, code, 200);
		ck_assert_str_eq(s0__json_str(d, "output_raw"), want);
		cJSON_Delete(d);
	}
	free(id);
	fix_stop(&f);
	fix_close(&f);
	unsetenv("S0_GVISOR_TEMPLATE");
}
END_TEST

/* Two sandboxes on one host: neither sees the other's files (by its own
 * path or by the host path of the other's root tree) or processes. */
START_TEST(sandboxes_apart)
{
	gv_fix a, b;
	fix_open(&a);
	fix_start(&a, "sba", 1);
	b = a; /* the same host, a second generation */
	b.g = NULL;
	fix_start(&b, "sbb", 1);
	char *ia = new_ctx(&a, "{\"type\":\"repl\"}");
	char *ib = new_ctx(&b, "{\"type\":\"repl\"}");
	assert_sh(&a, ia, "echo a-secret > /root/secret; sleep 1000 & echo ok", "ok\n");
	char code[512];
	snprintf(code, sizeof code,
	         "cat /root/secret %s/gvisor/roots/sba/root/secret 2>/dev/null; "
	         "pgrep sleep | grep -c .; true",
	         a.dir);
	assert_sh(&b, ib, code, "0\n");
	free(ia);
	free(ib);
	fix_stop(&b);
	fix_stop(&a);
	fix_close(&a);
}
END_TEST

/* Exec @p code in a new REPL of the generation, whatever becomes of it
 * (the generation may die of its limits); the error reason or "ok". */
static const char *exec_any(gv_fix *f, const char *code)
{
	cJSON *d = NULL;
	int st = 0;
	s0_error *e = NULL;
	static char reason[64];
	int rc = call(f, S0__RT_CTX_CREATE, NULL, "{\"type\":\"repl\"}", &d, &st, &e);
	if (rc == S0_OK) {
		char *id = strdup(s0__json_str(d, "id"));
		cJSON_Delete(d);
		d = NULL;
		cJSON *b = cJSON_CreateObject();
		cJSON_AddStringToObject(b, "data", code);
		char *text = cJSON_PrintUnformatted(b);
		cJSON_Delete(b);
		rc = call(f, S0__RT_CTX_EXEC, id, text, &d, &st, &e);
		free(text);
		free(id);
	}
	snprintf(reason, sizeof reason, "%s", rc == S0_OK ? "ok" : s0_error_reason(e));
	cJSON_Delete(d);
	s0_error_free(e);
	return reason;
}

/* A cgroup file of the running generation as a number (-1: unreadable). */
static long long cg_value(gv_fix *f, const char *ctl, const char *file, const char *key)
{
	char p[300];
	snprintf(p, sizeof p, "/sys/fs/cgroup/%s/s0-gvisor/%s/%s", ctl, f->rid, file);
	FILE *fp = fopen(p, "re");
	if (!fp)
		return -1;
	char line[256];
	long long v = -1;
	while (fgets(line, sizeof line, fp)) {
		char k[64];
		long long n;
		if (key && sscanf(line, "%63s %lld", k, &n) == 2 && !strcmp(k, key))
			v = n;
		else if (!key && sscanf(line, "%lld", &n) == 1)
			v = n;
	}
	fclose(fp);
	return v;
}

/* A fork bomb stops at the generation's pids cgroup and a memory hog at
 * its memory cgroup (the host's limits, not the guest's accounting):
 * the counters show the limit was hit and never passed; what broke is
 * that generation only, which still stops with its terminal proof. */
START_TEST(limits_hold)
{
	gv_fix f;
	fix_open(&f);
	fix_start(&f, "sbbomb", 1);
	const char *r = exec_any(&f, "while :; do sleep 1000 & done");
	long long hits = cg_value(&f, "pids", "pids.events", "max");
	fprintf(stderr, "fork bomb: exec %s, pids.events max %lld\n", r, hits);
	ck_assert_int_gt(hits, 0);
	fix_stop(&f);

	fix_start(&f, "sbhog", 1);
	r = exec_any(&f, "dd if=/dev/zero of=/dev/null bs=600M count=1");
	long long peak = cg_value(&f, "memory", "memory.max_usage_in_bytes", NULL);
	long long fails = cg_value(&f, "memory", "memory.failcnt", NULL);
	fprintf(stderr, "memory hog: exec %s, peak %lld, failcnt %lld\n", r, peak, fails);
	ck_assert_int_le(peak, (256LL << 20) + (64 << 10)); /* the kernel charges a page, then reclaims */
	ck_assert_int_gt(fails, 0);
	fix_stop(&f);
	fix_close(&f);
}
END_TEST

static Suite *gvisor_suite(void)
{
	Suite *s = suite_create("gvisor");
	TCase *tc = tcase_create("driver");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, probe_names_missing_runsc);
	tcase_add_test(tc, contexts_run_real_programs);
	tcase_add_test(tc, contexts_stdin_and_signals);
	tcase_add_test(tc, limits_and_isolation);
	tcase_add_test(tc, root_tree_outlives_generation);
	tcase_add_test(tc, bad_start_leaves_nothing);
	tcase_add_test(tc, reclaim_after_crash);
	tcase_add_test(tc, limits_hold);
	tcase_add_test(tc, sandboxes_apart);
	tcase_add_test(tc, files_view_coherent_and_contained);
	tcase_add_test(tc, python3_runs_from_a_debian_tree);
	suite_add_tcase(s, tc);
	return s;
}

S0_TEST_MAIN(gvisor_suite)
