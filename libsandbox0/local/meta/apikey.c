/* The keyed hash API keys are stored under (meta.h s0__apikey_hash). */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "local/meta/meta.h"

#define SECRET_KV "apikey_hash_key"

/* The stored secret into key: 1 when there is one, 0 when not. */
static int read_secret(s0__meta *m, unsigned char key[crypto_generichash_KEYBYTES],
                       s0_error **err)
{
	char *hex = NULL;
	int rc = s0__meta_kv_get(m, SECRET_KV, &hex, err);
	if (rc < 0 || !hex)
		return rc;
	size_t len = 0;
	if (sodium_hex2bin(key, crypto_generichash_KEYBYTES, hex, strlen(hex), NULL, &len, NULL) <
	        0 ||
	    len != crypto_generichash_KEYBYTES)
		rc = s0__error_set(err, S0_EIO, "meta_store",
		                   "metadata store: the API key hashing secret is damaged");
	sodium_memzero(hex, strlen(hex));
	free(hex);
	return rc < 0 ? rc : 1;
}

/* This store's hashing secret: read it (one read, no transaction: every
 * request's authentication comes here), or make and store one (in a
 * transaction, so two threads agree on the first). */
static int secret(s0__meta *m, unsigned char key[crypto_generichash_KEYBYTES], s0_error **err)
{
	int rc = read_secret(m, key, err);
	if (rc != 0)
		return rc < 0 ? rc : S0_OK;
	rc = s0__meta_begin(m, err);
	if (rc < 0)
		return rc;
	char *hex = NULL;
	rc = s0__meta_kv_get(m, SECRET_KV, &hex, err);
	if (rc == S0_OK && hex) {
		size_t len = 0;
		if (sodium_hex2bin(key, crypto_generichash_KEYBYTES, hex, strlen(hex), NULL, &len,
		                   NULL) < 0 || len != crypto_generichash_KEYBYTES)
			rc = s0__error_set(err, S0_EIO, "meta_store",
			                   "metadata store: the API key hashing secret is damaged");
	} else if (rc == S0_OK) {
		char fresh[crypto_generichash_KEYBYTES * 2 + 1];
		randombytes_buf(key, crypto_generichash_KEYBYTES);
		sodium_bin2hex(fresh, sizeof fresh, key, crypto_generichash_KEYBYTES);
		rc = s0__meta_kv_put(m, SECRET_KV, fresh, err);
		sodium_memzero(fresh, sizeof fresh);
	}
	if (hex) {
		sodium_memzero(hex, strlen(hex));
		free(hex);
	}
	if (rc < 0) {
		s0__meta_rollback(m);
		return rc;
	}
	return s0__meta_commit(m, err);
}

int s0__apikey_hash(s0__meta *m, const char *key, char out[S0__APIKEY_HASH_HEX],
                    s0_error **err)
{
	if (!m || !key || !*key || !out)
		return s0__error_set(err, S0_EINVAL, "bad_request",
		                     "metadata store: an API key to hash is required");
	if (sodium_init() < 0)
		return s0__error_set(err, S0_ERROR, NULL, "libsodium could not be initialised");
	unsigned char k[crypto_generichash_KEYBYTES], d[32];
	int rc = secret(m, k, err);
	if (rc == S0_OK) {
		crypto_generichash(d, sizeof d, (const unsigned char *)key, strlen(key), k, sizeof k);
		sodium_bin2hex(out, S0__APIKEY_HASH_HEX, d, sizeof d);
	}
	sodium_memzero(k, sizeof k);
	return rc;
}
