/*
 * bench_gvisor: the gvisor runtime under the lifecycle engine, measured as
 * ratios in one run, as root (docs/local-backend.md "Runtime gvisor").
 *
 *  1. Filesystem-only pause with 16 MiB dirty and resume to a first
 *     command, on a 1 GiB and a 16 GiB RootFS (the default template tree
 *     at that size). Goal: 16 GiB / 1 GiB <= 1.2 (flat in size).
 *  2. The pause against the same publish on the simulated runtime (16 MiB
 *     written through the files API, then a pause). Goal: gvisor - sim
 *     <= +150 ms.
 *  3. Resume to a first command against `runsc run` of /bin/true (and
 *     `run --detach` + `exec`, the driver's shape) on a plain loop mount of
 *     an ext4 image of the same tree and size (plain_runsc.sh). Goal <= 1.5x.
 *  4. Sequential and 4 KiB random I/O (io.py, timed inside) in a sandbox
 *     against the same inside runsc on that plain mount. Goal >= 0.7.
 * The root tree: $S0_GVISOR_TEMPLATE, else the python3 tree of
 * scripts/gvisor-python-tree.sh (io.py needs python3).
 * Sandboxes ask for 4 GiB (a 1024-millicore CPU lease: one core; the
 * default 512 MiB gets 150m, which throttles CPU-bound programs 7x).
 * Medians of N rounds (3; 1 with --fast; --rounds N), the three setups
 * interleaved. Prints a table; never a test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sandbox0/local.h"
#include "sandbox0/sandbox0.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void die(const char *what, int rc, s0_error *e)
{
	fprintf(stderr, "bench_gvisor: %s: %d %s\n", what, rc, e ? s0_error_message(e) : "");
	exit(1);
}

#define OK(what, call)                                                                        \
	do {                                                                                      \
		s0_error *e_ = NULL;                                                                  \
		int rc_ = (call);                                                                     \
		if (rc_ != S0_OK)                                                                     \
			die(what, rc_, e_);                                                               \
	} while (0)

#define MAX_ROUNDS 15

typedef struct run {
	double pause_ms, resume_ms;
} run;

/* The I/O of io.py: MB/s and IOPS. */
typedef struct io {
	double seq_w, seq_r, rand_r, rand_w;
} io;

static io io_parse(const char *line)
{
	io v = {0, 0, 0, 0};
	const char *p;
	if ((p = strstr(line, "seq_write_mbs=")))
		v.seq_w = atof(p + 14);
	if ((p = strstr(line, "seq_read_mbs=")))
		v.seq_r = atof(p + 13);
	if ((p = strstr(line, "rand_read_iops=")))
		v.rand_r = atof(p + 15);
	if ((p = strstr(line, "rand_write_iops=")))
		v.rand_w = atof(p + 16);
	return v;
}

static io sandbox_io; /* io.py inside the last 1 GiB gvisor sandbox measured */
static const char *tree_dir; /* the root tree of the templates */

/* io.py, read from the source tree (BENCH_GVISOR_DIR), malloc'd. */
static char *read_io_py(size_t *len)
{
	FILE *f = fopen(BENCH_GVISOR_DIR "/io.py", "rb");
	if (!f)
		die("open io.py", -1, NULL);
	char *buf = malloc(1 << 16);
	*len = fread(buf, 1, (1 << 16) - 1, f);
	fclose(f);
	return buf;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	return v[n / 2];
}

/* One round on a fresh data directory: claim, 16 MiB dirty, pause, resume
 * with a first command. */
static run round_once(const char *runtime, uint64_t size)
{
	char dir[] = "/tmp/s0-bench-gv.XXXXXX";
	if (!mkdtemp(dir))
		die("mkdtemp", -1, NULL);
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.runtime = runtime;
	s0_local *l = NULL;
	s0_client *c = NULL;
	s0_error *e = NULL;
	int rc = s0_local_open(dir, &o, &l, &e);
	if (rc != S0_OK)
		die("open", rc, e);
	OK("client", s0_client_new_local(l, NULL, &c, &e_));
	s0_template_options to = S0_TEMPLATE_OPTIONS_INIT;
	to.size_bytes = size;
	/* the default template's tree (gvisor: the driver's busybox tree), at this size */
	const char *tree = NULL; /* sim: the standard empty tree */
	if (!strcmp(runtime, "gvisor"))
		tree = tree_dir;
	OK("template", s0_local_template_build(l, "bench", tree, &to, &e_));
	s0_sandbox_info *sb = NULL;
	/* 4 GiB: a lease of 1024 millicores (one core, as the reference has
	 * for its one-threaded programs) instead of the default 150m quota */
	s0_sandbox_config cfg = S0_SANDBOX_CONFIG_INIT;
	cfg.memory = "4Gi";
	OK("claim", s0_sandbox_claim(c, "bench", NULL, &cfg, &sb, &e_));
	char id[128];
	snprintf(id, sizeof id, "%s", s0_sandbox_info_id(sb));
	s0_sandbox_info_free(sb);
	if (!strcmp(runtime, "gvisor")) {
		char *out = NULL;
		OK("ctx", s0_context_create(c, id,
		                            "{\"type\":\"cmd\",\"cmd\":{\"command\":[\"/bin/sh\",\"-c\","
		                            "\"dd if=/dev/urandom of=/root/dirty bs=1M count=16 "
		                            "2>/dev/null\"]},\"wait_until_done\":true}",
		                            &out, &e_));
		s0_free(out);
	} else {
		size_t n = 16u << 20;
		char *buf = malloc(n);
		for (size_t i = 0; i < n; i++)
			buf[i] = (char)(rand() & 0xff);
		OK("write", s0_files_write(c, id, "/root/dirty", buf, n, &e_));
		free(buf);
	}
	run r;
	double t0 = now_ms();
	s0_sandbox_info *p = NULL;
	OK("pause", s0_sandbox_pause_and_wait(c, id, NULL, &p, &e_));
	s0_sandbox_info_free(p);
	r.pause_ms = now_ms() - t0;
	t0 = now_ms();
	OK("resume", s0_sandbox_resume_and_wait(c, id, NULL, &p, &e_));
	s0_sandbox_info_free(p);
	char *out = NULL;
	OK("first command",
	   s0_context_create(c, id,
	                     "{\"type\":\"cmd\",\"cmd\":{\"command\":[\"/bin/true\"]},"
	                     "\"wait_until_done\":true}",
	                     &out, &e_));
	s0_free(out);
	r.resume_ms = now_ms() - t0;
	if (!strcmp(runtime, "gvisor") && size == 1ull << 30) { /* I/O inside, on the carrier */
		size_t len;
		char *py = read_io_py(&len);
		OK("write io.py", s0_files_write(c, id, "/root/io.py", py, len, &e_));
		free(py);
		OK("io.py", s0_context_create(c, id,
		                              "{\"type\":\"cmd\",\"cmd\":{\"command\":[\"python3\","
		                              "\"/root/io.py\",\"/root/io.dat\",\"64\"]},"
		                              "\"wait_until_done\":true}",
		                              &out, &e_));
		sandbox_io = io_parse(out);
		if (sandbox_io.seq_w <= 0)
			fprintf(stderr, "bench_gvisor: io.py answered %s\n", out);
		s0_free(out);
	}
	s0_client_free(c);
	s0_local_close(l);
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_gvisor: cannot remove %s\n", dir);
	return r;
}

/* Rounds of gvisor 1 GiB, gvisor 16 GiB and sim 1 GiB, interleaved (the
 * load of a shared machine drifts); medians into g1, g16, s1. */
static void measure(int n, run *g1, run *g16, run *s1)
{
	double p[3][MAX_ROUNDS], q[3][MAX_ROUNDS];
	const char *rt[3] = {"gvisor", "gvisor", "sim"};
	const uint64_t size[3] = {1ull << 30, 16ull << 30, 1ull << 30};
	for (int i = 0; i < n; i++)
		for (int k = 0; k < 3; k++) {
			run r = round_once(rt[k], size[k]);
			p[k][i] = r.pause_ms;
			q[k][i] = r.resume_ms;
		}
	run *out[3] = {g1, g16, s1};
	for (int k = 0; k < 3; k++)
		*out[k] = (run){median(p[k], n), median(q[k], n)};
}

/* plain_runsc.sh's key=value output for the tree at @p size, @p rounds. */
static char *plain_runsc(uint64_t size, int rounds)
{
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "%s/plain_runsc.sh '%s' %llu %d", BENCH_GVISOR_DIR, tree_dir,
	         (unsigned long long)size, rounds);
	FILE *p = popen(cmd, "r");
	if (!p)
		die("plain_runsc.sh", -1, NULL);
	char *buf = calloc(1, 8192);
	size_t n = fread(buf, 1, 8191, p);
	buf[n] = 0;
	if (pclose(p) != 0)
		die("plain_runsc.sh failed", -1, NULL);
	return buf;
}

static double key_ms(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	return p ? atof(p + strlen(key)) : 0;
}

int main(int argc, char **argv)
{
	int n = 3;
	if (argc > 1 && !strcmp(argv[1], "--fast"))
		n = 1;
	else if (argc > 2 && !strcmp(argv[1], "--rounds"))
		n = atoi(argv[2]);
	if (n < 1 || n > MAX_ROUNDS) {
		fprintf(stderr, "usage: bench_gvisor [--fast | --rounds 1..%d]\n", MAX_ROUNDS);
		return 2;
	}
	uint64_t gib = 1ull << 30;
	tree_dir = getenv("S0_GVISOR_TEMPLATE");
	if (!tree_dir) {
		tree_dir = "/var/cache/libsandbox0/trees/python3";
		setenv("S0_GVISOR_TEMPLATE", tree_dir, 1);
	}
	if (access(tree_dir, R_OK) != 0) {
		fprintf(stderr, "bench_gvisor: no root tree %s (scripts/gvisor-python-tree.sh %s)\n",
		        tree_dir, tree_dir);
		return 1;
	}
	run g1, g16, s1;
	measure(n, &g1, &g16, &s1);
	char *plain = plain_runsc(gib, n);
	double run_true = key_ms(plain, "run_true_ms="), detach_exec = key_ms(plain, "detach_exec_ms=");
	double del = key_ms(plain, "delete_ms="), unmount = key_ms(plain, "unmount_ms=");
	const char *iol = strstr(plain, "io ");
	io pio = io_parse(iol ? iol : "");
	printf("root tree %s; medians of %d\n", tree_dir, n);
	printf("%-40s %10s %10s %8s %s\n", "measure", "1 GiB", "16 GiB", "ratio", "goal");
	printf("%-40s %8.0f ms %7.0f ms %8.2f %s\n", "gvisor pause, 16 MiB dirty", g1.pause_ms,
	       g16.pause_ms, g16.pause_ms / g1.pause_ms, "<= 1.2");
	printf("%-40s %8.0f ms %7.0f ms %8.2f %s\n", "gvisor resume to a first command",
	       g1.resume_ms, g16.resume_ms, g16.resume_ms / g1.resume_ms, "<= 1.2");
	printf("%-40s %8.0f ms %10s %+7.0f ms %s\n", "sim pause, same 16 MiB publish", s1.pause_ms,
	       "", g1.pause_ms - s1.pause_ms, "gvisor - sim <= +150 ms");
	printf("%-40s %8.0f ms\n", "sim resume to a first command", s1.resume_ms);
	printf("\nreference: the same runsc on a plain loop mount (direct I/O) of the same tree, 1 GiB\n");
	printf("%-40s %8.0f ms %10s %8.2f %s\n", "runsc run /bin/true", run_true, "",
	       g1.resume_ms / run_true, "resume / this <= 1.5");
	printf("%-40s %8.0f ms %10s %8.2f\n", "runsc run --detach + exec /bin/true", detach_exec, "",
	       g1.resume_ms / detach_exec);
	printf("%-40s %8.0f ms   (the floor of what a real stop adds to a pause)\n",
	       "runsc delete --force + sync/umount/loop", del + unmount);
	printf("\nI/O inside (io.py, 64 MiB file)   %10s %10s %8s %s\n", "sandbox", "plain", "ratio",
	       "goal >= 0.7");
	printf("%-32s %8.0f MB/s %5.0f MB/s %8.2f\n", "sequential write 1 MiB + fsync",
	       sandbox_io.seq_w, pio.seq_w, sandbox_io.seq_w / pio.seq_w);
	printf("%-32s %8.0f MB/s %5.0f MB/s %8.2f\n", "sequential read 1 MiB", sandbox_io.seq_r,
	       pio.seq_r, sandbox_io.seq_r / pio.seq_r);
	printf("%-32s %8.0f IOPS %5.0f IOPS %8.2f\n", "random read 4 KiB", sandbox_io.rand_r,
	       pio.rand_r, sandbox_io.rand_r / pio.rand_r);
	printf("%-32s %8.0f IOPS %5.0f IOPS %8.2f\n", "random write 4 KiB + fdatasync",
	       sandbox_io.rand_w, pio.rand_w, sandbox_io.rand_w / pio.rand_w);
	free(plain);
	return 0;
}
