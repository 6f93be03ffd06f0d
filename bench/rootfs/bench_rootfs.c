/*
 * RootFS benchmark (one run, ratios): write and read throughput through
 * the files API for 1 MiB and 4 KiB files against the same bytes written
 * and read with plain pwrite/pread on a raw image file, and the 64 KiB
 * chunks one small-file commit dirties (raw, after write elision, and as
 * published by the real block store).
 *
 * Usage: bench_rootfs [scratch-dir]   (default $TMPDIR or /tmp)
 *        BENCH_ROOTFS_ONLY=4096x4096 bench_rootfs   (one block-store run, for perf)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "local/blocks/bstore.h"
#include "local/rootfs/files.h"
#include "local/rootfs/rootfs.h"
#include "local/rootfs/template.h"
#include "testdev.h"

#define MiB (1024ull * 1024)
#define VOL (512 * MiB)
#define RUNS 5

static const char *scratch;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, s0_error *e)
{
	fprintf(stderr, "bench_rootfs: %s: %s\n", what, e ? s0_error_message(e) : "failed");
	exit(1);
}

static void fill(char *buf, size_t n, unsigned seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (char)x;
	}
}

/* A fresh template filesystem on @p dev. */
static s0__rootfs *fresh_fs(s0__blockdev *dev)
{
	s0__rootfs_image_opts o = {.size_bytes = s0__blockdev_size(dev)};
	s0_error *e = NULL;
	if (s0__rootfs_template_build(&o, scratch, dev, NULL, &e) < 0)
		die("template", e);
	s0__rootfs *fs = NULL;
	if (s0__rootfs_open(dev, 0, &fs, &e) < 0)
		die("open", e);
	return fs;
}

/* MB/s by wall time, and by this process's CPU time (user + system: the
 * benchmark is single-threaded), which other load on the machine moves
 * much less than wall time. */
typedef struct result {
	double write_mbs, read_mbs;
	double write_cpu_mbs, read_cpu_mbs;
} result;

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void path_of(char *p, size_t n, int i)
{
	snprintf(p, n, "/workspace/d%03d/f%05d", i / 100, i);
}

/* n files of size bytes through the files API on @p dev. */
static result run_api(s0__blockdev *dev, int n, size_t size, const char *data)
{
	s0__rootfs *fs = fresh_fs(dev);
	char p[64];
	s0_error *e = NULL;
	double t0 = now_s(), c0 = cpu_s();
	for (int i = 0; i < n; i++) {
		path_of(p, sizeof p, i);
		if (s0__rootfs_write(fs, p, strlen(p), data + (size_t)(i % 64), size, NULL, &e) < 0)
			die("write", e);
	}
	if (s0__rootfs_flush(fs, &e) < 0)
		die("flush", e);
	double t1 = now_s(), c1 = cpu_s();
	for (int i = 0; i < n; i++) {
		void *d = NULL;
		size_t got;
		path_of(p, sizeof p, i);
		if (s0__rootfs_read(fs, p, strlen(p), 0, -1, NULL, &d, &got, &e) < 0 || got != size)
			die("read", e);
		free(d);
	}
	double t2 = now_s(), c2 = cpu_s();
	s0__rootfs_close(fs, NULL);
	double mb = (double)n * (double)size / (double)MiB;
	return (result){mb / (t1 - t0), mb / (t2 - t1), mb / (c1 - c0), mb / (c2 - c1)};
}

/* The same bytes with pwrite/pread at consecutive offsets of a raw file. */
static result run_raw(int n, size_t size, const char *data)
{
	char *path = s0__asprintf("%s/bench-raw.img", scratch);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)VOL) < 0)
		die("raw image", NULL);
	char *buf = malloc(size);
	double t0 = now_s(), c0 = cpu_s();
	for (int i = 0; i < n; i++)
		if (pwrite(fd, data + (size_t)(i % 64), size, (off_t)((uint64_t)i * size)) != (ssize_t)size)
			die("pwrite", NULL);
	double t1 = now_s(), c1 = cpu_s();
	for (int i = 0; i < n; i++)
		if (pread(fd, buf, size, (off_t)((uint64_t)i * size)) != (ssize_t)size)
			die("pread", NULL);
	double t2 = now_s(), c2 = cpu_s();
	close(fd);
	unlink(path);
	free(path);
	free(buf);
	double mb = (double)n * (double)size / (double)MiB;
	return (result){mb / (t1 - t0), mb / (t2 - t1), mb / (c1 - c0), mb / (c2 - c1)};
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v)
{
	qsort(v, RUNS, sizeof *v, cmp_d);
	return v[RUNS / 2];
}

enum { MEM, FILEDEV, BSTORE, RAW };

/* A block store in a scratch directory with one fresh volume attached as a
 * branch: the device a sandbox's RootFS really runs on. */
typedef struct bsenv {
	char *dir;
	s0__objstore *os;
	s0__bstore *bs;
	s0__branch *b;
	s0__blockdev dev;
} bsenv;

static void bsenv_open(bsenv *x)
{
	x->dir = s0__asprintf("%s/bench-rootfs-XXXXXX", scratch);
	if (!mkdtemp(x->dir))
		die("mkdtemp", NULL);
	char *objdir = s0__asprintf("%s/objects", x->dir);
	uint8_t key[32] = {1};
	s0__bstore_options o = {.chunk_bytes = 64 * 1024, .scratch_dir = x->dir};
	s0_error *e = NULL;
	s0__genid head;
	if (s0__objstore_open_dir(objdir, key, NULL, &x->os, &e) < 0 ||
	    s0__bstore_open(x->os, &o, &x->bs, &e) < 0 || s0__bstore_create(x->bs, VOL, &head, &e) < 0 ||
	    s0__bstore_attach(x->bs, &head, &x->b, &e) < 0)
		die("block store", e);
	s0__branch_blockdev(x->b, &x->dev);
	free(objdir);
}

static void bsenv_close(bsenv *x)
{
	s0__branch_free(x->b);
	s0__bstore_close(x->bs);
	s0__objstore_free(x->os);
	char *cmd = s0__asprintf("rm -rf '%s'", x->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_rootfs: could not remove %s\n", x->dir);
	free(cmd);
	free(x->dir);
}

static result measure(int kind, int n, size_t size, const char *data)
{
	double w[RUNS], r[RUNS], wc[RUNS], rc[RUNS];
	for (int k = 0; k < RUNS; k++) {
		result x;
		if (kind == RAW) {
			x = run_raw(n, size, data);
		} else if (kind == BSTORE) {
			bsenv b;
			bsenv_open(&b);
			x = run_api(&b.dev, n, size, data);
			bsenv_close(&b);
		} else if (kind == MEM) {
			s0__blockdev dev;
			td_new(VOL, &dev);
			x = run_api(&dev, n, size, data);
			td_free(&dev);
		} else {
			char *img = s0__asprintf("%s/bench-fs.img", scratch);
			int fd = open(img, O_RDWR | O_CREAT | O_TRUNC, 0644);
			if (fd < 0 || ftruncate(fd, (off_t)VOL) < 0)
				die("image", NULL);
			close(fd);
			s0__blockdev dev;
			s0_error *e = NULL;
			if (s0__filedev_open(img, false, &dev, &e) < 0)
				die("filedev", e);
			x = run_api(&dev, n, size, data);
			s0__filedev_close(&dev);
			unlink(img);
			free(img);
		}
		w[k] = x.write_mbs;
		r[k] = x.read_mbs;
		wc[k] = x.write_cpu_mbs;
		rc[k] = x.read_cpu_mbs;
	}
	return (result){median(w), median(r), median(wc), median(rc)};
}

static void throughput_table(void)
{
	char *data = malloc(MiB + 64);
	fill(data, MiB + 64, 7);
	const struct {
		const char *name;
		int n;
		size_t size;
	} w[] = {{"1 MiB files x 64", 64, MiB}, {"4 KiB files x 4096", 4096, 4096}};
	double cpu[2][2], cpu_abs[2][4];
	printf("Throughput, MB/s (median of %d runs; files API = s0__rootfs_write/read,\n"
	       "raw = pwrite/pread of the same bytes at consecutive offsets of an image file)\n\n",
	       RUNS);
	printf("| workload | op | files API, memory dev | files API, image file "
	       "| files API, block store | raw pwrite/pread | API(mem)/raw | API(file)/raw "
	       "| API(block store)/raw |\n|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < 2; i++) {
		result m = measure(MEM, w[i].n, w[i].size, data);
		result f = measure(FILEDEV, w[i].n, w[i].size, data);
		result b = measure(BSTORE, w[i].n, w[i].size, data);
		result r = measure(RAW, w[i].n, w[i].size, data);
		printf("| %s | write | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f | %.2f |\n", w[i].name,
		       m.write_mbs, f.write_mbs, b.write_mbs, r.write_mbs, m.write_mbs / r.write_mbs,
		       f.write_mbs / r.write_mbs, b.write_mbs / r.write_mbs);
		printf("| %s | read | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f | %.2f |\n", w[i].name,
		       m.read_mbs, f.read_mbs, b.read_mbs, r.read_mbs, m.read_mbs / r.read_mbs,
		       f.read_mbs / r.read_mbs, b.read_mbs / r.read_mbs);
		cpu[i][0] = b.write_cpu_mbs / r.write_cpu_mbs;
		cpu[i][1] = b.read_cpu_mbs / r.read_cpu_mbs;
		cpu_abs[i][0] = b.write_cpu_mbs, cpu_abs[i][1] = b.read_cpu_mbs;
		cpu_abs[i][2] = r.write_cpu_mbs, cpu_abs[i][3] = r.read_cpu_mbs;
	}
	printf("\nThe same by CPU time (MB per CPU-second of this process; load moves it less):\n\n"
	       "| workload | op | files API, block store | raw pwrite/pread | ratio | goal |\n"
	       "|---|---|---|---|---|---|\n");
	const char *goal[2][2] = {{">= 0.5", ">= 0.8"}, {">= 0.3", ">= 0.3"}};
	for (size_t i = 0; i < 2; i++)
		for (int op = 0; op < 2; op++)
			printf("| %s | %s | %.0f | %.0f | %.2f | %s |\n", w[i].name, op ? "read" : "write",
			       cpu_abs[i][op], cpu_abs[i][2 + op], cpu[i][op], goal[i][op]);
	free(data);
}

/* Chunks one small-file commit touches on the in-memory device. */
static void chunks_testdev(size_t size, int files, double *dirty, double *changed)
{
	s0__blockdev dev;
	td_new(VOL, &dev);
	s0__rootfs *fs = fresh_fs(&dev);
	char *data = malloc(size);
	fill(data, size, 3);
	uint64_t d = 0, c = 0;
	char p[64];
	for (int i = 0; i < files; i++) {
		s0__rootfs_flush(fs, NULL);
		td_mark(&dev);
		path_of(p, sizeof p, i);
		if (s0__rootfs_write(fs, p, strlen(p), data, size, NULL, NULL) < 0 ||
		    s0__rootfs_flush(fs, NULL) < 0)
			die("small write", NULL);
		d += td_dirty_chunks(&dev);
		c += td_changed_chunks(&dev);
	}
	*dirty = (double)d / files;
	*changed = (double)c / files;
	s0__rootfs_close(fs, NULL);
	td_free(&dev);
	free(data);
}

/* Chunks the block store publishes for one small-file commit. */
static double chunks_published(size_t size, int files)
{
	char *dir = s0__asprintf("%s/bench-rootfs-XXXXXX", scratch);
	if (!mkdtemp(dir))
		die("mkdtemp", NULL);
	char *objdir = s0__asprintf("%s/objects", dir);
	uint8_t key[32] = {1};
	s0__objstore *os = NULL;
	s0__bstore *bs = NULL;
	s0__bstore_options o = {.chunk_bytes = 64 * 1024, .scratch_dir = dir};
	s0_error *e = NULL;
	if (s0__objstore_open_dir(objdir, key, NULL, &os, &e) < 0 ||
	    s0__bstore_open(os, &o, &bs, &e) < 0)
		die("block store", e);
	s0__genid head, next;
	s0__branch *b = NULL;
	s0__blockdev dev;
	if (s0__bstore_create(bs, VOL, &head, &e) < 0 || s0__bstore_attach(bs, &head, &b, &e) < 0)
		die("volume", e);
	s0__branch_blockdev(b, &dev);
	s0__rootfs *fs = fresh_fs(&dev);
	s0__rootfs_discard(fs);
	if (s0__branch_publish(b, 0, &next, &e) < 0)
		die("publish", e);
	s0__branch_free(b);
	head = next;
	char *data = malloc(size);
	fill(data, size, 5);
	uint64_t total = 0;
	char p[64];
	for (int i = 0; i < files; i++) {
		if (s0__bstore_attach(bs, &head, &b, &e) < 0)
			die("attach", e);
		s0__branch_blockdev(b, &dev);
		if (s0__rootfs_open(&dev, 0, &fs, &e) < 0)
			die("open", e);
		path_of(p, sizeof p, i);
		if (s0__rootfs_write(fs, p, strlen(p), data, size, NULL, &e) < 0 ||
		    s0__rootfs_flush(fs, &e) < 0 || s0__branch_publish(b, 0, &next, &e) < 0)
			die("commit", e);
		s0__branch_counters bc;
		s0__branch_counters_get(b, &bc);
		total += bc.published_chunks;
		s0__rootfs_discard(fs);
		s0__branch_free(b);
		head = next;
	}
	s0__bstore_close(bs);
	s0__objstore_free(os);
	free(data);
	char *cmd = s0__asprintf("rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_rootfs: could not remove %s\n", dir);
	free(cmd);
	free(objdir);
	free(dir);
	return (double)total / files;
}

static void chunks_table(void)
{
	printf("\n64 KiB chunks per commit of ONE new small file (flush after each file;\n"
	       "fresh %llu MiB filesystem, average over 50 commits)\n\n",
	       (unsigned long long)(VOL / MiB));
	printf("| file | chunks written to the device | chunks whose bytes changed "
	       "| chunks published by the block store |\n|---|---|---|---|\n");
	const size_t sizes[] = {1024, 4096};
	for (size_t i = 0; i < 2; i++) {
		double d, c;
		chunks_testdev(sizes[i], 50, &d, &c);
		double pub = chunks_published(sizes[i], 50);
		printf("| %zu B | %.2f | %.2f | %.2f |\n", sizes[i], d, c, pub);
	}
}

/* BENCH_ROOTFS_ONLY=<files>x<bytes> (e.g. 4096x4096): one block-store run
 * of that workload and nothing else, for `perf record`. */
static bool only(void)
{
	const char *o = getenv("BENCH_ROOTFS_ONLY");
	int n = 0;
	size_t size = 0;
	if (!o || sscanf(o, "%dx%zu", &n, &size) != 2 || n <= 0 || size == 0 || size > MiB)
		return false;
	char *data = malloc(MiB + 64);
	fill(data, MiB + 64, 7);
	bsenv b;
	bsenv_open(&b);
	result x = run_api(&b.dev, n, size, data);
	bsenv_close(&b);
	printf("block store, %d files of %zu bytes: write %.0f MB/s, read %.0f MB/s\n", n, size,
	       x.write_mbs, x.read_mbs);
	free(data);
	return true;
}

int main(int argc, char **argv)
{
	scratch = argc > 1 ? argv[1] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	if (only())
		return 0;
	throughput_table();
	chunks_table();
	return 0;
}
