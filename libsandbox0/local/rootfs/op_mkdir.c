/* Files API mkdir over the RootFS (plain and recursive). */
#include "local/rootfs/rfs_int.h"

#include <stdlib.h>

/* Recursive mkdir on an existing path: fine when it is (or links to) a dir. */
static int exists_ok(s0__rootfs *r, const char *p, const s0__walk *w, s0__files_route *route,
                     s0_error **err)
{
	struct ext2_inode_large in;
	errcode_t ec = s0__rfs_read_inode(r, w->ino, &in);
	if (ec)
		return s0__rfs_fail(r, ec, "read inode", err);
	if (LINUX_S_ISDIR(in.i_mode))
		return S0_OK;
	if (LINUX_S_ISLNK(in.i_mode)) {
		s0__walk f;
		int rc = s0__rfs_walk(r, p, S0__WALK_FOLLOW, route ? route->foreign : NULL, &f, err);
		if (rc < 0)
			return rc;
		if (f.status == S0__WALK_REDIRECT) {
			rc = s0__rfs_walk_fail(&f, S0__R_DIR_NOT_FOUND, p, route, 0, err);
		} else if (f.status == S0__WALK_OK && f.ino) {
			ec = s0__rfs_read_inode(r, f.ino, &in);
			if (ec)
				rc = s0__rfs_fail(r, ec, "read inode", err);
			else if (!LINUX_S_ISDIR(in.i_mode))
				rc = -1;
		} else {
			rc = -1;
		}
		s0__walk_clear(&f);
		if (rc != -1)
			return rc;
	}
	return s0__error_set(err, S0_ECONFLICT, S0__R_NOT_DIR, "exists and is not a directory: %s",
	                     p);
}

static int mkdir_locked(s0__rootfs *r, const char *p, bool recursive, s0__files_route *route,
                        s0_error **err)
{
	int rc = s0__rfs_need_rw(r, err);
	if (rc < 0)
		return rc;
	s0__walk w;
	rc = s0__rfs_walk(r, p, recursive ? S0__WALK_MKDIRS : 0, route ? route->foreign : NULL, &w,
	                  err);
	if (rc < 0)
		return rc;
	if (w.status != S0__WALK_OK) {
		rc = s0__rfs_walk_fail(&w, S0__R_DIR_NOT_FOUND, p, route, 0, err);
	} else if (w.ino && !recursive) {
		rc = s0__error_set(err, S0_ECONFLICT, S0__R_EXISTS, "path exists: %s", p);
	} else if (w.ino) {
		rc = exists_ok(r, p, &w, route, err);
	} else {
		ext2_ino_t ino;
		errcode_t ec = s0__rfs_mkdir(r, w.dir, w.name, 0755, &ino);
		if (ec)
			rc = s0__rfs_fail(r, ec, "make directory", err);
	}
	s0__walk_clear(&w);
	return rc;
}

int s0__rootfs_mkdir(s0__rootfs *r, const char *path, size_t path_len, bool recursive,
                     s0__files_route *route, s0_error **err)
{
	char *p = NULL;
	int rc = s0__path_normalize(path, path_len, 0, &p, err);
	if (rc < 0)
		return rc;
	s0__rootfs_lock();
	rc = mkdir_locked(r, p, recursive, route, err);
	s0__rootfs_unlock();
	free(p);
	return rc;
}
