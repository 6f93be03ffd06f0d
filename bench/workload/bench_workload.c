/*
 * Workload benchmark (issue #22): one agent-like session end to end, on the
 * embedded backend (in-process client) and through `s0 serve` (HTTP on
 * loopback): claim, 200 small and 5 large file writes, pause_and_wait,
 * resume_and_wait, reading everything back, a snapshot, a fork, deletes.
 * Each step is timed and set against the floor it could reach on this
 * machine, from the fsync latency and the bandwidths measured in the same
 * run (README.md). Then, on the embedded backend, pause_and_wait +
 * resume_and_wait with 1 MiB dirty against the engine's own pause + resume
 * of the same state, called directly.
 *
 * Usage: bench_workload [scratch-dir]    (default $TMPDIR or /tmp)
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "local/lifecycle/engine_internal.h"
#include "local/local_internal.h"
#include "local/objects/objstore.h"
#include "sandbox0/local.h"
#include "sandbox0/sandbox0.h"

#define KiB 1024u
#define MiB (1024u * 1024u)
#define SMALL_N 200
#define SMALL_SIZE (4 * KiB)
#define LARGE_N 5
#define LARGE_SIZE (4 * MiB)
#define REPS 5

static const char *scratch;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void die(const char *what, s0_error *e)
{
	fprintf(stderr, "bench_workload: %s: %s\n", what, e ? s0_error_message(e) : strerror(errno));
	exit(1);
}

#define CHECK(call, what)                                                      \
	do {                                                                   \
		s0_error *e_ = NULL;                                           \
		if ((call) < 0)                                                \
			die(what, e_);                                         \
	} while (0)

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_d);
	return v[n / 2];
}

static char *mkscratch(const char *what)
{
	char *d = s0__asprintf("%s/s0-bench-%s-XXXXXX", scratch, what);
	if (!d || !mkdtemp(d))
		die("mkdtemp", NULL);
	return d;
}

static void rmrf(const char *d)
{
	char *cmd = s0__asprintf("rm -rf '%s'", d);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_workload: could not remove %s\n", d);
	free(cmd);
}

/* ---- this machine's speeds, in the scratch directory's filesystem ---- */

typedef struct speeds {
	double fsync_ms;       /* a 4 KiB overwrite + fdatasync, median */
	double durable_mbs;    /* 64 MiB written then fsync'd */
	double cache_write_mbs; /* pwrite into the page cache, 1 MiB at a time */
	double cache_read_mbs;  /* pread of the same */
} speeds;

static void measure_speeds(speeds *s)
{
	char *path = s0__asprintf("%s/s0-bench-speed", scratch);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die("speed file", NULL);
	char *buf = malloc(MiB);
	memset(buf, 0x5a, MiB);
	/* the same 4 KiB rewritten in place: a data sync with no size change to
	 * journal, the cheapest commit a store can make (SQLite's WAL and the
	 * object store's batch reuse their space the same way) */
	double f[21];
	if (pwrite(fd, buf, 4 * KiB, 0) != 4 * KiB || fsync(fd) < 0)
		die("fsync probe", NULL);
	for (int i = 0; i < 21; i++) {
		double t0 = now_ms();
		if (pwrite(fd, buf, 4 * KiB, 0) != 4 * KiB || fdatasync(fd) < 0)
			die("fsync probe", NULL);
		f[i] = now_ms() - t0;
	}
	s->fsync_ms = median(f, 21);
	double t0 = now_ms();
	for (int i = 0; i < 64; i++)
		if (pwrite(fd, buf, MiB, (off_t)i * MiB) != (ssize_t)MiB)
			die("write probe", NULL);
	double t1 = now_ms();
	if (fsync(fd) < 0)
		die("fsync", NULL);
	double t2 = now_ms();
	s->durable_mbs = 64.0 / ((t2 - t0) / 1e3);
	s->cache_write_mbs = 64.0 / ((t1 - t0) / 1e3);
	t0 = now_ms();
	for (int i = 0; i < 64; i++)
		if (pread(fd, buf, MiB, (off_t)i * MiB) != (ssize_t)MiB)
			die("read probe", NULL);
	s->cache_read_mbs = 64.0 / ((now_ms() - t0) / 1e3);
	close(fd);
	unlink(path);
	free(path);
	free(buf);
}

/* Sealing the session's bytes into an object store (keyed BLAKE2b,
 * zstd, encryption, one batch, one sync) on one thread: the CPU part of a
 * pause's publish, which the I/O floor leaves out. */
static double measure_seal_ms(const char *small, const char *large)
{
	char *dir = mkscratch("seal");
	char *objdir = s0__asprintf("%s/objects", dir);
	uint8_t key[32] = {7};
	s0__objstore *os = NULL;
	s0__objctx *cx = NULL;
	s0__objbatch *b = NULL;
	CHECK(s0__objstore_open_dir(objdir, key, NULL, &os, &e_), "object store");
	CHECK(s0__objstore_ctx_new(os, &cx, &e_), "codec");
	double t0 = now_ms();
	CHECK(s0__objstore_begin(os, &b, &e_), "batch");
	/* the small files fill 64 KiB chunks 16 at a time, as on the volume */
	char *chunk = malloc(64 * KiB);
	for (int i = 0; i < SMALL_N; i += 16) {
		for (int k = 0; k < 16; k++)
			memcpy(chunk + k * SMALL_SIZE, small + (i + k) % SMALL_N, SMALL_SIZE);
		CHECK(s0__objstore_put(os, cx, b, chunk, 64 * KiB, NULL, &e_), "put");
	}
	for (int i = 0; i < LARGE_N; i++)
		for (size_t off = 0; off < LARGE_SIZE; off += 64 * KiB)
			CHECK(s0__objstore_put(os, cx, b, large + i + off, 64 * KiB, NULL, &e_), "put");
	CHECK(s0__objstore_commit(os, b, &e_), "commit");
	double ms = now_ms() - t0;
	free(chunk);
	s0__objctx_free(cx);
	s0__objstore_free(os);
	rmrf(dir);
	free(objdir);
	free(dir);
	return ms;
}

/* ---- the session ---- */

enum { ST_CLAIM, ST_SMALL, ST_LARGE, ST_PAUSE, ST_RESUME, ST_READ, ST_SNAP, ST_FORK, ST_DELETE,
       ST_N };
static const char *step_name[ST_N] = {
	"claim", "200 small writes (4 KiB)", "5 large writes (4 MiB)", "pause_and_wait",
	"resume_and_wait", "read all back", "snapshot", "fork", "delete (child, parent)"};

/* The floor of each step in ms: its fsyncs and its bytes at this machine's
 * speeds (README.md "Floors"). */
static void floors(const speeds *s, double *fl)
{
	double small = SMALL_N * (double)SMALL_SIZE / MiB, large = LARGE_N * (double)LARGE_SIZE / MiB;
	fl[ST_CLAIM] = s->fsync_ms;                                   /* the metadata commit */
	fl[ST_SMALL] = small / s->cache_write_mbs * 1e3;              /* bytes into memory */
	fl[ST_LARGE] = large / s->cache_write_mbs * 1e3;
	fl[ST_PAUSE] = (small + large) / s->durable_mbs * 1e3 + 2 * s->fsync_ms; /* objects + commit */
	fl[ST_RESUME] = s->fsync_ms;                                  /* the commit */
	fl[ST_READ] = (small + large) / s->cache_read_mbs * 1e3;
	fl[ST_SNAP] = s->fsync_ms;
	fl[ST_FORK] = s->fsync_ms;
	fl[ST_DELETE] = 2 * s->fsync_ms;
}

/* This process's CPU time in ms (all threads: on the embedded backend, the
 * step's own work and the engine's threads). */
static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Per-step CPU, and with BENCH_WORKLOAD_MARKS set, each step's end on
 * stderr with the wall clock (CLOCK_REALTIME, as `strace -ttt` and
 * `perf script` print it) so a trace of the run splits by step. */
typedef struct stepper {
	const char *backend;
	double *cpu, *server_cpu;
	double c_prev, s_prev;
	pid_t server;
	bool marks;
} stepper;

/* CPU time of process @p pid in ms (utime + stime of /proc/PID/stat), 0
 * when unreadable. */
static double proc_cpu_ms(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
	unsigned long ut = 0, st = 0;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return 0;
	return (double)(ut + st) * 1e3 / (double)sysconf(_SC_CLK_TCK);
}

static void step_begin(stepper *sp, const char *backend, double *cpu, pid_t server,
                       double *server_cpu)
{
	sp->backend = backend;
	sp->cpu = cpu;
	sp->server = server;
	sp->server_cpu = server_cpu;
	sp->s_prev = server ? proc_cpu_ms(server) : 0;
	sp->marks = getenv("BENCH_WORKLOAD_MARKS") != NULL;
	sp->c_prev = cpu_ms();
	if (sp->marks) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		fprintf(stderr, "mark %s start %ld.%06ld\n", backend, (long)ts.tv_sec, ts.tv_nsec / 1000);
	}
}

static void step_end(stepper *sp, int st)
{
	double c = cpu_ms();
	sp->cpu[st] = c - sp->c_prev;
	sp->c_prev = c;
	if (sp->server) {
		double sc = proc_cpu_ms(sp->server);
		sp->server_cpu[st] = sc - sp->s_prev;
		sp->s_prev = sc;
	}
	if (sp->marks) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		fprintf(stderr, "mark %s %s %ld.%06ld\n", sp->backend, step_name[st], (long)ts.tv_sec,
		        ts.tv_nsec / 1000);
	}
}

static void session(s0_client *c, const char *backend, pid_t server, const char *small,
                    const char *large, double *t, double *cpu, double *server_cpu)
{
	s0_sandbox_info *sb = NULL, *child = NULL;
	char path[64];
	s0_wait_options wo = S0_WAIT_OPTIONS_INIT;
	stepper sp;
	step_begin(&sp, backend, cpu, server, server_cpu);
	double t0 = now_ms();
	CHECK(s0_sandbox_claim(c, "default", NULL, NULL, &sb, &e_), "claim");
	char *id = strdup(s0_sandbox_info_id(sb));
	s0_sandbox_info_free(sb);
	double t1 = now_ms();
	t[ST_CLAIM] = t1 - t0;
	step_end(&sp, ST_CLAIM);
	for (int i = 0; i < SMALL_N; i++) {
		snprintf(path, sizeof path, "/workspace/small/f%03d.txt", i);
		CHECK(s0_files_write(c, id, path, small + i, SMALL_SIZE, &e_), "small write");
	}
	double t2 = now_ms();
	t[ST_SMALL] = t2 - t1;
	step_end(&sp, ST_SMALL);
	for (int i = 0; i < LARGE_N; i++) {
		snprintf(path, sizeof path, "/workspace/large/blob%d.bin", i);
		CHECK(s0_files_write(c, id, path, large + i, LARGE_SIZE, &e_), "large write");
	}
	double t3 = now_ms();
	t[ST_LARGE] = t3 - t2;
	step_end(&sp, ST_LARGE);
	CHECK(s0_sandbox_pause_and_wait(c, id, &wo, NULL, &e_), "pause_and_wait");
	double t4 = now_ms();
	t[ST_PAUSE] = t4 - t3;
	step_end(&sp, ST_PAUSE);
	CHECK(s0_sandbox_resume_and_wait(c, id, &wo, NULL, &e_), "resume_and_wait");
	double t5 = now_ms();
	t[ST_RESUME] = t5 - t4;
	step_end(&sp, ST_RESUME);
	for (int i = 0; i < SMALL_N + LARGE_N; i++) {
		if (i < SMALL_N)
			snprintf(path, sizeof path, "/workspace/small/f%03d.txt", i);
		else
			snprintf(path, sizeof path, "/workspace/large/blob%d.bin", i - SMALL_N);
		void *d = NULL;
		size_t n = 0;
		CHECK(s0_files_read(c, id, path, &d, &n, &e_), "read");
		if (n != (i < SMALL_N ? SMALL_SIZE : LARGE_SIZE) ||
		    memcmp(d, i < SMALL_N ? small + i : large + (i - SMALL_N), n))
			die("read back differs", NULL);
		s0_free(d);
	}
	double t6 = now_ms();
	t[ST_READ] = t6 - t5;
	step_end(&sp, ST_READ);
	s0_snapshot_info *snap = NULL;
	CHECK(s0_snapshot_create(c, id, "bench", NULL, 0, &snap, &e_), "snapshot");
	double t7 = now_ms();
	t[ST_SNAP] = t7 - t6;
	step_end(&sp, ST_SNAP);
	CHECK(s0_sandbox_fork(c, id, NULL, &child, &e_), "fork");
	double t8 = now_ms();
	t[ST_FORK] = t8 - t7;
	step_end(&sp, ST_FORK);
	CHECK(s0_sandbox_delete(c, s0_sandbox_info_id(child), &e_), "delete child");
	CHECK(s0_sandbox_delete(c, id, &e_), "delete");
	t[ST_DELETE] = now_ms() - t8;
	step_end(&sp, ST_DELETE);
	s0_snapshot_info_free(snap);
	s0_sandbox_info_free(child);
	free(id);
}

/* ---- the two backends ---- */

static s0_local *open_local(const char *dir)
{
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	s0_local *l = NULL;
	CHECK(s0_local_open(dir, &o, &l, &e_), "s0_local_open");
	return l;
}

static void run_embedded(const char *small, const char *large, double *t, double *cpu)
{
	char *dir = mkscratch("embedded");
	s0_local *l = open_local(dir);
	s0_client *c = NULL;
	CHECK(s0_client_new_local(l, NULL, &c, &e_), "client");
	session(c, "embedded", 0, small, large, t, cpu, NULL);
	s0_client_free(c);
	s0_local_close(l);
	rmrf(dir);
	free(dir);
}

/* Start `s0 serve` on a fresh directory; its URL (malloc'd) and pid. */
static char *start_server(const char *dir, const char *token, pid_t *pid)
{
	char *data = s0__asprintf("%s/data", dir), *json = s0__asprintf("%s/data/server.json", dir);
	*pid = fork();
	if (*pid == 0) {
		/* the embedded pass's runtime (sim): `auto` would pick gvisor where it
		 * can run (root, cached runsc) and the columns would not compare */
		execl(S0_CLI_PATH, "s0", "serve", "--data", data, "--listen", "127.0.0.1:0", "--token",
		      token, "--runtime", "sim", "-q", (char *)NULL);
		_exit(127);
	}
	char *url = NULL;
	for (int i = 0; i < 600 && !url; i++) {
		FILE *f = fopen(json, "r");
		char buf[1024] = "";
		size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
		if (f)
			fclose(f);
		buf[n] = '\0';
		cJSON *j = n ? cJSON_Parse(buf) : NULL;
		const cJSON *u = cJSON_GetObjectItem(j, "url");
		if (cJSON_IsString(u))
			url = strdup(u->valuestring);
		cJSON_Delete(j);
		if (!url)
			usleep(20000);
	}
	if (!url)
		die("s0 serve did not start", NULL);
	free(data);
	free(json);
	return url;
}

static void run_served(const char *small, const char *large, double *t, double *cpu,
                       double *server_cpu)
{
	char *dir = mkscratch("served");
	const char *token = "s0_bench_workload_token";
	pid_t pid;
	char *url = start_server(dir, token, &pid);
	s0_client_options o = S0_CLIENT_OPTIONS_INIT;
	o.base_url = url;
	o.token = token;
	s0_client *c = NULL;
	CHECK(s0_client_new(&o, &c, &e_), "client");
	session(c, "served", pid, small, large, t, cpu, server_cpu);
	s0_client_free(c);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	rmrf(dir);
	free(dir);
	free(url);
}

/* ---- pause + resume with 1 MiB dirty: client waits vs the engine's own ---- */

static char *claim_dirty(s0_client *c, const char *data)
{
	s0_sandbox_info *sb = NULL;
	CHECK(s0_sandbox_claim(c, "default", NULL, NULL, &sb, &e_), "claim");
	char *id = strdup(s0_sandbox_info_id(sb));
	s0_sandbox_info_free(sb);
	CHECK(s0_files_write(c, id, "/workspace/dirty.bin", data, MiB, &e_), "write");
	return id;
}

static void pause_resume_pair(const char *data, double *client_ms, double *engine_ms)
{
	char *dir = mkscratch("pair");
	s0_local *l = open_local(dir);
	s0_client *c = NULL;
	CHECK(s0_client_new_local(l, NULL, &c, &e_), "client");
	s0__engine *e = s0__local_engine(l);
	double cm[REPS], em[REPS];
	s0_wait_options wo = S0_WAIT_OPTIONS_INIT;
	for (int r = 0; r < REPS; r++) {
		char *id = claim_dirty(c, data + r);
		double t0 = now_ms();
		CHECK(s0_sandbox_pause_and_wait(c, id, &wo, NULL, &e_), "pause_and_wait");
		CHECK(s0_sandbox_resume_and_wait(c, id, &wo, NULL, &e_), "resume_and_wait");
		cm[r] = now_ms() - t0;
		free(id);

		/* the same work called on the engine directly: the pause's intent,
		 * its transaction (run here; the controller may start it first),
		 * the synchronous resume */
		id = claim_dirty(c, data + r + 7);
		s0__pause_reply pr;
		s0__resume_reply rr;
		s0__op_row op;
		t0 = now_ms();
		CHECK(s0__engine_pause(e, "team_local", id, false, &pr, &e_), "engine pause");
		if (s0__meta_op_active(e->meta, id, &op, NULL) == S0_OK)
			s0__engine_run_pause(e, &op);
		CHECK(s0__engine_resume(e, "team_local", id, false, &rr, &e_), "engine resume");
		em[r] = now_ms() - t0;
		free(id);
	}
	*client_ms = median(cm, REPS);
	*engine_ms = median(em, REPS);
	s0_client_free(c);
	s0_local_close(l);
	rmrf(dir);
	free(dir);
}

int main(int argc, char **argv)
{
	scratch = argc > 1 ? argv[1] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char *small = malloc(SMALL_SIZE + SMALL_N), *large = malloc(LARGE_SIZE + LARGE_N + 16);
	for (size_t i = 0; i < SMALL_SIZE + SMALL_N; i++)
		small[i] = (char)('a' + i % 26);
	uint64_t x = 0x9E3779B97F4A7C15ull;
	for (size_t i = 0; i < LARGE_SIZE + LARGE_N + 16; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		large[i] = (char)x;
	}
	speeds sp;
	measure_speeds(&sp);
	double seal_ms = measure_seal_ms(small, large);
	double fl[ST_N], te[ST_N], ts[ST_N], ce[ST_N], cs[ST_N], sv[ST_N];
	floors(&sp, fl);
	run_embedded(small, large, te, ce);
	run_served(small, large, ts, cs, sv);
	double client_ms, engine_ms;
	pause_resume_pair(large, &client_ms, &engine_ms);

	printf("This machine, same run: fsync (4 KiB overwrite + fdatasync) %.2f ms; durable write %.0f MB/s;\n"
	       "page-cache write %.0f MB/s, read %.0f MB/s (scratch: %s)\n\n",
	       sp.fsync_ms, sp.durable_mbs, sp.cache_write_mbs, sp.cache_read_mbs, scratch);
	printf("| step | floor ms | embedded ms | x floor | embedded CPU ms | s0 serve ms | x floor "
	       "| client + server CPU ms |\n"
	       "|---|---|---|---|---|---|---|---|\n");
	double fsum = 0, esum = 0, ssum = 0, cesum = 0, cssum = 0, svsum = 0;
	for (int i = 0; i < ST_N; i++) {
		printf("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f + %.0f |\n", step_name[i],
		       fl[i], te[i], te[i] / fl[i], ce[i], ts[i], ts[i] / fl[i], cs[i], sv[i]);
		fsum += fl[i], esum += te[i], ssum += ts[i], cesum += ce[i], cssum += cs[i];
		svsum += sv[i];
	}
	printf("| **total** | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f | %.1f + %.0f |\n\n", fsum,
	       esum, esum / fsum, cesum, ssum, ssum / fsum, cssum, svsum);
	printf("Sealing the session's %.1f MiB (hash, compress, encrypt, one batch + sync) on one\n"
	       "thread, same run: %.1f ms (the CPU part of pause_and_wait the floor leaves out).\n\n",
	       (SMALL_N * (double)SMALL_SIZE + LARGE_N * (double)LARGE_SIZE) / MiB, seal_ms);
	printf("Embedded pause_and_wait + resume_and_wait, 1 MiB dirty (median of %d): %.1f ms;\n"
	       "the engine's own pause + resume of the same state, called directly: %.1f ms;\n"
	       "ratio %.2f (goal <= 1.5)\n",
	       REPS, client_ms, engine_ms, client_ms / engine_ms);
	free(small);
	free(large);
	return 0;
}
