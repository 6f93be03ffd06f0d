/* Test support for the lifecycle-engine suites (see lt.h). */
#include "lt.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "pgtest.h"
#include "common/http.h"
#include "local/api/transport.h"
#include "local/lifecycle/engine_open.h"
#include "local/local_internal.h"
#include "objenv.h"

void lt_ok(int rc, s0_error **errp, const char *where)
{
	s0_error *err = *errp; /* read after the call (argument order is unspecified) */
	*errp = NULL;
	const s0_error *cause = err ? s0_error_cause(err) : NULL; /* e.g. the runtime's own error */
	if (rc != S0_OK)
		ck_abort_msg("%s: %s (%s, reason %s)%s%s", where, err ? s0_error_message(err) : "",
		             s0_code_name(rc), err ? s0_error_reason(err) : "",
		             cause ? "; cause: " : "", cause ? s0_error_message(cause) : "");
	s0_error_free(err);
}

void lt_expect_err(int rc, s0_error *err, int code, const char *reason, const char *where)
{
	if (rc != code)
		ck_abort_msg("%s: got %s (%s: %s), want %s", where, s0_code_name(rc),
		             err ? s0_error_reason(err) : "-", err ? s0_error_message(err) : "-",
		             s0_code_name(code));
	if (reason) {
		ck_assert_ptr_nonnull(err);
		ck_assert_msg(s0_error_reason(err) && !strcmp(s0_error_reason(err), reason),
		              "%s: reason %s (%s), want %s", where, s0_error_reason(err),
		              s0_error_message(err), reason);
	}
	s0_error_free(err);
}

const char *lt_test_runtime(void)
{
	const char *r = getenv("S0_TEST_RUNTIME");
	return r && *r ? r : NULL;
}

bool lt_runtime_is_sim(void)
{
	const char *r = lt_test_runtime();
	return !r || !strcmp(r, "sim");
}

static void open_on(lt *t)
{
	s0_error *err = NULL;
	static char url[1024]; /* borrowed by s0_local_open() for the call */
	if (!t->opts.object_store) /* the backend of a parametrised run (unit-local-files) */
		t->opts.object_store = getenv("S0_TEST_OBJECT_STORE");
	if (!t->opts.runtime) /* the runtime of a parametrised run (unit-conform-gvisor) */
		t->opts.runtime = lt_test_runtime();
	if (!t->meta) /* the metadata store of a parametrised run (S0_TEST_META) */
		t->meta = s0_test_meta_url(t->dir);
	if (!t->opts.meta)
		t->opts.meta = t->meta;
	if (t->opts.object_store && !strcmp(t->opts.object_store, "s3")) {
		char *u = objenv_s3_url(t->dir); /* a prefix of its own per data dir */
		ck_assert_msg(u, "unit-local-s3 needs S0_TEST_S3_URL (scripts/test s3)");
		snprintf(url, sizeof url, "%s", u);
		free(u);
		t->opts.object_store = url;
	}
	lt_ok(s0_local_open(t->dir, &t->opts, &t->local, &err), &err, "s0_local_open");
	err = NULL;
	lt_ok(s0_client_new_local(t->local, NULL, &t->c, &err), &err, "s0_client_new_local");
}

void lt_open(lt *t, const s0_local_options *opts)
{
	memset(t, 0, sizeof *t);
	if (opts) {
		t->opts = *opts;
	} else {
		s0_local_options d = S0_LOCAL_OPTIONS_INIT;
		t->opts = d;
		t->opts.manual_clock = 1;
	}
	if (!t->opts.manual_clock_start_unix_ms)
		t->opts.manual_clock_start_unix_ms = 1700000000000LL; /* fixed, reproducible */
	t->dir = s0_test_tmpdir("local");
	ck_assert_ptr_nonnull(t->dir);
	open_on(t);
}

void lt_open_dir(lt *t, const char *dir)
{
	memset(t, 0, sizeof *t);
	s0_local_options d = S0_LOCAL_OPTIONS_INIT;
	t->opts = d;
	t->opts.manual_clock = 1;
	t->opts.manual_clock_start_unix_ms = 1700000000000LL;
	t->dir = strdup(dir);
	t->keep_dir = true;
	open_on(t);
}

void lt_shutdown(lt *t)
{
	s0_client_free(t->c);
	t->c = NULL;
	s0_local_close(t->local);
	t->local = NULL;
}

void lt_reopen(lt *t)
{
	int64_t now = t->local ? s0_local_now_unix_ms(t->local) : 0;
	lt_shutdown(t);
	if (now)
		t->opts.manual_clock_start_unix_ms = now; /* time goes on */
	open_on(t);
}

/* Host processes whose command line names @p dir (runsc's state under the
 * data directory): their number. */
static int host_procs_naming(const char *dir)
{
	int n = 0;
	DIR *d = opendir("/proc");
	for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		char path[300], cmd[4096];
		snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
		FILE *f = fopen(path, "r");
		size_t len = f ? fread(cmd, 1, sizeof cmd - 1, f) : 0;
		if (f)
			fclose(f);
		for (size_t i = 0; i < len; i++)
			if (!cmd[i])
				cmd[i] = ' ';
		cmd[len] = 0;
		n += len && strstr(cmd, dir) && strstr(cmd, "runsc");
	}
	if (d)
		closedir(d);
	return n;
}

void lt_close(lt *t)
{
	lt_shutdown(t);
	/* a closed backend leaves no runtime of a real runtime behind */
	if (!lt_runtime_is_sim() && !t->keep_dir)
		ck_assert_msg(host_procs_naming(t->dir) == 0, "runsc processes of %s outlive the close",
		              t->dir);
	if (!t->keep_dir) {
		s0_test_meta_drop(t->dir);
		s0_test_rmrf(t->dir);
	}
	free(t->dir);
	t->dir = NULL;
	free(t->meta);
	t->meta = NULL;
}

/* ---- sandboxes ---- */

char *lt_claim(lt *t, const char *tmpl, const s0_sandbox_config *cfg)
{
	s0_sandbox_info *sb = NULL;
	s0_error *err = NULL;
	lt_ok(s0_sandbox_claim(t->c, tmpl ? tmpl : "default", NULL, cfg, &sb, &err), &err,
	      "s0_sandbox_claim");
	char *id = strdup(s0_sandbox_info_id(sb));
	s0_sandbox_info_free(sb);
	return id;
}

s0_sandbox_info *lt_get(lt *t, const char *id)
{
	s0_sandbox_info *sb = NULL;
	s0_error *err = NULL;
	lt_ok(s0_sandbox_get(t->c, id, &sb, &err), &err, "s0_sandbox_get");
	return sb;
}

int lt_status(lt *t, const char *id)
{
	s0_sandbox_info *sb = lt_get(t, id);
	int s = s0_sandbox_info_status(sb);
	s0_sandbox_info_free(sb);
	return s;
}

int64_t lt_generation(lt *t, const char *id)
{
	s0_sandbox_info *sb = lt_get(t, id);
	int64_t g = s0_sandbox_info_runtime_generation(sb);
	s0_sandbox_info_free(sb);
	return g;
}

char *lt_runtime_id(lt *t, const char *id)
{
	s0_sandbox_info *sb = lt_get(t, id);
	char *r = strdup(s0_sandbox_info_runtime_id(sb));
	s0_sandbox_info_free(sb);
	return r;
}

int lt_wait_rc(lt *t, const char *id, bool pause, int32_t memory, s0_error **err)
{
	s0_wait_options wo = S0_WAIT_OPTIONS_INIT;
	wo.flags = S0_WAIT_NO_JITTER;
	wo.memory = memory;
	s0_sandbox_info *sb = NULL;
	int rc = pause ? s0_sandbox_pause_and_wait(t->c, id, &wo, &sb, err)
	               : s0_sandbox_resume_and_wait(t->c, id, &wo, &sb, err);
	s0_sandbox_info_free(sb);
	return rc;
}

int lt_pause_rc(lt *t, const char *id, s0_error **err)
{
	return lt_wait_rc(t, id, true, S0_BOOL_UNSET, err);
}

int lt_resume_rc(lt *t, const char *id, s0_error **err)
{
	return lt_wait_rc(t, id, false, S0_BOOL_UNSET, err);
}

void lt_pause(lt *t, const char *id)
{
	s0_error *err = NULL;
	lt_ok(lt_pause_rc(t, id, &err), &err, "s0_sandbox_pause_and_wait");
	lt_assert_paused(t, id);
}

void lt_resume(lt *t, const char *id)
{
	s0_error *err = NULL;
	lt_ok(lt_resume_rc(t, id, &err), &err, "s0_sandbox_resume_and_wait");
	lt_assert_running(t, id);
}

void lt_assert_paused(lt *t, const char *id)
{
	s0_sandbox_info *sb = lt_get(t, id);
	ck_assert_str_eq(s0_status_name(s0_sandbox_info_status(sb)), "paused");
	ck_assert(s0_sandbox_info_paused(sb));
	ck_assert_str_eq(s0_sandbox_info_runtime_id(sb), "");
	s0_sandbox_info_free(sb);
}

void lt_assert_running(lt *t, const char *id)
{
	s0_sandbox_info *sb = lt_get(t, id);
	ck_assert_str_eq(s0_status_name(s0_sandbox_info_status(sb)), "running");
	ck_assert(!s0_sandbox_info_paused(sb));
	ck_assert_str_ne(s0_sandbox_info_runtime_id(sb), "");
	s0_sandbox_info_free(sb);
}

void lt_quiesce(lt *t)
{
	s0_error *err = NULL;
	lt_ok(s0_local_quiesce(t->local, 10000, &err), &err, "s0_local_quiesce");
}

void lt_advance(lt *t, int64_t ms)
{
	s0_error *err = NULL;
	lt_ok(s0_local_clock_advance(t->local, ms, &err), &err, "s0_local_clock_advance");
}

/* ---- files ---- */

void lt_write_bytes(lt *t, const char *id, const char *path, const void *data, size_t len)
{
	s0_error *err = NULL;
	lt_ok(s0_files_write(t->c, id, path, data, len, &err), &err, path);
}

void lt_write(lt *t, const char *id, const char *path, const char *text)
{
	lt_write_bytes(t, id, path, text, strlen(text));
}

char *lt_read(lt *t, const char *id, const char *path, size_t *len)
{
	void *data = NULL;
	size_t n = 0;
	s0_error *err = NULL;
	lt_ok(s0_files_read(t->c, id, path, &data, &n, &err), &err, path);
	char *out = malloc(n + 1);
	memcpy(out, data, n);
	out[n] = '\0';
	s0_free(data);
	if (len)
		*len = n;
	return out;
}

bool lt_file_is(lt *t, const char *id, const char *path, const char *text)
{
	void *data = NULL;
	size_t n = 0;
	s0_error *err = NULL;
	int rc = s0_files_read(t->c, id, path, &data, &n, &err);
	bool ok = rc == S0_OK && n == strlen(text) && !memcmp(data, text, n);
	if (rc != S0_OK)
		fprintf(stderr, "read %s: %s %s\n", path, s0_code_name(rc),
		        err ? s0_error_message(err) : "");
	s0_free(data);
	s0_error_free(err);
	return ok;
}

int lt_stat_rc(lt *t, const char *id, const char *path)
{
	s0_file_info *fi = NULL;
	s0_error *err = NULL;
	int rc = s0_files_stat(t->c, id, path, &fi, &err);
	s0_file_info_free(fi);
	s0_error_free(err);
	return rc;
}

size_t lt_list_len(lt *t, const char *id, const char *path)
{
	s0_file_list *l = NULL;
	s0_error *err = NULL;
	lt_ok(s0_files_list(t->c, id, path, &l, &err), &err, path);
	size_t n = s0_file_list_length(l);
	s0_file_list_free(l);
	return n;
}

/* ---- inspection ---- */

cJSON *lt_inspect(lt *t, const char *sandbox_id)
{
	char *txt = NULL;
	s0_error *err = NULL;
	lt_ok(s0_local_inspect(t->local, sandbox_id, &txt, &err), &err, "s0_local_inspect");
	cJSON *j = cJSON_Parse(txt);
	ck_assert_ptr_nonnull(j);
	s0_free(txt);
	return j;
}

static const cJSON *walk(const cJSON *j, const char *path)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", path);
	const cJSON *cur = j;
	for (char *save = NULL, *tok = strtok_r(buf, ".", &save); tok && cur;
	     tok = strtok_r(NULL, ".", &save))
		cur = cJSON_GetObjectItemCaseSensitive(cur, tok);
	return cur;
}

double lt_num(const cJSON *j, const char *path)
{
	const cJSON *v = walk(j, path);
	ck_assert_msg(cJSON_IsNumber(v), "inspection has no number at %s", path);
	return v->valuedouble;
}

const char *lt_str(const cJSON *j, const char *path)
{
	const cJSON *v = walk(j, path);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

double lt_inum(lt *t, const char *sandbox_id, const char *path)
{
	cJSON *j = lt_inspect(t, sandbox_id);
	double v = lt_num(j, path);
	cJSON_Delete(j);
	return v;
}

char *lt_head(lt *t, const char *id)
{
	cJSON *j = lt_inspect(t, id);
	const char *h = lt_str(j, "sandbox.head");
	ck_assert_msg(h && *h, "no head for %s", id);
	char *out = strdup(h);
	cJSON_Delete(j);
	return out;
}

int lt_runtimes_of(lt *t, const char *id)
{
	cJSON *j = lt_inspect(t, id);
	int n = cJSON_GetArraySize(walk(j, "node.runtimes"));
	cJSON_Delete(j);
	return n;
}

int lt_pending_ops(lt *t, const char *id)
{
	cJSON *j = lt_inspect(t, id);
	int n = cJSON_GetArraySize(walk(j, "operations"));
	cJSON_Delete(j);
	return n;
}

/* ---- generations on disk ---- */

static char *export_gen(lt *t, const char *gen)
{
	char *path = NULL;
	ck_assert_int_ge(asprintf(&path, "%s/export-%s.img", t->dir, gen), 0);
	s0_error *err = NULL;
	lt_ok(s0__engine_export_generation(s0__local_engine(t->local), gen, path, &err), &err,
	      "export generation");
	return path;
}

static int run_quiet(const char *cmd)
{
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int lt_fsck_generation(lt *t, const char *gen)
{
	char *img = export_gen(t, gen), *cmd = NULL;
	ck_assert_int_ge(asprintf(&cmd, "e2fsck -fn '%s' >/dev/null 2>&1", img), 0);
	int rc = run_quiet(cmd);
	if (rc) {
		free(cmd);
		ck_assert_int_ge(asprintf(&cmd, "e2fsck -fn '%s' >&2", img), 0);
		run_quiet(cmd);
	}
	unlink(img);
	free(cmd);
	free(img);
	return rc;
}

char *lt_gen_cat(lt *t, const char *gen, const char *path)
{
	char *img = export_gen(t, gen), *cmd = NULL, *out = NULL;
	ck_assert_int_ge(asprintf(&cmd, "debugfs -R 'stat %s' '%s' 2>&1 | grep -q '^Inode:' && "
	                                "debugfs -R 'cat %s' '%s' 2>/dev/null",
	                          path, img, path, img), 0);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	size_t cap = 4096, len = 0;
	out = malloc(cap);
	size_t n;
	while ((n = fread(out + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (cap - len < 2)
			out = realloc(out, cap *= 2);
	}
	out[len] = '\0';
	int st = pclose(p);
	unlink(img);
	free(cmd);
	free(img);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

uint64_t lt_gen_digest(lt *t, const char *gen)
{
	char *img = export_gen(t, gen);
	FILE *f = fopen(img, "rb");
	ck_assert_ptr_nonnull(f);
	/* FNV-1a over 64-bit words (a 1 GiB image byte by byte took minutes
	 * under ThreadSanitizer on a loaded machine) */
	uint64_t h = 1469598103934665603ull;
	unsigned char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
		size_t i = 0;
		for (; i + 8 <= n; i += 8) {
			uint64_t w;
			memcpy(&w, buf + i, 8);
			h = (h ^ w) * 1099511628211ull;
		}
		for (; i < n; i++)
			h = (h ^ buf[i]) * 1099511628211ull;
	}
	fclose(f);
	unlink(img);
	free(img);
	return h;
}

char *lt_gen_debugfs(lt *t, const char *gen, const char *request)
{
	char *img = export_gen(t, gen), *cmd = NULL;
	ck_assert_int_ge(asprintf(&cmd, "debugfs -R '%s' '%s' 2>/dev/null", request, img), 0);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	size_t cap = 4096, len = 0, n;
	char *out = malloc(cap);
	while ((n = fread(out + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (cap - len < 2)
			out = realloc(out, cap *= 2);
	}
	out[len] = '\0';
	pclose(p);
	unlink(img);
	free(cmd);
	free(img);
	return out;
}

int lt_gen_dir_entries(lt *t, const char *gen, const char *dir)
{
	char req[300];
	snprintf(req, sizeof req, "ls -p %s", dir);
	char *out = lt_gen_debugfs(t, gen, req);
	int n = 0;
	/* ls -p: one "/ino/mode/uid/gid/name/size/" line per entry */
	for (char *save = NULL, *line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *f[7] = {0};
		int k = 0;
		for (char *p = line; *p && k < 7; p++)
			if (*p == '/')
				f[k++] = p + 1;
		if (k < 6)
			continue;
		size_t len = (size_t)(f[5] - f[4] - 1);
		if ((len == 1 && f[4][0] == '.') || (len == 2 && !strncmp(f[4], "..", 2)))
			continue;
		n++;
	}
	free(out);
	return n;
}

/* ---- helper threads ---- */

static void *bg_main(void *arg)
{
	lt_bg *b = arg;
	b->rc = b->fn(b->t, b->arg, &b->err);
	__atomic_store_n(&b->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

void lt_bg_start(lt_bg *b, lt *t, lt_bg_fn fn, void *arg)
{
	memset(b, 0, sizeof *b);
	b->t = t;
	b->fn = fn;
	b->arg = arg;
	ck_assert_int_eq(pthread_create(&b->th, NULL, bg_main, b), 0);
}

int lt_bg_join(lt_bg *b)
{
	pthread_join(b->th, NULL);
	return b->rc;
}

void lt_bg_free(lt_bg *b)
{
	s0_error_free(b->err);
	b->err = NULL;
}

void lt_nap_ms(int ms)
{
	struct timespec ts = {0, ms * 1000000L};
	nanosleep(&ts, NULL);
}

void lt_advance_until_done(lt *t, lt_bg *b, int64_t step_ms, int max_steps)
{
	for (int i = 0; i < max_steps && !__atomic_load_n(&b->done, __ATOMIC_SEQ_CST); i++) {
		lt_nap_ms(5);
		s0_local_clock_advance(t->local, step_ms, NULL);
	}
}

void lt_wait_fault_hits(lt *t, const char *name, int64_t n)
{
	char path[200];
	snprintf(path, sizeof path, "faults.%s.hits", name);
	for (int i = 0; i < 2000; i++) {
		cJSON *j = lt_inspect(t, NULL);
		const cJSON *v = walk(j, path);
		bool ok = cJSON_IsNumber(v) && v->valuedouble >= (double)n;
		cJSON_Delete(j);
		if (ok)
			return;
		lt_nap_ms(5);
	}
	ck_abort_msg("fault %s was not hit %lld times", name, (long long)n);
}

/* ---- processes (sandbox0/contexts.h) ---- */

static cJSON *parse_owned(char *text)
{
	cJSON *j = cJSON_Parse(text);
	s0_free(text);
	ck_assert_ptr_nonnull(j);
	return j;
}

char *lt_context(lt *t, const char *id, const char *body)
{
	char *out = NULL;
	LT_OK(s0_context_create(t->c, id, body, &out, &e_));
	cJSON *j = parse_owned(out);
	char *ctx = strdup(cJSON_GetObjectItem(j, "id")->valuestring);
	cJSON_Delete(j);
	return ctx;
}

char *lt_repl(lt *t, const char *id)
{
	return lt_context(t, id, "{\"type\":\"repl\"}");
}

static char *member_copy(const cJSON *j, const char *key)
{
	const cJSON *v = cJSON_GetObjectItem(j, key);
	char *s = strdup(cJSON_IsString(v) ? v->valuestring : "");
	size_t n = strlen(s);
	if (n && s[n - 1] == '\n')
		s[n - 1] = '\0';
	return s;
}

char *lt_sh(lt *t, const char *id, const char *ctx, const char *cmd, char **err_out)
{
	char *out = NULL;
	LT_OK(s0_context_exec(t->c, id, ctx, cmd, &out, &e_));
	cJSON *j = parse_owned(out);
	char *s = member_copy(j, "stdout");
	if (err_out)
		*err_out = member_copy(j, "stderr");
	cJSON_Delete(j);
	return s;
}

int lt_raw(lt *t, const char *method, const char *path, const char *body, char **reply)
{
	s0__router_opts ro = {0};
	ro.team_id = "team_local";
	void *ctx = NULL;
	LT_OK(s0__local_transport_new(s0__local_engine(t->local), &ro, &ctx, &e_));
	s0__http_request rq = {.method = method, .path = path};
	if (body) {
		s0__headers_add(&rq.headers, "Content-Type", "application/json");
		rq.body = body;
		rq.body_len = strlen(body);
		rq.has_body = true;
	}
	s0__http_response rs;
	memset(&rs, 0, sizeof rs);
	bool sent = false;
	s0_error *err = NULL;
	int rc = s0__local_transport_ops.send(ctx, &rq, 60000, NULL, &rs, &sent, &err);
	ck_assert_msg(rc == S0_OK, "raw send: %s", err ? s0_error_message(err) : "?");
	int status = rs.status;
	if (reply)
		*reply = strndup(rs.body.data ? rs.body.data : "", rs.body.len);
	s0__http_response_free(&rs);
	s0__headers_free(&rq.headers);
	s0__local_transport_ops.free(ctx);
	return status;
}
