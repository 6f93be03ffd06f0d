/* check_local: the lifecycle-engine suites (issue #6). */
#include "check_main.h"
#include "suites.h"

S0_TEST_MAIN(s0_local_fs_suite, s0_local_ptx_suite, s0_local_rtx_suite, s0_local_rec_suite,
             s0_local_ttl_suite, s0_local_cost_suite, s0_local_bad_suite,
             s0_local_crash_suite, s0_local_crash_mem_suite, s0_local_model_suite,
             s0_local_memory_suite, s0_local_webhook_suite, s0_local_network_suite,
             s0_local_damaged_suite, s0_local_fidelity_suite, s0_local_watch_suite,
             s0_local_fence_suite)
