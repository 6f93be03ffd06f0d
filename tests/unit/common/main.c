#include "check_main.h"
#include "common_suites.h"

S0_TEST_MAIN(s0_error_map_suite, s0_time_suite, s0_buf_query_suite, s0_cancel_clock_suite)
