/*
 * S3 requests over libcurl: path-style URLs, SigV4 signing by libcurl
 * (CURLOPT_AWS_SIGV4; nothing is signed here), transfers run together on
 * one curl multi handle, connections and DNS shared by every request of a
 * client through a curl share handle.
 *
 * Retries: a transfer that fails to connect, breaks off, times out or gets
 * 5xx/429 is retried with exponential backoff (25 ms doubling, 6 attempts,
 * about 0.8 s in all); one still failing then makes the call fail with
 * S0_EUNAVAILABLE (reason "object_store"), the same error the engine's
 * object_store fault point gives, so a caller above retries the step later.
 *
 * Thread safety: a client is safe from any number of threads; one call's
 * requests are the calling thread's.
 */
#ifndef S0_S3HTTP_H
#define S0_S3HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/internal.h"
#include "local/objects/s3/s3conf.h"
#include "local/objects/s3/s3xml.h"

typedef struct s0__s3 s0__s3;

/** One request. */
typedef struct s0__s3req {
	const char *method; /**< "GET", "PUT", "HEAD" or "DELETE" */
	const char *key;    /**< key below the store's prefix; NULL: the bucket itself */
	const char *query;  /**< (nullable) query in canonical form: sorted, escaped */
	const void *body;   /**< PUT body (borrowed for the call), len bytes */
	size_t len;
	bool unsigned_body; /**< PUT: send x-amz-content-sha256 UNSIGNED-PAYLOAD
	                         (the signature then does not cover the body; for
	                         bodies whose content the reader verifies itself) */
	const char *range;  /**< (nullable) GET only: "FIRST-LAST" byte offsets, inclusive
	                         (sent as `Range: bytes=`, answered 206) */
	s0__buf *out;       /**< (nullable) response body (replaced) */
	long status;        /**< [out] HTTP status of the last attempt */
	int64_t length;     /**< [out] Content-Length of the answer, -1 when none */
	char code[64];      /**< [out] S3 error code of a non-2xx answer, or "" */
} s0__s3req;

/**
 * A client for conf (copied).
 * @param[out] out  (transfer full) free with s0__s3_free().
 */
int s0__s3_new(const s0__s3conf *conf, s0__s3 **out, s0_error **err);

/** Free a client; NULL is a no-op. */
void s0__s3_free(s0__s3 *s);

/**
 * Run n requests, up to 32 at once, retrying transient failures (see the
 * file comment). Blocks until every request has a final answer.
 * @retval S0_OK every request got an HTTP answer (any status but 5xx/429):
 *               read rq[i].status, or use s0__s3_check().
 * @retval S0_EUNAVAILABLE reason "object_store": one request could not be
 *               answered (endpoint down, 5xx) after every attempt.
 * @retval S0_ENOMEM
 */
int s0__s3_run(s0__s3 *s, s0__s3req *rq, size_t n, s0_error **err);

/**
 * The error of an answered request: S0_OK for 2xx; S0_ENOTFOUND (reason
 * "object_missing") for 404; S0_EAUTH (reason "object_store_auth") for
 * 401/403 — the credentials from the environment were refused, the message
 * says which S3 code but never the credentials; S0_EIO (reason
 * "object_store") for any other status.
 */
int s0__s3_check(const s0__s3 *s, const s0__s3req *rq, s0_error **err);

/**
 * List every key under the store's prefix followed by sub (e.g. "x/"), page
 * after page (ListObjectsV2), calling cb for each key in key order. Blocks
 * for the requests; thread-safe as s0__s3_run().
 * @param sub    folder below the prefix (borrowed), e.g. "d/".
 * @param after  whole key (with the prefix) to list after, or NULL.
 * @retval S0_EUSER cb returned non-zero (the listing stopped there).
 * @retval S0_ENOMEM, or the errors of s0__s3_run() / s0__s3_check() /
 *         s0__s3xml_list().
 */
int s0__s3_list(s0__s3 *s, const char *sub, const char *after, s0__s3xml_key_cb cb,
                void *payload, s0_error **err);

/** The endpoint (for messages). @return (transfer none) */
const char *s0__s3_endpoint(const s0__s3 *s);

/** The store's key prefix ("" or "PREFIX/"). @return (transfer none) */
const char *s0__s3_prefix(const s0__s3 *s);

/** The bucket's name. @return (transfer none) */
const char *s0__s3_bucket(const s0__s3 *s);

#endif
