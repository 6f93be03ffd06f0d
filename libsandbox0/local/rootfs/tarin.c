/* Template sources from a tar stream, checked entry by entry (tarin.h). */
#include "local/rootfs/tarin.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PATH_MAX_BYTES 4096

typedef struct tx {
	struct archive *in, *out;
	const char *dest;
	char **links; /* normalised paths of the symbolic links extracted so far */
	size_t nlinks, caplinks;
	s0_error **err;
} tx;

static int refuse(tx *t, const char *name, const char *why)
{
	return s0__error_set(t->err, S0_EINVAL, "bad_template_tar",
	                     "template tar: entry \"%.200s\" refused: %s", name ? name : "", why);
}

static const char k_empty[] = "empty name";

/*
 * Normalise a member name into out: components split on '/', empty and "."
 * dropped. Refuses absolute names, ".." components and empty results.
 * Returns NULL (ok) or why it is refused.
 */
static const char *normalise(const char *name, char *out, size_t cap)
{
	if (!name || !*name)
		return k_empty;
	if (name[0] == '/')
		return "absolute path";
	size_t o = 0;
	const char *p = name;
	while (*p) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return "\"..\" component";
		if (n && !(n == 1 && p[0] == '.')) {
			if (o + n + 2 > cap)
				return "name too long";
			if (o)
				out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		p = slash ? slash + 1 : p + n;
	}
	out[o] = 0;
	return o ? NULL : k_empty;
}

/* Whether a proper prefix of path (whole components) is a link we made. */
static bool through_link(const tx *t, const char *path)
{
	for (size_t i = 0; i < t->nlinks; i++) {
		size_t n = strlen(t->links[i]);
		if (!strncmp(path, t->links[i], n) && path[n] == '/')
			return true;
	}
	return false;
}

static int remember_link(tx *t, const char *path)
{
	if (t->nlinks == t->caplinks) {
		size_t cap = t->caplinks ? t->caplinks * 2 : 16;
		char **v = realloc(t->links, cap * sizeof *v);
		if (!v)
			return s0__error_nomem(t->err);
		t->links = v;
		t->caplinks = cap;
	}
	if (!(t->links[t->nlinks] = s0__strdup(path)))
		return s0__error_nomem(t->err);
	t->nlinks++;
	return S0_OK;
}

/*
 * Check one entry and point it under dest; *is_file for content accounting.
 * *skip is set for the root directory itself ("./" or ".", as `tar -C DIR -cf
 * F .` writes it): the destination already exists, so it is not extracted.
 */
static int prepare(tx *t, struct archive_entry *e, bool *is_file, bool *skip)
{
	const char *name = archive_entry_pathname(e);
	char norm[PATH_MAX_BYTES], full[PATH_MAX_BYTES + 512];
	const char *why = normalise(name, norm, sizeof norm);
	*skip = false;
	if (why == k_empty && name && *name &&
	    archive_entry_filetype(e) == AE_IFDIR && !archive_entry_hardlink(e)) {
		*skip = true;
		return S0_OK;
	}
	if (why)
		return refuse(t, name, why);
	if (through_link(t, norm))
		return refuse(t, name, "its path goes through a symbolic link of the archive");
	for (size_t i = 0; i < t->nlinks; i++)
		if (!strcmp(t->links[i], norm))
			return refuse(t, name, "it replaces a symbolic link of the archive");
	const char *hard = archive_entry_hardlink(e);
	mode_t type = archive_entry_filetype(e);
	*is_file = false;
	if (hard) {
		char hnorm[PATH_MAX_BYTES], hfull[PATH_MAX_BYTES + 512];
		if ((why = normalise(hard, hnorm, sizeof hnorm)))
			return refuse(t, name, "its hard link target is outside the archive");
		if (through_link(t, hnorm))
			return refuse(t, name, "its hard link target goes through a symbolic link");
		for (size_t i = 0; i < t->nlinks; i++)
			if (!strcmp(t->links[i], hnorm))
				return refuse(t, name, "a hard link to a symbolic link");
		snprintf(hfull, sizeof hfull, "%s/%s", t->dest, hnorm);
		archive_entry_set_hardlink(e, hfull);
	} else if (type == AE_IFREG) {
		*is_file = true;
	} else if (type == AE_IFLNK) {
		if (remember_link(t, norm) < 0)
			return S0_ENOMEM;
	} else if (type != AE_IFDIR) {
		return refuse(t, name, type == AE_IFCHR || type == AE_IFBLK
		                               ? "device nodes are not allowed in a template"
		                               : "only files, directories and links are allowed");
	}
	snprintf(full, sizeof full, "%s/%s", t->dest, norm);
	archive_entry_set_pathname(e, full);
	archive_entry_set_perm(e, archive_entry_perm(e) & 01777);
	return S0_OK;
}

/*
 * An entry the disk writer could not create. A full or failing disk is an
 * I/O error; anything else comes from the archive itself (an entry replacing
 * a directory, a hard link to a directory or to a member not yet extracted)
 * and is the caller's bad input. Neither message names the server's paths.
 */
static int create_failed(tx *t, const char *name)
{
	int e = archive_errno(t->out);
	if (e == ENOSPC || e == EDQUOT || e == EIO || e == EROFS || e == ENOMEM)
		return s0__error_set(t->err, e == ENOMEM ? S0_ENOMEM : S0_EIO, "io_error",
		                     "template tar: creating \"%.200s\": %s", name, strerror(e));
	return refuse(t, name,
	              "it cannot be created (a non-directory over a directory of the archive, "
	              "or a hard link to a directory or to a member not extracted before it)");
}

static int copy_data(tx *t, const char *name)
{
	const void *buf;
	size_t size;
	la_int64_t off;
	for (;;) {
		int r = archive_read_data_block(t->in, &buf, &size, &off);
		if (r == ARCHIVE_EOF)
			return S0_OK;
		if (r < ARCHIVE_WARN)
			return s0__error_set(t->err, S0_EINVAL, "bad_template_tar",
			                     "template tar: entry \"%.200s\" is truncated or damaged: %s",
			                     name, archive_error_string(t->in));
		if (archive_write_data_block(t->out, buf, size, off) < ARCHIVE_WARN)
			return s0__error_set(t->err, S0_EIO, "io_error",
			                     "template tar: writing \"%.200s\": %s", name,
			                     archive_error_string(t->out));
	}
}

static int run(tx *t, uint64_t max_bytes, uint64_t max_entries)
{
	struct archive_entry *e;
	uint64_t bytes = 0, entries = 0;
	int r, rc = S0_OK;
	while (rc == S0_OK && (r = archive_read_next_header(t->in, &e)) != ARCHIVE_EOF) {
		if (r < ARCHIVE_WARN)
			return s0__error_set(t->err, S0_EINVAL, "bad_template_tar",
			                     "template tar: not a readable tar archive: %s",
			                     archive_error_string(t->in));
		char name[256];
		s0__strlcpy(name, archive_entry_pathname(e) ? archive_entry_pathname(e) : "",
		            sizeof name);
		bool is_file, skip;
		if (++entries > max_entries)
			return s0__error_set(t->err, S0_ETOOLARGE, "template_too_large",
			                     "template tar: more than %llu entries",
			                     (unsigned long long)max_entries);
		if ((rc = prepare(t, e, &is_file, &skip)) < 0)
			return rc;
		if (skip)
			continue;
		int64_t size = archive_entry_size_is_set(e) ? archive_entry_size(e) : 0;
		if (is_file && (size < 0 || (bytes += (uint64_t)size) > max_bytes))
			return s0__error_set(t->err, S0_ETOOLARGE, "template_too_large",
			                     "template tar: files larger than %llu bytes in all "
			                     "(at \"%.200s\")",
			                     (unsigned long long)max_bytes, name);
		if (archive_write_header(t->out, e) < ARCHIVE_WARN)
			return create_failed(t, name);
		if (is_file || archive_entry_hardlink(e))
			rc = copy_data(t, name);
		if (rc == S0_OK && archive_write_finish_entry(t->out) < ARCHIVE_WARN)
			rc = s0__error_set(t->err, S0_EIO, "io_error",
			                   "template tar: finishing \"%.200s\": %s", name,
			                   archive_error_string(t->out));
	}
	if (rc == S0_OK && archive_write_close(t->out) < ARCHIVE_WARN)
		rc = s0__error_set(t->err, S0_EIO, "io_error", "template tar: %s",
		                   archive_error_string(t->out));
	return rc;
}

int s0__tar_extract(const void *data, size_t len, const char *dest, uint64_t max_bytes,
                    uint64_t max_entries, s0_error **err)
{
	if (!data || !len || !dest)
		return s0__error_set(err, S0_EINVAL, "bad_template_tar",
		                     "template tar: the archive is empty");
	tx t = {.dest = dest, .err = err};
	t.in = archive_read_new();
	t.out = archive_write_disk_new();
	int rc = t.in && t.out ? S0_OK : s0__error_nomem(err);
	if (rc == S0_OK) {
		archive_read_support_filter_all(t.in);
		archive_read_support_format_tar(t.in);
		archive_read_support_format_gnutar(t.in);
		/* paths are checked above; these are a second line of defence */
		archive_write_disk_set_options(t.out, ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME |
		                                      ARCHIVE_EXTRACT_SECURE_NODOTDOT);
		if (archive_read_open_memory(t.in, data, len) != ARCHIVE_OK)
			rc = s0__error_set(err, S0_EINVAL, "bad_template_tar",
			                   "template tar: not a readable archive: %s",
			                   archive_error_string(t.in));
	}
	if (rc == S0_OK)
		rc = run(&t, max_bytes, max_entries);
	if (t.in)
		archive_read_free(t.in);
	if (t.out)
		archive_write_free(t.out);
	for (size_t i = 0; i < t.nlinks; i++)
		free(t.links[i]);
	free(t.links);
	return rc;
}
