/* Shared helpers of the object store suites. */
#ifndef S0_OBJTEST_H
#define S0_OBJTEST_H

#include <check.h>
#include <stdint.h>

#include "local/objects/objstore.h"

Suite *s0_objects_suite(void);
Suite *s0_objdir_suite(void);

/* A store in a fresh temp dir with key byte k; *dir_out is freed by the caller. */
s0__objstore *objtest_open(char **dir_out, uint8_t k);
/* Reopen the store in dir with key byte k. */
s0__objstore *objtest_reopen(const char *dir, uint8_t k);
/* Fill buf with deterministic, moderately compressible bytes. */
void objtest_fill(void *buf, size_t len, uint64_t seed);
/* Put one object in its own batch; returns its id. */
s0__objid objtest_put1(s0__objstore *os, const void *data, size_t len);

#endif
