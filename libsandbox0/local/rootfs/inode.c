/* Inode helpers: full-size reads and writes, times, allocation, release. */
#include "local/rootfs/rfs_int.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int inode_io_size(s0__rootfs *r)
{
	int sz = EXT2_INODE_SIZE(r->fs->super);
	return sz < (int)sizeof(struct ext2_inode_large) ? sz : (int)sizeof(struct ext2_inode_large);
}

errcode_t s0__rfs_read_inode(s0__rootfs *r, ext2_ino_t ino, struct ext2_inode_large *in)
{
	memset(in, 0, sizeof *in);
	return ext2fs_read_inode_full(r->fs, ino, (struct ext2_inode *)in, inode_io_size(r));
}

errcode_t s0__rfs_write_inode(s0__rootfs *r, ext2_ino_t ino, struct ext2_inode_large *in)
{
	return ext2fs_write_inode_full(r->fs, ino, (struct ext2_inode *)in, inode_io_size(r));
}

/* Whether the large-inode field ending at byte @p end is present. */
static bool has_field(const struct ext2_inode_large *in, size_t end)
{
	return EXT2_GOOD_OLD_INODE_SIZE + (size_t)in->i_extra_isize >= end;
}
#define HAS(in, f) has_field((in), offsetof(struct ext2_inode_large, f) + sizeof((in)->f))

/* ext4 time encoding: 32-bit seconds plus (nsec << 2 | epoch bits). */
static void encode_time(const struct timespec *ts, __u32 *sec, __u32 *extra)
{
	int64_t s = (int64_t)ts->tv_sec;
	*sec = (__u32)s;
	__u32 epoch = (__u32)(((s - (int32_t)(__u32)s) >> 32) & EXT4_EPOCH_MASK);
	if (extra)
		*extra = epoch | ((__u32)ts->tv_nsec << EXT4_EPOCH_BITS);
}

void s0__rfs_stamp(s0__rootfs *r, struct ext2_inode_large *in, bool birth)
{
	struct timespec ts;
	s0__rfs_now(r, &ts);
	/* A 128-byte inode reads with i_extra_isize 0: no extra fields. */
	encode_time(&ts, &in->i_mtime, HAS(in, i_mtime_extra) ? &in->i_mtime_extra : NULL);
	encode_time(&ts, &in->i_ctime, HAS(in, i_ctime_extra) ? &in->i_ctime_extra : NULL);
	encode_time(&ts, &in->i_atime, HAS(in, i_atime_extra) ? &in->i_atime_extra : NULL);
	if (birth && HAS(in, i_crtime_extra))
		encode_time(&ts, &in->i_crtime, &in->i_crtime_extra);
}

int64_t s0__rfs_mtime_ns(const struct ext2_inode_large *in)
{
	int64_t sec = (int32_t)in->i_mtime;
	int64_t nsec = 0;
	if (HAS(in, i_mtime_extra)) {
		sec += (int64_t)(in->i_mtime_extra & EXT4_EPOCH_MASK) << 32;
		nsec = in->i_mtime_extra >> EXT4_EPOCH_BITS;
		if (nsec > 999999999)
			nsec = 0;
	}
	return sec * 1000000000 + nsec;
}

errcode_t s0__rfs_touch(s0__rootfs *r, ext2_ino_t dir)
{
	struct ext2_inode_large in;
	errcode_t ec = s0__rfs_read_inode(r, dir, &in);
	if (ec)
		return ec;
	struct ext2_inode_large keep = in;
	s0__rfs_stamp(r, &in, false);
	in.i_atime = keep.i_atime;
	in.i_atime_extra = keep.i_atime_extra;
	return s0__rfs_write_inode(r, dir, &in);
}

/* The first run of @p n free blocks in [lo, hi] of the block bitmap, in
 * *start; false when there is none. Bounded: each step skips a whole free or
 * used run. (ext2fs_alloc_range is not used: libext2fs 1.47.0's
 * ext2fs_new_range loops forever when no run of the length exists, as
 * tests/unit/rootfs/check_rootfs_files.c's fragmented-space test showed.) */
static bool free_run_in(ext2_filsys fs, blk64_t lo, blk64_t hi, blk64_t n, blk64_t *start)
{
	blk64_t pos = lo;
	while (pos <= hi && hi - pos + 1 >= n) {
		blk64_t z, used;
		if (ext2fs_find_first_zero_block_bitmap2(fs->block_map, pos, hi, &z) != 0)
			return false;
		if (hi - z + 1 < n)
			return false;
		if (ext2fs_find_first_set_block_bitmap2(fs->block_map, z, z + n - 1, &used) != 0) {
			*start = z;
			return true;
		}
		pos = used + 1;
	}
	return false;
}

/* Map blocks [0, n) of the new inode @p in (extent header set, no
 * extents) to one free run near its group, allocated and counted: *pblk is
 * the run's first block; 0 (nothing changed) when no run of n free blocks
 * is found or the layout does not allow one in-inode extent (block 0 is
 * never a file's: it holds the boot block and superblock). */
static errcode_t map_one_run(ext2_filsys fs, ext2_ino_t ino, struct ext2_inode_large *in,
                             blk64_t n, blk64_t *pblk_out)
{
	*pblk_out = 0;
	struct ext3_extent_header *eh = (struct ext3_extent_header *)in->i_block;
	if (!n || n > EXT_INIT_MAX_LEN || ext2fs_has_feature_bigalloc(fs->super) ||
	    !(in->i_flags & EXT4_EXTENTS_FL) || ext2fs_le16_to_cpu(eh->eh_magic) != EXT3_EXT_MAGIC ||
	    eh->eh_entries != 0 || ext2fs_le16_to_cpu(eh->eh_max) < 1)
		return 0;
	if (!fs->block_map)
		return 0;
	blk64_t first = fs->super->s_first_data_block, last = ext2fs_blocks_count(fs->super) - 1;
	blk64_t goal = ext2fs_find_inode_goal(fs, ino, (struct ext2_inode *)in, 0), pblk = 0;
	if (goal < first || goal > last)
		goal = first;
	/* runs starting from the goal to the end, then before the goal */
	blk64_t wrap_hi = goal - 1 + (n - 1) < last ? goal - 1 + (n - 1) : last;
	if (!free_run_in(fs, goal, last, n, &pblk) &&
	    !(goal > first && free_run_in(fs, first, wrap_hi, n, &pblk)))
		return 0; /* fragmented: the caller's fallocate finds several runs */
	errcode_t ec = ext2fs_iblk_set(fs, (struct ext2_inode *)in, n);
	if (ec)
		return ec;
	ext2fs_block_alloc_stats_range(fs, pblk, (blk_t)n, +1);
	struct ext3_extent *ex = (struct ext3_extent *)(eh + 1);
	ex->ee_block = 0;
	ex->ee_len = ext2fs_cpu_to_le16((__u16)n);
	ex->ee_start = ext2fs_cpu_to_le32((__u32)(pblk & 0xFFFFFFFFu));
	ex->ee_start_hi = ext2fs_cpu_to_le16((__u16)(pblk >> 32));
	eh->eh_entries = ext2fs_cpu_to_le16(1);
	*pblk_out = pblk;
	return 0;
}

errcode_t s0__rfs_new_inode(s0__rootfs *r, ext2_ino_t dir, uint32_t mode, uint64_t bytes,
                            ext2_ino_t *ino_out, bool *mapped)
{
	ext2_filsys fs = r->fs;
	ext2_ino_t ino;
	*mapped = false;
	errcode_t ec = ext2fs_new_inode(fs, dir, (int)mode, NULL, &ino);
	if (ec)
		return ec;
	size_t size = (size_t)EXT2_INODE_SIZE(fs->super);
	size_t alloc = size < sizeof(struct ext2_inode_large) ? sizeof(struct ext2_inode_large) : size;
	char *buf = calloc(1, alloc);
	if (!buf)
		return EXT2_ET_NO_MEMORY;
	struct ext2_inode_large *in = (struct ext2_inode_large *)buf;
	in->i_mode = (__u16)mode;
	in->i_links_count = 1;
	if (size > EXT2_GOOD_OLD_INODE_SIZE)
		in->i_extra_isize = sizeof(struct ext2_inode_large) - EXT2_GOOD_OLD_INODE_SIZE;
	s0__rfs_stamp(r, in, true);
	ec = ext2fs_inode_size_set(fs, (struct ext2_inode *)in, bytes);
	blk64_t nblocks = (bytes + fs->blocksize - 1) / fs->blocksize, run = 0;
	if (!ec && ext2fs_has_feature_extents(fs->super) && LINUX_S_ISREG(mode)) {
		ext2_extent_handle_t h;
		ec = ext2fs_extent_open2(fs, ino, (struct ext2_inode *)in, &h);
		if (!ec)
			ext2fs_extent_free(h);
		if (!ec)
			ec = map_one_run(fs, ino, in, nblocks, &run);
	}
	if (!ec)
		ec = ext2fs_write_inode_full(fs, ino, (struct ext2_inode *)in, (int)size);
	if (ec && run) /* the inode was not written: give its blocks back */
		ext2fs_block_alloc_stats_range(fs, run, (blk_t)nblocks, -1);
	free(buf);
	if (ec)
		return ec;
	ext2fs_inode_alloc_stats2(fs, ino, +1, LINUX_S_ISDIR(mode));
	*ino_out = ino;
	*mapped = run != 0;
	return 0;
}

static __u32 dtime_now(const s0__rootfs *r)
{
	struct timespec ts;
	s0__rfs_now(r, &ts);
	return (__u32)ts.tv_sec;
}

errcode_t s0__rfs_free_inode(s0__rootfs *r, ext2_ino_t ino)
{
	ext2_filsys fs = r->fs;
	struct ext2_inode_large in;
	errcode_t ec = s0__rfs_read_inode(r, ino, &in);
	if (!ec && ext2fs_file_acl_block(fs, (struct ext2_inode *)&in))
		ec = ext2fs_free_ext_attr(fs, ino, &in);
	if (!ec)
		ec = s0__rfs_read_inode(r, ino, &in);
	if (ec)
		return ec;
	bool isdir = LINUX_S_ISDIR(in.i_mode);
	in.i_links_count = 0;
	in.i_dtime = dtime_now(r);
	if (ext2fs_inode_has_valid_blocks2(fs, (struct ext2_inode *)&in)) {
		ec = ext2fs_punch(fs, ino, (struct ext2_inode *)&in, NULL, 0, ~0ULL);
		if (!ec)
			ec = s0__rfs_read_inode(r, ino, &in);
		in.i_links_count = 0;
		in.i_dtime = dtime_now(r);
	}
	if (!ec)
		ec = s0__rfs_write_inode(r, ino, &in);
	if (!ec)
		ext2fs_inode_alloc_stats2(fs, ino, -1, isdir);
	return ec;
}

void s0__rfs_scrub_inode(s0__rootfs *r, ext2_ino_t ino)
{
	struct ext2_inode_large in;
	if (s0__rfs_read_inode(r, ino, &in) || in.i_links_count == 0)
		return;
	in.i_links_count = 0;
	in.i_dtime = dtime_now(r);
	s0__rfs_write_inode(r, ino, &in);
}

errcode_t s0__rfs_drop_link(s0__rootfs *r, ext2_ino_t ino)
{
	struct ext2_inode_large in;
	errcode_t ec = s0__rfs_read_inode(r, ino, &in);
	if (ec)
		return ec;
	if (in.i_links_count <= 1)
		return s0__rfs_free_inode(r, ino);
	in.i_links_count--;
	struct timespec ts;
	s0__rfs_now(r, &ts);
	encode_time(&ts, &in.i_ctime, HAS(&in, i_ctime_extra) ? &in.i_ctime_extra : NULL);
	return s0__rfs_write_inode(r, ino, &in);
}

errcode_t s0__rfs_readlink(s0__rootfs *r, ext2_ino_t ino, const struct ext2_inode_large *in,
                           char **target)
{
	ext2_filsys fs = r->fs;
	uint64_t size = EXT2_I_SIZE(in);
	if (size >= fs->blocksize)
		return EXT2_ET_INODE_CORRUPTED;
	char *buf = calloc(1, fs->blocksize + 1);
	if (!buf)
		return EXT2_ET_NO_MEMORY;
	errcode_t ec = 0;
	struct ext2_inode_large copy = *in;
	if (ext2fs_is_fast_symlink((struct ext2_inode *)&copy)) {
		memcpy(buf, copy.i_block, (size_t)size);
	} else if (copy.i_flags & EXT4_INLINE_DATA_FL) {
		size_t got = 0;
		char *tmp = calloc(1, fs->blocksize * 2);
		ec = tmp ? ext2fs_inline_data_get(fs, ino, (struct ext2_inode *)&copy, tmp, &got)
		         : EXT2_ET_NO_MEMORY;
		if (!ec)
			memcpy(buf, tmp, got < size ? got : (size_t)size);
		free(tmp);
	} else {
		blk64_t blk = 0;
		ec = ext2fs_bmap2(fs, ino, (struct ext2_inode *)&copy, NULL, 0, 0, NULL, &blk);
		if (!ec && blk)
			ec = io_channel_read_blk64(fs->io, blk, 1, buf);
		buf[size] = '\0';
	}
	if (ec) {
		free(buf);
		return ec;
	}
	*target = buf; /* cut at the first NUL by construction */
	return 0;
}

int s0__rfs_ftype(uint32_t mode)
{
	if (LINUX_S_ISREG(mode))
		return EXT2_FT_REG_FILE;
	if (LINUX_S_ISDIR(mode))
		return EXT2_FT_DIR;
	if (LINUX_S_ISLNK(mode))
		return EXT2_FT_SYMLINK;
	if (LINUX_S_ISCHR(mode))
		return EXT2_FT_CHRDEV;
	if (LINUX_S_ISBLK(mode))
		return EXT2_FT_BLKDEV;
	if (LINUX_S_ISFIFO(mode))
		return EXT2_FT_FIFO;
	if (LINUX_S_ISSOCK(mode))
		return EXT2_FT_SOCK;
	return EXT2_FT_UNKNOWN;
}
