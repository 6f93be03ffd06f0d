/* Template images: build from a directory or empty, and the fixed layout. */
#include "local/rootfs/template.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "local/rootfs/files.h"
#include "local/rootfs/rfs_mkfs.h"

/* Directories every template has; `empty` ones are runtime-only mounts. */
static const struct {
	const char *path;
	uint32_t mode;
	bool empty;
} layout[] = {
	{"/workspace", 0755, false}, {"/var/tmp", 01777, false}, {"/tmp", 01777, true},
	{"/proc", 0555, true},       {"/dev", 0755, true},       {"/sys", 0555, true},
};

/* Make @p path a directory of @p mode; with @p empty, an empty one. */
static int ensure_dir(s0__rootfs *fs, const char *path, uint32_t mode, bool empty,
                      s0_error **err)
{
	size_t n = strlen(path);
	int rc = S0_OK;
	if (empty)
		rc = s0__rootfs_delete(fs, path, n, NULL, err);
	if (rc == S0_OK) {
		s0_error *e = NULL;
		rc = s0__rootfs_mkdir(fs, path, n, true, NULL, &e);
		if (rc == S0_ECONFLICT) { /* a non-directory is in the way */
			s0_error_free(e);
			e = NULL;
			rc = s0__rootfs_delete(fs, path, n, NULL, &e);
			if (rc == S0_OK)
				rc = s0__rootfs_mkdir(fs, path, n, true, NULL, &e);
		}
		if (rc < 0)
			s0__error_put(err, e);
	}
	if (rc == S0_OK && empty)
		rc = s0__rootfs_chmod(fs, path, n, mode, NULL, err);
	return rc;
}

int s0__rootfs_layout_ensure(s0__rootfs *fs, const char *const *eph, size_t n_eph,
                             s0_error **err)
{
	int rc = S0_OK;
	for (size_t i = 0; rc == S0_OK && i < sizeof layout / sizeof layout[0]; i++) {
		bool fresh = false;
		s0__fileinfo *fi = NULL;
		if (!layout[i].empty) {
			s0_error *e = NULL;
			fresh = s0__rootfs_stat(fs, layout[i].path, strlen(layout[i].path), NULL, &fi, &e) < 0;
			s0_error_free(e);
			s0__fileinfo_free(fi);
		}
		rc = ensure_dir(fs, layout[i].path, layout[i].mode, layout[i].empty, err);
		if (rc == S0_OK && fresh)
			rc = s0__rootfs_chmod(fs, layout[i].path, strlen(layout[i].path), layout[i].mode,
			                      NULL, err);
	}
	for (size_t i = 0; rc == S0_OK && i < n_eph; i++) {
		char *p = NULL;
		rc = s0__path_normalize(eph[i], strlen(eph[i]), 0, &p, err);
		if (rc == S0_OK && !strcmp(p, "/"))
			rc = s0__error_set(err, S0_EINVAL, S0__R_INVALID, "ephemeral mount cannot be /");
		if (rc == S0_OK)
			rc = ensure_dir(fs, p, 0777, true, err);
		free(p);
	}
	return rc;
}

static int check_opts(const s0__rootfs_image_opts *o, s0_error **err)
{
	if (!o || o->size_bytes < S0__ROOTFS_MIN_BYTES || o->size_bytes % S0__ROOTFS_BLOCK_BYTES)
		return s0__error_set(err, S0_EINVAL, S0__R_INVALID,
		                     "image size must be a multiple of 4096 and at least %llu bytes",
		                     (unsigned long long)S0__ROOTFS_MIN_BYTES);
	struct stat st;
	if (o->source_dir && (stat(o->source_dir, &st) < 0 || !S_ISDIR(st.st_mode)))
		return s0__error_set(err, S0_ENOTFOUND, S0__R_DIR_NOT_FOUND,
		                     "template source is not a directory: %s", o->source_dir);
	return S0_OK;
}

/* Open the fresh image and give it the layout. */
static int finish_image(const s0__rootfs_image_opts *o, const char *image, s0_error **err)
{
	s0__blockdev dev;
	int rc = s0__filedev_open(image, false, &dev, err);
	if (rc < 0)
		return rc;
	s0__rootfs *fs = NULL;
	rc = s0__rootfs_open(&dev, 0, &fs, err);
	if (rc == S0_OK && o->fake_time_unix)
		s0__rootfs_set_fixed_time(fs, o->fake_time_unix);
	if (rc == S0_OK)
		rc = s0__rootfs_layout_ensure(fs, o->ephemeral_mounts, o->n_ephemeral_mounts, err);
	if (fs) {
		int rc2 = s0__rootfs_close(fs, rc == S0_OK ? err : NULL);
		if (rc == S0_OK)
			rc = rc2;
	}
	s0__filedev_close(&dev);
	return rc;
}

int s0__rootfs_image_build(const s0__rootfs_image_opts *o, const char *image, s0_error **err)
{
	int rc = check_opts(o, err);
	if (rc < 0)
		return rc;
	int fd = open(image, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)o->size_bytes) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return s0__error_set(err, S0_EIO, "io_error", "create %s: %s", image, strerror(e));
	}
	close(fd);
	rc = s0__rfs_run_mke2fs(o, image, err);
	if (rc == S0_OK)
		rc = finish_image(o, image, err);
	/* An image with content from outside is checked before anything
	 * imports it, so the kernel's ext4 never mounts metadata e2fsck
	 * rejects (docs/security.md SEC-74). */
	if (rc == S0_OK && o->source_dir)
		rc = s0__rfs_run_e2fsck(image, err);
	return rc;
}

int s0__rootfs_template_build(const s0__rootfs_image_opts *o, const char *tmp_dir,
                              const s0__blockdev *dev, s0__image_stats *stats, s0_error **err)
{
	const char *base = tmp_dir ? tmp_dir : getenv("TMPDIR");
	char *path = s0__asprintf("%s/s0-template-XXXXXX", base && *base ? base : "/tmp");
	if (!path)
		return s0__error_nomem(err);
	int fd = mkstemp(path);
	if (fd < 0) {
		int e = errno;
		free(path);
		return s0__error_set(err, S0_EIO, "io_error", "temporary image: %s", strerror(e));
	}
	close(fd);
	int rc = s0__rootfs_image_build(o, path, err);
	if (rc == S0_OK)
		rc = s0__rootfs_image_import(path, dev, stats, err);
	unlink(path);
	free(path);
	return rc;
}
