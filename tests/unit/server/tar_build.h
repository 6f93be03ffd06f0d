/* Tar archives in memory for the template tests (libarchive): hostile ones included. */
#ifndef S0_TEST_TAR_BUILD_H
#define S0_TEST_TAR_BUILD_H

#include <stddef.h>
#include <stdint.h>

/* One member: type 'f' file, 'd' directory, 'l' symlink (target in
 * content), 'h' hard link (target in content), 'c' character device. */
typedef struct tar_member {
	char type;
	const char *name;
	const char *content;
} tar_member;

/* The members as a pax tar (malloc'd, *len bytes). */
void *tar_build(const tar_member *m, size_t n, size_t *len);

#endif
