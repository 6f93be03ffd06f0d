/* Load-or-create of the installation key file. */
#include "local/objects/objkey.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int read_key(const char *path, uint8_t key[S0__OBJKEY_BYTES], s0_error **err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? S0_ENOTFOUND
		                       : s0__error_set(err, S0_EIO, "key_io", "open %s: %s", path,
		                                       strerror(errno));
	struct stat st;
	uint8_t buf[S0__OBJKEY_BYTES + 1];
	int rc = S0_OK;
	if (fstat(fd, &st) < 0) {
		rc = s0__error_set(err, S0_EIO, "key_io", "stat %s: %s", path, strerror(errno));
	} else if (st.st_mode & 077) {
		rc = s0__error_set(err, S0_EINVAL, "key_mode",
		                   "key file %s is accessible to group or others (mode %o)", path,
		                   (unsigned)(st.st_mode & 0777));
	} else {
		ssize_t n = pread(fd, buf, sizeof buf, 0);
		if (n < 0)
			rc = s0__error_set(err, S0_EIO, "key_io", "read %s: %s", path, strerror(errno));
		else if (n != S0__OBJKEY_BYTES)
			rc = s0__error_set(err, S0_ECORRUPT, "key_size",
			                   "key file %s has %zd bytes, expected %d", path, n,
			                   S0__OBJKEY_BYTES);
		else
			memcpy(key, buf, S0__OBJKEY_BYTES);
	}
	sodium_memzero(buf, sizeof buf);
	close(fd);
	return rc;
}

static int fsync_dir_of(const char *path)
{
	char *copy = s0__strdup(path);
	if (!copy)
		return -1;
	int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(copy);
	if (fd < 0)
		return -1;
	int rc = fsync(fd);
	close(fd);
	return rc;
}

/* Write a new key to a temp file and link it at path; EEXIST if we lost. */
static int create_key(const char *path, uint8_t key[S0__OBJKEY_BYTES], s0_error **err)
{
	char *tmp = s0__asprintf("%s.tmp.%ld", path, (long)getpid());
	if (!tmp)
		return s0__error_nomem(err);
	uint8_t k[S0__OBJKEY_BYTES];
	randombytes_buf(k, sizeof k);
	int rc = S0_OK;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, k, sizeof k) != (ssize_t)sizeof k || fsync(fd) < 0) {
		rc = s0__error_set(err, S0_EIO, "key_io", "write %s: %s", tmp, strerror(errno));
	} else if (link(tmp, path) < 0) {
		rc = errno == EEXIST ? S0_ECONFLICT
		                     : s0__error_set(err, S0_EIO, "key_io", "link %s: %s", path,
		                                     strerror(errno));
	} else if (fsync_dir_of(path) < 0) {
		rc = s0__error_set(err, S0_EIO, "key_io", "fsync directory of %s: %s", path,
		                   strerror(errno));
	}
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
	if (rc == S0_OK)
		memcpy(key, k, sizeof k);
	sodium_memzero(k, sizeof k);
	return rc;
}

int s0__objkey_load_or_create(const char *path, uint8_t key[S0__OBJKEY_BYTES],
                              bool *created_out, s0_error **err)
{
	if (s0__global_ensure() < 0)
		return s0__error_set(err, S0_ERROR, "sodium_init", "libsodium failed to initialise");
	for (int attempt = 0; attempt < 2; attempt++) {
		int rc = read_key(path, key, err);
		if (rc != S0_ENOTFOUND) {
			if (rc == S0_OK && created_out)
				*created_out = false;
			return rc;
		}
		rc = create_key(path, key, err);
		if (rc != S0_ECONFLICT) {
			if (rc == S0_OK && created_out)
				*created_out = true;
			return rc;
		}
	}
	return s0__error_set(err, S0_EIO, "key_io", "key file %s keeps disappearing", path);
}
