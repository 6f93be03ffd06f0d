/*
 * Helpers of the carrier suites: a per-test store and state dir, files
 * through the mounted tree, host cleanliness checks.
 */
#ifndef S0_TEST_CARTEST_H
#define S0_TEST_CARTEST_H

#include <check.h>
#include <stdbool.h>

#include "carenv.h"
#include "local/runtime/carrier/carrier.h"

Suite *carrier_basic_suite(void);
Suite *carrier_hostile_suite(void);
Suite *carrier_lazy_suite(void);
Suite *carrier_crash_suite(void);
Suite *carrier_tamper_suite(void);
Suite *carrier_pressure_suite(void);

/* The root of every test's directories (made by main, reclaimed and removed
 * at exit). */
extern char *ct_root;

#define CT_OK(x)                                                                      \
	do {                                                                              \
		s0_error *err_ = NULL;                                                        \
		int rc_ = (x);                                                                \
		ck_assert_msg(rc_ == S0_OK, "%s: %s", #x,                                     \
		              err_ ? s0_error_message(err_) : s0_code_name(rc_));             \
		s0_error_free(err_);                                                          \
	} while (0)
#define CT_FAILS(code, reason, x)                                                     \
	do {                                                                              \
		s0_error *err_ = NULL;                                                        \
		int rc_ = (x);                                                                \
		ck_assert_msg(rc_ == (code), "%s: got %s (%s), want %s", #x, s0_code_name(rc_), \
		              err_ ? s0_error_message(err_) : "", s0_code_name(code));        \
		if (reason)                                                                   \
			ck_assert_str_eq(s0_error_reason(err_), (const char *)(reason));          \
		s0_error_free(err_);                                                          \
	} while (0)

/* A test's world: store + template of size bytes, state dir. */
typedef struct ct {
	char *dir;
	char *state;
	carenv env;
} ct;

void ct_open(ct *t, uint64_t size);
void ct_close(ct *t);
/* A branch of the template and a carrier on it. */
s0__carrier *ct_attach(ct *t, s0__branch *b, const char *id);
/* host_root(c) + rel (malloc'd). */
char *ct_path(const s0__carrier *c, const char *rel);
void ct_put(const char *path, const void *data, size_t len);
/* Whole file, NUL-terminated (malloc'd); NULL with errno on failure. */
char *ct_get(const char *path, size_t *len);
/* Export gen to an image and run e2fsck -fn: its exit status. */
int ct_fsck(ct *t, const s0__genid *gen);
/* Read a file of a branch through libext2fs (s0__rootfs); malloc'd. */
char *ct_rootfs_read(s0__branch *b, const char *path, size_t *len);
/* Loop devices and mounts (any process) that name state (its tag or path). */
int ct_leftovers(const char *state, char *what, size_t what_len);

/* Reclaim every test's state dir under root, then count what any of them
 * still has on the host (ct_leftovers); names in what. */
int ct_sweep(const char *root, char *what, size_t what_len);

#endif
