/* Shared helpers of the block store suites. */
#ifndef S0_BLKTEST_H
#define S0_BLKTEST_H

#include <check.h>
#include <stdint.h>

#include "local/blocks/bstore.h"

Suite *s0_bstore_suite(void);
Suite *s0_bstore_gc_suite(void);
Suite *s0_bstore_model_suite(void);
Suite *s0_bstore_crash_suite(void);
Suite *s0_bstore_corrupt_suite(void);
Suite *s0_bstore_gen_decode_suite(void);

/* A store (objects + blocks) in a temp dir. */
typedef struct blk_env {
	char *dir;
	char *objdir;
	s0__objstore *os;
	s0__bstore *bs;
	s0__bstore_options opts;
	/* GC roots reported by blk_roots() */
	s0__genid roots[256];
	int n_roots;
} blk_env;

/* Open a fresh env with chunk size cs (0: default). */
void blk_open(blk_env *e, uint32_t cs);
/* Close and reopen the stores (branches must be freed). */
void blk_reopen(blk_env *e);
/* Close and remove everything. */
void blk_close(blk_env *e);
/* The roots provider used by blk_open: reports e->roots. */
int blk_roots(void *payload, s0__gc_emit_fn emit, void *emit_ctx, s0_error **err);
/* Deterministic compressible bytes. */
void blk_fill(void *buf, size_t len, uint64_t seed);
/* Assert that x (which passes &err_ as its error slot) returns S0_OK,
 * printing the error otherwise. */
#define OK(x)                                                                         \
	do {                                                                              \
		s0_error *err_ = NULL;                                                        \
		int rc_ = (x);                                                                \
		ck_assert_msg(rc_ == S0_OK, "%s: %s", #x,                                     \
		              err_ ? s0_error_message(err_) : s0_code_name(rc_));             \
		s0_error_free(err_);                                                          \
	} while (0)
/* Assert that x returns code (err_ available as above). */
#define FAILS(code, x)                                                                \
	do {                                                                              \
		s0_error *err_ = NULL;                                                        \
		int rc_ = (x);                                                                \
		ck_assert_msg(rc_ == (code), "%s: got %s, want %s", #x, s0_code_name(rc_),    \
		              s0_code_name(code));                                            \
		s0_error_free(err_);                                                          \
	} while (0)

#endif
