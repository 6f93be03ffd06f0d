/*
 * Files API move over the RootFS: rename composed from libext2fs calls
 * (ext2fs has no rename): the destination entry is added or retargeted in
 * place, the source entry removed, and for a directory changing parent its
 * ".." and both parents' link counts are fixed.
 */
#include "local/rootfs/rfs_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct move_ctx {
	s0__rootfs *r;
	const char *src, *dst;       /* normalised paths, for messages */
	s0__files_route *route;
	s0__walk s, d;
	struct ext2_inode_large sin, din;
} move_ctx;

static int dotdot_cb(ext2_ino_t dir_ino, int kind, struct ext2_dir_entry *d, int off,
                     int bsize, char *buf, void *priv)
{
	if (ext2fs_dirent_name_len(d) != 2 || d->name[0] != '.' || d->name[1] != '.')
		return 0;
	d->inode = *(ext2_ino_t *)priv;
	return DIRENT_CHANGED | DIRENT_ABORT;
}

static errcode_t add_links(s0__rootfs *r, ext2_ino_t dir, int delta)
{
	struct ext2_inode_large in;
	errcode_t ec = s0__rfs_read_inode(r, dir, &in);
	if (ec)
		return ec;
	if (delta < 0 && in.i_links_count > 2)
		in.i_links_count--;
	else if (delta > 0 && in.i_links_count > 1 && in.i_links_count < EXT2_LINK_MAX)
		in.i_links_count++;
	s0__rfs_stamp(r, &in, false);
	return s0__rfs_write_inode(r, dir, &in);
}

/* The rename itself, once every check has passed. */
static errcode_t do_move(move_ctx *m)
{
	s0__rootfs *r = m->r;
	bool sdir = LINUX_S_ISDIR(m->sin.i_mode);
	bool replaced_dir = m->d.ino && LINUX_S_ISDIR(m->din.i_mode);
	int ft = s0__rfs_ftype(m->sin.i_mode);
	errcode_t ec;
	if (m->d.ino)
		ec = s0__rfs_retarget(r, m->d.dir, m->d.name, m->s.ino, ft);
	else
		ec = s0__rfs_link(r, m->d.dir, m->d.name, m->s.ino, ft);
	if (!ec)
		ec = ext2fs_unlink(r->fs, m->s.dir, m->s.name, m->s.ino, 0);
	if (!ec && m->d.ino)
		ec = replaced_dir ? s0__rfs_free_inode(r, m->d.ino) : s0__rfs_drop_link(r, m->d.ino);
	if (!ec && sdir && m->s.dir != m->d.dir) {
		ext2_ino_t parent = m->d.dir;
		ec = ext2fs_dir_iterate2(r->fs, m->s.ino, 0, NULL, dotdot_cb, &parent);
		if (!ec)
			ec = add_links(r, m->s.dir, -1);
		if (!ec && !replaced_dir)
			ec = add_links(r, m->d.dir, +1);
	} else if (!ec && replaced_dir) {
		ec = add_links(r, m->d.dir, -1);
	}
	if (!ec)
		ec = s0__rfs_touch(r, m->s.dir);
	if (!ec && m->d.dir != m->s.dir)
		ec = s0__rfs_touch(r, m->d.dir);
	return ec;
}

/* Kind checks between an existing destination and the source. */
static int check_target(move_ctx *m, s0_error **err)
{
	errcode_t ec = s0__rfs_read_inode(m->r, m->d.ino, &m->din);
	if (ec)
		return s0__rfs_fail(m->r, ec, "read inode", err);
	bool sdir = LINUX_S_ISDIR(m->sin.i_mode), ddir = LINUX_S_ISDIR(m->din.i_mode);
	if (sdir && !ddir)
		return s0__error_set(err, S0_ECONFLICT, S0__R_NOT_DIR,
		                     "cannot replace non-directory %s with a directory", m->dst);
	if (!sdir && ddir)
		return s0__error_set(err, S0_ECONFLICT, S0__R_NOT_FILE,
		                     "cannot replace directory %s with a non-directory", m->dst);
	if (!ddir)
		return S0_OK;
	bool empty = false;
	ec = s0__rfs_dir_is_empty(m->r, m->d.ino, &empty);
	if (ec)
		return s0__rfs_fail(m->r, ec, "read directory", err);
	if (!empty)
		return s0__error_set(err, S0_ECONFLICT, S0__R_EXISTS, "directory not empty: %s", m->dst);
	return S0_OK;
}

/* Resolve the destination (creating parents once everything else is known good). */
static int resolve_dst(move_ctx *m, unsigned flags, s0_error **err)
{
	s0__walk_clear(&m->d);
	const s0__mountset *foreign = m->route ? m->route->foreign : NULL;
	int rc = s0__rfs_walk(m->r, m->dst, flags, foreign, &m->d, err);
	if (rc < 0 || m->d.status == S0__WALK_OK || m->d.status == S0__WALK_NOPARENT)
		return rc;
	if (m->d.status == S0__WALK_REDIRECT && m->route) {
		free(m->route->redirect[0]);
		m->route->redirect[0] = m->s.canon;
		m->s.canon = NULL;
	}
	return s0__rfs_walk_fail(&m->d, S0__R_DIR_NOT_FOUND, m->dst, m->route, 1, err);
}

static int move_checked(move_ctx *m, s0_error **err)
{
	bool sdir = LINUX_S_ISDIR(m->sin.i_mode);
	if (sdir && strcmp(m->d.canon, m->s.canon) && s0__path_is_under(m->d.canon, m->s.canon))
		return s0__error_set(err, S0_EINVAL, S0__R_INVALID,
		                     "cannot move directory %s into itself", m->src);
	int rc = S0_OK;
	if (m->d.status == S0__WALK_NOPARENT)
		rc = resolve_dst(m, S0__WALK_MKDIRS, err);
	if (rc == S0_OK && m->d.status != S0__WALK_OK) /* e.g. a dangling link on the way */
		rc = s0__rfs_walk_fail(&m->d, S0__R_DIR_NOT_FOUND, m->dst, m->route, 1, err);
	if (rc != S0_OK)
		return rc;
	if (m->d.ino == m->s.ino)
		return S0_OK; /* same entry or hard links of one file: nothing to do */
	if (m->d.ino && (rc = check_target(m, err)) != S0_OK)
		return rc;
	errcode_t ec = do_move(m);
	return ec ? s0__rfs_fail(m->r, ec, "move", err) : S0_OK;
}

static int move_locked(move_ctx *m, s0_error **err)
{
	int rc = s0__rfs_need_rw(m->r, err);
	if (rc < 0)
		return rc;
	if (!strcmp(m->src, "/"))
		return s0__error_set(err, S0_EINVAL, S0__R_INVALID, "cannot move the root");
	const s0__mountset *foreign = m->route ? m->route->foreign : NULL;
	rc = s0__rfs_walk(m->r, m->src, 0, foreign, &m->s, err);
	if (rc < 0)
		return rc;
	errcode_t ec;
	if (m->s.status == S0__WALK_REDIRECT && m->route) {
		m->route->redirect[1] = s0__strdup(m->dst);
		return s0__rfs_walk_fail(&m->s, S0__R_NOT_FOUND, m->src, m->route, 0, err);
	}
	if (m->s.status != S0__WALK_OK)
		return s0__rfs_walk_fail(&m->s, S0__R_NOT_FOUND, m->src, m->route, 0, err);
	if (!m->s.ino)
		return s0__error_set(err, S0_ENOTFOUND, S0__R_NOT_FOUND, "file not found: %s", m->src);
	if ((ec = s0__rfs_read_inode(m->r, m->s.ino, &m->sin)) != 0)
		return s0__rfs_fail(m->r, ec, "read inode", err);
	rc = resolve_dst(m, 0, err);
	return rc == S0_OK ? move_checked(m, err) : rc;
}

int s0__rootfs_move(s0__rootfs *r, const char *src, size_t src_len, const char *dst,
                    size_t dst_len, s0__files_route *route, s0_error **err)
{
	char *sp = NULL, *dp = NULL;
	int rc = s0__path_normalize(src, src_len, 0, &sp, err);
	if (rc == S0_OK)
		rc = s0__path_normalize(dst, dst_len, 0, &dp, err);
	if (rc == S0_OK) {
		move_ctx m = {.r = r, .src = sp, .dst = dp, .route = route};
		s0__rootfs_lock();
		rc = move_locked(&m, err);
		s0__dcache_clear(r->dc); /* entries moved (dcache.h) */
		s0__rootfs_unlock();
		s0__walk_clear(&m.s);
		s0__walk_clear(&m.d);
	}
	free(sp);
	free(dp);
	return rc;
}
