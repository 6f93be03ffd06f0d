/*
 * bench_blocks: the block store's cost model, as ratios measured in one run
 * (the baseline measurements). Not a test; built only.
 *
 *   bench_blocks [--fast] [--object-store pack|files]
 *                [--files-sync parallel|each|fs] [DIR]
 *       (or S0_BENCH_FAST=1; DIR default $TMPDIR; the object store backend
 *       defaults to pack; --files-sync picks the files backend's durability
 *       strategy: fdatasync per object file and fsync per touched directory
 *       on 8 threads (default) or one after the other, or one syncfs per
 *       commit phase)
 *
 * Tables: publish time at D = 16 MiB against volume size (goal: 16 GiB /
 * 256 MiB <= 1.2); publish time against D at a fixed volume (goal: <= 5 ms
 * per dirty MiB + 10 ms), also right after a GC that deleted thousands of
 * objects; attach + first 4 KiB read against volume size (goal ratio <=
 * 1.2; <= 1 ms with metadata cached, <= 10 ms cold); publish throughput
 * against `zstd -1` + fsync of the same bytes; sequential read of a
 * committed 1 GiB volume against pread of a raw image, cold and warm.
 * --fast shrinks every size for a smoke run.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "local/blocks/bstore.h"
#include "local/objects/backends.h"
#include "local/objects/files/objfiles.h"

#define CS 65536u

typedef struct bench {
	bool fast;
	int reps;
	const char *backend;
	const char *files_sync; /* "parallel" (default), "each", "fs" */
	char *dir, *objdir;
	s0__objstore *os;
	s0__bstore *bs;
	s0__genid roots[16];
	int nroots;
	uint8_t *chunk;
	uint64_t seed;
} bench;

static void die(const char *what, s0_error *err)
{
	fprintf(stderr, "bench_blocks: %s: %s\n", what, err ? s0_error_message(err) : "failed");
	exit(1);
}

#define CALL(what, x)                                                                    \
	do {                                                                                 \
		s0_error *err_ = NULL;                                                           \
		if ((x) < 0)                                                                     \
			die(what, err_);                                                             \
	} while (0)

static int roots_cb(void *payload, s0__gc_emit_fn emit, void *ctx, s0_error **err)
{
	bench *b = payload;
	for (int i = 0; i < b->nroots; i++)
		if (emit(ctx, S0__GC_ROOT_GENERATION, &b->roots[i]) < 0)
			return S0_ENOMEM;
	return S0_OK;
}

static void open_stores(bench *b)
{
	uint8_t key[32];
	memset(key, 7, sizeof key);
	CALL("open objects",
	     s0__objstore_open_backend(b->backend, b->objdir, key, NULL, &b->os, &err_));
	if (!strcmp(b->backend, "files"))
		s0__objfiles_set_sync(s0__objstore_backend(b->os),
		                      !strcmp(b->files_sync, "each") ? S0__OBJFILES_SYNC_EACH
		                      : !strcmp(b->files_sync, "fs") ? S0__OBJFILES_SYNC_FS
		                                                     : S0__OBJFILES_SYNC_PARALLEL);
	s0__bstore_options o = {.scratch_dir = b->dir, .roots = roots_cb, .roots_payload = b};
	CALL("open blocks", s0__bstore_open(b->os, &o, &b->bs, &err_));
}

static void close_stores(bench *b)
{
	s0__bstore_close(b->bs);
	s0__objstore_free(b->os);
}

/* Make gen a root in slot (the lifecycle's record), then drop its pin. */
static void record(bench *b, int slot, const s0__genid *g)
{
	b->roots[slot] = *g;
	if (slot >= b->nroots)
		b->nroots = slot + 1;
	s0__bstore_unref(b->bs, g);
}

/* A sparse volume of size t: one populated chunk in every 256. */
static void make_volume(bench *b, uint64_t t, int slot)
{
	s0__genid g0, g1;
	s0__branch *br;
	CALL("create", s0__bstore_create(b->bs, t, &g0, &err_));
	CALL("attach", s0__bstore_attach(b->bs, &g0, &br, &err_));
	s0__bstore_unref(b->bs, &g0);
	for (uint64_t c = 0; c < t / CS; c += 256) {
		bu_fill(b->chunk, CS, c + 1);
		CALL("populate", s0__branch_write(br, c * CS, b->chunk, CS, &err_));
	}
	CALL("publish base", s0__branch_publish(br, 0, &g1, &err_));
	s0__branch_free(br);
	record(b, slot, &g1);
}

enum pattern { EXTENTS, SCATTER, MIXED };

/* Dirty d bytes of br (volume t) in the given pattern with fresh data. */
static void dirty(bench *b, s0__branch *br, uint64_t t, uint64_t d, enum pattern p)
{
	uint64_t ext = p == EXTENTS ? d : p == MIXED ? d / 2 : 0;
	for (uint64_t done = 0; done < ext; done += MIB) {
		uint64_t off = bu_rand(&b->seed) % (t / MIB) * MIB;
		for (uint64_t k = 0; k < MIB; k += CS) {
			bu_fill(b->chunk, CS, bu_rand(&b->seed));
			CALL("write", s0__branch_write(br, off + k, b->chunk, CS, &err_));
		}
	}
	for (uint64_t done = ext; done < d; done += CS) {
		uint64_t off = bu_rand(&b->seed) % (t / CS) * CS;
		bu_fill(b->chunk, CS, bu_rand(&b->seed));
		CALL("write", s0__branch_write(br, off, b->chunk, CS, &err_));
	}
}

/* Median wall and CPU ms of reps publishes of d dirty bytes on the volume
 * in slot. */
static double time_publish(bench *b, int slot, uint64_t d, enum pattern p, int reps,
                           double *cpu_ms)
{
	double v[16], c[16];
	s0__gen_info gi;
	CALL("info", s0__bstore_gen_info(b->bs, &b->roots[slot], &gi, &err_));
	for (int r = 0; r < reps; r++) {
		s0__branch *br;
		s0__genid g;
		CALL("attach", s0__bstore_attach(b->bs, &b->roots[slot], &br, &err_));
		dirty(b, br, gi.size_bytes, d, p);
		double c0 = bu_cpu_ms(), t0 = bu_now_ms();
		CALL("publish", s0__branch_publish(br, 0, &g, &err_));
		v[r] = bu_now_ms() - t0;
		c[r] = bu_cpu_ms() - c0;
		s0__branch_free(br);
		record(b, slot, &g);
	}
	if (cpu_ms)
		*cpu_ms = bu_median(c, reps);
	return bu_median(v, reps);
}

static const char *human(uint64_t bytes, char *out)
{
	if (bytes >= GIB)
		sprintf(out, "%llu GiB", (unsigned long long)(bytes / GIB));
	else
		sprintf(out, "%llu MiB", (unsigned long long)(bytes / MIB));
	return out;
}

/* ---- A: publish vs volume size ---- */

static double tA[3];

static void bench_publish_vs_size(bench *b, const uint64_t *sizes, uint64_t d)
{
	char h1[32], h2[32];
	double m[3][16], cm[3][16], sc[3][16], cs[3][16];
	for (int i = 0; i < 3; i++)
		make_volume(b, sizes[i], i);
	/* Repetitions interleaved across sizes: load bursts hit all sizes. */
	for (int r = 0; r < b->reps; r++) {
		for (int i = 0; i < 3; i++) {
			m[i][r] = time_publish(b, i, d, MIXED, 1, &cm[i][r]);
			sc[i][r] = time_publish(b, i, d, SCATTER, 1, &cs[i][r]);
		}
	}
	printf("\n### Publish of D = %s dirty against volume size (sparse volumes)\n\n",
	       human(d, h1));
	printf("| volume | mixed: ms | ratio | CPU ms | scattered 64 KiB chunks: ms | ratio | CPU ms |\n");
	printf("|---|---|---|---|---|---|---|\n");
	double base_m = 0, base_s = 0;
	for (int i = 0; i < 3; i++) {
		double mm = bu_median(m[i], b->reps), ms = bu_median(sc[i], b->reps);
		if (!i)
			base_m = mm, base_s = ms;
		tA[i] = mm;
		printf("| %s | %.1f | %.2f | %.0f | %.1f | %.2f | %.0f |\n", human(sizes[i], h2), mm,
		       mm / base_m, bu_median(cm[i], b->reps), ms, ms / base_s,
		       bu_median(cs[i], b->reps));
	}
	printf("\nGoal: largest / smallest <= 1.2 (mixed = half in 1 MiB extents, half in "
	       "scattered chunks; medians of %d repetitions interleaved across sizes).\n",
	       b->reps);
}

/* ---- B: publish vs D ---- */

static double t256;

static void bench_publish_vs_d(bench *b, int slot, const uint64_t *ds, const char *label)
{
	char h[32], hv[32];
	s0__gen_info gi;
	CALL("info", s0__bstore_gen_info(b->bs, &b->roots[slot], &gi, &err_));
	printf("\n### Publish time against dirty bytes D, volume %s%s\n\n", human(gi.size_bytes, hv),
	       label);
	printf("| D | ms (median) | ms per MiB | budget 5 ms/MiB + 10 ms | within | CPU ms (both "
	       "threads) |\n");
	printf("|---|---|---|---|---|---|\n");
	for (int i = 0; i < 3; i++) {
		double mib = (double)ds[i] / MIB;
		int reps = ds[i] >= 128 * MIB ? (b->reps > 3 ? 3 : b->reps) : b->reps;
		double cpu;
		double t = time_publish(b, slot, ds[i], MIXED, reps, &cpu);
		double budget = 5 * mib + 10;
		if (i == 2 && !*label)
			t256 = t;
		printf("| %s | %.1f | %.2f | %.0f | %s | %.0f |\n", human(ds[i], h), t, t / mib, budget,
		       t <= budget ? "yes" : "NO", cpu);
	}
}

/* ---- C: after a GC that deleted thousands of objects ---- */

static void bench_after_gc(bench *b, int slot, int garbage_chunks, const uint64_t *ds)
{
	s0__gen_info gi;
	CALL("info", s0__bstore_gen_info(b->bs, &b->roots[slot], &gi, &err_));
	for (int k = 0; k < 3; k++) {
		s0__branch *br;
		s0__genid g;
		CALL("attach", s0__bstore_attach(b->bs, &b->roots[slot], &br, &err_));
		dirty(b, br, gi.size_bytes, (uint64_t)garbage_chunks * CS, SCATTER);
		CALL("publish", s0__branch_publish(br, 0, &g, &err_));
		s0__branch_free(br);
		s0__bstore_unref(b->bs, &g); /* never recorded: garbage */
	}
	s0__gc_stats st;
	double t0 = bu_now_ms();
	CALL("gc", s0__bstore_gc(b->bs, &st, &err_));
	double tgc = bu_now_ms() - t0;
	printf("\nGC deleted %llu objects (%.1f MiB sealed) in %.0f ms; %llu live objects "
	       "walked from %llu roots.\n",
	       (unsigned long long)st.objects_deleted, (double)st.bytes_freed / MIB, tgc,
	       (unsigned long long)st.objects_live, (unsigned long long)st.roots);
	bench_publish_vs_d(b, slot, ds, ", right after that GC");
}

/* ---- D: attach + first read ---- */

static double attach_read(bench *b, int slot, uint64_t chunk_index)
{
	uint8_t buf[4096];
	s0__branch *br;
	double t0 = bu_now_ms();
	CALL("attach", s0__bstore_attach(b->bs, &b->roots[slot], &br, &err_));
	CALL("read", s0__branch_read(br, chunk_index * CS + 8192, buf, sizeof buf, &err_));
	double t = bu_now_ms() - t0;
	s0__branch_free(br);
	return t;
}

/* One cold sample: fresh stores, OS caches dropped at level. */
static double cold_sample(bench *b, int slot, uint64_t chunk_index, int level, bool *ok)
{
	close_stores(b);
	*ok = bu_drop_caches(level);
	open_stores(b);
	return attach_read(b, slot, chunk_index);
}

/* Chunk index of the r-th sample on a volume of nchunks (a populated one). */
static uint64_t sample_chunk(uint64_t nchunks, int r, int mul)
{
	return (uint64_t)(r * mul + 3) * 256 % nchunks / 256 * 256;
}

static void bench_attach(bench *b, const uint64_t *sizes)
{
	enum { NW = 10, NC = 7 };
	char h[32];
	double w[3][NW], c1[3][NC], c3[3][NC], med[3][3];
	int nc = b->fast ? 1 : NC;
	bool dropped = true;
	/* Warm first, for every size: OS caches hold the store (read once).
	 * Samples are interleaved across sizes. */
	for (int i = 0; i < 3; i++)
		for (int r = 0; r < NW; r++)
			attach_read(b, i, sample_chunk(sizes[i] / CS, r, 7));
	for (int r = 0; r < NW; r++) {
		for (int i = 0; i < 3; i++) {
			s0__bstore_drop_caches(b->bs);
			w[i][r] = attach_read(b, i, sample_chunk(sizes[i] / CS, r, 7));
		}
	}
	for (int r = 0; r < nc; r++) {
		for (int i = 0; i < 3; i++) {
			bool ok1, ok3;
			c1[i][r] = cold_sample(b, i, sample_chunk(sizes[i] / CS, r, 11), 1, &ok1);
			c3[i][r] = cold_sample(b, i, sample_chunk(sizes[i] / CS, r, 13), 3, &ok3);
			dropped = dropped && ok1 && ok3;
		}
	}
	for (int i = 0; i < 3; i++) {
		med[i][0] = bu_median(w[i], NW);
		med[i][1] = bu_median(c1[i], nc);
		med[i][2] = bu_median(c3[i], nc);
	}
	printf("\n### Attach + first 4 KiB read against volume size\n\n");
	printf("| volume | store caches dropped, OS cache warm: ms | OS page cache dropped: ms "
	       "| all OS caches dropped: ms |\n|---|---|---|---|\n");
	for (int i = 0; i < 3; i++)
		printf("| %s | %.3f (x%.2f) | %.2f (x%.2f) | %.2f (x%.2f) |\n", human(sizes[i], h),
		       med[i][0], med[i][0] / med[0][0], med[i][1], med[i][1] / med[0][1], med[i][2],
		       med[i][2] / med[0][2]);
	printf("\nGoal: ratio to the smallest <= 1.2; <= 1 ms metadata cached, <= 10 ms cold. "
	       "Cold samples reopen the stores (fresh SQLite) after dropping the OS caches.%s\n",
	       dropped ? "" : " (drop_caches was not permitted: the cold columns are warm)");
}

/* ---- E: publish throughput vs zstd -1 + fsync ---- */

static void bench_vs_zstd(bench *b, uint64_t d)
{
	char *in = NULL, *out = NULL, h[32];
	if (asprintf(&in, "%s/zstd-in", b->dir) < 0 || asprintf(&out, "%s/zstd-in.zst", b->dir) < 0)
		exit(1);
	int fd = open(in, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	for (uint64_t off = 0; off < d; off += CS) {
		bu_fill(b->chunk, CS, bu_rand(&b->seed));
		if (write(fd, b->chunk, CS) != CS)
			exit(1);
	}
	fsync(fd);
	close(fd);
	double tz[2];
	const char *threads[2] = {"-T1", "-T2"};
	for (int k = 0; k < 2; k++) {
		char *argv[] = {"zstd", "-1", (char *)threads[k], "-q", "-f", in, "-o", out, NULL};
		double t = bu_run(argv);
		double t0 = bu_now_ms();
		int ofd = open(out, O_RDONLY);
		if (ofd >= 0) {
			fsync(ofd);
			close(ofd);
		}
		tz[k] = t < 0 ? -1 : t + bu_now_ms() - t0;
	}
	double mib = (double)d / MIB;
	printf("\n### Publish throughput against `zstd -1` + fsync of the same %s\n\n", human(d, h));
	printf("| what | ms | MiB/s | publish speed relative |\n|---|---|---|---|\n");
	printf("| publish (hash + zstd -1 + encrypt + pack + sync, all threads) | %.0f | %.0f | 1.00 |\n",
	       t256, mib / t256 * 1e3);
	for (int k = 0; k < 2; k++)
		printf("| zstd -1 %s CLI + fsync | %.0f | %.0f | %.2f |\n", threads[k], tz[k],
		       mib / tz[k] * 1e3, tz[k] / t256);
	unlink(in);
	unlink(out);
	free(in);
	free(out);
}

/* ---- F: sequential read of a committed volume vs a raw image ---- */

static double read_volume(bench *b, int slot, uint64_t t, uint8_t *buf)
{
	s0__branch *br;
	double t0 = bu_now_ms();
	CALL("attach", s0__bstore_attach(b->bs, &b->roots[slot], &br, &err_));
	for (uint64_t off = 0; off < t; off += MIB)
		CALL("read", s0__branch_read(br, off, buf, MIB, &err_));
	s0__branch_free(br);
	return (double)t / MIB / ((bu_now_ms() - t0) / 1e3);
}

static double read_raw(const char *path, uint64_t t, uint8_t *buf)
{
	int fd = open(path, O_RDONLY);
	double t0 = bu_now_ms();
	for (uint64_t off = 0; off < t; off += MIB)
		if (pread(fd, buf, MIB, (off_t)off) != (ssize_t)MIB)
			exit(1);
	close(fd);
	return (double)t / MIB / ((bu_now_ms() - t0) / 1e3);
}

static void bench_seq_read(bench *b, uint64_t t, int slot)
{
	char *raw = NULL, h[32];
	if (asprintf(&raw, "%s/raw.img", b->dir) < 0)
		exit(1);
	uint8_t *buf = malloc(MIB);
	s0__genid g0, g1;
	s0__branch *br;
	int fd = open(raw, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CALL("create", s0__bstore_create(b->bs, t, &g0, &err_));
	CALL("attach", s0__bstore_attach(b->bs, &g0, &br, &err_));
	s0__bstore_unref(b->bs, &g0);
	for (uint64_t off = 0; off < t; off += MIB) {
		bu_fill(buf, MIB, off / MIB + 1000);
		CALL("write", s0__branch_write(br, off, buf, MIB, &err_));
		if (pwrite(fd, buf, MIB, (off_t)off) != (ssize_t)MIB)
			exit(1);
	}
	fsync(fd);
	close(fd);
	double t0 = bu_now_ms();
	CALL("publish", s0__branch_publish(br, 0, &g1, &err_));
	double tpub = bu_now_ms() - t0;
	s0__branch_free(br);
	record(b, slot, &g1);
	s0__objstore_counters oc;
	s0__objstore_counters_get(b->os, &oc);
	double warm_s, warm_r, cold_s, cold_r;
	read_volume(b, slot, t, buf); /* OS cache warm; chunk cache is 64 MiB */
	s0__bstore_drop_caches(b->bs);
	warm_s = read_volume(b, slot, t, buf);
	read_raw(raw, t, buf);
	warm_r = read_raw(raw, t, buf);
	close_stores(b);
	bool ok = bu_drop_caches(3);
	open_stores(b);
	cold_s = read_volume(b, slot, t, buf);
	bu_drop_caches(3);
	cold_r = read_raw(raw, t, buf);
	printf("\n### Sequential read (1 MiB reads) of a committed %s volume against pread of a "
	       "raw image\n\n",
	       human(t, h));
	printf("| cache state | volume MiB/s | raw image MiB/s | ratio |\n|---|---|---|---|\n");
	printf("| warm (OS page cache; store caches dropped) | %.0f | %.0f | %.3f |\n", warm_s,
	       warm_r, warm_s / warm_r);
	printf("| cold (all OS caches dropped%s) | %.0f | %.0f | %.2f |\n", ok ? "" : ": NOT permitted",
	       cold_s, cold_r, cold_s / cold_r);
	printf("\nPublishing that %s volume whole took %.0f ms (%.0f MiB/s); zstd ratio so far "
	       "%.2f (plaintext / sealed bytes).\n",
	       h, tpub, (double)t / MIB / (tpub / 1e3),
	       (double)oc.plain_bytes_written / (double)oc.bytes_written);
	unlink(raw);
	free(raw);
	free(buf);
}

int main(int argc, char **argv)
{
	bench b = {.seed = 12345, .backend = "pack", .files_sync = "parallel"};
	const char *fast = getenv("S0_BENCH_FAST");
	b.fast = fast && *fast && strcmp(fast, "0") != 0;
	const char *parent = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--fast"))
			b.fast = true;
		else if (!strcmp(argv[i], "--object-store") && i + 1 < argc)
			b.backend = argv[++i];
		else if (!strcmp(argv[i], "--files-sync") && i + 1 < argc)
			b.files_sync = argv[++i];
		else
			parent = argv[i];
	}
	if (asprintf(&b.dir, "%s/s0-bench-blocks-XXXXXX", parent) < 0 || !mkdtemp(b.dir) ||
	    asprintf(&b.objdir, "%s/objects", b.dir) < 0) {
		perror("bench dir");
		return 1;
	}
	b.reps = b.fast ? 1 : 5;
	b.chunk = malloc(CS);
	open_stores(&b);
	static const uint64_t full_sizes[3] = {256 * MIB, 4 * GIB, 16 * GIB};
	static const uint64_t fast_sizes[3] = {16 * MIB, 256 * MIB, 1 * GIB};
	static const uint64_t full_d[3] = {1 * MIB, 16 * MIB, 256 * MIB};
	static const uint64_t fast_d[3] = {1 * MIB, 2 * MIB, 8 * MIB};
	const uint64_t *sizes = b.fast ? fast_sizes : full_sizes, *ds = b.fast ? fast_d : full_d;
	printf("## bench_blocks%s: object store %s%s%s, chunk 64 KiB, zstd level 1, %ld CPUs, load "
	       "average %.2f at start\n",
	       b.fast ? " (fast mode: small sizes, 1 repetition)" : "", b.backend,
	       !strcmp(b.backend, "files") ? ", sync " : "",
	       !strcmp(b.backend, "files") ? b.files_sync : "", sysconf(_SC_NPROCESSORS_ONLN),
	       bu_loadavg());
	bench_publish_vs_size(&b, sizes, ds[1]);
	bench_publish_vs_d(&b, 1, ds, "");
	bench_after_gc(&b, 1, b.fast ? 100 : 1100, ds);
	bench_attach(&b, sizes);
	bench_vs_zstd(&b, ds[2]);
	bench_seq_read(&b, b.fast ? 64 * MIB : 1 * GIB, 3);
	close_stores(&b);
	bu_rmrf(b.dir);
	free(b.dir);
	free(b.objdir);
	free(b.chunk);
	return 0;
}
