/* S3 object store: open (lock, temp cleanup, bucket check), reads, has,
 * delete, listing, accounting. */
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

#include "local/objects/crash.h"
#include "local/objects/s3/s3xml.h"

/* Requests of one delete at once. */
#define DEL_GROUP 64

static int io_error(s0_error **err, const char *what, const char *path)
{
	return s0__error_set(err, S0_EIO, "store_io", "%s %s: %s", what, path, strerror(errno));
}

void s0__objs3_key(const s0__objid *id, char out[S0__OBJS3_KEY_BYTES])
{
	out[0] = 'o';
	out[1] = '/';
	s0__objid_hex(id, out + 2);
}

static void s3_close(void *ctx)
{
	s0__objs3 *s = ctx;
	if (!s)
		return;
	s0__s3cache_close(s->cache);
	s0__s3_free(s->s3);
	if (s->tmp_fd >= 0)
		close(s->tmp_fd);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	pthread_mutex_destroy(&s->mu);
	free(s->dir);
	free(s);
}

/* Take the directory lock, make upload/ and empty it. */
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
			if (e->d_name[0] != '.')
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
	s->tmp_fd = s->lock_fd = -1;
	s->dir = s0__strdup(dir);
	char *cache = s0__asprintf("%s/cache", dir);
	rc = s->dir && cache ? S0_OK : s0__error_nomem(err);
	if (rc == S0_OK)
		rc = local_dir(s, err);
	if (rc == S0_OK)
		rc = s0__s3cache_open(cache, conf.cache_bytes, &s->cache, err);
	if (rc == S0_OK)
		rc = s0__s3_new(&conf, &s->s3, err);
	if (rc == S0_OK) {
		/* An endpoint that cannot be reached now does not keep a node from
		 * starting: each op answers S0_EUNAVAILABLE until it is back. */
		s0_error *e = NULL;
		rc = check_bucket(s, &e);
		if (rc == S0_EUNAVAILABLE) {
			s0_error_free(e);
			rc = S0_OK;
		} else if (rc < 0) {
			s0__error_put(err, e);
		}
	}
	s0__s3conf_clear(&conf);
	free(cache);
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

int s0__objs3_raw_put(void *ctx, const s0__objid *id, const void *data, size_t len,
                      s0_error **err)
{
	s0__objs3 *s = ctx;
	char key[S0__OBJS3_KEY_BYTES];
	s0__objs3_key(id, key);
	s0__s3req rq = {.method = "PUT", .key = key, .body = data, .len = len};
	int rc = s0__s3_run(s->s3, &rq, 1, err);
	if (rc == S0_OK)
		rc = s0__s3_check(s->s3, &rq, err);
	s0__s3cache_drop(s->cache, id);
	return rc;
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

static int s3_has(void *ctx, void *batch, const s0__objid *id, bool *out, s0_error **err)
{
	s0__objs3 *s = ctx;
	if (batch && s0__objs3_batch_has(batch, id)) {
		*out = true;
		return S0_OK;
	}
	char *path = s0__s3cache_path(s->cache, id);
	struct stat st;
	bool cached = path && stat(path, &st) == 0;
	free(path);
	if (cached) {
		*out = true;
		return S0_OK;
	}
	char key[S0__OBJS3_KEY_BYTES];
	s0__objs3_key(id, key);
	s0__s3req rq = {.method = "HEAD", .key = key};
	int rc = s0__s3_run(s->s3, &rq, 1, err);
	if (rc < 0)
		return rc;
	*out = rq.status >= 200 && rq.status <= 299;
	return rq.status == 404 || *out ? S0_OK : s0__s3_check(s->s3, &rq, err);
}

static int s3_get(void *ctx, const s0__objid *id, s0__buf *out, s0_error **err)
{
	s0__objs3 *s = ctx;
	if (s0__s3cache_get(s->cache, id, out))
		return S0_OK;
	char key[S0__OBJS3_KEY_BYTES];
	s0__objs3_key(id, key);
	s0__s3req rq = {.method = "GET", .key = key, .out = out};
	int rc = s0__s3_run(s->s3, &rq, 1, err);
	if (rc == S0_OK && rq.status == 404)
		return s0__error_set(err, S0_ENOTFOUND, "object_missing", "object %s is not stored",
		                     key + 2);
	if (rc == S0_OK)
		rc = s0__s3_check(s->s3, &rq, err);
	if (rc == S0_OK)
		s0__s3cache_put(s->cache, id, out->data, out->len);
	return rc;
}

/* Delete ids [0, n) with n <= DEL_GROUP: HEAD them (presence and size),
 * DELETE the present ones. */
static int del_group(s0__objs3 *s, const s0__objid *ids, size_t n, uint64_t *objs,
                     uint64_t *bytes, s0_error **err)
{
	s0__s3req rq[DEL_GROUP], drq[DEL_GROUP];
	char keys[DEL_GROUP][S0__OBJS3_KEY_BYTES];
	memset(rq, 0, sizeof rq);
	for (size_t i = 0; i < n; i++) {
		s0__objs3_key(&ids[i], keys[i]);
		rq[i] = (s0__s3req){.method = "HEAD", .key = keys[i]};
	}
	int rc = s0__s3_run(s->s3, rq, n, err);
	size_t nd = 0;
	uint64_t size = 0;
	for (size_t i = 0; rc == S0_OK && i < n; i++) {
		s0__s3cache_drop(s->cache, &ids[i]);
		if (rq[i].status == 404)
			continue;
		rc = s0__s3_check(s->s3, &rq[i], err);
		size += rq[i].length > 0 ? (uint64_t)rq[i].length : 0;
		drq[nd++] = (s0__s3req){.method = "DELETE", .key = keys[i]};
	}
	if (rc == S0_OK)
		rc = s0__s3_run(s->s3, drq, nd, err);
	for (size_t i = 0; rc == S0_OK && i < nd; i++)
		if (drq[i].status != 404)
			rc = s0__s3_check(s->s3, &drq[i], err);
	if (rc == S0_OK) {
		*objs += nd;
		*bytes += size;
	}
	return rc;
}

static int s3_del(void *ctx, const s0__objid *ids, size_t n, uint64_t *freed_objects,
                  uint64_t *freed_bytes, s0_error **err)
{
	s0__objs3 *s = ctx;
	*freed_objects = *freed_bytes = 0;
	int rc = S0_OK;
	for (size_t i = 0; rc == S0_OK && i < n; i += DEL_GROUP)
		rc = del_group(s, ids + i, n - i < DEL_GROUP ? n - i : DEL_GROUP, freed_objects,
		               freed_bytes, err);
	if (rc == S0_OK && *freed_objects)
		s0__crash_point("objects.deleted");
	return rc;
}

/* One listed key: an object of this store, handed to the caller. */
typedef struct list_ctx {
	size_t skip; /* bytes of "PREFIX/o/" */
	s0__objlist_cb cb;
	void *payload;
} list_ctx;

static int list_key(const char *key, uint64_t size, void *payload)
{
	list_ctx *l = payload;
	s0__objid id;
	if (strlen(key) != l->skip + S0__OBJID_HEX_BYTES - 1 ||
	    s0__objid_parse(key + l->skip, &id, NULL) < 0)
		return 0; /* not an object of ours */
	return l->cb(&id, size, l->payload);
}

/* ListObjectsV2 over PREFIX/o/, page by page (a snapshot per page: S3
 * listings are not atomic, objects committed during it may or may not
 * appear). */
static int s3_list(void *ctx, s0__objlist_cb cb, void *payload, s0_error **err)
{
	s0__objs3 *s = ctx;
	char *pfx = s0__asprintf("%so/", s0__s3_prefix(s->s3));
	char *epfx = pfx ? curl_easy_escape(NULL, pfx, 0) : NULL;
	list_ctx l = {pfx ? strlen(pfx) : 0, cb, payload};
	int rc = epfx ? S0_OK : s0__error_nomem(err);
	char *token = NULL;
	s0__buf body = S0__BUF_INIT;
	do {
		char *etok = token ? curl_easy_escape(NULL, token, 0) : NULL;
		/* parameters in canonical (sorted) order, values escaped */
		char *q = etok ? s0__asprintf("continuation-token=%s&list-type=2&prefix=%s", etok, epfx)
		               : s0__asprintf("list-type=2&prefix=%s", epfx);
		curl_free(etok);
		free(token);
		token = NULL;
		if (!q) {
			rc = s0__error_nomem(err);
			break;
		}
		s0__s3req rq = {.method = "GET", .query = q, .out = &body};
		rc = s0__s3_run(s->s3, &rq, 1, err);
		if (rc == S0_OK)
			rc = s0__s3_check(s->s3, &rq, err);
		if (rc == S0_OK)
			rc = s0__s3xml_list(body.data, body.len, list_key, &l, &token, err);
		free(q);
	} while (rc == S0_OK && token);
	free(token);
	s0__buf_free(&body);
	curl_free(epfx);
	free(pfx);
	return rc;
}

static int s3_maintain(void *ctx, s0_error **err)
{
	(void)ctx;
	(void)err;
	return S0_OK; /* a deleted object's space is the endpoint's to reclaim */
}

static int usage_cb(const s0__objid *id, uint64_t sealed_bytes, void *payload)
{
	(void)id;
	s0__objstore_usage_info *u = payload;
	u->objects++;
	u->stored_bytes += sealed_bytes;
	return 0;
}

/* Counted by one listing of the bucket (the endpoint keeps no cheaper count). */
static int s3_usage(void *ctx, s0__objstore_usage_info *out, s0_error **err)
{
	memset(out, 0, sizeof *out);
	int rc = s3_list(ctx, usage_cb, out, err);
	out->file_bytes = out->stored_bytes;
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
	.recover = NULL, /* open() removed the temp files; the bucket needs no re-index */
	.close = s3_close,
};
