/*
 * Files API write over the RootFS: the data goes to a fresh unlinked inode
 * (blocks preallocated in one extent run, then written whole), which then
 * replaces the directory entry in place — the "temp file + rename" of
 * docs/wire.md §3.9 without a temporary name.
 */
#include "local/rootfs/rfs_int.h"

#include <stdlib.h>
#include <string.h>

/* Write @p len bytes into the new inode @p ino (its size already @p len;
 * its blocks allocated when @p mapped, by ext2fs_fallocate here if not). */
static errcode_t fill_inode(s0__rootfs *r, ext2_ino_t ino, bool mapped, const char *data,
                            size_t len)
{
	ext2_filsys fs = r->fs;
	size_t bs = fs->blocksize;
	blk64_t nblocks = (len + bs - 1) / bs;
	errcode_t ec = mapped ? 0
	                      : ext2fs_fallocate(fs, EXT2_FALLOCATE_FORCE_INIT |
	                                                 EXT2_FALLOCATE_INIT_BEYOND_EOF,
	                                         ino, NULL, ~0ULL, 0, nblocks);
	struct ext2_inode_large in;
	if (!ec)
		ec = s0__rfs_read_inode(r, ino, &in);
	if (!ec) { /* one device request per extent run */
		ec = s0__rfs_write_runs(r, ino, &in, data, len);
		if (ec != EXT2_ET_OP_NOT_SUPPORTED)
			return ec;
		ec = 0;
	}
	ext2_file_t f = NULL;
	if (!ec)
		ec = ext2fs_file_open(fs, ino, EXT2_FILE_WRITE, &f);
	size_t whole = len - len % bs, done = 0;
	while (!ec && done < whole) {
		size_t want = whole - done > (1u << 30) ? (1u << 30) : whole - done;
		unsigned int c = 0;
		ec = ext2fs_file_write(f, data + done, (unsigned int)want, &c);
		done += c;
		if (!ec && c == 0)
			ec = EXT2_ET_SHORT_WRITE;
	}
	if (!ec && whole < len) {
		/* The last block goes out whole, zero-padded, so no stale bytes
		 * of a previously freed block stay behind EOF. */
		char *tail = calloc(1, bs);
		unsigned int c = 0;
		ec = tail ? 0 : EXT2_ET_NO_MEMORY;
		if (!ec) {
			memcpy(tail, data + whole, len - whole);
			ec = ext2fs_file_write(f, tail, (unsigned int)bs, &c);
		}
		free(tail);
	}
	if (f) {
		errcode_t ec2 = ext2fs_file_close(f);
		if (!ec)
			ec = ec2;
	}
	return ec;
}

/* Put inode @p ino at w->name in w->dir, releasing what was there. */
static errcode_t install(s0__rootfs *r, const s0__walk *w, ext2_ino_t ino, bool *linked)
{
	errcode_t ec;
	if (w->ino) {
		ec = s0__rfs_retarget(r, w->dir, w->name, ino, EXT2_FT_REG_FILE);
		*linked = !ec;
		if (!ec)
			ec = s0__rfs_drop_link(r, w->ino);
	} else {
		ec = s0__rfs_link(r, w->dir, w->name, ino, EXT2_FT_REG_FILE);
		*linked = !ec;
	}
	if (!ec)
		ec = s0__rfs_touch(r, w->dir);
	return ec;
}

static int write_locked(s0__rootfs *r, const char *p, const void *data, size_t len,
                        s0__files_route *route, s0_error **err)
{
	int rc = s0__rfs_need_rw(r, err);
	if (rc < 0)
		return rc;
	s0__walk w;
	rc = s0__rfs_walk(r, p, S0__WALK_MKDIRS, route ? route->foreign : NULL, &w, err);
	if (rc < 0)
		return rc;
	struct ext2_inode_large old;
	errcode_t ec = 0;
	if (w.status != S0__WALK_OK)
		rc = s0__rfs_walk_fail(&w, S0__R_DIR_NOT_FOUND, p, route, 0, err);
	else if (w.ino && (ec = s0__rfs_read_inode(r, w.ino, &old)) != 0)
		rc = s0__rfs_fail(r, ec, "read inode", err);
	else if (w.ino && LINUX_S_ISDIR(old.i_mode))
		rc = s0__error_set(err, S0_ECONFLICT, S0__R_NOT_FILE, "is a directory: %s", p);
	if (rc != S0_OK) {
		s0__walk_clear(&w);
		return rc;
	}
	/* Space first: a write the free blocks cannot hold fails here, before
	 * anything is allocated (ext2fs_fallocate running out midway leaves
	 * blocks no inode owns). The margin covers extent tree blocks. */
	blk64_t need = (len + r->fs->blocksize - 1) / r->fs->blocksize;
	if (need && ext2fs_free_blocks_count(r->fs->super) < need + need / 300 + 4) {
		s0__walk_clear(&w);
		return s0__rfs_fail(r, EXT2_ET_BLOCK_ALLOC_FAIL, "write file", err);
	}
	ext2_ino_t ino = 0;
	bool linked = false, mapped = false;
	ec = s0__rfs_new_inode(r, w.dir, LINUX_S_IFREG | 0644, len, &ino, &mapped);
	if (!ec && len)
		ec = fill_inode(r, ino, mapped, data, len);
	if (!ec)
		ec = install(r, &w, ino, &linked);
	if (ec) {
		s0__dcache_clear(r->dc); /* whatever happened to the directory */
		if (ino && !linked)
			s0__rfs_free_inode(r, ino);
		rc = s0__rfs_fail(r, ec, "write file", err);
	}
	s0__walk_clear(&w);
	return rc;
}

int s0__rootfs_write(s0__rootfs *r, const char *path, size_t path_len, const void *data,
                     size_t len, s0__files_route *route, s0_error **err)
{
	if (len > S0__FILES_MAX_WRITE)
		return s0__error_set(err, S0_ETOOLARGE, S0__R_TOO_LARGE,
		                     "file of %zu bytes exceeds the %llu-byte limit", len,
		                     (unsigned long long)S0__FILES_MAX_WRITE);
	if (len && !data)
		return s0__error_set(err, S0_EINVAL, S0__R_INVALID, "no data");
	char *p = NULL;
	int rc = s0__path_normalize(path, path_len, 0, &p, err);
	if (rc < 0)
		return rc;
	s0__rootfs_lock();
	rc = write_locked(r, p, data, len, route, err);
	s0__rootfs_unlock();
	free(p);
	return rc;
}
