/*
 * bench_carrier [--fast]: the carrier (local/runtime/carrier/carrier.h)
 * measured as ratios in one run, as root.
 *
 *  1. I/O inside the mounted ext4: sequential write (1 MiB O_DIRECT blocks,
 *     then fsync) and read, 4 KiB random reads and writes (O_DIRECT, then
 *     fdatasync), through a carrier on a block-store branch and through a
 *     plain loop mount of the same image exported to a file, with direct I/O
 *     (the backing file's page cache bypassed, as the carrier's loop) and
 *     without (cached, as the carrier's spill file and chunk cache are).
 *     Each workload runs in a forked child inside the mount's namespace.
 *     Goal: carrier / plain >= 0.7.
 *  0. a cold read of a large template file: a fresh branch with the block
 *     store's caches dropped (each chunk fetched, verified, decrypted and
 *     decompressed once) against the plain loop device with direct I/O.
 *  2. attach and detach time of a fresh branch of 1 GiB and 16 GiB
 *     templates (median of N). Goal: flat in size.
 *  3. a pause-shaped detach (16 MiB and 64 small files written, not
 *     synced) with ext4's default barriers and with nobarrier,
 *     alternating: phases and the FUSE writes and fsyncs it made.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
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
	double cold_read_mbs; /* the template's big file, read once (O_DIRECT) */
} results;

typedef int (*workload_fn)(const char *root, results *r);

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
	return *s;
}

/* The I/O workload in <root>/workspace. Returns non-zero on failure. */
static int workload(const char *root, results *r)
{
	char dir[4200];
	snprintf(dir, sizeof dir, "%s/workspace", root);
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
/* Read <root>/data/big.bin once with 1 MiB O_DIRECT reads. */
static int cold_read(const char *root, results *r)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/data/big.bin", root);
	void *buf;
	if (posix_memalign(&buf, 4096, MIB) != 0)
		return 1;
	int fd = open(path, O_RDONLY | O_DIRECT);
	if (fd < 0)
		return 2;
	double t0 = now_ms();
	uint64_t total = 0;
	ssize_t n;
	while ((n = read(fd, buf, MIB)) > 0)
		total += (uint64_t)n;
	double t1 = now_ms();
	close(fd);
	free(buf);
	if (n < 0 || total == 0)
		return 3;
	r->cold_read_mbs = (double)total / MIB / ((t1 - t0) / 1e3);
	return 0;
}

static int run_child(const s0__carrier *c, const char *image_path, const char *mnt, bool dio_on,
                     workload_fn fn, results *r)
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
			if (!dio_on && ioctl(lfd, LOOP_SET_DIRECT_IO, 0UL) != 0)
				_exit(14);
			char dev[32];
			snprintf(dev, sizeof dev, "/dev/loop%d", idx);
			if (mount(dev, mnt, "ext4", MS_NOSUID | MS_NODEV, "errors=remount-ro") != 0)
				_exit(13);
			close(lfd);
		}
		memset(&res, 0, sizeof res);
		int rc = fn(dir, &res);
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

/* <dir>/src/data/big.bin: bytes compressible about as real files are. */
static const char *make_src(const char *dir, uint64_t bytes)
{
	static char src[512];
	char p[700];
	snprintf(src, sizeof src, "%s/src", dir);
	mkdir(src, 0755);
	snprintf(p, sizeof p, "%s/data", src);
	mkdir(p, 0755);
	snprintf(p, sizeof p, "%s/data/big.bin", src);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die("big.bin", NULL);
	uint8_t *buf = malloc(MIB);
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (uint64_t off = 0; off < bytes; off += MIB) {
		for (size_t i = 0; i < MIB; i += 8) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			uint64_t v = (x & 0x0f0f0f0f0f0f0f0full) | 0x2020202020202020ull; /* ~2x */
			memcpy(buf + i, &v, 8);
		}
		if (write(fd, buf, MIB) != (ssize_t)MIB)
			die("big.bin", NULL);
	}
	free(buf);
	close(fd);
	return src;
}

static void template(s0__bstore *bs, const char *dir, uint64_t size, const char *src,
                     s0__genid *gen)
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
	io.source_dir = src;
	if (s0__rootfs_template_build(&io, dir, &dev, NULL, &e) != S0_OK ||
	    s0__branch_publish(b, 0, gen, &e) != S0_OK)
		die("template", e);
	s0__branch_free(b);
}

/* Dirty 16 MiB (buffered, no sync) and 64 small files in <root>/workspace:
 * what a pause's stop leaves for the detach to write. */
static int dirty16(const char *root, results *r)
{
	(void)r;
	char path[4400];
	snprintf(path, sizeof path, "%s/workspace/dirty.bin", root);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 2;
	static uint8_t buf[MIB];
	for (size_t i = 0; i < MIB; i++)
		buf[i] = (uint8_t)(i * 131 + (i >> 12));
	for (int i = 0; i < 16; i++)
		if (write(fd, buf, MIB) != (ssize_t)MIB)
			return 3;
	close(fd);
	for (int i = 0; i < 64; i++) {
		snprintf(path, sizeof path, "%s/workspace/small%d", root, i);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, buf, 100) != 100)
			return 4;
		close(fd);
	}
	return 0;
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
	uint64_t big = fast ? 64 * MIB : 256 * MIB;
	const char *src = make_src(dir, big);
	for (int i = 0; i < 2; i++) {
		double t0 = now_ms();
		template(bs, dir, sizes[i], i == 0 ? src : NULL, &gens[i]);
		printf("template %2llu GiB built and imported in %.0f ms\n",
		       (unsigned long long)(sizes[i] / GIB), now_ms() - t0);
	}

	/* 0. Cold read of published data: a fresh branch, the store's caches
	 * dropped, so every chunk is fetched, verified and decoded once. */
	s0__branch *b = NULL;
	s0__blockdev dev;
	s0__carrier_opts o = {.state_dir = state};
	s0__carrier *c = NULL;
	results cold_c = {0}, cold_p = {0};
	s0__bstore_drop_caches(bs);
	if (s0__bstore_attach(bs, &gens[0], &b, &e) != S0_OK)
		die("attach branch", e);
	s0__branch_blockdev(b, &dev);
	if (s0__rootfs_image_export(&dev, image, NULL, &e) != S0_OK)
		die("export", e);
	s0__branch_free(b);
	s0__bstore_drop_caches(bs);
	if (s0__bstore_attach(bs, &gens[0], &b, &e) != S0_OK)
		die("attach branch", e);
	s0__branch_blockdev(b, &dev);
	o.dev = &dev;
	o.id = "cold";
	if (s0__carrier_attach(&o, &c, &e) != S0_OK)
		die("carrier attach", e);
	int bad0 = run_child(c, NULL, s0__carrier_root(c), true, cold_read, &cold_c);
	s0__branch_counters bcnt;
	s0__branch_counters_get(b, &bcnt);
	s0__carrier_stats cold_st;
	s0__carrier_stats_get(c, &cold_st);
	if (s0__carrier_detach(c, &e) != S0_OK)
		die("carrier detach", e);
	s0__carrier_free(c);
	s0__branch_free(b);
	bad0 |= run_child(NULL, image, mnt, true, cold_read, &cold_p);
	if (bad0)
		return 1;
	printf("\ncold read of a %llu MiB template file (1 MiB O_DIRECT): carrier %.0f MB/s "
	       "(%llu chunks fetched and decoded, FUSE reads of %.0f KiB on average), loop dio %.0f "
	       "MB/s, ratio %.2f\n",
	       (unsigned long long)(big / MIB), cold_c.cold_read_mbs,
	       (unsigned long long)bcnt.chunks_fetched,
	       cold_st.reads ? (double)cold_st.read_bytes / (double)cold_st.reads / 1024 : 0.0,
	       cold_p.cold_read_mbs,
	       cold_c.cold_read_mbs / cold_p.cold_read_mbs);

	/* 1. I/O: carrier vs plain loop on the same 1 GiB image. */
	if (s0__bstore_attach(bs, &gens[0], &b, &e) != S0_OK)
		die("attach branch", e);
	s0__branch_blockdev(b, &dev);
	o.dev = &dev;
	o.id = "io";
	if (s0__carrier_attach(&o, &c, &e) != S0_OK)
		die("carrier attach", e);
	/* Rounds alternate the three mounts so that load from elsewhere on
	 * the machine hits them alike; medians are reported. */
	int rounds = fast ? 1 : 5;
	double v[3][4][8];
	int bad = 0;
	for (int r = 0; r < rounds && !bad; r++) {
		results res[3];
		bad |= run_child(c, NULL, s0__carrier_root(c), true, workload, &res[0]);
		bad |= run_child(NULL, image, mnt, true, workload, &res[1]);
		bad |= run_child(NULL, image, mnt, false, workload, &res[2]);
		for (int k = 0; k < 3; k++) {
			v[k][0][r] = res[k].seq_write_mbs;
			v[k][1][r] = res[k].seq_read_mbs;
			v[k][2][r] = res[k].rand_read_iops;
			v[k][3][r] = res[k].rand_write_iops;
		}
	}
	s0__carrier_stats cs;
	s0__carrier_stats_get(c, &cs);
	if (s0__carrier_detach(c, &e) != S0_OK)
		die("carrier detach", e);
	s0__carrier_free(c);
	s0__branch_free(b);
	if (bad)
		return 1;
	printf("\nI/O inside the ext4 (%s file), MB/s or IOPS, median of %d rounds; loop direct I/O %s, "
	       "io_flusher %s\n",
	       fast ? "64 MiB" : "256 MiB", rounds, cs.direct_io ? "on" : "off",
	       cs.io_flusher ? "yes" : "no");
	printf("%-18s %9s %11s %7s %11s %7s\n", "workload", "carrier", "loop dio", "ratio",
	       "loop cached", "ratio");
	const char *names[] = {"seq write 1 MiB", "seq read 1 MiB", "rand read 4 KiB", "rand write 4 KiB"};
	for (int i = 0; i < 4; i++) {
		double m[3];
		for (int k = 0; k < 3; k++) {
			qsort(v[k][i], (size_t)rounds, sizeof(double), cmp_d);
			m[k] = v[k][i][rounds / 2];
		}
		printf("%-18s %9.0f %11.0f %7.2f %11.0f %7.2f\n", names[i], m[0], m[1], m[0] / m[1], m[2],
		       m[0] / m[2]);
	}

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

	/* 3. A pause-shaped detach (16 MiB dirty) with each set of mount
	 * options, alternating; FUSE requests the detach made. */
	const char *optsets[] = {"errors=remount-ro", S0__CARRIER_MOUNT_OPTIONS};
	double ph[2][5][16];
	int dreps = fast ? 7 : 15;
	for (int r = 0; r < dreps; r++)
		for (int k = 0; k < 2; k++) {
			if (s0__bstore_attach(bs, &gens[0], &b, &e) != S0_OK)
				die("attach branch", e);
			s0__branch_blockdev(b, &dev);
			o.dev = &dev;
			o.id = "dirty";
			o.mount_options = optsets[k];
			if (s0__carrier_attach(&o, &c, &e) != S0_OK)
				die("carrier attach", e);
			results unused;
			if (run_child(c, NULL, s0__carrier_root(c), true, dirty16, &unused) != 0)
				return 1;
			s0__carrier_stats s0, s1;
			s0__carrier_stats_get(c, &s0);
			if (s0__carrier_detach(c, &e) != S0_OK)
				die("carrier detach", e);
			s0__carrier_stats_get(c, &s1);
			ph[k][0][r] = (double)s1.detach_us / 1e3;
			ph[k][1][r] = (double)s1.syncfs_us / 1e3;
			ph[k][2][r] = (double)s1.unmount_us / 1e3;
			ph[k][3][r] = (double)(s1.writes - s0.writes);
			ph[k][4][r] = (double)(s1.fsyncs - s0.fsyncs);
			s0__carrier_free(c);
			s0__branch_free(b);
		}
	o.mount_options = NULL;
	printf("\ndetach after 16 MiB + 64 small files written (no sync), median of %d, ms\n", dreps);
	printf("%-30s %8s %8s %8s %12s %12s\n", "mount options", "detach", "syncfs", "unmount",
	       "FUSE writes", "FUSE fsyncs");
	for (int k = 0; k < 2; k++) {
		for (int m = 0; m < 5; m++)
			qsort(ph[k][m], (size_t)dreps, sizeof(double), cmp_d);
		printf("%-30s %8.1f %8.1f %8.1f %12.0f %12.0f\n", optsets[k], ph[k][0][dreps / 2],
		       ph[k][1][dreps / 2], ph[k][2][dreps / 2], ph[k][3][dreps / 2], ph[k][4][dreps / 2]);
	}

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
