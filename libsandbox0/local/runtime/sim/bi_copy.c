/* Builtins that move and copy: mv, cp (shell.h). */
#include "local/runtime/sim/sh_int.h"

#include <stdlib.h>
#include <string.h>

#include "local/fsview/router.h"

/* DST itself, or DST/basename(SRC) when DST is an existing directory. */
static char *target_path(const struct s0__files_ns *ns, const char *src, const char *dst)
{
	s0__fileinfo *fi = NULL;
	bool dir = s0__files_stat(ns, dst, strlen(dst), &fi, NULL) == S0_OK &&
	           fi->type == S0_FILE_TYPE_DIR;
	s0__fileinfo_free(fi);
	return dir ? s0__path_join(dst, s0__path_base(src)) : s0__strdup(dst);
}

/* Resolve both operands; returns 0 with *src and *dst allocated. */
static int operands(sh_cmdctx *x, const char *who, char **argv, int i, int argc,
                    const struct s0__files_ns **ns, char **src, char **dst)
{
	*src = *dst = NULL;
	if (argc - i != 2) {
		s0__sh_errf(x, "%s: expected SOURCE DEST", who);
		return 2;
	}
	if (!(*ns = s0__sh_ns(x, who)))
		return 1;
	char *d = NULL;
	*src = s0__sh_path(x, who, argv[i]);
	if (*src && (d = s0__sh_path(x, who, argv[i + 1])) && !(*dst = target_path(*ns, *src, d)))
		x->oom = true;
	free(d);
	if (!*dst) {
		free(*src);
		*src = NULL;
		return 1;
	}
	return 0;
}

static int bi_mv(sh_cmdctx *x, int argc, char **argv)
{
	const struct s0__files_ns *ns;
	char *src, *dst;
	int rc = operands(x, "mv", argv, 1, argc, &ns, &src, &dst);
	if (rc)
		return rc;
	s0_error *e = NULL;
	if (s0__files_move(ns, src, strlen(src), dst, strlen(dst), &e) < 0) {
		s0__sh_errf(x, "mv: cannot move '%s' to '%s': %s", argv[1], argv[2],
		            s0__sh_strerror(e));
		s0_error_free(e);
		rc = 1;
	}
	free(src);
	free(dst);
	return rc;
}

static int copy_tree(sh_cmdctx *x, const struct s0__files_ns *ns, const char *src,
                     const char *dst, bool rec, int depth);

static int copy_dir(sh_cmdctx *x, const struct s0__files_ns *ns, const char *src,
                    const char *dst, int depth)
{
	s0__filelist *l = NULL;
	s0_error *e = NULL;
	if (s0__files_mkdir(ns, dst, strlen(dst), true, &e) < 0 ||
	    s0__files_list(ns, src, strlen(src), &l, &e) < 0) {
		s0__sh_errf(x, "cp: %s: %s", dst, s0__sh_strerror(e));
		s0_error_free(e);
		return 1;
	}
	int rc = 0;
	for (size_t i = 0; i < l->len && !rc; i++) {
		char *s = s0__path_join(src, l->items[i].name), *d = s0__path_join(dst, l->items[i].name);
		rc = s && d ? copy_tree(x, ns, s, d, true, depth + 1) : (x->oom = true, 1);
		free(s);
		free(d);
	}
	s0__filelist_free(l);
	return rc;
}

static int copy_tree(sh_cmdctx *x, const struct s0__files_ns *ns, const char *src,
                     const char *dst, bool rec, int depth)
{
	s0__fileinfo *fi = NULL;
	s0_error *e = NULL;
	int rc = 0;
	if (depth > 64 || s0__files_stat(ns, src, strlen(src), &fi, &e) < 0) {
		s0__sh_errf(x, "cp: cannot stat '%s': %s", src, e ? s0__sh_strerror(e) : "too deep");
		rc = 1;
	} else if (fi->type == S0_FILE_TYPE_DIR) {
		if (!rec)
			s0__sh_errf(x, "cp: -r not specified; omitting directory '%s'", src);
		rc = rec ? copy_dir(x, ns, src, dst, depth) : 1;
	} else if (fi->type == S0_FILE_TYPE_SYMLINK) {
		const char *t = fi->link_target;
		s0__files_delete(ns, dst, strlen(dst), NULL);
		if (s0__files_symlink(ns, t, strlen(t), dst, strlen(dst), &e) < 0)
			rc = 1;
	} else {
		void *d = NULL;
		size_t n = 0;
		if (s0__files_read(ns, src, strlen(src), 0, -1, &d, &n, &e) < 0 ||
		    s0__files_write(ns, dst, strlen(dst), d, n, &e) < 0 ||
		    s0__files_chmod(ns, dst, strlen(dst), fi->mode, &e) < 0)
			rc = 1;
		free(d);
	}
	if (rc && e)
		s0__sh_errf(x, "cp: cannot copy '%s': %s", src, s0__sh_strerror(e));
	s0_error_free(e);
	s0__fileinfo_free(fi);
	return rc;
}

static int bi_cp(sh_cmdctx *x, int argc, char **argv)
{
	bool rec = argc > 1 && (!strcmp(argv[1], "-r") || !strcmp(argv[1], "-R"));
	const struct s0__files_ns *ns;
	char *src, *dst;
	int rc = operands(x, "cp", argv, rec ? 2 : 1, argc, &ns, &src, &dst);
	if (rc)
		return rc;
	if (s0__path_is_under(dst, src) && rec) {
		s0__sh_errf(x, "cp: cannot copy a directory into itself");
		rc = 1;
	} else {
		rc = copy_tree(x, ns, src, dst, rec, 0);
	}
	free(src);
	free(dst);
	return rc;
}

const sh_bi *s0__bi_copy(size_t *n)
{
	static const sh_bi t[] = {{"mv", bi_mv}, {"cp", bi_cp}};
	*n = sizeof t / sizeof t[0];
	return t;
}
