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
}

void s0__crc32c_init(void)
{
	pthread_once(&probed, probe);
}

__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const unsigned char *p,
                                                          size_t len)
{
	uint64_t c = crc;
	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	for (; len >= 8; len -= 8, p += 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
	}
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
