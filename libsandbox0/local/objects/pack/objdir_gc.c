/* Directory object store: deletion and compaction. */
#include "local/objects/pack/objdir_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "local/objects/crash.h"

void s0__objdir_unlink_packs(s0__objdir *od, const uint64_t *packs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char name[32];
		s0__pack_name(packs[i], name);
		s0__packcache_forget(&od->fds, packs[i]);
		unlinkat(od->packdir_fd, name, 0);
	}
}

int s0__objdir_drop_empty(s0__objdir *od, const uint64_t *keep, size_t n_keep, s0_error **err)
{
	uint64_t *empty;
	size_t n, k = 0;
	int rc = s0__objcat_empty_packs(od->cat, &empty, &n, err);
	if (rc < 0)
		return rc;
	/* A pack not open for appends now never will be again. */
	pthread_mutex_lock(&od->mu);
	for (size_t i = 0; i < n; i++) {
		bool kept = s0__objdir_pack_busy(od, empty[i]);
		for (size_t j = 0; j < n_keep && !kept; j++)
			kept = keep[j] == empty[i];
		if (!kept)
			empty[k++] = empty[i];
	}
	pthread_mutex_unlock(&od->mu);
	rc = s0__objcat_drop_packs(od->cat, empty, k, err);
	if (rc == S0_OK && k) {
		s0__objdir_unlink_packs(od, empty, k);
		rc = s0__objdir_sync_dir(od, err);
	}
	free(empty);
	return rc;
}

int s0__objdir_del(void *ctx, const s0__objid *ids, size_t n, uint64_t *freed_objects,
                   uint64_t *freed_bytes, s0_error **err)
{
	s0__objdir *od = ctx;
	int rc = s0__objcat_delete(od->cat, ids, n, freed_objects, freed_bytes, err);
	if (rc < 0)
		return rc;
	s0__crash_point("objects.deleted");
	return s0__objdir_drop_empty(od, NULL, 0, err);
}

/* ---- compaction ---- */

typedef struct compaction {
	s0__objdir *od;
	int fd;            /* output pack, -1 before the first copy */
	uint64_t pack;     /* output pack id */
	uint64_t end;
	s0__objrow *rows;  /* new locations */
	s0__objloc *old;   /* old locations, parallel */
	size_t n, cap;
	uint64_t *olds;    /* old packs fully copied */
	size_t n_olds, cap_olds;
	s0__buf buf;
} compaction;

static int grow_rows(compaction *c, s0_error **err)
{
	if (c->n < c->cap)
		return S0_OK;
	size_t cap = c->cap ? c->cap * 2 : 256;
	s0__objrow *r = realloc(c->rows, cap * sizeof *r);
	if (r)
		c->rows = r;
	s0__objloc *o = r ? realloc(c->old, cap * sizeof *o) : NULL;
	if (!r || !o)
		return s0__error_nomem(err);
	c->old = o;
	c->cap = cap;
	return S0_OK;
}

/* Copy one live record into the output pack. */
static int copy_row(compaction *c, const s0__objrow *row, s0_error **err)
{
	s0__packfd *f;
	int rc = s0__packcache_get(&c->od->fds, row->loc.pack, &f, err);
	if (rc < 0)
		return rc;
	rc = s0__pack_read(f->fd, row->loc.off, row->loc.len, &row->id, &c->buf, err);
	s0__packcache_put(&c->od->fds, f);
	if (rc < 0)
		return rc;
	if (c->fd < 0) {
		c->pack = s0__objdir_next_pack(c->od);
		if ((rc = s0__pack_create(c->od->packdir_fd, c->pack, &c->fd, err)) < 0)
			return rc;
		c->end = S0__PACK_HDR_BYTES;
	}
	if ((rc = grow_rows(c, err)) < 0)
		return rc;
	int e = s0__pack_write_rec(c->fd, c->end, &row->id, c->buf.data, row->loc.len);
	if (e)
		return s0__error_set(err, S0_EIO, "pack_io", "write pack: %s", strerror(e));
	c->rows[c->n].id = row->id;
	c->rows[c->n].loc = (s0__objloc){c->pack, c->end, row->loc.len};
	c->old[c->n] = row->loc;
	c->n++;
	c->end += s0__pack_rec_span(row->loc.len);
	return S0_OK;
}

/* Make the output durable, switch the catalog to it, unlink the old packs. */
static int flush_output(compaction *c, s0_error **err)
{
	int rc = S0_OK;
	uint64_t moved = 0;
	if (c->fd >= 0) {
		if (fdatasync(c->fd) < 0)
			rc = s0__error_set(err, S0_EIO, "pack_io", "fdatasync pack: %s", strerror(errno));
		if (rc == S0_OK)
			rc = s0__objdir_sync_dir(c->od, err);
		if (rc == S0_OK)
			s0__crash_point("objects.compact_written");
	}
	if (rc == S0_OK && (c->n || c->n_olds))
		rc = s0__objcat_move(c->od->cat, c->pack, c->end, c->rows, c->old, c->n, c->olds,
		                     c->n_olds, &moved, err);
	if (c->fd >= 0) {
		close(c->fd);
		if (rc < 0 || !moved)
			s0__objdir_unlink_packs(c->od, &c->pack, 1);
	}
	if (rc == S0_OK) {
		s0__crash_point("objects.compact_switched");
		s0__objdir_unlink_packs(c->od, c->olds, c->n_olds);
		rc = s0__objdir_sync_dir(c->od, err);
	}
	c->fd = -1;
	c->n = c->n_olds = 0;
	return rc;
}

/* Copy every live row of one pack (rows[lo, hi), all of that pack). */
static int compact_pack(compaction *c, uint64_t pack, const s0__objrow *rows, size_t n,
                        s0_error **err)
{
	size_t mark = c->n;
	for (size_t i = 0; i < n; i++) {
		s0_error *e = NULL;
		int rc = copy_row(c, &rows[i], &e);
		if (rc == S0_ECORRUPT || rc == S0_ENOTFOUND) {
			/* Leave a damaged or vanished pack where it is: reads keep
			 * reporting exactly what is wrong with it. */
			s0_error_free(e);
			c->n = mark;
			return S0_OK;
		}
		if (rc < 0)
			return s0__error_put(err, e);
	}
	if (c->n_olds == c->cap_olds) {
		size_t cap = c->cap_olds ? c->cap_olds * 2 : 16;
		uint64_t *o = realloc(c->olds, cap * sizeof *o);
		if (!o)
			return s0__error_nomem(err);
		c->olds = o;
		c->cap_olds = cap;
	}
	c->olds[c->n_olds++] = pack;
	return S0_OK;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_row_loc(const void *a, const void *b)
{
	const s0__objloc *x = &((const s0__objrow *)a)->loc, *y = &((const s0__objrow *)b)->loc;
	if (x->pack != y->pack)
		return x->pack < y->pack ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Packs worth rewriting: mostly dead, or small when there are many; never
 * one open for appends. */
static size_t pick_packs(s0__objdir *od, const s0__packinfo *p, size_t n, uint64_t *out)
{
	size_t small = 0, k = 0;
	for (size_t i = 0; i < n; i++)
		small += p[i].file_bytes < S0__OBJDIR_SMALL_PACK;
	pthread_mutex_lock(&od->mu);
	for (size_t i = 0; i < n; i++) {
		if (s0__objdir_pack_busy(od, p[i].id))
			continue;
		uint64_t live = p[i].live_bytes + p[i].live_objects * S0__PACK_REC_BYTES;
		bool sparse = live * 2 < p[i].file_bytes;
		bool merge = small >= S0__OBJDIR_SMALL_PACKS && p[i].file_bytes < S0__OBJDIR_SMALL_PACK;
		if (sparse || merge)
			out[k++] = p[i].id;
	}
	pthread_mutex_unlock(&od->mu);
	return k;
}

static int run_compaction(s0__objdir *od, const uint64_t *cand, size_t n_cand, s0_error **err)
{
	s0__objrow *all;
	size_t n_all, k = 0;
	int rc = s0__objcat_list(od->cat, &all, &n_all, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n_all; i++)
		if (bsearch(&all[i].loc.pack, cand, n_cand, sizeof *cand, cmp_u64))
			all[k++] = all[i];
	qsort(all, k, sizeof *all, cmp_row_loc);
	compaction c = {.od = od, .fd = -1};
	for (size_t i = 0; rc == S0_OK && i < k;) {
		size_t j = i;
		while (j < k && all[j].loc.pack == all[i].loc.pack)
			j++;
		rc = compact_pack(&c, all[i].loc.pack, all + i, j - i, err);
		if (rc == S0_OK && c.end >= S0__OBJDIR_PACK_TARGET)
			rc = flush_output(&c, err);
		i = j;
	}
	if (rc == S0_OK)
		rc = flush_output(&c, err);
	else if (c.fd >= 0) {
		close(c.fd);
		s0__objdir_unlink_packs(od, &c.pack, 1);
	}
	free(all);
	free(c.rows);
	free(c.old);
	free(c.olds);
	s0__buf_free(&c.buf);
	return rc;
}

int s0__objdir_maintain(void *ctx, s0_error **err)
{
	s0__objdir *od = ctx;
	s0__packinfo *packs;
	size_t n;
	int rc = s0__objcat_packs(od->cat, &packs, &n, err);
	if (rc < 0)
		return rc;
	uint64_t *cand = malloc((n ? n : 1) * sizeof *cand);
	if (!cand) {
		free(packs);
		return s0__error_nomem(err);
	}
	size_t k = pick_packs(od, packs, n, cand);
	free(packs);
	if (k)
		rc = run_compaction(od, cand, k, err);
	free(cand);
	return rc == S0_OK ? s0__objdir_drop_empty(od, NULL, 0, err) : rc;
}
