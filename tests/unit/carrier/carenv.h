/*
 * A block store with one published template generation for the carrier
 * tests, the crasher and the benchmark: objects in <dir>/objects, a source
 * tree in <dir>/src (a few files a test reads back), the ext4 template built
 * by rootfs/template.h and imported into a new volume. No check dependency.
 */
#ifndef S0_TEST_CARENV_H
#define S0_TEST_CARENV_H

#include <stdint.h>

#include "local/blocks/bstore.h"

/* Files of the template (path inside the image, content). */
#define CARENV_HOSTNAME "carrier-template\n"
#define CARENV_DOC_BYTES (256u * 1024)

typedef struct carenv {
	char *dir;
	s0__objstore *os;
	s0__bstore *bs;
	s0__genid gen; /* the template generation (pinned) */
	uint64_t size;
} carenv;

/* Open a store in dir (created) and publish a template of size bytes
 * (multiple of 4096) holding /etc/hostname, /usr/share/doc/carrier.txt
 * (CARENV_DOC_BYTES of text from carenv_fill(seed 1)) and /bin. */
int carenv_open(carenv *e, const char *dir, uint64_t size, s0_error **err);
/* Close the stores (branches freed first); the directory stays. */
void carenv_close(carenv *e);
/* A new branch of the template generation. */
int carenv_branch(carenv *e, s0__branch **out, s0_error **err);
/* Deterministic text bytes. */
void carenv_fill(void *buf, size_t len, uint64_t seed);
/* Run argv (argv[0] absolute); stdout+stderr into *out (nullable, malloc'd);
 * the exit status or -1. */
int carenv_run(const char *const argv[], char **out);

#endif
