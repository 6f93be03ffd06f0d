/* The backend under test (objenv.h). */
#include "objenv.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "local/objects/backends.h"
#include "local/objects/files/objfiles.h"
#include "local/objects/pack/objdir.h"
#include "local/objects/s3/objs3.h"
#include "local/objects/s3/s3cache.h"

const char *objenv_backend(void)
{
	const char *b = getenv("S0_TEST_OBJECT_STORE");
	return b && *b ? b : "pack";
}

bool objenv_is(const char *name)
{
	return !strcmp(objenv_backend(), name);
}

const char *objenv_name(const char *base)
{
	static char names[16][64];
	static int next;
	char *out = names[next++ % 16];
	snprintf(out, sizeof names[0], "%s-%s", base, objenv_backend());
	return out;
}

char *objenv_s3_url(const char *dir)
{
	const char *base = getenv("S0_TEST_S3_URL");
	if (!base || !*base)
		return NULL;
	const char *q = strchr(base, '?');
	const char *slash = strrchr(dir, '/');
	const char *leaf = slash ? slash + 1 : dir;
	/* the parent's leaf too: local data dirs end in ".../<unique>/objects" */
	char parent[256] = "";
	if (slash && slash > dir) {
		const char *p = slash - 1;
		while (p > dir && *p != '/')
			p--;
		snprintf(parent, sizeof parent, "%.*s-", (int)(slash - p - (*p == '/')),
		         p + (*p == '/'));
	}
	if (!q)
		return s0__asprintf("%s/%s%s", base, parent, leaf);
	return s0__asprintf("%.*s/%s%s%s", (int)(q - base), base, parent, leaf, q);
}

int objenv_open(const char *dir, const uint8_t *key, s0__objstore **out, s0_error **err)
{
	if (!objenv_is("s3"))
		return s0__objstore_open_backend(objenv_backend(), dir, key, NULL, out, err);
	char *url = objenv_s3_url(dir);
	if (!url)
		return s0__error_set(err, S0_EINVAL, "test_setup",
		                     "S0_TEST_OBJECT_STORE=s3 needs S0_TEST_S3_URL (scripts/test s3)");
	int rc = s0__objstore_open_backend(url, dir, key, NULL, out, err);
	free(url);
	return rc;
}

int objenv_locate(s0__objstore *os, const s0__objid *id, char **path, uint64_t *off,
                  uint64_t *len, s0_error **err)
{
	void *be = s0__objstore_backend(os);
	if (objenv_is("pack"))
		return s0__objdir_locate(be, id, path, off, len, err);
	int rc = objenv_is("s3") ? s0__objs3_cache_path(be, id, path, err)
	                         : s0__objfiles_path(be, id, path, err);
	struct stat st;
	if (rc == S0_OK && stat(*path, &st) < 0) {
		free(*path);
		return s0__error_set(err, S0_ENOTFOUND, "object_missing", "no object file");
	}
	if (rc == S0_OK) {
		*off = 0;
		*len = (uint64_t)st.st_size;
	}
	return rc;
}

/* Bytes of the regular files directly in path. */
static uint64_t dir_bytes(const char *path)
{
	DIR *d = opendir(path);
	uint64_t total = 0;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		struct stat st;
		if (e->d_name[0] != '.' && fstatat(dirfd(d), e->d_name, &st, 0) == 0 &&
		    S_ISREG(st.st_mode))
			total += (uint64_t)st.st_size;
	}
	if (d)
		closedir(d);
	return total;
}

uint64_t objenv_data_bytes(const char *dir)
{
	char p[4096];
	if (objenv_is("s3"))
		return UINT64_MAX; /* the bucket's listing is the accounting itself */
	if (objenv_is("pack")) {
		snprintf(p, sizeof p, "%s/packs", dir);
		return dir_bytes(p);
	}
	snprintf(p, sizeof p, "%s/tmp", dir);
	uint64_t total = dir_bytes(p);
	for (int i = 0; i < 256; i++) {
		snprintf(p, sizeof p, "%s/%02x", dir, i);
		total += dir_bytes(p);
	}
	return total;
}
