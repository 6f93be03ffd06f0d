/* Directory object store: open/close, batches into pack files, reads. */
#include "local/objects/pack/objdir_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "local/objects/crash.h"
#include "local/objects/idmap.h"

struct s0__odbatch {
	s0__objdir *od;
	pthread_mutex_t mu;   /* rows, index, failed */
	s0__opack *pack;      /* NULL until the first put */
	uint64_t first_off;   /* where its space in pack begins */
	s0__odbatch *next;    /* in pack->batches (under od->mu) */
	int failed;           /* an s0 code once a write failed */
	s0__idmap index;      /* id -> row */
	s0__objrow *rows;
	size_t n, cap;
};

uint64_t s0__objdir_next_pack(s0__objdir *od)
{
	pthread_mutex_lock(&od->mu);
	uint64_t id = od->next_pack++;
	pthread_mutex_unlock(&od->mu);
	return id;
}

int s0__objdir_sync_dir(s0__objdir *od, s0_error **err)
{
	if (fsync(od->packdir_fd) < 0)
		return s0__error_set(err, S0_EIO, "pack_io", "fsync %s: %s", od->packdir,
		                     strerror(errno));
	return S0_OK;
}

bool s0__objdir_pack_busy(const s0__objdir *od, uint64_t pack)
{
	for (const s0__opack *p = od->open; p; p = p->next)
		if (p->id == pack)
			return true;
	return false;
}

/* Under od->mu: close p if it is neither current nor holds batches. */
static void maybe_close(s0__objdir *od, s0__opack *p)
{
	if (p == od->current || p->batches)
		return;
	for (s0__opack **pp = &od->open; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	close(p->fd);
	free(p);
}

static void od_close(void *ctx)
{
	s0__objdir *od = ctx;
	if (!od)
		return;
	od->current = NULL;
	while (od->open)
		maybe_close(od, od->open);
	s0__objcat_close(od->cat);
	if (od->packdir_fd >= 0) {
		s0__packcache_fini(&od->fds);
		close(od->packdir_fd);
	}
	if (od->lock_fd >= 0)
		close(od->lock_fd);
	pthread_mutex_destroy(&od->mu);
	free(od->dir);
	free(od->packdir);
	free(od);
}

static int mkdir_p1(const char *path, s0_error **err)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return s0__error_set(err, S0_EIO, "store_io", "mkdir %s: %s", path, strerror(errno));
	return S0_OK;
}

static int take_lock(s0__objdir *od, s0_error **err)
{
	char *p = s0__asprintf("%s/lock", od->dir);
	if (!p)
		return s0__error_nomem(err);
	od->lock_fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	free(p);
	if (od->lock_fd < 0)
		return s0__error_set(err, S0_EIO, "store_io", "open %s/lock: %s", od->dir,
		                     strerror(errno));
	if (flock(od->lock_fd, LOCK_EX | LOCK_NB) < 0)
		return s0__error_set(err, errno == EWOULDBLOCK ? S0_ECONFLICT : S0_EIO, "store_locked",
		                     "object store %s is open in another process", od->dir);
	return S0_OK;
}

int s0__objdir_open(const char *dir, void **ctx_out, s0_error **err)
{
	s0__objdir *od = calloc(1, sizeof *od);
	if (!od)
		return s0__error_nomem(err);
	pthread_mutex_init(&od->mu, NULL);
	od->packdir_fd = od->lock_fd = -1;
	od->dir = s0__strdup(dir);
	od->packdir = s0__asprintf("%s/packs", dir);
	char *db = s0__asprintf("%s/catalog.db", dir);
	int rc = S0_OK;
	if (!od->dir || !od->packdir || !db) {
		rc = s0__error_nomem(err);
		goto fail;
	}
	if ((rc = mkdir_p1(dir, err)) < 0 || (rc = mkdir_p1(od->packdir, err)) < 0 ||
	    (rc = take_lock(od, err)) < 0)
		goto fail;
	od->packdir_fd = open(od->packdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (od->packdir_fd < 0) {
		rc = s0__error_set(err, S0_EIO, "store_io", "open %s: %s", od->packdir, strerror(errno));
		goto fail;
	}
	s0__packcache_init(&od->fds, od->packdir_fd);
	if ((rc = s0__objcat_open(db, &od->cat, err)) < 0)
		goto fail;
	free(db);
	*ctx_out = od;
	return S0_OK;
fail:
	free(db);
	od_close(od);
	return rc;
}

static int od_begin(void *ctx, void **out, s0_error **err)
{
	s0__odbatch *b = calloc(1, sizeof *b);
	if (!b)
		return s0__error_nomem(err);
	b->od = ctx;
	pthread_mutex_init(&b->mu, NULL);
	*out = b;
	return S0_OK;
}

/* Under od->mu: b leaves its pack (committed or aborted). */
static void leave_pack(s0__objdir *od, s0__odbatch *b)
{
	s0__opack *p = b->pack;
	if (!p)
		return;
	for (s0__odbatch **pb = &p->batches; *pb; pb = &(*pb)->next) {
		if (*pb == b) {
			*pb = b->next;
			break;
		}
	}
	b->pack = NULL;
	maybe_close(od, p);
}

static void batch_free(s0__odbatch *b)
{
	pthread_mutex_lock(&b->od->mu);
	leave_pack(b->od, b);
	pthread_mutex_unlock(&b->od->mu);
	s0__idmap_free(&b->index);
	free(b->rows);
	pthread_mutex_destroy(&b->mu);
	free(b);
}

/* Under od->mu: the pack b appends to (joining the current one, or a new
 * one when there is none or it is full). */
static int join_pack(s0__objdir *od, s0__odbatch *b, s0_error **err)
{
	s0__opack *p = od->current;
	if (!p || p->end >= S0__OBJDIR_PACK_TARGET) {
		s0__opack *np = calloc(1, sizeof *np);
		if (!np)
			return s0__error_nomem(err);
		np->id = od->next_pack++;
		int rc = s0__pack_create(od->packdir_fd, np->id, &np->fd, err);
		if (rc < 0) {
			free(np);
			return rc;
		}
		np->end = S0__PACK_HDR_BYTES;
		np->next = od->open;
		od->open = np;
		od->current = np;
		if (p)
			maybe_close(od, p);
		p = np;
	}
	b->pack = p;
	b->first_off = p->end;
	b->next = p->batches;
	p->batches = b;
	return S0_OK;
}

/* Under b->mu: reserve a record for id; its offset in *off. */
static int reserve(s0__odbatch *b, const s0__objid *id, size_t len, uint64_t *off,
                   s0_error **err)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		s0__objrow *r = realloc(b->rows, cap * sizeof *r);
		if (!r)
			return s0__error_nomem(err);
		b->rows = r;
		b->cap = cap;
	}
	if (s0__idmap_put(&b->index, id, b->n, NULL) < 0)
		return s0__error_nomem(err);
	int rc = S0_OK;
	pthread_mutex_lock(&b->od->mu);
	if (!b->pack)
		rc = join_pack(b->od, b, err);
	if (rc == S0_OK) {
		*off = b->pack->end;
		b->pack->end += s0__pack_rec_span((uint32_t)len);
	}
	pthread_mutex_unlock(&b->od->mu);
	if (rc < 0) {
		s0__idmap_del(&b->index, id);
		return rc;
	}
	b->rows[b->n].id = *id;
	b->rows[b->n].loc = (s0__objloc){b->pack->id, *off, (uint32_t)len};
	b->n++;
	return S0_OK;
}

static int od_put(void *ctx, void *bp, const s0__objid *id, const void *sealed, size_t len,
                  bool *stored_out, s0_error **err)
{
	s0__odbatch *b = bp;
	uint64_t off = 0;
	pthread_mutex_lock(&b->mu);
	if (b->failed) {
		pthread_mutex_unlock(&b->mu);
		return s0__error_set(err, b->failed, "pack_io", "batch failed earlier");
	}
	if (s0__idmap_get(&b->index, id, NULL)) {
		pthread_mutex_unlock(&b->mu);
		*stored_out = false;
		return S0_OK;
	}
	int rc = reserve(b, id, len, &off, err);
	int fd = rc == S0_OK ? b->pack->fd : -1;
	pthread_mutex_unlock(&b->mu);
	if (rc < 0)
		return rc;
	int e = s0__pack_write_rec(fd, off, id, sealed, (uint32_t)len);
	if (e) {
		pthread_mutex_lock(&b->mu);
		b->failed = e == ENOSPC ? S0_ENOSPACE : S0_EIO;
		pthread_mutex_unlock(&b->mu);
		return s0__error_set(err, e == ENOSPC ? S0_ENOSPACE : S0_EIO, "pack_io",
		                     "write pack: %s", strerror(e));
	}
	*stored_out = true;
	return S0_OK;
}

/* Under od->mu: the offset below which b's pack is fully committed once b
 * is: where the oldest other batch in it began, else its end. */
static uint64_t indexed_after(const s0__odbatch *b)
{
	uint64_t lim = b->pack->end;
	for (const s0__odbatch *o = b->pack->batches; o; o = o->next)
		if (o != b && o->first_off < lim)
			lim = o->first_off;
	return lim;
}

static int od_commit(void *ctx, void *bp, s0_error **err)
{
	s0__odbatch *b = bp;
	s0__objdir *od = ctx;
	int rc = b->failed ? s0__error_set(err, b->failed, "pack_io", "batch failed earlier") : S0_OK;
	if (rc < 0 || !b->n) {
		batch_free(b);
		return rc;
	}
	s0__crash_point("objects.pack_written");
	if (fdatasync(b->pack->fd) < 0) {
		rc = s0__error_set(err, S0_EIO, "pack_io", "fdatasync pack: %s", strerror(errno));
		batch_free(b);
		return rc;
	}
	s0__crash_point("objects.pack_synced");
	pthread_mutex_lock(&od->mu);
	uint64_t indexed = indexed_after(b), end = b->pack->end;
	pthread_mutex_unlock(&od->mu);
	/* Not synced: recovery re-indexes the (durable) records if it is lost. */
	rc = s0__objcat_add(od->cat, b->pack->id, end, indexed, b->rows, b->n, NULL, err);
	if (rc == S0_OK)
		s0__crash_point("objects.catalog_committed");
	batch_free(b);
	return rc;
}

static void od_abort(void *ctx, void *bp)
{
	if (bp)
		batch_free(bp);
}

static int od_has(void *ctx, void *bp, const s0__objid *id, bool *out, s0_error **err)
{
	s0__objdir *od = ctx;
	s0__odbatch *b = bp;
	if (b) {
		pthread_mutex_lock(&b->mu);
		bool in = s0__idmap_get(&b->index, id, NULL);
		pthread_mutex_unlock(&b->mu);
		if (in) {
			*out = true;
			return S0_OK;
		}
	}
	s0__objloc loc;
	int rc = s0__objcat_lookup(od->cat, id, &loc, err);
	if (rc == S0_ENOTFOUND) {
		*out = false;
		return S0_OK;
	}
	if (rc == S0_OK)
		*out = true;
	return rc;
}

static int not_found(s0_error **err, const s0__objid *id, const char *why)
{
	char hex[S0__OBJID_HEX_BYTES];
	s0__objid_hex(id, hex);
	return s0__error_set(err, S0_ENOTFOUND, "object_missing", "object %s %s", hex, why);
}

static int od_get(void *ctx, const s0__objid *id, s0__buf *out, s0_error **err)
{
	s0__objdir *od = ctx;
	s0__objloc loc, prev = {0, 0, 0};
	/* A compaction may move the object between lookup and open: retry. */
	for (int attempt = 0; attempt < 4; attempt++) {
		int rc = s0__objcat_lookup(od->cat, id, &loc, err);
		if (rc == S0_ENOTFOUND)
			return not_found(err, id, "is not stored");
		if (rc < 0)
			return rc;
		if (attempt && loc.pack == prev.pack && loc.off == prev.off)
			break;
		s0__packfd *f;
		rc = s0__packcache_get(&od->fds, loc.pack, &f, err);
		if (rc == S0_ENOTFOUND) {
			prev = loc;
			continue;
		}
		if (rc < 0)
			return rc;
		rc = s0__pack_read(f->fd, loc.off, loc.len, id, out, err);
		s0__packcache_put(&od->fds, f);
		return rc;
	}
	return not_found(err, id, "is missing (its pack file is gone)");
}

static int od_list(void *ctx, s0__objlist_cb cb, void *payload, s0_error **err)
{
	s0__objdir *od = ctx;
	s0__objrow *rows;
	size_t n;
	int rc = s0__objcat_list(od->cat, &rows, &n, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		if (cb(&rows[i].id, rows[i].loc.len, payload)) {
			rc = s0__error_set(err, S0_EUSER, NULL, "object listing stopped by its callback");
			break;
		}
	}
	free(rows);
	return rc;
}

static int od_usage(void *ctx, s0__objstore_usage_info *out, s0_error **err)
{
	s0__objdir *od = ctx;
	return s0__objcat_totals(od->cat, &out->objects, &out->stored_bytes, &out->file_bytes, err);
}

int s0__objdir_locate(void *ctx, const s0__objid *id, char **path_out, uint64_t *off_out,
                      uint64_t *len_out, s0_error **err)
{
	s0__objdir *od = ctx;
	s0__objloc loc;
	int rc = s0__objcat_lookup(od->cat, id, &loc, err);
	if (rc == S0_ENOTFOUND)
		return not_found(err, id, "is not stored");
	if (rc < 0)
		return rc;
	char name[32];
	s0__pack_name(loc.pack, name);
	char *p = s0__asprintf("%s/%s", od->packdir, name);
	if (!p)
		return s0__error_nomem(err);
	*path_out = p;
	*off_out = loc.off + S0__PACK_REC_BYTES;
	*len_out = loc.len;
	return S0_OK;
}

const s0__objstore_ops s0__objdir_ops = {
	.batch_begin = od_begin,
	.put = od_put,
	.batch_commit = od_commit,
	.batch_abort = od_abort,
	.has = od_has,
	.get = od_get,
	.del = s0__objdir_del,
	.list = od_list,
	.maintain = s0__objdir_maintain,
	.usage = od_usage,
	.recover = s0__objdir_recover,
	.close = od_close,
};

bool s0__objdir_present(const char *dir)
{
	char *p = s0__asprintf("%s/catalog.db", dir);
	bool yes = p && access(p, F_OK) == 0;
	free(p);
	return yes;
}
