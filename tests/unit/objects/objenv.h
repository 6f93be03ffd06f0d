/*
 * The object store backend a test run exercises: $S0_TEST_OBJECT_STORE
 * ("pack" when unset; meson runs each parametrised suite once per backend,
 * as <suite>-pack and <suite>-files). No check dependency: the crashers
 * link it too.
 */
#ifndef S0_OBJENV_H
#define S0_OBJENV_H

#include <stdbool.h>
#include <stdint.h>

#include "local/objects/objstore.h"

/* The backend's name ("pack", "files"). */
const char *objenv_backend(void);
/* Whether the backend is name. */
bool objenv_is(const char *name);
/* base + "-" + backend, e.g. "bstore-files" (static storage, for suite names). */
const char *objenv_name(const char *base);
/* The S3 URL of the store whose local dir is dir: $S0_TEST_S3_URL with a
 * prefix made of dir's last two path elements, so every test store starts
 * empty (malloc'd; NULL when the variable is unset). */
char *objenv_s3_url(const char *dir);
/* Open the store in dir with the backend (key: 32 bytes; s3: at
 * objenv_s3_url(dir), dir its local directory). */
int objenv_open(const char *dir, const uint8_t *key, s0__objstore **out, s0_error **err);
/* Where id's sealed bytes lie: *path (malloc'd), byte offset and length in
 * it (pack: inside its pack file; files: the whole object file). */
int objenv_locate(s0__objstore *os, const s0__objid *id, char **path, uint64_t *off,
                  uint64_t *len, s0_error **err);
/* Bytes of every object data file of the store in dir (pack: packs/;
 * files: the NN/ directories and tmp/), to compare with usage's file_bytes;
 * UINT64_MAX for s3, whose usage is its bucket listing. */
uint64_t objenv_data_bytes(const char *dir);

#endif
