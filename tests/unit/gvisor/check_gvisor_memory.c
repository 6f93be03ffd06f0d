/*
 * Memory checkpoints of the gvisor runtime under the lifecycle engine
 * (docs/memory-gvisor.md), with real programs in a python3 root tree
 * ($S0_TEST_PYTHON_TREE, made by part 45-gvisor): 256 MiB of random bytes
 * in the sandbox kernel's memory with a known checksum, its PID counter and
 * a /tmp file survive a memory pause and resume (new runtime_id,
 * generation + 1) and are gone after a filesystem-only one; a stored chunk
 * with flipped bytes or deleted image objects make the restore fail before
 * anything runs and fall back filesystem-only (never restoring garbage); a
 * changed runtime fingerprint (runsc's version) resumes filesystem-only; a
 * procd upgrade between pause and resume does not (the captured procd is
 * retained and restored, MEM-11); a memory fork leaves
 * the parent running.
 */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "common/json.h"
#include "local/checkpoint/ckpt.h"
#include "local/lifecycle/engine_internal.h"
#include "local/local_internal.h"
#include "local/objects/objstore.h"
#include "local/objects/pack/objdir.h"
#include "local/runtime/gvisor/gv_int.h"
#include "lt.h"
#include "gv_host.h"

static void open_gvisor(lt *t)
{
	const char *tree = getenv("S0_TEST_PYTHON_TREE");
	ck_assert_msg(tree && *tree, "S0_TEST_PYTHON_TREE unset: run scripts/test gvisor");
	setenv("S0_GVISOR_TEMPLATE", tree, 1); /* the default template: python3 */
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.manual_clock = 1;
	o.runtime = "gvisor";
	lt_open(t, &o);
}

static char *sh(lt *t, const char *id, const char *ctx, const char *cmd)
{
	return lt_sh(t, id, ctx, cmd, NULL);
}

static void mem_pause(lt *t, const char *id)
{
	s0_error *err = NULL;
	lt_ok(lt_wait_rc(t, id, true, S0_BOOL_TRUE, &err), &err, "memory pause");
	lt_quiesce(t);
	lt_assert_paused(t, id);
}

static void mem_resume(lt *t, const char *id)
{
	s0_error *err = NULL;
	lt_ok(lt_wait_rc(t, id, false, S0_BOOL_TRUE, &err), &err, "memory resume");
	lt_assert_running(t, id);
}

/* What a sandbox holds in memory: @p mib MiB of random bytes in a file of
 * the sandbox kernel's own tmpfs (/dev/shm: sentry memory, so in runsc's
 * pages.img) with its sha256, /tmp/x (the runtime tmpfs), the PID the next
 * process gets (the sandbox kernel's PID counter), and a background job
 * started through a context (procd's child: it survives a memory cycle). */
typedef struct procs {
	char *id, *ctx;
	char *sum0, *job;
	long next_pid;
} procs;

static long next_pid(lt *t, procs *p)
{
	char *out = sh(t, p->id, p->ctx, "sh -c 'echo -n $$'");
	long v = atol(out);
	free(out);
	return v;
}

static void procs_setup(lt *t, procs *p, int mib)
{
	memset(p, 0, sizeof *p);
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.memory = "1Gi"; /* room for the bytes next to the shell and runsc's own use */
	cfg.auto_resume = S0_BOOL_TRUE;
	p->id = lt_claim(t, NULL, &cfg);
	p->ctx = lt_repl(t, p->id);
	char cmd[512];
	snprintf(cmd, sizeof cmd,
	         "mkdir -p /dev/shm && dd if=/dev/urandom of=/dev/shm/blob bs=1M count=%d "
	         "2>/dev/null && sha256sum /dev/shm/blob | cut -c1-64 | tr -d '\\n'",
	         mib);
	p->sum0 = sh(t, p->id, p->ctx, cmd);
	ck_assert_int_eq(strlen(p->sum0), 64);
	p->job = sh(t, p->id, p->ctx,
	            "setsid sh -c 'while :; do sleep 1; done' </dev/null >/dev/null 2>&1 & "
	            "echo -n $!");
	char *out = sh(t, p->id, p->ctx, "echo tmpdata > /tmp/x; S0VAR=kept-42; echo -n ok");
	ck_assert_str_eq(out, "ok");
	free(out);
	p->next_pid = next_pid(t, p);
}

static void procs_free(procs *p)
{
	free(p->id);
	free(p->ctx);
	free(p->sum0);
	free(p->job);
}

/* The sandbox kernel came back: its memory (the bytes with their checksum),
 * its PID counter, /tmp, procd (PID 1) with the processes it started
 * (docs/memory-gvisor.md). */
static void assert_restored(lt *t, procs *p)
{
	free(p->ctx);
	p->ctx = lt_repl(t, p->id); /* contexts are connections: new after a restore */
	char *out = sh(t, p->id, p->ctx, "cat /tmp/x; sha256sum /dev/shm/blob | cut -c1-64");
	char want[128];
	snprintf(want, sizeof want, "tmpdata\n%s", p->sum0);
	if (strcmp(out, want)) {
		char *ps = sh(t, p->id, p->ctx, "ps -ef 2>&1; ls -la /tmp /dev/shm 2>&1; true");
		ck_abort_msg("restored memory or /tmp differ: %s\n%s", out, ps);
	}
	free(out);
	ck_assert_int_gt(next_pid(t, p), p->next_pid); /* the counter went on */
}

/* "alive" when the background job (its PID, running the loop) lives, else "gone". */
static char *job_alive(lt *t, procs *p)
{
	char cmd[160];
	snprintf(cmd, sizeof cmd,
	         "grep -qs while /proc/%s/cmdline && echo -n alive || echo -n gone", p->job);
	return sh(t, p->id, p->ctx, cmd);
}

/* Fresh processes: a new sandbox kernel (PIDs from the start, nothing in
 * /dev/shm or /tmp). */
static void assert_fresh(lt *t, procs *p)
{
	free(p->ctx);
	p->ctx = lt_repl(t, p->id);
	char *out = sh(t, p->id, p->ctx, "ls /dev/shm/blob /tmp/x 2>/dev/null; true");
	ck_assert_str_eq(out, "");
	free(out);
	ck_assert_int_lt(next_pid(t, p), p->next_pid);
}

static char *mem_image_of(lt *t, const char *id)
{
	cJSON *j = lt_inspect(t, id);
	const char *s = lt_str(j, "sandbox.mem_image");
	char *out = strdup(s ? s : "");
	cJSON_Delete(j);
	return out;
}

/* MEM-03, MEM-06: a memory pause and resume keeps PIDs, a REPL context with
 * its shell variable, a background job,
 * 256 MiB of a python3 process with its checksum, /tmp; new runtime_id,
 * generation + 1. A filesystem-only cycle after it starts fresh processes. */
START_TEST(memory_cycle_keeps_processes)
{
	LT_ROW("MEM-03");
	LT_ROW("MEM-06");
	lt t;
	open_gvisor(&t);
	char *json = NULL;
	ck_assert_int_eq(s0_local_inspect(t.local, NULL, &json, NULL), S0_OK);
	ck_assert_msg(strstr(json, "\"memory\""), "no memory capability: %s", json);
	s0_free(json);
	procs p;
	procs_setup(&t, &p, 256);
	char *rt0 = lt_runtime_id(&t, p.id);
	int64_t g0 = lt_generation(&t, p.id);
	mem_pause(&t, p.id);
	char *img = mem_image_of(&t, p.id);
	ck_assert_int_eq(strlen(img), 64);
	mem_resume(&t, p.id);
	char *rt1 = lt_runtime_id(&t, p.id);
	ck_assert_str_ne(rt0, rt1);
	ck_assert_int_eq(lt_generation(&t, p.id), g0 + 1);
	/* the REPL context of before, its shell with its variable */
	char *out = sh(&t, p.id, p.ctx, "echo -n $S0VAR");
	ck_assert_str_eq(out, "kept-42");
	free(out);
	assert_restored(&t, &p);
	out = job_alive(&t, &p);
	ck_assert_str_eq(out, "alive"); /* procd, restored as PID 1, kept its context's job */
	free(out);
	/* a filesystem-only cycle: the processes end, the files stay */
	lt_pause(&t, p.id);
	lt_quiesce(&t);
	lt_resume(&t, p.id);
	assert_fresh(&t, &p);
	out = job_alive(&t, &p);
	ck_assert_str_eq(out, "gone");
	free(out);
	free(img);
	free(rt0);
	free(rt1);
	procs_free(&p);
	lt_close(&t);
}
END_TEST

static cJSON *rt_call(lt *t, const char *method, const char *id, const char *suffix,
                      const char *body)
{
	char *out = NULL;
	int status = 0;
	LT_OK(s0_runtime_call(t->c, method, id, suffix, body, NULL, &status, &out, &e_));
	cJSON *j = cJSON_Parse(out);
	s0_free(out);
	ck_assert_ptr_nonnull(j);
	return j;
}

/* The session's current attempt: its number and PID, once it runs (bounded: 10 s). */
static void session_running(lt *t, const char *id, const char *sid, int64_t *number, int *pid)
{
	char sfx[160];
	snprintf(sfx, sizeof sfx, "/sessions/%s", sid);
	for (int i = 0; i < 1000; i++) {
		cJSON *s = rt_call(t, "GET", id, sfx, NULL);
		const cJSON *att = cJSON_GetObjectItem(s, "attempt");
		bool up = !strcmp(s0__json_str(s, "phase"), "running");
		*number = s0__json_i64(att, "number", -1);
		*pid = (int)s0__json_i64(att, "pid", 0);
		cJSON_Delete(s);
		if (up)
			return;
		usleep(10000);
	}
	ck_abort_msg("session %s never ran", sid);
}

/* SES-06 with real processes: a session's attempt runs on through a memory
 * pause/resume with its PID (procd kept it; no recovery, no second copy),
 * and a filesystem-only cycle after it restarts it (attempt 2). */
START_TEST(session_attempt_survives_memory_cycle)
{
	LT_ROW("SES-06");
	lt t;
	open_gvisor(&t);
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	char *id = lt_claim(&t, NULL, &cfg);
	cJSON *s = rt_call(&t, "POST", id, "/sessions",
	                   "{\"command\":[\"/bin/sh\",\"-c\",\"exec sleep 1000\"]}");
	char *sid = strdup(s0__json_str(s, "id"));
	cJSON_Delete(s);
	int64_t n0, n1;
	int pid0, pid1;
	session_running(&t, id, sid, &n0, &pid0);
	ck_assert_int_gt(pid0, 1);
	mem_pause(&t, id);
	mem_resume(&t, id);
	session_running(&t, id, sid, &n1, &pid1);
	ck_assert_int_eq(n1, n0);
	ck_assert_int_eq(pid1, pid0);
	char *ctx = lt_repl(&t, id);
	char *out = sh(&t, id, ctx,
	               "echo -n $(grep -l '[s]leep.1000' /proc/[0-9]*/cmdline 2>/dev/null | wc -l)");
	ck_assert_str_eq(out, "1"); /* the one attempt, not a recovered copy next to it */
	free(out);
	/* the driver follows the adopted attempt: a stop reaches its process */
	char sfx[160];
	snprintf(sfx, sizeof sfx, "/sessions/%s/desired-state", sid);
	cJSON_Delete(rt_call(&t, "PUT", id, sfx, "{\"state\":\"stopped\"}"));
	snprintf(sfx, sizeof sfx, "/sessions/%s", sid);
	bool stopped = false;
	for (int i = 0; i < 1000 && !stopped; i++) {
		s = rt_call(&t, "GET", id, sfx, NULL);
		stopped = !strcmp(s0__json_str(s, "phase"), "stopped");
		cJSON_Delete(s);
		if (!stopped)
			usleep(10000);
	}
	ck_assert_msg(stopped, "the adopted attempt did not stop");
	free(ctx);
	free(sid);
	free(id);
	lt_close(&t);
}
END_TEST

/* TTL-07 (memory half): a request to a memory-paused sandbox wakes it and
 * the wake restores the retained image. */
START_TEST(auto_resume_restores_memory)
{
	LT_ROW("TTL-07");
	lt t;
	open_gvisor(&t);
	procs p;
	procs_setup(&t, &p, 16);
	int64_t g0 = lt_generation(&t, p.id);
	mem_pause(&t, p.id);
	assert_restored(&t, &p); /* its context request is the wake */
	ck_assert_int_eq(lt_generation(&t, p.id), g0 + 1);
	procs_free(&p);
	lt_close(&t);
}
END_TEST

typedef struct roots {
	s0__objid v[4096];
	size_t n;
} roots;

static int collect(void *ctx, int kind, const s0__objid *id)
{
	(void)kind;
	roots *r = ctx;
	if (r->n < sizeof r->v / sizeof r->v[0])
		r->v[r->n++] = *id;
	return S0_OK;
}

/* Flip a byte in the middle of stored object @p id. */
static void flip_byte(lt *t, const s0__objid *id)
{
	s0__objstore *os = s0__storage_objstore(s0__local_engine(t->local)->storage);
	char *path = NULL;
	uint64_t off, len;
	ck_assert_int_eq(s0__objdir_locate(s0__objstore_backend(os), id, &path, &off, &len, NULL),
	                 S0_OK);
	int fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	uint8_t b;
	ck_assert_int_eq(pread(fd, &b, 1, (off_t)(off + len / 2)), 1);
	b ^= 0x5a;
	ck_assert_int_eq(pwrite(fd, &b, 1, (off_t)(off + len / 2)), 1);
	close(fd);
	free(path);
}

/* Damage the retained image of @p id: flip a byte in the middle of the
 * largest stored object (a chunk of pages.img), or delete every object of
 * the image but its manifest and small state parts. */
static void damage_image(lt *t, const char *id, bool delete_chunks)
{
	s0__engine *e = s0__local_engine(t->local);
	s0__objstore *os = s0__storage_objstore(e->storage);
	char *hex = mem_image_of(t, id);
	s0__objid iid;
	ck_assert_int_eq(s0__objid_parse(hex, &iid, NULL), S0_OK);
	static roots r;
	r.n = 0;
	ck_assert_int_eq(s0__ckpt_image_roots(e->ckpt, &iid, collect, &r, NULL), S0_OK);
	size_t best = r.n;
	uint64_t best_len = 0;
	for (size_t i = 0; i < r.n; i++) {
		char *path = NULL;
		uint64_t off, len;
		if (s0__objdir_locate(s0__objstore_backend(os), &r.v[i], &path, &off, &len, NULL) < 0)
			continue;
		if (delete_chunks && len >= (512u << 10)) { /* chunks of 1 MiB random pages */
			int fd = open(path, O_RDWR);
			ck_assert_int_ge(fd, 0);
			uint8_t zero[4096] = {0};
			for (uint64_t k = 0; k < len; k += sizeof zero)
				ck_assert_int_ge(pwrite(fd, zero, len - k < sizeof zero ? len - k : sizeof zero,
				                        (off_t)(off + k)), 0);
			close(fd);
		}
		if (len > best_len) {
			best_len = len;
			best = i;
		}
		free(path);
	}
	ck_assert_msg(best < r.n && best_len >= (512u << 10), "no chunk object found");
	if (!delete_chunks)
		flip_byte(t, &r.v[best]);
	free(hex);
}

/* MFB-03, MFB-04, MFB-05: a stored chunk with a flipped byte (loop 0) or
 * every chunk object wiped (loop 1): the restore fails before anything runs
 * (never garbage): resumed false, the target reclaimed, generation consumed
 * (g+2 at the end), a filesystem-only replacement with fresh processes. */
START_TEST(damaged_chunk_falls_back)
{
	LT_ROW("MFB-03");
	LT_ROW("MFB-04");
	LT_ROW("MFB-05");
	lt t;
	open_gvisor(&t);
	procs p;
	procs_setup(&t, &p, 16);
	int64_t g0 = lt_generation(&t, p.id);
	mem_pause(&t, p.id);
	damage_image(&t, p.id, _i == 1);
	s0_lifecycle_result *lr = NULL;
	LT_OK(s0_sandbox_resume(t.c, p.id, S0_BOOL_TRUE, &lr, &e_));
	ck_assert(!s0_lifecycle_result_resumed(lr));
	s0_lifecycle_result_free(lr);
	mem_resume(&t, p.id); /* waits for the replacement */
	ck_assert_int_eq(lt_generation(&t, p.id), g0 + 2);
	assert_fresh(&t, &p);
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* MFB-02: an image whose fingerprint differs from the destination's
 * resumes with fresh processes on the committed RootFS: the runtime
 * version, as another runsc build would give (a doctored fingerprint: one
 * runsc build in CI). */
START_TEST(fingerprint_mismatch_is_filesystem_only)
{
	LT_ROW("MFB-02");
	lt t;
	open_gvisor(&t);
	procs p;
	procs_setup(&t, &p, 16);
	mem_pause(&t, p.id);
	LT_OK(s0_local_fault_arm(t.local, "carrier_fingerprint@runtime_version", S0_FAULT_FAIL, 0, 0,
	                         &e_));
	mem_resume(&t, p.id);
	LT_OK(s0_local_fault_release(t.local, "carrier_fingerprint", &e_));
	assert_fresh(&t, &p);
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* The build of the procd the sandbox's runtime runs (its inspection), and
 * the sha256 of the binary bound where that procd maps it, seen inside. */
static char *procd_build_of(lt *t, procs *p, char **inside)
{
	cJSON *j = lt_inspect(t, p->id);
	const cJSON *rts = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "node"), "runtimes");
	ck_assert_int_eq(cJSON_GetArraySize(rts), 1);
	const char *b = s0__json_str(cJSON_GetObjectItem(cJSON_GetArrayItem(rts, 0), "guest"),
	                             "procd_build");
	ck_assert_msg(b && !strncmp(b, "pd-", 3) && strcmp(b, "pd-unknown"), "procd_build %s", b);
	char *out = strdup(b);
	cJSON_Delete(j);
	*inside = sh(t, p->id, p->ctx,
	             "sha256sum " S0__GV_PROCD_DIR "/" S0__GV_PROCD_NAME " | cut -c1-64 | tr -d '\\n'");
	ck_assert_int_eq(strlen(*inside), 64);
	return out;
}

/* MEM-11 with the real trigger: the backend runs a copy of procd
 * ($S0_PROCD) that gets other bytes (an upgrade) between the pause and
 * the resume. The memory resume restores (the REPL's variable, memory,
 * PIDs) and its PID 1 is the captured procd — the build and the bytes it
 * maps, retained with the image (docs/memory-gvisor.md "procd of a
 * restore"). A second capture stores that procd's chunk once (the same
 * object); a flipped byte in the retained procd makes the image unusable:
 * the resume starts fresh processes under the current procd. */
START_TEST(procd_upgrade_keeps_captured_procd)
{
	LT_ROW("MEM-11");
	char pd[] = "/tmp/s0-gvm-procd.XXXXXX", *orig = NULL;
	LT_OK(s0__gv_procd_find(&orig, &e_));
	ck_assert(mkdtemp(pd));
	char *copy = s0__asprintf("%s/s0-procd", pd), cmd[1024];
	snprintf(cmd, sizeof cmd, "cp %s %s", orig, copy);
	ck_assert_int_eq(system(cmd), 0);
	free(orig);
	setenv("S0_PROCD", copy, 1);
	lt t;
	open_gvisor(&t);
	unsetenv("S0_PROCD");
	procs p;
	procs_setup(&t, &p, 16);
	char *in0 = NULL, *in1 = NULL, *in2 = NULL;
	char *b0 = procd_build_of(&t, &p, &in0);
	int64_t g0 = lt_generation(&t, p.id);
	mem_pause(&t, p.id);
	char *img0 = mem_image_of(&t, p.id);
	FILE *f = fopen(copy, "ae"); /* an upgrade: other bytes (trailing ones: it still runs) */
	ck_assert(f && fputs("another build", f) >= 0 && fclose(f) == 0);
	mem_resume(&t, p.id);
	ck_assert_int_eq(lt_generation(&t, p.id), g0 + 1);
	char *out = sh(&t, p.id, p.ctx, "echo -n $S0VAR"); /* the REPL of before */
	ck_assert_str_eq(out, "kept-42");
	free(out);
	char *b1 = procd_build_of(&t, &p, &in1);
	ck_assert_str_eq(b1, b0); /* the captured daemon, not the upgrade */
	ck_assert_str_eq(in1, in0);
	assert_restored(&t, &p);
	/* captured again: the retained procd is the same stored object */
	mem_pause(&t, p.id);
	char *img1 = mem_image_of(&t, p.id);
	s0__engine *e = s0__local_engine(t.local);
	static roots r0, r1;
	s0__objid id0, id1;
	ck_assert_int_eq(s0__objid_parse(img0, &id0, NULL), S0_OK);
	ck_assert_int_eq(s0__objid_parse(img1, &id1, NULL), S0_OK);
	r0.n = r1.n = 0; /* the manifest, then the state blob's parts: procd's first */
	ck_assert_int_eq(s0__ckpt_image_roots(e->ckpt, &id0, collect, &r0, NULL), S0_OK);
	ck_assert_int_eq(s0__ckpt_image_roots(e->ckpt, &id1, collect, &r1, NULL), S0_OK);
	ck_assert(r0.n > 1 && r1.n > 1 && !memcmp(&r0.v[1], &r1.v[1], sizeof r0.v[1]));
	flip_byte(&t, &r1.v[1]); /* the retained procd damaged: its object fails verification */
	s0__objstore *os = s0__storage_objstore(e->storage);
	s0__objctx *cx = NULL;
	void *d = NULL;
	size_t dl = 0;
	s0_error *ge = NULL;
	LT_OK(s0__objstore_ctx_new(os, &cx, &e_));
	ck_assert_int_eq(s0__objstore_get_alloc(os, cx, &r1.v[1], &d, &dl, &ge), S0_ECORRUPT);
	s0_error_free(ge);
	s0__objctx_free(cx);
	/* the engine cannot read the image's state: fresh processes */
	mem_resume(&t, p.id);
	assert_fresh(&t, &p);
	char *b2 = procd_build_of(&t, &p, &in2); /* a fresh start: the current procd */
	ck_assert_str_ne(b2, b0);
	ck_assert_str_ne(in2, in0);
	free(b0);
	free(b1);
	free(b2);
	free(in0);
	free(in1);
	free(in2);
	free(img0);
	free(img1);
	procs_free(&p);
	lt_close(&t);
	unlink(copy);
	rmdir(pd);
	free(copy);
}
END_TEST

/* MEM-13: a memory fork of a running sandbox leaves the parent running
 * (same runtime_id and processes); the child resumes the parent's
 * processes from the image. */
/* SIGKILL the runsc sandbox process of runtime @p rid (argv "boot" ...
 * <rid>), found in /proc: a generation killed from outside. */
static void kill_runsc_sandbox(const char *rid)
{
	DIR *d = opendir("/proc");
	ck_assert_ptr_nonnull(d);
	int killed = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		char path[300], buf[8192];
		snprintf(path, sizeof path, "/proc/%s/cmdline", de->d_name);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[n] = '\0';
		bool boot = false, ours = false;
		for (size_t i = 0; i < n; i += strlen(buf + i) + 1) {
			boot |= !strcmp(buf + i, "boot");
			ours |= !strcmp(buf + i, rid);
		}
		if (boot && ours && kill(atoi(de->d_name), SIGKILL) == 0)
			killed++;
	}
	closedir(d);
	ck_assert_int_eq(killed, 1);
}

START_TEST(memory_fork_leaves_parent_running)
{
	LT_ROW("MEM-13");
	LT_ROW("REC-01");
	lt t;
	open_gvisor(&t);
	procs p;
	procs_setup(&t, &p, 16);
	char *rt0 = lt_runtime_id(&t, p.id);
	s0_fork_options fo = S0_FORK_OPTIONS_INIT;
	fo.memory = 1;
	fo.idempotency_key = "gv-fork";
	s0_sandbox_info *sb = NULL;
	s0_error *err = NULL;
	int rc;
	/* 503 capture_pending while the capture runs: the same key again */
	for (int i = 0; i < 600 && (rc = s0_sandbox_fork(t.c, p.id, &fo, &sb, &err)) == S0_EUNAVAILABLE;
	     i++) {
		s0_error_free(err);
		err = NULL;
		lt_nap_ms(100);
	}
	lt_ok(rc, &err, "memory fork");
	char *child = strdup(s0_sandbox_info_id(sb));
	ck_assert(s0_sandbox_info_paused(sb));
	s0_sandbox_info_free(sb);
	/* the parent runs on, the same runtime and processes */
	char *rt1 = lt_runtime_id(&t, p.id);
	ck_assert_str_eq(rt0, rt1);
	assert_restored(&t, &p);
	/* the child continues the parent's processes */
	procs c = {.id = child, .sum0 = strdup(p.sum0), .next_pid = p.next_pid};
	mem_resume(&t, c.id);
	assert_restored(&t, &c);
	/* REC-01: the restored generation killed from outside is noticed and
	 * recovered: a fresh generation on the committed head */
	char *crt = lt_runtime_id(&t, c.id);
	int64_t cgen = lt_generation(&t, c.id);
	double crashed = lt_inum(&t, NULL, "node.runtimes_crashed");
	struct timespec k0, k1;
	clock_gettime(CLOCK_MONOTONIC, &k0);
	kill_runsc_sandbox(crt);
	char *nrt = NULL;
	for (int i = 0; i < 600; i++) {
		lt_advance(&t, 100);
		lt_quiesce(&t);
		s0_sandbox_info *ci = lt_get(&t, c.id);
		bool up = s0_sandbox_info_status(ci) == S0_STATUS_RUNNING;
		s0_sandbox_info_free(ci);
		if (up && (nrt = lt_runtime_id(&t, c.id)) && strcmp(nrt, crt))
			break;
		free(nrt);
		nrt = NULL;
		lt_nap_ms(20);
	}
	ck_assert_msg(nrt, "the killed generation was not recovered");
	clock_gettime(CLOCK_MONOTONIC, &k1);
	fprintf(stderr, "recovered after kill -9 in %ld ms\n",
	        (long)((k1.tv_sec - k0.tv_sec) * 1000 + (k1.tv_nsec - k0.tv_nsec) / 1000000));
	ck_assert_int_gt(lt_generation(&t, c.id), cgen);
	/* inspection counts it as a crash, not a pause */
	ck_assert_double_eq(lt_inum(&t, NULL, "node.runtimes_crashed"), crashed + 1);
	assert_fresh(&t, &c);
	free(nrt);
	free(crt);
	procs_free(&c);
	free(rt0);
	free(rt1);
	procs_free(&p);
	lt_close(&t);
}
END_TEST

/* Where the backend dies (SIGKILL at a fault point): mid-capture (the
 * image taken, the sandbox stopped, nothing stored) and mid-restore
 * (runsc restore done, the resume not recorded). */
static const struct {
	const char *point;
	bool resume; /* the point is on the memory resume after a memory pause */
} MEM_CRASHES[] = {
	{"capture@after-authorize", false},
	{"resume_delay", true},
};

/* `kill -9` of the backend mid-capture and mid-restore: the next open
 * reclaims what the dead process left (runsc sandboxes, carriers, image
 * tmpfs and directories, cgroups). A capture killed after authorisation is
 * never reported as retained (MFB-08): the sandbox recovers on its last
 * committed head with no image, its processes fresh (REC-01). A
 * killed restore consumed nothing durable: the image stays retained and the
 * next memory resume restores it. After close nothing is left on the host. */
START_TEST(kill_mid_capture_and_restore)
{
	LT_ROW("MFB-08");
	LT_ROW("REC-01");
	const char *point = MEM_CRASHES[_i].point;
	bool on_resume = MEM_CRASHES[_i].resume;
	fprintf(stderr, "crash at %s\n", point);
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); /* the killed child's daemons come here */
	char *dir = s0_test_tmpdir("gvmcrash");
	char *idfile = malloc(strlen(dir) + 8);
	sprintf(idfile, "%s/id", dir);
	const char *tree = getenv("S0_TEST_PYTHON_TREE");
	ck_assert_msg(tree && *tree, "S0_TEST_PYTHON_TREE unset: run scripts/test gvisor");
	setenv("S0_GVISOR_TEMPLATE", tree, 1);
	pid_t pid = fork();
	if (pid == 0) { /* the backend that dies */
		lt t;
		gv_open_dir(&t, dir);
		procs p;
		procs_setup(&t, &p, 16);
		if (on_resume)
			mem_pause(&t, p.id);
		FILE *f = fopen(idfile, "we");
		fprintf(f, "%s %s", p.id, p.sum0);
		fclose(f);
		s0_error *e = NULL;
		if (s0_local_fault_arm(t.local, point, S0_FAULT_CRASH, 1, 0, &e) != S0_OK)
			_exit(4);
		lt_wait_rc(&t, p.id, !on_resume, S0_BOOL_TRUE, &e);
		lt_quiesce(&t);
		_exit(5); /* the crash point was not reached */
	}
	int st = 0;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "child status %d", st);
	FILE *f = fopen(idfile, "re");
	ck_assert_ptr_nonnull(f);
	char id[128] = "", sum[128] = "";
	ck_assert_int_eq(fscanf(f, "%127s %127s", id, sum), 2);
	fclose(f);

	lt t;
	gv_open_dir(&t, dir);
	lt_quiesce(&t);
	if (!on_resume) { /* never retained: the sandbox recovers on its committed head */
		char *img = mem_image_of(&t, id);
		ck_assert_str_eq(img, "");
		free(img);
	}
	if (lt_status(&t, id) != S0_STATUS_RUNNING) {
		s0_error *err = NULL;
		lt_ok(lt_wait_rc(&t, id, false, S0_BOOL_TRUE, &err), &err, "memory resume");
	}
	lt_assert_running(&t, id);
	char what[512];
	char *live = lt_runtime_id(&t, id);
	gv_leftovers_except(dir, live, what, sizeof what);
	ck_assert_msg(!what[0], "left after reopening (live %s): %s", live, what);
	free(live);
	char *ctx = lt_repl(&t, id);
	char *out = lt_sh(&t, id, ctx, "sha256sum /dev/shm/blob 2>/dev/null | cut -c1-64; true",
	                  NULL);
	ck_assert_str_eq(out, on_resume ? sum : ""); /* the image restored, or none kept */
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

static Suite *gvisor_memory_suite(void)
{
	Suite *s = suite_create("gvisor-memory");
	TCase *tc = tcase_create("memory");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, memory_cycle_keeps_processes);
	tcase_add_loop_test(tc, damaged_chunk_falls_back, 0, 2);
	tcase_add_test(tc, fingerprint_mismatch_is_filesystem_only);
	tcase_add_test(tc, procd_upgrade_keeps_captured_procd);
	tcase_add_test(tc, memory_fork_leaves_parent_running);
	tcase_add_test(tc, auto_resume_restores_memory);
	tcase_add_test(tc, session_attempt_survives_memory_cycle);
	tcase_add_loop_test(tc, kill_mid_capture_and_restore, 0,
	                    (int)(sizeof MEM_CRASHES / sizeof MEM_CRASHES[0]));
	suite_add_tcase(s, tc);
	return s;
}

S0_TEST_MAIN(gvisor_memory_suite)
