/* Runner of the block store suites. */
#include "blktest.h"
#include "check_main.h"

S0_TEST_MAIN(s0_bstore_suite, s0_bstore_gc_suite, s0_bstore_model_suite,
             s0_bstore_crash_suite, s0_bstore_corrupt_suite, s0_bstore_gen_decode_suite)
