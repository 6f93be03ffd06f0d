/* Seal / open of one object: zstd + XChaCha20-Poly1305 + keyed BLAKE2b. */
#include "local/objects/codec.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "common/le.h"

#define HDR_BYTES 16
#define NONCE_BYTES crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
#define TAG_BYTES crypto_aead_xchacha20poly1305_ietf_ABYTES
#define DKEY_BYTES crypto_aead_xchacha20poly1305_ietf_KEYBYTES
#define OFF_KNONCE HDR_BYTES
#define OFF_WRAP (OFF_KNONCE + NONCE_BYTES)
#define OFF_DNONCE (OFF_WRAP + DKEY_BYTES + TAG_BYTES)
#define OFF_DATA (OFF_DNONCE + NONCE_BYTES)
#define AD_BYTES (HDR_BYTES + S0__OBJID_BYTES)
#define FLAG_ZSTD 1u

_Static_assert(OFF_DATA + TAG_BYTES == S0__OBJ_OVERHEAD, "sealed object overhead");

struct s0__objctx {
	ZSTD_CCtx *cctx;
	ZSTD_DCtx *dctx;
	int level;
	void *scratch;
	size_t scratch_cap;
	s0__buf io;
};

void s0__objkeys_derive(const uint8_t key[S0__OBJKEY_BYTES], s0__objkeys *out)
{
	crypto_kdf_derive_from_key(out->id_key, sizeof out->id_key, 1, "s0objid_", key);
	crypto_kdf_derive_from_key(out->wrap_key, sizeof out->wrap_key, 2, "s0objwrp", key);
}

void s0__objkeys_wipe(s0__objkeys *k)
{
	sodium_memzero(k, sizeof *k);
}

void s0__obj_hash(const s0__objkeys *k, const void *data, size_t len, s0__objid *out)
{
	crypto_generichash(out->b, S0__OBJID_BYTES, data, len, k->id_key, sizeof k->id_key);
}

int s0__objctx_new(int level, s0__objctx **out, s0_error **err)
{
	s0__objctx *cx = calloc(1, sizeof *cx);
	if (!cx)
		return s0__error_nomem(err);
	cx->cctx = ZSTD_createCCtx();
	cx->dctx = ZSTD_createDCtx();
	cx->level = level ? level : 1;
	if (!cx->cctx || !cx->dctx) {
		s0__objctx_free(cx);
		return s0__error_nomem(err);
	}
	*out = cx;
	return S0_OK;
}

void s0__objctx_free(s0__objctx *cx)
{
	if (!cx)
		return;
	ZSTD_freeCCtx(cx->cctx);
	ZSTD_freeDCtx(cx->dctx);
	free(cx->scratch);
	s0__buf_free(&cx->io);
	free(cx);
}

s0__buf *s0__objctx_io(s0__objctx *cx)
{
	return &cx->io;
}

static void *scratch(s0__objctx *cx, size_t n)
{
	if (n > cx->scratch_cap) {
		void *p = realloc(cx->scratch, n);
		if (!p)
			return NULL;
		cx->scratch = p;
		cx->scratch_cap = n;
	}
	return cx->scratch;
}

static void make_ad(uint8_t ad[AD_BYTES], const uint8_t *hdr, const s0__objid *id)
{
	memcpy(ad, hdr, HDR_BYTES);
	memcpy(ad + HDR_BYTES, id->b, S0__OBJID_BYTES);
}

int s0__obj_seal(s0__objctx *cx, const s0__objkeys *k, const s0__objid *id, const void *data,
                 size_t len, s0__buf *out, s0_error **err)
{
	if (len > S0__OBJ_MAX_PLAIN)
		return s0__error_set(err, S0_EINVAL, "object_too_large",
		                     "object of %zu bytes exceeds the %zu-byte limit", len,
		                     S0__OBJ_MAX_PLAIN);
	size_t bound = ZSTD_compressBound(len);
	uint8_t *z = scratch(cx, bound);
	if (!z)
		return s0__error_nomem(err);
	const void *payload = data;
	size_t plen = len;
	uint8_t flags = 0;
	size_t zn = ZSTD_compressCCtx(cx->cctx, z, bound, data, len, cx->level);
	if (!ZSTD_isError(zn) && zn < len) {
		payload = z;
		plen = zn;
		flags |= FLAG_ZSTD;
	}
	out->len = 0;
	if (s0__buf_grow(out, S0__OBJ_OVERHEAD + plen) < 0)
		return s0__error_nomem(err);
	uint8_t *o = (uint8_t *)out->data;
	memcpy(o, "S0B1", 4);
	o[4] = 1;
	o[5] = flags;
	o[6] = o[7] = 0;
	s0__le_put32(o + 8, (uint32_t)len);
	s0__le_put32(o + 12, (uint32_t)plen);
	uint8_t ad[AD_BYTES], dkey[DKEY_BYTES];
	make_ad(ad, o, id);
	randombytes_buf(o + OFF_KNONCE, NONCE_BYTES);
	randombytes_buf(o + OFF_DNONCE, NONCE_BYTES);
	crypto_aead_xchacha20poly1305_ietf_keygen(dkey);
	crypto_aead_xchacha20poly1305_ietf_encrypt(o + OFF_WRAP, NULL, dkey, sizeof dkey, ad,
	                                           sizeof ad, NULL, o + OFF_KNONCE, k->wrap_key);
	crypto_aead_xchacha20poly1305_ietf_encrypt(o + OFF_DATA, NULL, payload, plen, ad, sizeof ad,
	                                           NULL, o + OFF_DNONCE, dkey);
	sodium_memzero(dkey, sizeof dkey);
	out->len = S0__OBJ_OVERHEAD + plen;
	return S0_OK;
}

static int corrupt(s0_error **err, const s0__objid *id, const char *why)
{
	char hex[S0__OBJID_HEX_BYTES];
	s0__objid_hex(id, hex);
	return s0__error_set(err, S0_ECORRUPT, "object_corrupt", "object %s failed verification: %s",
	                     hex, why);
}

int s0__obj_plain_len(const void *sealed, size_t sealed_len, size_t *len_out, const s0__objid *id,
                      s0_error **err)
{
	const uint8_t *s = sealed;
	if (sealed_len < S0__OBJ_OVERHEAD || memcmp(s, "S0B1", 4) != 0 || s[4] != 1)
		return corrupt(err, id, "bad header");
	*len_out = s0__le_get32(s + 8);
	return S0_OK;
}

int s0__obj_open(s0__objctx *cx, const s0__objkeys *k, const s0__objid *id, const void *sealed,
                 size_t sealed_len, void *buf, size_t cap, size_t *len_out, s0_error **err)
{
	const uint8_t *s = sealed;
	size_t plain;
	int rc = s0__obj_plain_len(sealed, sealed_len, &plain, id, err);
	if (rc < 0)
		return rc;
	size_t plen = s0__le_get32(s + 12);
	bool z = s[5] & FLAG_ZSTD;
	if ((s[5] & ~FLAG_ZSTD) || s[6] || s[7] || plain > S0__OBJ_MAX_PLAIN)
		return corrupt(err, id, "bad header");
	if (plen != sealed_len - S0__OBJ_OVERHEAD)
		return corrupt(err, id, "truncated or extended");
	if (!z && plen != plain)
		return corrupt(err, id, "bad length");
	uint8_t ad[AD_BYTES], dkey[DKEY_BYTES];
	make_ad(ad, s, id);
	/* Unwrapping the key authenticates the header (it is associated data). */
	if (crypto_aead_xchacha20poly1305_ietf_decrypt(dkey, NULL, NULL, s + OFF_WRAP,
	                                               DKEY_BYTES + TAG_BYTES, ad, sizeof ad,
	                                               s + OFF_KNONCE, k->wrap_key) != 0)
		return corrupt(err, id, "key authentication failed");
	if (plain > cap) {
		sodium_memzero(dkey, sizeof dkey);
		return s0__error_set(err, S0_EINVAL, "buffer_too_small",
		                     "object holds %zu bytes, buffer has %zu", plain, cap);
	}
	uint8_t *dst = z ? scratch(cx, plen ? plen : 1) : buf;
	if (!dst) {
		sodium_memzero(dkey, sizeof dkey);
		return s0__error_nomem(err);
	}
	int dec = crypto_aead_xchacha20poly1305_ietf_decrypt(dst, NULL, NULL, s + OFF_DATA,
	                                                     plen + TAG_BYTES, ad, sizeof ad,
	                                                     s + OFF_DNONCE, dkey);
	sodium_memzero(dkey, sizeof dkey);
	if (dec != 0)
		return corrupt(err, id, "data authentication failed");
	if (z) {
		size_t n = ZSTD_decompressDCtx(cx->dctx, buf, plain, dst, plen);
		if (ZSTD_isError(n) || n != plain)
			return corrupt(err, id, "decompression failed");
	}
	s0__objid check;
	s0__obj_hash(k, buf, plain, &check);
	if (!s0__objid_eq(&check, id))
		return corrupt(err, id, "content hash mismatch");
	*len_out = plain;
	return S0_OK;
}
