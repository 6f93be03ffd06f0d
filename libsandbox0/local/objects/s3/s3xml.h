/*
 * The XML answers of S3 read with libxml2: ListObjectsV2 pages and error
 * bodies. Element names are matched without their namespace.
 */
#ifndef S0_S3XML_H
#define S0_S3XML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"

/** One listed key with its size in bytes; non-zero stops the page. */
typedef int (*s0__s3xml_key_cb)(const char *key, uint64_t size, void *payload);

/**
 * Read one ListObjectsV2 page: cb for each Contents entry in order.
 * @param[out] next_token  (transfer full) NextContinuationToken when the page
 *                         is truncated, else NULL.
 * @retval S0_EIO reason "object_store": not a listing.
 * @retval S0_EUSER cb stopped it.
 */
int s0__s3xml_list(const char *xml, size_t len, s0__s3xml_key_cb cb, void *payload,
                   char **next_token, s0_error **err);

/** The Code of an S3 error body into code (cap bytes; "" when none). */
void s0__s3xml_error_code(const char *xml, size_t len, char *code, size_t cap);

#endif
