/* The files-API router: RootFS or tmpfs for each path (see router.h). */
#include "local/fsview/router.h"

#include <stdlib.h>
#include <string.h>

enum kind { C_READ, C_WRITE, C_MKDIR, C_DELETE, C_STAT, C_LIST, C_CHMOD, C_SYMLINK, C_CANON };

/* One operation's inputs and outputs, whichever filesystem serves it. */
typedef struct call {
	enum kind kind;
	uint64_t off;
	int64_t length;
	const void *data;
	size_t len;
	bool flag; /* mkdir: recursive; canon: follow the final component */
	uint32_t mode;
	const char *target;
	size_t target_len;
	void **data_out;
	size_t *len_out;
	s0__fileinfo **fi;
	s0__filelist **fl;
	char **canon;
} call;

bool s0__files_ns_is_runtime_path(const s0__files_ns *ns, const char *p)
{
	return s0__mountset_owner(&ns->mounts, p) != NULL;
}

static int on_rootfs(const s0__files_ns *ns, const char *p, call *c, s0__files_route *rt,
                     s0_error **err)
{
	s0__rootfs *r = ns->rootfs;
	size_t n = strlen(p);
	switch (c->kind) {
	case C_READ:
		return s0__rootfs_read(r, p, n, c->off, c->length, rt, c->data_out, c->len_out, err);
	case C_WRITE:
		return s0__rootfs_write(r, p, n, c->data, c->len, rt, err);
	case C_MKDIR:
		return s0__rootfs_mkdir(r, p, n, c->flag, rt, err);
	case C_DELETE:
		return s0__rootfs_delete(r, p, n, rt, err);
	case C_STAT:
		return s0__rootfs_stat(r, p, n, rt, c->fi, err);
	case C_LIST:
		return s0__rootfs_list(r, p, n, rt, c->fl, err);
	case C_CHMOD:
		return s0__rootfs_chmod(r, p, n, c->mode, rt, err);
	case C_SYMLINK:
		return s0__rootfs_symlink(r, c->target, c->target_len, p, n, rt, err);
	default:
		return s0__rootfs_canon(r, p, n, c->flag, rt, c->canon, err);
	}
}

static int on_tmpfs(const s0__files_ns *ns, const char *p, call *c, s0__files_route *rt,
                    s0_error **err)
{
	s0__tmpfs *t = ns->tmpfs;
	size_t n = strlen(p);
	switch (c->kind) {
	case C_READ:
		return s0__tmpfs_read(t, p, n, c->off, c->length, rt, c->data_out, c->len_out, err);
	case C_WRITE:
		return s0__tmpfs_write(t, p, n, c->data, c->len, rt, err);
	case C_MKDIR:
		return s0__tmpfs_mkdir(t, p, n, c->flag, rt, err);
	case C_DELETE:
		return s0__tmpfs_delete(t, p, n, rt, err);
	case C_STAT:
		return s0__tmpfs_stat(t, p, n, rt, c->fi, err);
	case C_LIST:
		return s0__tmpfs_list(t, p, n, rt, c->fl, err);
	case C_CHMOD:
		return s0__tmpfs_chmod(t, p, n, c->mode, rt, err);
	case C_SYMLINK:
		return s0__tmpfs_symlink(t, c->target, c->target_len, p, n, rt, err);
	default:
		return s0__tmpfs_canon(t, p, n, c->flag, rt, c->canon, err);
	}
}

static int dispatch(const s0__files_ns *ns, const char *p, call *c, s0__files_route *rt,
                    s0_error **err)
{
	if (s0__files_ns_is_runtime_path(ns, p))
		return on_tmpfs(ns, p, c, rt, err);
	return on_rootfs(ns, p, c, rt, err);
}

static int too_many_hops(s0_error **err)
{
	return s0__error_set(err, S0_EINVAL, S0__R_INVALID, "too many levels of symbolic links");
}

/* Run @p c on canonical path *cur, following redirects; *cur is replaced
 * by the path that was finally served. */
static int route_path(const s0__files_ns *ns, char **cur, call *c, s0_error **err)
{
	for (int hop = 0; hop <= S0__FILES_MAX_HOPS; hop++) {
		s0__files_route rt = {.foreign = &ns->mounts};
		int rc = dispatch(ns, *cur, c, &rt, err);
		if (rc != S0__FILES_REDIRECT) {
			s0__files_route_reset(&rt);
			return rc;
		}
		char *next = NULL;
		rc = s0__path_normalize(rt.redirect[0], strlen(rt.redirect[0]), S0__PATH_CLAMP, &next,
		                        err);
		s0__files_route_reset(&rt);
		if (rc < 0)
			return rc;
		free(*cur);
		*cur = next;
	}
	return too_many_hops(err);
}

/* Normalise the request, route it; *norm_out (nullable) gets the
 * normalised request path. */
static int route_one(const s0__files_ns *ns, const char *path, size_t len, call *c,
                     char **norm_out, s0_error **err)
{
	char *norm = NULL, *cur = NULL;
	int rc = s0__path_normalize(path, len, 0, &norm, err);
	if (rc == S0_OK && !(cur = s0__strdup(norm)))
		rc = s0__error_nomem(err);
	if (rc == S0_OK)
		rc = route_path(ns, &cur, c, err);
	free(cur);
	if (rc == S0_OK && norm_out)
		*norm_out = norm;
	else
		free(norm);
	return rc;
}

int s0__files_read(const s0__files_ns *ns, const char *path, size_t path_len, uint64_t offset,
                   int64_t length, void **data_out, size_t *len_out, s0_error **err)
{
	if (ns->ops)
		return ns->ops->read(ns->ops_ctx, path, path_len, offset, length, data_out, len_out,
		                      err);
	call c = {.kind = C_READ, .off = offset, .length = length, .data_out = data_out,
	          .len_out = len_out};
	return route_one(ns, path, path_len, &c, NULL, err);
}

/* Route a change and tell the hook (router.h) what changed. */
static int route_change(const s0__files_ns *ns, const char *path, size_t len, call *c,
                        const char *event, s0_error **err)
{
	char *norm = NULL;
	int rc = route_one(ns, path, len, c, ns->hook ? &norm : NULL, err);
	if (rc == S0_OK && norm)
		ns->hook(ns->hook_arg, event, norm);
	free(norm);
	return rc;
}

static bool watched(const s0__files_ns *ns)
{
	return ns->hook && (!ns->hook_wanted || ns->hook_wanted(ns->hook_arg));
}

/* The directories above @p path (and @p path itself with @p self) that do not
 * exist now, outermost first, as canonical paths; *n their count. What a
 * change that makes them (a write, a recursive mkdir) tells as "create".
 * NULL (none) when unwatched, already there or out of memory. */
static char **missing_dirs(const s0__files_ns *ns, const char *path, size_t len, bool self,
                           size_t *n)
{
	*n = 0;
	char *norm = NULL;
	if (!watched(ns) || s0__path_normalize(path, len, 0, &norm, NULL) < 0)
		return NULL;
	char **out = NULL;
	size_t nl = strlen(norm), first = nl + 1; /* prefixes of norm ending at a '/' (or its end) */
	for (size_t i = 1; i <= nl && first > nl; i++) {
		if (i < nl && norm[i] != '/')
			continue;
		if (i == nl && !self)
			break;
		s0__fileinfo *fi = NULL;
		char save = norm[i];
		norm[i] = 0;
		call st = {.kind = C_STAT, .fi = &fi};
		if (route_one(ns, norm, i, &st, NULL, NULL) != S0_OK)
			first = i; /* the outermost missing one: every one below it is too */
		s0__fileinfo_free(fi);
		norm[i] = save;
	}
	for (size_t i = first; i <= nl; i++) {
		if (i < nl && norm[i] != '/')
			continue;
		if (i == nl && !self)
			break;
		char **more = realloc(out, (*n + 1) * sizeof *out);
		char *p = more ? s0__strndup(norm, i) : NULL;
		if (more)
			out = more;
		if (!p)
			break;
		out[(*n)++] = p;
	}
	free(norm);
	return out;
}

/* Tell "create" of each of @p dirs (missing_dirs()) and free them. */
static void tell_made(const s0__files_ns *ns, char **dirs, size_t n, bool made)
{
	for (size_t i = 0; i < n; i++) {
		if (made)
			ns->hook(ns->hook_arg, "create", dirs[i]);
		free(dirs[i]);
	}
	free(dirs);
}

int s0__files_write(const s0__files_ns *ns, const char *path, size_t path_len, const void *data,
                    size_t len, s0_error **err)
{
	if (ns->ops)
		return ns->ops->write(ns->ops_ctx, path, path_len, data, len, err);
	call c = {.kind = C_WRITE, .data = data, .len = len};
	bool existed = true;
	size_t nd = 0; /* the parents it makes are told first */
	char **dirs = missing_dirs(ns, path, path_len, false, &nd);
	if (watched(ns)) {
		/* a new file is a create, then a write (as inotify tells it) */
		s0__fileinfo *fi = NULL;
		call st = {.kind = C_STAT, .fi = &fi};
		existed = route_one(ns, path, path_len, &st, NULL, NULL) == S0_OK;
		s0__fileinfo_free(fi);
	}
	char *norm = NULL;
	int rc = route_one(ns, path, path_len, &c, ns->hook ? &norm : NULL, err);
	tell_made(ns, dirs, nd, rc == S0_OK);
	if (rc == S0_OK && norm) {
		ns->hook(ns->hook_arg, existed ? "write" : "create", norm);
		if (!existed) /* a new file is a create, then a write (as inotify tells it) */
			ns->hook(ns->hook_arg, "write", norm);
	}
	free(norm);
	return rc;
}

int s0__files_mkdir(const s0__files_ns *ns, const char *path, size_t path_len, bool recursive,
                    s0_error **err)
{
	if (ns->ops)
		return ns->ops->mkdir(ns->ops_ctx, path, path_len, recursive, err);
	call c = {.kind = C_MKDIR, .flag = recursive};
	if (!watched(ns))
		return route_one(ns, path, path_len, &c, NULL, err);
	size_t nd = 0; /* each directory it makes, outermost first (none: it was there) */
	char **dirs = missing_dirs(ns, path, path_len, true, &nd);
	int rc = route_one(ns, path, path_len, &c, NULL, err);
	tell_made(ns, dirs, nd, rc == S0_OK);
	return rc;
}

int s0__files_delete(const s0__files_ns *ns, const char *path, size_t path_len, s0_error **err)
{
	if (ns->ops)
		return ns->ops->del(ns->ops_ctx, path, path_len, err);
	call c = {.kind = C_DELETE};
	return route_change(ns, path, path_len, &c, "remove", err);
}

int s0__files_stat(const s0__files_ns *ns, const char *path, size_t path_len,
                   s0__fileinfo **out, s0_error **err)
{
	if (ns->ops)
		return ns->ops->stat(ns->ops_ctx, path, path_len, out, err);
	s0__fileinfo *fi = NULL;
	call c = {.kind = C_STAT, .fi = &fi};
	int rc = route_one(ns, path, path_len, &c, NULL, err);
	if (rc == S0_OK) {
		char *p = s0__strndup(path, path_len);
		if (!p) {
			s0__fileinfo_free(fi);
			return s0__error_nomem(err);
		}
		free(fi->path);
		fi->path = p;
		*out = fi;
	}
	return rc;
}

int s0__files_list(const s0__files_ns *ns, const char *path, size_t path_len,
                   s0__filelist **out, s0_error **err)
{
	if (ns->ops)
		return ns->ops->list(ns->ops_ctx, path, path_len, out, err);
	s0__filelist *l = NULL;
	char *norm = NULL;
	call c = {.kind = C_LIST, .fl = &l};
	int rc = route_one(ns, path, path_len, &c, &norm, err);
	for (size_t i = 0; rc == S0_OK && i < l->len; i++) {
		char *p = s0__path_join(norm, l->items[i].name);
		if (!p) {
			rc = s0__error_nomem(err);
			break;
		}
		free(l->items[i].path);
		l->items[i].path = p;
	}
	free(norm);
	if (rc == S0_OK)
		*out = l;
	else
		s0__filelist_free(l);
	return rc;
}

int s0__files_chmod(const s0__files_ns *ns, const char *path, size_t path_len, uint32_t mode,
                    s0_error **err)
{
	if (ns->ops)
		return ns->ops->chmod(ns->ops_ctx, path, path_len, mode, err);
	call c = {.kind = C_CHMOD, .mode = mode};
	return route_change(ns, path, path_len, &c, "chmod", err);
}

int s0__files_symlink(const s0__files_ns *ns, const char *target, size_t target_len,
                      const char *path, size_t path_len, s0_error **err)
{
	if (ns->ops)
		return ns->ops->symlink(ns->ops_ctx, target, target_len, path, path_len, err);
	call c = {.kind = C_SYMLINK, .target = target, .target_len = target_len};
	return route_change(ns, path, path_len, &c, "create", err);
}
