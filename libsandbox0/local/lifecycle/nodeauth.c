/*
 * The node channel's authentication (docs/scaling.md "Node channel"): a
 * request one node forwards to another carries
 *   X-S0-Node-Auth: v1 <node id> <unix ms> <nonce, 32 hex> <tag, 64 hex>
 * where the tag is libsodium's crypto_auth (HMAC-SHA-512-256) of
 *   "s0node1\n" id "\n" ms "\n" nonce "\n" method "\n" target "\n" hex(BLAKE2b(body))
 * under the channel key (crypto_kdf of the installation key, storage.c).
 * The receiver accepts a time within SKEW_MS of its clock and each nonce
 * once: the nonces of the last accepted requests are kept, and a time at
 * or before the oldest forgotten one is refused (it could be a replay).
 */
#include <inttypes.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "local/lifecycle/engine_internal.h"

#define SKEW_MS 30000
#define SEEN_MAX 8192

/* Nonces accepted lately, in every engine of the process (nonces are
 * random: one set serves them all). */
static struct {
	pthread_mutex_t mu;
	char nonce[SEEN_MAX][33];
	int64_t ts[SEEN_MAX];
	size_t next, len;
	int64_t floor_ms; /* time of the newest forgotten nonce */
} seen = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void tag_of(s0__engine *e, const char *id, int64_t ms, const char *nonce,
                   const char *method, const char *target, const void *body, size_t body_len,
                   unsigned char tag[crypto_auth_BYTES])
{
	unsigned char h[32];
	char hh[65];
	crypto_generichash(h, sizeof h, body, body_len, NULL, 0);
	sodium_bin2hex(hh, sizeof hh, h, sizeof h);
	crypto_auth_hmacsha512256_state st;
	char head[S0__ID_MAX + 96];
	int n = snprintf(head, sizeof head, "s0node1\n%s\n%" PRId64 "\n%s\n", id, ms, nonce);
	crypto_auth_hmacsha512256_init(&st, s0__storage_node_key(e->storage), 32);
	crypto_auth_hmacsha512256_update(&st, (const unsigned char *)head, (size_t)n);
	crypto_auth_hmacsha512256_update(&st, (const unsigned char *)method, strlen(method));
	crypto_auth_hmacsha512256_update(&st, (const unsigned char *)"\n", 1);
	crypto_auth_hmacsha512256_update(&st, (const unsigned char *)target, strlen(target));
	crypto_auth_hmacsha512256_update(&st, (const unsigned char *)"\n", 1);
	crypto_auth_hmacsha512256_update(&st, (const unsigned char *)hh, 64);
	crypto_auth_hmacsha512256_final(&st, tag);
}

void s0__engine_node_sign(s0__engine *e, const char *method, const char *target,
                          const void *body, size_t body_len, char out[S0__NODE_AUTH_MAX])
{
	unsigned char rnd[16], tag[crypto_auth_BYTES];
	char nonce[33], th[2 * crypto_auth_BYTES + 1];
	randombytes_buf(rnd, sizeof rnd);
	sodium_bin2hex(nonce, sizeof nonce, rnd, sizeof rnd);
	int64_t ms = wall_ms();
	tag_of(e, e->ctld.uid, ms, nonce, method, target, body, body_len, tag);
	sodium_bin2hex(th, sizeof th, tag, sizeof tag);
	snprintf(out, S0__NODE_AUTH_MAX, "v1 %s %" PRId64 " %s %s", e->ctld.uid, ms, nonce, th);
}

static int refuse(s0_error **err, const char *why)
{
	return s0__error_set(err, S0_EAUTH, "node_auth", "node channel: %s", why);
}

/* Record nonce at ms unless seen (seen.mu held); false when seen. */
static bool remember(const char *nonce, int64_t ms)
{
	for (size_t i = 0; i < seen.len; i++)
		if (!strcmp(seen.nonce[i], nonce))
			return false;
	if (seen.len == SEEN_MAX && seen.ts[seen.next] > seen.floor_ms)
		seen.floor_ms = seen.ts[seen.next];
	s0__strlcpy(seen.nonce[seen.next], nonce, sizeof seen.nonce[0]);
	seen.ts[seen.next] = ms;
	seen.next = (seen.next + 1) % SEEN_MAX;
	if (seen.len < SEEN_MAX)
		seen.len++;
	return true;
}

int s0__engine_node_verify(s0__engine *e, const char *value, const char *method,
                           const char *target, const void *body, size_t body_len,
                           s0_error **err)
{
	char id[S0__ID_MAX], nonce[40], th[2 * crypto_auth_BYTES + 8];
	int64_t ms = 0;
	unsigned char tag[crypto_auth_BYTES], want[crypto_auth_BYTES];
	if (!value || sscanf(value, "v1 %127s %" SCNd64 " %39s %135s", id, &ms, nonce, th) != 4 ||
	    strlen(nonce) != 32 || strlen(th) != 2 * crypto_auth_BYTES ||
	    sodium_hex2bin(tag, sizeof tag, th, strlen(th), NULL, NULL, NULL) < 0)
		return refuse(err, "malformed X-S0-Node-Auth");
	int64_t now = wall_ms();
	if (ms < now - SKEW_MS || ms > now + SKEW_MS)
		return refuse(err, "the request's time is too far from this node's clock");
	tag_of(e, id, ms, nonce, method, target, body, body_len, want);
	if (sodium_memcmp(tag, want, sizeof tag) != 0)
		return refuse(err, "the tag does not verify (another installation key?)");
	pthread_mutex_lock(&seen.mu);
	bool fresh = ms > seen.floor_ms && remember(nonce, ms);
	pthread_mutex_unlock(&seen.mu);
	return fresh ? S0_OK : refuse(err, "a replayed request");
}
