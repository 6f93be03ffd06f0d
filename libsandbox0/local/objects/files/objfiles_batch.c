/* Files object store: batches (temp files, batched sync, renames), delete. */
#include "local/objects/files/objfiles_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "local/objects/crash.h"
#include "local/objects/idmap.h"

/* Temp file name: "<batch>.<64 hex>". */
#define TMP_NAME_BYTES (24 + S0__OBJID_HEX_BYTES)

typedef struct of_row {
	s0__objid id;
	uint64_t bytes;
	bool written; /* its temp file is complete */
} of_row;

typedef struct of_batch {
	s0__objfiles *of;
	uint64_t seq;
	pthread_mutex_t mu; /* index, rows, failed */
	s0__idmap index;    /* id -> row */
	of_row *rows;
	size_t n, cap;
	int failed; /* an s0 code once a write failed */
} of_batch;

static int io_error(s0_error **err, int e, const char *what, const char *name)
{
	return s0__error_set(err, e == ENOSPC ? S0_ENOSPACE : S0_EIO, "store_io", "%s %s: %s",
	                     what, name, strerror(e));
}

static void tmp_name(const of_batch *b, const s0__objid *id, char out[TMP_NAME_BYTES])
{
	char hex[S0__OBJID_HEX_BYTES];
	s0__objid_hex(id, hex);
	snprintf(out, TMP_NAME_BYTES, "%llu.%s", (unsigned long long)b->seq, hex);
}

int s0__objfiles_begin(void *ctx, void **batch_out, s0_error **err)
{
	s0__objfiles *of = ctx;
	of_batch *b = calloc(1, sizeof *b);
	if (!b)
		return s0__error_nomem(err);
	b->of = of;
	pthread_mutex_init(&b->mu, NULL);
	pthread_mutex_lock(&of->mu);
	b->seq = of->next_batch++;
	pthread_mutex_unlock(&of->mu);
	*batch_out = b;
	return S0_OK;
}

/* Remove the temp files of b except the moved ones (moved: nullable) and
 * free it. */
static void batch_free(of_batch *b, const bool *moved)
{
	for (size_t i = 0; i < b->n; i++) {
		if (moved && moved[i])
			continue;
		char name[TMP_NAME_BYTES];
		tmp_name(b, &b->rows[i].id, name);
		unlinkat(b->of->tmp_fd, name, 0);
	}
	s0__idmap_free(&b->index);
	free(b->rows);
	pthread_mutex_destroy(&b->mu);
	free(b);
}

bool s0__objfiles_batch_has(void *batch, const s0__objid *id)
{
	of_batch *b = batch;
	pthread_mutex_lock(&b->mu);
	bool in = s0__idmap_get(&b->index, id, NULL);
	pthread_mutex_unlock(&b->mu);
	return in;
}

/* Under b->mu: a row for id; its index in *i. */
static int reserve(of_batch *b, const s0__objid *id, uint64_t len, size_t *i, s0_error **err)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		of_row *r = realloc(b->rows, cap * sizeof *r);
		if (!r)
			return s0__error_nomem(err);
		b->rows = r;
		b->cap = cap;
	}
	if (s0__idmap_put(&b->index, id, b->n, NULL) < 0)
		return s0__error_nomem(err);
	*i = b->n++;
	b->rows[*i] = (of_row){*id, len, false};
	return S0_OK;
}

/* Write a whole new file name in dir_fd (no sync). Returns 0 or an errno. */
static int write_file(int dir_fd, const char *name, const void *data, size_t len)
{
	int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno;
	const char *p = data;
	size_t done = 0;
	int e = 0;
	while (done < len) {
		ssize_t n = write(fd, p + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			break;
		}
		done += (size_t)n;
	}
	if (close(fd) < 0 && !e)
		e = errno;
	return e;
}

int s0__objfiles_put(void *ctx, void *batch, const s0__objid *id, const void *sealed,
                     size_t len, bool *stored_out, s0_error **err)
{
	(void)ctx;
	of_batch *b = batch;
	pthread_mutex_lock(&b->mu);
	if (b->failed) {
		int code = b->failed;
		pthread_mutex_unlock(&b->mu);
		return s0__error_set(err, code, "store_io", "batch failed earlier");
	}
	if (s0__idmap_get(&b->index, id, NULL)) {
		pthread_mutex_unlock(&b->mu);
		*stored_out = false;
		return S0_OK;
	}
	size_t i = 0;
	int rc = reserve(b, id, len, &i, err);
	pthread_mutex_unlock(&b->mu);
	if (rc < 0)
		return rc;
	char name[TMP_NAME_BYTES];
	tmp_name(b, id, name);
	int e = write_file(b->of->tmp_fd, name, sealed, len);
	pthread_mutex_lock(&b->mu);
	if (e)
		b->failed = e == ENOSPC ? S0_ENOSPACE : S0_EIO;
	else
		b->rows[i].written = true;
	pthread_mutex_unlock(&b->mu);
	if (e)
		return io_error(err, e, "write", name);
	*stored_out = true;
	return S0_OK;
}

/* Phase 1: every temp file's data on disk. */
static int sync_data(of_batch *b, s0_error **err)
{
	char *names = malloc(b->n * TMP_NAME_BYTES);
	if (!names)
		return s0__error_nomem(err);
	for (size_t i = 0; i < b->n; i++)
		tmp_name(b, &b->rows[i].id, names + i * TMP_NAME_BYTES);
	int rc = s0__objfiles_sync_names(b->of, b->of->tmp_fd, names, TMP_NAME_BYTES, b->n, false,
	                                 err);
	free(names);
	return rc;
}

/*
 * Under of->mu: phase 2, rename every temp file into place. An id whose
 * file already exists (committed by a concurrent batch, or an orphan of a
 * crashed one: whole either way) keeps that file; moved[i] says whether
 * row i was renamed. On failure the caller unlinks what was moved.
 */
static int rename_all(of_batch *b, bool *moved, bool dirs[256], size_t *done, s0_error **err)
{
	s0__objfiles *of = b->of;
	for (*done = 0; *done < b->n; (*done)++) {
		of_row *r = &b->rows[*done];
		char name[TMP_NAME_BYTES], rel[S0__OBJFILES_REL_BYTES];
		tmp_name(b, &r->id, name);
		s0__objfiles_rel(&r->id, rel);
		struct stat st;
		moved[*done] = false;
		if (fstatat(of->root_fd, rel, &st, 0) == 0)
			continue; /* batch_free() removes the temp file */
		if (errno != ENOENT)
			return io_error(err, errno, "stat", rel);
		if (renameat(of->tmp_fd, name, of->root_fd, rel) < 0)
			return io_error(err, errno, "rename", rel);
		moved[*done] = true;
		dirs[r->id.b[0]] = true;
		s0__crash_point("objects.files_renamed");
	}
	return S0_OK;
}

/* Under of->mu: undo the renames among the first n rows of b. */
static void unrename(of_batch *b, const bool *moved, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char rel[S0__OBJFILES_REL_BYTES];
		s0__objfiles_rel(&b->rows[i].id, rel);
		if (moved[i])
			unlinkat(b->of->root_fd, rel, 0);
	}
}

int s0__objfiles_commit(void *ctx, void *batch, s0_error **err)
{
	s0__objfiles *of = ctx;
	of_batch *b = batch;
	int rc = b->failed ? s0__error_set(err, b->failed, "store_io", "batch failed earlier")
	                   : S0_OK;
	for (size_t i = 0; rc == S0_OK && i < b->n; i++)
		if (!b->rows[i].written)
			rc = s0__error_set(err, S0_EIO, "store_io", "batch committed during a put");
	if (rc < 0 || !b->n) {
		batch_free(b, NULL);
		return rc;
	}
	s0__crash_point("objects.files_written");
	rc = sync_data(b, err);
	if (rc < 0) {
		batch_free(b, NULL);
		return rc;
	}
	s0__crash_point("objects.files_synced");
	bool *moved = malloc(b->n * sizeof *moved);
	bool dirs[256] = {false};
	size_t done = 0;
	pthread_mutex_lock(&of->mu);
	rc = moved ? rename_all(b, moved, dirs, &done, err) : s0__error_nomem(err);
	if (rc == S0_OK)
		rc = s0__objfiles_sync_dirs(of, dirs, err);
	if (rc < 0 && moved)
		unrename(b, moved, done < b->n ? done + 1 : b->n);
	for (size_t i = 0; rc == S0_OK && i < b->n; i++) {
		if (moved[i]) {
			of->objects++;
			of->bytes += b->rows[i].bytes;
		}
	}
	pthread_mutex_unlock(&of->mu);
	if (rc == S0_OK)
		s0__crash_point("objects.files_committed");
	batch_free(b, rc == S0_OK ? moved : NULL);
	free(moved);
	return rc;
}

void s0__objfiles_abort(void *ctx, void *batch)
{
	(void)ctx;
	if (batch)
		batch_free(batch, NULL);
}

int s0__objfiles_del(void *ctx, const s0__objid *ids, size_t n, uint64_t *freed_objects,
                     uint64_t *freed_bytes, s0_error **err)
{
	s0__objfiles *of = ctx;
	bool dirs[256] = {false};
	uint64_t objs = 0, bytes = 0;
	int rc = S0_OK;
	pthread_mutex_lock(&of->mu);
	for (size_t i = 0; rc == S0_OK && i < n; i++) {
		char rel[S0__OBJFILES_REL_BYTES];
		s0__objfiles_rel(&ids[i], rel);
		struct stat st;
		if (fstatat(of->root_fd, rel, &st, 0) < 0) {
			if (errno != ENOENT)
				rc = io_error(err, errno, "stat", rel);
			continue;
		}
		if (unlinkat(of->root_fd, rel, 0) < 0) {
			if (errno != ENOENT)
				rc = io_error(err, errno, "unlink", rel);
			continue;
		}
		dirs[ids[i].b[0]] = true;
		objs++;
		bytes += (uint64_t)st.st_size;
	}
	of->objects -= objs;
	of->bytes -= bytes;
	if (objs) {
		int src = s0__objfiles_sync_dirs(of, dirs, rc == S0_OK ? err : NULL);
		if (rc == S0_OK)
			rc = src;
	}
	pthread_mutex_unlock(&of->mu);
	if (rc < 0)
		return rc;
	s0__crash_point("objects.deleted");
	*freed_objects = objs;
	*freed_bytes = bytes;
	return S0_OK;
}
