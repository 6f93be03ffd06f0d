/* SEC-75: the loop-over-FUSE stack under memory pressure. A memory cgroup
 * the test makes (and removes) with a limit of tens of MiB holds a writer
 * of a file several times that size, the FUSE server outside (as for a
 * gvisor sandbox, whose cgroup holds runsc while the server is the
 * backend): the write completes — or fails cleanly with ENOSPC or ENOMEM —
 * within a bound, with the content intact, and the limit was really hit
 * (the cgroup's failcnt). The host stays out of global reclaim (the cgroup
 * is small). Then the whole stack in the cgroup (the FUSE server's threads
 * in the writer's process): on cgroup v1 that deadlocked (the writer and a
 * server thread in reclaim, waiting for writeback only the server does:
 * `folio_wait_writeback` under `try_to_free_mem_cgroup_pages`), so the
 * carrier refuses to attach there, naming the cgroup; the test checks the
 * refusal. A hang is reported with the stuck tasks' states and kernel wait
 * channels, then released by aborting the FUSE connections of the hung
 * process (writeback fails with EIO) so the test still cleans up.
 * cgroup v1 (`memory.limit_in_bytes`) or v2 (`memory.max`). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cartest.h"

#define MiB (1024ull * 1024)
#define LIMIT (32 * MiB)   /* the cgroup's memory limit */
#define FILE_BYTES (160 * MiB) /* 5× the limit */
#define BOUND_MS 90000     /* a write of FILE_BYTES must end within this */

/* ---- the test's memory cgroup ---- */

typedef struct pcg {
	char dir[256];
	bool v2;
} pcg;

static bool put_str(const char *dir, const char *file, const char *val)
{
	char p[320];
	snprintf(p, sizeof p, "%s/%s", dir, file);
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val);
}

static void pcg_limit(pcg *g, uint64_t bytes)
{
	char v[32];
	snprintf(v, sizeof v, "%llu", (unsigned long long)bytes);
	ck_assert_msg(put_str(g->dir, g->v2 ? "memory.max" : "memory.limit_in_bytes", v),
	              "set the limit of %s: %s", g->dir, strerror(errno));
}

/* The cgroup's path, fixed by the suite's process before the test forks,
 * so its teardown (run there, also after a failure) finds it. */
static pcg cg_path;

static void pcg_name(void)
{
	struct stat st;
	cg_path.v2 = stat("/sys/fs/cgroup/memory", &st) != 0 &&
	             stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0;
	snprintf(cg_path.dir, sizeof cg_path.dir, "%s/s0-carrier-pressure-%d",
	         cg_path.v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory", (int)getpid());
}

static void pcg_make(pcg *g)
{
	*g = cg_path;
	ck_assert_msg(mkdir(g->dir, 0755) == 0, "mkdir %s: %s", g->dir, strerror(errno));
	pcg_limit(g, LIMIT);
}

/* How often the limit was hit (v1 memory.failcnt; v2 memory.events "max"). */
static uint64_t pcg_hits(const pcg *g)
{
	char p[320], line[128];
	snprintf(p, sizeof p, "%s/%s", g->dir, g->v2 ? "memory.events" : "memory.failcnt");
	FILE *f = fopen(p, "re");
	unsigned long long n = 0, v;
	while (f && fgets(line, sizeof line, f))
		if (g->v2 ? sscanf(line, "max %llu", &v) == 1 : sscanf(line, "%llu", &v) == 1)
			n = v;
	if (f)
		fclose(f);
	return n;
}

static uint64_t pcg_peak(const pcg *g)
{
	char p[320];
	snprintf(p, sizeof p, "%s/%s", g->dir, g->v2 ? "memory.peak" : "memory.max_usage_in_bytes");
	FILE *f = fopen(p, "re");
	unsigned long long v = 0;
	if (f && fscanf(f, "%llu", &v) != 1)
		v = 0;
	if (f)
		fclose(f);
	return v;
}

/* Kill what is left in the cgroup (a straggler of a failed test; the
 * limit raised so a task stuck in reclaim can die) and remove it: whether
 * it is gone. */
static bool pcg_remove(const pcg *g)
{
	char p[320];
	snprintf(p, sizeof p, "%s/cgroup.procs", g->dir);
	FILE *f = fopen(p, "re");
	if (!f)
		return errno == ENOENT;
	put_str(g->dir, g->v2 ? "memory.max" : "memory.limit_in_bytes", "1073741824");
	int pid;
	while (fscanf(f, "%d", &pid) == 1)
		kill(pid, SIGKILL);
	fclose(f);
	/* rmdir is EBUSY until the killed tasks are gone: bounded retries */
	for (int i = 0; i < 200 && rmdir(g->dir) != 0 && errno == EBUSY; i++) {
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	return access(g->dir, F_OK) != 0;
}

static void pressure_teardown(void)
{
	if (!pcg_remove(&cg_path))
		fprintf(stderr, "carrier_pressure: cannot remove %s: %s\n", cg_path.dir, strerror(errno));
}

/* ---- waiting, bounded, and what a hang looks like ---- */

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Each task of pid: "tid:state:wchan". */
static void describe_tasks(pid_t pid, char *out, size_t n)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/task", (int)pid);
	out[0] = 0;
	DIR *d = opendir(p);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char sp[320], buf[512], wchan[64] = "";
		snprintf(sp, sizeof sp, "/proc/%d/task/%s/stat", (int)pid, de->d_name);
		FILE *f = fopen(sp, "re");
		char state = '?';
		if (f && fgets(buf, sizeof buf, f)) {
			char *r = strrchr(buf, ')');
			if (r && r[1])
				state = r[2];
		}
		if (f)
			fclose(f);
		snprintf(sp, sizeof sp, "/proc/%d/task/%s/wchan", (int)pid, de->d_name);
		f = fopen(sp, "re");
		if (f && !fgets(wchan, sizeof wchan, f))
			wchan[0] = 0;
		if (f)
			fclose(f);
		size_t used = strlen(out);
		snprintf(out + used, n - used, " %s:%c:%s", de->d_name, state, wchan);
	}
	if (d)
		closedir(d);
}

/* Abort every FUSE connection of a carrier (source "s0c:…") that a task
 * of pid shows in its mount table: pending requests fail, writeback ends
 * with EIO, tasks waiting on it go on. How many were aborted. */
static int abort_fuse_of(pid_t pid)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/task", (int)pid);
	DIR *d = opendir(p);
	struct dirent *de;
	int n = 0;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char mi[320], line[1024];
		snprintf(mi, sizeof mi, "/proc/%d/task/%s/mountinfo", (int)pid, de->d_name);
		FILE *f = fopen(mi, "re");
		while (f && fgets(line, sizeof line, f)) {
			unsigned maj, min;
			char *sep = strstr(line, " - fuse ");
			if (!sep || !strstr(sep, " s0c:") || sscanf(line, "%*d %*d %u:%u", &maj, &min) != 2)
				continue;
			char ab[96];
			snprintf(ab, sizeof ab, "/sys/fs/fuse/connections/%u", min);
			if (put_str(ab, "abort", "1"))
				n++;
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

/* Wait for child to exit within ms; its wait status, or -1 on timeout. */
static int wait_bounded(pid_t child, int pidfd, int ms)
{
	struct pollfd pf = {.fd = pidfd, .events = POLLIN};
	int r;
	while ((r = poll(&pf, 1, ms)) < 0 && errno == EINTR)
		;
	if (r == 0)
		return -1;
	int st;
	ck_assert_int_eq(waitpid(child, &st, 0), child);
	return st;
}

/* ---- the writers (forked children: no check asserts, exit codes) ---- */

/* Exit codes of a writer: 0 written and read back, EX_CLEAN a clean
 * ENOSPC/ENOMEM, else a step number. */
enum { EX_CLEAN = 40, EX_JOIN = 41, EX_OPEN, EX_WRITE, EX_FSYNC, EX_READ, EX_DIFF, EX_STACK,
       EX_REFUSED };

static int join_cgroup(const pcg *g)
{
	char me[16];
	snprintf(me, sizeof me, "%d", (int)getpid());
	return put_str(g->dir, "cgroup.procs", me) ? 0 : -1;
}

/* Write FILE_BYTES of carenv_fill text to path with buffered 1 MiB writes,
 * fsync, drop its pages, read it back through the device. */
static int write_and_check(const char *path)
{
	char *buf = malloc(MiB), *back = malloc(MiB);
	if (!buf || !back)
		return EX_CLEAN;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return EX_OPEN;
	for (uint64_t off = 0; off < FILE_BYTES; off += MiB) {
		carenv_fill(buf, MiB, 1000 + off / MiB);
		ssize_t n = pwrite(fd, buf, MiB, (off_t)off);
		if (n != (ssize_t)MiB)
			return errno == ENOSPC || errno == ENOMEM ? EX_CLEAN : EX_WRITE;
	}
	if (fsync(fd) != 0)
		return errno == ENOSPC || errno == ENOMEM ? EX_CLEAN : EX_FSYNC;
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	for (uint64_t off = 0; off < FILE_BYTES; off += MiB) {
		carenv_fill(buf, MiB, 1000 + off / MiB);
		if (pread(fd, back, MiB, (off_t)off) != (ssize_t)MiB)
			return EX_READ;
		if (memcmp(buf, back, MiB) != 0)
			return EX_DIFF;
	}
	close(fd);
	free(buf);
	free(back);
	return 0;
}

/* The whole stack in the cgroup: a store and template made before joining
 * (their memory stays charged outside), then the carrier attached — its
 * FUSE server threads would start inside — the file written through it,
 * synced, detached. On cgroup v1 the attach is refused (EX_REFUSED, the
 * message naming the cgroup on stderr). */
static int whole_stack(const pcg *g, const char *dir, const char *state)
{
	carenv env;
	s0_error *err = NULL;
	char envdir[4200];
	snprintf(envdir, sizeof envdir, "%s/stack-store", dir);
	if (carenv_open(&env, envdir, 512 * MiB, &err) != S0_OK)
		return EX_STACK;
	if (join_cgroup(g) != 0)
		return EX_JOIN;
	s0__branch *b = NULL;
	if (carenv_branch(&env, &b, &err) != S0_OK)
		return EX_STACK;
	s0__blockdev dev;
	s0__branch_blockdev(b, &dev);
	s0__carrier_opts o = {.dev = &dev, .state_dir = state, .id = "stack"};
	s0__carrier *c = NULL;
	int arc = s0__carrier_attach(&o, &c, &err);
	if (arc != S0_OK) {
		fprintf(stderr, "whole stack: attach: %s\n", s0_error_message(err));
		bool refused = arc == S0_EUNAVAILABLE && strstr(s0_error_message(err), "memory cgroup") &&
		               strstr(s0_error_message(err), "SEC-75");
		s0_error_free(err);
		s0__branch_free(b);
		carenv_close(&env);
		return refused ? EX_REFUSED : EX_STACK;
	}
	char path[4200];
	snprintf(path, sizeof path, "%s/workspace/big", s0__carrier_host_root(c));
	int rc = write_and_check(path);
	if (s0__carrier_detach(c, &err) != S0_OK) {
		fprintf(stderr, "whole stack: detach: %s\n", s0_error_message(err));
		rc = rc ? rc : EX_STACK;
	}
	s0__carrier_free(c);
	s0__branch_free(b);
	carenv_close(&env);
	return rc;
}

/* Run one writer child in the cgroup (stack: the whole stack; else
 * writing path), bounded; assert its outcome: want_exit, or (want_exit 0)
 * written or a clean ENOSPC/ENOMEM with the limit hit. */
static void run_writer(const char *what, pcg *g, bool stack, const char *path, const char *dir,
                       const char *state, int want_exit)
{
	uint64_t hits0 = pcg_hits(g);
	int64_t t0 = now_ms();
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		if (stack)
			_exit(whole_stack(g, dir, state));
		_exit(join_cgroup(g) != 0 ? EX_JOIN : write_and_check(path));
	}
	int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	ck_assert_int_ge(pidfd, 0);
	int st = wait_bounded(child, pidfd, BOUND_MS);
	char tasks[2048] = "";
	if (st == -1) { /* hung: say where, then release it to clean up */
		describe_tasks(child, tasks, sizeof tasks);
		abort_fuse_of(stack ? child : getpid());
		pcg_limit(g, 1024 * MiB);
		st = wait_bounded(child, pidfd, 60000);
		if (st == -1) {
			kill(child, SIGKILL);
			st = wait_bounded(child, pidfd, 60000);
		}
	}
	close(pidfd);
	int64_t ms = now_ms() - t0;
	uint64_t hits = pcg_hits(g) - hits0;
	fprintf(stderr,
	        "pressure (%s): %s%llu MiB through a %llu MiB cgroup in %lld ms; limit hit %llu "
	        "times, peak %llu MiB; exit %d\n",
	        what, want_exit ? "refused before writing " : "", (unsigned long long)(FILE_BYTES / MiB), (unsigned long long)(LIMIT / MiB),
	        (long long)ms, (unsigned long long)hits, (unsigned long long)(pcg_peak(g) / MiB),
	        WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
	ck_assert_msg(!tasks[0], "%s: no end within %d ms; tasks (tid:state:wchan):%s", what,
	              BOUND_MS, tasks);
	ck_assert_msg(WIFEXITED(st), "%s: the writer was killed by signal %d (OOM?)", what,
	              WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	if (want_exit) {
		ck_assert_msg(WEXITSTATUS(st) == want_exit, "%s: exit %d, want %d", what,
		              WEXITSTATUS(st), want_exit);
		return;
	}
	ck_assert_msg(WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == EX_CLEAN,
	              "%s: the writer failed at step %d", what, WEXITSTATUS(st));
	ck_assert_msg(hits > 0, "%s: the %llu MiB limit was never hit", what,
	              (unsigned long long)(LIMIT / MiB));
}

START_TEST(test_writes_under_memory_limit)
{
	ct t;
	ct_open(&t, 512 * MiB);
	pcg g;
	pcg_make(&g);
	/* The sandbox's side: the writer in the cgroup, the server here. */
	s0__branch *b = NULL;
	CT_OK(carenv_branch(&t.env, &b, &err_));
	s0__carrier *c = ct_attach(&t, b, "sandbox");
	char *p = ct_path(c, "/workspace/big");
	run_writer("sandbox writer", &g, false, p, t.dir, t.state, 0);
	free(p);
	CT_OK(s0__carrier_sync(c, &err_));
	CT_OK(s0__carrier_detach(c, &err_));
	s0__carrier_free(c);
	s0__branch_free(b);
	/* The whole stack in the cgroup: refused on cgroup v1. */
	run_writer("whole stack", &g, true, NULL, t.dir, t.state, g.v2 ? 0 : EX_REFUSED);
	ck_assert_msg(pcg_remove(&g), "cgroup %s not removed: %s", g.dir, strerror(errno));
	char what[512];
	ck_assert_msg(ct_leftovers(t.state, what, sizeof what) == 0, "left:%s", what);
	ct_close(&t);
}
END_TEST

Suite *carrier_pressure_suite(void)
{
	Suite *s = suite_create("carrier_pressure");
	TCase *tc = tcase_create("pressure");
	tcase_set_timeout(tc, 400);
	tcase_add_unchecked_fixture(tc, pcg_name, pressure_teardown);
	tcase_add_test(tc, test_writes_under_memory_limit);
	suite_add_tcase(s, tc);
	return s;
}
