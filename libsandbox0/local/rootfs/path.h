/*
 * Path handling for the files API: hostile input in, canonical absolute
 * paths out, and the set of runtime-only mount points that never touch the
 * RootFS. Pure string work: no filesystem access, no locks.
 */
#ifndef S0_ROOTFS_PATH_H
#define S0_ROOTFS_PATH_H

#include <stdbool.h>
#include <stddef.h>

#include "common/internal.h"

/** Longest path accepted, in bytes, excluding the NUL (Linux PATH_MAX - 1). */
#define S0__PATH_MAX 4096
/** Longest path component accepted, in bytes (ext4 and Linux NAME_MAX). */
#define S0__NAME_MAX 255
/** The workspace root; relative paths resolve against it (docs/wire.md §3.9). */
#define S0__WORKSPACE_ROOT "/workspace"

/** s0__path_normalize() flag: `..` at `/` stays at `/` (chroot semantics,
 *  for paths derived from symlink targets) instead of being rejected. */
#define S0__PATH_CLAMP 1u

/**
 * Normalise a caller-supplied path.
 *
 * Relative paths are joined to ::S0__WORKSPACE_ROOT; empty components and
 * `.` are dropped, `..` removes the previous component. The result is
 * absolute, has no trailing slash (except `/` itself), no `.`/`..`
 * components and no empty components.
 *
 * @param[in] in      path bytes, not necessarily NUL-terminated; borrowed.
 * @param[in] in_len  length of @p in in bytes.
 * @param[in] flags   0 or ::S0__PATH_CLAMP.
 * @param[out] out    (transfer full) the canonical path; free with free().
 *                    Untouched on failure.
 * @retval S0_OK
 * @retval S0_EINVAL reason `invalid_request`: empty, contains NUL, longer
 *         than ::S0__PATH_MAX (before or after joining), a component
 *         longer than ::S0__NAME_MAX, or `..` above `/` without CLAMP.
 * @retval S0_ENOMEM
 * @threadsafety safe (no shared state)
 */
int s0__path_normalize(const char *in, size_t in_len, unsigned flags, char **out,
                       s0_error **err);

/**
 * Whether canonical path @p p equals @p prefix or lies below it.
 * Both must be canonical (s0__path_normalize output). "/" is above everything.
 */
bool s0__path_is_under(const char *p, const char *prefix);

/**
 * Last component of canonical path @p p (pointer into @p p); "" for "/".
 */
const char *s0__path_base(const char *p);

/**
 * Join canonical directory @p dir and a component @p name (no slash) into a
 * new canonical path. @return (transfer full) the path or NULL on OOM.
 */
char *s0__path_join(const char *dir, const char *name);

/**
 * Iterate over the components of a slash-separated path: skips leading
 * slashes, sets *comp and *len to the next component and advances *p past
 * it. @return false when no component is left.
 */
bool s0__path_next(const char **p, const char **comp, size_t *len);

/**
 * A set of canonical mount-point paths (runtime-only trees: /tmp, /proc,
 * /dev, /sys and a template's ephemeral mounts). Immutable once built;
 * safe to read from any thread.
 */
typedef struct s0__mountset {
	char **paths; /**< canonical absolute paths, owned */
	size_t n;
} s0__mountset;

/** Runtime-only mount points every sandbox has, in this order. */
extern const char *const s0__builtin_mounts[4];

/**
 * Add one mount point (normalised first; duplicates are ignored).
 * @retval S0_EINVAL `invalid_request`: bad path, or "/" (the root cannot be
 *         runtime-only). @retval S0_ENOMEM. The set is unchanged on failure.
 */
int s0__mountset_add(s0__mountset *m, const char *path, size_t len, s0_error **err);

/** Free the paths; leaves an empty set. NULL-safe. */
void s0__mountset_clear(s0__mountset *m);

/**
 * The mount point that owns canonical path @p p (the longest mount @p p is
 * at or under), or NULL when @p p belongs to the RootFS. @p m may be NULL.
 * @return (transfer none) pointer into @p m.
 */
const char *s0__mountset_owner(const s0__mountset *m, const char *p);

/** Whether @p p is exactly one of the mount points of @p m (nullable). */
bool s0__mountset_is_mount(const s0__mountset *m, const char *p);

#endif
