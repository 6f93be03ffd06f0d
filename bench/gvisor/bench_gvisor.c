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
 * Medians of N rounds (3; 1 with --fast). Prints a table; never a test.
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

typedef struct run {
	double pause_ms, resume_ms;
} run;

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
	char treepath[600];
	snprintf(treepath, sizeof treepath, "%s/gvisor/template", dir);
	if (!strcmp(runtime, "gvisor"))
		tree = treepath;
	OK("template", s0_local_template_build(l, "bench", tree, &to, &e_));
	s0_sandbox_info *sb = NULL;
	OK("claim", s0_sandbox_claim(c, "bench", NULL, NULL, &sb, &e_));
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
	s0_client_free(c);
	s0_local_close(l);
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_gvisor: cannot remove %s\n", dir);
	return r;
}

static run measure(const char *runtime, uint64_t size, int n)
{
	double p[8], q[8];
	for (int i = 0; i < n; i++) {
		run r = round_once(runtime, size);
		p[i] = r.pause_ms;
		q[i] = r.resume_ms;
	}
	return (run){median(p, n), median(q, n)};
}

int main(int argc, char **argv)
{
	int n = argc > 1 && !strcmp(argv[1], "--fast") ? 1 : 3;
	uint64_t gib = 1ull << 30;
	run g1 = measure("gvisor", gib, n), g16 = measure("gvisor", 16 * gib, n);
	run s1 = measure("sim", gib, n);
	printf("%-34s %10s %10s %8s %s\n", "measure", "1 GiB", "16 GiB", "ratio", "goal");
	printf("%-34s %8.0f ms %7.0f ms %8.2f %s\n", "gvisor pause, 16 MiB dirty", g1.pause_ms,
	       g16.pause_ms, g16.pause_ms / g1.pause_ms, "<= 1.2");
	printf("%-34s %8.0f ms %7.0f ms %8.2f %s\n", "gvisor resume to a first command",
	       g1.resume_ms, g16.resume_ms, g16.resume_ms / g1.resume_ms, "<= 1.2");
	printf("%-34s %8.0f ms %10s %+7.0f ms %s\n", "sim pause, same 16 MiB publish", s1.pause_ms,
	       "", g1.pause_ms - s1.pause_ms, "gvisor - sim <= +150 ms");
	printf("%-34s %8.0f ms\n", "sim resume to a first command", s1.resume_ms);
	return 0;
}
