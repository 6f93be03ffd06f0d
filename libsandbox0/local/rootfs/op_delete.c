/*
 * Files API delete over the RootFS: a file or symlink, or a whole tree
 * (iterative, so a deep guest-made tree cannot exhaust the stack; the
 * number of pending directories is bounded by the inode count, so a
 * directory cycle in a corrupt image ends in an error, not a loop).
 */
#include "local/rootfs/rfs_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct frame {
	ext2_ino_t ino, parent;
	char name[EXT2_NAME_LEN + 1];
	bool expanded;
} frame;

typedef struct tree {
	s0__rootfs *r;
	frame *v;
	size_t n, cap;
	errcode_t ec;
	bool overflow;
} tree;

static bool tree_push(tree *t, ext2_ino_t ino, ext2_ino_t parent, const char *name, size_t len)
{
	if (t->n >= t->r->fs->super->s_inodes_count) {
		t->overflow = true;
		return false;
	}
	if (t->n == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 16;
		frame *nv = realloc(t->v, nc * sizeof *nv);
		if (!nv) {
			t->ec = EXT2_ET_NO_MEMORY;
			return false;
		}
		t->v = nv;
		t->cap = nc;
	}
	frame *f = &t->v[t->n++];
	f->ino = ino;
	f->parent = parent;
	memcpy(f->name, name, len);
	f->name[len] = '\0';
	f->expanded = false;
	return true;
}

typedef struct expand_ctx {
	tree *t;
	ext2_ino_t dir;
} expand_ctx;

/* Drop every non-directory entry (clearing it in place); queue subdirs. */
static int expand_cb(ext2_ino_t dir_ino, int kind, struct ext2_dir_entry *d, int off,
                     int bsize, char *buf, void *priv)
{
	expand_ctx *c = priv;
	int n = ext2fs_dirent_name_len(d);
	if ((n == 1 && d->name[0] == '.') || (n == 2 && d->name[0] == '.' && d->name[1] == '.'))
		return 0;
	struct ext2_inode_large in;
	c->t->ec = s0__rfs_read_inode(c->t->r, d->inode, &in);
	if (c->t->ec)
		return DIRENT_ABORT;
	if (LINUX_S_ISDIR(in.i_mode))
		return tree_push(c->t, d->inode, c->dir, d->name, (size_t)n) ? 0 : DIRENT_ABORT;
	c->t->ec = s0__rfs_drop_link(c->t->r, d->inode);
	if (c->t->ec)
		return DIRENT_ABORT;
	d->inode = 0;
	return DIRENT_CHANGED;
}

static errcode_t delete_tree(s0__rootfs *r, ext2_ino_t parent, const char *name, ext2_ino_t ino,
                             bool *cycle)
{
	tree t = {.r = r};
	tree_push(&t, ino, parent, name, strlen(name));
	while (t.n && !t.ec && !t.overflow) {
		size_t i = t.n - 1;
		if (t.v[i].expanded) {
			t.ec = s0__rfs_rmdir(r, t.v[i].parent, t.v[i].name, t.v[i].ino);
			t.n--;
			continue;
		}
		t.v[i].expanded = true;
		expand_ctx c = {&t, t.v[i].ino};
		errcode_t ec = ext2fs_dir_iterate2(r->fs, c.dir, 0, NULL, expand_cb, &c);
		if (ec && !t.ec)
			t.ec = ec;
	}
	free(t.v);
	*cycle = t.overflow;
	return t.ec;
}

static int delete_locked(s0__rootfs *r, const char *p, s0__files_route *route, s0_error **err)
{
	int rc = s0__rfs_need_rw(r, err);
	if (rc < 0)
		return rc;
	if (!strcmp(p, "/"))
		return s0__error_set(err, S0_EFORBIDDEN, S0__R_DENIED, "cannot delete the root");
	s0__walk w;
	rc = s0__rfs_walk(r, p, 0, route ? route->foreign : NULL, &w, err);
	if (rc < 0)
		return rc;
	struct ext2_inode_large in;
	errcode_t ec = 0;
	bool cycle = false;
	if (w.status == S0__WALK_REDIRECT)
		rc = s0__rfs_walk_fail(&w, S0__R_NOT_FOUND, p, route, 0, err);
	else if (w.status != S0__WALK_OK || !w.ino)
		rc = S0_OK; /* nothing there: deleting it succeeds */
	else if ((ec = s0__rfs_read_inode(r, w.ino, &in)) != 0)
		rc = s0__rfs_fail(r, ec, "read inode", err);
	else if (LINUX_S_ISDIR(in.i_mode))
		ec = delete_tree(r, w.dir, w.name, w.ino, &cycle);
	else if (!(ec = ext2fs_unlink(r->fs, w.dir, w.name, w.ino, 0)) &&
	         !(ec = s0__rfs_drop_link(r, w.ino)))
		ec = s0__rfs_touch(r, w.dir);
	if (rc == S0_OK && cycle)
		rc = s0__error_set(err, S0_EINTERNAL, S0__R_FAILED,
		                   "directory tree under %s is cyclic (corrupt filesystem)", p);
	else if (rc == S0_OK && ec)
		rc = s0__rfs_fail(r, ec, "delete", err);
	s0__walk_clear(&w);
	return rc;
}

int s0__rootfs_delete(s0__rootfs *r, const char *path, size_t path_len, s0__files_route *route,
                      s0_error **err)
{
	char *p = NULL;
	int rc = s0__path_normalize(path, path_len, 0, &p, err);
	if (rc < 0)
		return rc;
	s0__rootfs_lock();
	rc = delete_locked(r, p, route, err);
	s0__dcache_clear(r->dc); /* entries went, inodes may be reused (dcache.h) */
	s0__rootfs_unlock();
	free(p);
	return rc;
}
