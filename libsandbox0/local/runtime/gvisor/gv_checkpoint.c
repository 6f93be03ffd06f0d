/*
 * The capture side of the gvisor driver's memory checkpoints (gv_mem.h):
 * `runsc checkpoint --image-path` of a generation into a directory on the
 * driver's image tmpfs (runsc writes its pages at memory speed), read once:
 * pages.img cut by content into the chunks of a heap that maps the file
 * (gv_pages.h: no copy; a copy for a sandbox left running), which the
 * checkpoint engine compresses, encrypts and stores (chunks whose content
 * is already stored are deduplicated),
 * the procd binary the sandbox runs as PID 1 (first, padded to a chunk
 * boundary, so its chunks are the same in every capture of one procd build
 * and the engine stores them once: MEM-11), checkpoint.img,
 * pages_meta.img, the network slot, the contexts table and
 * the session attempts (both taken at capture()) into the state blob, the runtime-only
 * mounts into the tmpfs blob as tar streams; then the directory is removed.
 * The image tmpfs (<dir>/images) is mounted only while an image is in
 * flight (s0__gv_images_hold/release), so an idle host holds no mount.
 *
 * Before the checkpoint is taken the source has no region and estimates
 * the image from the generation's memory cgroup (what the sandbox uses
 * bounds pages.img), so admission (MFB-11) and the upload reservation see
 * its size.
 */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "local/runtime/gvisor/gv_int.h"
#include "local/runtime/gvisor/gv_pages.h"

/* runsc's time to write an image: generous, 1 GiB takes about a second */
#define CHECKPOINT_TIMEOUT_MS 600000

struct s0__gv_ckpt {
	atomic_int refs;
	pthread_mutex_t mu;
	s0__rt_host *h;
	char *id;        /* runtime id = runsc container id */
	char *cgroup;    /* memory.usage_in_bytes of the generation */
	char *procd;     /* the procd binary staged for the generation (its PID 1) */
	char **paths;    /* runtime-only mount points inside ("/tmp"…) */
	char **dirs;     /* the host tmpfs serving each */
	size_t n;
	int32_t net_slot; /* its network slot (gv_net.h), -1 without one */
	char *contexts;   /* (nullable) its contexts table (s0__gv_ctxs_save) */
	char *sessions;   /* (nullable) its session attempts (s0__gv_ses_save) */
	bool taken;      /* the checkpoint ran (successfully or not) */
	int rc;          /* its outcome */
	char why[512];   /* its error message */
	s0__heap *pages; /* pages.img */
	s0__buf state;   /* checkpoint.img + pages_meta.img records */
	s0__buf tmpfs;   /* the runtime-only mounts as tar records */
};

/* Milliseconds on the monotonic clock. */
static double mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- records: "S0GV" u32 version, then (u32 name len, name, u64 len, bytes)… ---- */

static int rec_begin(s0__buf *b)
{
	uint32_t v = 1;
	return s0__buf_put(b, "S0GV", 4) < 0 || s0__buf_put(b, &v, sizeof v) < 0 ? -1 : 0;
}

/* A record's name and length; its @p len bytes follow. */
static int rec_head(s0__buf *b, const char *name, uint64_t len)
{
	uint32_t nl = (uint32_t)strlen(name);
	return s0__buf_put(b, &nl, sizeof nl) < 0 || s0__buf_put(b, name, nl) < 0 ||
	               s0__buf_put(b, &len, sizeof len) < 0
	               ? -1
	               : 0;
}

static int rec_add(s0__buf *b, const char *name, const void *data, uint64_t len)
{
	if (rec_head(b, name, len) < 0)
		return -1;
	return len ? s0__buf_put(b, data, (size_t)len) : 0;
}

static int read_file(const char *path, s0__buf *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char chunk[65536];
	ssize_t got;
	while ((got = read(fd, chunk, sizeof chunk)) > 0)
		if (s0__buf_put(out, chunk, (size_t)got) < 0) {
			got = -1;
			break;
		}
	close(fd);
	return got < 0 ? -1 : 0;
}

static void rm_rf(const char *p)
{
	char *const argv[] = {"/bin/rm", "-rf", (char *)p, NULL};
	s0__gv_result res;
	s0__gv_run(argv, NULL, 0, 60000, &res, NULL);
	s0__gv_result_clear(&res);
}

/* The procd binary of the sandbox as the state blob's first record, then
 * a "pad" record of zeros up to the next chunk boundary: the chunks holding
 * it are the same bytes in every capture of that build (deduplicated). */
static int rec_procd(s0__buf *b, const char *path)
{
	s0__buf bin = {0};
	static const uint8_t zero[4096];
	int rc = read_file(path, &bin) < 0 ? -1 : rec_add(b, "procd", bin.data, bin.len);
	if (rc == 0 && !bin.len) { /* never a valid binary */
		errno = ENOEXEC;
		rc = -1;
	}
	s0__buf_free(&bin);
	uint64_t head = sizeof(uint32_t) + 3 + sizeof(uint64_t); /* the pad record's own */
	uint64_t pad = (S0__HEAP_CHUNK_DEFAULT - (b->len + head) % S0__HEAP_CHUNK_DEFAULT) %
	               S0__HEAP_CHUNK_DEFAULT;
	if (rc == 0)
		rc = rec_head(b, "pad", pad);
	for (uint64_t k = 0; rc == 0 && k < pad; k += sizeof zero)
		rc = s0__buf_put(b, zero, pad - k < sizeof zero ? (size_t)(pad - k) : sizeof zero);
	return rc < 0 ? -1 : 0;
}

/* ---- the image tmpfs ---- */

static char *images_dir(s0__rt_host *h)
{
	return s0__asprintf("%s/images", h->dir);
}

int s0__gv_images_open(s0__rt_host *h, s0_error **err)
{
	char *d = images_dir(h);
	if (!d)
		return s0__error_nomem(err);
	char what[600];
	int rc = S0_OK;
	/* mounted by a killed process: its image directories go with it */
	for (int i = 0; i < 16 && s0__gv_mount_under(d, what, sizeof what); i++)
		umount2(d, MNT_DETACH);
	rm_rf(d);
	if (mkdir(d, 0700) < 0 && errno != EEXIST)
		rc = s0__error_set(err, S0_EIO, "runtime_unavailable", "cannot make %s: %s", d,
		                   strerror(errno));
	free(d);
	return rc;
}

void s0__gv_images_close(s0__rt_host *h)
{
	char *d = h && h->dir ? images_dir(h) : NULL;
	if (d) {
		umount2(d, MNT_DETACH); /* none is mounted unless an image was in flight */
		rmdir(d);
	}
	free(d);
}

int s0__gv_images_hold(s0__rt_host *h, s0_error **err)
{
	char *d = images_dir(h);
	if (!d)
		return s0__error_nomem(err);
	int rc = S0_OK;
	pthread_mutex_lock(&h->mu);
	if (h->images_users == 0 && mount("tmpfs", d, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") < 0)
		rc = s0__error_set(err, S0_EIO, "runtime_unavailable",
		                   "cannot mount the image tmpfs at %s: %s", d, strerror(errno));
	else
		h->images_users++;
	pthread_mutex_unlock(&h->mu);
	free(d);
	return rc;
}

void s0__gv_images_release(s0__rt_host *h)
{
	char *d = images_dir(h);
	pthread_mutex_lock(&h->mu);
	if (h->images_users > 0 && --h->images_users == 0 && d)
		umount2(d, MNT_DETACH);
	pthread_mutex_unlock(&h->mu);
	free(d);
}

/* ---- taking the checkpoint ---- */

__attribute__((format(printf, 2, 3))) static int fail(s0__gv_ckpt *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof c->why, fmt, ap);
	va_end(ap);
	return c->rc = S0_EMEMCAPTURE;
}

/* pages.img into a heap of the engine's chunk size, cut by content
 * (gv_pages.h), its layout appended to @p layout. @p share: the heap maps
 * the file's pages (no copy; they stay on the image tmpfs until the heap
 * goes); otherwise it copies them (a sandbox left running is charged for
 * the file until it is removed). */
static int load_pages(s0__gv_ckpt *c, const char *path, bool share, s0__buf *layout)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return fail(c, "cannot read %s: %s", path, strerror(errno));
	}
	s0_error *e = NULL;
	uint32_t *lens = NULL;
	size_t n = 0;
	int rc = S0_OK;
	void *map = NULL;
	if (st.st_size > 0) {
		/* populated at once: the cut samples every page */
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
		if (map == MAP_FAILED) {
			map = NULL;
			rc = S0_EIO;
		}
	}
	if (rc == S0_OK)
		rc = s0__gv_pages_cut(map, (uint64_t)st.st_size, S0__HEAP_CHUNK_DEFAULT, &lens, &n, &e);
	if (rc == S0_OK && share)
		rc = s0__gv_pages_map(fd, (uint64_t)st.st_size, lens, n, S0__HEAP_CHUNK_DEFAULT,
		                      &c->pages, &e);
	if (share && rc == S0_EIO) { /* too many mappings: copy */
		s0_error_free(e);
		e = NULL;
		rc = S0_OK;
		share = false;
	}
	if (rc == S0_OK && !share)
		rc = s0__gv_pages_copy(map, lens, n, S0__HEAP_CHUNK_DEFAULT, &c->pages, &e);
	if (rc == S0_OK && s0__gv_pages_layout(lens, n, S0__HEAP_CHUNK_DEFAULT, layout) < 0)
		rc = S0_ENOMEM;
	if (map)
		munmap(map, (size_t)st.st_size);
	close(fd);
	free(lens);
	if (rc < 0)
		fail(c, "cannot load %s: %s", path, e ? s0_error_message(e) : strerror(errno));
	s0_error_free(e);
	return rc < 0 ? c->rc : S0_OK;
}

/* Each runtime-only mount as a tar stream record named by its path. */
static int pack_tmpfs(s0__gv_ckpt *c)
{
	if (rec_begin(&c->tmpfs) < 0)
		return fail(c, "out of memory");
	for (size_t i = 0; i < c->n; i++) {
		char *const argv[] = {"/bin/tar", "--numeric-owner", "-C", c->dirs[i], "-cf", "-", ".",
		                      NULL};
		s0__gv_result res;
		s0_error *e = NULL;
		int rc = s0__gv_run(argv, NULL, 0, CHECKPOINT_TIMEOUT_MS, &res, &e);
		if (rc == S0_OK && res.status != 0)
			rc = fail(c, "tar of %s failed: %.300s", c->paths[i],
			          res.err.data ? res.err.data : "");
		else if (rc < 0)
			fail(c, "cannot run tar for %s: %s", c->paths[i], e ? s0_error_message(e) : "");
		else if (rec_add(&c->tmpfs, c->paths[i], res.out.data, res.out.len) < 0)
			rc = fail(c, "out of memory");
		s0_error_free(e);
		s0__gv_result_clear(&res);
		if (rc < 0)
			return c->rc;
	}
	return S0_OK;
}

/* The generation's memory cgroup limit (memory.limit_in_bytes): read into
 * *old and, when @p raise, raised by @p by bytes; restored with raise false. */
static void cgroup_limit(const s0__gv_ckpt *c, bool raise, uint64_t by, unsigned long long *old)
{
	char *p = s0__asprintf("/sys/fs/cgroup/memory/%s/%s/memory.limit_in_bytes",
	                       S0__GV_CGROUP_PARENT, c->id);
	FILE *f = p && raise ? fopen(p, "re") : NULL;
	if (f && fscanf(f, "%llu", old) != 1)
		*old = 0;
	if (f)
		fclose(f);
	f = p && *old ? fopen(p, "we") : NULL;
	if (f) {
		fprintf(f, "%llu", raise ? *old + by : *old);
		fclose(f);
	}
	free(p);
}

/* runsc checkpoint into <images>/<id>, then read it all and remove it.
 * The image's pages on the tmpfs are charged to the sandbox's memory
 * cgroup (its sentry writes them): the limit is raised by what the sandbox
 * uses while they exist, so a sandbox near its limit can still be taken. */
static int take(s0__gv_ckpt *c, bool leave_running)
{
	if (c->taken)
		return c->rc;
	c->taken = true;
	c->rc = S0_OK;
	char *idir = images_dir(c->h);
	char *dir = idir ? s0__asprintf("%s/%s", idir, c->id) : NULL;
	char *flag = dir ? s0__asprintf("--image-path=%s", dir) : NULL;
	free(idir);
	if (!flag) {
		free(dir);
		return fail(c, "out of memory");
	}
	s0_error *he = NULL;
	if (s0__gv_images_hold(c->h, &he) < 0) {
		fail(c, "%s", s0_error_message(he));
		s0_error_free(he);
		free(dir);
		free(flag);
		return c->rc;
	}
	rm_rf(dir);
	unsigned long long limit = 0;
	uint64_t usage = 0;
	FILE *uf = fopen(c->cgroup, "re");
	if (uf && fscanf(uf, "%" SCNu64, &usage) != 1)
		usage = 0;
	if (uf)
		fclose(uf);
	cgroup_limit(c, true, usage + (64u << 20), &limit);
	double t0 = mono_ms(), t1 = 0, t2 = 0;
	const char *args[] = {"checkpoint", flag, leave_running ? "--leave-running" : c->id,
	                      leave_running ? c->id : NULL, NULL};
	s0__gv_result res = {0};
	s0_error *e = NULL;
	int rc = mkdir(dir, 0700) < 0 ? fail(c, "cannot make %s: %s", dir, strerror(errno))
	                              : s0__gv_runsc(c->h, args, CHECKPOINT_TIMEOUT_MS, false, &res, &e);
	if (rc < 0 && !c->why[0])
		fail(c, "%s", e ? s0_error_message(e) : "runsc checkpoint failed");
	s0_error_free(e);
	s0__gv_result_clear(&res);
	t1 = mono_ms();
	/* the runtime-only mounts as the processes left them (a sandbox left
	 * running goes on writing: its tmpfs is read right after the image) */
	if (rc == S0_OK)
		rc = pack_tmpfs(c);
	static const char *const state_files[] = {"checkpoint.img", "pages_meta.img"};
	if (rc == S0_OK && rec_begin(&c->state) < 0)
		rc = fail(c, "out of memory");
	/* the exact procd the image's PID 1 runs: a restore stages it (MEM-11) */
	if (rc == S0_OK && rec_procd(&c->state, c->procd) < 0)
		rc = fail(c, "cannot retain procd's binary %s: %s", c->procd, strerror(errno));
	/* the slot the restore re-creates the network namespace with */
	if (rc == S0_OK && rec_add(&c->state, "net_slot", &c->net_slot, sizeof c->net_slot) < 0)
		rc = fail(c, "out of memory");
	/* the contexts, to be bound again to procd's processes after a restore */
	if (rc == S0_OK && c->contexts &&
	    rec_add(&c->state, "contexts", c->contexts, strlen(c->contexts)) < 0)
		rc = fail(c, "out of memory");
	if (rc == S0_OK && c->sessions &&
	    rec_add(&c->state, "sessions", c->sessions, strlen(c->sessions)) < 0)
		rc = fail(c, "out of memory");
	for (size_t i = 0; rc == S0_OK && i < 2; i++) {
		char *p = s0__asprintf("%s/%s", dir, state_files[i]);
		s0__buf f = {0};
		if (!p || read_file(p, &f) < 0)
			rc = fail(c, "cannot read the image file %s: %s", state_files[i], strerror(errno));
		else if (rec_add(&c->state, state_files[i], f.data, f.len) < 0)
			rc = fail(c, "out of memory");
		s0__buf_free(&f);
		free(p);
	}
	t2 = mono_ms();
	char *pages = rc == S0_OK ? s0__asprintf("%s/pages.img", dir) : NULL;
	s0__buf layout = {0};
	if (pages)
		rc = load_pages(c, pages, !leave_running, &layout);
	else if (rc == S0_OK)
		rc = fail(c, "out of memory");
	if (rc == S0_OK && rec_add(&c->state, S0__GV_PAGES_LAYOUT, layout.data, layout.len) < 0)
		rc = fail(c, "out of memory");
	s0__buf_free(&layout);
	free(pages);
	double t3 = mono_ms();
	rm_rf(dir); /* what the engine stores is mapped or copied now */
	s0__gv_images_release(c->h);
	cgroup_limit(c, false, 0, &limit);
	if (getenv("S0_GVISOR_MEM_TRACE")) /* where the time goes (bench/gvisor-memory) */
		fprintf(stderr, "gvisor: checkpoint %s: runsc %.0f ms, state+tmpfs %.0f ms, pages "
		        "cut and mapped %.0f ms, image removed %.0f ms (%llu bytes)\n", c->id, t1 - t0,
		        t2 - t1, t3 - t2, mono_ms() - t3,
		        c->pages ? (unsigned long long)s0__heap_size(c->pages) : 0ULL);
	free(dir);
	free(flag);
	return rc;
}

static int taken_error(s0__gv_ckpt *c, s0_error **err)
{
	fprintf(stderr, "gvisor: memory checkpoint of %s failed: %s\n", c->id, c->why);
	return s0__error_set(err, S0_EMEMCAPTURE, "capture_failed",
	                     "memory checkpoint of runtime %s failed: %s", c->id, c->why);
}

/* ---- the image source ---- */

static int src_seal(void *self, s0_error **err)
{
	s0__gv_ckpt *c = self;
	pthread_mutex_lock(&c->mu);
	int rc = take(c, false);
	if (rc < 0)
		taken_error(c, err);
	pthread_mutex_unlock(&c->mu);
	return rc;
}

static void src_lock(void *self)
{
	(void)self; /* a taken image does not change */
}

static void src_unlock(void *self)
{
	(void)self;
}

static int src_regions(void *self, s0__rt_region **out, size_t *n_out, s0_error **err)
{
	s0__gv_ckpt *c = self;
	pthread_mutex_lock(&c->mu);
	*out = NULL;
	*n_out = 0;
	int rc = S0_OK;
	if (c->taken && c->rc == S0_OK && c->pages) {
		if (!(*out = calloc(1, sizeof **out)))
			rc = s0__error_nomem(err);
		else {
			(*out)[0] = (s0__rt_region){.pid = 1, .heap = s0__heap_ref(c->pages)};
			*n_out = 1;
		}
	} else if (c->taken && c->rc < 0) {
		rc = taken_error(c, err);
	}
	pthread_mutex_unlock(&c->mu);
	return rc;
}

static int dup_buf(const s0__buf *b, void **out, size_t *len, s0_error **err)
{
	*out = malloc(b->len ? b->len : 1);
	if (!*out)
		return s0__error_nomem(err);
	if (b->len)
		memcpy(*out, b->data, b->len);
	*len = b->len;
	return S0_OK;
}

/* The first of state/tmpfs to be asked takes the image (leaving the
 * sandbox running) unless a seal took it already. */
static int src_state(void *self, void **buf, size_t *len, uint64_t *dropped, s0_error **err)
{
	s0__gv_ckpt *c = self;
	pthread_mutex_lock(&c->mu);
	int rc = take(c, true);
	rc = rc < 0 ? taken_error(c, err) : dup_buf(&c->state, buf, len, err);
	pthread_mutex_unlock(&c->mu);
	if (dropped)
		*dropped = 0; /* listening sockets are not counted on this runtime */
	return rc;
}

static int src_tmpfs(void *self, void **buf, size_t *len, s0_error **err)
{
	s0__gv_ckpt *c = self;
	pthread_mutex_lock(&c->mu);
	int rc = take(c, true);
	rc = rc < 0 ? taken_error(c, err) : dup_buf(&c->tmpfs, buf, len, err);
	pthread_mutex_unlock(&c->mu);
	return rc;
}

/* Before the checkpoint: the generation's memory use (it bounds the image). */
static uint64_t src_tmpfs_bytes(void *self)
{
	s0__gv_ckpt *c = self;
	pthread_mutex_lock(&c->mu);
	uint64_t n = c->tmpfs.len;
	if (!c->taken) {
		FILE *f = fopen(c->cgroup, "re");
		unsigned long long v = 0;
		if (f && fscanf(f, "%llu", &v) == 1)
			n = v;
		if (f)
			fclose(f);
	}
	pthread_mutex_unlock(&c->mu);
	return n;
}

static void src_release(void *self)
{
	s0__gv_ckpt_unref(self);
}

static void strv_free(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) /* NULL entries allowed */
		free(v[i]);
	free(v);
}

void s0__gv_ckpt_unref(s0__gv_ckpt *c)
{
	if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
		return;
	s0__heap_unref(c->pages);
	s0__buf_free(&c->state);
	s0__buf_free(&c->tmpfs);
	strv_free(c->paths, c->n);
	strv_free(c->dirs, c->n);
	free(c->id);
	free(c->cgroup);
	free(c->procd);
	free(c->contexts);
	free(c->sessions);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

static s0__gv_ckpt *ckpt_new(s0__rt_gen *g)
{
	s0__gv_ckpt *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	atomic_init(&c->refs, 1);
	pthread_mutex_init(&c->mu, NULL);
	c->h = g->h;
	c->id = s0__strdup(g->id);
	c->cgroup = s0__asprintf("/sys/fs/cgroup/memory/%s/%s/memory.usage_in_bytes",
	                         S0__GV_CGROUP_PARENT, g->id);
	c->paths = calloc(g->n_rt + 1, sizeof *c->paths);
	c->dirs = calloc(g->n_rt + 1, sizeof *c->dirs);
	c->procd = g->procd_dir ? s0__asprintf("%s/%s", g->procd_dir, S0__GV_PROCD_NAME) : NULL;
	c->n = g->n_rt; /* calloc'd: entries not copied are NULL */
	c->net_slot = g->net ? s0__gv_net_slot(g->net) : -1;
	bool ok = c->id && c->cgroup && c->procd && c->paths && c->dirs;
	for (size_t i = 0; ok && i < g->n_rt; i++)
		ok = (c->paths[i] = s0__strdup(g->rt_paths[i])) &&
		     (c->dirs[i] = s0__strdup(g->rt_dirs[i]));
	if (!ok) {
		s0__gv_ckpt_unref(c);
		return NULL;
	}
	return c;
}

int s0__gv_capture(s0__rt_gen *g, s0__rt_image_src *out, s0_error **err)
{
	const char *missing = s0__gv_mem_missing(g->h);
	if (missing)
		return s0__error_set(err, S0_EUNAVAILABLE, "memory_unsupported",
		                     "the gvisor runtime cannot take memory checkpoints here: %s",
		                     missing);
	pthread_mutex_lock(&g->h->mu);
	bool used = false;
	if (g->ck) {
		pthread_mutex_lock(&g->ck->mu);
		used = g->ck->taken;
		pthread_mutex_unlock(&g->ck->mu);
	}
	if (used) { /* a fork's image was taken: the next capture takes a new one */
		s0__gv_ckpt_unref(g->ck);
		g->ck = NULL;
	}
	if (!g->ck)
		g->ck = ckpt_new(g);
	s0__gv_ckpt *c = g->ck;
	if (c)
		atomic_fetch_add(&c->refs, 1);
	pthread_mutex_unlock(&g->h->mu);
	if (!c)
		return s0__error_nomem(err);
	/* the contexts as they are now (a later seal takes the image with them) */
	char *ctxs = s0__gv_ctxs_save(g->ctxs), *ses = s0__gv_ses_save(g->ses);
	pthread_mutex_lock(&c->mu);
	if (!c->taken) {
		free(c->contexts);
		c->contexts = ctxs;
		ctxs = NULL;
		free(c->sessions);
		c->sessions = ses;
		ses = NULL;
	}
	pthread_mutex_unlock(&c->mu);
	free(ctxs);
	free(ses);
	*out = (s0__rt_image_src){
		.self = c,
		.lock = src_lock,
		.unlock = src_unlock,
		.regions_locked = src_regions,
		.state_locked = src_state,
		.tmpfs_blob = src_tmpfs,
		.tmpfs_bytes = src_tmpfs_bytes,
		.seal = src_seal,
		.release = src_release,
	};
	return S0_OK;
}
