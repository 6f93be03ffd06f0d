/* unit-checkpoint: memory image capture, lazy restore, verification, budget. */
#include "cksuites.h"

S0_TEST_MAIN(ck_capture_suite, ck_verify_suite, ck_budget_suite, ck_manifest_decode_suite)
