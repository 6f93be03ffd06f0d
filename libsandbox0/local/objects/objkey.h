/*
 * The installation key: 32 secret bytes from which the object store derives
 * its id-hashing key and its key-wrapping key. Losing it makes every object
 * unreadable; exposing it exposes every object.
 */
#ifndef S0_OBJKEY_H
#define S0_OBJKEY_H

#include <stdbool.h>
#include <stdint.h>

#include "common/internal.h"

/** Bytes of an installation key. */
#define S0__OBJKEY_BYTES 32

/**
 * Load the key file at path, or create it (random, mode 0600, durable:
 * written to a temporary file, fsynced, linked into place, directory
 * fsynced) when it does not exist. Two processes racing to create it end up
 * with the same key (the loser loads the winner's).
 *
 * @param path        key file path; its directory must exist.
 * @param[out] key    the key on success.
 * @param[out] created_out  (nullable) whether this call created the file.
 * @retval S0_ECORRUPT  the file exists but is not exactly 32 bytes.
 * @retval S0_EINVAL    the file is readable by group or others.
 * @retval S0_EIO       it could not be read or created (errno in message).
 * @threadsafety safe
 */
int s0__objkey_load_or_create(const char *path, uint8_t key[S0__OBJKEY_BYTES],
                              bool *created_out, s0_error **err);

#endif
