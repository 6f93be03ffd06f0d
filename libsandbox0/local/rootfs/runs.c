/*
 * File data by extent runs: a whole file's bytes go to (and come from) the
 * device in one request per contiguous run of blocks, instead of one block
 * at a time through libext2fs's one-block file buffer (bench/rootfs/README.md).
 * The requests bypass the io channel's cache but keep it coherent
 * (s0__ext4io_read_data / _write_data).
 */
#include "local/rootfs/rfs_int.h"

#include <stdlib.h>
#include <string.h>

#define RUN_MAX_BLOCKS 8192u /* blocks per device request (32 MiB at 4 KiB) */

typedef struct run {
	blk64_t lblk, pblk;
	blk64_t len;
	bool uninit;
} run;

typedef struct runs {
	run *v;
	size_t n, cap;
} runs;

/* The leaf extents of ino (in order). EXT2_ET_OP_NOT_SUPPORTED when the
 * file has no extent tree (block maps, inline data). */
static errcode_t load_runs(s0__rootfs *r, ext2_ino_t ino, struct ext2_inode_large *in, runs *out)
{
	memset(out, 0, sizeof *out);
	if (!(in->i_flags & EXT4_EXTENTS_FL) || (in->i_flags & EXT4_INLINE_DATA_FL))
		return EXT2_ET_OP_NOT_SUPPORTED;
	ext2_extent_handle_t h;
	errcode_t ec = ext2fs_extent_open2(r->fs, ino, (struct ext2_inode *)in, &h);
	if (ec)
		return ec;
	struct ext2fs_extent ex;
	int op = EXT2_EXTENT_ROOT;
	while (!(ec = ext2fs_extent_get(h, op, &ex))) {
		op = EXT2_EXTENT_NEXT_LEAF;
		if (!(ex.e_flags & EXT2_EXTENT_FLAGS_LEAF) || !ex.e_len)
			continue;
		if (out->n == out->cap) {
			size_t nc = out->cap ? out->cap * 2 : 8;
			run *nv = realloc(out->v, nc * sizeof *nv);
			if (!nv) {
				ec = EXT2_ET_NO_MEMORY;
				break;
			}
			out->v = nv;
			out->cap = nc;
		}
		out->v[out->n++] = (run){ex.e_lblk, ex.e_pblk, ex.e_len,
		                         (ex.e_flags & EXT2_EXTENT_FLAGS_UNINIT) != 0};
	}
	ext2fs_extent_free(h);
	if (ec == EXT2_ET_EXTENT_NO_NEXT || ec == EXT2_ET_EXTENT_NO_DOWN)
		ec = 0;
	if (ec) {
		free(out->v);
		out->v = NULL;
	}
	return ec;
}

/* Read count whole blocks at pblk into dst, in requests of RUN_MAX_BLOCKS. */
static errcode_t read_blocks(ext2_filsys fs, blk64_t pblk, blk64_t count, char *dst)
{
	while (count) {
		blk64_t k = count < RUN_MAX_BLOCKS ? count : RUN_MAX_BLOCKS;
		errcode_t ec = s0__ext4io_read_data(fs->io, pblk, k, dst);
		if (ec)
			return ec;
		pblk += k;
		count -= k;
		dst += k * fs->blocksize;
	}
	return 0;
}

static errcode_t write_blocks(ext2_filsys fs, blk64_t pblk, blk64_t count, const char *src)
{
	while (count) {
		blk64_t k = count < RUN_MAX_BLOCKS ? count : RUN_MAX_BLOCKS;
		errcode_t ec = s0__ext4io_write_data(fs->io, pblk, k, src);
		if (ec)
			return ec;
		pblk += k;
		count -= k;
		src += k * fs->blocksize;
	}
	return 0;
}

/* Bytes [off, off + n) of the file's logical block range covered by run x
 * into buf (buf[0] is file byte `base`); partial blocks through bounce. */
static errcode_t read_run(ext2_filsys fs, const run *x, uint64_t off, uint64_t n, uint64_t base,
                          char *buf, char *bounce)
{
	uint64_t bs = fs->blocksize;
	uint64_t rs = x->lblk * bs, re = (x->lblk + x->len) * bs;
	uint64_t s = off > rs ? off : rs, e = off + n < re ? off + n : re;
	if (s >= e)
		return 0;
	if (x->uninit) { /* allocated, never written: zeros */
		memset(buf + (s - base), 0, e - s);
		return 0;
	}
	while (s < e) {
		blk64_t lb = s / bs;
		blk64_t pb = x->pblk + (lb - x->lblk);
		uint64_t in = s % bs;
		if (in || e - s < bs) { /* a partial block */
			uint64_t take = bs - in < e - s ? bs - in : e - s;
			errcode_t ec = s0__ext4io_read_data(fs->io, pb, 1, bounce);
			if (ec)
				return ec;
			memcpy(buf + (s - base), bounce + in, take);
			s += take;
			continue;
		}
		blk64_t whole = (e - s) / bs;
		errcode_t ec = read_blocks(fs, pb, whole, buf + (s - base));
		if (ec)
			return ec;
		s += whole * bs;
	}
	return 0;
}

errcode_t s0__rfs_read_runs(s0__rootfs *r, ext2_ino_t ino, struct ext2_inode_large *in,
                            uint64_t off, uint64_t n, char *buf)
{
	runs rs;
	errcode_t ec = load_runs(r, ino, in, &rs);
	if (ec)
		return ec;
	char *bounce = malloc(r->fs->blocksize);
	if (!bounce) {
		free(rs.v);
		return EXT2_ET_NO_MEMORY;
	}
	/* Runs in logical order; what no run covers (holes) reads as zeros. */
	uint64_t bs = r->fs->blocksize, done = off; /* file bytes [off, done) are filled */
	for (size_t i = 0; i < rs.n && !ec; i++) {
		uint64_t rs0 = rs.v[i].lblk * bs, re = (rs.v[i].lblk + rs.v[i].len) * bs;
		uint64_t s = rs0 > off ? rs0 : off, e = re < off + n ? re : off + n;
		if (s >= e)
			continue;
		if (s > done)
			memset(buf + (done - off), 0, s - done);
		ec = read_run(r->fs, &rs.v[i], off, n, off, buf, bounce);
		if (e > done)
			done = e;
	}
	if (!ec && done < off + n)
		memset(buf + (done - off), 0, off + n - done);
	free(bounce);
	free(rs.v);
	return ec;
}

errcode_t s0__rfs_write_runs(s0__rootfs *r, ext2_ino_t ino, struct ext2_inode_large *in,
                             const char *data, size_t len)
{
	ext2_filsys fs = r->fs;
	uint64_t bs = fs->blocksize;
	blk64_t nblocks = (len + bs - 1) / bs;
	runs rs;
	errcode_t ec = load_runs(r, ino, in, &rs);
	if (ec)
		return ec;
	/* Every block of [0, nblocks) initialised and in order, or the caller's path. */
	blk64_t next = 0;
	for (size_t i = 0; i < rs.n && next < nblocks; i++) {
		if (rs.v[i].lblk != next || rs.v[i].uninit)
			break;
		next += rs.v[i].len;
	}
	if (next < nblocks) {
		free(rs.v);
		return EXT2_ET_OP_NOT_SUPPORTED;
	}
	size_t whole = len - len % bs;
	for (size_t i = 0; i < rs.n && !ec; i++) {
		const run *x = &rs.v[i];
		uint64_t s = x->lblk * bs;
		if (s >= whole)
			break;
		uint64_t e = (x->lblk + x->len) * bs < whole ? (x->lblk + x->len) * bs : whole;
		ec = write_blocks(fs, x->pblk, (e - s) / bs, data + s);
	}
	if (!ec && whole < len) {
		/* The last block goes out whole, zero-padded, so no stale bytes of
		 * a previously freed block stay behind EOF. */
		char *tail = calloc(1, bs);
		blk64_t lb = whole / bs, pb = 0;
		for (size_t i = 0; i < rs.n; i++)
			if (lb >= rs.v[i].lblk && lb < rs.v[i].lblk + rs.v[i].len)
				pb = rs.v[i].pblk + (lb - rs.v[i].lblk);
		ec = tail ? 0 : EXT2_ET_NO_MEMORY;
		if (!ec) {
			memcpy(tail, data + whole, len - whole);
			ec = s0__ext4io_write_data(fs->io, pb, 1, tail);
		}
		free(tail);
	}
	free(rs.v);
	return ec;
}
