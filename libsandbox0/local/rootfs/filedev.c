/* A block device over a raw image file. */
#include "local/rootfs/template.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct filedev {
	int fd;
	uint64_t size;
} filedev;

static int fd_read(void *ctx, uint64_t off, void *buf, size_t len, s0_error **err)
{
	filedev *f = ctx;
	if (off > f->size || len > f->size - off)
		return s0__error_set(err, S0_EINVAL, "out_of_range", "read past the end of the image");
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(f->fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return s0__error_set(err, S0_EIO, "io_error", "image read: %s", strerror(errno));
		if (n == 0) { /* short file: the rest reads as zero */
			memset((char *)buf + done, 0, len - done);
			break;
		}
		done += (size_t)n;
	}
	return S0_OK;
}

static int fd_write(void *ctx, uint64_t off, const void *buf, size_t len, s0_error **err)
{
	filedev *f = ctx;
	if (off > f->size || len > f->size - off)
		return s0__error_set(err, S0_EINVAL, "out_of_range", "write past the end of the image");
	size_t done = 0;
	while (done < len) {
		ssize_t n = pwrite(f->fd, (const char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return s0__error_set(err, S0_EIO, "io_error", "image write: %s", strerror(errno));
		done += (size_t)n;
	}
	return S0_OK;
}

static int fd_flush(void *ctx, s0_error **err)
{
	(void)ctx;
	(void)err;
	return S0_OK; /* durability is the caller's business (fsync the file) */
}

static uint64_t fd_size(void *ctx)
{
	return ((filedev *)ctx)->size;
}

static const s0__blockdev_ops filedev_ops = {fd_read, fd_write, fd_flush, fd_size};

int s0__filedev_open(const char *path, bool read_only, s0__blockdev *out, s0_error **err)
{
	int fd = open(path, (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT
		           ? s0__error_set(err, S0_ENOTFOUND, "file_not_found", "no image at %s", path)
		           : s0__error_set(err, S0_EIO, "io_error", "open %s: %s", path, strerror(errno));
	struct stat st;
	filedev *f = malloc(sizeof *f);
	if (!f || fstat(fd, &st) < 0) {
		int e = errno;
		free(f);
		close(fd);
		return f ? s0__error_set(err, S0_EIO, "io_error", "stat %s: %s", path, strerror(e))
		         : s0__error_nomem(err);
	}
	f->fd = fd;
	f->size = (uint64_t)st.st_size;
	out->ops = &filedev_ops;
	out->ctx = f;
	return S0_OK;
}

void s0__filedev_close(s0__blockdev *dev)
{
	if (!dev || !dev->ctx)
		return;
	filedev *f = dev->ctx;
	close(f->fd);
	free(f);
	dev->ctx = NULL;
}
