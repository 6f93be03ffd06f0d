/* Directory entries: link, in-place retarget, mkdir, rmdir, emptiness. */
#include "local/rootfs/rfs_int.h"

#include <errno.h>
#include <string.h>

/* Keep the name cache true after a change of (dir, name) (dcache.h). */
static void note(s0__rootfs *r, errcode_t ec, ext2_ino_t dir, const char *name, ext2_ino_t ino)
{
	if (ec)
		s0__dcache_clear(r->dc);
	else
		s0__dcache_put(r->dc, dir, name, strlen(name), ino);
}

/* Grow a linear directory by one block; htree directories are not grown
 * (expand_dir would add a block the index does not reference). */
static errcode_t expand(s0__rootfs *r, ext2_ino_t dir)
{
	struct ext2_inode_large in;
	errcode_t ec = s0__rfs_read_inode(r, dir, &in);
	if (ec)
		return ec;
	if (in.i_flags & EXT2_INDEX_FL)
		return EXT2_ET_DIR_NO_SPACE;
	return ext2fs_expand_dir(r->fs, dir);
}

errcode_t s0__rfs_link(s0__rootfs *r, ext2_ino_t dir, const char *name, ext2_ino_t ino,
                       int ftype)
{
	errcode_t ec = ext2fs_link(r->fs, dir, name, ino, ftype);
	if (ec == EXT2_ET_DIR_NO_SPACE) {
		ec = expand(r, dir);
		if (!ec)
			ec = ext2fs_link(r->fs, dir, name, ino, ftype);
	}
	note(r, ec, dir, name, ino);
	return ec;
}

typedef struct retarget_ctx {
	const char *name;
	size_t len;
	ext2_ino_t ino;
	int ftype;
	bool filetype;
	bool found;
} retarget_ctx;

static int retarget_cb(ext2_ino_t dir_ino, int kind, struct ext2_dir_entry *d, int off,
                       int bsize, char *buf, void *priv)
{
	retarget_ctx *c = priv;
	if ((size_t)ext2fs_dirent_name_len(d) != c->len || memcmp(d->name, c->name, c->len))
		return 0;
	d->inode = c->ino;
	if (c->filetype)
		ext2fs_dirent_set_file_type(d, c->ftype);
	c->found = true;
	return DIRENT_CHANGED | DIRENT_ABORT;
}

errcode_t s0__rfs_retarget(s0__rootfs *r, ext2_ino_t dir, const char *name, ext2_ino_t ino,
                           int ftype)
{
	retarget_ctx c = {name, strlen(name), ino, ftype,
	                  ext2fs_has_feature_filetype(r->fs->super), false};
	errcode_t ec = ext2fs_dir_iterate2(r->fs, dir, 0, NULL, retarget_cb, &c);
	if (!ec && !c.found)
		ec = EXT2_ET_FILE_NOT_FOUND;
	note(r, ec, dir, name, ino);
	return ec;
}

errcode_t s0__rfs_mkdir(s0__rootfs *r, ext2_ino_t dir, const char *name, uint32_t perm,
                        ext2_ino_t *ino_out)
{
	ext2_filsys fs = r->fs;
	struct ext2_inode_large in;
	errcode_t ec = s0__rfs_read_inode(r, dir, &in);
	if (ec)
		return ec;
	if (in.i_links_count >= EXT2_LINK_MAX - 1)
		return EMLINK;
	ext2_ino_t ino = 0;
	ec = ext2fs_new_inode(fs, dir, LINUX_S_IFDIR | 0755, NULL, &ino);
	if (!ec)
		ec = ext2fs_mkdir(fs, dir, ino, name);
	if (ec == EXT2_ET_DIR_NO_SPACE) {
		ec = expand(r, dir);
		if (!ec)
			ec = ext2fs_mkdir(fs, dir, ino, name);
	}
	note(r, ec, dir, name, ino);
	if (ec) {
		/* ext2fs_mkdir released the inode in the bitmap but may have
		 * written it: mark it deleted so fsck sees no orphan. */
		if (ino && ec != EXT2_ET_INODE_ALLOC_FAIL)
			s0__rfs_scrub_inode(r, ino);
		return ec;
	}
	ec = s0__rfs_read_inode(r, ino, &in);
	if (ec)
		return ec;
	in.i_mode = (__u16)(LINUX_S_IFDIR | (perm & 07777));
	if (in.i_extra_isize == 0 && EXT2_INODE_SIZE(fs->super) > EXT2_GOOD_OLD_INODE_SIZE)
		in.i_extra_isize = sizeof(struct ext2_inode_large) - EXT2_GOOD_OLD_INODE_SIZE;
	s0__rfs_stamp(r, &in, true);
	ec = s0__rfs_write_inode(r, ino, &in);
	if (!ec)
		ec = s0__rfs_touch(r, dir);
	if (!ec) {
		s0__dcache_set_complete(r->dc, ino); /* new and empty: every name is known */
		*ino_out = ino;
	}
	return ec;
}

errcode_t s0__rfs_rmdir(s0__rootfs *r, ext2_ino_t dir, const char *name, ext2_ino_t ino)
{
	errcode_t ec = ext2fs_unlink(r->fs, dir, name, ino, 0);
	s0__dcache_clear(r->dc); /* the directory's inode may be reused */
	if (!ec)
		ec = s0__rfs_free_inode(r, ino);
	struct ext2_inode_large in;
	if (!ec)
		ec = s0__rfs_read_inode(r, dir, &in);
	if (ec)
		return ec;
	if (in.i_links_count > 2)
		in.i_links_count--;
	s0__rfs_stamp(r, &in, false);
	return s0__rfs_write_inode(r, dir, &in);
}

static int empty_cb(ext2_ino_t dir_ino, int kind, struct ext2_dir_entry *d, int off,
                    int bsize, char *buf, void *priv)
{
	int n = ext2fs_dirent_name_len(d);
	if ((n == 1 && d->name[0] == '.') || (n == 2 && d->name[0] == '.' && d->name[1] == '.'))
		return 0;
	*(bool *)priv = false;
	return DIRENT_ABORT;
}

errcode_t s0__rfs_dir_is_empty(s0__rootfs *r, ext2_ino_t ino, bool *empty)
{
	*empty = true;
	return ext2fs_dir_iterate2(r->fs, ino, 0, NULL, empty_cb, empty);
}
