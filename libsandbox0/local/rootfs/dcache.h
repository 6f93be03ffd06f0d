/*
 * The name cache of a RootFS handle: (directory inode, entry name) → inode
 * (0: known absent), so a path walk does not scan and checksum every
 * directory block of every component on each files API call
 * (bench/rootfs/README.md).
 *
 * The rule that keeps it true: every change of a directory's entries
 * through the handle either records the change here exactly (link,
 * retarget, mkdir: dirent.c) or clears the whole cache (rmdir, delete,
 * move, symlink, any failed change). Only the handle changes its
 * filesystem (the files API is its single writer), and a new handle starts
 * empty. Not thread-safe: used under the process-wide rootfs lock.
 */
#ifndef S0_ROOTFS_DCACHE_H
#define S0_ROOTFS_DCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct s0__dcache s0__dcache;

/* A cache of up to max_entries names; NULL when out of memory (callers
 * treat a NULL cache as always empty). */
s0__dcache *s0__dcache_new(size_t max_entries);
void s0__dcache_free(s0__dcache *c);

/* Whether (dir, name[0..len)) is known; *ino receives it (0: absent). */
bool s0__dcache_get(s0__dcache *c, uint32_t dir, const char *name, size_t len, uint32_t *ino);
/* Record (dir, name) → ino (0: absent). When full the cache starts over;
 * out of memory it records nothing (there was no entry: never a wrong answer). NULL c is a no-op. */
void s0__dcache_put(s0__dcache *c, uint32_t dir, const char *name, size_t len, uint32_t ino);
/*
 * Whether every entry of directory dir is recorded (then a name that is
 * not is absent), and marking it so after recording them all. A clear
 * (explicit or when full) forgets the mark with the entries.
 */
bool s0__dcache_complete(s0__dcache *c, uint32_t dir);
void s0__dcache_set_complete(s0__dcache *c, uint32_t dir);
/* Entries recorded (for the walk's "does a whole directory fit" test). */
size_t s0__dcache_count(const s0__dcache *c);
size_t s0__dcache_capacity(const s0__dcache *c);

/* The same, but an entry already recorded for (dir, name) stays. */
void s0__dcache_add(s0__dcache *c, uint32_t dir, const char *name, size_t len, uint32_t ino);

/* Forget everything. NULL c is a no-op. */
void s0__dcache_clear(s0__dcache *c);

#endif
