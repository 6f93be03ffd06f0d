/*
 * The path walker: resolves a canonical path inside the filesystem one
 * component at a time with ext2fs_lookup, following symlinks itself so
 * that no target can leave the filesystem root, stopping at foreign mount
 * points, and optionally creating missing directories.
 */
#include "local/rootfs/rfs_int.h"

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

typedef struct walker {
	s0__rootfs *r;
	unsigned flags;
	const s0__mountset *foreign;
	ext2_ino_t *ino;  /* inode at each depth; ino[0] is the root */
	size_t *clen;     /* canonical length at each depth */
	size_t depth, cap;
	s0__buf canon;    /* canonical path so far; "" is the root */
	char *rest;       /* remaining path (owned) */
	const char *p;    /* cursor into rest */
	size_t link_end;  /* rest[0..link_end) came from symlink targets */
	int links;
} walker;

static int push(walker *k, ext2_ino_t ino, s0_error **err)
{
	if (k->depth == k->cap) {
		size_t nc = k->cap ? k->cap * 2 : 16;
		ext2_ino_t *ni = realloc(k->ino, nc * sizeof *ni);
		if (!ni)
			return s0__error_nomem(err);
		k->ino = ni;
		size_t *nl = realloc(k->clen, nc * sizeof *nl);
		if (!nl)
			return s0__error_nomem(err);
		k->clen = nl;
		k->cap = nc;
	}
	k->ino[k->depth] = ino;
	k->clen[k->depth] = k->canon.len;
	k->depth++;
	return S0_OK;
}

static void truncate_canon(walker *k, size_t len)
{
	k->canon.len = len;
	if (k->canon.data)
		k->canon.data[len] = '\0';
}

/* canonical path + "/" + rest-of-path (lexical) as the result path. */
static int finish_path(walker *k, s0__walk *w, const char *tail, s0_error **err)
{
	s0__buf b = S0__BUF_INIT;
	if (s0__buf_put(&b, k->canon.data ? k->canon.data : "", k->canon.len) < 0 ||
	    (tail && *tail && s0__buf_puts(&b, tail) < 0) || (b.len == 0 && s0__buf_puts(&b, "/") < 0)) {
		s0__buf_free(&b);
		return s0__error_nomem(err);
	}
	w->canon = s0__buf_detach(&b, NULL);
	return w->canon ? S0_OK : s0__error_nomem(err);
}

static bool more_components(const char *p)
{
	while (*p == '/')
		p++;
	return *p != '\0';
}

/* Replace the consumed symlink component by its target. */
static int expand_link(walker *k, ext2_ino_t ino, const struct ext2_inode_large *in,
                       s0_error **err)
{
	if (++k->links > S0__FILES_MAX_LINKS)
		return s0__error_set(err, S0_EINVAL, S0__R_INVALID,
		                     "too many levels of symbolic links");
	char *target = NULL;
	errcode_t ec = s0__rfs_readlink(k->r, ino, in, &target);
	if (ec)
		return s0__rfs_fail(k->r, ec, "read symlink", err);
	char *nr = s0__asprintf("%s%s", target, k->p);
	bool absolute = target[0] == '/';
	size_t tlen = strlen(target), pos = (size_t)(k->p - k->rest);
	free(target);
	if (!nr)
		return s0__error_nomem(err);
	k->link_end = tlen + (k->link_end > pos ? k->link_end - pos : 0);
	free(k->rest);
	k->rest = nr;
	k->p = nr;
	if (absolute) {
		k->depth = 1;
		truncate_canon(k, 0);
	}
	return S0_OK;
}

/* The walk ended on a directory reached by "." / ".." or on the root. */
static int end_on_dir(walker *k, s0__walk *w, s0_error **err)
{
	w->ino = k->ino[k->depth - 1];
	w->dir = k->depth > 1 ? k->ino[k->depth - 2] : 0;
	const char *c = k->canon.data ? k->canon.data : "";
	s0__strlcpy(w->name, k->depth > 1 ? s0__path_base(c) : "", sizeof w->name);
	w->status = S0__WALK_OK;
	return finish_path(k, w, NULL, err);
}

typedef struct load_ctx {
	s0__dcache *dc;
	ext2_ino_t dir;
	size_t room;
	bool overflow;
} load_ctx;

static int load_cb(ext2_ino_t dir_ino, int kind, struct ext2_dir_entry *d, int off, int bsize,
                   char *buf, void *priv)
{
	(void)dir_ino, (void)kind, (void)off, (void)bsize, (void)buf;
	load_ctx *c = priv;
	int n = ext2fs_dirent_name_len(d);
	if ((n == 1 && d->name[0] == '.') || (n == 2 && d->name[0] == '.' && d->name[1] == '.'))
		return 0;
	if (!c->room--) {
		c->overflow = true;
		return DIRENT_ABORT;
	}
	s0__dcache_add(c->dc, c->dir, d->name, (size_t)n, d->inode); /* first one wins, as in a scan */
	return 0;
}

/*
 * Record every entry of directory dir in the name cache and mark it
 * complete, when they fit (dcache.h). A directory scanned once answers
 * every later lookup, present or absent, without a scan. Best effort: a
 * directory too large, or an error, leaves it incomplete.
 */
static void load_dir(s0__rootfs *r, ext2_ino_t dir)
{
	size_t cap = s0__dcache_capacity(r->dc), have = s0__dcache_count(r->dc);
	if (!r->dc || have + 1 >= cap)
		return;
	load_ctx c = {r->dc, dir, cap - have - 1, false};
	errcode_t ec = ext2fs_dir_iterate2(r->fs, dir, 0, NULL, load_cb, &c);
	if (!ec && !c.overflow && s0__dcache_count(r->dc) >= have) /* not cleared meanwhile */
		s0__dcache_set_complete(r->dc, dir);
}

/* (dir, name) → *ino through the name cache: a recorded name, else absent
 * in a complete directory, else a scan (whose answer is recorded). */
static errcode_t cached_lookup(s0__rootfs *r, ext2_ino_t dir, const char *name, size_t n,
                               ext2_ino_t *ino)
{
	uint32_t known = 0;
	bool hit = s0__dcache_get(r->dc, dir, name, n, &known);
	if (!hit && r->dc && !s0__dcache_complete(r->dc, dir)) {
		load_dir(r, dir);
		hit = s0__dcache_get(r->dc, dir, name, n, &known);
	}
	if (hit || s0__dcache_complete(r->dc, dir)) {
		*ino = known;
		return known ? 0 : EXT2_ET_FILE_NOT_FOUND;
	}
	errcode_t ec = ext2fs_lookup(r->fs, dir, name, (int)n, NULL, ino);
	if (!ec || ec == EXT2_ET_FILE_NOT_FOUND)
		s0__dcache_put(r->dc, dir, name, n, ec ? 0 : *ino);
	return ec;
}

/* Look up or (with MKDIRS, not for the last one) create a component. */
static int step_lookup(walker *k, const char *comp, size_t n, bool last, ext2_ino_t *ino,
                       s0_error **err)
{
	ext2_ino_t cur = k->ino[k->depth - 1];
	errcode_t ec = cached_lookup(k->r, cur, comp, n, ino);
	if (ec == EXT2_ET_FILE_NOT_FOUND) {
		*ino = 0;
		/* Never create what a (dangling) symlink names, like mkdir -p. */
		bool from_link = (size_t)(comp - k->rest) < k->link_end;
		if (last || !(k->flags & S0__WALK_MKDIRS) || from_link)
			return S0_OK;
		char name[EXT2_NAME_LEN + 1];
		memcpy(name, comp, n);
		name[n] = '\0';
		ec = s0__rfs_mkdir(k->r, cur, name, 0755, ino);
	}
	return ec ? s0__rfs_fail(k->r, ec, "look up path component", err) : S0_OK;
}

/* The walk stops at a final entry @p ino (0: missing) named comp. */
static int found(walker *k, s0__walk *w, ext2_ino_t ino, const char *comp, size_t n,
                 s0_error **err)
{
	w->status = S0__WALK_OK;
	w->dir = k->ino[k->depth - 1];
	w->ino = ino;
	memcpy(w->name, comp, n);
	w->name[n] = '\0';
	return finish_path(k, w, NULL, err);
}

/* The walk stops early with @p status; the unresolved rest is kept. */
static int stop(walker *k, s0__walk *w, int status, s0_error **err)
{
	w->status = status;
	return finish_path(k, w, k->p, err);
}

/* "." and ".." (at the root, ".." stays there). */
static bool dots(walker *k, const char *comp, size_t n)
{
	if (n == 1 && comp[0] == '.')
		return true;
	if (n != 2 || comp[0] != '.' || comp[1] != '.')
		return false;
	if (k->depth > 1) { /* clen[i] is the length of the path of ino[i] */
		k->depth--;
		truncate_canon(k, k->clen[k->depth - 1]);
	}
	return true;
}

/* One component; returns S0_OK with *done set when the walk is over. */
static int step(walker *k, s0__walk *w, const char *comp, size_t n, bool *done, s0_error **err)
{
	bool last = !more_components(k->p);
	if (dots(k, comp, n))
		return S0_OK;
	if (n > EXT2_NAME_LEN)
		return s0__error_set(err, S0_EINVAL, S0__R_INVALID,
		                     "symlink target component longer than %d bytes", EXT2_NAME_LEN);
	size_t base = k->canon.len;
	if (s0__buf_put(&k->canon, "/", 1) < 0 || s0__buf_put(&k->canon, comp, n) < 0)
		return s0__error_nomem(err);
	*done = true;
	if (k->foreign && s0__mountset_is_mount(k->foreign, k->canon.data))
		return stop(k, w, S0__WALK_REDIRECT, err);
	ext2_ino_t ino;
	int rc = step_lookup(k, comp, n, last, &ino, err);
	if (rc < 0)
		return rc;
	if (!ino)
		return last ? found(k, w, 0, comp, n, err) : stop(k, w, S0__WALK_NOPARENT, err);
	struct ext2_inode_large in;
	errcode_t ec = s0__rfs_read_inode(k->r, ino, &in);
	if (ec)
		return s0__rfs_fail(k->r, ec, "read inode", err);
	if (LINUX_S_ISLNK(in.i_mode) && (!last || (k->flags & S0__WALK_FOLLOW))) {
		*done = false;
		truncate_canon(k, base);
		return expand_link(k, ino, &in, err);
	}
	if (last)
		return found(k, w, ino, comp, n, err);
	if (!LINUX_S_ISDIR(in.i_mode))
		return stop(k, w, S0__WALK_NOTDIR, err);
	*done = false;
	return push(k, ino, err);
}

int s0__rfs_walk(s0__rootfs *r, const char *path, unsigned flags, const s0__mountset *foreign,
                 s0__walk *w, s0_error **err)
{
	memset(w, 0, sizeof *w);
	walker k = {.r = r, .flags = flags, .foreign = foreign, .canon = S0__BUF_INIT};
	int rc = S0_OK;
	k.rest = s0__strdup(path);
	if (!k.rest || s0__buf_puts(&k.canon, "") < 0) {
		rc = s0__error_nomem(err);
		goto out;
	}
	k.p = k.rest;
	rc = push(&k, EXT2_ROOT_INO, err);
	bool done = false;
	while (rc == S0_OK && !done) {
		const char *comp;
		size_t n;
		if (!s0__path_next(&k.p, &comp, &n)) {
			rc = end_on_dir(&k, w, err);
			break;
		}
		rc = step(&k, w, comp, n, &done, err);
	}
out:
	free(k.ino);
	free(k.clen);
	free(k.rest);
	s0__buf_free(&k.canon);
	if (rc < 0)
		s0__walk_clear(w);
	return rc;
}

void s0__walk_clear(s0__walk *w)
{
	free(w->canon);
	w->canon = NULL;
}

int s0__rfs_walk_fail(s0__walk *w, const char *missing_reason, const char *path,
                      s0__files_route *route, int slot, s0_error **err)
{
	switch (w->status) {
	case S0__WALK_NOTDIR:
		return s0__error_set(err, S0_ECONFLICT, S0__R_NOT_DIR,
		                     "a parent of %s is not a directory", path);
	case S0__WALK_NOPARENT:
		return s0__error_set(err, S0_ENOTFOUND, missing_reason,
		                     "a parent directory of %s does not exist", path);
	case S0__WALK_REDIRECT:
		if (!route)
			break;
		free(route->redirect[slot]);
		route->redirect[slot] = w->canon;
		w->canon = NULL;
		return S0__FILES_REDIRECT;
	default:
		break;
	}
	return s0__error_set(err, S0_EINTERNAL, S0__R_FAILED, "unexpected lookup state for %s",
	                     path);
}
