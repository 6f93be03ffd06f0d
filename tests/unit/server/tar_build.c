/* Tar archives in memory for the template tests (tar_build.h). */
#include "tar_build.h"

#include <archive.h>
#include <archive_entry.h>
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

void *tar_build(const tar_member *m, size_t n, size_t *len)
{
	size_t cap = 1 << 20, used = 0;
	char *buf = malloc(cap);
	ck_assert_ptr_nonnull(buf);
	struct archive *a = archive_write_new();
	archive_write_set_format_pax_restricted(a);
	archive_write_set_bytes_in_last_block(a, 1);
	ck_assert_int_eq(archive_write_open_memory(a, buf, cap, &used), ARCHIVE_OK);
	for (size_t i = 0; i < n; i++) {
		struct archive_entry *e = archive_entry_new();
		archive_entry_set_pathname(e, m[i].name);
		archive_entry_set_mtime(e, 1767225600, 0);
		size_t clen = m[i].content ? strlen(m[i].content) : 0;
		switch (m[i].type) {
		case 'f':
			archive_entry_set_filetype(e, AE_IFREG);
			archive_entry_set_perm(e, 0644);
			archive_entry_set_size(e, (la_int64_t)clen);
			break;
		case 'd':
			archive_entry_set_filetype(e, AE_IFDIR);
			archive_entry_set_perm(e, 0755);
			break;
		case 'l':
			archive_entry_set_filetype(e, AE_IFLNK);
			archive_entry_set_perm(e, 0777);
			archive_entry_set_symlink(e, m[i].content);
			clen = 0;
			break;
		case 'h':
			archive_entry_set_filetype(e, AE_IFREG);
			archive_entry_set_perm(e, 0644);
			archive_entry_set_hardlink(e, m[i].content);
			clen = 0;
			break;
		default: /* 'c' */
			archive_entry_set_filetype(e, AE_IFCHR);
			archive_entry_set_perm(e, 0600);
			archive_entry_set_rdev(e, makedev(1, 3));
			clen = 0;
		}
		ck_assert_int_eq(archive_write_header(a, e), ARCHIVE_OK);
		if (clen)
			ck_assert_int_eq(archive_write_data(a, m[i].content, clen), (la_ssize_t)clen);
		archive_entry_free(e);
	}
	ck_assert_int_eq(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	*len = used;
	return buf;
}
