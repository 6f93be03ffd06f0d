/* The table of object store backends and the recorded choice per directory. */
#include "local/objects/backends.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "local/objects/files/objfiles.h"
#include "local/objects/pack/objdir.h"
#include "local/objects/s3/objs3.h"
#include "local/objects/s3/s3conf.h"

static const s0__objbackend backends[] = {
	{"pack", s0__objdir_open, &s0__objdir_ops, s0__objdir_present, NULL, NULL},
	{"files", s0__objfiles_open, &s0__objfiles_ops, s0__objfiles_present, NULL, NULL},
	{"s3", NULL, &s0__objs3_ops, s0__objs3_present, S0__S3_SCHEME, s0__objs3_open_url},
};

#define N_BACKENDS (sizeof backends / sizeof *backends)

const s0__objbackend *s0__objbackend_find(const char *name)
{
	for (size_t i = 0; name && i < N_BACKENDS; i++)
		if (!strcmp(backends[i].name, name) ||
		    (backends[i].scheme &&
		     !strncmp(name, backends[i].scheme, strlen(backends[i].scheme))))
			return &backends[i];
	return NULL;
}

void s0__objbackend_names(char *out, size_t cap)
{
	size_t len = 0;
	out[0] = '\0';
	for (size_t i = 0; i < N_BACKENDS && len < cap; i++) {
		int n = snprintf(out + len, cap - len, "%s%s", i ? ", " : "", backends[i].name);
		len += n > 0 ? (size_t)n : 0;
	}
}

/* The recorded backend name of dir into out ("" when there is no record). */
static int read_record(const char *dir, char *out, size_t cap, s0_error **err)
{
	char *p = s0__asprintf("%s/backend", dir);
	if (!p)
		return s0__error_nomem(err);
	out[0] = '\0';
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	int rc = S0_OK;
	if (fd < 0) {
		if (errno != ENOENT)
			rc = s0__error_set(err, S0_EIO, "store_io", "open %s: %s", p, strerror(errno));
	} else {
		ssize_t n = read(fd, out, cap - 1);
		close(fd);
		if (n < 0)
			rc = s0__error_set(err, S0_EIO, "store_io", "read %s: %s", p, strerror(errno));
		else
			out[n] = '\0';
		out[strcspn(out, "\n")] = '\0';
	}
	free(p);
	return rc;
}

/* Record name in dir durably: temp file, fsync, rename, fsync dir. */
static int write_record(const char *dir, const char *name, s0_error **err)
{
	char *tmp = s0__asprintf("%s/backend.tmp", dir), *p = s0__asprintf("%s/backend", dir);
	int rc = tmp && p ? S0_OK : s0__error_nomem(err);
	int fd = rc == S0_OK ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
	char line[32];
	int len = snprintf(line, sizeof line, "%s\n", name);
	if (rc == S0_OK && (fd < 0 || write(fd, line, (size_t)len) != len || fsync(fd) < 0))
		rc = s0__error_set(err, S0_EIO, "store_io", "write %s: %s", tmp, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (rc == S0_OK && rename(tmp, p) < 0)
		rc = s0__error_set(err, S0_EIO, "store_io", "rename %s: %s", p, strerror(errno));
	int dfd = rc == S0_OK ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (rc == S0_OK && (dfd < 0 || fsync(dfd) < 0))
		rc = s0__error_set(err, S0_EIO, "store_io", "fsync %s: %s", dir, strerror(errno));
	if (dfd >= 0)
		close(dfd);
	free(tmp);
	free(p);
	return rc;
}

/* The backend dir holds without a record: the first whose probe says so. */
static const s0__objbackend *probe(const char *dir)
{
	for (size_t i = 0; i < N_BACKENDS; i++)
		if (backends[i].present && backends[i].present(dir))
			return &backends[i];
	return NULL;
}

/* The backend to open dir with (name as in s0__objstore_check_backend), and
 * whether dir records it already. */
static int choose(const char *name, const char *dir, const s0__objbackend **be_out,
                  bool *recorded, s0_error **err)
{
	const s0__objbackend *want = name ? s0__objbackend_find(name) : NULL;
	char known[128];
	s0__objbackend_names(known, sizeof known);
	if (name && !want)
		return s0__error_set(err, S0_EINVAL, "object_store_unknown",
		                     "unknown object store \"%s\" (known: %s)", name, known);
	char rec[32];
	int rc = read_record(dir, rec, sizeof rec, err);
	if (rc < 0)
		return rc;
	const s0__objbackend *have = rec[0] ? s0__objbackend_find(rec) : probe(dir);
	if (rec[0] && !have)
		return s0__error_set(err, S0_EINVAL, "object_store_unknown",
		                     "object store %s records the unknown backend \"%s\" (known: %s)",
		                     dir, rec, known);
	if (want && have && want != have)
		return s0__error_set(err, S0_EINVAL, "object_store_mismatch",
		                     "object store %s was created with the \"%s\" backend, not \"%s\" "
		                     "(a store keeps its backend)",
		                     dir, have->name, want->name);
	*be_out = have ? have : want ? want : s0__objbackend_find(S0__OBJBACKEND_DEFAULT);
	*recorded = rec[0] != '\0';
	if ((*be_out)->scheme && (!name || strncmp(name, (*be_out)->scheme, strlen((*be_out)->scheme))))
		return s0__error_set(err, S0_EINVAL, "object_store_url_needed",
		                     "object store %s is on the \"%s\" backend: name it by its URL "
		                     "(%sBUCKET?endpoint=…)",
		                     dir, (*be_out)->name, (*be_out)->scheme);
	return S0_OK;
}

int s0__objstore_check_backend(const char *name, const char *dir, s0_error **err)
{
	const s0__objbackend *be;
	bool recorded;
	return choose(name, dir, &be, &recorded, err);
}

int s0__objstore_open_backend(const char *name, const char *dir,
                              const uint8_t key[S0__OBJKEY_BYTES],
                              const s0__objstore_options *opts, s0__objstore **out,
                              s0_error **err)
{
	const s0__objbackend *be;
	bool recorded;
	int rc = choose(name, dir, &be, &recorded, err);
	if (rc < 0)
		return rc;
	void *ctx;
	rc = be->open_url ? be->open_url(name, dir, &ctx, err) : be->open(dir, &ctx, err);
	if (rc < 0)
		return rc;
	if (!recorded && (rc = write_record(dir, be->name, err)) < 0) {
		be->ops->close(ctx);
		return rc;
	}
	return s0__objstore_new(be->ops, ctx, key, opts, out, err);
}

int s0__objstore_open_dir(const char *dir, const uint8_t key[S0__OBJKEY_BYTES],
                          const s0__objstore_options *opts, s0__objstore **out, s0_error **err)
{
	return s0__objstore_open_backend(NULL, dir, key, opts, out, err);
}
