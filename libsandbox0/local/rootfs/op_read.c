/* Files API read over the RootFS: whole file or a byte range. */
#include "local/rootfs/rfs_int.h"

#include <stdlib.h>

/* Copy @p n bytes at @p off of inode @p ino into a new buffer. */
static int read_range(s0__rootfs *r, ext2_ino_t ino, uint64_t off, uint64_t n, void **out,
                      uint64_t *got_out, s0_error **err)
{
	char *buf = malloc((size_t)n + 1);
	if (!buf)
		return s0__error_nomem(err);
	struct ext2_inode_large in;
	errcode_t ec = s0__rfs_read_inode(r, ino, &in);
	if (!ec && (ec = s0__rfs_read_runs(r, ino, &in, off, n, buf)) == 0) {
		buf[n] = '\0'; /* one device request per extent run */
		*out = buf;
		*got_out = n;
		return S0_OK;
	}
	if (ec != EXT2_ET_OP_NOT_SUPPORTED) {
		free(buf);
		return s0__rfs_fail(r, ec, "read file", err);
	}
	ext2_file_t f;
	ec = ext2fs_file_open(r->fs, ino, 0, &f);
	if (ec) {
		free(buf);
		return s0__rfs_fail(r, ec, "open file", err);
	}
	ec = ext2fs_file_llseek(f, off, EXT2_SEEK_SET, NULL);
	uint64_t got = 0;
	while (!ec && got < n) {
		uint64_t want = n - got > (1u << 30) ? (1u << 30) : n - got;
		unsigned int c = 0;
		ec = ext2fs_file_read(f, buf + got, (unsigned int)want, &c);
		if (!ec && c == 0)
			break; /* size changed under a corrupt inode: return what exists */
		got += c;
	}
	errcode_t ec2 = ext2fs_file_close(f);
	if (!ec)
		ec = ec2;
	if (ec) {
		free(buf);
		return s0__rfs_fail(r, ec, "read file", err);
	}
	buf[got] = '\0';
	*out = buf;
	*got_out = got;
	return S0_OK;
}

static int read_locked(s0__rootfs *r, const char *p, uint64_t offset, int64_t length,
                       s0__files_route *route, void **data_out, size_t *len_out, s0_error **err)
{
	s0__walk w;
	int rc = s0__rfs_walk(r, p, S0__WALK_FOLLOW, route ? route->foreign : NULL, &w, err);
	if (rc < 0)
		return rc;
	struct ext2_inode_large in;
	errcode_t ec;
	if (w.status != S0__WALK_OK)
		rc = s0__rfs_walk_fail(&w, S0__R_NOT_FOUND, p, route, 0, err);
	else if (!w.ino)
		rc = s0__error_set(err, S0_ENOTFOUND, S0__R_NOT_FOUND, "file not found: %s", p);
	else if ((ec = s0__rfs_read_inode(r, w.ino, &in)) != 0)
		rc = s0__rfs_fail(r, ec, "read inode", err);
	else if (!LINUX_S_ISREG(in.i_mode))
		rc = s0__error_set(err, S0_ECONFLICT, S0__R_NOT_FILE, "not a regular file: %s", p);
	if (rc != S0_OK) {
		s0__walk_clear(&w);
		return rc;
	}
	uint64_t size = EXT2_I_SIZE(&in);
	uint64_t start = offset < size ? offset : size;
	uint64_t n = size - start;
	if (length >= 0 && (uint64_t)length < n)
		n = (uint64_t)length;
	if (n > S0__FILES_MAX_READ)
		rc = s0__error_set(err, S0_ETOOLARGE, S0__R_TOO_LARGE,
		                   "read of %llu bytes exceeds the %llu-byte limit; read a range",
		                   (unsigned long long)n, (unsigned long long)S0__FILES_MAX_READ);
	void *data = NULL;
	uint64_t got = 0;
	if (rc == S0_OK)
		rc = read_range(r, w.ino, start, n, &data, &got, err);
	s0__walk_clear(&w);
	if (rc == S0_OK) {
		*data_out = data;
		*len_out = (size_t)got;
	}
	return rc;
}

int s0__rootfs_read(s0__rootfs *r, const char *path, size_t path_len, uint64_t offset,
                    int64_t length, s0__files_route *route, void **data_out, size_t *len_out,
                    s0_error **err)
{
	char *p = NULL;
	int rc = s0__path_normalize(path, path_len, 0, &p, err);
	if (rc < 0)
		return rc;
	s0__rootfs_lock();
	rc = read_locked(r, p, offset, length, route, data_out, len_out, err);
	s0__rootfs_unlock();
	free(p);
	return rc;
}
