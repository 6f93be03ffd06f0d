/*
 * Directory object store recovery, run once at open (the recover op).
 *
 * Commits sync the pack (fdatasync) but not the catalog transaction that
 * indexes it, so after a crash the catalog may miss records that are
 * durable. Each pack's row says up to where it is fully indexed
 * (indexed_bytes); recovery scans every pack file from there (from the
 * start for a pack without a row) to its end, and catalogues each record
 * whose sealed bytes verify under its id with the store's keys. Damaged or
 * torn bytes are skipped by resynchronising on 8-byte boundaries. Records
 * of batches that never committed are catalogued too when intact: they are
 * unreferenced and GC removes them. Finally packs left without live objects
 * (e.g. a compaction's output written but never switched to) are deleted —
 * except a pack holding records that failed to verify (opened with the
 * wrong key, or damaged): that one is kept for a later look.
 */
#include "local/objects/pack/objdir_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WINDOW ((size_t)4 << 20)
#define FLUSH_ROWS 512

typedef struct scan {
	s0__objdir *od;
	s0__objverify_fn verify;
	void *vctx;
	uint64_t pack;
	int fd;
	uint64_t size;
	uint8_t *win;     /* file bytes [wstart, wstart + wlen) */
	uint64_t wstart;
	size_t wlen;
	s0__buf big;      /* a record larger than the window */
	s0__objrow *rows;
	size_t n;
	bool doubtful;      /* this pack had a record that did not verify */
	bool had_row;       /* this pack had a catalog row */
	size_t found;       /* records verified in this pack */
	uint64_t *keep;     /* doubtful packs */
	size_t n_keep, cap_keep;
} scan;

static int io_err(s0_error **err, const char *what, uint64_t pack)
{
	return s0__error_set(err, S0_EIO, "pack_io", "recover pack %llu: %s: %s",
	                     (unsigned long long)pack, what, strerror(errno));
}

/* Make [off, off + len) available; returns a pointer to it or NULL. */
static const uint8_t *bytes_at(scan *s, uint64_t off, size_t len, s0_error **err, int *rc)
{
	if (off >= s->wstart && off + len <= s->wstart + s->wlen)
		return s->win + (off - s->wstart);
	uint8_t *dst = s->win;
	size_t want = WINDOW;
	if (len > WINDOW) {
		if (s0__buf_grow(&s->big, len) < 0) {
			*rc = s0__error_nomem(err);
			return NULL;
		}
		dst = (uint8_t *)s->big.data;
		want = len;
	}
	if (want > s->size - off)
		want = (size_t)(s->size - off);
	ssize_t got = pread(s->fd, dst, want, (off_t)off);
	if (got < (ssize_t)len) {
		*rc = got < 0 ? io_err(err, "read", s->pack) : S0_OK;
		return NULL;
	}
	if (dst == s->win) {
		s->wstart = off;
		s->wlen = (size_t)got;
	}
	return dst;
}

static int flush_rows(scan *s, uint64_t indexed, s0_error **err)
{
	int rc = s0__objcat_add(s->od->cat, s->pack, s->size, indexed, s->rows, s->n, NULL, err);
	s->n = 0;
	return rc;
}

/* Catalogue the verified records of s->pack from off to its end. */
static int scan_pack(scan *s, uint64_t off, s0_error **err)
{
	int rc = S0_OK;
	while (rc == S0_OK && off + S0__PACK_REC_BYTES <= s->size) {
		const uint8_t *h = bytes_at(s, off, S0__PACK_REC_BYTES, err, &rc);
		s0__objid id;
		uint32_t len;
		if (!h)
			break;
		if (!s0__pack_parse_rec(h, &id, &len) || len < S0__OBJ_OVERHEAD ||
		    len > S0__OBJ_MAX_PLAIN + S0__OBJ_OVERHEAD + 1024 ||
		    off + S0__PACK_REC_BYTES + len > s->size) {
			off += 8;
			continue;
		}
		const uint8_t *data = bytes_at(s, off + S0__PACK_REC_BYTES, len, err, &rc);
		if (!data)
			break;
		if (!s->verify(s->vctx, &id, data, len)) {
			s->doubtful = true;
			off += 8; /* torn or damaged: resynchronise */
			continue;
		}
		s->rows[s->n++] = (s0__objrow){id, {s->pack, off, len}};
		s->found++;
		off += s0__pack_rec_span(len);
		if (s->n == FLUSH_ROWS)
			rc = flush_rows(s, 0, err);
	}
	/* A pack nothing could be read from is left without a row (so never
	 * deleted) until a later open can read it, e.g. with the right key. */
	if (rc == S0_OK && s->doubtful && !s->had_row && !s->found)
		return S0_OK;
	return rc == S0_OK ? flush_rows(s, s->size, err) : rc;
}

static int recover_pack(scan *s, uint64_t pack, s0_error **err)
{
	char name[32];
	s0__pack_name(pack, name);
	s0__packinfo info;
	uint64_t from = S0__PACK_HDR_BYTES;
	int rc = s0__objcat_pack(s->od->cat, pack, &info, err);
	if (rc == S0_OK && info.indexed_bytes > from)
		from = info.indexed_bytes;
	else if (rc != S0_ENOTFOUND && rc < 0)
		return rc;
	s->fd = openat(s->od->packdir_fd, name, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (s->fd < 0 || fstat(s->fd, &st) < 0) {
		rc = io_err(err, "open", pack);
		if (s->fd >= 0)
			close(s->fd);
		return rc;
	}
	s->pack = pack;
	s->size = (uint64_t)st.st_size;
	s->wstart = s->wlen = 0;
	s->doubtful = false;
	s->had_row = rc == S0_OK;
	s->found = 0;
	rc = from < s->size || rc == S0_ENOTFOUND ? scan_pack(s, from, err) : S0_OK;
	close(s->fd);
	if (rc == S0_OK && s->doubtful) {
		if (s->n_keep == s->cap_keep) {
			size_t cap = s->cap_keep ? s->cap_keep * 2 : 8;
			uint64_t *v = realloc(s->keep, cap * sizeof *v);
			if (!v)
				return s0__error_nomem(err);
			s->keep = v;
			s->cap_keep = cap;
		}
		s->keep[s->n_keep++] = pack;
	}
	return rc;
}

int s0__objdir_recover(void *ctx, s0__objverify_fn verify, void *vctx, s0_error **err)
{
	s0__objdir *od = ctx;
	scan s = {.od = od, .verify = verify, .vctx = vctx};
	uint64_t max = 0;
	int rc = s0__objcat_max_pack(od->cat, &max, err);
	int dfd = rc == S0_OK ? dup(od->packdir_fd) : -1;
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	s.win = malloc(WINDOW);
	s.rows = malloc(FLUSH_ROWS * sizeof *s.rows);
	if (rc == S0_OK && (!d || !s.win || !s.rows))
		rc = d ? s0__error_nomem(err) : io_err(err, "list", 0);
	if (!d && dfd >= 0)
		close(dfd);
	struct dirent *e;
	while (rc == S0_OK && (e = readdir(d))) {
		uint64_t id;
		if (!s0__pack_parse_name(e->d_name, &id))
			continue;
		if (id > max)
			max = id;
		rc = recover_pack(&s, id, err);
	}
	if (d)
		closedir(d);
	free(s.win);
	free(s.rows);
	s0__buf_free(&s.big);
	od->next_pack = max + 1;
	if (rc == S0_OK)
		rc = s0__objcat_sync(od->cat, err);
	if (rc == S0_OK)
		rc = s0__objdir_drop_empty(od, s.keep, s.n_keep, err);
	free(s.keep);
	return rc;
}
