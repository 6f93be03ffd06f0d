/*
 * The sealed object format: what every object store backend stores.
 *
 *   id      = BLAKE2b-256(plaintext, key = id_key)       (the address)
 *   payload = zstd(plaintext) when that is smaller, else plaintext
 *   sealed  = header(16) | key_nonce(24) | wrap(data_key)(48)
 *             | data_nonce(24) | XChaCha20-Poly1305(payload, data_key)
 *
 * The header holds magic "S0B1", version, flags (compressed) and the
 * plaintext length. data_key is 32 random bytes per object, wrapped with
 * XChaCha20-Poly1305 under wrap_key. Both AEADs take header || id as
 * associated data, so a sealed object moved to another id, truncated,
 * extended or edited anywhere fails to open; the plaintext is also re-hashed
 * against the id after decompression. id_key and wrap_key are derived from
 * the 32-byte installation key with crypto_kdf (contexts "s0objid_",
 * "s0objwrp"), so ids reveal nothing about plaintext to anyone without it.
 */
#ifndef S0_CODEC_H
#define S0_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/internal.h"
#include "local/objects/objid.h"
#include "local/objects/objkey.h"

/** Largest plaintext one object may hold (64 MiB). */
#define S0__OBJ_MAX_PLAIN ((size_t)64 << 20)
/** Fixed bytes a sealed object adds to its payload. */
#define S0__OBJ_OVERHEAD 128

/** Keys derived from the installation key. */
typedef struct s0__objkeys {
	uint8_t id_key[32];
	uint8_t wrap_key[32];
} s0__objkeys;

/**
 * Derive the object keys from an installation key.
 * @threadsafety safe
 */
void s0__objkeys_derive(const uint8_t key[S0__OBJKEY_BYTES], s0__objkeys *out);

/** Wipe keys from memory. */
void s0__objkeys_wipe(s0__objkeys *k);

/**
 * Id of plaintext (keyed BLAKE2b-256).
 * @threadsafety safe
 */
void s0__obj_hash(const s0__objkeys *k, const void *data, size_t len, s0__objid *out);

/**
 * Per-thread codec state: zstd contexts and scratch buffers. One thread at a
 * time; make one per worker thread.
 */
typedef struct s0__objctx s0__objctx;

/**
 * Make a codec context.
 * @param level  zstd level for sealing (e.g. 1; 0 means 1).
 * @param[out] out  (transfer full) free with s0__objctx_free().
 * @retval S0_ENOMEM
 */
int s0__objctx_new(int level, s0__objctx **out, s0_error **err);

/** Free a context; NULL is a no-op. */
void s0__objctx_free(s0__objctx *cx);

/**
 * A byte buffer owned by the context for sealed bytes in flight (the store
 * reads and seals through it to avoid an allocation per object).
 * @return (transfer none) valid until s0__objctx_free().
 */
s0__buf *s0__objctx_io(s0__objctx *cx);

/**
 * Seal plaintext whose id is already known.
 * @param id     s0__obj_hash() of data (the caller's; not re-checked).
 * @param len    at most S0__OBJ_MAX_PLAIN bytes.
 * @param[out] out  replaced with the sealed bytes.
 * @retval S0_EINVAL  len too large.
 * @retval S0_ENOMEM
 */
int s0__obj_seal(s0__objctx *cx, const s0__objkeys *k, const s0__objid *id, const void *data,
                 size_t len, s0__buf *out, s0_error **err);

/**
 * Open a sealed object: authenticate, decrypt, decompress, verify the id.
 * @param cap    capacity of buf in bytes.
 * @param[out] buf      plaintext (only valid on success).
 * @param[out] len_out  plaintext length.
 * @retval S0_ECORRUPT  anything fails verification; the message names id.
 * @retval S0_EINVAL    the plaintext would exceed cap (message has its size).
 */
int s0__obj_open(s0__objctx *cx, const s0__objkeys *k, const s0__objid *id, const void *sealed,
                 size_t sealed_len, void *buf, size_t cap, size_t *len_out, s0_error **err);

/**
 * Plaintext length recorded in a sealed object's header (unauthenticated;
 * use only to size a buffer for s0__obj_open).
 * @retval S0_ECORRUPT  not a sealed object.
 */
int s0__obj_plain_len(const void *sealed, size_t sealed_len, size_t *len_out, const s0__objid *id,
                      s0_error **err);

#endif
