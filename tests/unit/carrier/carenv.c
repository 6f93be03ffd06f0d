/* The carrier tests' store and template (carenv.h). */
#include "carenv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "local/rootfs/template.h"
#include "objenv.h"

void carenv_fill(void *buf, size_t len, uint64_t seed)
{
	static const char *words[] = {"carrier ", "loop ", "fuse ", "ext4 ", "branch ",
	                              "chunk ", "mount ", "sync "};
	uint8_t *p = buf;
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 77;
	size_t i = 0;
	while (i < len) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		const char *w = words[x % 8];
		for (size_t j = 0; w[j] && i < len; j++)
			p[i++] = (uint8_t)w[j];
	}
}

static int put(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, data, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

static int make_src(const char *src)
{
	char p[4200];
	const char *dirs[] = {"", "/etc", "/bin", "/usr", "/usr/share", "/usr/share/doc"};
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		snprintf(p, sizeof p, "%s%s", src, dirs[i]);
		if (mkdir(p, 0755) != 0 && errno != EEXIST)
			return -1;
	}
	snprintf(p, sizeof p, "%s/etc/hostname", src);
	if (put(p, CARENV_HOSTNAME, strlen(CARENV_HOSTNAME)) != 0)
		return -1;
	char *doc = malloc(CARENV_DOC_BYTES);
	if (!doc)
		return -1;
	carenv_fill(doc, CARENV_DOC_BYTES, 1);
	snprintf(p, sizeof p, "%s/usr/share/doc/carrier.txt", src);
	int rc = put(p, doc, CARENV_DOC_BYTES);
	free(doc);
	return rc;
}

int carenv_open(carenv *e, const char *dir, uint64_t size, s0_error **err)
{
	memset(e, 0, sizeof *e);
	e->size = size;
	e->dir = strdup(dir);
	char objdir[4096], src[4000];
	snprintf(objdir, sizeof objdir, "%s/objects", dir);
	snprintf(src, sizeof src, "%s/src", dir);
	mkdir(dir, 0700);
	if (!e->dir || make_src(src) != 0)
		return s0__error_set(err, S0_EIO, NULL, "carenv: cannot make %s", src);
	uint8_t key[32];
	memset(key, 0x3c, sizeof key);
	int rc = objenv_open(objdir, key, &e->os, err);
	if (rc != S0_OK)
		return rc;
	s0__bstore_options bo = {0};
	bo.scratch_dir = dir;
	rc = s0__bstore_open(e->os, &bo, &e->bs, err);
	if (rc != S0_OK)
		return rc;
	s0__genid empty;
	rc = s0__bstore_create(e->bs, size, &empty, err);
	if (rc != S0_OK)
		return rc;
	s0__branch *b = NULL;
	rc = s0__bstore_attach(e->bs, &empty, &b, err);
	s0__bstore_unref(e->bs, &empty);
	if (rc != S0_OK)
		return rc;
	s0__blockdev dev;
	s0__branch_blockdev(b, &dev);
	s0__rootfs_image_opts io = {0};
	io.source_dir = src;
	io.size_bytes = size;
	io.uuid = "0b5e55ed-0000-4000-8000-00000000ca77";
	io.fake_time_unix = 1700000000;
	rc = s0__rootfs_template_build(&io, dir, &dev, NULL, err);
	if (rc == S0_OK)
		rc = s0__branch_publish(b, 0, &e->gen, err);
	s0__branch_free(b);
	return rc;
}

void carenv_close(carenv *e)
{
	if (e->bs) {
		s0__bstore_unref(e->bs, &e->gen);
		s0__bstore_close(e->bs);
	}
	s0__objstore_free(e->os);
	free(e->dir);
	memset(e, 0, sizeof *e);
}

int carenv_branch(carenv *e, s0__branch **out, s0_error **err)
{
	return s0__bstore_attach(e->bs, &e->gen, out, err);
}

int carenv_run(const char *const argv[], char **out)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	ssize_t n;
	while (buf && (n = read(p[0], buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 2) {
			char *nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	close(p[0]);
	if (buf)
		buf[len] = 0;
	int st;
	if (waitpid(pid, &st, 0) != pid) {
		free(buf);
		return -1;
	}
	if (out)
		*out = buf;
	else
		free(buf);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
