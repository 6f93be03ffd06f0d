/*
 * CRC32C (crc32c.c): the reflected Castagnoli CRC update of crc over
 * p[0..len), no inversion (callers seed with ~0 and invert as their format
 * says), with the CPU's crc32 instruction when it has one. x86-64 only;
 * the same function also replaces libext2fs's ext2fs_crc32c_le there.
 * Thread-safe.
 */
#ifndef S0_ROOTFS_CRC32C_H
#define S0_ROOTFS_CRC32C_H

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define S0__HAVE_CRC32C 1
uint32_t s0__crc32c_le(uint32_t crc, const unsigned char *p, size_t len);
/* Probe the CPU and build the table; idempotent. s0__rootfs_lock's first
 * call runs it, which also links this file into every program that uses
 * the RootFS (so the replacement is in place before libext2fs runs). */
void s0__crc32c_init(void);
uint32_t ext2fs_crc32c_le(uint32_t crc, unsigned char const *p, size_t len);
#endif

#endif
