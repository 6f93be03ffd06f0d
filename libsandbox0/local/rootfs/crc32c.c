/*
 * CRC32C for libext2fs's metadata checksums, with the CPU's crc32
 * instruction (issue #22).
 *
 * libext2fs computes the metadata_csum checksums of every directory block,
 * inode, bitmap and extent block it reads or writes with
 * ext2fs_crc32c_le(), a table (slicing-by-8) implementation; in the files
 * API's small-file workloads that was a third of the CPU time
 * (bench/rootfs/README.md). libext2fs calls it through its PLT, so this
 * definition, exported by libsandbox0 (libsandbox0.map) and by programs
 * linking the library statically, is the one every call in the process
 * resolves to. It computes exactly the same function: the reflected CRC32C
 * (Castagnoli, polynomial 0x82F63B78) update of crc over p[0..len) with no
 * inversion, which is what the SSE4.2 crc32 instruction computes; without
 * SSE4.2 a table is used. tests/unit/rootfs/check_rootfs_cache.c checks it
 * against the bitwise definition, and every rootfs test's `e2fsck -fn`
 * checks the checksums it wrote.
 *
 * Only built for x86-64 (other machines keep libext2fs's own).
 */
#if defined(__x86_64__) && defined(__GNUC__)

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <string.h>

#include "local/rootfs/crc32c.h"

static uint32_t table[256];
static int have_hw; /* set once, by probe() */
static pthread_once_t probed = PTHREAD_ONCE_INIT;

/*
 * The crc32 instruction has a latency of three cycles and a throughput of
 * one, so one serial chain runs at a third of the CPU's speed. Long
 * buffers are cut into rounds of three equal streams computed side by side
 * (the second and third from 0) and joined by linearity: the update over
 * A || B from c equals the update of c over |B| zero bytes, xor the update
 * over B from 0. The zero-byte update is a linear map of the 32-bit
 * register, applied as four table lookups (one per register byte).
 * A 4 KiB metadata block is one long round (3 x 1360 bytes) and 16 serial
 * bytes.
 */
#define LONG_STREAM 1360u /* bytes per stream, a multiple of 8 */
#define SHORT_STREAM 168u

static uint32_t shift_long[4][256], shift_short[4][256]; /* filled by probe() */

__attribute__((target("sse4.2"))) static uint64_t crc_serial8(uint64_t c, const unsigned char *p,
                                                              size_t words)
{
	for (; words; words--, p += 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
	}
	return c;
}

/* sh[k][b] = the register after @p n zero bytes from b << 8k. */
__attribute__((target("sse4.2"))) static void build_shift(uint32_t sh[4][256], size_t n)
{
	static const unsigned char zeros[LONG_STREAM];
	uint32_t bit[32];
	for (int j = 0; j < 32; j++)
		bit[j] = (uint32_t)crc_serial8(1u << j, zeros, n / 8);
	for (int k = 0; k < 4; k++)
		for (uint32_t b = 0; b < 256; b++) {
			uint32_t v = 0;
			for (int i = 0; i < 8; i++)
				if (b & (1u << i))
					v ^= bit[8 * k + i];
			sh[k][b] = v;
		}
}

static void probe(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
		table[i] = c;
	}
	__builtin_cpu_init();
	have_hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
	if (have_hw) {
		build_shift(shift_long, LONG_STREAM);
		build_shift(shift_short, SHORT_STREAM);
	}
}

void s0__crc32c_init(void)
{
	pthread_once(&probed, probe);
}

static uint32_t shift(uint32_t sh[4][256], uint32_t c)
{
	return sh[0][c & 0xFF] ^ sh[1][(c >> 8) & 0xFF] ^ sh[2][(c >> 16) & 0xFF] ^ sh[3][c >> 24];
}

/* Rounds of three streams of @p n bytes each while they fit. */
__attribute__((target("sse4.2"))) static uint64_t crc_rounds(uint64_t c, const unsigned char **pp,
                                                             size_t *lenp, size_t n,
                                                             uint32_t sh[4][256])
{
	const unsigned char *p = *pp;
	size_t len = *lenp;
	for (; len >= 3 * n; len -= 3 * n, p += 3 * n) {
		uint64_t c1 = 0, c2 = 0;
		for (size_t i = 0; i < n; i += 8) {
			uint64_t a, b, d;
			memcpy(&a, p + i, 8);
			memcpy(&b, p + n + i, 8);
			memcpy(&d, p + 2 * n + i, 8);
			c = __builtin_ia32_crc32di(c, a);
			c1 = __builtin_ia32_crc32di(c1, b);
			c2 = __builtin_ia32_crc32di(c2, d);
		}
		c = shift(sh, (uint32_t)c) ^ (uint32_t)c1;
		c = shift(sh, (uint32_t)c) ^ (uint32_t)c2;
	}
	*pp = p;
	*lenp = len;
	return c;
}

__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const unsigned char *p,
                                                          size_t len)
{
	uint64_t c = crc;
	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	c = crc_rounds(c, &p, &len, LONG_STREAM, shift_long);
	c = crc_rounds(c, &p, &len, SHORT_STREAM, shift_short);
	c = crc_serial8(c, p, len / 8);
	p += len - len % 8;
	len %= 8;
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return (uint32_t)c;
}

static uint32_t crc_table(uint32_t crc, const unsigned char *p, size_t len)
{
	while (len--)
		crc = (crc >> 8) ^ table[(crc ^ *p++) & 0xFF];
	return crc;
}

uint32_t s0__crc32c_le(uint32_t crc, const unsigned char *p, size_t len)
{
	s0__crc32c_init(); /* once per process: the table and the CPU probe are published by it */
	return have_hw ? crc_hw(crc, p, len) : crc_table(crc, p, len);
}

/* The interposer (see above): exported despite the library's hidden default. */
__attribute__((visibility("default"))) uint32_t ext2fs_crc32c_le(uint32_t crc, unsigned char const *p, size_t len)
{
	return s0__crc32c_le(crc, p, len);
}

#endif
