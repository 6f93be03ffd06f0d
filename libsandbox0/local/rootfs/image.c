/* Raw image file <-> block device, chunk by chunk, zero chunks skipped. */
#include "local/rootfs/template.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool all_zero(const char *p, size_t n)
{
	return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

static int read_full(int fd, char *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(fd, buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			memset(buf + done, 0, len - done);
			break;
		}
		done += (size_t)n;
	}
	return 0;
}

static int write_full(int fd, const char *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = pwrite(fd, buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

/* Start of the next data region at or after @p off (SEEK_DATA), or size. */
static uint64_t next_data(int fd, uint64_t off, uint64_t size)
{
	off_t d = lseek(fd, (off_t)off, SEEK_DATA);
	if (d < 0)
		return errno == ENXIO ? size : off;
	return (uint64_t)d - (uint64_t)d % S0__ROOTFS_CHUNK_BYTES;
}

static int dev_error(const char *what, s0_error *cause, s0_error **err)
{
	s0_error *e = s0__error_make(S0_EIO, "io_error", what);
	s0__error_set_cause(e, cause);
	return s0__error_put(err, e);
}

static int import_fd(int fd, uint64_t size, const s0__blockdev *dev, s0__image_stats *st,
                     s0_error **err)
{
	char *buf = malloc(S0__ROOTFS_CHUNK_BYTES);
	if (!buf)
		return s0__error_nomem(err);
	int rc = S0_OK;
	st->chunks_total = (size + S0__ROOTFS_CHUNK_BYTES - 1) / S0__ROOTFS_CHUNK_BYTES;
	for (uint64_t off = 0; off < size && rc == S0_OK; off += S0__ROOTFS_CHUNK_BYTES) {
		uint64_t data = next_data(fd, off, size);
		if (data > off) { /* a hole: skip whole chunks */
			off = data - S0__ROOTFS_CHUNK_BYTES;
			continue;
		}
		size_t n = size - off < S0__ROOTFS_CHUNK_BYTES ? (size_t)(size - off)
		                                                : S0__ROOTFS_CHUNK_BYTES;
		if (read_full(fd, buf, n, off) < 0) {
			rc = s0__error_set(err, S0_EIO, "io_error", "image read: %s", strerror(errno));
			break;
		}
		if (all_zero(buf, n))
			continue;
		s0_error *e = NULL;
		if (s0__blockdev_write(dev, off, buf, n, &e) < 0)
			rc = dev_error("device write failed during import", e, err);
		st->chunks_written++;
		st->bytes_written += n;
	}
	free(buf);
	st->chunks_zero = st->chunks_total - st->chunks_written;
	return rc;
}

int s0__rootfs_image_import(const char *image_path, const s0__blockdev *dev,
                            s0__image_stats *stats, s0_error **err)
{
	int fd = open(image_path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return s0__error_set(err, S0_EIO, "io_error", "open %s: %s", image_path, strerror(e));
	}
	uint64_t size = (uint64_t)sb.st_size;
	s0__image_stats st = {0};
	int rc = S0_OK;
	if (size > s0__blockdev_size(dev))
		rc = s0__error_set(err, S0_EINVAL, "invalid_request",
		                   "image (%llu bytes) is larger than the device (%llu bytes)",
		                   (unsigned long long)size, (unsigned long long)s0__blockdev_size(dev));
	if (rc == S0_OK)
		rc = import_fd(fd, size, dev, &st, err);
	close(fd);
	s0_error *e = NULL;
	if (rc == S0_OK && s0__blockdev_flush(dev, &e) < 0)
		rc = dev_error("device flush failed after import", e, err);
	if (rc == S0_OK && stats)
		*stats = st;
	return rc;
}

static int export_fd(int fd, const s0__blockdev *dev, uint64_t size, s0__image_stats *st,
                     s0_error **err)
{
	char *buf = malloc(S0__ROOTFS_CHUNK_BYTES);
	if (!buf)
		return s0__error_nomem(err);
	int rc = S0_OK;
	st->chunks_total = (size + S0__ROOTFS_CHUNK_BYTES - 1) / S0__ROOTFS_CHUNK_BYTES;
	for (uint64_t off = 0; off < size && rc == S0_OK; off += S0__ROOTFS_CHUNK_BYTES) {
		size_t n = size - off < S0__ROOTFS_CHUNK_BYTES ? (size_t)(size - off)
		                                                : S0__ROOTFS_CHUNK_BYTES;
		s0_error *e = NULL;
		if (s0__blockdev_read(dev, off, buf, n, &e) < 0) {
			rc = dev_error("device read failed during export", e, err);
			break;
		}
		if (all_zero(buf, n))
			continue;
		if (write_full(fd, buf, n, off) < 0)
			rc = s0__error_set(err, S0_EIO, "io_error", "image write: %s", strerror(errno));
		st->chunks_written++;
		st->bytes_written += n;
	}
	free(buf);
	st->chunks_zero = st->chunks_total - st->chunks_written;
	return rc;
}

int s0__rootfs_image_export(const s0__blockdev *dev, const char *image_path,
                            s0__image_stats *stats, s0_error **err)
{
	int fd = open(image_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	uint64_t size = s0__blockdev_size(dev);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return s0__error_set(err, S0_EIO, "io_error", "create %s: %s", image_path, strerror(e));
	}
	s0__image_stats st = {0};
	int rc = export_fd(fd, dev, size, &st, err);
	if (close(fd) < 0 && rc == S0_OK)
		rc = s0__error_set(err, S0_EIO, "io_error", "close %s: %s", image_path, strerror(errno));
	if (rc == S0_OK && stats)
		*stats = st;
	return rc;
}
