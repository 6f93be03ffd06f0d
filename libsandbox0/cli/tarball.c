/* A directory tree as a tar archive in memory (tarball.h). */
#define _XOPEN_SOURCE 700
#include "tarball.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* nftw has no user pointer: one archive at a time (the CLI is one thread here). */
static struct {
	struct archive *a;
	size_t root_len;
	char *why;
	char *buf;
	size_t len, cap;
} tb;

/* The most a server takes as a template upload (docs/local-backend.md
 * "Templates"): a bigger tree is refused here, before it fills memory. */
#define TARBALL_MAX_BYTES ((size_t)256 << 20)

static la_ssize_t grow_write(struct archive *a, void *ctx, const void *data, size_t n)
{
	(void)ctx;
	if (tb.len + n > TARBALL_MAX_BYTES) {
		if (!tb.why)
			tb.why = xasprintf("the archive is over %zu MiB, the most a server takes as a "
			                   "template",
			                   TARBALL_MAX_BYTES >> 20);
		archive_set_error(a, EFBIG, "archive too large");
		return -1;
	}
	if (tb.len + n > tb.cap) {
		size_t cap = tb.cap ? tb.cap : 1 << 16;
		while (cap < tb.len + n)
			cap *= 2;
		tb.buf = xrealloc(tb.buf, cap);
		tb.cap = cap;
	}
	memcpy(tb.buf + tb.len, data, n);
	tb.len += n;
	return (la_ssize_t)n;
}

static int copy_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	char buf[65536];
	ssize_t r;
	while ((r = read(fd, buf, sizeof buf)) > 0)
		if (archive_write_data(tb.a, buf, (size_t)r) < 0) {
			r = -1;
			break;
		}
	close(fd);
	return r < 0 ? -1 : 0;
}

static int add_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)flag;
	errno = 0;
	if (ftw->level == 0)
		return 0; /* the root itself: its children are the archive */
	const char *rel = path + tb.root_len;
	while (*rel == '/')
		rel++;
	struct archive_entry *e = archive_entry_new();
	archive_entry_copy_stat(e, st);
	archive_entry_set_pathname(e, rel);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	if (!S_ISREG(st->st_mode))
		archive_entry_set_size(e, 0);
	if (S_ISLNK(st->st_mode)) {
		char target[4096];
		ssize_t n = readlink(path, target, sizeof target - 1);
		if (n < 0) {
			tb.why = xasprintf("%s: %s", path, strerror(errno));
			archive_entry_free(e);
			return 1;
		}
		target[n] = 0;
		archive_entry_set_symlink(e, target);
	}
	int rc = archive_write_header(tb.a, e) < ARCHIVE_WARN ? -1 : 0;
	if (!rc && S_ISREG(st->st_mode))
		rc = copy_file(path);
	archive_entry_free(e);
	if (rc) {
		if (!tb.why)
			tb.why = xasprintf("%s: %s", path,
			                   errno ? strerror(errno) : archive_error_string(tb.a));
		return 1;
	}
	return 0;
}

int tarball_from_dir(const char *dir, char **out, size_t *len, char **why)
{
	struct stat st;
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		*why = xasprintf("%s is not a directory", dir);
		return -1;
	}
	memset(&tb, 0, sizeof tb);
	tb.root_len = strlen(dir);
	tb.a = archive_write_new();
	if (!tb.a)
		out_of_memory();
	archive_write_set_format_pax_restricted(tb.a);
	archive_write_set_bytes_in_last_block(tb.a, 1);
	int rc = archive_write_open(tb.a, NULL, NULL, grow_write, NULL) == ARCHIVE_OK ? 0 : -1;
	if (rc)
		tb.why = xasprintf("%s", archive_error_string(tb.a));
	if (!rc && nftw(dir, add_one, 32, FTW_PHYS) != 0 && !tb.why)
		tb.why = xasprintf("walking %s: %s", dir, strerror(errno));
	if (archive_write_close(tb.a) != ARCHIVE_OK && !tb.why)
		tb.why = xasprintf("%s", archive_error_string(tb.a));
	archive_write_free(tb.a);
	if (tb.why) {
		*why = tb.why;
		free(tb.buf);
		return -1;
	}
	*out = tb.buf;
	*len = tb.len;
	return 0;
}
