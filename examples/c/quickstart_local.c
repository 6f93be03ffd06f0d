/*
 * Quickstart on the embedded local backend (the README's first command).
 *
 * Claims a sandbox from the default template, writes a workspace file, a
 * /var/tmp file and a /tmp file, pauses it (filesystem-only) and resumes
 * it, showing what survived, how runtime_id and runtime_generation moved,
 * then takes a snapshot, forks it, restores it and deletes everything.
 * Every step is timed; the program exits non-zero if any expectation fails.
 *
 *   quickstart_local [DATA_DIR]     (default: a fresh temporary directory)
 */
#include <sandbox0/local.h>
#include <sandbox0/sandbox0.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int failures;
static double t0;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void step(const char *what)
{
	printf("[%7.1f ms] %s\n", (now_s() - t0) * 1000.0, what);
}

static void expect(int ok, const char *what)
{
	printf("             %s %s\n", ok ? "ok  " : "FAIL", what);
	if (!ok)
		failures++;
}

static int check(int rc, s0_error *err, const char *what)
{
	if (rc < 0) {
		fprintf(stderr, "error: %s: %s (%s, reason %s)\n", what, s0_error_message(err),
		        s0_code_name(rc), s0_error_reason(err));
		s0_error_free(err);
		exit(1);
	}
	return rc;
}

static void show(const s0_sandbox_info *sb)
{
	printf("             id=%s status=%s paused=%s runtime_id=\"%s\" runtime_generation=%lld\n",
	       s0_sandbox_info_id(sb), s0_status_name(s0_sandbox_info_status(sb)),
	       s0_sandbox_info_paused(sb) ? "true" : "false", s0_sandbox_info_runtime_id(sb),
	       (long long)s0_sandbox_info_runtime_generation(sb));
}

static int file_is(s0_client *c, const char *id, const char *path, const char *want)
{
	void *data = NULL;
	size_t len = 0;
	s0_error *err = NULL;
	int rc = s0_files_read(c, id, path, &data, &len, &err);
	int ok = rc == S0_OK && len == strlen(want) && !memcmp(data, want, len);
	s0_free(data);
	s0_error_free(err);
	return ok;
}

static int file_missing(s0_client *c, const char *id, const char *path)
{
	s0_file_info *fi = NULL;
	s0_error *err = NULL;
	int rc = s0_files_stat(c, id, path, &fi, &err);
	s0_file_info_free(fi);
	s0_error_free(err);
	return rc == S0_ENOTFOUND;
}

int main(int argc, char **argv)
{
	char tmpl[] = "/tmp/s0-quickstart-XXXXXX";
	const char *dir = argc > 1 ? argv[1] : mkdtemp(tmpl);
	s0_local *local = NULL;
	s0_client *c = NULL;
	s0_error *err = NULL;
	s0_sandbox_info *sb = NULL, *after = NULL;
	t0 = now_s();
	printf("libsandbox0 %s — quickstart on the embedded local backend\n", s0_version_string());
	printf("data directory: %s (the runtime is simulated; RootFS and storage are real)\n\n", dir);

	check(s0_local_open(dir, NULL, &local, &err), err, "open backend");
	check(s0_client_new_local(local, NULL, &c, &err), err, "client");
	step("backend open, default template ready");

	check(s0_sandbox_claim(c, "default", NULL, NULL, &sb, &err), err, "claim");
	step("claimed a sandbox from template \"default\"");
	const char *id = s0_sandbox_info_id(sb);
	char sid[128];
	snprintf(sid, sizeof sid, "%s", id);
	s0_sandbox_info_free(sb);
	check(s0_sandbox_get(c, sid, &sb, &err), err, "get");
	show(sb);

	check(s0_files_write(c, sid, "/workspace/notes.md", "# kept\n", 7, &err), err, "write");
	check(s0_files_write(c, sid, "/var/tmp/cache", "cache", 5, &err), err, "write");
	check(s0_files_write(c, sid, "/tmp/scratch", "scratch", 7, &err), err, "write");
	step("wrote /workspace/notes.md, /var/tmp/cache and /tmp/scratch");

	s0_wait_options wo = S0_WAIT_OPTIONS_INIT;
	check(s0_sandbox_pause_and_wait(c, sid, &wo, &after, &err), err, "pause_and_wait");
	step("paused (filesystem-only): the RootFS head is committed, compute released");
	show(after);
	expect(s0_sandbox_info_paused(after) && !*s0_sandbox_info_runtime_id(after),
	       "paused with an empty runtime_id");
	s0_sandbox_info_free(after);

	check(s0_sandbox_resume_and_wait(c, sid, &wo, &after, &err), err, "resume_and_wait");
	step("resumed: a new runtime generation from the committed head");
	show(after);
	expect(s0_sandbox_info_runtime_generation(after) == s0_sandbox_info_runtime_generation(sb) + 1,
	       "runtime_generation advanced by one");
	expect(strcmp(s0_sandbox_info_runtime_id(after), s0_sandbox_info_runtime_id(sb)) != 0,
	       "runtime_id changed");
	expect(file_is(c, sid, "/workspace/notes.md", "# kept\n"), "/workspace/notes.md survived");
	expect(file_is(c, sid, "/var/tmp/cache", "cache"), "/var/tmp/cache survived");
	expect(file_missing(c, sid, "/tmp/scratch"), "/tmp/scratch is gone (runtime tmpfs)");
	s0_sandbox_info_free(after);

	s0_snapshot_info *snap = NULL;
	check(s0_snapshot_create(c, sid, "milestone", "after first cycle", 0, &snap, &err), err,
	      "snapshot");
	step("snapshot \"milestone\" taken while running");
	check(s0_files_write(c, sid, "/workspace/notes.md", "# changed\n", 10, &err), err, "write");
	s0_sandbox_info *child = NULL;
	check(s0_sandbox_fork(c, sid, NULL, &child, &err), err, "fork");
	step("forked into a new paused sandbox");
	show(child);
	check(s0_sandbox_pause_and_wait(c, sid, &wo, &after, &err), err, "pause");
	s0_sandbox_info_free(after);
	s0_lifecycle_result *lr = NULL;
	check(s0_sandbox_restore(c, sid, s0_snapshot_info_id(snap), &lr, &err), err, "restore");
	s0_lifecycle_result_free(lr);
	check(s0_sandbox_resume_and_wait(c, sid, &wo, &after, &err), err, "resume");
	step("paused, restored the snapshot, resumed");
	expect(file_is(c, sid, "/workspace/notes.md", "# kept\n"), "restore brought back the snapshot");
	s0_sandbox_info_free(after);
	check(s0_sandbox_resume_and_wait(c, s0_sandbox_info_id(child), &wo, &after, &err), err,
	      "resume fork");
	expect(file_is(c, s0_sandbox_info_id(child), "/workspace/notes.md", "# changed\n"),
	       "the fork has the state at fork time");
	s0_sandbox_info_free(after);

	check(s0_sandbox_delete(c, sid, &err), err, "delete");
	check(s0_sandbox_delete(c, s0_sandbox_info_id(child), &err), err, "delete fork");
	check(s0_snapshot_delete(c, s0_snapshot_info_id(snap), &err), err, "delete snapshot");
	step("deleted both sandboxes and the snapshot");

	s0_snapshot_info_free(snap);
	s0_sandbox_info_free(child);
	s0_sandbox_info_free(sb);
	s0_client_free(c);
	s0_local_close(local);
	printf("\n%s: %d expectation(s) failed\n", failures ? "FAILED" : "DONE", failures);
	return failures ? 1 : 0;
}
