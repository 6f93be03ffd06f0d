/* S3 object store: open (lock, temp cleanup, bucket check, catalog),
 * reads, has, delete, listing, accounting, test entry points. */
#include "local/objects/s3/objs3_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include <inttypes.h>

#include "local/objects/crash.h"
#include "local/objects/pack/pack.h"
#include "local/objects/s3/s3pack.h"
#include "local/objects/s3/s3tomb.h"
#include "local/objects/s3/s3xml.h"

static int io_error(s0_error **err, const char *what, const char *path)
{
	return s0__error_set(err, S0_EIO, "store_io", "%s %s: %s", what, path, strerror(errno));
}

static void s3_close(void *ctx)
{
	s0__objs3 *s = ctx;
	if (!s)
		return;
	s0__s3cache_close(s->cache);
	s0__objcat_close(s->cat);
	s0__s3doom_close(s->doom);
	s0__s3_free(s->s3);
	if (s->tmp_fd >= 0)
		close(s->tmp_fd);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->refresh_mu);
	pthread_mutex_destroy(&s->tomb_mu);
	free(s->tombs);
	free(s->pending);
	free(s->dir);
	free(s);
}

/* Take the directory lock, make upload/ and empty it but for the marks of
 * packs a commit left (names with a dot: resolve_marks()). */
static int local_dir(s0__objs3 *s, s0_error **err)
{
	if (mkdir(s->dir, 0700) < 0 && errno != EEXIST)
		return io_error(err, "mkdir", s->dir);
	char *lock = s0__asprintf("%s/lock", s->dir), *tmp = s0__asprintf("%s/upload", s->dir);
	int rc = lock && tmp ? S0_OK : s0__error_nomem(err);
	if (rc == S0_OK && (s->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0)
		rc = io_error(err, "open", lock);
	if (rc == S0_OK && flock(s->lock_fd, LOCK_EX | LOCK_NB) < 0)
		rc = s0__error_set(err, errno == EWOULDBLOCK ? S0_ECONFLICT : S0_EIO, "store_locked",
		                   "object store %s is open in another process", s->dir);
	if (rc == S0_OK && mkdir(tmp, 0700) < 0 && errno != EEXIST)
		rc = io_error(err, "mkdir", tmp);
	if (rc == S0_OK && (s->tmp_fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		rc = io_error(err, "open", tmp);
	if (rc == S0_OK) {
		int fd = dup(s->tmp_fd);
		DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
		struct dirent *e;
		while (d && (e = readdir(d)))
			if (e->d_name[0] != '.' && !strchr(e->d_name, '.'))
				unlinkat(s->tmp_fd, e->d_name, 0);
		if (d)
			closedir(d);
		else if (fd >= 0)
			close(fd);
	}
	free(lock);
	free(tmp);
	return rc;
}

bool s0__objs3_drop_unindexed(s0__objs3 *s, uint64_t pack)
{
	char key[S0__S3PACK_KEY_BYTES];
	s0__s3pack_key('x', pack, key);
	s0__s3req rq = {.method = "HEAD", .key = key};
	if (s0__s3_run(s->s3, &rq, 1, NULL) < 0)
		return false;
	if (rq.status >= 200 && rq.status <= 299)
		return true;
	if (rq.status != 404)
		return false;
	s0__s3pack_key('p', pack, key);
	rq = (s0__s3req){.method = "DELETE", .key = key};
	return s0__s3_run(s->s3, &rq, 1, NULL) == S0_OK &&
	       ((rq.status >= 200 && rq.status <= 299) || rq.status == 404);
}

/* Marks upload/<batch>.<16 hex> of packs whose commit a crash or failure
 * interrupted: settle each (s0__objs3_drop_unindexed), keep the mark while
 * the endpoint cannot tell. */
static void resolve_marks(s0__objs3 *s)
{
	int fd = dup(s->tmp_fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	if (d) /* the duplicate shares the offset local_dir()'s listing left at the end */
		rewinddir(d);
	while (d && (e = readdir(d))) {
		const char *dot = strchr(e->d_name, '.');
		uint64_t pack = 0;
		if (e->d_name[0] == '.' || !dot || strlen(dot + 1) != 16 ||
		    sscanf(dot + 1, "%" SCNx64, &pack) != 1)
			continue;
		if (s0__objs3_drop_unindexed(s, pack))
			unlinkat(s->tmp_fd, e->d_name, 0);
	}
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
}

/* The bucket exists (created when missing) and takes our credentials. */
static int check_bucket(s0__objs3 *s, s0_error **err)
{
	s0__s3req rq = {.method = "HEAD"};
	int rc = s0__s3_run(s->s3, &rq, 1, err);
	if (rc == S0_OK && rq.status == 404) {
		rq = (s0__s3req){.method = "PUT"};
		rc = s0__s3_run(s->s3, &rq, 1, err);
		if (rc == S0_OK && rq.status == 409) /* created meanwhile by another node */
			return S0_OK;
	}
	return rc == S0_OK ? s0__s3_check(s->s3, &rq, err) : rc;
}

int s0__objs3_open_url(const char *url, const char *dir, void **ctx_out, s0_error **err)
{
	s0__s3conf conf;
	int rc = s0__s3conf_parse(url, &conf, err);
	if (rc < 0) {
		s0__s3conf_clear(&conf);
		return rc;
	}
	s0__objs3 *s = calloc(1, sizeof *s);
	if (!s) {
		s0__s3conf_clear(&conf);
		return s0__error_nomem(err);
	}
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->refresh_mu, NULL);
	pthread_mutex_init(&s->tomb_mu, NULL);
	s->gc_grace_ms = conf.gc_grace_ms;
	s->tmp_fd = s->lock_fd = -1;
	s->fail_after = -1;
	s->dir = s0__strdup(dir);
	char *cache = s0__asprintf("%s/cache", dir), *index = s0__asprintf("%s/index.db", dir),
	     *doom = s0__asprintf("%s/doomed.db", dir);
	rc = s->dir && cache && index && doom ? S0_OK : s0__error_nomem(err);
	if (rc == S0_OK)
		rc = local_dir(s, err);
	if (rc == S0_OK)
		rc = s0__objcat_open(index, &s->cat, err);
	if (rc == S0_OK)
		rc = s0__s3doom_open(doom, &s->doom, err);
	if (rc == S0_OK)
		s0__s3tomb_load(s);
	if (rc == S0_OK)
		rc = s0__s3cache_open(cache, conf.cache_bytes, &s->cache, err);
	if (rc == S0_OK)
		rc = s0__s3_new(&conf, &s->s3, err);
	if (rc == S0_OK) {
		/* An endpoint that cannot be reached now does not keep a node from
		 * starting: each op answers S0_EUNAVAILABLE until it is back. */
		s0_error *e = NULL;
		rc = check_bucket(s, &e);
		if (rc == S0_OK)
			resolve_marks(s);
		if (rc == S0_EUNAVAILABLE) {
			s0_error_free(e);
			rc = S0_OK;
		} else if (rc < 0) {
			s0__error_put(err, e);
		}
	}
	s0__s3conf_clear(&conf);
	free(cache);
	free(index);
	free(doom);
	if (rc < 0) {
		s3_close(s);
		return rc;
	}
	*ctx_out = s;
	return S0_OK;
}

bool s0__objs3_present(const char *dir)
{
	char *p = s0__asprintf("%s/cache", dir);
	struct stat st;
	bool yes = p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
	free(p);
	return yes;
}

int s0__objs3_raw(void *ctx, const char *method, const char *key, const void *data,
                  size_t len, s0__buf *out, long *status_out, s0_error **err)
{
	s0__objs3 *s = ctx;
	s0__s3req rq = {.method = method, .key = key, .body = data, .len = len, .out = out};
	int rc = s0__s3_run(s->s3, &rq, 1, err);
	*status_out = rq.status;
	return rc;
}

int s0__objs3_locate(void *ctx, const s0__objid *id, char **key_out, uint64_t *off_out,
                     uint64_t *len_out, s0_error **err)
{
	s0__objs3 *s = ctx;
	s0__objloc loc;
	int rc = s0__objcat_lookup(s->cat, id, &loc, err);
	if (rc == S0_ENOTFOUND)
		return s0__error_set(err, S0_ENOTFOUND, "object_missing", "no index names the object");
	if (rc < 0)
		return rc;
	char key[S0__S3PACK_KEY_BYTES];
	s0__s3pack_key('p', loc.pack, key);
	if (!(*key_out = s0__strdup(key)))
		return s0__error_nomem(err);
	*off_out = loc.off + S0__PACK_REC_BYTES;
	*len_out = loc.len;
	return S0_OK;
}

static int count_key(const char *key, uint64_t size, void *payload)
{
	(void)key;
	(void)size;
	(*(uint64_t *)payload)++;
	return 0;
}

int s0__objs3_count_keys(void *ctx, const char *sub, uint64_t *n_out, s0_error **err)
{
	s0__objs3 *s = ctx;
	*n_out = 0;
	char *pfx = s0__asprintf("%s%s", s0__s3_prefix(s->s3), sub);
	char *epfx = pfx ? curl_easy_escape(NULL, pfx, 0) : NULL;
	char *q = epfx ? s0__asprintf("list-type=2&prefix=%s", epfx) : NULL;
	s0__buf body = S0__BUF_INIT;
	char *token = NULL;
	s0__s3req rq = {.method = "GET", .query = q, .out = &body};
	int rc = q ? s0__s3_run(s->s3, &rq, 1, err) : s0__error_nomem(err);
	if (rc == S0_OK)
		rc = s0__s3_check(s->s3, &rq, err);
	if (rc == S0_OK)
		rc = s0__s3xml_list(body.data, body.len, count_key, n_out, &token, err);
	if (rc == S0_OK && token)
		rc = s0__error_set(err, S0_EINVAL, "test_setup", "more than one listing page");
	free(token);
	s0__buf_free(&body);
	free(q);
	curl_free(epfx);
	free(pfx);
	return rc;
}

void s0__objs3_fail_after(void *ctx, long packs)
{
	s0__objs3 *s = ctx;
	pthread_mutex_lock(&s->mu);
	s->fail_after = packs;
	pthread_mutex_unlock(&s->mu);
}

void s0__objs3_clock_shift(void *ctx, uint64_t ms)
{
	s0__objs3 *s = ctx;
	pthread_mutex_lock(&s->mu);
	s->clock_shift_ms += ms;
	pthread_mutex_unlock(&s->mu);
}

uint64_t s0__objs3_cache_bytes(void *ctx)
{
	s0__objs3 *s = ctx;
	return s0__s3cache_bytes(s->cache);
}

int s0__objs3_cache_path(void *ctx, const s0__objid *id, char **path_out, s0_error **err)
{
	s0__objs3 *s = ctx;
	*path_out = s0__s3cache_path(s->cache, id);
	return *path_out ? S0_OK : s0__error_nomem(err);
}

int s0__objs3_trusted(s0__objs3 *s, const s0__objid *id, s0__objloc *loc_out, bool *out,
                      s0_error **err)
{
	*out = false;
	int rc = s0__objcat_lookup(s->cat, id, loc_out, err);
	if (rc == S0_ENOTFOUND)
		return S0_OK;
	uint64_t at;
	if (rc == S0_OK)
		rc = s0__s3doom_get(s->doom, id, loc_out->pack, &at, err);
	if (rc == S0_ENOTFOUND)
		*out = true;
	return rc == S0_ENOTFOUND || rc == S0_OK ? S0_OK : rc;
}

/* From the batch, then this node's catalog less the doomed objects
 * (s0__objs3_trusted()): ids only another node's packs hold read as absent
 * until a get or a listing refreshed it (a put then stores a second copy,
 * which costs space, never correctness). */
static int s3_has(void *ctx, void *batch, const s0__objid *id, bool *out, s0_error **err)
{
	s0__objs3 *s = ctx;
	if (batch)
		return s0__objs3_batch_has(s, batch, id, out, err);
	s0__objloc loc;
	return s0__objs3_trusted(s, id, &loc, out, err);
}

static int s3_get(void *ctx, const s0__objid *id, s0__buf *out, s0_error **err)
{
	s0__objs3 *s = ctx;
	if (s0__s3cache_get(s->cache, id, out))
		return S0_OK;
	return s0__s3pack_read(s, id, out, err);
}

/* Deletion in two steps (s3tomb.h): an object not doomed yet is written to
 * a tombstone every node reads and doomed here (has() false from then on,
 * reads still work); a doomed one whose doom is older than the GC grace at
 * the start of the GC listing that found it unreferenced again leaves the
 * catalog (durably) and the cache, and packs left without live objects
 * leave the bucket. With a grace of 0 (one node) both steps happen at once.
 * Objects of packs younger than the grace are skipped. */
static int s3_del(void *ctx, const s0__objid *ids, size_t n, uint64_t *freed_objects,
                  uint64_t *freed_bytes, s0_error **err)
{
	s0__objs3 *s = ctx;
	*freed_objects = *freed_bytes = 0;
	s0__objrow *fresh = calloc(n ? n : 1, sizeof *fresh);
	s0__objrow *final = calloc(n ? n : 1, sizeof *final);
	s0__objid *dead = calloc(n ? n : 1, sizeof *dead);
	int rc = fresh && final && dead ? S0_OK : s0__error_nomem(err);
	pthread_mutex_lock(&s->mu);
	uint64_t listed = s->list_ms;
	pthread_mutex_unlock(&s->mu);
	size_t nf = 0, nd = 0;
	for (size_t i = 0; rc == S0_OK && i < n; i++) {
		s0__objloc loc;
		uint64_t at = 0;
		rc = s0__objcat_lookup(s->cat, &ids[i], &loc, err);
		if (rc == S0_ENOTFOUND) {
			rc = S0_OK;
			continue;
		}
		if (rc < 0 || s0__s3tomb_young(s, loc.pack))
			continue;
		rc = s0__s3doom_get(s->doom, &ids[i], loc.pack, &at, err);
		if (rc == S0_ENOTFOUND) {
			fresh[nf++] = (s0__objrow){ids[i], loc};
			rc = S0_OK;
		} else if (rc == S0_OK && (!s->gc_grace_ms || at + s->gc_grace_ms <= listed)) {
			final[nd++] = (s0__objrow){ids[i], loc};
		}
	}
	if (rc == S0_OK)
		rc = s0__s3tomb_write(s, fresh, nf, err);
	if (rc == S0_OK)
		rc = s0__s3doom_add(s->doom, fresh, nf, s0__s3tomb_clock(s), err);
	/* one node: nobody else can have reused them meanwhile */
	for (size_t i = 0; rc == S0_OK && !s->gc_grace_ms && i < nf; i++)
		final[nd++] = fresh[i];
	for (size_t i = 0; i < nd; i++)
		dead[i] = final[i].id;
	if (rc == S0_OK)
		rc = s0__objcat_delete(s->cat, dead, nd, freed_objects, freed_bytes, err);
	for (size_t i = 0; rc == S0_OK && i < nd; i++)
		s0__s3cache_drop(s->cache, &dead[i]);
	if (rc == S0_OK)
		rc = s0__s3doom_forget(s->doom, final, nd, err);
	/* a copy in another pack is still stored: it becomes the place */
	if (rc == S0_OK)
		rc = s0__s3pack_promote(s, dead, nd, err);
	free(fresh);
	free(final);
	free(dead);
	if (rc == S0_OK && *freed_objects)
		s0__crash_point("objects.deleted");
	if (rc == S0_OK)
		rc = s0__s3pack_drop_empty(s, NULL, err);
	return rc;
}

/* Every object an index of the bucket names (a refresh first), less the
 * ones deleted here. */
static int s3_list(void *ctx, s0__objlist_cb cb, void *payload, s0_error **err)
{
	s0__objs3 *s = ctx;
	/* GC lists right after reading its roots: a doom older than the grace
	 * at this time is final for the ids this GC finds unreferenced */
	uint64_t now = s0__s3tomb_clock(s);
	pthread_mutex_lock(&s->mu);
	s->list_ms = now;
	pthread_mutex_unlock(&s->mu);
	pthread_mutex_lock(&s->refresh_mu);
	uint64_t seen = s->refreshes;
	pthread_mutex_unlock(&s->refresh_mu);
	s0__objrow *rows = NULL;
	size_t n = 0;
	int rc = s0__s3pack_refresh(s, seen, false, NULL, err);
	if (rc == S0_OK)
		rc = s0__objcat_list(s->cat, &rows, &n, err);
	for (size_t i = 0; rc == S0_OK && i < n; i++)
		if (cb(&rows[i].id, rows[i].loc.len, payload))
			rc = s0__error_set(err, S0_EUSER, NULL, "object listing stopped by its callback");
	free(rows);
	return rc;
}

/* Packs without live objects leave the bucket; partly dead packs stay
 * whole (no compaction: docs/scaling.md). */
static int s3_maintain(void *ctx, s0_error **err)
{
	return s0__s3pack_drop_empty(ctx, NULL, err);
}

/* From the catalog after a refresh: objects and sealed bytes of the live
 * ones, file_bytes the packs' sizes (dead records included). */
static int s3_usage(void *ctx, s0__objstore_usage_info *out, s0_error **err)
{
	s0__objs3 *s = ctx;
	memset(out, 0, sizeof *out);
	pthread_mutex_lock(&s->refresh_mu);
	uint64_t seen = s->refreshes;
	pthread_mutex_unlock(&s->refresh_mu);
	int rc = s0__s3pack_refresh(s, seen, false, NULL, err);
	if (rc == S0_OK)
		rc = s0__objcat_totals(s->cat, &out->objects, &out->stored_bytes, &out->file_bytes,
		                       err);
	return rc;
}

const s0__objstore_ops s0__objs3_ops = {
	.batch_begin = s0__objs3_begin,
	.put = s0__objs3_put,
	.batch_commit = s0__objs3_commit,
	.batch_abort = s0__objs3_abort,
	.has = s3_has,
	.get = s3_get,
	.del = s3_del,
	.list = s3_list,
	.maintain = s3_maintain,
	.usage = s3_usage,
	.recover = NULL, /* open() removed the temp files and settled interrupted packs */
	.close = s3_close,
};
