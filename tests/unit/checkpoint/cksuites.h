/* The suites of the checkpoint test program. */
#ifndef S0_TEST_CKSUITES_H
#define S0_TEST_CKSUITES_H

#include "ckfix.h"

Suite *ck_capture_suite(void);
Suite *ck_verify_suite(void);
Suite *ck_budget_suite(void);
Suite *ck_manifest_decode_suite(void);

#endif
