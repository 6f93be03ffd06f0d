#include "check_main.h"
#include "server_test.h"

S0_TEST_MAIN(s0_router_unit_suite, s0_router_adapters_suite, s0_router_files_suite)
