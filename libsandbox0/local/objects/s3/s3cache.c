/* The bounded local read cache of the S3 backend (s3cache.h). */
#include "local/objects/s3/s3cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct s0__s3cache {
	char *dir;
	int fd; /* the cache directory */
	uint64_t cap, bytes;
	uint64_t seq; /* temp names */
	pthread_mutex_t mu;
};

static int io_error(s0_error **err, const char *what, const char *path)
{
	return s0__error_set(err, S0_EIO, "store_io", "%s %s: %s", what, path, strerror(errno));
}

/* Remove every entry (an unclean cache) or count them (a clean one). */
static int scan(s0__s3cache *c, bool wipe, s0_error **err)
{
	int fd = dup(c->fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return io_error(err, "open", c->dir);
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		struct stat st;
		if (e->d_name[0] == '.' || fstatat(c->fd, e->d_name, &st, 0) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (wipe || strchr(e->d_name, '.'))
			unlinkat(c->fd, e->d_name, 0);
		else
			c->bytes += (uint64_t)st.st_size;
	}
	closedir(d);
	return S0_OK;
}

int s0__s3cache_open(const char *dir, uint64_t cap_bytes, s0__s3cache **out, s0_error **err)
{
	s0__s3cache *c = calloc(1, sizeof *c);
	if (!c)
		return s0__error_nomem(err);
	pthread_mutex_init(&c->mu, NULL);
	c->cap = cap_bytes;
	c->fd = -1;
	c->dir = s0__strdup(dir);
	int rc = c->dir ? S0_OK : s0__error_nomem(err);
	if (rc == S0_OK && mkdir(dir, 0700) < 0 && errno != EEXIST)
		rc = io_error(err, "mkdir", dir);
	if (rc == S0_OK && (c->fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		rc = io_error(err, "open", dir);
	bool clean = false;
	if (rc == S0_OK) {
		clean = unlinkat(c->fd, "clean", 0) == 0;
		if (clean && fsync(c->fd) < 0)
			rc = io_error(err, "fsync", dir);
	}
	if (rc == S0_OK)
		rc = scan(c, !clean, err);
	if (rc < 0) {
		if (c->fd >= 0)
			close(c->fd);
		free(c->dir);
		pthread_mutex_destroy(&c->mu);
		free(c);
		return rc;
	}
	*out = c;
	return S0_OK;
}

void s0__s3cache_close(s0__s3cache *c)
{
	if (!c)
		return;
	if (syncfs(c->fd) == 0) {
		int fd = openat(c->fd, "clean", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd >= 0) {
			close(fd);
			fsync(c->fd);
		}
	}
	close(c->fd);
	free(c->dir);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

static void entry_name(const s0__objid *id, char out[S0__OBJID_HEX_BYTES])
{
	s0__objid_hex(id, out);
}

char *s0__s3cache_path(s0__s3cache *c, const s0__objid *id)
{
	char hex[S0__OBJID_HEX_BYTES];
	entry_name(id, hex);
	return s0__asprintf("%s/%s", c->dir, hex);
}

bool s0__s3cache_get(s0__s3cache *c, const s0__objid *id, s0__buf *out)
{
	char hex[S0__OBJID_HEX_BYTES];
	entry_name(id, hex);
	int fd = openat(c->fd, hex, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct stat st;
	bool ok = fstat(fd, &st) == 0;
	size_t size = ok ? (size_t)st.st_size : 0;
	s0__buf_reset(out);
	ok = ok && s0__buf_grow(out, size) == 0;
	size_t got = 0;
	while (ok && got < size) {
		ssize_t n = pread(fd, out->data + got, size - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			ok = false;
		else
			got += (size_t)n;
	}
	if (ok) {
		out->len = got;
		out->data[got] = '\0';
		futimens(fd, NULL); /* most recently used */
	}
	close(fd);
	return ok;
}

/* Entries by age for eviction. */
typedef struct age {
	char name[S0__OBJID_HEX_BYTES];
	int64_t mtime_ns;
	uint64_t bytes;
} age;

static int by_age(const void *a, const void *b)
{
	int64_t x = ((const age *)a)->mtime_ns, y = ((const age *)b)->mtime_ns;
	return x < y ? -1 : x > y;
}

/* Remove the oldest entries until 3/4 of the bound remain (c->mu held). */
static void evict(s0__s3cache *c)
{
	int fd = dup(c->fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	age *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		struct stat st;
		if (strlen(e->d_name) != S0__OBJID_HEX_BYTES - 1 ||
		    fstatat(c->fd, e->d_name, &st, 0) < 0)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 256;
			age *nv = realloc(v, nc * sizeof *nv);
			if (!nv)
				break;
			v = nv;
			cap = nc;
		}
		memcpy(v[n].name, e->d_name, S0__OBJID_HEX_BYTES);
		v[n].mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		v[n].bytes = (uint64_t)st.st_size;
		total += v[n].bytes;
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof *v, by_age);
	for (size_t i = 0; i < n && total > c->cap / 4 * 3; i++)
		if (unlinkat(c->fd, v[i].name, 0) == 0)
			total -= v[i].bytes;
	c->bytes = total;
	free(v);
}

void s0__s3cache_put(s0__s3cache *c, const s0__objid *id, const void *data, size_t len)
{
	if (len > c->cap / 2)
		return;
	char hex[S0__OBJID_HEX_BYTES], tmp[S0__OBJID_HEX_BYTES + 24];
	entry_name(id, hex);
	pthread_mutex_lock(&c->mu);
	snprintf(tmp, sizeof tmp, "%s.%llu", hex, (unsigned long long)c->seq++);
	pthread_mutex_unlock(&c->mu);
	int fd = openat(c->fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	const char *p = data;
	size_t done = 0;
	while (done < len) {
		ssize_t w = write(fd, p + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	close(fd);
	pthread_mutex_lock(&c->mu);
	struct stat st;
	bool had = fstatat(c->fd, hex, &st, 0) == 0;
	if (done == len && !had && renameat(c->fd, tmp, c->fd, hex) == 0) {
		c->bytes += len;
		if (c->bytes > c->cap)
			evict(c);
	} else {
		unlinkat(c->fd, tmp, 0);
	}
	pthread_mutex_unlock(&c->mu);
}

void s0__s3cache_drop(s0__s3cache *c, const s0__objid *id)
{
	char hex[S0__OBJID_HEX_BYTES];
	entry_name(id, hex);
	pthread_mutex_lock(&c->mu);
	struct stat st;
	if (fstatat(c->fd, hex, &st, 0) == 0 && unlinkat(c->fd, hex, 0) == 0)
		c->bytes -= c->bytes >= (uint64_t)st.st_size ? (uint64_t)st.st_size : c->bytes;
	pthread_mutex_unlock(&c->mu);
}

uint64_t s0__s3cache_bytes(s0__s3cache *c)
{
	pthread_mutex_lock(&c->mu);
	uint64_t b = c->bytes;
	pthread_mutex_unlock(&c->mu);
	return b;
}
