/*
 * local_crasher: the separate program the lifecycle crash tests run with
 * fork + exec and kill (docs/decisions.md "Manager restart vs crash": killing
 * the process is a manager and node crash together).
 *
 *   local_crasher prepare DIR STATE KIND
 *       Open a backend on DIR (manual clock), claim one sandbox (KIND
 *       "ttl": ttl 60 s; "hard": hard_ttl 3600 s; otherwise none), write
 *       /workspace/A, pause it so A is committed, and record in STATE:
 *         id=<sandbox id>
 *         head=<committed head generation>
 *         gen=<runtime generation of the paused sandbox>
 *       then close cleanly. No crash point is armed. KIND "mem" also
 *       starts a REPL context (x=42, /tmp/x "kept") before a memory pause
 *       ({"memory": true}) and records its id as ctx=<context id>.
 *   local_crasher run DIR STATE SCENARIO
 *       Reopen DIR, and with S0_CRASH_AT=<point> armed run SCENARIO:
 *         pause   resume, write /workspace/B, pause_and_wait
 *         ttl     resume, write B, let the soft TTL expire
 *         delete  resume, write B, delete
 *         hard    let the hard TTL expire
 *         resume  resume
 *         crash   resume, write B, runtime_crash of the sandbox
 *         mempause     resume, write B, start the REPL of KIND "mem" (its
 *                      id appended to STATE as ctx=), memory pause_and_wait
 *         memresume    memory resume (of a KIND "mem" sandbox)
 *         memfallback  memory resume with the fault `restore` failing it
 *         capfail      as mempause with the fault `capture@after-authorize`
 *                      failing the capture
 *         capfail-held as capfail, the source's terminal proof held
 *                      (`resource_leak:mount`): the operation stays at its
 *                      recorded capture failure
 *       The point is a lifecycle crash point (armed as the fault
 *       manager_restart@<point> in S0_FAULT_CRASH mode: intent-recorded,
 *       published, committed, released, fallback-recorded, delete-recorded,
 *       delete-reclaimed, resume-ready, recover-recorded, recover-released)
 *       or a storage one
 *       (publish.*, objects.*: local/objects/crash.h reads S0_CRASH_AT
 *       itself; prepare leaves nothing to publish before the scenario, so
 *       the first hit is the scenario's), or "end": no point inside the
 *       engine, the crasher kills itself (SIGKILL) once the scenario's work
 *       is done and quiesced, i.e. right after its last durable step (a
 *       resume's running commit, a recovery's or a fallback's replacement
 *       commit, an operation held at a recorded state). The process must
 *       die by SIGKILL there; reaching the end otherwise exits 3.
 *
 * Exit status 0 (prepare), 3 (run finished without crashing), 1 on errors.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "local/lifecycle/engine_open.h"
#include "objenv.h"
#include "local/local_internal.h"
#include "pgtest.h"
#include "sandbox0/local.h"
#include "sandbox0/sandbox0.h"

#define T0 1700000000000LL

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "local_crasher: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static void check(int rc, s0_error *err, const char *what)
{
	if (rc != S0_OK)
		die("%s: %s (%s)", what, err ? s0_error_message(err) : "", s0_code_name(rc));
	s0_error_free(err);
}

#define CHECK(call, what)                                                                  \
	do {                                                                               \
		s0_error *e_ = NULL;                                                       \
		int r_ = (call);                                                           \
		check(r_, e_, what);                                                       \
	} while (0)

static void open_backend(const char *dir, s0_local **l, s0_client **c)
{
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.manual_clock = 1;
	o.manual_clock_start_unix_ms = T0;
	o.object_store = getenv("S0_TEST_OBJECT_STORE"); /* NULL: as recorded (pack when new) */
	o.runtime = getenv("S0_TEST_RUNTIME"); /* NULL: sim; gvisor in unit-local-gvisor */
	char *meta = s0_test_meta_url(dir); /* S0_TEST_META: the directory's database */
	o.meta = meta;
	char *url = o.object_store && !strcmp(o.object_store, "s3") ? objenv_s3_url(dir) : NULL;
	if (url)
		o.object_store = url;
	CHECK(s0_local_open(dir, &o, l, &e_), "open");
	free(url);
	free(meta);
	CHECK(s0_client_new_local(*l, NULL, c, &e_), "client");
}

static void write_file(s0_client *c, const char *id, const char *path, const char *text)
{
	CHECK(s0_files_write(c, id, path, text, strlen(text), &e_), path);
}

static void pause_wait(s0_client *c, const char *id, int32_t memory)
{
	s0_wait_options wo = S0_WAIT_OPTIONS_INIT;
	wo.memory = memory;
	s0_sandbox_info *sb = NULL;
	CHECK(s0_sandbox_pause_and_wait(c, id, &wo, &sb, &e_), "pause_and_wait");
	s0_sandbox_info_free(sb);
}

static void resume(s0_client *c, const char *id, int32_t memory)
{
	s0_lifecycle_result *lr = NULL;
	CHECK(s0_sandbox_resume(c, id, memory, &lr, &e_), "resume");
	s0_lifecycle_result_free(lr);
}

/* One command in a context; its reply discarded. */
static void sh(s0_client *c, const char *id, const char *ctx, const char *cmd)
{
	char *out = NULL;
	CHECK(s0_context_exec(c, id, ctx, cmd, &out, &e_), cmd);
	s0_free(out);
}

/* A REPL holding x=42 and /tmp/x "kept"; its id into ctx. */
static void start_repl(s0_client *c, const char *id, char *ctx, size_t n)
{
	char *out = NULL;
	CHECK(s0_context_create(c, id, "{\"type\":\"repl\"}", &out, &e_), "context");
	cJSON *j = cJSON_Parse(out);
	const cJSON *cid = cJSON_GetObjectItem(j, "id");
	if (!cJSON_IsString(cid))
		die("no context id in %s", out);
	snprintf(ctx, n, "%s", cid->valuestring);
	cJSON_Delete(j);
	s0_free(out);
	sh(c, id, ctx, "x=42");
	sh(c, id, ctx, "echo kept > /tmp/x");
}

static void state_append(const char *state, const char *key, const char *value)
{
	FILE *f = fopen(state, "a");
	if (!f)
		die("cannot write %s", state);
	fprintf(f, "%s=%s\n", key, value);
	fclose(f);
}

static void prepare(const char *dir, const char *state, const char *kind)
{
	s0_local *l = NULL;
	s0_client *c = NULL;
	open_backend(dir, &l, &c);
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	if (!strcmp(kind, "ttl")) {
		cfg.set = S0_CONFIG_SET_TTL;
		cfg.ttl_sec = 60;
	} else if (!strcmp(kind, "hard")) {
		cfg.set = S0_CONFIG_SET_HARD_TTL;
		cfg.hard_ttl_sec = 3600;
	}
	s0_sandbox_info *sb = NULL;
	CHECK(s0_sandbox_claim(c, "default", NULL, &cfg, &sb, &e_), "claim");
	char id[128];
	snprintf(id, sizeof id, "%s", s0_sandbox_info_id(sb));
	s0_sandbox_info_free(sb);
	write_file(c, id, "/workspace/A", "committed before the crash");
	bool mem = !strcmp(kind, "mem");
	char ctx[128] = "";
	if (mem)
		start_repl(c, id, ctx, sizeof ctx);
	pause_wait(c, id, mem ? S0_BOOL_TRUE : S0_BOOL_UNSET);
	CHECK(s0_sandbox_get(c, id, &sb, &e_), "get");
	long long gen = (long long)s0_sandbox_info_runtime_generation(sb);
	s0_sandbox_info_free(sb);
	char *js = NULL;
	CHECK(s0_local_inspect(l, id, &js, &e_), "inspect");
	const char *h = strstr(js, "\"head\":\"");
	if (!h)
		die("no head in %s", js);
	h += 8;
	FILE *f = fopen(state, "w");
	if (!f)
		die("cannot write %s", state);
	fprintf(f, "id=%s\nhead=%.*s\ngen=%lld\n", id, (int)(strchr(h, '"') - h), h, gen);
	if (mem)
		fprintf(f, "ctx=%s\n", ctx);
	fclose(f);
	s0_free(js);
	s0_client_free(c);
	s0_local_close(l);
}

static bool lifecycle_point(const char *p)
{
	static const char *const pts[] = {
	        "intent-recorded", "published",        "committed",        "released",
	        "fallback-recorded", "delete-recorded", "delete-reclaimed", "resume-ready",
	        "recover-recorded",  "recover-released"};
	for (size_t i = 0; i < sizeof pts / sizeof pts[0]; i++)
		if (!strcmp(p, pts[i]))
			return true;
	return false;
}

static void run(const char *dir, const char *state, const char *scenario)
{
	char id[128] = "";
	FILE *f = fopen(state, "r");
	if (!f || fscanf(f, "id=%127s", id) != 1)
		die("cannot read %s", state);
	fclose(f);
	const char *at = getenv("S0_CRASH_AT");
	s0_local *l = NULL;
	s0_client *c = NULL;
	open_backend(dir, &l, &c);
	if (at && lifecycle_point(at)) {
		char name[160];
		snprintf(name, sizeof name, "manager_restart@%s", at);
		CHECK(s0_local_fault_arm(l, name, S0_FAULT_CRASH, 0, 0, &e_), "arm");
	}
	if (!strcmp(scenario, "pause")) {
		resume(c, id, S0_BOOL_UNSET);
		write_file(c, id, "/workspace/B", "written before the pause");
		pause_wait(c, id, S0_BOOL_UNSET);
	} else if (!strcmp(scenario, "mempause")) {
		resume(c, id, S0_BOOL_UNSET);
		write_file(c, id, "/workspace/B", "written before the pause");
		char ctx[128];
		start_repl(c, id, ctx, sizeof ctx);
		state_append(state, "ctx", ctx);
		pause_wait(c, id, S0_BOOL_TRUE);
	} else if (!strcmp(scenario, "capfail") || !strcmp(scenario, "capfail-held")) {
		CHECK(s0_local_fault_arm(l, "capture@after-authorize", S0_FAULT_FAIL, 1, 0, &e_),
		      "arm capture");
		if (!strcmp(scenario, "capfail-held"))
			CHECK(s0_local_fault_arm(l, "resource_leak:mount", S0_FAULT_HOLD, 0, 0, &e_),
			      "arm proof");
		resume(c, id, S0_BOOL_UNSET);
		write_file(c, id, "/workspace/B", "written before the pause");
		char ctx[128];
		start_repl(c, id, ctx, sizeof ctx);
		state_append(state, "ctx", ctx);
		s0_lifecycle_result *lr = NULL;
		CHECK(s0_sandbox_pause(c, id, S0_BOOL_TRUE, &lr, &e_), "pause");
		s0_lifecycle_result_free(lr);
		CHECK(s0_local_quiesce(l, 10000, &e_), "quiesce");
	} else if (!strcmp(scenario, "memresume")) {
		resume(c, id, S0_BOOL_TRUE);
	} else if (!strcmp(scenario, "memfallback")) {
		CHECK(s0_local_fault_arm(l, "restore", S0_FAULT_FAIL, 1, 0, &e_), "arm restore");
		resume(c, id, S0_BOOL_TRUE);
		CHECK(s0_local_quiesce(l, 10000, &e_), "quiesce");
	} else if (!strcmp(scenario, "ttl")) {
		resume(c, id, S0_BOOL_UNSET);
		write_file(c, id, "/workspace/B", "written before the ttl pause");
		CHECK(s0_local_clock_advance(l, 61000, &e_), "advance");
		CHECK(s0_local_quiesce(l, 10000, &e_), "quiesce");
	} else if (!strcmp(scenario, "delete")) {
		resume(c, id, S0_BOOL_UNSET);
		write_file(c, id, "/workspace/B", "written before the delete");
		CHECK(s0_sandbox_delete(c, id, &e_), "delete");
		CHECK(s0_local_quiesce(l, 10000, &e_), "quiesce");
	} else if (!strcmp(scenario, "hard")) {
		CHECK(s0_local_clock_advance(l, 3601 * 1000LL, &e_), "advance");
		CHECK(s0_local_quiesce(l, 10000, &e_), "quiesce");
	} else if (!strcmp(scenario, "resume")) {
		resume(c, id, S0_BOOL_UNSET);
	} else if (!strcmp(scenario, "crash")) {
		resume(c, id, S0_BOOL_UNSET);
		write_file(c, id, "/workspace/B", "lost with the runtime");
		char name[160];
		snprintf(name, sizeof name, "runtime_crash@%s", id);
		CHECK(s0_local_fault_arm(l, name, S0_FAULT_FAIL, 1, 0, &e_), "arm crash");
		CHECK(s0_local_quiesce(l, 10000, &e_), "quiesce");
	} else {
		die("unknown scenario %s", scenario);
	}
	if (at && !strcmp(at, "end")) {
		CHECK(s0_local_quiesce(l, 10000, &e_), "quiesce");
		raise(SIGKILL);
	}
	s0_client_free(c);
	s0_local_close(l);
	exit(3);
}

int main(int argc, char **argv)
{
	if (argc != 5)
		die("usage: local_crasher prepare|run DIR STATE KIND|SCENARIO");
	if (!strcmp(argv[1], "prepare")) {
		unsetenv("S0_CRASH_AT");
		prepare(argv[2], argv[3], argv[4]);
		return 0;
	}
	if (!strcmp(argv[1], "run"))
		run(argv[2], argv[3], argv[4]);
	die("unknown mode %s", argv[1]);
}
