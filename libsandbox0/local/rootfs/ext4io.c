/* io_manager callbacks over an s0__blockdev. */
#include "local/rootfs/ext4io.h"

#include <errno.h>
#include <string.h>

static const s0__blockdev *armed;
static s0_error **catch_slot;

void s0__ext4io_catch(s0_error **slot)
{
	catch_slot = slot;
}

void s0__ext4io_arm(const s0__blockdev *dev)
{
	armed = dev;
}

s0_error *s0__ext4io_take_error(s0__ext4io *io)
{
	s0_error *e = io->dev_err;
	io->dev_err = NULL;
	return e;
}

static void keep_error(s0__ext4io *io, s0_error *e)
{
	if (!io->dev_err)
		io->dev_err = e;
	else
		s0_error_free(e);
}

static errcode_t io_open(const char *name, int flags, io_channel *chan_out)
{
	if (!armed || !name || strcmp(name, S0__EXT4IO_NAME))
		return EXT2_ET_BAD_DEVICE_NAME;
	io_channel chan = NULL;
	s0__ext4io *io = NULL;
	errcode_t ec = ext2fs_get_memzero(sizeof *chan, &chan);
	if (!ec)
		ec = ext2fs_get_memzero(sizeof *io, &io);
	if (!ec)
		ec = ext2fs_get_mem(strlen(name) + 1, &chan->name);
	if (ec) {
		ext2fs_free_mem(&io);
		ext2fs_free_mem(&chan);
		return ec;
	}
	strcpy(chan->name, name);
	io->dev = *armed;
	io->rw = (flags & IO_FLAG_RW) != 0;
	armed = NULL;
	chan->magic = EXT2_ET_MAGIC_IO_CHANNEL;
	chan->manager = s0__ext4io_manager;
	chan->block_size = 1024;
	chan->refcount = 1;
	chan->flags = 0;
	chan->private_data = io;
	*chan_out = chan;
	return 0;
}

static errcode_t io_close(io_channel chan)
{
	if (--chan->refcount > 0)
		return 0;
	s0__ext4io *io = chan->private_data;
	s0__iocache_free(io->cache); /* unflushed writes go: s0__rootfs_discard */
	if (catch_slot && !*catch_slot)
		*catch_slot = s0__ext4io_take_error(io);
	s0_error_free(io->dev_err);
	ext2fs_free_mem(&io);
	ext2fs_free_mem(&chan->name);
	ext2fs_free_mem(&chan);
	return 0;
}

/* Byte range of a (block, count) request; false when it overflows. */
static bool span(io_channel chan, unsigned long long block, int count, uint64_t *off,
                 size_t *len)
{
	*len = count < 0 ? (size_t)(-(long long)count) : (size_t)count * (size_t)chan->block_size;
	if (block > UINT64_MAX / (uint64_t)chan->block_size)
		return false;
	*off = block * (uint64_t)chan->block_size;
	return *off <= UINT64_MAX - *len;
}

/* Device read of len bytes at off (zero-filled past the device's end). */
static errcode_t read_bytes(io_channel chan, uint64_t off, size_t len, void *data)
{
	s0__ext4io *io = chan->private_data;
	uint64_t size = s0__blockdev_size(&io->dev);
	size_t have = off >= size ? 0 : (size - off < len ? (size_t)(size - off) : len);
	errcode_t ec = 0;
	if (have) {
		s0_error *e = NULL;
		io->reads++;
		if (s0__blockdev_read(&io->dev, off, data, have, &e) < 0) {
			keep_error(io, e);
			ec = EIO;
			have = 0;
		} else {
			io->bytes_read += have;
		}
	}
	if (have < len) {
		memset((char *)data + have, 0, len - have);
		if (!ec)
			ec = EXT2_ET_SHORT_READ;
	}
	return ec;
}

static errcode_t write_bytes(io_channel chan, uint64_t off, size_t len, const void *data)
{
	s0__ext4io *io = chan->private_data;
	if (!io->rw)
		return EXT2_ET_RO_FILSYS;
	uint64_t size = s0__blockdev_size(&io->dev);
	if (off > size || len > size - off)
		return EXT2_ET_SHORT_WRITE;
	s0_error *e = NULL;
	io->writes++;
	if (s0__blockdev_write(&io->dev, off, data, len, &e) < 0) {
		keep_error(io, e);
		return EIO;
	}
	io->bytes_written += len;
	return 0;
}

/* The cache's write-back: whole blocks straight to the device. */
static long cache_wb(void *ctx, uint64_t blk, uint32_t count, const void *data)
{
	io_channel chan = ctx;
	uint64_t bs = (uint64_t)chan->block_size;
	return (long)write_bytes(chan, blk * bs, (size_t)count * bs, data);
}

/* The channel's cache at its current block size, or NULL (none yet: the
 * superblock is read at 1 KiB before the block size is known; or OOM). */
static s0__iocache *cache_of(io_channel chan)
{
	s0__ext4io *io = chan->private_data;
	if (io->cache && s0__iocache_block_size(io->cache) == (uint32_t)chan->block_size)
		return io->cache;
	return NULL;
}

/* A byte-addressed request [off, off + len) bypasses the cache: write back
 * and forget the cached blocks it overlaps. */
static errcode_t cache_evict_bytes(io_channel chan, uint64_t off, size_t len)
{
	s0__iocache *c = cache_of(chan);
	if (!c || !len)
		return 0;
	uint64_t bs = (uint64_t)chan->block_size;
	for (uint64_t b = off / bs; b <= (off + len - 1) / bs; b++) {
		errcode_t ec = (errcode_t)s0__iocache_evict(c, b, cache_wb, chan);
		if (ec)
			return ec;
	}
	return 0;
}

static errcode_t io_set_blksize(io_channel chan, int blksize)
{
	if (blksize <= 0)
		return EXT2_ET_INVALID_ARGUMENT;
	s0__ext4io *io = chan->private_data;
	if (io->cache && s0__iocache_block_size(io->cache) != (uint32_t)blksize) {
		errcode_t ec = (errcode_t)s0__iocache_writeback(io->cache, cache_wb, chan);
		if (ec)
			return ec;
		s0__iocache_free(io->cache);
		io->cache = NULL;
	}
	chan->block_size = blksize;
	if (!io->cache) /* no cache (OOM) only costs speed */
		io->cache = s0__iocache_new(S0__EXT4IO_CACHE_BLOCKS, (uint32_t)blksize);
	return 0;
}

static errcode_t io_read64(io_channel chan, unsigned long long block, int count, void *data)
{
	s0__ext4io *io = chan->private_data;
	uint64_t off;
	size_t len;
	if (!span(chan, block, count, &off, &len))
		return EXT2_ET_LLSEEK_FAILED;
	s0__iocache *c = cache_of(chan);
	errcode_t ec = 0;
	if (c && count == 1) {
		const void *hit = s0__iocache_get(c, block);
		if (hit) {
			memcpy(data, hit, len);
			return 0;
		}
		if (!(ec = read_bytes(chan, off, len, data)))
			s0__iocache_put(c, block, data, false, cache_wb, chan); /* best effort */
	} else if (c && count > 1) {
		ec = read_bytes(chan, off, len, data);
		if (!ec)
			s0__iocache_overlay(c, block, (uint64_t)count, data);
	} else {
		ec = cache_evict_bytes(chan, off, len);
		if (!ec)
			ec = read_bytes(chan, off, len, data);
	}
	(void)io;
	if (ec && chan->read_error)
		return chan->read_error(chan, (unsigned long)block, count, data, len, 0, ec);
	return ec;
}

static errcode_t io_write64(io_channel chan, unsigned long long block, int count,
                            const void *data)
{
	s0__ext4io *io = chan->private_data;
	uint64_t off;
	size_t len;
	if (!span(chan, block, count, &off, &len))
		return EXT2_ET_LLSEEK_FAILED;
	if (!io->rw)
		return EXT2_ET_RO_FILSYS;
	uint64_t size = s0__blockdev_size(&io->dev);
	if (off > size || len > size - off)
		return EXT2_ET_SHORT_WRITE;
	s0__iocache *c = cache_of(chan);
	errcode_t ec;
	if (c && count == 1) { /* held until the flush (iocache.h) */
		ec = (errcode_t)s0__iocache_put(c, block, data, true, cache_wb, chan);
		if (ec == ENOMEM)
			ec = write_bytes(chan, off, len, data);
	} else if (c && count > 1) {
		ec = write_bytes(chan, off, len, data);
		if (!ec)
			s0__iocache_wrote(c, block, (uint64_t)count, data);
	} else {
		ec = cache_evict_bytes(chan, off, len);
		if (!ec)
			ec = write_bytes(chan, off, len, data);
	}
	if (ec && chan->write_error)
		return chan->write_error(chan, (unsigned long)block, count, data, len, 0, ec);
	return ec;
}

errcode_t s0__ext4io_read_data(io_channel chan, uint64_t block, uint64_t count, void *data)
{
	uint64_t bs = (uint64_t)chan->block_size;
	if (count > SIZE_MAX / bs || block > UINT64_MAX / bs)
		return EXT2_ET_LLSEEK_FAILED;
	errcode_t ec = read_bytes(chan, block * bs, (size_t)(count * bs), data);
	s0__iocache *c = cache_of(chan);
	if (!ec && c)
		s0__iocache_overlay(c, block, count, data);
	return ec;
}

errcode_t s0__ext4io_write_data(io_channel chan, uint64_t block, uint64_t count,
                                const void *data)
{
	uint64_t bs = (uint64_t)chan->block_size;
	if (count > SIZE_MAX / bs || block > UINT64_MAX / bs)
		return EXT2_ET_LLSEEK_FAILED;
	errcode_t ec = write_bytes(chan, block * bs, (size_t)(count * bs), data);
	s0__iocache *c = cache_of(chan);
	if (!ec && c)
		s0__iocache_wrote(c, block, count, data);
	return ec;
}

static errcode_t io_read(io_channel chan, unsigned long block, int count, void *data)
{
	return io_read64(chan, block, count, data);
}

static errcode_t io_write(io_channel chan, unsigned long block, int count, const void *data)
{
	return io_write64(chan, block, count, data);
}

static errcode_t io_write_byte(io_channel chan, unsigned long offset, int count,
                               const void *data)
{
	if (count < 0)
		return EXT2_ET_INVALID_ARGUMENT;
	errcode_t ec = cache_evict_bytes(chan, offset, (size_t)count);
	return ec ? ec : write_bytes(chan, offset, (size_t)count, data);
}

static errcode_t io_flush(io_channel chan)
{
	s0__ext4io *io = chan->private_data;
	if (!io->rw)
		return 0;
	if (io->cache) {
		errcode_t ec = (errcode_t)s0__iocache_writeback(io->cache, cache_wb, chan);
		if (ec)
			return ec;
	}
	s0_error *e = NULL;
	if (s0__blockdev_flush(&io->dev, &e) < 0) {
		keep_error(io, e);
		return EIO;
	}
	return 0;
}

static errcode_t io_set_option(io_channel chan, const char *option, const char *arg)
{
	(void)chan;
	(void)arg;
	/* Threaded bitmap loading toggles the cache; ours stays (one thread). */
	if (option && !strcmp(option, "cache"))
		return 0;
	return EXT2_ET_INVALID_ARGUMENT;
}

static errcode_t io_get_stats(io_channel chan, io_stats *stats)
{
	s0__ext4io *io = chan->private_data;
	io->stats.num_fields = 2;
	io->stats.bytes_read = io->bytes_read;
	io->stats.bytes_written = io->bytes_written;
	*stats = &io->stats;
	return 0;
}

static errcode_t io_discard(io_channel chan, unsigned long long block,
                            unsigned long long count)
{
	(void)chan;
	(void)block;
	(void)count;
	return EXT2_ET_UNIMPLEMENTED;
}

static errcode_t io_zeroout(io_channel chan, unsigned long long block,
                            unsigned long long count)
{
	static char zeros[64 * 1024]; /* never written: stays zero */
	uint64_t bs = (uint64_t)chan->block_size;
	if (count > UINT64_MAX / bs || block > UINT64_MAX / bs)
		return EXT2_ET_INVALID_ARGUMENT;
	uint64_t off = block * bs, left = count * bs;
	s0__iocache *c = cache_of(chan);
	if (c) /* overwritten with zeros: cached copies are stale, dirty or not */
		s0__iocache_discard(c, block, count);
	while (left) {
		size_t n = left < sizeof zeros ? (size_t)left : sizeof zeros;
		errcode_t ec = write_bytes(chan, off, n, zeros);
		if (ec)
			return ec;
		off += n;
		left -= n;
	}
	return 0;
}

static struct struct_io_manager manager = {
	.magic = EXT2_ET_MAGIC_IO_MANAGER,
	.name = "s0 blockdev I/O manager",
	.open = io_open,
	.close = io_close,
	.set_blksize = io_set_blksize,
	.read_blk = io_read,
	.write_blk = io_write,
	.flush = io_flush,
	.write_byte = io_write_byte,
	.set_option = io_set_option,
	.get_stats = io_get_stats,
	.read_blk64 = io_read64,
	.write_blk64 = io_write64,
	.discard = io_discard,
	.zeroout = io_zeroout,
};

io_manager s0__ext4io_manager = &manager;
