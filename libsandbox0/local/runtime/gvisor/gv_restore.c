/*
 * The restore side of the gvisor driver's memory checkpoints (gv_mem.h):
 * an image the checkpoint engine read becomes a fresh directory on the
 * driver's image tmpfs holding checkpoint.img and pages_meta.img, and
 * pages.img served lazily from the engine (gv_pagefile.h: its chunk table
 * verified here, each chunk verified as runsc reads it); start() continues
 * it with `runsc restore --background` after unpacking the runtime-only
 * mounts, having re-created the network namespace with the slot recorded
 * at capture (s0__gv_restore_net).
 * The procd binary the capture retained is written there too: start()
 * stages it as the sandbox's PID 1 (MEM-11); an image without it fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "local/runtime/gvisor/gv_int.h"
#include "local/runtime/gvisor/gv_pagefile.h"
#include "local/runtime/gvisor/gv_pages.h"

#define RESTORE_TIMEOUT_MS 600000

struct s0__rt_image {
	s0__rt_host *h; /* holds the image tmpfs while it lives */
	char *dir;    /* the image directory runsc restores from */
	char *procd;  /* <dir>/s0-procd: the procd binary of the capture */
	void *tmpfs;  /* the tmpfs records (owned) */
	size_t tmpfs_len;
	int32_t net_slot; /* the network slot at capture, -1 when none was recorded */
	char *contexts;   /* (nullable) the contexts table at capture */
	char *sessions;   /* (nullable) the session attempts at capture */
	s0__gv_pagefile *pages; /* pages.img, served until runsc holds it */
};

/* Milliseconds on the monotonic clock. */
static double mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- records (gv_checkpoint.c writes them) ---- */

typedef struct recs {
	const uint8_t *p, *end;
} recs;

static bool recs_open(recs *r, const void *buf, size_t len)
{
	r->p = buf;
	r->end = r->p + len;
	uint32_t v;
	if (!buf || len < 8 || memcmp(buf, "S0GV", 4))
		return false;
	memcpy(&v, r->p + 4, sizeof v);
	r->p += 8;
	return v == 1;
}

/* The next record: 1, 0 at the end, -1 when damaged. */
static int recs_next(recs *r, const char **name, size_t *name_len, const uint8_t **data,
                     uint64_t *len)
{
	if (r->p == r->end)
		return 0;
	uint32_t nl;
	if ((size_t)(r->end - r->p) < sizeof nl)
		return -1;
	memcpy(&nl, r->p, sizeof nl);
	r->p += sizeof nl;
	if ((size_t)(r->end - r->p) < (size_t)nl + sizeof *len)
		return -1;
	*name = (const char *)r->p;
	*name_len = nl;
	r->p += nl;
	memcpy(len, r->p, sizeof *len);
	r->p += sizeof *len;
	if ((uint64_t)(r->end - r->p) < *len)
		return -1;
	*data = r->p;
	r->p += *len;
	return 1;
}

static int corrupt(s0_error **err, const char *what)
{
	return s0__error_set(err, S0_ECORRUPT, "image_corrupt", "gvisor memory image: %s", what);
}

static int write_all(int fd, const void *buf, size_t len, off_t off)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = pwrite(fd, p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

static int put_file(const char *dir, const char *name, const void *data, size_t len,
                    s0_error **err)
{
	char *p = s0__asprintf("%s/%s", dir, name);
	int fd = p ? open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600) : -1;
	int rc = fd >= 0 && write_all(fd, data, len, 0) == 0 ? S0_OK : -1;
	if (rc < 0)
		rc = s0__error_set(err, S0_EIO, "runtime_unavailable", "cannot write %s: %s",
		                   p ? p : name, strerror(errno));
	if (fd >= 0)
		close(fd);
	free(p);
	return rc;
}

static void rm_rf(const char *p)
{
	char *const argv[] = {"/bin/rm", "-rf", (char *)p, NULL};
	s0__gv_result res;
	s0__gv_run(argv, NULL, 0, 60000, &res, NULL);
	s0__gv_result_clear(&res);
}

void s0__gv_image_free(s0__rt_image *img)
{
	if (!img)
		return;
	s0__gv_pagefile_drop(img->pages); /* not handed to runsc: nothing reads it */
	if (img->dir)
		rm_rf(img->dir);
	if (img->h)
		s0__gv_images_release(img->h);
	free(img->dir);
	free(img->procd);
	free(img->tmpfs);
	free(img->contexts);
	free(img->sessions);
	free(img);
}

int s0__gv_image_restore(s0__rt_host *h, const s0__rt_image_data *d, s0__rt_image **out,
                         s0_error **err)
{
	static atomic_uint seq;
	recs r;
	if (!recs_open(&r, d->state, d->state_len))
		return corrupt(err, "bad state blob");
	if (d->tmpfs && !recs_open(&(recs){0}, d->tmpfs, d->tmpfs_len))
		return corrupt(err, "bad tmpfs blob");
	s0__rt_image *img = calloc(1, sizeof *img);
	if (!img)
		return s0__error_nomem(err);
	int hrc = s0__gv_images_hold(h, err);
	if (hrc < 0) {
		free(img);
		return hrc;
	}
	img->h = h;
	img->net_slot = -1;
	img->dir = s0__asprintf("%s/images/restore-%d-%u", h->dir, (int)getpid(),
	                        atomic_fetch_add(&seq, 1));
	if (d->tmpfs && (img->tmpfs = malloc(d->tmpfs_len ? d->tmpfs_len : 1))) {
		memcpy(img->tmpfs, d->tmpfs, d->tmpfs_len);
		img->tmpfs_len = d->tmpfs_len;
	}
	int rc = !img->dir || (d->tmpfs && !img->tmpfs) ? s0__error_nomem(err) : S0_OK;
	if (rc == S0_OK && mkdir(img->dir, 0700) < 0) {
		rc = s0__error_set(err, S0_EIO, "runtime_unavailable", "cannot make %s: %s",
		                   img->dir, strerror(errno));
		free(img->dir);
		img->dir = NULL; /* not ours */
	}
	const char *name;
	size_t nl;
	const uint8_t *data;
	uint64_t len;
	int got, files = 0;
	const uint8_t *layout = NULL; /* pages.img's pieces (gv_pages.h); none in older images */
	uint64_t layout_len = 0;
	while (rc == S0_OK && (got = recs_next(&r, &name, &nl, &data, &len)) == 1) {
		char fname[32];
		if (nl == 0 || nl >= sizeof fname) {
			rc = corrupt(err, "bad file name in the state blob");
			break;
		}
		memcpy(fname, name, nl);
		fname[nl] = '\0';
		if (!strcmp(fname, "net_slot")) {
			if (len != sizeof img->net_slot) {
				rc = corrupt(err, "bad network slot in the state blob");
				break;
			}
			memcpy(&img->net_slot, data, sizeof img->net_slot);
			continue;
		}
		if (!strcmp(fname, "pad")) /* procd's chunk boundary (gv_checkpoint.c) */
			continue;
		if (!strcmp(fname, "procd")) { /* the binary PID 1 runs (MEM-11) */
			rc = img->procd || !len ? corrupt(err, "bad procd record in the state blob")
			                        : put_file(img->dir, S0__GV_PROCD_NAME, data, (size_t)len, err);
			if (rc == S0_OK && !(img->procd = s0__asprintf("%s/%s", img->dir,
			                                               S0__GV_PROCD_NAME)))
				rc = s0__error_nomem(err);
			continue;
		}
		if (!strcmp(fname, S0__GV_PAGES_LAYOUT)) {
			layout = data;
			layout_len = len;
			continue;
		}
		if (!strcmp(fname, "contexts") || !strcmp(fname, "sessions")) {
			char **to = fname[0] == 'c' ? &img->contexts : &img->sessions;
			free(*to);
			if (!(*to = s0__strndup((const char *)data, (size_t)len)))
				rc = s0__error_nomem(err);
			continue;
		}
		if (strcmp(fname, "checkpoint.img") && strcmp(fname, "pages_meta.img")) {
			rc = corrupt(err, "unknown file in the state blob");
			break;
		}
		rc = put_file(img->dir, fname, data, (size_t)len, err);
		files++;
	}
	if (rc == S0_OK && (got < 0 || files != 2))
		rc = corrupt(err, "damaged state blob");
	if (rc == S0_OK && !img->procd)
		rc = corrupt(err, "no procd binary retained with the image");
	double t0 = mono_ms();
	if (rc == S0_OK && d->nregions != 1)
		rc = corrupt(err, "it must hold exactly one memory region");
	s0__gv_slot *slots = NULL; /* where each chunk goes in pages.img (gv_pages.h) */
	size_t nslots = 0;
	uint64_t file_bytes = 0;
	if (rc == S0_OK)
		rc = s0__gv_pages_slots(layout, (size_t)layout_len, d->regions[0].size_bytes,
		                        d->regions[0].chunk_bytes, &slots, &nslots, &file_bytes, err);
	char *pages = rc == S0_OK ? s0__asprintf("%s/pages.img", img->dir) : NULL;
	if (rc == S0_OK && !pages)
		rc = s0__error_nomem(err);
	if (rc == S0_OK) /* served lazily: the chunk table verified now */
		rc = s0__gv_pagefile_start(pages, &d->regions[0], slots, nslots, file_bytes, d->pager,
		                           &img->pages, err);
	free(pages);
	free(slots);
	if (getenv("S0_GVISOR_MEM_TRACE")) /* where the time goes (bench/gvisor-memory) */
		fprintf(stderr, "gvisor: restore: pages file served in %.0f ms\n", mono_ms() - t0);
	if (rc < 0) {
		s0__gv_image_free(img);
		return rc;
	}
	*out = img;
	return S0_OK;
}

const char *s0__gv_image_procd(const s0__rt_image *img)
{
	return img->procd;
}

int s0__gv_restore_net(s0__rt_gen *g, const s0__rt_image *img, s0_error **err)
{
	/* runsc restore takes the addresses of the namespace's interface as it
	 * finds them: the slot of the capture when it is free, else the lowest
	 * free one (a memory fork's source still holds it; connections are not
	 * promised across a restore) */
	return s0__gv_net_prepare(g->h->hub, g->id, img->net_slot, &g->net, err);
}

/* Unpack each tmpfs record into the mount of the same path. */
static int unpack_tmpfs(s0__rt_gen *g, const s0__rt_image *img, s0_error **err)
{
	recs r;
	if (!img->tmpfs)
		return S0_OK;
	if (!recs_open(&r, img->tmpfs, img->tmpfs_len))
		return corrupt(err, "bad tmpfs blob");
	const char *name;
	size_t nl;
	const uint8_t *data;
	uint64_t len;
	int got, rc = S0_OK;
	while (rc == S0_OK && (got = recs_next(&r, &name, &nl, &data, &len)) == 1) {
		size_t i = 0;
		while (i < g->n_rt && (strlen(g->rt_paths[i]) != nl || memcmp(g->rt_paths[i], name, nl)))
			i++;
		if (i == g->n_rt) {
			rc = s0__error_set(err, S0_ECORRUPT, "image_corrupt",
			                   "the image carries a runtime mount %.*s this sandbox lacks",
			                   (int)nl, name);
			break;
		}
		char *const argv[] = {"/bin/tar", "--numeric-owner", "-C", g->rt_dirs[i], "-xf", "-", NULL};
		s0__gv_result res;
		rc = s0__gv_run(argv, data, (size_t)len, RESTORE_TIMEOUT_MS, &res, err);
		if (rc == S0_OK && res.status != 0)
			rc = s0__error_set(err, S0_ECORRUPT, "image_corrupt",
			                   "cannot unpack %.*s of the image: %.300s", (int)nl, name,
			                   res.err.data ? res.err.data : "");
		s0__gv_result_clear(&res);
	}
	if (rc == S0_OK && got < 0)
		rc = corrupt(err, "damaged tmpfs blob");
	return rc;
}

int s0__gv_restore_run(s0__rt_gen *g, s0__rt_image *img, s0_error **err)
{
	int rc = unpack_tmpfs(g, img, err);
	if (rc < 0)
		return rc;
	char *bflag = s0__asprintf("--bundle=%s", g->bundle);
	char *iflag = s0__asprintf("--image-path=%s", img->dir);
	const char *args[] = {"restore", "--detach", "--background", iflag, bflag, g->id, NULL};
	s0_error *e = NULL;
	double t0 = mono_ms();
	/* fresh pipes as procd's stdin and stdout: the restored procd reads the
	 * new one and the channel attaches without a hello (gv_init.c) */
	rc = bflag && iflag ? s0__gv_init_run(g, args, true, &e) : s0__error_nomem(err);
	if (bflag && iflag) {
		if (rc < 0)
			rc = s0__error_set(err, S0_EUNAVAILABLE, "restore_failed",
			                   "runsc restore failed: %s", e ? s0_error_message(e) : "?");
		s0_error_free(e);
	}
	if (getenv("S0_GVISOR_MEM_TRACE"))
		fprintf(stderr, "gvisor: restore: runsc restore %.0f ms\n", mono_ms() - t0);
	char why[320];
	if (rc == S0_OK && s0__gv_pagefile_damaged(img->pages, why, sizeof why))
		/* found before the generation runs: a failed restore (the fallback);
		 * runsc's loader has killed the sandbox */
		rc = s0__error_set(err, S0_ECORRUPT, "chunk_damaged",
		                   "the memory image is damaged: %s", why);
	if (rc == S0_OK) { /* runsc holds pages.img: the server ends when it is loaded */
		s0__gv_pagefile_hand(img->pages);
		img->pages = NULL;
	}
	/* the contexts of the capture, bound to the processes procd kept */
	if (rc == S0_OK)
		rc = s0__gv_ctxs_adopt(g->ctxs, img->contexts, err);
	if (rc == S0_OK) /* and the session attempts (the registry binds them later) */
		rc = s0__gv_ses_restore(g->ses, img->sessions, err);
	free(bflag);
	free(iflag);
	return rc;
}
