/*
 * Private to rootfs/: the handle, errcode mapping, the path walker and the
 * inode helpers the files operations are built from. Every function here
 * must be called with the process-wide lock held (s0__rootfs_lock).
 */
#ifndef S0_ROOTFS_INT_H
#define S0_ROOTFS_INT_H

#include <ext2fs/ext2fs.h>
#include <stdbool.h>
#include <time.h>

#include "local/rootfs/dcache.h"
#include "local/rootfs/ext4io.h"
#include "local/rootfs/files.h"
#include "local/rootfs/rootfs.h"

struct s0__rootfs {
	ext2_filsys fs;        /* libext2fs handle, owned */
	s0__ext4io *io;        /* the channel's private state (borrowed from fs->io) */
	s0__blockdev dev;      /* copy of the device descriptor */
	bool rw;
	int64_t fixed_sec;     /* non-zero: the clock for every timestamp */
	bool has_clock;        /* clock set (s0__rootfs_set_clock) */
	s0_clock clock;        /* copy; used when fixed_sec is 0 */
	s0__dcache *dc;        /* name cache (dcache.h), owned; NULL: none */
};

/* Names the walk remembers per handle (dcache.h). */
#define S0__ROOTFS_DCACHE_ENTRIES 16384

/* Now: the fixed time when set, else the handle's clock, else
 * CLOCK_REALTIME. With a clock, also keeps fs->now in step. */
void s0__rfs_now(const s0__rootfs *r, struct timespec *ts);

/*
 * Turn a libext2fs error into an s0 error. Device errors recorded by the io
 * channel become the cause. Out-of-space becomes `operation_failed` with a
 * "no space" message; everything else `operation_failed` too. @p what
 * names the step for the message ("read inode"). Returns the code.
 */
int s0__rfs_fail(s0__rootfs *r, errcode_t ec, const char *what, s0_error **err);

/* S0_EFORBIDDEN `permission_denied` unless the handle is read-write. */
int s0__rfs_need_rw(s0__rootfs *r, s0_error **err);

/* Walker flags. */
#define S0__WALK_FOLLOW 1u  /* follow a symlink in the final component */
#define S0__WALK_MKDIRS 2u  /* create missing intermediate directories (0755) */

/* Walker outcome besides hard errors. */
enum s0__walk_status {
	S0__WALK_OK = 0,       /* resolved; ino may be 0 (final missing) */
	S0__WALK_NOPARENT,     /* an intermediate component is missing */
	S0__WALK_NOTDIR,       /* an intermediate component is not a directory */
	S0__WALK_REDIRECT,     /* reached a foreign mount; canon holds the path */
};

typedef struct s0__walk {
	int status;                 /* enum s0__walk_status */
	ext2_ino_t dir;             /* directory holding the final entry (0 for the root) */
	ext2_ino_t ino;             /* final inode, 0 when it does not exist */
	char name[EXT2_NAME_LEN + 1]; /* final entry name ("" for the root or a final "..") */
	char *canon;                /* canonical path reached (malloc'd, always set on S0_OK) */
} s0__walk;

/*
 * Resolve canonical path @p path (from s0__path_normalize). Returns S0_OK
 * with w->status set, or a negative code with err set (I/O, corrupt
 * structures, symlink loop → S0_EINVAL invalid_request, no space when
 * creating directories). @p foreign may be NULL. Free w with
 * s0__walk_clear.
 */
int s0__rfs_walk(s0__rootfs *r, const char *path, unsigned flags, const s0__mountset *foreign,
                 s0__walk *w, s0_error **err);
void s0__walk_clear(s0__walk *w);

/*
 * Convert a non-OK walk status into the error an operation reports:
 * NOTDIR → `path_not_directory`; NOPARENT → S0_ENOTFOUND with
 * @p missing_reason; REDIRECT → S0__FILES_REDIRECT with route->redirect[slot]
 * = canon (ownership moved), or `invalid_request` without a route.
 */
int s0__rfs_walk_fail(s0__walk *w, const char *missing_reason, const char *path,
                      s0__files_route *route, int slot, s0_error **err);

/* ---- inodes (inode.c) ---- */

/* Read / write the full on-disk inode (large inode struct, zero-extended). */
errcode_t s0__rfs_read_inode(s0__rootfs *r, ext2_ino_t ino, struct ext2_inode_large *in);
errcode_t s0__rfs_write_inode(s0__rootfs *r, ext2_ino_t ino, struct ext2_inode_large *in);

/* Set a/c/m times (and crtime when @p birth) of @p in to now, with ns. */
void s0__rfs_stamp(s0__rootfs *r, struct ext2_inode_large *in, bool birth);
/* mtime of @p in in ns since the epoch. */
int64_t s0__rfs_mtime_ns(const struct ext2_inode_large *in);
/* Update mtime/ctime of directory @p dir to now. */
errcode_t s0__rfs_touch(s0__rootfs *r, ext2_ino_t dir);

/*
 * Allocate and initialise a new, unlinked inode of @p mode (type | perms)
 * near @p dir: links_count 1, i_size @p size (bytes), extent header when
 * the fs has extents, times now, written to disk and counted as used. For
 * a regular file with extents, the blocks for @p size are allocated too
 * when one free run holds them (*mapped true: one initialised extent, the
 * blocks' contents not written); otherwise *mapped is false and the caller
 * allocates them (ext2fs_fallocate). Either way the caller writes the data
 * before the inode is linked. Undo with s0__rfs_free_inode.
 */
errcode_t s0__rfs_new_inode(s0__rootfs *r, ext2_ino_t dir, uint32_t mode, uint64_t size,
                            ext2_ino_t *ino, bool *mapped);

/* Release the blocks and the inode of an inode with no links left. */
errcode_t s0__rfs_free_inode(s0__rootfs *r, ext2_ino_t ino);

/*
 * Mark an inode that is free in the bitmap but may have been written by a
 * failed libext2fs call as deleted (links 0, dtime set). Best effort.
 */
void s0__rfs_scrub_inode(s0__rootfs *r, ext2_ino_t ino);

/* Drop one link of @p ino (non-directory); frees it when none are left. */
errcode_t s0__rfs_drop_link(s0__rootfs *r, ext2_ino_t ino);

/* ext2fs_link, expanding the directory when it is full. */
errcode_t s0__rfs_link(s0__rootfs *r, ext2_ino_t dir, const char *name, ext2_ino_t ino,
                       int ftype);

/*
 * Point the existing entry @p name of @p dir at @p ino with file type
 * @p ftype, in place (one directory-block write). EXT2_ET_FILE_NOT_FOUND
 * when there is no such entry.
 */
errcode_t s0__rfs_retarget(s0__rootfs *r, ext2_ino_t dir, const char *name, ext2_ino_t ino,
                           int ftype);

/* ext2fs_mkdir + expand-on-full + mode/times; *ino_out is the new dir. */
errcode_t s0__rfs_mkdir(s0__rootfs *r, ext2_ino_t dir, const char *name, uint32_t perm,
                        ext2_ino_t *ino_out);

/* Remove the empty directory @p ino named @p name in @p dir. */
errcode_t s0__rfs_rmdir(s0__rootfs *r, ext2_ino_t dir, const char *name, ext2_ino_t ino);

/* Whether directory @p ino has entries besides . and .. */
errcode_t s0__rfs_dir_is_empty(s0__rootfs *r, ext2_ino_t ino, bool *empty);

/*
 * Read the target of symlink @p ino into a malloc'd NUL-terminated string
 * (cut at the first NUL byte, at most one block).
 */
errcode_t s0__rfs_readlink(s0__rootfs *r, ext2_ino_t ino, const struct ext2_inode_large *in,
                           char **target);

/*
 * File data by extent runs (runs.c). read: n bytes at off of regular file
 * ino (inode in) into buf, holes and unwritten extents as zeros. write: len
 * bytes of data as the whole content of ino, whose blocks [0, ceil(len /
 * blocksize)) are allocated and initialised; the last block is written
 * whole, zero-padded. Both return EXT2_ET_OP_NOT_SUPPORTED, having done
 * nothing, for a file without an extent tree (block maps, inline data) or,
 * for write, blocks not so allocated: the caller uses ext2fs_file_*.
 */
errcode_t s0__rfs_read_runs(s0__rootfs *r, ext2_ino_t ino, struct ext2_inode_large *in,
                            uint64_t off, uint64_t n, char *buf);
errcode_t s0__rfs_write_runs(s0__rootfs *r, ext2_ino_t ino, struct ext2_inode_large *in,
                             const char *data, size_t len);

/* ext2 directory-entry file type for an inode mode. */
int s0__rfs_ftype(uint32_t mode);

/*
 * Fill @p fi (name, type, size, mode, mtime, is_link; link_target when
 * @p with_target and a symlink) from inode @p ino. fi->path is left alone.
 */
int s0__rfs_fill_info(s0__rootfs *r, ext2_ino_t ino, const char *name, bool with_target,
                      s0__fileinfo *fi, s0_error **err);

#endif
