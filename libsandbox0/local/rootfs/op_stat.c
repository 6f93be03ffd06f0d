/* Files API stat (lstat) and list over the RootFS. */
#include "local/rootfs/rfs_int.h"

#include <stdlib.h>
#include <string.h>

int s0__rfs_fill_info(s0__rootfs *r, ext2_ino_t ino, const char *name, bool with_target,
                      s0__fileinfo *fi, s0_error **err)
{
	struct ext2_inode_large in;
	errcode_t ec = s0__rfs_read_inode(r, ino, &in);
	if (ec)
		return s0__rfs_fail(r, ec, "read inode", err);
	fi->name = s0__strdup(name);
	if (!fi->name)
		return s0__error_nomem(err);
	bool link = LINUX_S_ISLNK(in.i_mode);
	fi->type = LINUX_S_ISDIR(in.i_mode) ? S0_FILE_TYPE_DIR
	           : link                   ? S0_FILE_TYPE_SYMLINK
	                                    : S0_FILE_TYPE_FILE;
	fi->size_bytes = (int64_t)EXT2_I_SIZE(&in);
	fi->mode = in.i_mode & 07777;
	fi->mod_time_unix_ns = s0__rfs_mtime_ns(&in);
	fi->is_link = link;
	if (link && with_target) {
		ec = s0__rfs_readlink(r, ino, &in, &fi->link_target);
		if (ec)
			return s0__rfs_fail(r, ec, "read symlink", err);
	}
	return S0_OK;
}

static int stat_locked(s0__rootfs *r, const char *p, const char *req, size_t req_len,
                       s0__files_route *route, s0__fileinfo **out, s0_error **err)
{
	s0__walk w;
	int rc = s0__rfs_walk(r, p, 0, route ? route->foreign : NULL, &w, err);
	if (rc < 0)
		return rc;
	if (w.status != S0__WALK_OK)
		rc = s0__rfs_walk_fail(&w, S0__R_NOT_FOUND, p, route, 0, err);
	else if (!w.ino)
		rc = s0__error_set(err, S0_ENOTFOUND, S0__R_NOT_FOUND, "file not found: %s", p);
	s0__fileinfo *fi = NULL;
	if (rc == S0_OK && !(fi = calloc(1, sizeof *fi)))
		rc = s0__error_nomem(err);
	if (rc == S0_OK)
		rc = s0__rfs_fill_info(r, w.ino, strcmp(p, "/") ? s0__path_base(p) : "/", true, fi, err);
	if (rc == S0_OK && !(fi->path = s0__strndup(req, req_len)))
		rc = s0__error_nomem(err);
	s0__walk_clear(&w);
	if (rc != S0_OK) {
		s0__fileinfo_free(fi);
		return rc;
	}
	*out = fi;
	return S0_OK;
}

int s0__rootfs_stat(s0__rootfs *r, const char *path, size_t path_len, s0__files_route *route,
                    s0__fileinfo **out, s0_error **err)
{
	char *p = NULL;
	int rc = s0__path_normalize(path, path_len, 0, &p, err);
	if (rc < 0)
		return rc;
	s0__rootfs_lock();
	rc = stat_locked(r, p, path, path_len, route, out, err);
	s0__rootfs_unlock();
	free(p);
	return rc;
}

typedef struct entry {
	ext2_ino_t ino;
	char name[EXT2_NAME_LEN + 1];
} entry;

typedef struct collect {
	entry *v;
	size_t n, cap;
	bool oom;
} collect;

static int collect_cb(ext2_ino_t dir_ino, int kind, struct ext2_dir_entry *d, int off,
                      int bsize, char *buf, void *priv)
{
	collect *c = priv;
	int n = ext2fs_dirent_name_len(d);
	if ((n == 1 && d->name[0] == '.') || (n == 2 && d->name[0] == '.' && d->name[1] == '.'))
		return 0;
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 64;
		entry *nv = realloc(c->v, nc * sizeof *nv);
		if (!nv) {
			c->oom = true;
			return DIRENT_ABORT;
		}
		c->v = nv;
		c->cap = nc;
	}
	c->v[c->n].ino = d->inode;
	memcpy(c->v[c->n].name, d->name, (size_t)n);
	c->v[c->n].name[n] = '\0';
	c->n++;
	return 0;
}

/* FileInfo of every entry of directory @p dir; paths `<p>/<name>`. */
static int list_dir(s0__rootfs *r, ext2_ino_t dir, const char *p, s0__filelist *l,
                    s0_error **err)
{
	collect c = {0};
	errcode_t ec = ext2fs_dir_iterate2(r->fs, dir, 0, NULL, collect_cb, &c);
	int rc = c.oom ? s0__error_nomem(err) : ec ? s0__rfs_fail(r, ec, "read directory", err) : 0;
	for (size_t i = 0; rc == S0_OK && i < c.n; i++) {
		s0__fileinfo fi = {0};
		rc = s0__rfs_fill_info(r, c.v[i].ino, c.v[i].name, false, &fi, err);
		if (rc == S0_OK && !(fi.path = s0__path_join(p, c.v[i].name)))
			rc = s0__error_nomem(err);
		if (rc == S0_OK)
			rc = s0__filelist_push(l, &fi, err);
		s0__fileinfo_clear(&fi);
	}
	free(c.v);
	if (rc == S0_OK)
		s0__filelist_sort(l);
	return rc;
}

static int list_locked(s0__rootfs *r, const char *p, s0__files_route *route, s0__filelist **out,
                       s0_error **err)
{
	s0__walk w;
	int rc = s0__rfs_walk(r, p, S0__WALK_FOLLOW, route ? route->foreign : NULL, &w, err);
	if (rc < 0)
		return rc;
	struct ext2_inode_large in;
	errcode_t ec;
	if (w.status != S0__WALK_OK)
		rc = s0__rfs_walk_fail(&w, S0__R_DIR_NOT_FOUND, p, route, 0, err);
	else if (!w.ino)
		rc = s0__error_set(err, S0_ENOTFOUND, S0__R_DIR_NOT_FOUND, "directory not found: %s", p);
	else if ((ec = s0__rfs_read_inode(r, w.ino, &in)) != 0)
		rc = s0__rfs_fail(r, ec, "read inode", err);
	else if (!LINUX_S_ISDIR(in.i_mode))
		rc = s0__error_set(err, S0_ECONFLICT, S0__R_NOT_DIR, "not a directory: %s", p);
	s0__filelist *l = NULL;
	if (rc == S0_OK && !(l = calloc(1, sizeof *l)))
		rc = s0__error_nomem(err);
	if (rc == S0_OK)
		rc = list_dir(r, w.ino, p, l, err);
	s0__walk_clear(&w);
	if (rc != S0_OK) {
		s0__filelist_free(l);
		return rc;
	}
	*out = l;
	return S0_OK;
}

int s0__rootfs_list(s0__rootfs *r, const char *path, size_t path_len, s0__files_route *route,
                    s0__filelist **out, s0_error **err)
{
	char *p = NULL;
	int rc = s0__path_normalize(path, path_len, 0, &p, err);
	if (rc < 0)
		return rc;
	s0__rootfs_lock();
	rc = list_locked(r, p, route, out, err);
	s0__rootfs_unlock();
	free(p);
	return rc;
}
