/*
 * bench_carrier [--fast]: the carrier (local/runtime/carrier/carrier.h)
 * measured as ratios in one run, as root.
 *
 *  1. I/O inside the mounted ext4: sequential write (1 MiB O_DIRECT blocks,
 *     then fsync) and read, 4 KiB random reads and writes (O_DIRECT, then
 *     fdatasync), through a carrier on a block-store branch and through a
 *     plain loop mount (direct I/O) of the same image exported to a file.
 *     Each workload runs in a forked child inside the mount's namespace.
 *     Goal: carrier / plain >= 0.7.
 *  2. attach and detach time of a fresh branch of 1 GiB and 16 GiB
 *     templates (median of N). Goal: flat in size.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "local/blocks/bstore.h"
#include "local/objects/backends.h"
#include "local/objects/objstore.h"
#include "local/rootfs/template.h"
#include "local/runtime/carrier/carrier.h"
#include "local/runtime/carrier/carrier_int.h"

#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)

static bool fast;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void die(const char *what, s0_error *e)
{
	fprintf(stderr, "bench_carrier: %s: %s\n", what, e ? s0_error_message(e) : strerror(errno));
	exit(1);
}

typedef struct results {
	double seq_write_mbs, seq_read_mbs, rand_read_iops, rand_write_iops;
} results;

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
	return *s;
}

/* The workload, in dir (inside the mount). Exits non-zero on failure. */
static int workload(const char *dir, results *r)
{
	uint64_t file = fast ? 64 * MIB : 256 * MIB;
	int ops = fast ? 2000 : 8192;
	char path[4400];
	snprintf(path, sizeof path, "%s/bench.bin", dir);
	void *buf;
	if (posix_memalign(&buf, 4096, MIB) != 0)
		return 1;
	for (size_t i = 0; i < MIB; i++)
		((uint8_t *)buf)[i] = (uint8_t)(i * 131 + (i >> 12));
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0644);
	if (fd < 0)
		return 2;
	double t0 = now_ms();
	for (uint64_t off = 0; off < file; off += MIB)
		if (pwrite(fd, buf, MIB, (off_t)off) != (ssize_t)MIB)
			return 3;
	fsync(fd);
	double t1 = now_ms();
	r->seq_write_mbs = (double)file / MIB / ((t1 - t0) / 1e3);
	t0 = now_ms();
	for (uint64_t off = 0; off < file; off += MIB)
		if (pread(fd, buf, MIB, (off_t)off) != (ssize_t)MIB)
			return 4;
	t1 = now_ms();
	r->seq_read_mbs = (double)file / MIB / ((t1 - t0) / 1e3);
	uint64_t s = 0x1234567;
	uint64_t blocks = file / 4096;
	t0 = now_ms();
	for (int i = 0; i < ops; i++)
		if (pread(fd, buf, 4096, (off_t)(rnd(&s) % blocks * 4096)) != 4096)
			return 5;
	t1 = now_ms();
	r->rand_read_iops = ops / ((t1 - t0) / 1e3);
	t0 = now_ms();
	for (int i = 0; i < ops; i++)
		if (pwrite(fd, buf, 4096, (off_t)(rnd(&s) % blocks * 4096)) != 4096)
			return 6;
	fdatasync(fd);
	t1 = now_ms();
	r->rand_write_iops = ops / ((t1 - t0) / 1e3);
	close(fd);
	unlink(path);
	free(buf);
	return 0;
}

/* Run the workload in a child: enter the carrier's namespace, or (c NULL)
 * mount image_path on a plain loop device in a new private namespace. */
static int run_child(const s0__carrier *c, const char *image_path, const char *mnt, results *r)
{
	int p[2];
	if (pipe(p) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		results res;
		const char *dir = mnt;
		if (c) {
			if (s0__carrier_enter(c) != 0)
				_exit(10);
		} else {
			if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
				_exit(11);
			int f = open(image_path, O_RDWR | O_CLOEXEC);
			int idx, lfd;
			bool dio;
			char msg[256];
			if (f < 0 || s0__loop_attach(f, "s0-bench-plain", &idx, &lfd, &dio, msg, sizeof msg) != 0)
				_exit(12);
			close(f);
			char dev[32];
			snprintf(dev, sizeof dev, "/dev/loop%d", idx);
			if (mount(dev, mnt, "ext4", MS_NOSUID | MS_NODEV, "errors=remount-ro") != 0)
				_exit(13);
			close(lfd);
		}
		char wdir[4200];
		snprintf(wdir, sizeof wdir, "%s/workspace", dir);
		int rc = workload(wdir, &res);
		if (!c)
			umount2(mnt, 0); /* the loop device autoclears on this last close */
		if (rc == 0 && write(p[1], &res, sizeof res) != (ssize_t)sizeof res)
			rc = 20;
		_exit(rc);
	}
	close(p[1]);
	ssize_t n = read(p[0], r, sizeof *r);
	close(p[0]);
	int st;
	waitpid(pid, &st, 0);
	if (n != (ssize_t)sizeof *r) {
		fprintf(stderr, "bench_carrier: workload child failed (status %d)\n",
		        WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return -1;
	}
	return 0;
}

static void template(s0__bstore *bs, const char *dir, uint64_t size, s0__genid *gen)
{
	s0_error *e = NULL;
	s0__genid empty;
	s0__branch *b = NULL;
	if (s0__bstore_create(bs, size, &empty, &e) != S0_OK ||
	    s0__bstore_attach(bs, &empty, &b, &e) != S0_OK)
		die("template volume", e);
	s0__bstore_unref(bs, &empty);
	s0__blockdev dev;
	s0__branch_blockdev(b, &dev);
	s0__rootfs_image_opts io = {0};
	io.size_bytes = size;
	if (s0__rootfs_template_build(&io, dir, &dev, NULL, &e) != S0_OK ||
	    s0__branch_publish(b, 0, gen, &e) != S0_OK)
		die("template", e);
	s0__branch_free(b);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	fast = argc > 1 && strcmp(argv[1], "--fast") == 0;
	s0_error *e = NULL;
	if (s0__carrier_probe(&e) != S0_OK)
		die("probe", e);
	char dir[] = "/tmp/s0-bench-carrier-XXXXXX";
	if (!mkdtemp(dir))
		die("mkdtemp", NULL);
	char objdir[256], state[256], image[256], mnt[256];
	snprintf(objdir, sizeof objdir, "%s/objects", dir);
	snprintf(state, sizeof state, "%s/state", dir);
	snprintf(image, sizeof image, "%s/plain.img", dir);
	snprintf(mnt, sizeof mnt, "%s/plain", dir);
	mkdir(mnt, 0755);
	uint8_t key[32];
	memset(key, 7, sizeof key);
	s0__objstore *os = NULL;
	s0__bstore *bs = NULL;
	s0__bstore_options bo = {0};
	bo.scratch_dir = dir;
	if (s0__objstore_open_backend("pack", objdir, key, NULL, &os, &e) != S0_OK ||
	    s0__bstore_open(os, &bo, &bs, &e) != S0_OK)
		die("store", e);

	uint64_t sizes[2] = {1 * GIB, 16 * GIB};
	s0__genid gens[2];
	for (int i = 0; i < 2; i++) {
		double t0 = now_ms();
		template(bs, dir, sizes[i], &gens[i]);
		printf("template %2llu GiB built and imported in %.0f ms\n",
		       (unsigned long long)(sizes[i] / GIB), now_ms() - t0);
	}

	/* 1. I/O: carrier vs plain loop on the same 1 GiB image. */
	s0__branch *b = NULL;
	if (s0__bstore_attach(bs, &gens[0], &b, &e) != S0_OK)
		die("attach branch", e);
	s0__blockdev dev;
	s0__branch_blockdev(b, &dev);
	if (s0__rootfs_image_export(&dev, image, NULL, &e) != S0_OK)
		die("export", e);
	s0__carrier_opts o = {.dev = &dev, .state_dir = state, .id = "io"};
	s0__carrier *c = NULL;
	if (s0__carrier_attach(&o, &c, &e) != S0_OK)
		die("carrier attach", e);
	results rc = {0}, rp = {0};
	int bad = run_child(c, NULL, s0__carrier_root(c), &rc);
	s0__carrier_stats cs;
	s0__carrier_stats_get(c, &cs);
	if (s0__carrier_detach(c, &e) != S0_OK)
		die("carrier detach", e);
	s0__carrier_free(c);
	s0__branch_free(b);
	bad |= run_child(NULL, image, mnt, &rp);
	if (bad)
		return 1;
	printf("\nI/O inside the ext4 (%s file), MB/s or IOPS; loop direct I/O %s, io_flusher %s\n",
	       fast ? "64 MiB" : "256 MiB", cs.direct_io ? "on" : "off", cs.io_flusher ? "yes" : "no");
	printf("%-22s %10s %10s %8s\n", "workload", "carrier", "plain loop", "ratio");
	const char *names[] = {"seq write 1 MiB", "seq read 1 MiB", "rand read 4 KiB", "rand write 4 KiB"};
	double cv[] = {rc.seq_write_mbs, rc.seq_read_mbs, rc.rand_read_iops, rc.rand_write_iops};
	double pv[] = {rp.seq_write_mbs, rp.seq_read_mbs, rp.rand_read_iops, rp.rand_write_iops};
	for (int i = 0; i < 4; i++)
		printf("%-22s %10.0f %10.0f %8.2f\n", names[i], cv[i], pv[i], cv[i] / pv[i]);

	/* 2. attach/detach time vs size. */
	int reps = fast ? 3 : 7;
	double att[2][16], det[2][16];
	for (int i = 0; i < 2; i++) {
		for (int r = 0; r < reps; r++) {
			s0__bstore_drop_caches(bs);
			if (s0__bstore_attach(bs, &gens[i], &b, &e) != S0_OK)
				die("attach branch", e);
			s0__branch_blockdev(b, &dev);
			o.dev = &dev;
			o.id = "size";
			double t0 = now_ms();
			if (s0__carrier_attach(&o, &c, &e) != S0_OK)
				die("carrier attach", e);
			double t1 = now_ms();
			if (s0__carrier_detach(c, &e) != S0_OK)
				die("carrier detach", e);
			double t2 = now_ms();
			att[i][r] = t1 - t0;
			det[i][r] = t2 - t1;
			s0__carrier_free(c);
			s0__branch_free(b);
		}
		qsort(att[i], (size_t)reps, sizeof(double), cmp_d);
		qsort(det[i], (size_t)reps, sizeof(double), cmp_d);
	}
	printf("\nattach / detach of a fresh branch (cold caches), median of %d, ms\n", reps);
	printf("%-10s %10s %10s\n", "RootFS", "attach", "detach");
	for (int i = 0; i < 2; i++)
		printf("%7llu GiB %10.1f %10.1f\n", (unsigned long long)(sizes[i] / GIB), att[i][reps / 2],
		       det[i][reps / 2]);
	printf("%-10s %10.2f %10.2f\n", "16/1 ratio", att[1][reps / 2] / att[0][reps / 2],
	       det[1][reps / 2] / det[0][reps / 2]);

	for (int i = 0; i < 2; i++)
		s0__bstore_unref(bs, &gens[i]);
	s0__bstore_close(bs);
	s0__objstore_free(os);
	s0__carrier_reclaim(state, NULL);
	char *rm[] = {"/bin/rm", "-rf", dir, NULL};
	pid_t pid = fork();
	if (pid == 0) {
		execv(rm[0], rm);
		_exit(127);
	}
	waitpid(pid, NULL, 0);
	return 0;
}
