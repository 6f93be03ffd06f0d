/*
 * bench_objects: pause with 16 MiB dirty and resume to the first read, end
 * to end through s0_local, on a local object store (SQLite metadata)
 * against an S3 bucket (SQLite or PostgreSQL metadata), as ratios measured
 * in one run. Not a test; built only (bench/objects/run.sh runs it).
 *
 *   bench_objects [--fast] [--reps N] [--base STORE] [--meta URL] S3_URL [DIR]
 *       S3_URL: s3://BUCKET?endpoint=… (credentials from AWS_ACCESS_KEY_ID /
 *       AWS_SECRET_ACCESS_KEY; the bench adds a prefix of its own);
 *       DIR: where data directories go (default $TMPDIR or /tmp);
 *       --base: the local object store to compare with ("pack", the
 *       default directory store, or "files");
 *       --meta: the S3 node's metadata store, a postgres:// URL in which
 *       "{rep}" is replaced by the repetition's number (one empty
 *       database per repetition); default SQLite.
 *
 * Per backend and repetition: claim, write 16 MiB of incompressible bytes
 * and one 4 KiB file, then time pause_and_wait (seal + upload + commit), and
 * resume_and_wait plus reading the 4 KiB file ("resume to first read").
 * For S3 the resume is timed twice: warm (the node that paused, its read
 * cache holding the objects) and cold (the node restarted with its cache
 * emptied, as a resume on another node: every object comes from the
 * bucket). Medians of the repetitions; goal: S3 / files <= 2 on loopback.
 * --fast: 4 MiB dirty and one repetition (a smoke run).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sandbox0/local.h>
#include <sandbox0/sandbox0.h>

static void die(const char *what, s0_error *err)
{
	fprintf(stderr, "bench_objects: %s: %s\n", what, err ? s0_error_message(err) : "failed");
	exit(1);
}

#define CALL(what, x)                                                                    \
	do {                                                                                 \
		s0_error *err_ = NULL;                                                           \
		if ((x) < 0)                                                                     \
			die(what, err_);                                                             \
	} while (0)

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef struct node {
	char *dir;
	const char *store;
	const char *meta; /* NULL: SQLite */
	s0_local *l;
	s0_client *c;
} node;

static void node_open(node *n)
{
	s0_local_options o = S0_LOCAL_OPTIONS_INIT;
	o.object_store = n->store;
	o.meta = n->meta;
	CALL("open", s0_local_open(n->dir, &o, &n->l, &err_));
	CALL("client", s0_client_new_local(n->l, NULL, &n->c, &err_));
}

static void node_close(node *n)
{
	s0_client_free(n->c);
	s0_local_close(n->l);
	n->c = NULL;
	n->l = NULL;
}

/* Empty the read cache and forget the pack catalog, as on a node that never
 * read this store. */
static void drop_cache(const node *n)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/objects/index.db", n->dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/objects/index.db-wal", n->dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/objects/index.db-shm", n->dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/objects/cache", n->dir);
	DIR *d = opendir(path);
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
}

static void rmrf(const char *dir)
{
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_objects: could not remove %s\n", dir);
}

static void pause_wait(s0_client *c, const char *id)
{
	s0_wait_options wo = S0_WAIT_OPTIONS_INIT;
	s0_sandbox_info *sb = NULL;
	CALL("pause", s0_sandbox_pause_and_wait(c, id, &wo, &sb, &err_));
	s0_sandbox_info_free(sb);
}

/* resume_and_wait + read of the 4 KiB file, in ms. */
static double resume_first_read(s0_client *c, const char *id)
{
	double t0 = now_ms();
	s0_wait_options wo = S0_WAIT_OPTIONS_INIT;
	s0_sandbox_info *sb = NULL;
	CALL("resume", s0_sandbox_resume_and_wait(c, id, &wo, &sb, &err_));
	s0_sandbox_info_free(sb);
	void *data = NULL;
	size_t len = 0;
	CALL("read", s0_files_read(c, id, "/workspace/first", &data, &len, &err_));
	double ms = now_ms() - t0;
	if (len != 4096)
		die("read length", NULL);
	s0_free(data);
	return ms;
}

/* One repetition on store: pause ms, warm resume ms, cold resume ms (s3). */
static void one(const char *base, const char *store, const char *meta, int rep, size_t dirty,
                double *pause_ms, double *warm_ms, double *cold_ms)
{
	node n = {0};
	char *meta_url = NULL;
	const char *tok = meta ? strstr(meta, "{rep}") : NULL;
	if (tok && asprintf(&meta_url, "%.*s%d%s", (int)(tok - meta), meta, rep, tok + 5) < 0)
		die("oom", NULL);
	n.meta = meta_url ? meta_url : meta;
	if (asprintf(&n.dir, "%s/bench-objects-%d-%d-%s", base, (int)getpid(), rep,
	             strncmp(store, "s3://", 5) ? store : "s3") < 0)
		die("oom", NULL);
	char *url = NULL;
	if (!strncmp(store, "s3://", 5)) { /* a prefix of its own per data dir */
		const char *q = strchr(store, '?');
		if (!q || asprintf(&url, "%.*s/bench-%d-%d%s", (int)(q - store), store, (int)getpid(),
		                   rep, q) < 0)
			die("S3 URL needs ?endpoint=", NULL);
		n.store = url;
	} else {
		n.store = store;
	}
	node_open(&n);
	s0_sandbox_info *sb = NULL;
	CALL("claim", s0_sandbox_claim(n.c, "default", NULL, NULL, &sb, &err_));
	char *id = strdup(s0_sandbox_info_id(sb));
	s0_sandbox_info_free(sb);
	unsigned char *buf = malloc(dirty);
	for (size_t i = 0; i < dirty; i++)
		buf[i] = (unsigned char)rand();
	CALL("write", s0_files_write(n.c, id, "/workspace/big", buf, dirty, &err_));
	CALL("write", s0_files_write(n.c, id, "/workspace/first", buf, 4096, &err_));
	double t0 = now_ms();
	pause_wait(n.c, id);
	*pause_ms = now_ms() - t0;
	*warm_ms = resume_first_read(n.c, id);
	*cold_ms = 0;
	if (url) {
		pause_wait(n.c, id);
		node_close(&n);
		drop_cache(&n);
		node_open(&n);
		*cold_ms = resume_first_read(n.c, id);
	}
	node_close(&n);
	rmrf(n.dir);
	free(buf);
	free(id);
	free(url);
	free(meta_url);
	free(n.dir);
}

int main(int argc, char **argv)
{
	bool fast = getenv("S0_BENCH_FAST") && *getenv("S0_BENCH_FAST") == '1';
	int reps = 5, ai = 1;
	const char *base_store = "pack", *meta = NULL;
	for (; ai < argc && !strncmp(argv[ai], "--", 2); ai++) {
		if (!strcmp(argv[ai], "--fast"))
			fast = true;
		else if (!strcmp(argv[ai], "--reps") && ai + 1 < argc)
			reps = atoi(argv[++ai]);
		else if (!strcmp(argv[ai], "--base") && ai + 1 < argc)
			base_store = argv[++ai];
		else if (!strcmp(argv[ai], "--meta") && ai + 1 < argc)
			meta = argv[++ai];
		else
			die("usage: bench_objects [--fast] [--reps N] [--base STORE] [--meta URL] S3_URL [DIR]", NULL);
	}
	if (ai >= argc)
		die("usage: bench_objects [--fast] [--reps N] [--base STORE] [--meta URL] S3_URL [DIR]", NULL);
	const char *s3 = argv[ai++];
	const char *base = ai < argc ? argv[ai] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	if (fast)
		reps = 1;
	if (reps < 1 || reps > 50)
		die("--reps is 1..50", NULL);
	size_t dirty = fast ? 4u << 20 : 16u << 20;
	double fp[50], fr[50], sp[50], sw[50], sc[50], unused;
	for (int r = 0; r < reps; r++) {
		one(base, base_store, NULL, r, dirty, &fp[r], &fr[r], &unused);
		one(base, s3, meta, r, dirty, &sp[r], &sw[r], &sc[r]);
	}
	double mfp = median(fp, reps), mfr = median(fr, reps), msp = median(sp, reps),
	       msw = median(sw, reps), msc = median(sc, reps);
	printf("pause with %zu MiB dirty, resume to first read (medians of %d, ms)\n", dirty >> 20,
	       reps);
	char lh[64], rh[64], rt[64];
	snprintf(lh, sizeof lh, "%s+sqlite", base_store);
	snprintf(rh, sizeof rh, "s3+%s", meta ? "postgres" : "sqlite");
	snprintf(rt, sizeof rt, "ratio");
	printf("%-34s %14s %14s %8s\n", "", lh, rh, rt);
	printf("%-34s %14.1f %14.1f %8.2f\n", "pause (seal+upload+commit)", mfp, msp, msp / mfp);
	printf("%-34s %14.1f %14.1f %8.2f\n", "resume to first read, same node", mfr, msw,
	       msw / mfr);
	printf("%-34s %14.1f %14.1f %8.2f\n", "resume to first read, cold cache", mfr, msc,
	       msc / mfr);
	printf("goal: ratio <= 2 on loopback: pause %s, resume %s, cold resume %s\n",
	       msp / mfp <= 2 ? "met" : "MISSED", msw / mfr <= 2 ? "met" : "MISSED",
	       msc / mfr <= 2 ? "met" : "MISSED");
	return 0;
}
