/* Packs of the S3 backend: keys, index objects, refresh, ranged reads,
 * deletion of empty packs (s3pack.h). */
#include "local/objects/s3/s3pack.h"

#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/le.h"
#include "local/objects/pack/pack.h"
#include "local/objects/s3/s3tomb.h"
#include "local/objects/s3/s3xml.h"

#define INDEX_HDR 28
#define INDEX_ROW (S0__OBJID_BYTES + 12)
/* Index objects read at once by a refresh. */
#define REFRESH_GROUP 64

void s0__s3pack_key(char kind, uint64_t pack, char out[S0__S3PACK_KEY_BYTES])
{
	snprintf(out, S0__S3PACK_KEY_BYTES, "%c/%016" PRIx64, kind, pack);
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t s0__s3pack_new_id(void)
{
	/* below 2^63: the catalog keeps pack ids in SQLite's signed integers */
	return (now_ms() & (((uint64_t)1 << 42) - 1)) << 21 | randombytes_uniform(1u << 21);
}

int s0__s3pack_index_encode(uint64_t pack, uint64_t pack_bytes, const s0__objrow *rows,
                            size_t n, s0__buf *out, s0_error **err)
{
	s0__buf_reset(out);
	if (s0__buf_grow(out, INDEX_HDR + n * INDEX_ROW) < 0)
		return s0__error_nomem(err);
	uint8_t *p = (uint8_t *)out->data;
	memcpy(p, "S0PX", 4);
	s0__le_put32(p + 4, 1);
	s0__le_put64(p + 8, pack);
	s0__le_put64(p + 16, pack_bytes);
	s0__le_put32(p + 24, (uint32_t)n);
	p += INDEX_HDR;
	for (size_t i = 0; i < n; i++, p += INDEX_ROW) {
		memcpy(p, rows[i].id.b, S0__OBJID_BYTES);
		s0__le_put64(p + S0__OBJID_BYTES, rows[i].loc.off);
		s0__le_put32(p + S0__OBJID_BYTES + 8, rows[i].loc.len);
	}
	out->len = INDEX_HDR + n * INDEX_ROW;
	return S0_OK;
}

static int bad_index(s0_error **err, uint64_t pack, const char *why)
{
	return s0__error_set(err, S0_ECORRUPT, "object_index_corrupt",
	                     "index x/%016" PRIx64 " of the object store is damaged: %s", pack, why);
}

int s0__s3pack_index_decode(const void *data, size_t len, uint64_t pack, uint64_t *pack_bytes,
                            s0__objrow **rows_out, size_t *n_out, s0_error **err)
{
	const uint8_t *p = data;
	if (len < INDEX_HDR || memcmp(p, "S0PX", 4) != 0 || s0__le_get32(p + 4) != 1)
		return bad_index(err, pack, "no index header");
	if (s0__le_get64(p + 8) != pack)
		return bad_index(err, pack, "it names another pack");
	uint64_t bytes = s0__le_get64(p + 16);
	size_t n = s0__le_get32(p + 24);
	if ((len - INDEX_HDR) / INDEX_ROW != n || (len - INDEX_HDR) % INDEX_ROW)
		return bad_index(err, pack, "wrong length");
	s0__objrow *rows = calloc(n ? n : 1, sizeof *rows);
	if (!rows)
		return s0__error_nomem(err);
	p += INDEX_HDR;
	for (size_t i = 0; i < n; i++, p += INDEX_ROW) {
		memcpy(rows[i].id.b, p, S0__OBJID_BYTES);
		rows[i].loc.pack = pack;
		rows[i].loc.off = s0__le_get64(p + S0__OBJID_BYTES);
		rows[i].loc.len = s0__le_get32(p + S0__OBJID_BYTES + 8);
		if (rows[i].loc.off < S0__PACK_HDR_BYTES ||
		    rows[i].loc.off + s0__pack_rec_span(rows[i].loc.len) > bytes) {
			free(rows);
			return bad_index(err, pack, "a record lies outside its pack");
		}
	}
	*pack_bytes = bytes;
	*rows_out = rows;
	*n_out = n;
	return S0_OK;
}

/* Pack ids of a listing of x/ this catalog does not know. */
typedef struct unknown {
	s0__objs3 *s;
	size_t skip; /* bytes of "PREFIX/x/" */
	uint64_t *ids;
	size_t n, cap;
	bool nomem;
} unknown;

static bool parse_hex16(const char *h, uint64_t *out)
{
	uint64_t v = 0;
	for (int i = 0; i < 16; i++) {
		char c = h[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return h[16] == '\0';
}

static int unknown_key(const char *key, uint64_t size, void *payload)
{
	(void)size;
	unknown *u = payload;
	uint64_t pack;
	s0__packinfo pi;
	if (strlen(key) != u->skip + 16 || !parse_hex16(key + u->skip, &pack))
		return 0; /* not an index of ours */
	if (s0__objcat_pack(u->s->cat, pack, &pi, NULL) == S0_OK)
		return 0;
	if (u->n == u->cap) {
		size_t nc = u->cap ? u->cap * 2 : 64;
		uint64_t *nv = realloc(u->ids, nc * sizeof *nv);
		if (!nv) {
			u->nomem = true;
			return 1;
		}
		u->ids = nv;
		u->cap = nc;
	}
	u->ids[u->n++] = pack;
	return 0;
}

/* List x/ (after start_after's key when non-zero) into u. */
static int list_indexes(s0__objs3 *s, uint64_t start_after, unknown *u, s0_error **err)
{
	char *after = start_after ? s0__asprintf("%sx/%016" PRIx64, s0__s3_prefix(s->s3),
	                                         start_after)
	                          : NULL;
	u->skip = strlen(s0__s3_prefix(s->s3)) + 2;
	int rc = !start_after || after ? s0__s3_list(s->s3, "x/", after, unknown_key, u, err)
	                               : s0__error_nomem(err);
	if (rc == S0_EUSER && u->nomem)
		rc = s0__error_nomem(err);
	free(after);
	return rc;
}

/* Enter in the cache the records in got[0, n) (at pack offset base) that
 * the catalog places exactly there, but the one at skip. */
static void cache_records(s0__objs3 *s, uint64_t pack, uint64_t base, const uint8_t *got,
                          size_t n, size_t skip)
{
	size_t pos = 0;
	while (pos + S0__PACK_REC_BYTES <= n) {
		s0__objid rid;
		uint32_t rlen;
		s0__objloc loc;
		if (!s0__pack_parse_rec(got + pos, &rid, &rlen) ||
		    pos + S0__PACK_REC_BYTES + rlen > n)
			return;
		if (pos != skip && s0__objcat_lookup(s->cat, &rid, &loc, NULL) == S0_OK &&
		    loc.pack == pack && loc.off == base + pos && loc.len == rlen)
			s0__s3cache_put(s->cache, &rid, got + pos + S0__PACK_REC_BYTES, rlen);
		pos += (size_t)s0__pack_rec_span(rlen);
	}
}

/* GET the indexes of packs[0, n) (n <= REFRESH_GROUP) and catalogue them;
 * an index gone meanwhile (its pack deleted) is skipped. With heads (a
 * lookup for one id on a cold node), the first S0__S3PACK_HEAD bytes of
 * each pack are read in the same round and their records enter the read
 * cache: a generation's small pack (descriptor, map pages) then costs no
 * round trip of its own. */
static int read_indexes(s0__objs3 *s, const uint64_t *packs, size_t n, bool heads,
                        s0_error **err)
{
	s0__s3req rq[2 * REFRESH_GROUP];
	s0__buf body[2 * REFRESH_GROUP];
	char keys[2 * REFRESH_GROUP][S0__S3PACK_KEY_BYTES], range[48];
	size_t m = heads ? 2 * n : n;
	snprintf(range, sizeof range, "0-%" PRIu64, S0__S3PACK_HEAD - 1);
	for (size_t i = 0; i < m; i++) {
		s0__s3pack_key(i < n ? 'x' : 'p', packs[i % n], keys[i]);
		body[i] = (s0__buf)S0__BUF_INIT;
		rq[i] = (s0__s3req){.method = "GET", .key = keys[i], .out = &body[i],
		                    .range = i < n ? NULL : range};
	}
	int rc = s0__s3_run(s->s3, rq, m, err);
	for (size_t i = 0; rc == S0_OK && i < n; i++) {
		if (rq[i].status == 404)
			continue;
		rc = s0__s3_check(s->s3, &rq[i], err);
		s0__objrow *rows = NULL;
		size_t nr = 0;
		uint64_t bytes = 0;
		if (rc == S0_OK)
			rc = s0__s3pack_index_decode(body[i].data, body[i].len, packs[i], &bytes, &rows,
			                             &nr, err);
		if (rc == S0_OK)
			rc = s0__s3pack_catalogue(s, packs[i], bytes, rows, nr, err);
		free(rows);
		/* records the catalog now places in the head read enter the cache */
		const s0__s3req *h = heads ? &rq[n + i] : NULL;
		if (rc == S0_OK && h && (h->status == 206 || h->status == 200) &&
		    body[n + i].len > S0__PACK_HDR_BYTES)
			cache_records(s, packs[i], S0__PACK_HDR_BYTES,
			              (const uint8_t *)body[n + i].data + S0__PACK_HDR_BYTES,
			              body[n + i].len - S0__PACK_HDR_BYTES, SIZE_MAX);
	}
	for (size_t i = 0; i < m; i++)
		s0__buf_free(&body[i]);
	return rc;
}

int s0__s3pack_catalogue(s0__objs3 *s, uint64_t pack, uint64_t pack_bytes,
                         const s0__objrow *rows, size_t n, s0_error **err)
{
	s0__objrow *copies = calloc(n ? n : 1, sizeof *copies);
	if (!copies)
		return s0__error_nomem(err);
	size_t k = 0;
	int rc = S0_OK;
	for (size_t i = 0; rc == S0_OK && i < n; i++) {
		s0__objloc loc;
		int lr = s0__objcat_lookup(s->cat, &rows[i].id, &loc, err);
		if (lr == S0_OK && loc.pack != pack)
			copies[k++] = rows[i];
		else if (lr < 0 && lr != S0_ENOTFOUND)
			rc = lr;
	}
	/* the copies first: the pack is never empty without them */
	if (rc == S0_OK)
		rc = s0__s3doom_copy_add(s->doom, copies, k, err);
	if (rc == S0_OK)
		rc = s0__objcat_add(s->cat, pack, pack_bytes, pack_bytes, rows, n, NULL, err);
	free(copies);
	return rc;
}

int s0__s3pack_promote(s0__objs3 *s, const s0__objid *ids, size_t n, s0_error **err)
{
	int rc = S0_OK;
	for (size_t i = 0; rc == S0_OK && i < n; i++) {
		s0__objrow *c = NULL;
		size_t nc = 0;
		rc = s0__s3doom_copies(s->doom, &ids[i], &c, &nc, err);
		for (size_t j = 0; rc == S0_OK && j < nc; j++) {
			s0__packinfo pi;
			s0__objloc loc;
			rc = s0__objcat_pack(s->cat, c[j].loc.pack, &pi, err);
			if (rc == S0_ENOTFOUND) { /* the pack is gone: so is the copy */
				rc = s0__s3doom_copy_forget(s->doom, &c[j], 1, err);
				continue;
			}
			if (rc == S0_OK)
				rc = s0__objcat_add(s->cat, c[j].loc.pack, pi.file_bytes, pi.indexed_bytes,
				                    &c[j], 1, NULL, err);
			if (rc == S0_OK && s0__objcat_lookup(s->cat, &ids[i], &loc, NULL) == S0_OK &&
			    loc.pack == c[j].loc.pack)
				rc = s0__s3doom_copy_forget(s->doom, &c[j], 1, err);
		}
		free(c);
	}
	return rc;
}

static int cmp_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x > y ? -1 : x < y;
}

int s0__s3pack_refresh(s0__objs3 *s, uint64_t seen, bool full, const s0__objid *want,
                       s0_error **err)
{
	pthread_mutex_lock(&s->refresh_mu);
	if (s->complete > seen && !full) { /* another thread's refresh listed after seen */
		pthread_mutex_unlock(&s->refresh_mu);
		return S0_OK;
	}
	uint64_t me = ++s->refreshes;
	uint64_t newest = 0, after = 0;
	int rc = full ? S0_OK : s0__objcat_max_pack(s->cat, &newest, err);
	/* a pack id from a node whose clock runs ahead must not hide the others */
	uint64_t now = s0__s3pack_new_id() >> 21 << 21;
	if (newest > now)
		newest = now;
	uint64_t window = S0__S3PACK_WINDOW_MS << 21;
	if (newest > window)
		after = newest - window;
	size_t group = want ? S0__S3PACK_REFRESH_FEW : REFRESH_GROUP, i = 0;
	bool found = false, heads = want != NULL;
	s0__objloc loc;
	/* first the packs an earlier lookup listed but did not read (a lookup
	 * that finds its id there needs no listing) */
	while (rc == S0_OK && s->n_pending && !found) {
		size_t k = s->n_pending < group ? s->n_pending : group;
		rc = read_indexes(s, s->pending, k, heads, err);
		if (rc == S0_OK) {
			memmove(s->pending, s->pending + k, (s->n_pending - k) * sizeof *s->pending);
			s->n_pending -= k;
		}
		found = rc == S0_OK && want && s0__objcat_lookup(s->cat, want, &loc, NULL) == S0_OK;
	}
	unknown u = {.s = s};
	bool listed = rc == S0_OK && !found;
	if (listed)
		rc = list_indexes(s, after, &u, err);
	/* newest first; looking for one id, a few at a time until it is known
	 * (the generation being read is most often among the newest) */
	qsort(u.ids, u.n, sizeof *u.ids, cmp_desc);
	for (; rc == S0_OK && i < u.n && !found; i += group) {
		rc = read_indexes(s, u.ids + i, u.n - i < group ? u.n - i : group, heads, err);
		found = rc == S0_OK && want && s0__objcat_lookup(s->cat, want, &loc, NULL) == S0_OK;
	}
	/* what this listing found and did not read waits for the next lookup */
	if (rc == S0_OK && u.n) {
		free(s->pending);
		s->pending = u.ids;
		s->n_pending = i < u.n ? u.n - i : 0;
		memmove(s->pending, s->pending + (i < u.n ? i : u.n), s->n_pending * sizeof *u.ids);
		u.ids = NULL;
	}
	/* complete only when every listed index was read: a thread waiting for
	 * this refresh then need not list again */
	if (rc == S0_OK && listed && i >= u.n)
		s->complete = me;
	pthread_mutex_unlock(&s->refresh_mu);
	free(u.ids);
	return rc;
}

/* GET id's record at loc into out: with the S0__S3PACK_READAHEAD bytes
 * after it, or the whole pack when it is small (a generation's map pages
 * and descriptor are read together). *gone: the pack is not in the
 * bucket. */
static int read_at(s0__objs3 *s, const s0__objid *id, const s0__objloc *loc, s0__buf *out,
                   bool *gone, s0_error **err)
{
	*gone = false;
	s0__packinfo pi;
	uint64_t span = s0__pack_rec_span(loc->len), start = loc->off,
	         end = loc->off + span + S0__S3PACK_READAHEAD;
	if (s0__objcat_pack(s->cat, loc->pack, &pi, NULL) == S0_OK) {
		if (pi.file_bytes <= S0__S3PACK_SMALL)
			start = S0__PACK_HDR_BYTES;
		if (pi.file_bytes < end)
			end = pi.file_bytes;
	}
	if (end < loc->off + span)
		end = loc->off + span;
	char key[S0__S3PACK_KEY_BYTES], range[48], hex[S0__OBJID_HEX_BYTES];
	s0__s3pack_key('p', loc->pack, key);
	snprintf(range, sizeof range, "%" PRIu64 "-%" PRIu64, start, end - 1);
	s0__buf got = S0__BUF_INIT;
	s0__s3req rq = {.method = "GET", .key = key, .range = range, .out = &got};
	int rc = s0__s3_run(s->s3, &rq, 1, err);
	s0__objid_hex(id, hex);
	if (rc == S0_OK && rq.status == 404) {
		*gone = true;
		rc = s0__error_set(err, S0_ENOTFOUND, "object_missing",
		                   "object %s is not stored: its pack %s is missing from bucket %s",
		                   hex, key, s0__s3_bucket(s->s3));
	} else if (rc == S0_OK && rq.status == 416) {
		rc = s0__error_set(err, S0_ECORRUPT, "object_corrupt",
		                   "object %s failed verification: pack %s is shorter than its index "
		                   "says", hex, key);
	} else if (rc == S0_OK) {
		rc = s0__s3_check(s->s3, &rq, err);
	}
	/* 206: the range; 200: an endpoint that ignores ranges sent it all */
	uint64_t base = rq.status == 206 ? start : 0;
	size_t at = (size_t)(loc->off - base);
	s0__objid rid;
	uint32_t rlen = 0;
	const uint8_t *g = (const uint8_t *)got.data;
	if (rc == S0_OK && (got.len < at + S0__PACK_REC_BYTES + (size_t)loc->len ||
	                    !s0__pack_parse_rec(g + at, &rid, &rlen) || rlen != loc->len ||
	                    !s0__objid_eq(&rid, id)))
		rc = s0__error_set(err, S0_ECORRUPT, "object_corrupt",
		                   "object %s failed verification: pack %s does not hold it at offset "
		                   "%" PRIu64, hex, key, loc->off);
	if (rc == S0_OK) {
		s0__buf_reset(out);
		rc = s0__buf_put(out, g + at + S0__PACK_REC_BYTES, loc->len) < 0 ? s0__error_nomem(err)
		                                                                  : S0_OK;
	}
	if (rc == S0_OK) {
		s0__s3cache_put(s->cache, id, out->data, out->len);
		/* from the first record the answer holds (a record boundary) */
		size_t first = base == start ? 0 : at;
		cache_records(s, loc->pack, base + first, g + first, got.len - first, at - first);
	}
	s0__buf_free(&got);
	return rc;
}

/* A pack is gone although the catalog names it (another node's GC deleted
 * it, e.g. when its objects were copies of ones in other packs): forget
 * its rows and read every index again. */
static int forget_pack(s0__objs3 *s, uint64_t pack, s0_error **err)
{
	s0__objrow *rows = NULL;
	size_t n = 0, k = 0;
	int rc = s0__objcat_list(s->cat, &rows, &n, err);
	for (size_t i = 0; rc == S0_OK && i < n; i++)
		if (rows[i].loc.pack == pack)
			rows[k++].id = rows[i].id;
	s0__objid *ids = rc == S0_OK ? malloc((k ? k : 1) * sizeof *ids) : NULL;
	if (rc == S0_OK && !ids)
		rc = s0__error_nomem(err);
	for (size_t i = 0; rc == S0_OK && i < k; i++)
		ids[i] = rows[i].id;
	uint64_t fo, fb;
	if (rc == S0_OK)
		rc = s0__objcat_delete(s->cat, ids, k, &fo, &fb, err);
	if (rc == S0_OK)
		rc = s0__objcat_drop_packs(s->cat, &pack, 1, err);
	if (rc == S0_OK)
		rc = s0__s3pack_promote(s, ids, k, err);
	free(ids);
	free(rows);
	return rc == S0_OK ? s0__s3pack_refresh(s, 0, true, NULL, err) : rc;
}

static int lookup(s0__objs3 *s, const s0__objid *id, s0__objloc *loc, s0_error **err)
{
	pthread_mutex_lock(&s->refresh_mu);
	uint64_t seen = s->refreshes;
	pthread_mutex_unlock(&s->refresh_mu);
	int rc = s0__objcat_lookup(s->cat, id, loc, err);
	if (rc != S0_ENOTFOUND)
		return rc;
	if ((rc = s0__s3pack_refresh(s, seen, false, id, err)) < 0)
		return rc;
	rc = s0__objcat_lookup(s->cat, id, loc, err);
	if (rc == S0_ENOTFOUND) {
		char hex[S0__OBJID_HEX_BYTES];
		s0__objid_hex(id, hex);
		rc = s0__error_set(err, S0_ENOTFOUND, "object_missing", "object %s is not stored", hex);
	}
	return rc;
}

int s0__s3pack_read(s0__objs3 *s, const s0__objid *id, s0__buf *out, s0_error **err)
{
	s0__objloc loc;
	int rc = lookup(s, id, &loc, err);
	bool gone = false;
	s0_error *e = NULL;
	/* the lookup's refresh may have cached it with its pack's head */
	if (rc == S0_OK && s0__s3cache_get(s->cache, id, out))
		return S0_OK;
	if (rc == S0_OK)
		rc = read_at(s, id, &loc, out, &gone, &e);
	if (rc == S0_ENOTFOUND && gone) {
		/* once: another pack may hold a copy */
		s0__objloc again;
		uint64_t missing = loc.pack;
		int rc2 = forget_pack(s, missing, NULL);
		if (rc2 == S0_OK)
			rc2 = s0__objcat_lookup(s->cat, id, &again, NULL);
		if (rc2 == S0_OK && again.pack != missing) {
			s0_error_free(e);
			e = NULL;
			rc = read_at(s, id, &again, out, &gone, &e);
		}
	}
	if (e)
		s0__error_put(err, e);
	return rc;
}

int s0__s3pack_drop_empty(s0__objs3 *s, uint64_t *packs_out, s0_error **err)
{
	uint64_t *packs = NULL;
	size_t n = 0;
	int rc = s0__objcat_empty_packs(s->cat, &packs, &n, err);
	/* packs younger than the GC grace stay (s3tomb.h) */
	size_t old = 0;
	for (size_t i = 0; rc == S0_OK && i < n; i++) {
		bool copies = false;
		rc = s0__s3doom_pack_has_copies(s->doom, packs[i], &copies, err);
		if (rc == S0_OK && !copies && !s0__s3tomb_young(s, packs[i]))
			packs[old++] = packs[i];
	}
	n = old;
	size_t done = 0;
	while (rc == S0_OK && done < n) {
		size_t k = n - done < REFRESH_GROUP / 2 ? n - done : REFRESH_GROUP / 2;
		s0__s3req rq[REFRESH_GROUP];
		char keys[REFRESH_GROUP][S0__S3PACK_KEY_BYTES];
		/* the pack first: a crash in between leaves an index naming a
		 * missing pack, whose objects a later GC deletes again (and whose
		 * reads are a clear error), never a pack no index lists */
		for (size_t i = 0; i < k; i++) {
			s0__s3pack_key('p', packs[done + i], keys[2 * i]);
			s0__s3pack_key('x', packs[done + i], keys[2 * i + 1]);
			rq[i] = (s0__s3req){.method = "DELETE", .key = keys[2 * i]};
			rq[k + i] = (s0__s3req){.method = "DELETE", .key = keys[2 * i + 1]};
		}
		for (int phase = 0; rc == S0_OK && phase < 2; phase++) {
			rc = s0__s3_run(s->s3, rq + phase * k, k, err);
			for (size_t i = 0; rc == S0_OK && i < k; i++)
				if (rq[phase * k + i].status != 404)
					rc = s0__s3_check(s->s3, &rq[phase * k + i], err);
		}
		if (rc == S0_OK)
			rc = s0__objcat_drop_packs(s->cat, packs + done, k, err);
		if (rc == S0_OK)
			done += k;
	}
	free(packs);
	if (packs_out)
		*packs_out = done;
	return rc;
}
