/*
 * `s0 demo`: the lifecycle of the product document on an embedded backend,
 * in under a minute, with the measured time of each step.
 *
 * Builds a template from a real directory tree (a subset of /usr/share/doc
 * under 24 MiB, or --source DIR), claims a sandbox, writes workspace and /tmp
 * files, pauses filesystem-only and resumes (showing what survived and how
 * runtime_id and runtime_generation moved), memory-pauses and resumes with a
 * REPL context holding a variable, a background job and a /tmp file (all
 * three survive), then takes a snapshot, forks, restores and cleans up.
 * Exits 1 if an expectation fails.
 *
 * The copied tree holds directories, symlinks and regular files of the
 * source's filesystem only, at most 24 MiB read (sizes that lie, as in /proc,
 * cannot exceed it). SIGINT/SIGTERM remove the temporary data directory.
 *
 * Steps are a table (demo_steps below) so later issues can plug in theirs.
 * The memory step still reports (skipped, not failed) a backend that answers
 * `unavailable` to a memory pause.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <linux/magic.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cli.h"
#include "demo.h"
#include "runtime_opt.h"

/* The python3 root tree part gvisor of scripts/test and scripts/demo make. */
#define DEMO_PYTHON_TREE "/var/cache/libsandbox0/trees/python3"
#define TREE_BUDGET_BYTES (24ll << 20) /* well under the 32 MiB the brief allows */


void say(demo *d, const char *fmt, ...)
{
	va_list ap;
	(void)d;
	fputs("             ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

void expect(demo *d, bool ok, const char *what)
{
	printf("             %s %s\n", ok ? "ok  " : "FAIL", what);
	fflush(stdout);
	if (!ok)
		d->failures++;
}

/* A library failure inside a step: report and fail the step. */
int step_error(demo *d, const char *what, s0_error *err, int rc)
{
	char *text = cli_error_text(err, rc);
	printf("             FAIL %s: %s\n", what, text);
	free(text);
	s0_error_free(err);
	d->failures++;
	return STEP_FAILED;
}

void show(demo *d, const s0_sandbox_info *sb)
{
	const char *rid = s0_sandbox_info_runtime_id(sb);
	say(d, "%s: status=%s paused=%s runtime_id=%s runtime_generation=%lld",
	    s0_sandbox_info_id(sb), s0_status_name(s0_sandbox_info_status(sb)),
	    s0_sandbox_info_paused(sb) ? "true" : "false", *rid ? rid : "\"\"",
	    (long long)s0_sandbox_info_runtime_generation(sb));
}

static int observe(const s0_sandbox_info *sb, int64_t elapsed_ms, void *payload)
{
	demo *d = payload;
	say(d, "  observed at %4lld ms: status=%s paused=%s generation=%lld",
	    (long long)elapsed_ms, s0_status_name(s0_sandbox_info_status(sb)),
	    s0_sandbox_info_paused(sb) ? "true" : "false",
	    (long long)s0_sandbox_info_runtime_generation(sb));
	return 0;
}

s0_wait_options wait_opts(demo *d, int32_t memory)
{
	s0_wait_options wo = S0_WAIT_OPTIONS_INIT;
	wo.memory = memory;
	wo.progress_cb = observe;
	wo.payload = d;
	return wo;
}

bool file_is(demo *d, const char *id, const char *path, const void *want, size_t len)
{
	void *data = NULL;
	size_t got = 0;
	s0_error *err = NULL;
	int rc = s0_files_read(d->client, id, path, &data, &got, &err);
	bool ok = rc == S0_OK && got == len && !memcmp(data, want, len);
	s0_free(data);
	s0_error_free(err);
	return ok;
}

bool file_missing(demo *d, const char *id, const char *path)
{
	s0_file_info *fi = NULL;
	s0_error *err = NULL;
	int rc = s0_files_stat(d->client, id, path, &fi, &err);
	s0_file_info_free(fi);
	s0_error_free(err);
	return rc == S0_ENOTFOUND;
}

/* ---- staging a subset of the source tree ---- */

static long long tree_bytes;
static long long tree_files;
static char first_file[PATH_MAX]; /* a readable regular file of the last tree sized */

static int add_size(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag == FTW_F && S_ISREG(st->st_mode)) {
		tree_bytes += st->st_size;
		tree_files++;
		if (!*first_file && S_ISREG(st->st_mode) && st->st_size > 0 && access(path, R_OK) == 0)
			snprintf(first_file, sizeof first_file, "%s", path);
	}
	return 0;
}

/* Bytes the copy may still write: the cap holds even when sizes lie. */
static long long copy_left;
/* Set by the signal watcher: the copy stops. */
static volatile sig_atomic_t stopping;

/* Copy one regular file, at most its stat size and within copy_left. */
static int copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (in < 0)
		return -1;
	struct stat st;
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > copy_left) {
		close(in);
		return -1;
	}
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, st.st_mode & 0777);
	if (out < 0) {
		close(in);
		return -1;
	}
	char buf[65536];
	long long left = st.st_size;
	ssize_t r = 0;
	int rc = 0;
	while (left > 0 && (r = read(in, buf, left < (long long)sizeof buf ? (size_t)left
	                                                                  : sizeof buf)) > 0) {
		if (write(out, buf, (size_t)r) != r) {
			rc = -1;
			break;
		}
		left -= r;
		copy_left -= r;
	}
	if (r < 0)
		rc = -1;
	close(in);
	if (close(out) < 0)
		rc = -1;
	return rc;
}

/* Copy the tree at @from to @to: directories, regular files and symlinks on
 * the filesystem @dev only (no /proc, /sys or /dev below it), nothing else
 * (devices, FIFOs, sockets), and never more than copy_left bytes. */
static int copy_tree(const char *from, const char *to, dev_t dev)
{
	DIR *dir = opendir(from);
	if (!dir)
		return -1;
	if (mkdir(to, 0755) < 0 && errno != EEXIST) {
		closedir(dir);
		return -1;
	}
	struct dirent *e;
	while (!stopping && (e = readdir(dir))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *src = xasprintf("%s/%s", from, e->d_name), *dst = xasprintf("%s/%s", to, e->d_name);
		struct stat st;
		if (lstat(src, &st) == 0 && st.st_dev == dev) {
			if (S_ISDIR(st.st_mode)) {
				copy_tree(src, dst, dev);
			} else if (S_ISREG(st.st_mode)) {
				if (copy_file(src, dst) < 0)
					unlink(dst);
			} else if (S_ISLNK(st.st_mode)) {
				char target[PATH_MAX];
				ssize_t n = readlink(src, target, sizeof target - 1);
				if (n > 0) {
					target[n] = 0;
					if (symlink(target, dst) < 0) {
						/* skip it */
					}
				}
			}
		}
		free(src);
		free(dst);
	}
	closedir(dir);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Stage whole package directories of the source, in name order, within the budget. */
static int stage_tree(demo *d)
{
	struct dirent **names = NULL;
	int n = scandir(d->source, &names, NULL, by_name);
	if (n < 0)
		return -1;
	/* the tree keeps its place: /usr/share/doc/… on the host is /usr/share/doc/… inside */
	char *root = xasprintf("%s%s", d->stage, d->source);
	mkdir_p(root, 0755);
	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		if (strcmp(name, ".") && strcmp(name, "..")) {
			char *src = xasprintf("%s/%s", d->source, name);
			size_t sl = strlen(src);
			if (!strncmp(d->data_dir, src, sl) && (!d->data_dir[sl] || d->data_dir[sl] == '/')) {
				free(src); /* never copy the data directory into itself */
				free(names[i]);
				continue;
			}
			tree_bytes = tree_files = 0;
			*first_file = 0;
			nftw(src, add_size, 16, FTW_PHYS | FTW_MOUNT);
			if (tree_files && d->tree_bytes + tree_bytes <= TREE_BUDGET_BYTES) {
				char *dst = xasprintf("%s/%s", root, name);
				struct stat st;
				copy_left = TREE_BUDGET_BYTES - d->tree_bytes;
				if (lstat(src, &st) == 0 && S_ISDIR(st.st_mode) && st.st_dev == d->source_dev &&
				    copy_tree(src, dst, st.st_dev) == 0) {
					/* what was copied: sizes can lie (and the cap holds anyway) */
					d->tree_bytes = TREE_BUDGET_BYTES - copy_left;
					d->tree_files += tree_files;
					if (!*d->sample && *first_file) {
						/* a file to compare byte for byte inside the sandbox */
						snprintf(d->sample_host, sizeof d->sample_host, "%s", first_file);
						snprintf(d->sample, sizeof d->sample, "%s", first_file);
					}
				}
				free(dst);
			}
			free(src);
		}
		free(names[i]);
	}
	free(names);
	free(root);
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void rm_rf(const char *path)
{
	if (path)
		nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- the steps ---- */

int step_open(demo *d)
{
	s0_error *err = NULL;
	s0_local_options lo = S0_LOCAL_OPTIONS_INIT;
	lo.runtime = d->runtime;
	/* programs on gvisor come from the template's root tree: python3's when
	 * it was made (scripts/gvisor-python-tree.sh), unless one is named */
	struct stat st;
	if (!getenv("S0_GVISOR_TEMPLATE") && stat(DEMO_PYTHON_TREE "/usr/bin/python3", &st) == 0)
		setenv("S0_GVISOR_TEMPLATE", DEMO_PYTHON_TREE, 0);
	int rc = s0_local_open(d->data_dir, &lo, &d->local, &err);
	if (rc < 0)
		return step_error(d, "open the backend", err, rc);
	rc = s0_client_new_local(d->local, NULL, &d->client, &err);
	if (rc < 0)
		return step_error(d, "make a client", err, rc);
	char *why = NULL, *name = cli_runtime_chosen(d->local, &why);
	d->gvisor = !strcmp(name, "gvisor");
	if (d->gvisor)
		say(d, "data directory %s; runtime gvisor: real programs in runsc sandboxes on "
		            "the RootFS (root tree %s)",
		         d->data_dir, getenv("S0_GVISOR_TEMPLATE") ? getenv("S0_GVISOR_TEMPLATE")
		                                                   : "busybox");
	else
		say(d, "data directory %s; runtime %s (simulated; RootFS and storage are real)%s%s",
		         d->data_dir, name, why ? ", chosen by auto because " : "", why ? why : "");
	free(name);
	free(why);
	return STEP_OK;
}

static int step_template(demo *d)
{
	s0_error *err = NULL;
	const char *dir = NULL;
	struct stat st;
	if (d->source && stat(d->source, &st) == 0 && S_ISDIR(st.st_mode)) {
		d->source_dev = st.st_dev;
		d->stage = xasprintf("%s/demo-tree", d->data_dir);
		rm_rf(d->stage);
		if (stage_tree(d) == 0 && d->tree_files) {
			dir = d->stage;
			say(d, "staged %lld files (%.1f MiB) from %s", d->tree_files,
			    (double)d->tree_bytes / (1 << 20), d->source);
		}
	}
	if (!dir)
		say(d, "no source tree (%s): building the template from an empty tree",
		    d->source ? d->source : "none");
	int rc = s0_local_template_build(d->local, "demo", dir, NULL, &err);
	if (rc < 0)
		return step_error(d, "build the template", err, rc);
	if (d->stage) {
		rm_rf(d->stage); /* the template holds its own copy now */
	}
	return STEP_OK;
}

int claim_running(demo *d, const char *tmpl, const char *running)
{
	s0_sandbox_info *sb = NULL;
	s0_error *err = NULL;
	int rc = s0_sandbox_claim(d->client, tmpl, NULL, NULL, &sb, &err);
	if (rc < 0)
		return step_error(d, "claim", err, rc);
	snprintf(d->sid, sizeof d->sid, "%s", s0_sandbox_info_id(sb));
	s0_sandbox_info_free(sb);
	sb = NULL;
	rc = s0_sandbox_get(d->client, d->sid, &sb, &err); /* as it runs now */
	if (rc < 0)
		return step_error(d, "get", err, rc);
	show(d, sb);
	d->gen0 = s0_sandbox_info_runtime_generation(sb);
	snprintf(d->rt0, sizeof d->rt0, "%s", s0_sandbox_info_runtime_id(sb));
	expect(d, s0_sandbox_info_status(sb) == S0_STATUS_RUNNING, running);
	s0_sandbox_info_free(sb);
	return STEP_OK;
}

static int step_claim(demo *d)
{
	s0_error *err = NULL;
	if (claim_running(d, "demo", "running after claim") != STEP_OK)
		return STEP_FAILED;
	if (*d->sample) {
		size_t len;
		char *want = read_all(d->sample_host, &len);
		if (want)
			expect(d, file_is(d, d->sid, d->sample, want, len),
			       "a template file reads back byte for byte from the sandbox");
		free(want);
		s0_file_list *l = NULL;
		if (s0_files_list(d->client, d->sid, d->source, &l, &err) == S0_OK)
			say(d, "%s in the sandbox has %zu entries", d->source, s0_file_list_length(l));
		s0_error_free(err);
		s0_file_list_free(l);
	}
	return STEP_OK;
}

static int step_write(demo *d)
{
	s0_error *err = NULL;
	int rc;
	if ((rc = s0_files_write(d->client, d->sid, "/workspace/notes.md", "# kept\n", 7, &err)) < 0 ||
	    (rc = s0_files_write(d->client, d->sid, "/var/tmp/cache", "cache", 5, &err)) < 0 ||
	    (rc = s0_files_write(d->client, d->sid, "/tmp/scratch", "scratch", 7, &err)) < 0)
		return step_error(d, "write", err, rc);
	say(d, "wrote /workspace/notes.md, /var/tmp/cache (RootFS) and /tmp/scratch (tmpfs)");
	return STEP_OK;
}

int pause_shown(demo *d, const char *paused)
{
	s0_sandbox_info *sb = NULL;
	s0_error *err = NULL;
	s0_wait_options wo = wait_opts(d, S0_BOOL_UNSET);
	int rc = s0_sandbox_pause_and_wait(d->client, d->sid, &wo, &sb, &err);
	if (rc < 0)
		return step_error(d, "pause_and_wait", err, rc);
	show(d, sb);
	expect(d, s0_sandbox_info_paused(sb) && !*s0_sandbox_info_runtime_id(sb), paused);
	s0_sandbox_info_free(sb);
	return STEP_OK;
}

static int step_pause(demo *d)
{
	if (pause_shown(d, "paused: RootFS committed, compute released (empty runtime_id)") != STEP_OK)
		return STEP_FAILED;
	s0_error *err = NULL;
	int rc = s0_sandbox_update_network_policy(
		d->client, d->sid,
		"{\"mode\":\"block-all\",\"egress\":{\"allowedDomains\":[\"pypi.org\"]}}", NULL, &err);
	if (rc < 0)
		return step_error(d, "set the network policy", err, rc);
	say(d, "while paused: network policy block-all, egress allowed to pypi.org only");
	return STEP_OK;
}

int resume_shown(demo *d)
{
	s0_sandbox_info *sb = NULL;
	s0_error *err = NULL;
	s0_wait_options wo = wait_opts(d, S0_BOOL_UNSET);
	int rc = s0_sandbox_resume_and_wait(d->client, d->sid, &wo, &sb, &err);
	if (rc < 0)
		return step_error(d, "resume_and_wait", err, rc);
	show(d, sb);
	expect(d, s0_sandbox_info_runtime_generation(sb) == d->gen0 + 1,
	       "runtime_generation advanced by one");
	expect(d, strcmp(s0_sandbox_info_runtime_id(sb), d->rt0) != 0, "runtime_id changed");
	s0_sandbox_info_free(sb);
	return STEP_OK;
}

static int step_resume(demo *d)
{
	if (resume_shown(d) != STEP_OK)
		return STEP_FAILED;
	expect(d, file_is(d, d->sid, "/workspace/notes.md", "# kept\n", 7),
	       "/workspace/notes.md survived");
	expect(d, file_is(d, d->sid, "/var/tmp/cache", "cache", 5), "/var/tmp/cache survived");
	expect(d, file_missing(d, d->sid, "/tmp/scratch"),
	       "/tmp/scratch is gone (runtime tmpfs, not in the RootFS)");
	return STEP_OK;
}

/* ---- the memory step: a REPL context whose state lives in process memory ---- */

/* Run @p input in context @p ctx; *stdout_out (transfer full) is its stdout. */
int ctx_run(demo *d, const char *ctx, const char *input, char **stdout_out,
                   s0_error **err)
{
	char *res = NULL;
	*stdout_out = NULL;
	int rc = s0_context_exec(d->client, d->sid, ctx, input, &res, err);
	if (rc < 0)
		return rc;
	cj *v = cj_parse(res, strlen(res), NULL);
	const char *out = v ? cj_get_str(v, "stdout") : NULL;
	*stdout_out = xstrdup(out ? out : "");
	cj_free(v);
	s0_free(res);
	return S0_OK;
}

/* @p text without its trailing newlines, for one-line display. */
const char *chomp(char *text)
{
	size_t n = strlen(text);
	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r'))
		text[--n] = 0;
	return text;
}

/* Whether `ps` output @p ps lists PID @p pid on a line mentioning `sleep`. */
bool ps_lists(const char *ps, long pid)
{
	for (const char *line = ps; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char *l = xasprintf("%.*s", (int)len, line);
		char *p = l;
		while (*p == ' ')
			p++;
		bool hit = strtol(p, NULL, 10) == pid && strstr(l, "sleep");
		free(l);
		if (hit)
			return true;
		line = nl ? nl + 1 : NULL;
	}
	return false;
}

/*
 * Memory pause and resume: a REPL context holds a shell variable and a
 * background job, /tmp holds a file; a memory pause captures all of it into
 * a retained image and a memory resume restores it into a new runtime
 * (runtime_id changes, runtime_generation advances). A backend that cannot
 * checkpoint memory answers `unavailable`: the step then says so and is
 * skipped, not failed.
 */
/* A new REPL context; its id in ctx. STEP_OK or the step's failure. */
int new_repl(demo *d, char ctx[128])
{
	char *created = NULL;
	s0_error *err = NULL;
	int rc = s0_context_create(d->client, d->sid, "{\"type\":\"repl\"}", &created, &err);
	if (rc < 0)
		return step_error(d, "create a REPL context", err, rc);
	cj *v = cj_parse(created, strlen(created), NULL);
	const char *cid = v ? cj_get_str(v, "id") : NULL;
	snprintf(ctx, 128, "%s", cid ? cid : "");
	cj_free(v);
	s0_free(created);
	if (!*ctx) {
		expect(d, false, "the new context has an id");
		return STEP_FAILED;
	}
	return STEP_OK;
}

/* RTX-04: the policy set while paused was applied before the resume
 * reported running; `nc` asks the simulated network. */
static int step_network(demo *d)
{
	char ctx[128], *out = NULL;
	s0_error *err = NULL;
	int rc = new_repl(d, ctx);
	if (rc != STEP_OK)
		return rc;
	if ((rc = ctx_run(d, ctx, "nc -z example.com 443; echo $?", &out, &err)) < 0)
		return step_error(d, "exec nc -z example.com 443", err, rc);
	expect(d, !strcmp(chomp(out), "1"), "nc example.com:443 is denied (block-all)");
	free(out);
	if ((rc = ctx_run(d, ctx, "nc -z pypi.org 443; echo $?", &out, &err)) < 0)
		return step_error(d, "exec nc -z pypi.org 443", err, rc);
	expect(d, !strcmp(chomp(out), "0"), "nc pypi.org:443 connects (the allow list)");
	free(out);
	return STEP_OK;
}

int step_memory(demo *d)
{
	s0_sandbox_info *sb = NULL;
	s0_error *err = NULL;
	char *out = NULL, *ps = NULL;
	char ctx[128] = "";
	int rc = new_repl(d, ctx);
	if (rc != STEP_OK)
		return rc;
	if ((rc = ctx_run(d, ctx, "GREETING=hello", &out, &err)) < 0)
		return step_error(d, "exec GREETING=hello", err, rc);
	free(out);
	if ((rc = ctx_run(d, ctx, "sleep 100000 &", &out, &err)) < 0)
		return step_error(d, "exec sleep 100000 &", err, rc);
	free(out);
	if ((rc = ctx_run(d, ctx, "echo $!", &out, &err)) < 0)
		return step_error(d, "exec echo $!", err, rc);
	long pid = strtol(out, NULL, 10);
	free(out);
	if ((rc = ctx_run(d, ctx, "echo 'kept in tmpfs' > /tmp/scratch", &out, &err)) < 0)
		return step_error(d, "exec echo > /tmp/scratch", err, rc);
	free(out);
	say(d, "REPL context %s: GREETING=hello, `sleep 100000 &` is PID %ld, wrote /tmp/scratch",
	    ctx, pid);
	expect(d, pid > 1, "the background job has a PID");

	rc = s0_sandbox_get(d->client, d->sid, &sb, &err);
	if (rc < 0)
		return step_error(d, "get", err, rc);
	int64_t gen = s0_sandbox_info_runtime_generation(sb);
	char rt[128];
	snprintf(rt, sizeof rt, "%s", s0_sandbox_info_runtime_id(sb));
	s0_sandbox_info_free(sb);
	sb = NULL;

	s0_wait_options wo = wait_opts(d, S0_BOOL_TRUE);
	wo.timeout_ms = 30000;
	rc = s0_sandbox_pause_and_wait(d->client, d->sid, &wo, &sb, &err);
	if (rc == S0_EUNAVAILABLE || rc == S0_EUNSUPPORTED) {
		say(d, "memory checkpoints are not available from this backend (it answered %s: %s)",
		    s0_code_name(rc), err ? s0_error_message(err) : "");
		s0_error_free(err);
		err = NULL;
		rc = s0_sandbox_get(d->client, d->sid, &sb, &err);
		if (rc < 0)
			return step_error(d, "get", err, rc);
		expect(d, s0_sandbox_info_status(sb) == S0_STATUS_RUNNING,
		       "the refused memory pause left the sandbox running");
		s0_sandbox_info_free(sb);
		s0_context_delete(d->client, d->sid, ctx, NULL);
		return STEP_SKIPPED;
	}
	if (rc < 0)
		return step_error(d, "memory pause_and_wait", err, rc);
	show(d, sb);
	expect(d, s0_sandbox_info_paused(sb) && !*s0_sandbox_info_runtime_id(sb),
	       "memory paused: image retained, compute released (empty runtime_id)");
	s0_sandbox_info_free(sb);
	sb = NULL;
	rc = s0_sandbox_resume_and_wait(d->client, d->sid, &wo, &sb, &err);
	if (rc < 0)
		return step_error(d, "memory resume_and_wait", err, rc);
	show(d, sb);
	expect(d, s0_sandbox_info_runtime_generation(sb) == gen + 1,
	       "runtime_generation advanced by one");
	expect(d, *s0_sandbox_info_runtime_id(sb) && strcmp(s0_sandbox_info_runtime_id(sb), rt),
	       "runtime_id changed (a new runtime, restored from the image)");
	s0_sandbox_info_free(sb);

	if ((rc = ctx_run(d, ctx, "echo $GREETING", &out, &err)) < 0)
		return step_error(d, "exec echo $GREETING after resume", err, rc);
	say(d, "echo $GREETING -> %s", chomp(out));
	expect(d, !strcmp(out, "hello"), "the REPL variable GREETING survived");
	free(out);
	if ((rc = ctx_run(d, ctx, "ps", &ps, &err)) < 0)
		return step_error(d, "exec ps after resume", err, rc);
	expect(d, ps_lists(ps, pid), "the background `sleep 100000` kept its PID");
	say(d, "ps after resume:");
	for (char *line = strtok(ps, "\n"); line; line = strtok(NULL, "\n"))
		say(d, "  %s", line);
	free(ps);
	expect(d, file_is(d, d->sid, "/tmp/scratch", "kept in tmpfs\n", 14),
	       "/tmp/scratch survived (tmpfs is in the memory image)");
	if ((rc = s0_context_delete(d->client, d->sid, ctx, &err)) < 0)
		return step_error(d, "delete the context", err, rc);
	return STEP_OK;
}

int step_snapshot_fork(demo *d)
{
	s0_snapshot_info *snap = NULL;
	s0_sandbox_info *child = NULL;
	s0_error *err = NULL;
	int rc = s0_snapshot_create(d->client, d->sid, "milestone", "after the first cycle", 0,
	                            &snap, &err);
	if (rc < 0)
		return step_error(d, "snapshot", err, rc);
	snprintf(d->snap_id, sizeof d->snap_id, "%s", s0_snapshot_info_id(snap));
	s0_snapshot_info_free(snap);
	say(d, "snapshot %s \"milestone\" taken while running", d->snap_id);
	rc = s0_files_write(d->client, d->sid, "/workspace/notes.md", "# changed\n", 10, &err);
	if (rc < 0)
		return step_error(d, "write", err, rc);
	rc = s0_sandbox_fork(d->client, d->sid, NULL, &child, &err);
	if (rc < 0)
		return step_error(d, "fork", err, rc);
	snprintf(d->fork_id, sizeof d->fork_id, "%s", s0_sandbox_info_id(child));
	say(d, "changed notes.md, then forked:");
	show(d, child);
	expect(d, s0_sandbox_info_paused(child), "the fork is a new paused sandbox");
	s0_sandbox_info_free(child);
	return STEP_OK;
}

int step_restore(demo *d)
{
	s0_sandbox_info *sb = NULL;
	s0_lifecycle_result *lr = NULL;
	s0_error *err = NULL;
	s0_wait_options wo = S0_WAIT_OPTIONS_INIT;
	int rc = s0_sandbox_pause_and_wait(d->client, d->sid, &wo, &sb, &err);
	if (rc < 0)
		return step_error(d, "pause", err, rc);
	s0_sandbox_info_free(sb);
	sb = NULL;
	rc = s0_sandbox_restore(d->client, d->sid, d->snap_id, &lr, &err);
	if (rc < 0)
		return step_error(d, "restore", err, rc);
	s0_lifecycle_result_free(lr);
	rc = s0_sandbox_resume_and_wait(d->client, d->sid, &wo, &sb, &err);
	if (rc < 0)
		return step_error(d, "resume", err, rc);
	s0_sandbox_info_free(sb);
	say(d, "paused, restored \"milestone\", resumed");
	expect(d, file_is(d, d->sid, "/workspace/notes.md", "# kept\n", 7),
	       "restore brought back the snapshot's notes.md");
	sb = NULL;
	rc = s0_sandbox_resume_and_wait(d->client, d->fork_id, &wo, &sb, &err);
	if (rc < 0)
		return step_error(d, "resume the fork", err, rc);
	s0_sandbox_info_free(sb);
	expect(d, file_is(d, d->fork_id, "/workspace/notes.md", "# changed\n", 10),
	       "the fork kept the state at fork time");
	return STEP_OK;
}

int step_cleanup(demo *d)
{
	s0_error *err = NULL;
	int rc;
	if ((rc = s0_sandbox_delete(d->client, d->sid, &err)) < 0 ||
	    (rc = s0_sandbox_delete(d->client, d->fork_id, &err)) < 0 ||
	    (rc = s0_snapshot_delete(d->client, d->snap_id, &err)) < 0)
		return step_error(d, "delete", err, rc);
	say(d, "deleted both sandboxes and the snapshot");
	return STEP_OK;
}

/* The demo, in order; a step that fails ends the run (later ones depend on it). */
static const demo_step demo_steps[] = {
	{"open the embedded backend", step_open},
	{"build template \"demo\" from a real tree", step_template},
	{"claim a sandbox from \"demo\"", step_claim},
	{"write workspace, /var/tmp and /tmp files", step_write},
	{"pause (filesystem-only)", step_pause},
	{"resume", step_resume},
	{"egress under the network policy", step_network},
	{"REPL context, memory pause and resume", step_memory},
	{"snapshot, change, fork", step_snapshot_fork},
	{"pause, restore, resume; resume the fork", step_restore},
	{"delete everything", step_cleanup},
};

#define NSTEPS (sizeof demo_steps / sizeof demo_steps[0])
#define MAX_STEPS 24 /* the longest table of steps */

static const cli_flag demo_flags[] = {
	{"data", 0, FLAG_STR, "DIR", "data directory (default: a fresh temporary one, removed "
	                             "afterwards)"},
	{"source", 0, FLAG_STR, "DIR", "tree to build the template from (default /usr/share/doc; "
	                               "up to 24 MiB of its regular files, one filesystem)"},
	{"runtime", 0, FLAG_STR, "NAME", "auto (default, or $S0_RUNTIME: gvisor where it can run, "
	                                 "else sim), sim or gvisor"},
	{0},
};

/* SIGINT/SIGTERM: a watcher thread (sigwait, nothing in a handler) removes
 * what the demo made in the temporary directory (or the staged tree under
 * --data) and exits 128 + signal. */
static const char *cleanup_dir;

static void *demo_watch(void *arg)
{
	sigset_t *sigs = arg;
	int sig = 0;
	while (sigwait(sigs, &sig) != 0)
		;
	/* from here on the demo's own end must not cancel this: it exits the process */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	fprintf(stderr, "\ninterrupted: removing %s\n", cleanup_dir ? cleanup_dir : "nothing");
	stopping = 1;
	if (cleanup_dir) {
		/* the copy or the backend may still be writing into it: retry a while */
		struct stat st;
		for (int i = 0; i < 100 && lstat(cleanup_dir, &st) == 0; i++) {
			rm_rf(cleanup_dir);
			if (lstat(cleanup_dir, &st) == 0)
				usleep(20000);
		}
	}
	_exit(128 + sig);
}

/* A directory on a kernel pseudo filesystem is no tree to copy. */
static bool pseudo_fs(const char *path)
{
	struct statfs fs;
	if (statfs(path, &fs) < 0)
		return false;
	return fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC ||
	       fs.f_type == DEVPTS_SUPER_MAGIC || fs.f_type == CGROUP_SUPER_MAGIC ||
	       fs.f_type == CGROUP2_SUPER_MAGIC || fs.f_type == DEBUGFS_MAGIC ||
	       fs.f_type == SECURITYFS_MAGIC || fs.f_type == TRACEFS_MAGIC;
}

static int run_demo(cli *c)
{
	demo d;
	memset(&d, 0, sizeof d);
	d.c = c;
	const char *src = opt_str(c, "source") ? opt_str(c, "source") : "/usr/share/doc";
	char *src_abs = realpath(src, NULL);
	d.source = src_abs ? src_abs : src;
	if (opt_str(c, "source")) {
		struct stat st;
		int rc = CLI_EXIT_OK;
		if (stat(src, &st) < 0)
			rc = cli_failf("reading the source tree", "%s: %s", src, strerror(errno));
		else if (!S_ISDIR(st.st_mode))
			rc = cli_failf("reading the source tree", "%s: not a directory", src);
		else if (pseudo_fs(src))
			rc = cli_failf("reading the source tree",
			               "%s: a kernel pseudo filesystem (proc, sys, …), not a tree of files",
			               src);
		if (rc) {
			free(src_abs);
			return rc;
		}
	}
	sigset_t sigs, old;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, &old); /* before the backend starts its threads */
	if (opt_str(c, "data")) {
		d.data_dir = xstrdup(opt_str(c, "data"));
	} else {
		const char *tmp = getenv("TMPDIR");
		d.data_dir = xasprintf("%s/s0-demo-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(d.data_dir)) {
			int rc = cli_failf("making a temporary directory", "%s", strerror(errno));
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			free(d.data_dir);
			free(src_abs);
			return rc;
		}
		d.temp_dir = true;
	}
	char *stage_path = xasprintf("%s/demo-tree", d.data_dir);
	cleanup_dir = d.temp_dir ? d.data_dir : stage_path;
	pthread_t watcher;
	bool watching = pthread_create(&watcher, NULL, demo_watch, &sigs) == 0;
	printf("libsandbox0 %s: s0 demo on an embedded local backend\n\n", s0_version_string());
	d.runtime = cli_runtime_wanted(c);
	const demo_step *steps = demo_steps;
	size_t nsteps = NSTEPS;
	double ms[MAX_STEPS];
	int outcome[MAX_STEPS];
	size_t done = 0;
	d.t0 = mono_now_s();
	for (size_t i = 0; i < nsteps; i++) {
		double start = mono_now_s();
		printf("[%8.1f ms] %s\n", (start - d.t0) * 1000.0, steps[i].title);
		fflush(stdout);
		outcome[i] = steps[i].run(&d);
		ms[i] = (mono_now_s() - start) * 1000.0;
		done = i + 1;
		if (outcome[i] == STEP_FAILED)
			break;
		if (i == 0 && d.gvisor) { /* after the open: the steps of the real runtime */
			steps = demo_gvisor_steps;
			nsteps = demo_gvisor_nsteps;
		}
	}

	double total = (mono_now_s() - d.t0) * 1000.0;
	printf("\nTimeline:\n");
	tbl t;
	tbl_init(&t, 3);
	for (size_t i = 0; i < done; i++) {
		char took[32];
		snprintf(took, sizeof took, "%9.1f ms", ms[i]);
		tbl_add(&t, took, steps[i].title,
		        outcome[i] == STEP_OK ? "ok" : outcome[i] == STEP_SKIPPED ? "not available"
		                                                                 : "FAILED");
	}
	char total_s[32];
	snprintf(total_s, sizeof total_s, "%9.1f ms", total);
	tbl_add(&t, total_s, "total", "");
	tbl_print(&t, stdout);
	tbl_free(&t);

	s0_client_free(d.client);
	s0_local_close(d.local);
	if (watching) {
		pthread_cancel(watcher); /* sigwait is a cancellation point */
		pthread_join(watcher, NULL);
	}
	if (d.temp_dir)
		rm_rf(d.data_dir);
	cleanup_dir = NULL;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	free(stage_path);
	free(d.stage);
	free(d.data_dir);
	free(src_abs);
	printf("\n%s: %d expectation(s) failed\n", d.failures ? "FAILED" : "DONE", d.failures);
	return d.failures ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

const cli_cmd cmd_demo = {
	.name = "demo",
	.summary = "Walk through pause, resume, snapshot, fork and restore on an embedded backend",
	.flags = demo_flags,
	.run = run_demo,
};
