/* Files helpers over the RootFS: chmod, symlink creation, canonical paths. */
#include "local/rootfs/rfs_int.h"

#include <stdlib.h>
#include <string.h>

static int chmod_locked(s0__rootfs *r, const char *p, uint32_t mode, s0__files_route *route,
                        s0_error **err)
{
	int rc = s0__rfs_need_rw(r, err);
	if (rc < 0)
		return rc;
	s0__walk w;
	rc = s0__rfs_walk(r, p, S0__WALK_FOLLOW, route ? route->foreign : NULL, &w, err);
	if (rc < 0)
		return rc;
	struct ext2_inode_large in;
	errcode_t ec = 0;
	if (w.status != S0__WALK_OK)
		rc = s0__rfs_walk_fail(&w, S0__R_NOT_FOUND, p, route, 0, err);
	else if (!w.ino)
		rc = s0__error_set(err, S0_ENOTFOUND, S0__R_NOT_FOUND, "file not found: %s", p);
	else if ((ec = s0__rfs_read_inode(r, w.ino, &in)) == 0) {
		struct ext2_inode_large keep = in;
		in.i_mode = (__u16)((in.i_mode & ~07777u) | mode);
		s0__rfs_stamp(r, &in, false);
		in.i_mtime = keep.i_mtime; /* chmod changes ctime only */
		in.i_mtime_extra = keep.i_mtime_extra;
		in.i_atime = keep.i_atime;
		in.i_atime_extra = keep.i_atime_extra;
		ec = s0__rfs_write_inode(r, w.ino, &in);
	}
	if (rc == S0_OK && ec)
		rc = s0__rfs_fail(r, ec, "chmod", err);
	s0__walk_clear(&w);
	return rc;
}

int s0__rootfs_chmod(s0__rootfs *r, const char *path, size_t path_len, uint32_t mode,
                     s0__files_route *route, s0_error **err)
{
	if (mode & ~07777u)
		return s0__error_set(err, S0_EINVAL, S0__R_INVALID, "mode %o has bits outside 07777",
		                     (unsigned)mode);
	char *p = NULL;
	int rc = s0__path_normalize(path, path_len, 0, &p, err);
	if (rc < 0)
		return rc;
	s0__rootfs_lock();
	rc = chmod_locked(r, p, mode, route, err);
	s0__rootfs_unlock();
	free(p);
	return rc;
}

/* ext2fs_symlink into a free inode we chose, growing the directory once. */
static errcode_t make_link(s0__rootfs *r, const s0__walk *w, const char *target)
{
	ext2_filsys fs = r->fs;
	ext2_ino_t ino = 0;
	errcode_t ec = ext2fs_new_inode(fs, w->dir, LINUX_S_IFLNK | 0777, NULL, &ino);
	if (!ec)
		ec = ext2fs_symlink(fs, w->dir, ino, w->name, target);
	if (ec == EXT2_ET_DIR_NO_SPACE) {
		struct ext2_inode_large d;
		ec = s0__rfs_read_inode(r, w->dir, &d);
		if (!ec)
			ec = (d.i_flags & EXT2_INDEX_FL) ? EXT2_ET_DIR_NO_SPACE : ext2fs_expand_dir(fs, w->dir);
		if (!ec)
			ec = ext2fs_symlink(fs, w->dir, ino, w->name, target);
	}
	if (ec) {
		if (ino)
			s0__rfs_scrub_inode(r, ino);
		return ec;
	}
	struct ext2_inode_large in;
	ec = s0__rfs_read_inode(r, ino, &in);
	if (ec)
		return ec;
	if (in.i_extra_isize == 0 && EXT2_INODE_SIZE(fs->super) > EXT2_GOOD_OLD_INODE_SIZE)
		in.i_extra_isize = sizeof(struct ext2_inode_large) - EXT2_GOOD_OLD_INODE_SIZE;
	s0__rfs_stamp(r, &in, true);
	ec = s0__rfs_write_inode(r, ino, &in);
	return ec ? ec : s0__rfs_touch(r, w->dir);
}

static int symlink_locked(s0__rootfs *r, const char *target, const char *p,
                          s0__files_route *route, s0_error **err)
{
	int rc = s0__rfs_need_rw(r, err);
	if (rc < 0)
		return rc;
	if (strlen(target) >= r->fs->blocksize)
		return s0__error_set(err, S0_EINVAL, S0__R_INVALID, "symlink target too long");
	s0__walk w;
	rc = s0__rfs_walk(r, p, 0, route ? route->foreign : NULL, &w, err);
	if (rc < 0)
		return rc;
	if (w.status != S0__WALK_OK)
		rc = s0__rfs_walk_fail(&w, S0__R_DIR_NOT_FOUND, p, route, 0, err);
	else if (w.ino)
		rc = s0__error_set(err, S0_ECONFLICT, S0__R_EXISTS, "path exists: %s", p);
	errcode_t ec = 0;
	if (rc == S0_OK && (ec = make_link(r, &w, target)) != 0)
		rc = s0__rfs_fail(r, ec, "create symlink", err);
	s0__walk_clear(&w);
	return rc;
}

int s0__rootfs_symlink(s0__rootfs *r, const char *target, size_t target_len, const char *path,
                       size_t path_len, s0__files_route *route, s0_error **err)
{
	if (!target || target_len == 0 || target_len > S0__PATH_MAX - 1 ||
	    memchr(target, '\0', target_len))
		return s0__error_set(err, S0_EINVAL, S0__R_INVALID,
		                     "symlink target must be 1..%d bytes without NUL", S0__PATH_MAX - 1);
	char *t = s0__strndup(target, target_len), *p = NULL;
	if (!t)
		return s0__error_nomem(err);
	int rc = s0__path_normalize(path, path_len, 0, &p, err);
	if (rc == S0_OK) {
		s0__rootfs_lock();
		rc = symlink_locked(r, t, p, route, err);
		s0__dcache_clear(r->dc); /* a new entry (dcache.h) */
		s0__rootfs_unlock();
	}
	free(t);
	free(p);
	return rc;
}

int s0__rootfs_canon(s0__rootfs *r, const char *path, size_t path_len, bool follow_final,
                     s0__files_route *route, char **out, s0_error **err)
{
	char *p = NULL;
	int rc = s0__path_normalize(path, path_len, 0, &p, err);
	if (rc < 0)
		return rc;
	s0__walk w;
	s0__rootfs_lock();
	rc = s0__rfs_walk(r, p, follow_final ? S0__WALK_FOLLOW : 0, route ? route->foreign : NULL, &w,
	                  err);
	s0__rootfs_unlock();
	if (rc == S0_OK && w.status == S0__WALK_REDIRECT) {
		rc = s0__rfs_walk_fail(&w, S0__R_NOT_FOUND, p, route, 0, err);
	} else if (rc == S0_OK) {
		*out = w.canon;
		w.canon = NULL;
	}
	if (rc >= 0)
		s0__walk_clear(&w);
	free(p);
	return rc;
}
