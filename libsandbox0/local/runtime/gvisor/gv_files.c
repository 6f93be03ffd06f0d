/*
 * The files view of a running gvisor generation (gv_int.h): the files API
 * on the host directories its programs see — the root tree, and for /tmp
 * and each ephemeral mount the host tmpfs bind-mounted there — so both
 * see the same bytes (runsc runs with --file-access=shared). Every path is
 * opened with openat2(RESOLVE_IN_ROOT) under the directory that serves it:
 * `..` and symlinks (absolute or relative) resolve inside that directory,
 * never above it. A symlink from the root tree into /tmp resolves inside
 * the root tree here (inside the sandbox it reaches the tmpfs).
 *
 * Every change that succeeds is told to the namespace's hook (router.h),
 * which the driver binds to the engine's files_changed (file watches); the
 * guest's own changes are told by the watcher (gv_watch.c), which drops its
 * events of these changes (own(), then the fence).
 *
 * Errors follow local/rootfs/files.h (the same reasons per operation).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "local/rootfs/path.h"
#include "local/runtime/gvisor/gv_int.h"

/* The directory serving a normalised path and the path below it. */
typedef struct where {
	int base;        /* borrowed dirfd */
	const char *rel; /* relative ("." for the directory itself) */
	bool is_mount;   /* the path is a runtime mount point itself */
	char *canon;     /* owned: the normalised path */
} where;

/* Tell the file watches (router.h's hook) of a change that succeeded. */
static void tell(const s0__gv_files *v, const char *event, const char *path)
{
	if (v->ns.hook)
		v->ns.hook(v->ns.hook_arg, event, path);
}

static int open_in(int base, const char *rel, int flags, mode_t mode)
{
	struct open_how how = {.flags = (uint64_t)flags | O_CLOEXEC,
	                       .mode = (flags & O_CREAT) ? mode : 0,
	                       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
	return (int)syscall(SYS_openat2, base, rel, &how, sizeof how);
}

static int locate(s0__gv_files *v, const char *path, size_t len, where *w, s0_error **err)
{
	memset(w, 0, sizeof *w);
	int rc = s0__path_normalize(path, len, 0, &w->canon, err);
	if (rc < 0)
		return rc;
	w->base = v->root_fd;
	w->rel = w->canon[1] ? w->canon + 1 : ".";
	size_t best = 0;
	for (size_t i = 0; i < v->n; i++) {
		size_t n = strlen(v->mounts[i]);
		if (n > best && !strncmp(w->canon, v->mounts[i], n) &&
		    (w->canon[n] == '/' || !w->canon[n])) {
			best = n;
			w->base = v->fds[i];
			w->rel = w->canon[n] ? w->canon + n + 1 : ".";
			w->is_mount = !w->canon[n];
		}
	}
	return S0_OK;
}

static int fail(s0_error **err, int e, const char *missing, const char *path)
{
	switch (e) {
	case ENOENT:
		return s0__error_set(err, S0_ENOTFOUND, missing, "%s not found", path);
	case ENOTDIR:
		return s0__error_set(err, S0_ECONFLICT, "path_not_directory",
		                     "a component of %s is not a directory", path);
	case EISDIR:
		return s0__error_set(err, S0_ECONFLICT, "path_not_file", "%s is a directory", path);
	case EEXIST:
		return s0__error_set(err, S0_ECONFLICT, "path_exists", "%s exists", path);
	case ENOTEMPTY:
		return s0__error_set(err, S0_ECONFLICT, "path_exists", "%s is not empty", path);
	case EFBIG:
		return s0__error_set(err, S0_ETOOLARGE, "file_too_large", "%s is too large", path);
	case ELOOP:
	case EXDEV:
	case EINVAL:
		return s0__error_set(err, S0_EINVAL, "invalid_request", "%s: %s", path, strerror(e));
	default:
		return s0__error_set(err, S0_EINTERNAL, "operation_failed", "%s: %s", path,
		                     strerror(e));
	}
}

/* Split w->rel into its parent (opened, RESOLVE_IN_ROOT) and last name; with
 * @p make the missing parents are made first, each told to @p v's watches
 * (nullable: none) as a "create" of its sandbox path. */
static int open_parent(const s0__gv_files *v, const where *w, char **name, bool make,
                       s0_error **err)
{
	char *rel = s0__strdup(w->rel);
	if (!rel)
		return s0__error_nomem(err);
	char *slash = strrchr(rel, '/');
	const char *dir = ".";
	if (slash) {
		*slash = 0;
		dir = rel;
	}
	*name = s0__strdup(slash ? slash + 1 : rel);
	if (make && slash) { /* missing parents 0755, each made in its opened parent */
		for (char *s = strchr(rel, '/');; s = strchr(s + 1, '/')) {
			if (s)
				*s = 0;
			char *last = strrchr(rel, '/');
			int pd;
			if (last) {
				*last = 0;
				pd = open_in(w->base, rel, O_RDONLY | O_DIRECTORY, 0);
				*last = '/';
			} else {
				pd = open_in(w->base, ".", O_RDONLY | O_DIRECTORY, 0);
			}
			if (pd >= 0) {
				if (mkdirat(pd, last ? last + 1 : rel, 0755) == 0 && v) {
					/* its sandbox path: w->canon up to the end of this prefix of rel */
					size_t at = strlen(w->canon) - strlen(w->rel) + strlen(rel);
					char *made = s0__strndup(w->canon, at);
					if (made)
						tell(v, "create", made);
					free(made);
				}
				close(pd);
			}
			if (!s)
				break;
			*s = '/';
		}
	}
	int fd = open_in(w->base, dir, O_RDONLY | O_DIRECTORY, 0);
	int e = errno;
	free(rel);
	if (fd < 0 || !*name) {
		free(*name);
		*name = NULL;
		if (fd >= 0)
			close(fd);
		return fail(err, fd < 0 ? e : EINVAL, "directory_not_found", w->canon);
	}
	return fd;
}

static int gvf_read(void *ctx, const char *path, size_t path_len, uint64_t offset,
                    int64_t length, void **data_out, size_t *len_out, s0_error **err)
{
	where w;
	int rc = locate(ctx, path, path_len, &w, err);
	if (rc < 0)
		return rc;
	int fd = open_in(w.base, w.rel, O_RDONLY, 0);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = fail(err, errno, "file_not_found", w.canon);
	} else if (S_ISDIR(st.st_mode)) {
		rc = fail(err, EISDIR, "file_not_found", w.canon);
	} else {
		uint64_t size = (uint64_t)st.st_size;
		uint64_t want = offset >= size ? 0 : size - offset;
		if (length >= 0 && (uint64_t)length < want)
			want = (uint64_t)length;
		if (want > S0__FILES_MAX_READ) {
			rc = fail(err, EFBIG, "file_not_found", w.canon);
		} else {
			char *buf = malloc(want + 1);
			size_t got = 0;
			while (buf && got < want) {
				ssize_t n = pread(fd, buf + got, want - got, (off_t)(offset + got));
				if (n <= 0)
					break;
				got += (size_t)n;
			}
			if (!buf) {
				rc = s0__error_nomem(err);
			} else {
				buf[got] = 0;
				*data_out = buf;
				*len_out = got;
			}
		}
	}
	if (fd >= 0)
		close(fd);
	free(w.canon);
	return rc;
}

static int gvf_write_run(void *ctx, const char *path, size_t path_len, const void *data, size_t len,
                     s0_error **err)
{
	if (len > S0__FILES_MAX_WRITE)
		return s0__error_set(err, S0_ETOOLARGE, "file_too_large", "more than %llu bytes",
		                     (unsigned long long)S0__FILES_MAX_WRITE);
	where w;
	int rc = locate(ctx, path, path_len, &w, err);
	if (rc < 0)
		return rc;
	if (w.is_mount || !strcmp(w.rel, ".")) {
		rc = fail(err, EISDIR, "", w.canon);
		free(w.canon);
		return rc;
	}
	char *name = NULL;
	int pd = open_parent(ctx, &w, &name, true, err);
	if (pd < 0) {
		free(w.canon);
		return pd;
	}
	/* a new inode renamed over the entry: atomic, a symlink there replaced */
	char tmp[64];
	snprintf(tmp, sizeof tmp, ".s0-write.%d.%p", (int)getpid(), (void *)&tmp);
	struct stat st;
	bool existed = fstatat(pd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (existed && S_ISDIR(st.st_mode)) {
		rc = fail(err, EISDIR, "", w.canon);
	} else {
		int fd = openat(pd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
		size_t off = 0;
		while (fd >= 0 && off < len) {
			ssize_t n = write(fd, (const char *)data + off, len - off);
			if (n <= 0)
				break;
			off += (size_t)n;
		}
		if (fd < 0 || off < len || fchmod(fd, 0644) < 0 || renameat(pd, tmp, pd, name) < 0) {
			rc = fail(err, errno ? errno : EIO, "file_not_found", w.canon);
			unlinkat(pd, tmp, 0);
		}
		if (fd >= 0)
			close(fd);
	}
	close(pd);
	if (rc == S0_OK && !existed) /* a new file is a create, then a write (as inotify) */
		tell(ctx, "create", w.canon);
	if (rc == S0_OK)
		tell(ctx, "write", w.canon);
	free(name);
	free(w.canon);
	return rc;
}

static int gvf_mkdir_run(void *ctx, const char *path, size_t path_len, bool recursive,
                     s0_error **err)
{
	where w;
	int rc = locate(ctx, path, path_len, &w, err);
	if (rc < 0)
		return rc;
	if (!strcmp(w.rel, ".")) { /* "/" or a mount point: there already */
		free(w.canon);
		return recursive ? S0_OK : fail(err, EEXIST, "", w.canon);
	}
	char *name = NULL;
	int pd = open_parent(ctx, &w, &name, recursive, err);
	if (pd < 0) {
		free(w.canon);
		return pd;
	}
	if (mkdirat(pd, name, 0755) < 0) {
		int e = errno;
		struct stat st;
		bool dir = fstatat(pd, name, &st, 0) == 0 && S_ISDIR(st.st_mode);
		if (!(e == EEXIST && recursive && dir))
			rc = fail(err, e == EEXIST && recursive ? ENOTDIR : e, "directory_not_found",
			          w.canon);
	} else {
		tell(ctx, "create", w.canon);
	}
	close(pd);
	free(name);
	free(w.canon);
	return rc;
}

/* rm -rf of @p name in @p dfd (no symlink followed). */
static int remove_tree(int dfd, const char *name)
{
	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -1;
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	struct dirent *de;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			remove_tree(dirfd(d), de->d_name);
	closedir(d);
	return unlinkat(dfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT ? 0 : -1;
}

static int gvf_delete_run(void *ctx, const char *path, size_t path_len, s0_error **err)
{
	where w;
	int rc = locate(ctx, path, path_len, &w, err);
	if (rc < 0)
		return rc;
	if (!strcmp(w.rel, ".")) {
		rc = s0__error_set(err, S0_EFORBIDDEN, "permission_denied", "cannot delete %s",
		                   w.canon);
		free(w.canon);
		return rc;
	}
	char *name = NULL;
	int pd = open_parent(NULL, &w, &name, false, err);
	if (pd < 0) {
		free(w.canon);
		if (pd == S0_ENOTFOUND) { /* missing: success */
			s0_error_free(err ? *err : NULL);
			if (err)
				*err = NULL;
			return S0_OK;
		}
		return pd;
	}
	struct stat st;
	bool existed = fstatat(pd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (remove_tree(pd, name) < 0)
		rc = fail(err, errno, "file_not_found", w.canon);
	else if (existed)
		tell(ctx, "remove", w.canon);
	close(pd);
	free(name);
	free(w.canon);
	return rc;
}

static int fill_info(int dfd, const char *name, const char *shown, bool target,
                     s0__fileinfo *fi, s0_error **err)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return fail(err, errno, "file_not_found", shown);
	const char *slash = strrchr(shown, '/');
	fi->name = s0__strdup(slash && slash[1] ? slash + 1 : "/");
	fi->type = S_ISDIR(st.st_mode) ? S0_FILE_TYPE_DIR
	           : S_ISLNK(st.st_mode) ? S0_FILE_TYPE_SYMLINK
	                                  : S0_FILE_TYPE_FILE;
	fi->size_bytes = st.st_size;
	fi->mode = st.st_mode & 07777;
	fi->mod_time_unix_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	fi->is_link = S_ISLNK(st.st_mode);
	if (fi->is_link && target) {
		char buf[4097];
		ssize_t n = readlinkat(dfd, name, buf, sizeof buf - 1);
		if (n >= 0) {
			buf[n] = 0;
			fi->link_target = s0__strdup(buf);
		}
	}
	if (!fi->name || s0__fileinfo_set_path(fi, shown, err) < 0) {
		s0__fileinfo_clear(fi);
		return s0__error_nomem(err);
	}
	return S0_OK;
}

static int gvf_stat(void *ctx, const char *path, size_t path_len, s0__fileinfo **out,
                    s0_error **err)
{
	where w;
	int rc = locate(ctx, path, path_len, &w, err);
	if (rc < 0)
		return rc;
	s0__fileinfo *fi = calloc(1, sizeof *fi);
	char *shown = s0__strndup(path, path_len);
	if (!fi || !shown) {
		rc = s0__error_nomem(err);
	} else if (!strcmp(w.rel, ".")) {
		rc = fill_info(w.base, ".", shown, true, fi, err);
		if (rc == S0_OK && !strcmp(w.canon, "/")) {
			free(fi->name);
			fi->name = s0__strdup("/");
		}
	} else {
		char *name = NULL;
		int pd = open_parent(NULL, &w, &name, false, err);
		if (pd < 0) {
			rc = pd;
			if (rc == S0_ENOTFOUND) { /* a missing parent: the file is missing */
				s0_error_free(err ? *err : NULL);
				if (err)
					*err = NULL;
				rc = fail(err, ENOENT, "file_not_found", w.canon);
			}
		} else {
			rc = fill_info(pd, name, shown, true, fi, err);
			close(pd);
		}
		free(name);
	}
	free(shown);
	free(w.canon);
	if (rc < 0) {
		s0__fileinfo_free(fi);
		return rc;
	}
	*out = fi;
	return S0_OK;
}

static int gvf_list(void *ctx, const char *path, size_t path_len, s0__filelist **out,
                    s0_error **err)
{
	where w;
	int rc = locate(ctx, path, path_len, &w, err);
	if (rc < 0)
		return rc;
	int fd = open_in(w.base, w.rel, O_RDONLY | O_DIRECTORY, 0);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		rc = fail(err, errno, "directory_not_found", w.canon);
		if (fd >= 0)
			close(fd);
		free(w.canon);
		return rc;
	}
	s0__filelist *l = calloc(1, sizeof *l);
	struct dirent *de;
	rc = l ? S0_OK : s0__error_nomem(err);
	while (rc == S0_OK && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *shown = s0__asprintf("%s/%s", strcmp(w.canon, "/") ? w.canon : "", de->d_name);
		s0__fileinfo fi = {0};
		if (!shown)
			rc = s0__error_nomem(err);
		else if (fill_info(dirfd(d), de->d_name, shown, false, &fi, NULL) == S0_OK)
			rc = s0__filelist_push(l, &fi, err);
		s0__fileinfo_clear(&fi);
		free(shown);
	}
	closedir(d);
	free(w.canon);
	if (rc < 0) {
		s0__filelist_free(l);
		return rc;
	}
	s0__filelist_sort(l);
	*out = l;
	return S0_OK;
}

static int gvf_move_run(void *ctx, const char *src, size_t src_len, const char *dst, size_t dst_len,
                    s0_error **err)
{
	where a, b;
	int rc = locate(ctx, src, src_len, &a, err);
	if (rc < 0)
		return rc;
	if ((rc = locate(ctx, dst, dst_len, &b, err)) < 0) {
		free(a.canon);
		return rc;
	}
	char *an = NULL, *bn = NULL;
	int ap = -1, bp = -1;
	if (!strcmp(a.rel, ".") || !strcmp(b.rel, ".")) {
		rc = s0__error_set(err, S0_EINVAL, "invalid_request", "cannot move %s", a.canon);
	} else if (a.base != b.base) {
		rc = s0__error_set(err, S0_EINTERNAL, "operation_failed",
		                   "%s and %s are on different filesystems", a.canon, b.canon);
	} else if (!strncmp(b.canon, a.canon, strlen(a.canon)) && b.canon[strlen(a.canon)] == '/') {
		rc = s0__error_set(err, S0_EINVAL, "invalid_request", "cannot move %s into itself",
		                   a.canon);
	} else if ((ap = open_parent(NULL, &a, &an, false, err)) < 0) {
		rc = ap;
		if (rc == S0_ENOTFOUND) { /* a missing parent: the source is missing */
			s0_error_free(err ? *err : NULL);
			if (err)
				*err = NULL;
			rc = fail(err, ENOENT, "file_not_found", a.canon);
		}
	} else if ((bp = open_parent(ctx, &b, &bn, true, err)) < 0) {
		rc = bp;
	} else if (renameat(ap, an, bp, bn) < 0) {
		int e = errno;
		rc = fail(err, e == ENOENT ? ENOENT : e, "file_not_found", e == ENOENT ? a.canon : b.canon);
	} else { /* the source as "rename", its destination as "create" (runtime.h) */
		tell(ctx, "rename", a.canon);
		tell(ctx, "create", b.canon);
	}
	if (ap >= 0)
		close(ap);
	if (bp >= 0)
		close(bp);
	free(an);
	free(bn);
	free(a.canon);
	free(b.canon);
	return rc;
}

static int gvf_chmod_run(void *ctx, const char *path, size_t path_len, uint32_t mode,
                     s0_error **err)
{
	if (mode & ~07777u)
		return s0__error_set(err, S0_EINVAL, "invalid_request", "mode bits outside 07777");
	where w;
	int rc = locate(ctx, path, path_len, &w, err);
	if (rc < 0)
		return rc;
	int fd = open_in(w.base, w.rel, O_RDONLY, 0); /* symlinks followed, inside the root */
	if (fd < 0 || fchmod(fd, mode) < 0)
		rc = fail(err, errno, "file_not_found", w.canon);
	else
		tell(ctx, "chmod", w.canon);
	if (fd >= 0)
		close(fd);
	free(w.canon);
	return rc;
}

static int gvf_symlink_run(void *ctx, const char *target, size_t target_len, const char *path,
                       size_t path_len, s0_error **err)
{
	if (!target_len || target_len > 4095 || memchr(target, 0, target_len))
		return s0__error_set(err, S0_EINVAL, "invalid_request", "bad symlink target");
	where w;
	int rc = locate(ctx, path, path_len, &w, err);
	if (rc < 0)
		return rc;
	char *name = NULL, *t = s0__strndup(target, target_len);
	int pd = !strcmp(w.rel, ".") ? fail(err, EEXIST, "", w.canon)
	                             : open_parent(NULL, &w, &name, false, err);
	if (!t && pd >= 0)
		rc = s0__error_nomem(err);
	else if (pd >= 0 && symlinkat(t, pd, name) < 0)
		rc = fail(err, errno, "directory_not_found", w.canon);
	else if (pd < 0)
		rc = pd;
	else
		tell(ctx, "create", w.canon);
	if (pd >= 0)
		close(pd);
	free(t);
	free(name);
	free(w.canon);
	return rc;
}

/* The guest-change watcher drops its events of a files API change (told here
 * by tell()) from own() to fence() (gv_watch.c). */
static uint64_t own(const s0__gv_files *v, const char *a, size_t na, const char *b, size_t nb)
{
	char *ca = NULL, *cb = NULL;
	if (!v->watch || s0__path_normalize(a, na, 0, &ca, NULL) < 0 ||
	    (b && s0__path_normalize(b, nb, 0, &cb, NULL) < 0)) {
		free(ca);
		return 0;
	}
	uint64_t seq = s0__gv_watch_own(v->watch, ca, cb);
	free(ca);
	free(cb);
	return seq;
}

static int gvf_write(void *ctx, const char *path, size_t path_len, const void *data, size_t len,
                     s0_error **err)
{
	uint64_t seq = own(ctx, path, path_len, NULL, 0);
	int rc = gvf_write_run(ctx, path, path_len, data, len, err);
	s0__gv_watch_fence(((s0__gv_files *)ctx)->watch, seq);
	return rc;
}

static int gvf_mkdir(void *ctx, const char *path, size_t path_len, bool recursive,
                     s0_error **err)
{
	uint64_t seq = own(ctx, path, path_len, NULL, 0);
	int rc = gvf_mkdir_run(ctx, path, path_len, recursive, err);
	s0__gv_watch_fence(((s0__gv_files *)ctx)->watch, seq);
	return rc;
}

static int gvf_delete(void *ctx, const char *path, size_t path_len, s0_error **err)
{
	uint64_t seq = own(ctx, path, path_len, NULL, 0);
	int rc = gvf_delete_run(ctx, path, path_len, err);
	s0__gv_watch_fence(((s0__gv_files *)ctx)->watch, seq);
	return rc;
}

static int gvf_move(void *ctx, const char *src, size_t src_len, const char *dst, size_t dst_len,
                    s0_error **err)
{
	uint64_t seq = own(ctx, src, src_len, dst, dst_len);
	int rc = gvf_move_run(ctx, src, src_len, dst, dst_len, err);
	s0__gv_watch_fence(((s0__gv_files *)ctx)->watch, seq);
	return rc;
}

static int gvf_chmod(void *ctx, const char *path, size_t path_len, uint32_t mode,
                     s0_error **err)
{
	uint64_t seq = own(ctx, path, path_len, NULL, 0);
	int rc = gvf_chmod_run(ctx, path, path_len, mode, err);
	s0__gv_watch_fence(((s0__gv_files *)ctx)->watch, seq);
	return rc;
}

static int gvf_symlink(void *ctx, const char *target, size_t target_len, const char *path,
                       size_t path_len, s0_error **err)
{
	uint64_t seq = own(ctx, path, path_len, NULL, 0);
	int rc = gvf_symlink_run(ctx, target, target_len, path, path_len, err);
	s0__gv_watch_fence(((s0__gv_files *)ctx)->watch, seq);
	return rc;
}

static const s0__files_ops GV_FILES_OPS = {
	.read = gvf_read,
	.write = gvf_write,
	.mkdir = gvf_mkdir,
	.del = gvf_delete,
	.stat = gvf_stat,
	.list = gvf_list,
	.move = gvf_move,
	.chmod = gvf_chmod,
	.symlink = gvf_symlink,
};

int s0__gv_files_open(s0__gv_files *v, const char *root, const char *const *mounts,
                      const char *const *dirs, size_t n, s0_error **err)
{
	memset(v, 0, sizeof *v);
	v->root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	v->mounts = calloc(n + 1, sizeof *v->mounts);
	v->fds = calloc(n + 1, sizeof *v->fds);
	if (v->root_fd < 0 || !v->mounts || !v->fds) {
		s0__gv_files_close(v);
		return s0__error_set(err, S0_EIO, "runtime_unavailable", "cannot open %s: %s", root,
		                     strerror(errno));
	}
	for (size_t i = 0; i < n; i++) {
		v->fds[i] = open(dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		v->mounts[i] = s0__strdup(mounts[i]);
		v->n = i + 1;
		if (v->fds[i] < 0 || !v->mounts[i]) {
			s0__gv_files_close(v);
			return s0__error_set(err, S0_EIO, "runtime_unavailable", "cannot open %s: %s",
			                     dirs[i], strerror(errno));
		}
	}
	s0__files_ns_init_ops(&v->ns, &GV_FILES_OPS, v);
	return S0_OK;
}

void s0__gv_files_close(s0__gv_files *v)
{
	if (v->root_fd > 0)
		close(v->root_fd);
	for (size_t i = 0; i < v->n; i++) {
		if (v->fds && v->fds[i] > 0)
			close(v->fds[i]);
		if (v->mounts)
			free(v->mounts[i]);
	}
	free(v->mounts);
	free(v->fds);
	s0__files_ns_clear(&v->ns);
	memset(v, 0, sizeof *v);
	v->root_fd = -1;
}
