/*
 * blk_crasher: the separate program the crash tests kill (docs/decisions.md).
 *
 *   blk_crasher run    DIR SEED STEPS   publish STEPS generations of one
 *       volume (deterministic writes from SEED), recording each returned
 *       generation durably in DIR/recorded (like the lifecycle's SQLite)
 *       before unpinning it, and running GC every third step with the head
 *       and every eighth step's generation (snapshots) as roots, and
 *       restarting (close, reopen) every other step (each restart seals a
 *       pack, so the pack backend's compaction has work). The object store
 *       backend is $S0_TEST_OBJECT_STORE (objenv.h). With
 *       S0_CRASH_AT=<point>[:n] it dies by SIGKILL at that point.
 *   blk_crasher verify DIR SEED STEPS   reopen after the crash: every
 *       recorded root must read back exactly; GC must succeed and leave
 *       exactly the live objects (nothing leaked, nothing missing); then
 *       publish a few more generations and check them too.
 *
 * Exit status 0 on success; 1 with a message on stderr otherwise.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "local/blocks/bstore.h"
#include "objenv.h"

#define CS 4096u
#define SIZE ((uint64_t)CS * 1000 - 100)
#define MAX_STEPS 200

typedef struct crasher {
	const char *dir;
	uint64_t seed;
	int steps;
	s0__objstore *os;
	s0__bstore *bs;
	/* recorded generations, by step (0: the empty volume) */
	s0__genid gen[MAX_STEPS + 1];
	bool have[MAX_STEPS + 1];
	int head;
} crasher;

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "blk_crasher: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static void check(int rc, s0_error *err, const char *what)
{
	if (rc != S0_OK)
		die("%s: %s", what, err ? s0_error_message(err) : s0_code_name(rc));
	s0_error_free(err);
}

static bool is_root(const crasher *c, int step)
{
	return c->have[step] && (step == c->head || (step && step % 8 == 0));
}

static int roots(void *payload, s0__gc_emit_fn emit, void *emit_ctx, s0_error **err)
{
	crasher *c = payload;
	for (int i = 0; i <= MAX_STEPS; i++)
		if (is_root(c, i) && emit(emit_ctx, S0__GC_ROOT_GENERATION, &c->gen[i]) < 0)
			return S0_ENOMEM;
	return S0_OK;
}

static void open_store(crasher *c)
{
	uint8_t key[32];
	memset(key, 0x33, sizeof key);
	char *objdir = NULL;
	if (asprintf(&objdir, "%s/objects", c->dir) < 0)
		die("oom");
	s0_error *err = NULL;
	check(objenv_open(objdir, key, &c->os, &err), err, "open objects");
	s0__bstore_options o = {.chunk_bytes = CS, .scratch_dir = c->dir, .roots = roots,
	                        .roots_payload = c};
	err = NULL;
	check(s0__bstore_open(c->os, &o, &c->bs, &err), err, "open blocks");
	free(objdir);
}

static void close_store(crasher *c)
{
	s0__bstore_close(c->bs);
	s0__objstore_free(c->os);
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x >> 12, *x ^= *x << 25, *x ^= *x >> 27;
	return *x * 0x2545f4914f6cdd1dull;
}

/* The writes of step s applied to img (and to b when non-NULL). */
static void step_writes(const crasher *c, int s, uint8_t *img, s0__branch *b)
{
	uint64_t x = (c->seed + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)s * 0xff51afd7ed558ccdull;
	int n = 1 + (int)(rnd(&x) % 6);
	for (int i = 0; i < n; i++) {
		uint64_t len = 1 + rnd(&x) % (3 * CS), off = rnd(&x) % (SIZE - len);
		uint64_t kind = rnd(&x) % 4;
		for (uint64_t k = 0; k < len; k++)
			img[off + k] = kind == 0 ? 0 : kind == 1 ? (uint8_t)(s + k / 512) : (uint8_t)rnd(&x);
		if (b) {
			s0_error *err = NULL;
			check(s0__branch_write(b, off, img + off, len, &err), err, "write");
		}
	}
}

static void record(crasher *c, int s, const s0__genid *g)
{
	char *path = NULL, hex[S0__OBJID_HEX_BYTES], line[128];
	if (asprintf(&path, "%s/recorded", c->dir) < 0)
		die("oom");
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
	s0__objid_hex(g, hex);
	int n = snprintf(line, sizeof line, "%d %s\n", s, hex);
	if (fd < 0 || write(fd, line, (size_t)n) != n || fsync(fd) < 0)
		die("record %s", path);
	close(fd);
	free(path);
	c->gen[s] = *g;
	c->have[s] = true;
	c->head = s;
}

static void load_recorded(crasher *c)
{
	char *path = NULL, line[128];
	if (asprintf(&path, "%s/recorded", c->dir) < 0)
		die("oom");
	FILE *f = fopen(path, "r");
	free(path);
	while (f && fgets(line, sizeof line, f)) {
		int s;
		char hex[80];
		s0__genid g;
		if (strlen(line) < 66 || line[strlen(line) - 1] != '\n' ||
		    sscanf(line, "%d %79s", &s, hex) != 2 || s < 0 || s > MAX_STEPS ||
		    s0__objid_parse(hex, &g, NULL) < 0)
			continue; /* a torn last line */
		c->gen[s] = g;
		c->have[s] = true;
		c->head = s;
	}
	if (f)
		fclose(f);
}

static void publish_step(crasher *c, int s, uint8_t *img)
{
	s0_error *err = NULL;
	s0__branch *b;
	s0__genid g;
	check(s0__bstore_attach(c->bs, &c->gen[s - 1], &b, &err), err, "attach");
	step_writes(c, s, img, b);
	err = NULL;
	check(s0__branch_publish(b, 0, &g, &err), err, "publish");
	s0__branch_free(b);
	record(c, s, &g);
	s0__bstore_unref(c->bs, &g);
	if (s % 3 == 0) {
		err = NULL;
		check(s0__bstore_gc(c->bs, NULL, &err), err, "gc");
	}
	if (s % 2 == 0) { /* a clean restart seals the current pack */
		close_store(c);
		open_store(c);
	}
}

static int run(crasher *c)
{
	uint8_t *img = calloc(1, SIZE);
	s0_error *err = NULL;
	s0__genid g0;
	check(s0__bstore_create(c->bs, SIZE, &g0, &err), err, "create");
	record(c, 0, &g0);
	s0__bstore_unref(c->bs, &g0);
	for (int s = 1; s <= c->steps; s++)
		publish_step(c, s, img);
	free(img);
	return 0;
}

static void verify_gen(crasher *c, int s, const uint8_t *img, uint8_t *buf)
{
	s0_error *err = NULL;
	s0__branch *b;
	char what[64];
	snprintf(what, sizeof what, "attach recorded step %d", s);
	check(s0__bstore_attach(c->bs, &c->gen[s], &b, &err), err, what);
	err = NULL;
	snprintf(what, sizeof what, "read recorded step %d", s);
	check(s0__branch_read(b, 0, buf, SIZE, &err), err, what);
	if (memcmp(buf, img, SIZE) != 0)
		die("recorded step %d reads back different bytes", s);
	s0__branch_free(b);
}

/* Replay the writes; check every root (and, when all, every recorded step). */
static void verify_all(crasher *c, bool all)
{
	uint8_t *img = calloc(1, SIZE), *buf = malloc(SIZE);
	for (int s = 0; s <= c->head; s++) {
		if (s)
			step_writes(c, s, img, NULL);
		if (is_root(c, s) || (all && c->have[s]))
			verify_gen(c, s, img, buf);
	}
	free(img);
	free(buf);
}

static void gc_exact(crasher *c)
{
	s0__gc_stats st;
	s0__objstore_usage_info u;
	s0_error *err = NULL;
	check(s0__bstore_gc(c->bs, &st, &err), err, "gc after crash");
	err = NULL;
	check(s0__objstore_usage(c->os, &u, &err), err, "usage");
	if (u.objects != st.objects_live)
		die("after GC the store holds %llu objects, %llu live",
		    (unsigned long long)u.objects, (unsigned long long)st.objects_live);
	char *objdir = NULL;
	if (asprintf(&objdir, "%s/objects", c->dir) < 0)
		die("oom");
	uint64_t files = objenv_data_bytes(objdir);
	free(objdir);
	if (files != UINT64_MAX && files != u.file_bytes)
		die("data files hold %llu bytes, the store accounts for %llu (leaked files)",
		    (unsigned long long)files, (unsigned long long)u.file_bytes);
}

static int verify(crasher *c)
{
	load_recorded(c);
	if (!c->have[0])
		return 0; /* crashed before the first generation was recorded */
	verify_all(c, false);
	gc_exact(c);
	verify_all(c, false);
	/* The store still works: continue the history from the head. */
	uint8_t *img = calloc(1, SIZE);
	for (int s = 1; s <= c->head; s++)
		step_writes(c, s, img, NULL);
	int first = c->head + 1, last = c->head + 3 < MAX_STEPS ? c->head + 3 : MAX_STEPS;
	for (int s = first; s <= last; s++)
		publish_step(c, s, img);
	free(img);
	gc_exact(c);
	verify_all(c, false);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 5)
		die("usage: blk_crasher run|verify DIR SEED STEPS");
	crasher *c = calloc(1, sizeof *c);
	c->dir = argv[2];
	c->seed = strtoull(argv[3], NULL, 0);
	c->steps = atoi(argv[4]);
	if (c->steps < 1 || c->steps > MAX_STEPS - 3)
		die("bad STEPS");
	open_store(c);
	int rc = !strcmp(argv[1], "run") ? run(c) : !strcmp(argv[1], "verify") ? verify(c) : 2;
	close_store(c);
	free(c);
	return rc;
}
