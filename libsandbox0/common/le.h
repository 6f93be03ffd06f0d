/*
 * Little-endian fixed-width integers in byte buffers, for the on-disk and
 * in-bucket formats (packs, generations, indexes, tombstones). Pure
 * functions of their arguments: thread-safe, never fail.
 */
#ifndef S0_COMMON_LE_H
#define S0_COMMON_LE_H

#include <stdint.h>

/** Store v at p[0..3], least significant byte first. */
static inline void s0__le_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/** Store v at p[0..7], least significant byte first. */
static inline void s0__le_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/** The value stored at p[0..3] by s0__le_put32(). */
static inline uint32_t s0__le_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/** The value stored at p[0..7] by s0__le_put64(). */
static inline uint64_t s0__le_get64(const uint8_t *p)
{
	return (uint64_t)s0__le_get32(p) | (uint64_t)s0__le_get32(p + 4) << 32;
}

#endif
