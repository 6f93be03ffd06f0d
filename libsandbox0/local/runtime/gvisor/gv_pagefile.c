/*
 * The lazy pages file (gv_pagefile.h): a libfuse3 low-level server in
 * threads of this process whose root is a regular file (libfuse mounts with
 * the mount point's file type as rootmode, so the mount covers the empty
 * pages.img itself). runsc's background loader preads the file in pieces
 * of 256 KiB, many at a time (gVisor's stateio.FDReader over the donated
 * descriptor; no mmap, no O_DIRECT unless `--direct`), so a plain read path
 * is all it needs. Files are opened FOPEN_DIRECT_IO: no page cache holds a
 * second copy of the pages.
 *
 * Chunks: none → loading (one thread fetches, the others wait) → ready
 * (bytes held) → served (every byte read once: freed) or bad (fetch failed:
 * every read of it answers EIO). An owner thread fetches ahead in file
 * order, at most PF_AHEAD chunks held, then waits for the end (the file
 * handed and closed, or dropped) and tears the server down.
 *
 * Scheduling (what keeps time to running flat in the image size): runsc's
 * loader queues up to 128 large reads of its front-to-back sweep, and a
 * task that touches a page not loaded yet makes it read that page's range
 * (a small read). The receiving threads serve small reads at once; large
 * ones go to a queue the bulk threads serve in order, at nice + 10, one at
 * a time until `runsc restore` returned (then PF_BULK). Measured in
 * docs/memory-gvisor.md.
 */
#define FUSE_USE_VERSION 312
#include <fuse3/fuse_lowlevel.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "common/deadline.h"
#include "local/runtime/gvisor/gv_pagefile.h"
#include "local/runtime/heap.h"

#define PF_THREADS 4 /* receive requests; serve the small (waited-for) reads */
#define PF_BULK 2    /* serve the loader's large reads, in arrival order */
#define PF_BULK_MIN (128u << 10) /* a read this large is the loader's sweep */
#define PF_AHEAD 64 /* chunks the owner fetches ahead of the reads */

enum { C_NONE, C_LOADING, C_READY, C_SERVED, C_BAD };

/* A large read waiting for a bulk thread. */
typedef struct pf_read {
	fuse_req_t req;
	size_t size;
	off_t off;
	struct pf_read *next;
} pf_read;

typedef struct pf_chunk {
	uint8_t st;
	uint8_t *data;   /* the chunk's bytes while ready */
	uint64_t served; /* bytes of it read so far */
} pf_chunk;

struct s0__gv_pagefile {
	char *path;
	struct fuse_session *se;
	pthread_t th[PF_THREADS + PF_BULK];
	int nth, nbulk;
	int nbulk_run; /* bulk threads that started (the first sweeps from the start) */
	pf_read *q_head, *q_tail; /* large reads not served yet (under mu) */
	bool q_stop;
	pthread_t owner;
	bool owner_started;
	unsigned conn; /* FUSE connection number (minor of the mount's st_dev) */
	s0__pager *pager;
	uint64_t size;  /* pages.img's size */
	uint32_t chunk; /* the region's chunk size */
	size_t n;       /* chunks */
	s0__gv_slot *slots; /* chunk i is pages.img's [off, off + len) */
	s0__objid *ids; /* every chunk's object id (zero: a zero chunk) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pf_chunk *c;
	size_t held;  /* chunks ready */
	int opens;    /* opens of the file not released */
	bool handed;  /* runsc holds the file; end when opens drops to 0 */
	bool ending;  /* dropped: stop fetching and end */
	bool damaged; /* a chunk failed */
	char why[300];
	double t0, t_first; /* start, first read (ms, monotonic; S0_GVISOR_MEM_TRACE) */
	uint64_t fetched;   /* chunks fetched */
};

/* Pages files alive in this process (s0__gv_pagefile_wait_all). */
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t live_cv = PTHREAD_COND_INITIALIZER;
static int live;

static void quiet_log(enum fuse_log_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
}

static double mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static uint64_t chunk_len(const s0__gv_pagefile *pf, size_t i)
{
	return pf->slots[i].len;
}

/* The chunk holding byte @p pos of pages.img (pos < size). */
static size_t chunk_at(const s0__gv_pagefile *pf, uint64_t pos)
{
	size_t lo = 0, hi = pf->n; /* the last slot with off <= pos */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (pf->slots[mid].off <= pos)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Chunk i ready (mu held; dropped while fetching). 0, or -1 when bad. */
static int chunk_get(s0__gv_pagefile *pf, size_t i)
{
	for (;;) {
		pf_chunk *c = &pf->c[i];
		if (c->st == C_READY)
			return 0;
		if (c->st == C_BAD)
			return -1;
		if (c->st == C_LOADING) {
			pthread_cond_wait(&pf->cv, &pf->mu);
			continue;
		}
		c->st = C_LOADING; /* none or served (a second read): fetch it */
		pthread_mutex_unlock(&pf->mu);
		s0_error *e = NULL;
		uint8_t *buf = malloc(pf->chunk);
		int rc = buf ? S0_OK : s0__error_nomem(&e);
		if (rc == S0_OK && s0__objid_is_zero(&pf->ids[i]))
			memset(buf, 0, pf->chunk);
		else if (rc == S0_OK) /* fetch, decrypt, decompress, verify */
			rc = s0__pager_fetch(pf->pager, &pf->ids[i], buf, pf->chunk, &e);
		pthread_mutex_lock(&pf->mu);
		if (rc == S0_OK) {
			c->st = C_READY;
			c->data = buf;
			c->served = 0;
			pf->held++;
			pf->fetched++;
		} else {
			free(buf);
			c->st = C_BAD;
			if (!pf->damaged)
				snprintf(pf->why, sizeof pf->why, "chunk %zu of pages.img: %s", i,
				         e ? s0_error_message(e) : "?");
			pf->damaged = true;
		}
		s0_error_free(e);
		pthread_cond_broadcast(&pf->cv);
	}
}

/* ---- FUSE operations (the root inode is the file) ---- */

static void fill_attr(const s0__gv_pagefile *pf, struct stat *st)
{
	memset(st, 0, sizeof *st);
	st->st_ino = FUSE_ROOT_ID;
	st->st_mode = S_IFREG | 0400;
	st->st_nlink = 1;
	st->st_size = (off_t)pf->size;
	st->st_blocks = (blkcnt_t)((pf->size + 511) / 512);
	st->st_blksize = 4096;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	(void)parent;
	(void)name;
	fuse_reply_err(req, ENOTDIR);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)fi;
	s0__gv_pagefile *pf = fuse_req_userdata(req);
	if (ino != FUSE_ROOT_ID) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	struct stat st;
	fill_attr(pf, &st);
	fuse_reply_attr(req, &st, 3600.0);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	s0__gv_pagefile *pf = fuse_req_userdata(req);
	if (ino != FUSE_ROOT_ID || (fi->flags & O_ACCMODE) != O_RDONLY) {
		fuse_reply_err(req, EACCES);
		return;
	}
	fi->direct_io = 1;
	fi->keep_cache = 0;
	pthread_mutex_lock(&pf->mu);
	pf->opens++;
	pthread_mutex_unlock(&pf->mu);
	if (fuse_reply_open(req, fi) != 0) { /* the opener is gone: no release comes */
		pthread_mutex_lock(&pf->mu);
		pf->opens--;
		pthread_cond_broadcast(&pf->cv);
		pthread_mutex_unlock(&pf->mu);
	}
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	s0__gv_pagefile *pf = fuse_req_userdata(req);
	pthread_mutex_lock(&pf->mu);
	pf->opens--;
	pthread_cond_broadcast(&pf->cv);
	pthread_mutex_unlock(&pf->mu);
	fuse_reply_err(req, 0);
}

/* Answer one read from the chunks (fetching what is missing). */
static void serve_read(s0__gv_pagefile *pf, fuse_req_t req, size_t size, off_t off)
{
	if (off < 0 || (uint64_t)off >= pf->size) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if ((uint64_t)off + size > pf->size)
		size = (size_t)(pf->size - (uint64_t)off);
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	bool bad = false;
	size_t done = 0;
	pthread_mutex_lock(&pf->mu);
	if (!pf->t_first)
		pf->t_first = mono_ms();
	while (done < size) {
		uint64_t pos = (uint64_t)off + done;
		size_t i = chunk_at(pf, pos);
		uint64_t in = pos - pf->slots[i].off, left = pf->slots[i].len - in;
		size_t n = (size_t)(left < size - done ? left : size - done);
		if (chunk_get(pf, i) < 0) {
			bad = true;
			break;
		}
		pf_chunk *c = &pf->c[i];
		memcpy(buf + done, c->data + in, n);
		c->served += n;
		if (c->served >= chunk_len(pf, i)) { /* every byte read: runsc loads each once */
			free(c->data);
			c->data = NULL;
			c->st = C_SERVED;
			pf->held--;
			pthread_cond_broadcast(&pf->cv);
		}
		done += n;
	}
	pthread_mutex_unlock(&pf->mu);
	if (bad)
		fuse_reply_err(req, EIO); /* runsc's loader fails: the sandbox is killed */
	else
		fuse_reply_buf(req, (const char *)buf, size);
	free(buf);
}

/* runsc's loader sweeps the file in reads of 256 KiB, many queued at once,
 * and reads the few pages a task waits for as small reads: those are served
 * at once by the receiving thread, the sweep by the bulk threads in order,
 * so a waiting task never queues behind the sweep. */
static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	s0__gv_pagefile *pf = fuse_req_userdata(req);
	pf_read *r = size >= PF_BULK_MIN ? malloc(sizeof *r) : NULL;
	if (!r) {
		serve_read(pf, req, size, off);
		return;
	}
	*r = (pf_read){.req = req, .size = size, .off = off};
	pthread_mutex_lock(&pf->mu);
	if (pf->q_tail)
		pf->q_tail->next = r;
	else
		pf->q_head = r;
	pf->q_tail = r;
	pthread_cond_broadcast(&pf->cv);
	pthread_mutex_unlock(&pf->mu);
}

/* This thread yields the CPU to the sandbox and to the waited-for reads:
 * the sweep is background work (nice + 10). */
static void background_thread(void)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);
	errno = 0;
	int cur = getpriority(PRIO_PROCESS, (id_t)tid);
	if (errno == 0)
		setpriority(PRIO_PROCESS, (id_t)tid, cur + 10 > 19 ? 19 : cur + 10);
}

static void *bulk(void *arg)
{
	s0__gv_pagefile *pf = arg;
	background_thread();
	pthread_mutex_lock(&pf->mu);
	bool first = pf->nbulk_run++ == 0;
	for (;;) {
		/* one sweeping thread until runsc restore returned: the restore
		 * and the sandbox's first steps keep the CPU */
		while ((!pf->q_head || (!first && !pf->handed)) && !pf->q_stop)
			pthread_cond_wait(&pf->cv, &pf->mu);
		pf_read *r = pf->q_head;
		if (!r)
			break; /* stopping and nothing left */
		pf->q_head = r->next;
		if (!pf->q_head)
			pf->q_tail = NULL;
		pthread_mutex_unlock(&pf->mu);
		if (pf->q_stop)
			fuse_reply_err(r->req, EIO);
		else
			serve_read(pf, r->req, r->size, r->off);
		free(r);
		pthread_mutex_lock(&pf->mu);
	}
	pthread_mutex_unlock(&pf->mu);
	return NULL;
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
                       struct fuse_file_info *fi)
{
	(void)ino;
	(void)attr;
	(void)to_set;
	(void)fi;
	fuse_reply_err(req, EPERM);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

static const struct fuse_lowlevel_ops pf_ops = {
	.lookup = op_lookup,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.open = op_open,
	.read = op_read,
	.flush = op_flush,
	.release = op_release,
};

static void *serve(void *arg)
{
	s0__gv_pagefile *pf = arg;
	struct fuse_buf fbuf;
	memset(&fbuf, 0, sizeof fbuf);
	while (!fuse_session_exited(pf->se)) {
		int res = fuse_session_receive_buf(pf->se, &fbuf);
		if (res == -EINTR || res == -EAGAIN)
			continue;
		if (res <= 0)
			break; /* -ENODEV: unmounted or aborted */
		fuse_session_process_buf(pf->se, &fbuf);
	}
	free(fbuf.mem);
	return NULL;
}

/* Abort our connection through fusectl (mounted here if needed): every
 * pending and later request fails and the server threads see ENODEV,
 * whichever namespaces still hold a copy of the mount. */
static void abort_conn(const s0__gv_pagefile *pf)
{
	const char *dir = "/sys/fs/fuse/connections";
	char path[96];
	snprintf(path, sizeof path, "%s/%u/abort", dir, pf->conn);
	if (access(path, W_OK) != 0)
		mount("fusectl", dir, "fusectl", 0, NULL);
	FILE *f = fopen(path, "we");
	if (f) {
		fputs("1", f);
		fclose(f);
	}
}

static void pf_free(s0__gv_pagefile *pf)
{
	for (size_t i = 0; pf->c && i < pf->n; i++)
		free(pf->c[i].data);
	free(pf->c);
	free(pf->ids);
	free(pf->slots);
	s0__pager_unref(pf->pager);
	pthread_cond_destroy(&pf->cv);
	pthread_mutex_destroy(&pf->mu);
	free(pf->path);
	free(pf);
}

/* Stop serving: the mount goes from this namespace (unless handed: gone
 * already), the connection is aborted, the threads joined. */
static void teardown(s0__gv_pagefile *pf)
{
	fuse_session_exit(pf->se);
	if (!pf->handed)
		umount2(pf->path, MNT_DETACH);
	if (pf->conn)
		abort_conn(pf);
	for (int i = 0; i < pf->nth; i++)
		pthread_join(pf->th[i], NULL);
	pthread_mutex_lock(&pf->mu);
	pf->q_stop = true; /* reads still queued fail (the connection is gone) */
	pthread_cond_broadcast(&pf->cv);
	pthread_mutex_unlock(&pf->mu);
	for (int i = 0; i < pf->nbulk; i++)
		pthread_join(pf->th[PF_THREADS + i], NULL);
	fuse_session_destroy(pf->se);
	unlink(pf->path);
}

static void live_add(int d)
{
	pthread_mutex_lock(&live_mu);
	live += d;
	pthread_cond_broadcast(&live_cv);
	pthread_mutex_unlock(&live_mu);
}

/* The owner: fetch ahead in file order, then wait for the end. */
static void *owner(void *arg)
{
	s0__gv_pagefile *pf = arg;
	background_thread();
	pthread_mutex_lock(&pf->mu);
	for (size_t i = 0;;) {
		while (!pf->ending && !(pf->handed && pf->opens == 0) && pf->held >= PF_AHEAD)
			pthread_cond_wait(&pf->cv, &pf->mu);
		if (pf->ending || (pf->handed && pf->opens == 0))
			break;
		while (i < pf->n && pf->c[i].st != C_NONE)
			i++;
		if (i == pf->n)
			break;
		chunk_get(pf, i); /* a bad chunk is kept as such: its reads fail */
	}
	while (!pf->ending && !(pf->handed && pf->opens == 0))
		pthread_cond_wait(&pf->cv, &pf->mu);
	bool handed = pf->handed;
	pthread_mutex_unlock(&pf->mu);
	if (getenv("S0_GVISOR_MEM_TRACE")) /* where the time goes (bench/gvisor-memory) */
		fprintf(stderr,
		        "gvisor: pages file: %zu chunks, %llu fetched, first read at %.0f ms, "
		        "closed at %.0f ms%s\n",
		        pf->n, (unsigned long long)pf->fetched, pf->t_first ? pf->t_first - pf->t0 : -1,
		        mono_ms() - pf->t0, pf->damaged ? " (damaged)" : "");
	if (handed) { /* nobody joins us: end here */
		teardown(pf);
		pf_free(pf);
		live_add(-1);
	}
	return NULL;
}

/* The region's chunk ids, every chunk-table page fetched (and verified). */
static int read_index(s0__gv_pagefile *pf, const s0__heap_image *r, s0_error **err)
{
	size_t need = (pf->n + S0__HEAP_IDS_PER_PAGE - 1) / S0__HEAP_IDS_PER_PAGE;
	if (r->npages != need || (need && !r->pages))
		return s0__error_set(err, S0_ECORRUPT, "image_corrupt",
		                     "gvisor memory image: %zu chunk-table pages for %zu chunks",
		                     r->npages, pf->n);
	for (size_t p = 0; p < need; p++) {
		size_t first = p * S0__HEAP_IDS_PER_PAGE;
		size_t k = pf->n - first < S0__HEAP_IDS_PER_PAGE ? pf->n - first
		                                                 : S0__HEAP_IDS_PER_PAGE;
		int rc = s0__pager_fetch_ids(pf->pager, &r->pages[p], &pf->ids[first], k, err);
		if (rc < 0)
			return rc;
	}
	return S0_OK;
}

/* The slots cover pages.img back to back, each inside its chunk. */
static bool slots_ok(const s0__gv_slot *slots, size_t n, uint64_t file_bytes, uint32_t chunk)
{
	uint64_t at = 0;
	for (size_t i = 0; i < n; i++) {
		if (slots[i].off != at || !slots[i].len || slots[i].len > chunk)
			return false;
		at += slots[i].len;
	}
	return at == file_bytes;
}

int s0__gv_pagefile_start(const char *path, const s0__heap_image *r, const s0__gv_slot *slots,
                          size_t nslots, uint64_t file_bytes, s0__pager *pager,
                          s0__gv_pagefile **out, s0_error **err)
{
	if (!path || !r || !pager || !out || (nslots && !slots) || r->chunk_bytes < S0__HEAP_CHUNK_MIN ||
	    r->chunk_bytes > S0__HEAP_CHUNK_MAX || r->size_bytes > S0__HEAP_MAX_BYTES)
		return s0__error_set(err, S0_EINVAL, "invalid_request",
		                     "a pages file needs a path, a region, its slots and a pager");
	if (nslots != (size_t)((r->size_bytes + r->chunk_bytes - 1) / r->chunk_bytes) ||
	    !slots_ok(slots, nslots, file_bytes, r->chunk_bytes))
		return s0__error_set(err, S0_ECORRUPT, "image_corrupt",
		                     "gvisor memory image: the pages layout does not match its region");
	s0__gv_pagefile *pf = calloc(1, sizeof *pf);
	if (!pf)
		return s0__error_nomem(err);
	pthread_mutex_init(&pf->mu, NULL);
	pthread_cond_init(&pf->cv, NULL);
	pf->pager = s0__pager_ref(pager);
	pf->size = file_bytes;
	pf->chunk = r->chunk_bytes;
	pf->n = nslots;
	pf->slots = malloc((nslots ? nslots : 1) * sizeof *slots);
	if (pf->slots && nslots)
		memcpy(pf->slots, slots, nslots * sizeof *slots);
	pf->path = s0__strdup(path);
	pf->t0 = mono_ms();
	pf->ids = calloc(pf->n ? pf->n : 1, sizeof *pf->ids);
	pf->c = calloc(pf->n ? pf->n : 1, sizeof *pf->c);
	int rc = pf->path && pf->ids && pf->c && pf->slots ? S0_OK : s0__error_nomem(err);
	if (rc == S0_OK)
		rc = read_index(pf, r, err); /* the index verified before anything runs */
	int fd = rc == S0_OK ? open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400) : -1;
	if (rc == S0_OK && fd < 0)
		rc = s0__error_set(err, S0_EIO, "runtime_unavailable", "cannot make %s: %s", path,
		                   strerror(errno));
	if (fd >= 0)
		close(fd);
	if (rc < 0) {
		if (fd >= 0)
			unlink(path);
		pf_free(pf);
		return rc;
	}
	fuse_set_log_func(quiet_log); /* the library never writes to stderr */
	/* allow_other: runsc may open it from a user namespace; default_permissions:
	 * the kernel checks the file's mode (0400, root) — the pages are the
	 * sandbox's memory */
	char *argv[] = {"s0pages", "-o",
	                "fsname=s0pages,subtype=s0pages,allow_other,default_permissions,ro", NULL};
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	pf->se = fuse_session_new(&args, &pf_ops, sizeof pf_ops, pf);
	fuse_opt_free_args(&args);
	if (!pf->se || fuse_session_mount(pf->se, path) != 0) {
		rc = s0__error_set(err, S0_EIO, "runtime_unavailable",
		                   "cannot mount the pages file at %s (FUSE)", path);
		if (pf->se)
			fuse_session_destroy(pf->se);
		unlink(path);
		pf_free(pf);
		return rc;
	}
	for (int i = 0; rc == S0_OK && i < PF_THREADS; i++) {
		if (pthread_create(&pf->th[i], NULL, serve, pf) != 0)
			rc = s0__error_set(err, S0_EIO, "runtime_unavailable", "cannot start a thread");
		else
			pf->nth++;
	}
	for (int i = 0; rc == S0_OK && i < PF_BULK; i++) {
		if (pthread_create(&pf->th[PF_THREADS + i], NULL, bulk, pf) != 0)
			rc = s0__error_set(err, S0_EIO, "runtime_unavailable", "cannot start a thread");
		else
			pf->nbulk++;
	}
	struct stat st; /* answered by the threads (INIT first) */
	if (rc == S0_OK && stat(path, &st) == 0)
		pf->conn = minor(st.st_dev);
	if (rc == S0_OK && !pf->conn)
		rc = s0__error_set(err, S0_EIO, "runtime_unavailable",
		                   "the pages file at %s does not answer", path);
	if (rc == S0_OK && pthread_create(&pf->owner, NULL, owner, pf) != 0)
		rc = s0__error_set(err, S0_EIO, "runtime_unavailable", "cannot start a thread");
	if (rc < 0) {
		teardown(pf);
		pf_free(pf);
		return rc;
	}
	pf->owner_started = true;
	live_add(1);
	*out = pf;
	return S0_OK;
}

void s0__gv_pagefile_hand(s0__gv_pagefile *pf)
{
	if (!pf)
		return;
	umount2(pf->path, MNT_DETACH); /* the open file keeps being served */
	unlink(pf->path);
	pthread_detach(pf->owner);
	pthread_mutex_lock(&pf->mu);
	pf->handed = true; /* the owner ends the server once no open is left */
	pthread_cond_broadcast(&pf->cv);
	pthread_mutex_unlock(&pf->mu);
}

void s0__gv_pagefile_drop(s0__gv_pagefile *pf)
{
	if (!pf)
		return;
	pthread_mutex_lock(&pf->mu);
	pf->ending = true;
	pthread_cond_broadcast(&pf->cv);
	pthread_mutex_unlock(&pf->mu);
	pthread_join(pf->owner, NULL);
	teardown(pf);
	pf_free(pf);
	live_add(-1);
}

bool s0__gv_pagefile_damaged(s0__gv_pagefile *pf, char *buf, size_t len)
{
	pthread_mutex_lock(&pf->mu);
	bool d = pf->damaged;
	snprintf(buf, len, "%s", d ? pf->why : "");
	pthread_mutex_unlock(&pf->mu);
	return d;
}

bool s0__gv_pagefile_wait_all(int timeout_ms)
{
	struct timespec dl = s0__deadline_after_ms(CLOCK_REALTIME, timeout_ms);
	pthread_mutex_lock(&live_mu);
	while (live > 0 && pthread_cond_timedwait(&live_cv, &live_mu, &dl) == 0)
		;
	bool none = live == 0;
	pthread_mutex_unlock(&live_mu);
	return none;
}
