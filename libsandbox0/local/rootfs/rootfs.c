/* Open, flush, close of an ext4 filesystem over a block device. */
#include "local/rootfs/rfs_int.h"

#include <et/com_err.h>
#include <stdlib.h>

/* Map an ext2fs_open2 failure. */
static int open_fail(errcode_t ec, s0_error *dev_err, s0_error **err)
{
	switch (ec) {
	case EXT2_ET_BAD_MAGIC:
	case EXT2_ET_SB_CSUM_INVALID:
	case EXT2_ET_CORRUPT_SUPERBLOCK:
	case EXT2_ET_UNSUPP_FEATURE:
	case EXT2_ET_RO_UNSUPP_FEATURE:
	case EXT2_ET_UNEXPECTED_BLOCK_SIZE:
	case EXT2_ET_REV_TOO_HIGH:
	case EXT2_ET_BAD_DESC_SIZE:
	case EXT2_ET_GDESC_BAD_BLOCK_MAP:
	case EXT2_ET_GDESC_BAD_INODE_MAP:
	case EXT2_ET_GDESC_BAD_INODE_TABLE:
	case EXT2_ET_SHORT_READ:
		s0_error_free(dev_err);
		return s0__error_set(err, S0_ECORRUPT, "not_ext4", "not a usable ext4 filesystem: %s",
		                     error_message(ec));
	default:
		break;
	}
	s0_error *cause = dev_err;
	char *text = cause ? s0__asprintf("%s: %s", error_message(ec), s0_error_message(cause)) : NULL;
	s0_error *e = s0__error_make(S0_EIO, "io_error", text ? text : error_message(ec));
	free(text);
	if (cause)
		s0__error_set_cause(e, cause);
	return s0__error_put(err, e);
}

/* Refuse states libext2fs must not write over. */
static int check_writable(ext2_filsys fs, s0_error **err)
{
	if (ext2fs_has_feature_journal_needs_recovery(fs->super))
		return s0__error_set(err, S0_ECONFLICT, "needs_recovery",
		                     "filesystem journal needs recovery (replay it with "
		                     "e2fsck -E journal_only first); refusing to write");
	if (fs->super->s_state & EXT2_ERROR_FS)
		return s0__error_set(err, S0_ECONFLICT, "fs_has_errors",
		                     "filesystem is marked as having errors (run e2fsck); "
		                     "refusing to write");
	return S0_OK;
}

int s0__rootfs_open(const s0__blockdev *dev, unsigned flags, s0__rootfs **out, s0_error **err)
{
	s0__rootfs *r = calloc(1, sizeof *r);
	if (!r)
		return s0__error_nomem(err);
	r->dev = *dev;
	r->rw = !(flags & S0__ROOTFS_RDONLY);
	int oflags = EXT2_FLAG_64BITS | EXT2_FLAG_SKIP_MMP | (r->rw ? EXT2_FLAG_RW : 0);
	int rc = S0_OK;
	s0__rootfs_lock();
	s0_error *dev_err = NULL; /* a device error of a failed open (a refused chunk) */
	s0__ext4io_arm(&r->dev);
	s0__ext4io_catch(&dev_err);
	errcode_t ec = ext2fs_open2(S0__EXT4IO_NAME, NULL, oflags, 0, 0, s0__ext4io_manager, &r->fs);
	s0__ext4io_catch(NULL);
	s0__ext4io_arm(NULL);
	if (ec) {
		r->fs = NULL;
		rc = open_fail(ec, dev_err, err);
		goto out;
	}
	s0_error_free(dev_err);
	r->io = r->fs->io->private_data;
	if (r->rw) {
		rc = check_writable(r->fs, err);
		if (rc == S0_OK && (ec = ext2fs_read_bitmaps(r->fs)) != 0)
			rc = s0__rfs_fail(r, ec, "read allocation bitmaps", err);
	}
	if (rc == S0_OK)
		r->dc = s0__dcache_new(S0__ROOTFS_DCACHE_ENTRIES); /* NULL: walks just scan */
out:
	if (rc < 0 && r->fs)
		ext2fs_free(r->fs);
	s0__rootfs_unlock();
	if (rc < 0) {
		free(r);
		return rc;
	}
	*out = r;
	return S0_OK;
}

/* Write cached metadata if anything changed, then flush the device. */
static int flush_locked(s0__rootfs *r, s0_error **err)
{
	if (!r->rw)
		return S0_OK;
	int dirty = EXT2_FLAG_DIRTY | EXT2_FLAG_IB_DIRTY | EXT2_FLAG_BB_DIRTY;
	if (r->fs->flags & dirty) {
		struct timespec ts;
		s0__rfs_now(r, &ts); /* with a clock: fs->now for the write time */
		errcode_t ec = ext2fs_flush2(r->fs, EXT2_FLAG_FLUSH_NO_SYNC);
		if (ec)
			return s0__rfs_fail(r, ec, "flush filesystem metadata", err);
	}
	/* the channel's flush: its cached writes (iocache.h), then the device */
	errcode_t ec = io_channel_flush(r->fs->io);
	if (ec) {
		s0_error *w = s0__error_make(S0_EIO, "io_error", "device flush failed");
		s0_error *e = s0__ext4io_take_error(r->io);
		if (e)
			s0__error_set_cause(w, e);
		return s0__error_put(err, w);
	}
	return S0_OK;
}

int s0__rootfs_flush(s0__rootfs *r, s0_error **err)
{
	s0__rootfs_lock();
	int rc = flush_locked(r, err);
	s0__rootfs_unlock();
	return rc;
}

int s0__rootfs_close(s0__rootfs *r, s0_error **err)
{
	if (!r)
		return S0_OK;
	s0__rootfs_lock();
	int rc = flush_locked(r, err);
	/* ext2fs_free, not ext2fs_close2: close2 would rewrite the
	 * superblock (write statistics) after our flush. */
	ext2fs_free(r->fs);
	s0__rootfs_unlock();
	s0__dcache_free(r->dc);
	free(r);
	return rc;
}

void s0__rootfs_discard(s0__rootfs *r)
{
	if (!r)
		return;
	s0__rootfs_lock();
	ext2fs_free(r->fs);
	s0__rootfs_unlock();
	s0__dcache_free(r->dc);
	free(r);
}

void s0__rootfs_set_fixed_time(s0__rootfs *r, int64_t unix_sec)
{
	s0__rootfs_lock();
	r->fixed_sec = unix_sec;
	struct timespec ts;
	s0__rfs_now(r, &ts);
	r->fs->now = unix_sec || r->has_clock ? ts.tv_sec : 0;
	s0__rootfs_unlock();
}

void s0__rootfs_set_clock(s0__rootfs *r, const s0_clock *clock)
{
	s0__rootfs_lock();
	r->has_clock = clock && clock->now_unix_ms;
	if (r->has_clock)
		r->clock = *clock;
	if (!r->fixed_sec) {
		struct timespec ts;
		s0__rfs_now(r, &ts);
		r->fs->now = r->has_clock ? ts.tv_sec : 0; /* 0: libext2fs reads time() */
	}
	s0__rootfs_unlock();
}

void s0__rfs_now(const s0__rootfs *r, struct timespec *ts)
{
	if (r->fixed_sec) {
		ts->tv_sec = (time_t)r->fixed_sec;
		ts->tv_nsec = 0;
	} else if (r->has_clock) {
		int64_t ms = r->clock.now_unix_ms(r->clock.ctx);
		int64_t sec = ms / 1000, rem = ms % 1000;
		if (rem < 0) {
			sec--;
			rem += 1000;
		}
		ts->tv_sec = (time_t)sec;
		ts->tv_nsec = (long)(rem * 1000000);
		r->fs->now = ts->tv_sec; /* superblock and libext2fs-internal times */
	} else {
		clock_gettime(CLOCK_REALTIME, ts);
	}
}

bool s0__rootfs_is_writable(const s0__rootfs *r)
{
	return r->rw;
}

void s0__rootfs_get_usage(s0__rootfs *r, s0__rootfs_usage *out)
{
	s0__rootfs_lock();
	struct ext2_super_block *sb = r->fs->super;
	out->block_size_bytes = r->fs->blocksize;
	out->total_bytes = ext2fs_blocks_count(sb) * (uint64_t)r->fs->blocksize;
	out->free_bytes = ext2fs_free_blocks_count(sb) * (uint64_t)r->fs->blocksize;
	out->total_inodes = sb->s_inodes_count;
	out->free_inodes = sb->s_free_inodes_count;
	s0__rootfs_unlock();
}
