/*
 * A tiny little-endian binary encoding shared by the runtime's state
 * blobs and the checkpoint manifest: fixed-width integers, length-prefixed
 * byte strings. The writer appends to an s0__buf; the reader checks every
 * bound and turns any violation into S0_ECORRUPT, so a damaged blob is
 * refused and never half-read into garbage.
 *
 * @threadsafety plain values: one thread per writer/reader.
 */
#ifndef S0_RUNTIME_RTSER_H
#define S0_RUNTIME_RTSER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/internal.h"

/** A writer: appends to @c buf; @c oom latches the first allocation failure. */
typedef struct s0__ser {
	s0__buf buf; /**< owned: free with s0__buf_free() or detach */
	bool oom;    /**< true once an append failed (later appends are no-ops) */
} s0__ser;

/** Append one byte. */
void s0__ser_u8(s0__ser *s, uint8_t v);
/** Append a 32-bit value, little-endian. */
void s0__ser_u32(s0__ser *s, uint32_t v);
/** Append a 64-bit value, little-endian. */
void s0__ser_u64(s0__ser *s, uint64_t v);
/** Append a signed 64-bit value (two's complement). */
void s0__ser_i64(s0__ser *s, int64_t v);
/** Append raw bytes (no length). */
void s0__ser_raw(s0__ser *s, const void *p, size_t n);
/** Append a u32 length then @p n bytes; @p p may be NULL when @p n is 0. */
void s0__ser_bytes(s0__ser *s, const void *p, size_t n);
/** Append a NUL-terminated string as bytes; NULL is written as "". */
void s0__ser_str(s0__ser *s, const char *str);

/**
 * A reader over borrowed bytes. After the first failure @c bad is set and
 * every later get returns zero values; check with s0__de_done().
 */
typedef struct s0__de {
	const uint8_t *p; /**< next byte (borrowed) */
	size_t left;      /**< bytes left */
	bool bad;         /**< a read ran past the end or a value was invalid */
} s0__de;

/** Start reading @p n bytes at @p p (borrowed; must outlive the reader). */
void s0__de_init(s0__de *d, const void *p, size_t n);
/** Read one byte (0 when bad). */
uint8_t s0__de_u8(s0__de *d);
/** Read a little-endian 32-bit value (0 when bad). */
uint32_t s0__de_u32(s0__de *d);
/** Read a little-endian 64-bit value (0 when bad). */
uint64_t s0__de_u64(s0__de *d);
/** Read a signed 64-bit value (0 when bad). */
int64_t s0__de_i64(s0__de *d);
/** Copy @p n raw bytes into @p out (zeroed when the reader is bad). */
void s0__de_raw(s0__de *d, void *out, size_t n);
/**
 * A length-prefixed byte string, borrowed from the input.
 * @param max  largest accepted length; longer marks the reader bad.
 * @return pointer into the input (NULL and *n_out 0 when bad).
 */
const void *s0__de_bytes(s0__de *d, size_t max, size_t *n_out);
/**
 * A string as a new NUL-terminated allocation (a NUL inside marks the
 * reader bad). @return (transfer full) the string, or NULL when bad or out
 * of memory (then *oom is set when non-NULL).
 */
char *s0__de_str(s0__de *d, size_t max, bool *oom);
/** Mark the reader bad (a decoded value failed validation). */
void s0__de_fail(s0__de *d);
/**
 * Finish: S0_OK when nothing failed (and, with @p exact, every byte was
 * consumed); else S0_ECORRUPT reason `corrupt` naming @p what.
 */
int s0__de_done(const s0__de *d, bool exact, const char *what, s0_error **err);

#endif
