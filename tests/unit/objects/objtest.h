/* Shared helpers of the object store suites. */
#ifndef S0_OBJTEST_H
#define S0_OBJTEST_H

#include <check.h>
#include <stdbool.h>
#include <stdint.h>

#include "local/objects/objstore.h"

Suite *s0_objects_suite(void);
/* The backend's own tests (check_objdir.c): common ones, plus the pack
 * backend's or the files backend's (check_objfiles.c) as the run chooses. */
Suite *s0_objstore_backend_suite(void);
/* The files backend's tests and the backend choice's tests (check_objfiles.c). */
TCase *objtest_files_tcase(void);
TCase *objtest_choice_tcase(void);
/* The S3 backend's tests (check_objs3.c; a run with S0_TEST_OBJECT_STORE=s3). */
TCase *objtest_s3_tcase(void);
/* Read id back; its status code (with the id named in the message when
 * want_id_in_msg and it fails). */
int objtest_get_code(s0__objstore *os, const s0__objid *id, bool want_id_in_msg);
/* Flip one bit of the byte at off in path. */
void objtest_flip_at(const char *path, uint64_t off);

/* A store in a fresh temp dir with key byte k; *dir_out is freed by the caller. */
s0__objstore *objtest_open(char **dir_out, uint8_t k);
/* Reopen the store in dir with key byte k. */
s0__objstore *objtest_reopen(const char *dir, uint8_t k);
/* Fill buf with deterministic, moderately compressible bytes. */
void objtest_fill(void *buf, size_t len, uint64_t seed);
/* Put one object in its own batch; returns its id. */
s0__objid objtest_put1(s0__objstore *os, const void *data, size_t len);

#endif
