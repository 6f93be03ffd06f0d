/* Files object store: open (lock, temp cleanup, count), reads, listing. */
#include "local/objects/files/objfiles_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static int io_error(s0_error **err, int e, const char *what, const char *path)
{
	return s0__error_set(err, e == ENOSPC ? S0_ENOSPACE : S0_EIO, "store_io", "%s %s: %s",
	                     what, path, strerror(e));
}

void s0__objfiles_rel(const s0__objid *id, char out[S0__OBJFILES_REL_BYTES])
{
	char hex[S0__OBJID_HEX_BYTES];
	s0__objid_hex(id, hex);
	out[0] = hex[0];
	out[1] = hex[1];
	out[2] = '/';
	memcpy(out + 3, hex, S0__OBJID_HEX_BYTES);
}

static void of_close(void *ctx)
{
	s0__objfiles *of = ctx;
	if (!of)
		return;
	if (of->root_fd >= 0)
		close(of->root_fd);
	if (of->tmp_fd >= 0)
		close(of->tmp_fd);
	if (of->lock_fd >= 0)
		close(of->lock_fd);
	pthread_mutex_destroy(&of->mu);
	free(of->dir);
	free(of);
}

static int take_lock(s0__objfiles *of, s0_error **err)
{
	of->lock_fd = openat(of->root_fd, "lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (of->lock_fd < 0)
		return io_error(err, errno, "open", "lock");
	if (flock(of->lock_fd, LOCK_EX | LOCK_NB) < 0)
		return s0__error_set(err, errno == EWOULDBLOCK ? S0_ECONFLICT : S0_EIO, "store_locked",
		                     "object store %s is open in another process", of->dir);
	return S0_OK;
}

/* Create tmp/ and the 256 fan-out directories that are missing; when any
 * was created, make the names durable. */
static int make_layout(s0__objfiles *of, s0_error **err)
{
	bool created = false;
	for (int i = -1; i < 256; i++) {
		char name[4];
		snprintf(name, sizeof name, i < 0 ? "tmp" : "%02x", i);
		if (mkdirat(of->root_fd, name, 0700) == 0)
			created = true;
		else if (errno != EEXIST)
			return io_error(err, errno, "mkdir", name);
	}
	if (created && fsync(of->root_fd) < 0)
		return io_error(err, errno, "fsync", of->dir);
	of->tmp_fd = openat(of->root_fd, "tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (of->tmp_fd < 0)
		return io_error(err, errno, "open", "tmp");
	return S0_OK;
}

/* Remove every leftover temp file (batches a crash interrupted). A
 * directory is none of ours (batches make files): removed when empty, else
 * left alone, never a reason to refuse the store. */
static int clean_tmp(s0__objfiles *of, s0_error **err)
{
	int fd = dup(of->tmp_fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return io_error(err, errno, "open", "tmp");
	}
	struct dirent *e;
	int rc = S0_OK;
	while (rc == S0_OK && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(of->tmp_fd, e->d_name, 0) == 0 || errno == ENOENT)
			continue;
		if (errno == EISDIR) {
			if (unlinkat(of->tmp_fd, e->d_name, AT_REMOVEDIR) == 0 || errno == ENOENT ||
			    errno == ENOTEMPTY || errno == EEXIST)
				continue;
		}
		rc = io_error(err, errno, "unlink tmp", e->d_name);
	}
	closedir(d);
	return rc;
}

/* Listing callback of open(): count objects and bytes. */
static int count_cb(const s0__objid *id, uint64_t sealed_bytes, void *payload)
{
	(void)id;
	s0__objfiles *of = payload;
	of->objects++;
	of->bytes += sealed_bytes;
	return 0;
}

static int of_list(void *ctx, s0__objlist_cb cb, void *payload, s0_error **err);

int s0__objfiles_open(const char *dir, void **ctx_out, s0_error **err)
{
	s0__objfiles *of = calloc(1, sizeof *of);
	if (!of)
		return s0__error_nomem(err);
	pthread_mutex_init(&of->mu, NULL);
	of->root_fd = of->tmp_fd = of->lock_fd = -1;
	atomic_store(&of->sync, S0__OBJFILES_SYNC_DEFAULT);
	of->dir = s0__strdup(dir);
	int rc = of->dir ? S0_OK : s0__error_nomem(err);
	if (rc == S0_OK && mkdir(dir, 0700) < 0 && errno != EEXIST)
		rc = io_error(err, errno, "mkdir", dir);
	if (rc == S0_OK) {
		of->root_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (of->root_fd < 0)
			rc = io_error(err, errno, "open", dir);
	}
	if (rc == S0_OK)
		rc = take_lock(of, err);
	if (rc == S0_OK)
		rc = make_layout(of, err);
	if (rc == S0_OK)
		rc = clean_tmp(of, err);
	if (rc == S0_OK)
		rc = of_list(of, count_cb, of, err);
	if (rc < 0) {
		of_close(of);
		return rc;
	}
	*ctx_out = of;
	return S0_OK;
}

bool s0__objfiles_present(const char *dir)
{
	char *p = s0__asprintf("%s/tmp", dir);
	struct stat st;
	bool yes = p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
	free(p);
	return yes;
}

void s0__objfiles_set_sync(void *ctx, s0__objfiles_sync mode)
{
	s0__objfiles *of = ctx;
	atomic_store(&of->sync, (int)mode);
}

int s0__objfiles_path(void *ctx, const s0__objid *id, char **path_out, s0_error **err)
{
	s0__objfiles *of = ctx;
	char rel[S0__OBJFILES_REL_BYTES];
	s0__objfiles_rel(id, rel);
	*path_out = s0__asprintf("%s/%s", of->dir, rel);
	return *path_out ? S0_OK : s0__error_nomem(err);
}

static int of_has(void *ctx, void *batch, const s0__objid *id, bool *out, s0_error **err)
{
	s0__objfiles *of = ctx;
	if (batch && s0__objfiles_batch_has(batch, id)) {
		*out = true;
		return S0_OK;
	}
	char rel[S0__OBJFILES_REL_BYTES];
	s0__objfiles_rel(id, rel);
	/* Under the lock: a commit that fails after its renames takes them
	 * back, so nobody may dedupe against them meanwhile. */
	struct stat st;
	pthread_mutex_lock(&of->mu);
	int e = fstatat(of->root_fd, rel, &st, 0) == 0 ? 0 : errno;
	pthread_mutex_unlock(&of->mu);
	if (e && e != ENOENT)
		return io_error(err, e, "stat", rel);
	*out = e == 0;
	return S0_OK;
}

static int of_get(void *ctx, const s0__objid *id, s0__buf *out, s0_error **err)
{
	s0__objfiles *of = ctx;
	char rel[S0__OBJFILES_REL_BYTES];
	s0__objfiles_rel(id, rel);
	int fd = openat(of->root_fd, rel, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return s0__error_set(err, S0_ENOTFOUND, "object_missing", "object %s is not stored",
			                     rel + 3);
		return io_error(err, errno, "open", rel);
	}
	struct stat st;
	int rc = S0_OK;
	if (fstat(fd, &st) < 0) {
		rc = io_error(err, errno, "stat", rel);
		goto done;
	}
	/* zstd's bound for the largest plaintext, plus the sealing overhead */
	uint64_t most = S0__OBJ_MAX_PLAIN + S0__OBJ_MAX_PLAIN / 128 + 2 * S0__OBJ_OVERHEAD;
	if ((uint64_t)st.st_size > most) {
		rc = s0__error_set(err, S0_ECORRUPT, "object_corrupt",
		                   "object %s failed verification: its file holds %llu bytes", rel + 3,
		                   (unsigned long long)st.st_size);
		goto done;
	}
	size_t size = (size_t)st.st_size;
	s0__buf_reset(out);
	if (s0__buf_grow(out, size) < 0) {
		rc = s0__error_nomem(err);
		goto done;
	}
	size_t got = 0;
	while (got < size) {
		ssize_t n = pread(fd, out->data + got, size - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = io_error(err, errno, "read", rel);
			goto done;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	out->len = got;
	out->data[got] = '\0';
	if (got != size)
		rc = s0__error_set(err, S0_ECORRUPT, "object_corrupt",
		                   "object %s failed verification: file shrank while read", rel + 3);
done:
	close(fd);
	return rc;
}

/* One listed object. */
typedef struct of_entry {
	s0__objid id;
	uint64_t bytes;
} of_entry;

/* Append the objects of fan-out directory i to *v. */
static int list_dir(s0__objfiles *of, int i, of_entry **v, size_t *n, size_t *cap,
                    s0_error **err)
{
	char name[3];
	snprintf(name, sizeof name, "%02x", i);
	int fd = openat(of->root_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return io_error(err, e, "open", name);
	}
	struct dirent *e;
	int rc = S0_OK;
	while (rc == S0_OK && (e = readdir(d))) {
		s0__objid id;
		struct stat st;
		if (strlen(e->d_name) != S0__OBJID_HEX_BYTES - 1 ||
		    s0__objid_parse(e->d_name, &id, NULL) < 0 ||
		    fstatat(dirfd(d), e->d_name, &st, 0) < 0 || !S_ISREG(st.st_mode))
			continue; /* not an object, or deleted meanwhile */
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 256;
			of_entry *nv = realloc(*v, nc * sizeof *nv);
			if (!nv) {
				rc = s0__error_nomem(err);
				break;
			}
			*v = nv;
			*cap = nc;
		}
		(*v)[(*n)++] = (of_entry){id, (uint64_t)st.st_size};
	}
	closedir(d);
	return rc;
}

static int of_list(void *ctx, s0__objlist_cb cb, void *payload, s0_error **err)
{
	s0__objfiles *of = ctx;
	of_entry *v = NULL;
	size_t n = 0, cap = 0;
	int rc = S0_OK;
	for (int i = 0; rc == S0_OK && i < 256; i++)
		rc = list_dir(of, i, &v, &n, &cap, err);
	for (size_t i = 0; rc == S0_OK && i < n; i++)
		if (cb(&v[i].id, v[i].bytes, payload))
			rc = s0__error_set(err, S0_EUSER, NULL, "object listing stopped by its callback");
	free(v);
	return rc;
}

static int of_maintain(void *ctx, s0_error **err)
{
	(void)ctx;
	(void)err;
	return S0_OK; /* a deleted object's space is freed by its unlink */
}

static int of_usage(void *ctx, s0__objstore_usage_info *out, s0_error **err)
{
	(void)err;
	s0__objfiles *of = ctx;
	pthread_mutex_lock(&of->mu);
	out->objects = of->objects;
	out->stored_bytes = of->bytes;
	out->file_bytes = of->bytes;
	pthread_mutex_unlock(&of->mu);
	return S0_OK;
}

const s0__objstore_ops s0__objfiles_ops = {
	.batch_begin = s0__objfiles_begin,
	.put = s0__objfiles_put,
	.batch_commit = s0__objfiles_commit,
	.batch_abort = s0__objfiles_abort,
	.has = of_has,
	.get = of_get,
	.del = s0__objfiles_del,
	.list = of_list,
	.maintain = of_maintain,
	.usage = of_usage,
	.recover = NULL, /* nothing to re-index: open() cleaned tmp/ and counted */
	.close = of_close,
};
