/* unit-wait: lifecycle waits against a scripted fake server. */
#include "check_main.h"
#include "wait_suites.h"

S0_TEST_MAIN(s0_wait_schedule_suite, s0_wait_script_suite, s0_wait_control_suite)
