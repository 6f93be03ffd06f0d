/*
 * Where an S3 object store lives: the URL given as its name
 * (s0_local_options.object_store, s0 serve --objects) and the credentials
 * from the environment.
 *
 *   s3://BUCKET[/PREFIX]?endpoint=http://HOST:PORT[&region=R][&cache_mb=N]
 *        [&gc_grace_s=S]
 *
 * endpoint is required (path-style requests go to ENDPOINT/BUCKET/KEY);
 * region defaults to "us-east-1"; PREFIX (letters, digits, '.', '_', '-',
 * '/') puts every key of this store under PREFIX/; cache_mb bounds the
 * local read cache (default 512); gc_grace_s (default 600) is how long GC
 * leaves a new pack's objects alone and must exceed the longest pause's
 * publish (s3tomb.h); 0 only when one node uses the bucket. The credentials come from
 * AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY only, never from the URL, and
 * no message or log line ever contains them.
 */
#ifndef S0_S3CONF_H
#define S0_S3CONF_H

#include <stdbool.h>
#include <stdint.h>

#include "common/internal.h"

/** The URL scheme that selects the S3 backend. */
#define S0__S3_SCHEME "s3://"

/** A parsed store location. Strings are owned (s0__s3conf_clear()). */
typedef struct s0__s3conf {
	char *endpoint;       /**< e.g. "http://127.0.0.1:8333", no trailing '/' */
	char *bucket;         /**< bucket name */
	char *prefix;         /**< "" or "PREFIX/" */
	char *region;         /**< SigV4 region */
	char *access_key;     /**< AWS_ACCESS_KEY_ID */
	char *secret_key;     /**< AWS_SECRET_ACCESS_KEY (never printed) */
	uint64_t cache_bytes; /**< bound of the local read cache in bytes */
	uint64_t gc_grace_ms; /**< GC spares packs younger than this (ms) */
} s0__s3conf;

/** Whether name is an S3 store URL (starts with "s3://"). */
bool s0__s3conf_is_url(const char *name);

/**
 * Parse url and read the credentials from the environment.
 * @param[out] out  filled (clear with s0__s3conf_clear(), also after failure).
 * @retval S0_EINVAL reason "object_store_url": the URL is malformed (the
 *                   message names the part); reason "object_store_credentials":
 *                   AWS_ACCESS_KEY_ID or AWS_SECRET_ACCESS_KEY is unset.
 * @retval S0_ENOMEM
 */
int s0__s3conf_parse(const char *url, s0__s3conf *out, s0_error **err);

/** Free the strings of c (wiping the secret); safe on a zeroed struct. */
void s0__s3conf_clear(s0__s3conf *c);

#endif
