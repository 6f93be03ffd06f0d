/* Tombstones of the S3 backend: write one per delete, sync the ones other
 * nodes wrote (s3tomb.h). */
#include "local/objects/s3/s3tomb.h"

#include <fcntl.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/le.h"
#include "local/objects/s3/s3xml.h"

#define TOMB_HDR 12
#define TOMB_ROW (S0__OBJID_BYTES + 8)
/* Bytes of "d/<16 hex>-<8 hex>" with its NUL. */
#define TOMB_KEY_BYTES 28

uint64_t s0__s3tomb_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t s0__s3tomb_clock(s0__objs3 *s)
{
	pthread_mutex_lock(&s->mu);
	uint64_t shift = s->clock_shift_ms;
	pthread_mutex_unlock(&s->mu);
	return s0__s3tomb_now_ms() + shift;
}

bool s0__s3tomb_young(s0__objs3 *s, uint64_t pack)
{
	return (pack >> 21) + s->gc_grace_ms > s0__s3tomb_clock(s);
}

int s0__s3tomb_write(s0__objs3 *s, const s0__objrow *rows, size_t n, s0_error **err)
{
	if (!n)
		return S0_OK;
	size_t len = TOMB_HDR + n * TOMB_ROW;
	uint8_t *b = malloc(len);
	if (!b)
		return s0__error_nomem(err);
	memcpy(b, "S0TD", 4);
	s0__le_put64(b + 4, 1 | (uint64_t)n << 32); /* version 1, count */
	for (size_t i = 0; i < n; i++) {
		memcpy(b + TOMB_HDR + i * TOMB_ROW, rows[i].id.b, S0__OBJID_BYTES);
		s0__le_put64(b + TOMB_HDR + i * TOMB_ROW + S0__OBJID_BYTES, rows[i].loc.pack);
	}
	char key[TOMB_KEY_BYTES];
	snprintf(key, sizeof key, "d/%016" PRIx64 "-%08" PRIx32, s0__s3tomb_now_ms(),
	         randombytes_random());
	s0__s3req rq = {.method = "PUT", .key = key, .body = b, .len = len};
	int rc = s0__s3_run(s->s3, &rq, 1, err);
	if (rc == S0_OK)
		rc = s0__s3_check(s->s3, &rq, err);
	free(b);
	return rc;
}

/* Doom the (id, pack) pairs tombstone data names (s3doom.h). */
static int apply(s0__objs3 *s, const char *key, const uint8_t *p, size_t len, s0_error **err)
{
	if (len < TOMB_HDR || memcmp(p, "S0TD", 4) || (s0__le_get64(p + 4) & 0xffffffffu) != 1 ||
	    (len - TOMB_HDR) % TOMB_ROW || (len - TOMB_HDR) / TOMB_ROW != s0__le_get64(p + 4) >> 32)
		return s0__error_set(err, S0_ECORRUPT, "object_tombstone_corrupt",
		                     "tombstone %s of the object store is damaged", key);
	size_t n = (len - TOMB_HDR) / TOMB_ROW;
	s0__objrow *rows = calloc(n ? n : 1, sizeof *rows);
	if (!rows)
		return s0__error_nomem(err);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *r = p + TOMB_HDR + i * TOMB_ROW;
		memcpy(rows[i].id.b, r, S0__OBJID_BYTES);
		rows[i].loc.pack = s0__le_get64(r + S0__OBJID_BYTES);
	}
	int rc = s0__s3doom_add(s->doom, rows, n, s0__s3tomb_clock(s), err);
	free(rows);
	return rc;
}

/* Listed tombstone keys (time, random) not applied yet. */
typedef struct listed {
	s0__objs3 *s;
	size_t skip; /* bytes of "PREFIX/d/" */
	s0__s3tomb_seen *v;
	size_t n, cap;
	bool nomem;
} listed;

static bool applied(const s0__objs3 *s, const s0__s3tomb_seen *t)
{
	for (size_t i = 0; i < s->n_tombs; i++)
		if (s->tombs[i].ms == t->ms && s->tombs[i].rnd == t->rnd)
			return true;
	return false;
}

static int listed_key(const char *key, uint64_t size, void *payload)
{
	(void)size;
	listed *l = payload;
	s0__s3tomb_seen t;
	unsigned long long ms;
	unsigned rnd;
	char end;
	if (strlen(key) != l->skip + 25 ||
	    sscanf(key + l->skip, "%16llx-%8x%c", &ms, &rnd, &end) != 2)
		return 0; /* not a tombstone of ours */
	t.ms = ms;
	t.rnd = rnd;
	if (applied(l->s, &t))
		return 0;
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 16;
		s0__s3tomb_seen *nv = realloc(l->v, nc * sizeof *nv);
		if (!nv) {
			l->nomem = true;
			return 1;
		}
		l->v = nv;
		l->cap = nc;
	}
	l->v[l->n++] = t;
	return 0;
}

/* LIST d/ after start-after key `after` (nullable) into l. */
static int list_tombs(s0__objs3 *s, const char *after, listed *l, s0_error **err)
{
	l->skip = strlen(s0__s3_prefix(s->s3)) + 2;
	int rc = s0__s3_list(s->s3, "d/", after, listed_key, l, err);
	if (rc == S0_EUSER && l->nomem)
		rc = s0__error_nomem(err);
	return rc;
}

static char *marker_path(const s0__objs3 *s)
{
	return s0__asprintf("%s/tombs", s->dir);
}

void s0__s3tomb_load(s0__objs3 *s)
{
	char *path = marker_path(s);
	FILE *f = path ? fopen(path, "r") : NULL;
	unsigned long long ms = 0;
	if (f && fscanf(f, "%llu", &ms) == 1)
		s->tomb_marker = ms;
	if (f)
		fclose(f);
	free(path);
}

/* Write the marker (not synced: losing it costs a re-read). */
static void save_marker(const s0__objs3 *s)
{
	char *path = marker_path(s);
	char *tmp = path ? s0__asprintf("%s.tmp", path) : NULL;
	FILE *f = tmp ? fopen(tmp, "w") : NULL;
	if (f && fprintf(f, "%" PRIu64 "\n", s->tomb_marker) > 0 && fclose(f) == 0)
		rename(tmp, path);
	else if (f)
		fclose(f);
	free(tmp);
	free(path);
}

int s0__s3tomb_sync(s0__objs3 *s, s0_error **err)
{
	pthread_mutex_lock(&s->tomb_mu);
	char *after = NULL;
	int rc = S0_OK;
	if (s->tomb_marker > S0__S3TOMB_SKEW_MS &&
	    !(after = s0__asprintf("%sd/%016" PRIx64, s0__s3_prefix(s->s3),
	                           s->tomb_marker - S0__S3TOMB_SKEW_MS)))
		rc = s0__error_nomem(err);
	listed l = {.s = s};
	if (rc == S0_OK)
		rc = list_tombs(s, after, &l, err);
	uint64_t newest = s->tomb_marker;
	for (size_t i = 0; rc == S0_OK && i < l.n; i++) {
		char key[TOMB_KEY_BYTES];
		snprintf(key, sizeof key, "d/%016" PRIx64 "-%08" PRIx32, l.v[i].ms, l.v[i].rnd);
		s0__buf body = S0__BUF_INIT;
		s0__s3req rq = {.method = "GET", .key = key, .out = &body};
		rc = s0__s3_run(s->s3, &rq, 1, err);
		if (rc == S0_OK)
			rc = s0__s3_check(s->s3, &rq, err);
		if (rc == S0_OK)
			rc = apply(s, key, (const uint8_t *)body.data, body.len, err);
		s0__buf_free(&body);
		if (rc == S0_OK && s->n_tombs == s->cap_tombs) {
			size_t nc = s->cap_tombs ? s->cap_tombs * 2 : 16;
			s0__s3tomb_seen *nv = realloc(s->tombs, nc * sizeof *nv);
			if (nv) {
				s->tombs = nv;
				s->cap_tombs = nc;
			} else {
				rc = s0__error_nomem(err);
			}
		}
		if (rc == S0_OK) {
			s->tombs[s->n_tombs++] = l.v[i];
			if (l.v[i].ms > newest)
				newest = l.v[i].ms;
		}
	}
	if (rc == S0_OK && newest != s->tomb_marker) {
		s->tomb_marker = newest;
		/* keys older than the listing window are never listed again */
		size_t k = 0;
		for (size_t i = 0; i < s->n_tombs; i++)
			if (s->tombs[i].ms + S0__S3TOMB_SKEW_MS >= newest)
				s->tombs[k++] = s->tombs[i];
		s->n_tombs = k;
		save_marker(s);
	}
	pthread_mutex_unlock(&s->tomb_mu);
	free(l.v);
	free(after);
	return rc;
}
