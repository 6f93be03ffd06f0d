/*
 * Object ids: 32-byte keyed BLAKE2b-256 digests of an object's plaintext
 * (see objstore.h). Helpers to compare, print and parse them.
 *
 * Thread safety: pure functions on caller-owned values.
 */
#ifndef S0_OBJID_H
#define S0_OBJID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"

/** Bytes in an object id. */
#define S0__OBJID_BYTES 32
/** Bytes of a hex id including its NUL. */
#define S0__OBJID_HEX_BYTES 65

/**
 * An object id. All-zero is reserved: it never names a stored object and
 * means "absent" (for the block store: an all-zero chunk or page).
 */
typedef struct s0__objid {
	uint8_t b[S0__OBJID_BYTES];
} s0__objid;

/** Whether id is the reserved all-zero id. */
bool s0__objid_is_zero(const s0__objid *id);

/** Whether a and b are equal. */
bool s0__objid_eq(const s0__objid *a, const s0__objid *b);

/** memcmp-style order of a and b (for sorting). */
int s0__objid_cmp(const s0__objid *a, const s0__objid *b);

/**
 * Lower-case hex of id into out (64 digits and a NUL).
 * @param[out] out  caller buffer of S0__OBJID_HEX_BYTES.
 */
void s0__objid_hex(const s0__objid *id, char out[S0__OBJID_HEX_BYTES]);

/**
 * Parse 64 hex digits (either case, nothing else) into *out.
 * @retval S0_EINVAL  not exactly 64 hex digits; *out untouched.
 */
int s0__objid_parse(const char *hex, s0__objid *out, s0_error **err);

/** A well-mixed 64-bit value of id for hash tables (ids are uniform). */
uint64_t s0__objid_hash64(const s0__objid *id);

#endif
