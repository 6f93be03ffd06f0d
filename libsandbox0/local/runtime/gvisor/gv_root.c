/*
 * Root trees of the gvisor driver (gv_int.h), until the carrier mounts a
 * sandbox's RootFS branch (docs/local-backend.md "Runtime gvisor"): a
 * plain directory per sandbox under <dir>/roots, copied on its first start
 * from a template tree — $S0_GVISOR_TEMPLATE when set, else a busybox tree
 * made once from the static /bin/busybox (busybox-static) with a link per
 * applet. The tree of a sandbox outlives its generations on this node.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "local/runtime/gvisor/gv_int.h"

#define BUSYBOX "/bin/busybox"

static int io_fail(s0_error **err, const char *what, const char *path)
{
	return s0__error_set(err, S0_EIO, "runtime_unavailable", "%s %s: %s", what, path,
	                     strerror(errno));
}

static int mkdirs(char *path)
{
	for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		int r = mkdir(path, 0755);
		*s = '/';
		if (r < 0 && errno != EEXIST)
			return -1;
	}
	return mkdir(path, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

static int write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return -1;
	size_t n = strlen(text);
	int rc = write(fd, text, n) == (ssize_t)n ? 0 : -1;
	return close(fd) < 0 ? -1 : rc;
}

int s0__gv_busybox_tree(const char *dir, s0_error **err)
{
	if (access(BUSYBOX, X_OK) < 0)
		return s0__error_set(err, S0_EUNAVAILABLE, "runtime_unavailable",
		                     "no template tree: %s is missing (install busybox-static)",
		                     BUSYBOX);
	char *tmp = s0__asprintf("%s.tmp.%d", dir, (int)getpid());
	if (!tmp)
		return s0__error_nomem(err);
	char *const cp_argv[] = {"/bin/rm", "-rf", tmp, NULL};
	s0__gv_result res;
	s0__gv_run(cp_argv, NULL, 0, 30000, &res, NULL);
	s0__gv_result_clear(&res);
	int rc = S0_OK;
	static const char *const dirs[] = {"bin", "sbin", "usr/bin", "usr/sbin", "etc", "root",
	                                   "tmp", "proc", "dev", "sys", "var/tmp", "home", "workspace",
	                                   NULL};
	for (size_t i = 0; rc == S0_OK && dirs[i]; i++) {
		char *p = s0__asprintf("%s/%s", tmp, dirs[i]);
		if (!p || mkdirs(p) < 0)
			rc = p ? io_fail(err, "cannot make", p) : s0__error_nomem(err);
		free(p);
	}
	char *bb = s0__asprintf("%s/bin/busybox", tmp);
	char *const copy[] = {"/bin/cp", BUSYBOX, bb, NULL};
	if (rc == S0_OK && (rc = s0__gv_run(copy, NULL, 0, 30000, &res, err)) == S0_OK &&
	    res.status != 0)
		rc = s0__error_set(err, S0_EIO, "runtime_unavailable", "cannot copy %s: %s",
		                   BUSYBOX, res.err.data);
	s0__gv_result_clear(&res);
	char *const list[] = {BUSYBOX, "--list-full", NULL};
	if (rc == S0_OK && (rc = s0__gv_run(list, NULL, 0, 30000, &res, err)) == S0_OK) {
		char *save = NULL;
		for (char *l = strtok_r(res.out.data, "\n", &save); l && rc == S0_OK;
		     l = strtok_r(NULL, "\n", &save)) {
			if (!*l || strstr(l, "..") || !strcmp(l, "bin/busybox"))
				continue;
			int depth = 0;
			for (const char *c = l; *c; c++)
				depth += *c == '/';
			char target[64] = "";
			for (int d = 0; d < depth; d++)
				strcat(target, "../");
			strcat(target, "bin/busybox");
			char *p = s0__asprintf("%s/%s", tmp, l);
			if (!p || (symlink(target, p) < 0 && errno != EEXIST))
				rc = p ? io_fail(err, "cannot link", p) : s0__error_nomem(err);
			free(p);
		}
	}
	s0__gv_result_clear(&res);
	char *passwd = s0__asprintf("%s/etc/passwd", tmp), *group = s0__asprintf("%s/etc/group", tmp);
	if (rc == S0_OK && (!passwd || !group ||
	                    write_file(passwd, "root:x:0:0:root:/root:/bin/sh\n", 0644) < 0 ||
	                    write_file(group, "root:x:0:\n", 0644) < 0))
		rc = io_fail(err, "cannot write", passwd ? passwd : "etc/passwd");
	if (rc == S0_OK && rename(tmp, dir) < 0 && errno != ENOTEMPTY && errno != EEXIST)
		rc = io_fail(err, "cannot rename", tmp);
	char *const clean[] = {"/bin/rm", "-rf", tmp, NULL};
	s0__gv_run(clean, NULL, 0, 30000, &res, NULL); /* nothing left after a lost race */
	s0__gv_result_clear(&res);
	free(passwd);
	free(group);
	free(bb);
	free(tmp);
	return rc;
}

int s0__gv_root_attach(s0__rt_host *h, const char *sandbox_id, char **out, s0_error **err)
{
	char *root = s0__asprintf("%s/roots/%s", h->dir, sandbox_id);
	if (!root)
		return s0__error_nomem(err);
	struct stat st;
	if (stat(root, &st) == 0 && S_ISDIR(st.st_mode)) {
		*out = root;
		return S0_OK;
	}
	int rc = S0_OK;
	const char *tpl_env = getenv("S0_GVISOR_TEMPLATE");
	char *tpl = tpl_env && *tpl_env ? s0__strdup(tpl_env) : s0__asprintf("%s/template", h->dir);
	char *roots = s0__asprintf("%s/roots", h->dir);
	char *tmp = s0__asprintf("%s.tmp", root);
	if (!tpl || !roots || !tmp)
		rc = s0__error_nomem(err);
	if (rc == S0_OK && mkdir(roots, 0700) < 0 && errno != EEXIST)
		rc = io_fail(err, "cannot make", roots);
	if (rc == S0_OK && !(tpl_env && *tpl_env) && stat(tpl, &st) < 0)
		rc = s0__gv_busybox_tree(tpl, err);
	s0__gv_result res = {0};
	if (rc == S0_OK) {
		char *const rm[] = {"/bin/rm", "-rf", tmp, NULL};
		s0__gv_run(rm, NULL, 0, 60000, &res, NULL);
		s0__gv_result_clear(&res);
		char *const cp[] = {"/bin/cp", "-a", tpl, tmp, NULL};
		rc = s0__gv_run(cp, NULL, 0, 600000, &res, err);
		if (rc == S0_OK && res.status != 0)
			rc = s0__error_set(err, S0_EIO, "runtime_unavailable",
			                   "cannot copy the template %s: %s", tpl, res.err.data);
		s0__gv_result_clear(&res);
	}
	if (rc == S0_OK && rename(tmp, root) < 0)
		rc = io_fail(err, "cannot rename", tmp);
	free(tpl);
	free(roots);
	free(tmp);
	if (rc < 0) {
		free(root);
		return rc;
	}
	*out = root;
	return S0_OK;
}

int s0__gv_root_sync(const char *root, s0_error **err)
{
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || syncfs(fd) < 0) {
		int rc = io_fail(err, "cannot sync", root);
		if (fd >= 0)
			close(fd);
		return rc;
	}
	close(fd);
	return S0_OK;
}
