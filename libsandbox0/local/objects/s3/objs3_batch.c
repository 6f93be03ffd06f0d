/* S3 object store: batches (temp files), commit (parallel PUTs). */
#include "local/objects/s3/objs3_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "local/objects/crash.h"
#include "local/objects/idmap.h"

/* A commit PUTs its objects in groups read into memory: at most GROUP
 * objects or GROUP_BYTES sealed bytes (at least one object) per group, all
 * of a group in flight together (s3http.h runs 32 at once). */
#define GROUP 128
#define GROUP_BYTES ((size_t)32 << 20)

/* Temp file name: "<batch>.<64 hex>". */
#define TMP_NAME_BYTES (24 + S0__OBJID_HEX_BYTES)

typedef struct s3_batch {
	s0__objs3 *s;
	uint64_t seq;
	pthread_mutex_t mu; /* index, ids, failed */
	s0__idmap index;    /* id -> row */
	s0__objid *ids;
	size_t n, cap;
} s3_batch;

static void tmp_name(const s3_batch *b, const s0__objid *id, char out[TMP_NAME_BYTES])
{
	char hex[S0__OBJID_HEX_BYTES];
	s0__objid_hex(id, hex);
	snprintf(out, TMP_NAME_BYTES, "%llu.%s", (unsigned long long)b->seq, hex);
}

int s0__objs3_begin(void *ctx, void **batch_out, s0_error **err)
{
	s0__objs3 *s = ctx;
	s3_batch *b = calloc(1, sizeof *b);
	if (!b)
		return s0__error_nomem(err);
	b->s = s;
	pthread_mutex_init(&b->mu, NULL);
	pthread_mutex_lock(&s->mu);
	b->seq = s->next_batch++;
	pthread_mutex_unlock(&s->mu);
	*batch_out = b;
	return S0_OK;
}

/* Remove b's temp files and free it. */
static void batch_free(s3_batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		char name[TMP_NAME_BYTES];
		tmp_name(b, &b->ids[i], name);
		unlinkat(b->s->tmp_fd, name, 0);
	}
	s0__idmap_free(&b->index);
	free(b->ids);
	pthread_mutex_destroy(&b->mu);
	free(b);
}

bool s0__objs3_batch_has(void *batch, const s0__objid *id)
{
	s3_batch *b = batch;
	pthread_mutex_lock(&b->mu);
	bool yes = s0__idmap_get(&b->index, id, NULL);
	pthread_mutex_unlock(&b->mu);
	return yes;
}

static int write_file(int dir_fd, const char *name, const void *data, size_t len, s0_error **err)
{
	int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return s0__error_set(err, errno == ENOSPC ? S0_ENOSPACE : S0_EIO, "store_io",
		                     "create upload/%s: %s", name, strerror(errno));
	const char *p = data;
	size_t done = 0;
	int rc = S0_OK;
	while (done < len) {
		ssize_t w = write(fd, p + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = s0__error_set(err, errno == ENOSPC ? S0_ENOSPACE : S0_EIO, "store_io",
			                   "write upload/%s: %s", name, strerror(w < 0 ? errno : EIO));
			break;
		}
		done += (size_t)w;
	}
	close(fd);
	if (rc < 0)
		unlinkat(dir_fd, name, 0);
	return rc;
}

int s0__objs3_put(void *ctx, void *batch, const s0__objid *id, const void *sealed, size_t len,
                  bool *stored_out, s0_error **err)
{
	(void)ctx;
	s3_batch *b = batch;
	pthread_mutex_lock(&b->mu);
	bool existed = s0__idmap_get(&b->index, id, NULL);
	if (!existed && b->n == b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 64;
		s0__objid *nv = realloc(b->ids, nc * sizeof *nv);
		if (!nv) {
			pthread_mutex_unlock(&b->mu);
			return s0__error_nomem(err);
		}
		b->ids = nv;
		b->cap = nc;
	}
	/* Claim the row first so a concurrent put of the same id is a no-op;
	 * the file is complete before commit (puts finish before it). */
	if (!existed && s0__idmap_put(&b->index, id, b->n, NULL) < 0) {
		pthread_mutex_unlock(&b->mu);
		return s0__error_nomem(err);
	}
	size_t row = b->n;
	if (!existed)
		b->ids[b->n++] = *id;
	pthread_mutex_unlock(&b->mu);
	*stored_out = !existed;
	if (existed)
		return S0_OK;
	char name[TMP_NAME_BYTES];
	tmp_name(b, id, name);
	int rc = write_file(b->s->tmp_fd, name, sealed, len, err);
	if (rc < 0) {
		/* Forget the row so the batch never names a missing file. */
		pthread_mutex_lock(&b->mu);
		s0__idmap_del(&b->index, id);
		b->ids[row] = b->ids[--b->n];
		if (row < b->n)
			s0__idmap_put(&b->index, &b->ids[row], row, NULL);
		pthread_mutex_unlock(&b->mu);
	}
	return rc;
}

/* Read upload file name into out. */
static int read_file(int dir_fd, const char *name, s0__buf *out, s0_error **err)
{
	int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return s0__error_set(err, S0_EIO, "store_io", "read upload/%s: %s", name, strerror(e));
	}
	size_t size = (size_t)st.st_size, got = 0;
	s0__buf_reset(out);
	if (s0__buf_grow(out, size) < 0) {
		close(fd);
		return s0__error_nomem(err);
	}
	while (got < size) {
		ssize_t r = pread(fd, out->data + got, size - got, (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			close(fd);
			return s0__error_set(err, S0_EIO, "store_io", "read upload/%s: %s", name,
			                     r < 0 ? strerror(errno) : "file shrank");
		}
		got += (size_t)r;
	}
	close(fd);
	out->len = got;
	return S0_OK;
}

/* PUT a group starting at row from of b: rows [from, *next). */
static int put_group(s3_batch *b, size_t from, size_t *next, s0_error **err)
{
	s0__s3req *rq = calloc(GROUP, sizeof *rq);
	s0__buf *body = calloc(GROUP, sizeof *body);
	char(*keys)[S0__OBJS3_KEY_BYTES] = calloc(GROUP, sizeof *keys);
	int rc = rq && body && keys ? S0_OK : s0__error_nomem(err);
	size_t n = 0, bytes = 0;
	while (rc == S0_OK && n < GROUP && from + n < b->n && (n == 0 || bytes < GROUP_BYTES)) {
		char name[TMP_NAME_BYTES];
		tmp_name(b, &b->ids[from + n], name);
		rc = read_file(b->s->tmp_fd, name, &body[n], err);
		s0__objs3_key(&b->ids[from + n], keys[n]);
		rq[n] = (s0__s3req){.method = "PUT", .key = keys[n], .body = body[n].data,
		                    .len = body[n].len};
		bytes += body[n].len;
		n++;
	}
	*next = from + n;
	if (rc == S0_OK)
		rc = s0__s3_run(b->s->s3, rq, n, err);
	for (size_t i = 0; rc == S0_OK && i < n; i++)
		rc = s0__s3_check(b->s->s3, &rq[i], err);
	for (size_t i = 0; rc == S0_OK && i < n; i++)
		s0__s3cache_put(b->s->cache, &b->ids[from + i], body[i].data, body[i].len);
	for (size_t i = 0; body && i < n; i++)
		s0__buf_free(&body[i]);
	free(rq);
	free(body);
	free(keys);
	return rc;
}

int s0__objs3_commit(void *ctx, void *batch, s0_error **err)
{
	(void)ctx;
	s3_batch *b = batch;
	int rc = S0_OK;
	if (b->n)
		s0__crash_point("objects.s3_written");
	for (size_t i = 0; rc == S0_OK && i < b->n;) {
		rc = put_group(b, i, &i, err);
		if (rc == S0_OK)
			s0__crash_point("objects.s3_put");
	}
	if (rc == S0_OK && b->n)
		s0__crash_point("objects.s3_committed");
	batch_free(b);
	return rc;
}

void s0__objs3_abort(void *ctx, void *batch)
{
	(void)ctx;
	batch_free(batch);
}
