/* unit-runtime: the simulated runtime (shell, contexts, sessions, guest state). */
#include "rtsuites.h"

S0_TEST_MAIN(rt_shell_suite, rt_contexts_suite, rt_sessions_suite, rt_network_suite,
             rt_restore_damaged_suite)
