/* Helpers of the carrier suites (cartest.h). */
#include "cartest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "local/rootfs/files.h"
#include "local/rootfs/rootfs.h"
#include "local/rootfs/template.h"
#include "local/runtime/carrier/carrier_int.h"

char *ct_root;

void ct_open(ct *t, uint64_t size)
{
	memset(t, 0, sizeof *t);
	ck_assert_int_ge(asprintf(&t->dir, "%s/t.XXXXXX", ct_root), 0);
	ck_assert_ptr_nonnull(mkdtemp(t->dir));
	ck_assert_int_ge(asprintf(&t->state, "%s/state", t->dir), 0);
	char envdir[PATH_MAX];
	snprintf(envdir, sizeof envdir, "%s/store", t->dir);
	CT_OK(carenv_open(&t->env, envdir, size, &err_));
}

void ct_close(ct *t)
{
	carenv_close(&t->env);
	free(t->dir);
	free(t->state);
}

s0__carrier *ct_attach(ct *t, s0__branch *b, const char *id)
{
	s0__blockdev dev;
	s0__branch_blockdev(b, &dev);
	s0__carrier_opts o = {.dev = &dev, .state_dir = t->state, .id = id};
	s0__carrier *c = NULL;
	CT_OK(s0__carrier_attach(&o, &c, &err_));
	return c;
}

char *ct_path(const s0__carrier *c, const char *rel)
{
	char *p = NULL;
	ck_assert_int_ge(asprintf(&p, "%s%s", s0__carrier_host_root(c), rel), 0);
	return p;
}

void ct_put(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	ck_assert_int_eq(close(fd), 0);
}

char *ct_get(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	fstat(fd, &st);
	char *buf = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	ssize_t n;
	while (buf && got < (size_t)st.st_size &&
	       (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	int e = errno;
	close(fd);
	if (!buf || got != (size_t)st.st_size) {
		free(buf);
		errno = e;
		return NULL;
	}
	buf[got] = 0;
	if (len)
		*len = got;
	return buf;
}

int ct_fsck(ct *t, const s0__genid *gen)
{
	s0__branch *b = NULL;
	s0_error *err = NULL;
	ck_assert_int_eq(s0__bstore_attach(t->env.bs, gen, &b, &err), S0_OK);
	s0__blockdev dev;
	s0__branch_blockdev(b, &dev);
	char img[PATH_MAX];
	snprintf(img, sizeof img, "%s/fsck.img", t->dir);
	ck_assert_int_eq(s0__rootfs_image_export(&dev, img, NULL, &err), S0_OK);
	s0__branch_free(b);
	const char *argv[] = {"/sbin/e2fsck", "-fn", img, NULL};
	char *out = NULL;
	int st = carenv_run(argv, &out);
	if (st != 0)
		fprintf(stderr, "e2fsck -fn: %d\n%s\n", st, out ? out : "");
	free(out);
	unlink(img);
	return st;
}

char *ct_rootfs_read(s0__branch *b, const char *path, size_t *len)
{
	s0__blockdev dev;
	s0__branch_blockdev(b, &dev);
	s0__rootfs *fs = NULL;
	CT_OK(s0__rootfs_open(&dev, S0__ROOTFS_RDONLY, &fs, &err_));
	void *data = NULL;
	size_t n = 0;
	s0_error *err = NULL;
	int rc = s0__rootfs_read(fs, path, strlen(path), 0, -1, NULL, &data, &n, &err);
	s0_error_free(err);
	s0__rootfs_close(fs, NULL);
	if (rc != S0_OK)
		return NULL;
	if (len)
		*len = n;
	return data;
}

static bool mentions(const char *file, const char *a, const char *b)
{
	FILE *f = fopen(file, "re");
	if (!f)
		return false;
	char *line = NULL;
	size_t cap = 0;
	bool hit = false;
	while (!hit && getline(&line, &cap, f) > 0)
		hit = strstr(line, a) || strstr(line, b);
	free(line);
	fclose(f);
	return hit;
}

int ct_leftovers(const char *state, char *what, size_t what_len)
{
	char real[PATH_MAX], prefix[S0__CARRIER_TAG_MAX];
	if (!realpath(state, real))
		snprintf(real, sizeof real, "%s", state);
	s0__carrier_state_tag(real, prefix, sizeof prefix);
	int n = 0;
	what[0] = 0;
	DIR *d = opendir("/sys/block");
	struct dirent *de;
	while (d && (de = readdir(d))) {
		int idx;
		char tag[S0__CARRIER_TAG_MAX], tail;
		if (sscanf(de->d_name, "loop%d%c", &idx, &tail) == 1 && s0__loop_tag(idx, tag, sizeof tag) &&
		    strncmp(tag, prefix, strlen(prefix)) == 0) {
			n++;
			snprintf(what + strlen(what), what_len - strlen(what), " loop%d", idx);
		}
	}
	if (d)
		closedir(d);
	d = opendir("/proc");
	while (d && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		char p[300];
		snprintf(p, sizeof p, "/proc/%s/mountinfo", de->d_name);
		if (mentions(p, prefix, real)) {
			n++;
			snprintf(what + strlen(what), what_len - strlen(what), " mounts-of-pid-%s", de->d_name);
		}
	}
	if (d)
		closedir(d);
	const char *argv[] = {"/sbin/losetup", "-a", NULL};
	char *out = NULL;
	if (carenv_run(argv, &out) == 0 && out && strstr(out, real)) {
		n++;
		snprintf(what + strlen(what), what_len - strlen(what), " losetup-a");
	}
	free(out);
	return n;
}

int ct_sweep(const char *root, char *what, size_t what_len)
{
	DIR *d = opendir(root);
	struct dirent *de;
	int n = 0;
	what[0] = 0;
	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, "t.", 2) != 0)
			continue;
		char state[PATH_MAX];
		snprintf(state, sizeof state, "%s/%s/state", root, de->d_name);
		s0_error *err = NULL;
		if (s0__carrier_reclaim(state, &err) != S0_OK) {
			fprintf(stderr, "reclaim %s: %s\n", state, s0_error_message(err));
			s0_error_free(err);
		}
		size_t used = strlen(what);
		n += ct_leftovers(state, what + used, what_len - used);
	}
	if (d)
		closedir(d);
	return n;
}
