/*
 * Conformance of the runtime drivers (local/runtime/runtime.h): every
 * registered driver is driven only through its vtable — probe, open,
 * capabilities, start on an attached RootFS with a runtime-only mount,
 * readiness, the files view, a command in a context, network policy,
 * virtual time, inspection, capture and restore of an execution image
 * through the checkpoint engine, stop, terminal proof. Each test runs once
 * per registered driver (a loop test over the registry), so a new driver
 * gets the suite by its row in registry.c. What a driver lacks by its
 * capability flags is asserted refused, not skipped.
 */
#include <stdio.h>
#include <stdlib.h>

#include "check_main.h"
#include "common/json.h"
#include "local/checkpoint/ckpt.h"
#include "local/objects/objstore.h"
#include "local/runtime/runtime.h"
#include "rt_support.h"
#include "sandbox0/local.h"

/* One driver under test: its host, a RootFS and a generation on it. */
typedef struct drv_fix {
	const s0__rt_driver *d;
	s0__rt_host *h;
	s0_manual_clock *mc;
	s0_clock clock;
	rt_fs fs;
	s0__rt_gen *g;
	char runtime_id[32];
	uint32_t caps;
} drv_fix;

static const char *const EPHEMERAL[] = {"/scratch"};

/* Registered drivers not yet held to this suite, at the end of the
 * registry: "gvisor" does not run on the RootFS it is given yet (its
 * programs' files live in a host tree until the carrier lands,
 * docs/local-backend.md "Runtime gvisor"); its own suite,
 * tests/unit/gvisor (part 45-gvisor, as root), covers what it does. */
static const char *const CONFORMANCE_PENDING[] = {"gvisor", NULL};

static bool conformance_pending(const char *name)
{
	for (size_t i = 0; CONFORMANCE_PENDING[i]; i++)
		if (!strcmp(CONFORMANCE_PENDING[i], name))
			return true;
	return false;
}
static const uint64_t EPHEMERAL_LIMITS[] = {1 << 20};

static const s0__rt_driver *driver_at(int i)
{
	size_t n = 0;
	const s0__rt_driver *const *v = s0__rt_drivers(&n);
	ck_assert_int_lt(i, (int)n);
	return v[i];
}

static void fix_open(drv_fix *f, int i, bool no_memory)
{
	memset(f, 0, sizeof *f);
	f->d = driver_at(i);
	s0_error *e = NULL;
	int rc = f->d->probe(&e);
	ck_assert_msg(rc == S0_OK, "%s cannot run here: %s", f->d->name,
	              e ? s0_error_message(e) : "?");
	ck_assert_int_eq(s0_manual_clock_new(1700000000000, 0, &f->mc, NULL), S0_OK);
	s0_manual_clock_get(f->mc, &f->clock);
	s0__rt_host_opts o = {.clock = &f->clock, .no_memory = no_memory};
	rc = f->d->open(&o, &f->h, &e);
	ck_assert_msg(rc == S0_OK, "open %s: %s", f->d->name, e ? s0_error_message(e) : "?");
	f->caps = f->d->caps(f->h);
	rt_open_fresh(&f->fs, 64 * MiB);
}

/* Start generation gen (runtime id "rt-conf-<gen>") with image (nullable). */
static void fix_start(drv_fix *f, int64_t gen, s0__rt_image *image)
{
	snprintf(f->runtime_id, sizeof f->runtime_id, "rt-conf-%lld", (long long)gen);
	cJSON *env = cJSON_Parse("{\"CONF_VAR\":\"from-env\"}");
	s0__rt_start req = {
		.sandbox_id = "sb-conformance",
		.runtime_id = f->runtime_id,
		.generation = gen,
		.rootfs = f->fs.fs,
		.ephemeral = EPHEMERAL,
		.ephemeral_limits = EPHEMERAL_LIMITS,
		.n_ephemeral = 1,
		.env_vars = env,
		.cpu_millis = 1000,
		.memory_bytes = 512LL << 20,
		.image = image,
	};
	s0_error *e = NULL;
	int rc = f->d->start(f->h, &req, &f->g, &e);
	cJSON_Delete(env);
	ck_assert_msg(rc == S0_OK, "start %s: %s", f->d->name, e ? s0_error_message(e) : "?");
	rc = f->d->ready(f->g, &e);
	ck_assert_msg(rc == S0_OK, "ready %s: %s", f->d->name, e ? s0_error_message(e) : "?");
}

/* Stop the generation and prove it terminal. */
static void fix_stop(drv_fix *f)
{
	s0_error *e = NULL;
	/* before the stop the generation holds its resources: no proof */
	ck_assert_int_eq(f->d->terminal_proof(f->h, f->runtime_id, &e), S0_EUNAVAILABLE);
	s0_error_free(e);
	e = NULL;
	f->d->stop(f->g);
	f->g = NULL;
	int rc = f->d->terminal_proof(f->h, f->runtime_id, &e);
	ck_assert_msg(rc == S0_OK, "terminal proof: %s", e ? s0_error_message(e) : "?");
}

static void fix_close(drv_fix *f)
{
	if (f->g)
		f->d->stop(f->g);
	f->d->close(f->h);
	rt_close(&f->fs);
	s0_manual_clock_free(f->mc);
}

/* A contexts call; asserts success and returns the data. */
static cJSON *call_ok(drv_fix *f, int op, const char *id, const char *body_json, int status)
{
	cJSON *b = body_json ? cJSON_Parse(body_json) : NULL;
	s0__rt_proc_call c = {.op = op, .id = id, .body = b};
	cJSON *data = NULL;
	int st = 0;
	s0_error *e = NULL;
	int rc = f->d->proc_call(f->g, &c, &data, &st, &e);
	cJSON_Delete(b);
	ck_assert_msg(rc == S0_OK, "call %d: %s", op, e ? s0_error_message(e) : "?");
	ck_assert_int_eq(st, status);
	return data;
}

static char *new_repl(drv_fix *f)
{
	cJSON *d = call_ok(f, S0__RT_CTX_CREATE, NULL, "{\"type\":\"repl\"}", 201);
	char *id = strdup(s0__json_str(d, "id"));
	cJSON_Delete(d);
	return id;
}

/* Run cmd in context id; returns its stdout (free()). */
static char *run(drv_fix *f, const char *id, const char *cmd)
{
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "data", cmd);
	char *text = cJSON_PrintUnformatted(b);
	cJSON_Delete(b);
	cJSON *d = call_ok(f, S0__RT_CTX_EXEC, id, text, 200);
	free(text);
	const char *out = s0__json_str(d, "stdout");
	char *copy = strdup(out ? out : "");
	cJSON_Delete(d);
	return copy;
}

static char *files_get(drv_fix *f, const char *path)
{
	void *data = NULL;
	size_t len = 0;
	s0_error *e = NULL;
	int rc = s0__files_read(f->d->files(f->g), path, strlen(path), 0, -1, &data, &len, &e);
	ck_assert_msg(rc == S0_OK, "read %s: %s", path, e ? s0_error_message(e) : "?");
	char *s = malloc(len + 1);
	memcpy(s, data, len);
	s[len] = 0;
	free(data);
	return s;
}

static void files_put(drv_fix *f, const char *path, const char *text)
{
	s0_error *e = NULL;
	int rc = s0__files_write(f->d->files(f->g), path, strlen(path), text, strlen(text), &e);
	ck_assert_msg(rc == S0_OK, "write %s: %s", path, e ? s0_error_message(e) : "?");
}

/* The registry: "sim" is the default, an unknown name is refused naming
 * it, every driver fills every entry of its vtable under a unique name. */
START_TEST(registry_rows)
{
	const s0__rt_driver *d = NULL;
	ck_assert_int_eq(s0__rt_driver_find(NULL, &d, NULL), S0_OK);
	ck_assert_str_eq(d->name, "sim");
	ck_assert_int_eq(s0__rt_driver_find("", &d, NULL), S0_OK);
	ck_assert_str_eq(d->name, "sim");
	s0_error *e = NULL;
	ck_assert_int_eq(s0__rt_driver_find("no-such-runtime", &d, &e), S0_EINVAL);
	ck_assert_str_eq(s0_error_reason(e), "invalid_request");
	ck_assert_msg(strstr(s0_error_message(e), "no-such-runtime") &&
	                  strstr(s0_error_message(e), "sim"),
	              "%s", s0_error_message(e));
	s0_error_free(e);
	size_t n = 0;
	const s0__rt_driver *const *v = s0__rt_drivers(&n);
	ck_assert_uint_ge(n, 1);
	for (size_t i = 0; i < n; i++) {
		const s0__rt_driver *r = v[i];
		ck_assert(r->name && *r->name && r->description && *r->description);
		ck_assert(r->probe && r->open && r->close && r->caps && r->root_tree &&
		          r->fingerprint && r->start &&
		          r->ready && r->stop && r->terminal_proof && r->cut && r->files &&
		          r->network_apply &&
		          r->clock_sync && r->inspect && r->proc_call && r->sessions_adopt &&
		          r->sessions_new && r->sessions_free && r->sessions_save && r->sessions_load &&
		          r->capture && r->procd_version && r->image_restore && r->image_free);
		ck_assert_int_eq(s0__rt_driver_find(r->name, &d, NULL), S0_OK);
		ck_assert_ptr_eq(d, r);
		for (size_t k = 0; k < i; k++)
			ck_assert_str_ne(v[k]->name, r->name);
		/* pending drivers come last (the conformance loop stops before them) */
		if (i > 0 && conformance_pending(v[i - 1]->name))
			ck_assert(conformance_pending(r->name));
	}
	cJSON *caps = s0__rt_caps_json(S0__RT_CAP_MEMORY | S0__RT_CAP_NETWORK);
	char *t = cJSON_PrintUnformatted(caps);
	ck_assert_str_eq(t, "[\"memory\",\"network\"]");
	free(t);
	cJSON_Delete(caps);
}
END_TEST

/* The engine's option: s0_local_options.runtime names the driver; an
 * unknown one fails the open with S0_EINVAL naming it. */
START_TEST(local_option_runtime)
{
	char *dir = s0_test_tmpdir("rtopt");
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.manual_clock = 1;
	o.runtime = "gvisor-not-registered";
	s0_local *l = NULL;
	s0_error *e = NULL;
	ck_assert_int_eq(s0_local_open(dir, &o, &l, &e), S0_EINVAL);
	ck_assert_ptr_null(l);
	ck_assert_msg(strstr(s0_error_message(e), "gvisor-not-registered"), "%s",
	              s0_error_message(e));
	s0_error_free(e);
	e = NULL;
	o.runtime = "sim";
	int rc = s0_local_open(dir, &o, &l, &e);
	ck_assert_msg(rc == S0_OK, "%s", e ? s0_error_message(e) : "?");
	/* inspection names the runtime and what it can do */
	char *json = NULL;
	ck_assert_int_eq(s0_local_inspect(l, NULL, &json, NULL), S0_OK);
	cJSON *ins = cJSON_Parse(json);
	const cJSON *rt = cJSON_GetObjectItem(cJSON_GetObjectItem(ins, "node"), "runtime");
	ck_assert_str_eq(s0__json_str(rt, "name"), "sim");
	char *caps = cJSON_PrintUnformatted(cJSON_GetObjectItem(rt, "capabilities"));
	ck_assert_str_eq(caps, "[\"memory\",\"virtual_time\",\"network\",\"contexts\",\"sessions\"]");
	free(caps);
	cJSON_Delete(ins);
	s0_free(json);
	s0_local_close(l);
	/* a deployment without memory checkpoints: the runtime says so */
	o.disable_memory_checkpoints = 1;
	ck_assert_int_eq(s0_local_open(dir, &o, &l, NULL), S0_OK);
	ck_assert_int_eq(s0_local_inspect(l, NULL, &json, NULL), S0_OK);
	ck_assert_ptr_null(strstr(json, "\"memory\",\"virtual_time\""));
	ck_assert_ptr_nonnull(strstr(json, "\"capabilities\":[\"virtual_time\""));
	s0_free(json);
	s0_local_close(l);
	s0_test_rmrf(dir);
	free(dir);
}
END_TEST

/* start → ready → files view (RootFS and runtime-only trees) → a command
 * → inspection → stop → terminal proof. */
START_TEST(generation_lifecycle)
{
	drv_fix f;
	fix_open(&f, _i, false);
	fix_start(&f, 1, NULL);
	files_put(&f, "/workspace/hello.txt", "on the rootfs\n");
	files_put(&f, "/tmp/t.txt", "in tmpfs\n");
	files_put(&f, "/scratch/s.txt", "ephemeral\n");
	/* the RootFS holds the workspace file and none of the runtime-only ones */
	size_t len = 0;
	char *data = rt_read(&f.fs, "/workspace/hello.txt", &len);
	ck_assert_uint_eq(len, 14);
	free(data);
	void *none = NULL;
	s0_error *e = NULL;
	ck_assert_int_lt(s0__rootfs_read(f.fs.fs, "/scratch/s.txt", 14, 0, -1, NULL, &none, &len, &e),
	                 0);
	ck_assert_ptr_null(none);
	s0_error_free(e);
	e = NULL;
	if (f.caps & S0__RT_CAP_CONTEXTS) {
		char *id = new_repl(&f);
		char *out = run(&f, id, "cat /workspace/hello.txt /tmp/t.txt; echo $CONF_VAR");
		ck_assert_str_eq(out, "on the rootfs\nin tmpfs\nfrom-env\n");
		free(out);
		/* a program's write is what the files view reads */
		free(run(&f, id, "echo written-inside > /workspace/inside.txt"));
		char *got = files_get(&f, "/workspace/inside.txt");
		ck_assert_str_eq(got, "written-inside\n");
		free(got);
		free(id);
	} else {
		cJSON *b = cJSON_Parse("{\"type\":\"repl\"}"), *d = NULL;
		s0__rt_proc_call c = {.op = S0__RT_CTX_CREATE, .body = b};
		int st;
		ck_assert_int_eq(f.d->proc_call(f.g, &c, &d, &st, &e), S0_EUNAVAILABLE);
		s0_error_free(e);
		cJSON_Delete(b);
	}
	cJSON *ins = f.d->inspect(f.g);
	ck_assert(cJSON_IsObject(ins));
	cJSON_Delete(ins);
	ck_assert_str_ne(f.d->procd_version(f.g), "");
	fix_stop(&f);
	/* the RootFS branch is the engine's: it outlives the generation */
	data = rt_read(&f.fs, "/workspace/hello.txt", &len);
	ck_assert_str_eq(data, "on the rootfs\n");
	free(data);
	fix_close(&f);
}
END_TEST

/* Network: without a policy and under block-all an outbound connection
 * to a documentation address fails; loopback stays local. */
START_TEST(network_policy_applied)
{
	drv_fix f;
	fix_open(&f, _i, false);
	fix_start(&f, 1, NULL);
	cJSON *j = cJSON_Parse("{\"mode\":\"block-all\"}");
	s0__netpolicy *p = NULL;
	ck_assert_int_eq(s0__netpolicy_compile(j, &p, NULL), S0_OK);
	cJSON_Delete(j);
	ck_assert_int_eq(f.d->network_apply(f.g, p, NULL), S0_OK);
	if ((f.caps & S0__RT_CAP_CONTEXTS) && (f.caps & S0__RT_CAP_NETWORK)) {
		char *id = new_repl(&f);
		char *out = run(&f, id, "nc -z -w 1 192.0.2.1 80; echo rc=$?");
		ck_assert_str_eq(out, "rc=1\n");
		free(out);
		free(id);
	}
	ck_assert_int_eq(f.d->network_apply(f.g, NULL, NULL), S0_OK); /* network down */
	fix_stop(&f);
	fix_close(&f);
}
END_TEST

/* Virtual time moves only through clock_sync: a background job due in
 * 10 s has not run at +9.999 s and has at +10 s. */
START_TEST(clock_sync_moves_virtual_time)
{
	drv_fix f;
	fix_open(&f, _i, false);
	if (!(f.caps & S0__RT_CAP_VIRTUAL_TIME) || !(f.caps & S0__RT_CAP_CONTEXTS)) {
		fix_close(&f); /* a real-time runtime: clock_sync has nothing to move */
		return;
	}
	fix_start(&f, 1, NULL);
	char *id = new_repl(&f);
	int64_t t0 = f.clock.now_unix_ms(f.clock.ctx);
	free(run(&f, id, "sh -c 'sleep 10; echo late > /tmp/late' &"));
	f.d->clock_sync(f.g, t0 + 9999);
	s0_error *e = NULL;
	s0__fileinfo *fi = NULL;
	ck_assert_int_eq(s0__files_stat(f.d->files(f.g), "/tmp/late", 9, &fi, &e), S0_ENOTFOUND);
	s0_error_free(e);
	f.d->clock_sync(f.g, t0 + 5000); /* earlier: ignored */
	f.d->clock_sync(f.g, t0 + 10000);
	char *late = files_get(&f, "/tmp/late");
	ck_assert_str_eq(late, "late\n");
	free(late);
	free(id);
	fix_stop(&f);
	fix_close(&f);
}
END_TEST

/* Capture through the checkpoint engine, stop, restore into a new
 * generation: the context's state and the runtime tmpfs come back; a
 * destination with another runtime build is refused by the fingerprint. */
START_TEST(image_capture_restore)
{
	drv_fix f;
	fix_open(&f, _i, false);
	fix_start(&f, 1, NULL);
	s0__rt_image_src img;
	if (!(f.caps & S0__RT_CAP_MEMORY)) {
		s0_error *e = NULL;
		ck_assert_int_eq(f.d->capture(f.g, &img, &e), S0_EUNAVAILABLE);
		ck_assert_str_eq(s0_error_reason(e), "memory_unsupported");
		s0_error_free(e);
		fix_stop(&f);
		fix_close(&f);
		return;
	}
	char *id = (f.caps & S0__RT_CAP_CONTEXTS) ? new_repl(&f) : NULL;
	if (id)
		free(run(&f, id, "COUNTER=41; COUNTER=${COUNTER}2"));
	files_put(&f, "/tmp/kept.txt", "tmpfs survives\n");
	/* the object store and checkpoint engine the lifecycle uses */
	char *dir = s0_test_tmpdir("rtimg");
	uint8_t key[32];
	memset(key, 3, sizeof key);
	s0__objstore *os = NULL;
	ck_assert_int_eq(s0__objstore_open_dir(dir, key, NULL, &os, NULL), S0_OK);
	s0__ckpt *ck = NULL;
	ck_assert_int_eq(s0__ckpt_new(os, NULL, &ck, NULL), S0_OK);
	s0__rt_fp fp;
	f.d->fingerprint(f.h, &fp);
	ck_assert_str_ne(fp.runtime_version, "");
	ck_assert_str_ne(fp.platform, "");
	s0__strlcpy(fp.procd_version, f.d->procd_version(f.g), sizeof fp.procd_version);
	ck_assert_int_eq(f.d->capture(f.g, &img, NULL), S0_OK);
	s0__ckpt_meta meta = {.sandbox_id = "sb-conformance", .rootfs_generation = "gen-1",
	                      .runtime_generation = 1, .fingerprint = &fp};
	s0__ckpt_image_info info;
	s0_error *e = NULL;
	int rc = s0__ckpt_capture_all(ck, &img, &meta, NULL, &info, &e);
	ck_assert_msg(rc == S0_OK, "capture: %s", e ? s0_error_message(e) : "?");
	fix_stop(&f);
	/* another runtime build at the destination: refused, names the field */
	s0__rt_fp other = fp;
	s0__strlcpy(other.runtime_version, "another-build", sizeof other.runtime_version);
	s0__ckpt_restore_opts ro = {.rootfs_generation = "gen-1", .dest = &other};
	s0__ckpt_restored rs;
	ck_assert_int_eq(s0__ckpt_restore(ck, &info.image_id, &ro, &rs, &e), S0_ECONFLICT);
	ck_assert_str_eq(s0_error_reason(e), "image_incompatible");
	s0_error_free(e);
	e = NULL;
	ro.dest = &fp;
	rc = s0__ckpt_restore(ck, &info.image_id, &ro, &rs, &e);
	ck_assert_msg(rc == S0_OK, "restore: %s", e ? s0_error_message(e) : "?");
	s0__rt_image *back = NULL;
	s0__rt_restore_opts rop = {.prefetch = true};
	rc = f.d->image_restore(f.h, &rs.data, &rop, &back, &e);
	ck_assert_msg(rc == S0_OK, "image_restore: %s", e ? s0_error_message(e) : "?");
	s0__ckpt_restored_clear(&rs); /* the rebuilt image keeps what it needs */
	fix_start(&f, 2, back);       /* start() takes it */
	char *kept = files_get(&f, "/tmp/kept.txt");
	ck_assert_str_eq(kept, "tmpfs survives\n");
	free(kept);
	if (id) {
		char *out = run(&f, id, "echo $COUNTER");
		ck_assert_str_eq(out, "412\n");
		free(out);
		free(id);
	}
	fix_stop(&f);
	s0__ckpt_free(ck);
	s0__objstore_free(os);
	s0_test_rmrf(dir);
	free(dir);
	fix_close(&f);
}
END_TEST

/* A host opened without memory checkpoints says so and refuses capture. */
START_TEST(no_memory_host_refuses_capture)
{
	drv_fix f;
	fix_open(&f, _i, true);
	ck_assert_uint_eq(f.caps & S0__RT_CAP_MEMORY, 0);
	fix_start(&f, 1, NULL);
	s0__rt_image_src img;
	s0_error *e = NULL;
	ck_assert_int_eq(f.d->capture(f.g, &img, &e), S0_EUNAVAILABLE);
	ck_assert_str_eq(s0_error_reason(e), "memory_unsupported");
	s0_error_free(e);
	e = NULL;
	s0__rt_image_data none = {0};
	s0__rt_image *back = NULL;
	ck_assert_int_eq(f.d->image_restore(f.h, &none, NULL, &back, &e), S0_EUNAVAILABLE);
	ck_assert_str_eq(s0_error_reason(e), "memory_unsupported");
	ck_assert_ptr_null(back);
	s0_error_free(e);
	fix_stop(&f);
	fix_close(&f);
}
END_TEST

/* Sessions registries: made, saved and loaded by the driver; a torn blob
 * is refused. */
START_TEST(sessions_registry_roundtrip)
{
	drv_fix f;
	fix_open(&f, _i, false);
	if (!(f.caps & S0__RT_CAP_SESSIONS)) {
		fix_close(&f);
		return;
	}
	fix_start(&f, 1, NULL);
	struct s0__sessions *s = NULL;
	ck_assert_int_eq(f.d->sessions_new(f.h, 1, &s, NULL), S0_OK);
	f.d->sessions_adopt(f.g, s, false);
	cJSON *b = cJSON_Parse("{\"command\":[\"sh\",\"-c\",\"echo hi\"]}");
	s0__rt_proc_call c = {.op = S0__RT_SES_CREATE, .body = b, .sessions = s};
	cJSON *d = NULL;
	int st = 0;
	s0_error *e = NULL;
	int rc = f.d->proc_call(f.g, &c, &d, &st, &e);
	ck_assert_msg(rc == S0_OK, "create session: %s", e ? s0_error_message(e) : "?");
	ck_assert_int_eq(st, 201);
	char *sid = strdup(s0__json_str(d, "id"));
	cJSON_Delete(d);
	cJSON_Delete(b);
	void *blob = NULL;
	size_t len = 0;
	ck_assert_int_eq(f.d->sessions_save(s, &blob, &len, NULL), S0_OK);
	struct s0__sessions *s2 = NULL;
	ck_assert_int_eq(f.d->sessions_load(f.h, blob, len, 0, &s2, NULL), S0_OK);
	s0__rt_proc_call g = {.op = S0__RT_SES_GET, .id = sid, .sessions = s2};
	ck_assert_int_eq(f.d->proc_call(f.g, &g, &d, &st, NULL), S0_OK);
	ck_assert_str_eq(s0__json_str(d, "id"), sid);
	cJSON_Delete(d);
	struct s0__sessions *bad = NULL; /* a torn blob */
	ck_assert_int_lt(f.d->sessions_load(f.h, blob, len / 2, 0, &bad, NULL), 0);
	ck_assert_ptr_null(bad);
	free(blob);
	free(sid);
	f.d->sessions_free(s2);
	f.d->sessions_free(s);
	fix_stop(&f);
	fix_close(&f);
}
END_TEST

static Suite *rt_driver_suite(void)
{
	size_t n = 0;
	const s0__rt_driver *const *v = s0__rt_drivers(&n);
	while (n > 1 && conformance_pending(v[n - 1]->name))
		n--;
	Suite *s = suite_create("runtime-driver");
	TCase *tc = tcase_create("registry");
	tcase_add_test(tc, registry_rows);
	tcase_add_test(tc, local_option_runtime);
	suite_add_tcase(s, tc);
	tc = tcase_create("conformance");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, generation_lifecycle, 0, (int)n);
	tcase_add_loop_test(tc, network_policy_applied, 0, (int)n);
	tcase_add_loop_test(tc, clock_sync_moves_virtual_time, 0, (int)n);
	tcase_add_loop_test(tc, image_capture_restore, 0, (int)n);
	tcase_add_loop_test(tc, no_memory_host_refuses_capture, 0, (int)n);
	tcase_add_loop_test(tc, sessions_registry_roundtrip, 0, (int)n);
	suite_add_tcase(s, tc);
	return s;
}

S0_TEST_MAIN(rt_driver_suite)
