/* File builtins: ls, mkdir, rm, mv, cp, touch, chmod, cd, pwd (shell.h). */
#include "local/runtime/sim/sh_int.h"

#include <stdlib.h>
#include <string.h>

#include "local/fsview/router.h"

/* Options given as leading "-xyz" words; returns the first operand index. */
static int opts(int argc, char **argv, const char *allowed, bool *seen, int *bad)
{
	int i = 1;
	*bad = 0;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "--"))
			return i + 1;
		for (const char *c = argv[i] + 1; *c; c++) {
			const char *k = strchr(allowed, *c);
			if (!k)
				*bad = *c;
			else
				seen[k - allowed] = true;
		}
	}
	return i;
}

static s0__fileinfo *stat_path(const struct s0__files_ns *ns, const char *path, s0_error **e)
{
	s0__fileinfo *fi = NULL;
	if (s0__files_stat(ns, path, strlen(path), &fi, e) < 0)
		return NULL;
	return fi;
}

/* ---- ls ---- */

static void mode_string(const s0__fileinfo *fi, char out[11])
{
	static const char rwx[] = "rwxrwxrwx";
	out[0] = fi->type == S0_FILE_TYPE_DIR ? 'd' : fi->type == S0_FILE_TYPE_SYMLINK ? 'l' : '-';
	for (int i = 0; i < 9; i++)
		out[1 + i] = (fi->mode >> (8 - i)) & 1 ? rwx[i] : '-';
	out[10] = 0;
}

static void ls_entry(sh_cmdctx *x, const s0__fileinfo *fi, const char *name, bool lng)
{
	if (!lng) {
		s0__sh_printf(x, 1, "%s\n", name);
		return;
	}
	char m[11];
	mode_string(fi, m);
	s0__sh_printf(x, 1, "%s %10lld %s%s%s\n", m, (long long)fi->size_bytes, name,
	              fi->link_target ? " -> " : "", fi->link_target ? fi->link_target : "");
}

static int ls_one(sh_cmdctx *x, const struct s0__files_ns *ns, const char *arg, bool all,
                  bool lng, bool header)
{
	char *path = s0__sh_path(x, "ls", arg);
	if (!path)
		return 1;
	s0_error *e = NULL;
	s0__filelist *l = NULL;
	s0__fileinfo *fi = stat_path(ns, path, &e);
	int rc = 0;
	if (!fi) {
		s0__sh_errf(x, "ls: cannot access '%s': %s", arg, s0__sh_strerror(e));
		rc = 1;
	} else if (fi->type != S0_FILE_TYPE_DIR &&
	           (fi->type != S0_FILE_TYPE_SYMLINK ||
	            s0__files_list(ns, path, strlen(path), &l, NULL) < 0)) {
		ls_entry(x, fi, arg, lng);
	} else if (!l && s0__files_list(ns, path, strlen(path), &l, &e) < 0) {
		s0__sh_errf(x, "ls: cannot open directory '%s': %s", arg, s0__sh_strerror(e));
		rc = 1;
	}
	if (l) {
		if (header)
			s0__sh_printf(x, 1, "%s:\n", arg);
		for (size_t i = 0; i < l->len; i++)
			if (all || l->items[i].name[0] != '.')
				ls_entry(x, &l->items[i], l->items[i].name, lng);
	}
	s0_error_free(e);
	s0__filelist_free(l);
	s0__fileinfo_free(fi);
	free(path);
	return rc;
}

static int bi_ls(sh_cmdctx *x, int argc, char **argv)
{
	bool seen[2] = {0};
	int bad, i = opts(argc, argv, "al", seen, &bad);
	if (bad) {
		s0__sh_errf(x, "ls: invalid option -- '%c'", bad);
		return 2;
	}
	const struct s0__files_ns *ns = s0__sh_ns(x, "ls");
	if (!ns)
		return 1;
	if (i == argc)
		return ls_one(x, ns, ".", seen[0], seen[1], false);
	int rc = 0;
	for (int j = i; j < argc; j++)
		rc |= ls_one(x, ns, argv[j], seen[0], seen[1], argc - i > 1);
	return rc;
}

/* ---- mkdir, rm, touch, chmod ---- */

typedef int (*path_op)(sh_cmdctx *x, const struct s0__files_ns *ns, const char *arg,
                       const char *path, const bool *seen);

static int each_path(sh_cmdctx *x, int argc, char **argv, const char *who, const char *allowed,
                     path_op op)
{
	bool seen[4] = {0};
	int bad, i = opts(argc, argv, allowed, seen, &bad);
	if (bad || i == argc) {
		if (bad)
			s0__sh_errf(x, "%s: invalid option -- '%c'", who, bad);
		else
			s0__sh_errf(x, "%s: missing operand", who);
		return bad ? 2 : 1;
	}
	const struct s0__files_ns *ns = s0__sh_ns(x, who);
	if (!ns)
		return 1;
	int rc = 0;
	for (; i < argc; i++) {
		char *path = s0__sh_path(x, who, argv[i]);
		rc |= path ? op(x, ns, argv[i], path, seen) : 1;
		free(path);
	}
	return rc;
}

static int op_mkdir(sh_cmdctx *x, const struct s0__files_ns *ns, const char *arg,
                    const char *path, const bool *seen)
{
	s0_error *e = NULL;
	if (s0__files_mkdir(ns, path, strlen(path), seen[0], &e) == S0_OK)
		return 0;
	s0__sh_errf(x, "mkdir: cannot create directory '%s': %s", arg, s0__sh_strerror(e));
	s0_error_free(e);
	return 1;
}

static int bi_mkdir(sh_cmdctx *x, int argc, char **argv)
{
	return each_path(x, argc, argv, "mkdir", "p", op_mkdir);
}

static int op_rm(sh_cmdctx *x, const struct s0__files_ns *ns, const char *arg, const char *path,
                 const bool *seen)
{
	s0_error *e = NULL;
	s0__fileinfo *fi = stat_path(ns, path, &e);
	int rc = 0;
	if (!fi) {
		if (!seen[1] || s0_error_code(e) != S0_ENOTFOUND) {
			s0__sh_errf(x, "rm: cannot remove '%s': %s", arg, s0__sh_strerror(e));
			rc = 1;
		}
	} else if (fi->type == S0_FILE_TYPE_DIR && !seen[0] && !seen[2]) {
		s0__sh_errf(x, "rm: cannot remove '%s': Is a directory", arg);
		rc = 1;
	} else if (s0__files_delete(ns, path, strlen(path), &e) < 0) {
		s0__sh_errf(x, "rm: cannot remove '%s': %s", arg, s0__sh_strerror(e));
		rc = 1;
	}
	s0_error_free(e);
	s0__fileinfo_free(fi);
	return rc;
}

static int bi_rm(sh_cmdctx *x, int argc, char **argv)
{
	return each_path(x, argc, argv, "rm", "rfR", op_rm);
}

static int op_touch(sh_cmdctx *x, const struct s0__files_ns *ns, const char *arg,
                    const char *path, const bool *seen)
{
	(void)seen;
	void *d = NULL;
	size_t n = 0;
	s0_error *e = NULL;
	int rc = s0__files_read(ns, path, strlen(path), 0, -1, &d, &n, &e);
	if (rc < 0 && s0_error_code(e) == S0_ECONFLICT && !strcmp(s0_error_reason(e), "path_not_file"))
		rc = 0, n = 0; /* a directory: nothing to do */
	else if (rc == S0_OK || s0_error_code(e) == S0_ENOTFOUND) {
		s0_error_free(e);
		e = NULL;
		rc = s0__files_write(ns, path, strlen(path), d ? d : "", n, &e);
	}
	if (rc < 0)
		s0__sh_errf(x, "touch: cannot touch '%s': %s", arg, s0__sh_strerror(e));
	s0_error_free(e);
	free(d);
	return rc < 0;
}

static int bi_touch(sh_cmdctx *x, int argc, char **argv)
{
	return each_path(x, argc, argv, "touch", "", op_touch);
}

static int bi_chmod(sh_cmdctx *x, int argc, char **argv)
{
	char *end;
	unsigned long mode = argc > 2 ? strtoul(argv[1], &end, 8) : 0;
	if (argc < 3 || *end || !argv[1][0] || mode > 07777) {
		s0__sh_errf(x, argc < 3 ? "chmod: missing operand" : "chmod: invalid mode: '%s'",
		            argc < 3 ? "" : argv[1]);
		return 1;
	}
	const struct s0__files_ns *ns = s0__sh_ns(x, "chmod");
	if (!ns)
		return 1;
	int rc = 0;
	for (int i = 2; i < argc; i++) {
		char *path = s0__sh_path(x, "chmod", argv[i]);
		s0_error *e = NULL;
		if (path && s0__files_chmod(ns, path, strlen(path), (uint32_t)mode, &e) < 0) {
			s0__sh_errf(x, "chmod: cannot access '%s': %s", argv[i], s0__sh_strerror(e));
			s0_error_free(e);
			rc = 1;
		}
		rc |= !path;
		free(path);
	}
	return rc;
}

/* ---- cd, pwd ---- */

static int bi_cd(sh_cmdctx *x, int argc, char **argv)
{
	const char *home = s0__vars_get(&x->r->p->vars, "HOME");
	const char *arg = argc > 1 ? argv[1] : home && *home ? home : "/";
	const struct s0__files_ns *ns = s0__sh_ns(x, "cd");
	char *path = ns ? s0__sh_path(x, "cd", arg) : NULL;
	if (!path)
		return 1;
	s0_error *e = NULL;
	s0__filelist *l = NULL;
	s0__fileinfo *fi = stat_path(ns, path, &e);
	bool dir = fi && (fi->type == S0_FILE_TYPE_DIR ||
	                  (fi->type == S0_FILE_TYPE_SYMLINK &&
	                   s0__files_list(ns, path, strlen(path), &l, NULL) == S0_OK));
	s0__filelist_free(l);
	if (!dir) {
		s0__sh_errf(x, "cd: %s: %s", arg, fi ? "Not a directory" : s0__sh_strerror(e));
		s0_error_free(e);
		s0__fileinfo_free(fi);
		free(path);
		return 1;
	}
	s0__fileinfo_free(fi);
	free(x->r->p->cwd);
	x->r->p->cwd = path;
	if (s0__vars_set(&x->r->p->vars, "PWD", path, S0__VAR_KEEP) < 0)
		x->oom = true;
	return 0;
}

static int bi_pwd(sh_cmdctx *x, int argc, char **argv)
{
	(void)argc, (void)argv;
	s0__sh_printf(x, 1, "%s\n", x->r->p->cwd ? x->r->p->cwd : "/");
	return 0;
}

const sh_bi *s0__bi_files(size_t *n)
{
	static const sh_bi t[] = {{"ls", bi_ls},       {"mkdir", bi_mkdir}, {"rm", bi_rm},
	                          {"touch", bi_touch}, {"chmod", bi_chmod}, {"cd", bi_cd},
	                          {"pwd", bi_pwd}};
	*n = sizeof t / sizeof t[0];
	return t;
}
